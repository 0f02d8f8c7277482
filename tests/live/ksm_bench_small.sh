# vmhost bench ksm, shrunk to a test: every policy of the contract runs from unmerged state on
# the same small workload; the JSON has the contract's fields, the SVG is written, and every
# KSM setting is back as it was.
. "$VMHOST_TESTS/lib.sh"
[ -d $KSM ] || { say "this kernel has no KSM"; exit 77; }
ksm_save || die "cannot read KSM settings"
settings() { local f; for f in $KSM_KNOBS; do [ -f $KSM/$f ] && echo "$f=$(cat $KSM/$f)"; done; }
before=$(settings)
out=$("$VMHOST" --json bench ksm --guests 2 --guest-size 16M --duration 12 --steady 4 --svg "$TEST_TMP/bench.svg" 2>"$TEST_TMP/err")
rc=$?
check "bench exits 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$TEST_TMP/err"
check "settings restored" test "$before" = "$(settings)"
check "workload described" test "$(jq -r '[.workload.guests, .workload.guest_bytes, (.workload.mergeable_bytes > 0)] | map(tostring) | join(" ")' <<<"$out")" = "2 16777216 true"
names=$(jq -r '[.policies[].name] | join(",")' <<<"$out")
check "the five policies in order ($names)" test "$names" = "kernel-default,conservative,ksmtuned,kernel-advisor,vmhost"
check "every policy has the contract's fields" test "$(jq '[.policies[] | has("seconds_to_95pct") and has("ksmd_cpu_seconds_to_95pct") and has("steady_ksmd_cpu_percent") and has("saved_bytes")] | all' <<<"$out")" = true
check "vmhost merged the workload" test "$(jq '.policies[] | select(.name == "vmhost") | .saved_bytes > 0' <<<"$out")" = true
check "vmhost reached 95% of the achievable savings" test "$(jq '.policies[] | select(.name == "vmhost") | .seconds_to_95pct != null' <<<"$out")" = true
check "SVG written" grep -q "<svg" "$TEST_TMP/bench.svg"
check "SVG has a line per policy" test "$(grep -c "<polyline" "$TEST_TMP/bench.svg")" -ge 4
finish
