# contrib/ cannot drift from what vmhost serve exports: every vmhost_* family that the alerting
# rules and the Grafana dashboard query is one that serve writes (in one of its golden documents,
# tests/fixtures/serve/golden, built from fixture trees by e2e/serve_golden.sh).
. "$VMHOST_TESTS/lib.sh"
CONTRIB=$VMHOST_TESTS/../contrib
GOLDEN=$VMHOST_FIXTURES/serve/golden
grep -ho '^# TYPE vmhost_[a-z0-9_]*' "$GOLDEN"/*.txt | awk '{print $3}' | sort -u >"$TEST_TMP/exported"
[ -s "$TEST_TMP/exported" ] || die "no families in the golden files"
# Families whose samples only a live host gives (no fixture tree has the kernel's delay
# accounting, read over taskstats): exported when serve declares them, which its source shows.
for live in vmhost_vm_stall_seconds_total; do
	grep -q "prom_family(p, \"$live\"" "$VMHOST_TESTS"/../src/out/prom_metrics.c || die "serve no longer declares $live"
	echo "$live" >>"$TEST_TMP/exported"
done
sort -u -o "$TEST_TMP/exported" "$TEST_TMP/exported"
for f in prometheus/alerts.yml grafana/vmhost.json; do
	grep -o 'vmhost_[a-z0-9_]*' "$CONTRIB/$f" | grep -v '^vmhost_[a-z]*$' | sort -u >"$TEST_TMP/used"
	[ -s "$TEST_TMP/used" ] || { fail "$f queries no vmhost family"; continue; }
	missing=$(comm -23 "$TEST_TMP/used" "$TEST_TMP/exported" | tr '\n' ' ')
	check "$f: every vmhost_* family it queries is exported${missing:+ (missing: $missing)}" [ -z "$missing" ]
done
finish
