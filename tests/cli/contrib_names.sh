#!/bin/bash
# contrib/ cannot drift from what vmhost serve exports: every vmhost_* family that the alerting
# rules, the fleet's recording rules and the Grafana dashboard query is one that serve writes (in
# one of its golden documents, tests/fixtures/serve/golden, built from fixture trees by
# e2e/serve_golden.sh); the recording rules and the alerts of group vmhost read only what serve's
# default --detail basic writes (the *-basic goldens); promtool accepts both rule files.
. "$VMHOST_TESTS/lib.sh"
CONTRIB=$VMHOST_TESTS/../contrib
GOLDEN=$VMHOST_FIXTURES/serve/golden
families() { grep -ho '^# TYPE vmhost_[a-z0-9_]*' "$@" | awk '{print $3}' | sort -u; }
families "$GOLDEN"/*.txt >"$TEST_TMP/exported"
families "$GOLDEN"/*-basic.txt >"$TEST_TMP/basic"
[ -s "$TEST_TMP/exported" ] && [ -s "$TEST_TMP/basic" ] || die "no families in the golden files"
# Families whose samples only a live host gives (no fixture tree has the kernel's delay
# accounting, read over taskstats): exported when serve declares them, which its source shows.
for live in vmhost_vm_stall_seconds_total; do
	grep -q "prom_family(p, \"$live\"" "$VMHOST_TESTS"/../src/out/prom/prom_metrics.c || die "serve no longer declares $live"
	echo "$live" >>"$TEST_TMP/exported"
done
sort -u -o "$TEST_TMP/exported" "$TEST_TMP/exported"
# used FILE: the vmhost_* families FILE (or stdin) queries, recording rules' own names left out.
used() { grep -o '[a-z_:]*vmhost_[a-z0-9_:]*' "$@" | grep -v : | grep -v '^vmhost_[a-z]*$' | sort -u; }
# queries FILE FAMILIES WHAT: every family FILE queries is in FAMILIES.
queries() {
	used "$1" >"$TEST_TMP/used"
	[ -s "$TEST_TMP/used" ] || { say "${1#$CONTRIB/} queries no vmhost family"; return 1; }
	local missing
	missing=$(comm -23 "$TEST_TMP/used" "$2" | tr '\n' ' ')
	[ -z "$missing" ] || { say "not exported${3:+ $3}: $missing"; return 1; }
}
for f in prometheus/alerts.yml prometheus/rules.yml grafana/vmhost.json; do
	check "$f: every vmhost_* family it queries is exported" queries "$CONTRIB/$f" "$TEST_TMP/exported"
done
# The alerts of group vmhost: from its "- name: vmhost" line to the next group.
awk '/^  - name: /{on = ($3 == "vmhost")} on' "$CONTRIB/prometheus/alerts.yml" >"$TEST_TMP/alerts-basic.yml"
check "alerts.yml's group vmhost reads only --detail basic's families" \
	queries "$TEST_TMP/alerts-basic.yml" "$TEST_TMP/basic" "at --detail basic"
check "rules.yml reads only --detail basic's families" \
	queries "$CONTRIB/prometheus/rules.yml" "$TEST_TMP/basic" "at --detail basic"
if command -v promtool >/dev/null; then
	check "promtool accepts the alerting and recording rules" \
		promtool check rules "$CONTRIB/prometheus/alerts.yml" "$CONTRIB/prometheus/rules.yml"
else
	skip_part "promtool is not installed: the rule files' syntax is not checked"
fi
finish
