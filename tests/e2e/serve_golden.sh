#!/bin/bash
# vmhost serve's whole /metrics document through the binary, on frozen fixture trees (the serve
# host, and the exits trees: Intel and AMD KVM counters, KVM loaded with no VM, no debugfs),
# diffed against golden files in both formats. Normalized, because they vary by run: the value of
# vmhost_scrape_duration_seconds (gather time) and of vmhost_snapshot_timestamp_seconds (wall
# clock), and build_info's version (the release, not the host). VMHOST_UPDATE_GOLDEN=1 rewrites
# the golden files, and the test then ends skipped (exit 77), not passed.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
GOLDEN=$VMHOST_FIXTURES/serve/golden

# tree NAME: a copy of fixture NAME with the serve fixture's meminfo where it has none.
tree() {
	cp -a "$VMHOST_FIXTURES/$1" "$TEST_TMP/$1" || return 1
	[ -f "$TEST_TMP/$1/proc/meminfo" ] || cp "$VMHOST_FIXTURES/serve/proc/meminfo" "$TEST_TMP/$1/proc/"
}

normalize() {
	sed -E -e 's/^(vmhost_scrape_duration_seconds) [0-9.e+-]+$/\1 DURATION/' \
		-e 's/^(vmhost_snapshot_timestamp_seconds) [0-9.e+-]+$/\1 TIMESTAMP/' \
		-e 's/^(vmhost_scrape_bytes) [0-9]+$/\1 BYTES/' \
		-e 's/^(vmhost_build_info\{version=)"[^"]*"/\1"VERSION"/'
}

# golden NAME FILE ACCEPT: scrapes with that Accept header and diffs against NAME.FILE.
golden() {
	local out=$TEST_TMP/$1.$2
	curl -sf -H "Accept: $3" "http://127.0.0.1:$PORT/metrics" | normalize >"$out" || { say "scrape failed"; return 1; }
	if [ -n "${VMHOST_UPDATE_GOLDEN:-}" ]; then
		cp "$out" "$GOLDEN/$1.$2" && skip_part "$1.$2: golden file updated from this run, not compared"
		return
	fi
	diff -u "$GOLDEN/$1.$2" "$out"
}

TEXT='text/plain;version=0.0.4'
OM='application/openmetrics-text;version=1.0.0'
for t in serve exits-intel exits-amd exits-novm exits-nodebugfs; do
	tree $t || die "cannot copy the fixture $t"
	serve_start "$TEST_TMP/$t.log" "$TEST_TMP/$t" --min-interval 3600 --pid 20000 --detail full ||
		die "cannot start on $t"
	check "$t: the text format matches the golden file" golden $t txt "$TEXT"
	[ $t = serve ] || [ $t = exits-intel ] && check "$t: OpenMetrics matches the golden file" golden $t om "$OM"
	stop_pid "$SERVER"
done
# The default detail: the same hosts' series, each VM's cut to the basic set (docs/serve.md).
for t in serve exits-intel; do
	serve_start "$TEST_TMP/$t-basic.log" "$TEST_TMP/$t" --min-interval 3600 --pid 20000 ||
		die "cannot start on $t"
	check "$t, --detail basic: the text format matches the golden file" golden $t-basic txt "$TEXT"
	stop_pid "$SERVER"
done
# What was normalized was there: each golden file has one placeholder per normalized series.
placeholders() {
	local f
	for f in "$GOLDEN"/*; do
		[ "$(grep -Ec '^vmhost_(scrape_duration_seconds DURATION|snapshot_timestamp_seconds TIMESTAMP|scrape_bytes BYTES)$' "$f")" = 3 ] ||
			{ say "$f: placeholders missing"; return 1; }
	done
}
check "the golden files hold the placeholders, once each" placeholders
finish
