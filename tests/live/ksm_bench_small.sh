# vmhost bench ksm, shrunk to a test: every policy of the contract (the real ksmtuned among them)
# runs from unmerged state on the same small workload; the JSON has the contract's fields, the SVG
# is written, and every KSM setting is back as it was. Then the late scenario: guests that arrive
# after the policies have scanned the first are merged, and the times count from their arrival;
# and a bench killed while the real ksmtuned runs leaves neither a setting changed nor a daemon.
. "$VMHOST_TESTS/lib.sh"
[ -d $KSM ] || skip "this kernel has no KSM"
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
check "the six policies in order ($names)" test "$names" = "kernel-default,conservative,ksmtuned,ksmtuned-model,kernel-advisor,vmhost"
check "scenario start by default, times from 0" test "$(jq -r '[.scenario, .arrival_seconds] | map(tostring) | join(" ")' <<<"$out")" = "start 0"
check "the real ksmtuned ran (not marked unavailable)" test "$(jq -r '.policies[] | select(.name == "ksmtuned") | .note' <<<"$out")" != "ksmtuned is not installed (package ksmtuned)"
check "every policy has the contract's fields" test "$(jq '[.policies[] | has("seconds_to_95pct") and has("ksmd_cpu_seconds_to_95pct") and has("steady_ksmd_cpu_percent") and has("saved_bytes")] | length > 0 and all' <<<"$out")" = true
check "vmhost merged the workload" test "$(jq '.policies[] | select(.name == "vmhost") | .saved_bytes > 0' <<<"$out")" = true
check "vmhost reached 95% of the achievable savings" test "$(jq '.policies[] | select(.name == "vmhost") | .seconds_to_95pct != null' <<<"$out")" = true
check "SVG written" grep -q "<svg" "$TEST_TMP/bench.svg"
check "SVG has a line per policy" test "$(grep -c "<polyline" "$TEST_TMP/bench.svg")" -ge 4
check "no guest of the bench is left" test -z "$(pgrep -P $$ -f 'bench ksm')"

# late: guest 1 alone for 8 s, guests 2 and 3 arrive then (24 s / 3).
late=$("$VMHOST" --json bench ksm --scenario late --policies kernel-default,vmhost --guests 3 --guest-size 16M \
	--duration 24 --steady 4 --svg "$TEST_TMP/late.svg" 2>"$TEST_TMP/late.err")
rc=$?
check "late: exits 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$TEST_TMP/late.err"
check "late: settings restored" test "$before" = "$(settings)"
check "late: scenario and plan in the JSON" test "$(jq -r '[.scenario, .arrival_seconds, (.guest_plan.start_seconds | map(tostring) | join(","))] | map(tostring) | join(" ")' <<<"$late")" = "late 8 0,8,8"
check "late: vmhost merged the late guests" test "$(jq '.policies[] | select(.name == "vmhost") | .saved_bytes > 4194304' <<<"$late")" = true
check "late: vmhost reached 95% after they arrived, within the run" test "$(jq '.policies[] | select(.name == "vmhost") | .seconds_to_95pct != null and .seconds_to_95pct < 16' <<<"$late")" = true
check "late: the SVG marks the arrivals" test "$(grep -c '>guest [23] starts<' "$TEST_TMP/late.svg")" -eq 2

# SIGTERM while the real ksmtuned runs: settings back, its process group gone.
"$VMHOST" bench ksm --policies ksmtuned --guests 2 --guest-size 8M --duration 60 --steady 4 >"$TEST_TMP/k.out" 2>"$TEST_TMP/k.err" &
bench=$!
adopt "$bench"
for _ in $(seq 100); do grep -q "ksmtuned: 2 guests ready" "$TEST_TMP/k.err" && break; sleep 0.1; done
sleep 1
daemons=$(pgrep -f '/ksmtuned' | tr '\n' ' ')
check "the real ksmtuned runs during its policy ($daemons)" test -n "$daemons"
kill -TERM $bench
wait $bench
rc=$?
check "killed bench exits 128+15 ($rc)" test $rc -eq 143
check "killed bench: every KSM setting restored" test "$before" = "$(settings)"
gone=1
for _ in $(seq 50); do
	left=0
	for d in $daemons; do kill -0 "$d" 2>/dev/null && left=1; done
	[ $left = 0 ] && { gone=0; break; }
	sleep 0.1
done
check "killed bench: no ksmtuned process left" test $gone = 0
finish
