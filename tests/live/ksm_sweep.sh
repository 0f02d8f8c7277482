#!/bin/bash
# vmhost ksm sweep run to its end on two small VM-like guests: one row per setting as given, each
# with its full scans timed, an SVG of them, and every KSM setting as it was before.
. "$VMHOST_TESTS/lib.sh"
[ -d $KSM ] || { say "this kernel has no KSM"; exit 77; }
[ "$(id -u)" = 0 ] || { say "skipped: ksm sweep needs root"; exit 77; }
ksm_save || die "cannot read KSM settings"

fake_guest sweep1 -m 16 -fake-guest 1
fake_guest sweep2 -m 16 -fake-guest 2
settings() { for f in $KSM_KNOBS; do [ -f $KSM/$f ] && echo "$f=$(cat $KSM/$f)"; done; }
echo 1 >$KSM/run
echo 123 >$KSM/pages_to_scan
echo 45 >$KSM/sleep_millisecs
before=$(settings)
json=$TEST_TMP/sweep.json
"$VMHOST" --json ksm sweep --settings 4000/10,2000/20 --scans 1 --timeout 120 --svg "$TEST_TMP/sweep.svg" \
	>"$json" 2>"$TEST_TMP/err" || die "ksm sweep failed: $(cat "$TEST_TMP/err")"
after=$(settings)

check "one scan per setting" jq -e '.scans_per_setting == 1' "$json"
check "a row per setting, in the order given" \
	jq -e '[.settings[] | [.setting, .pages_to_scan, .sleep_millisecs]] == [["4000/10", 4000, 10], ["2000/20", 2000, 20]]' "$json"
check "each setting's full scan was timed" \
	jq -e 'all(.settings[]; .timed_out == "no" and .full_scans == 1 and .full_scan_seconds > 0)' "$json"
check "the SVG has a point per setting" sh -c "grep -q '4000/10 saves' '$TEST_TMP/sweep.svg' && grep -q '2000/20 saves' '$TEST_TMP/sweep.svg'"
check "every KSM setting is as before" [ "$before" = "$after" ]
finish
