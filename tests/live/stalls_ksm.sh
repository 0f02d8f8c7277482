#!/bin/bash
# What KSM costs a guest that writes over its merged pages (issue 45 item 4): two fake guests of
# one image merged by real KSM; one then writes new content over its shared and zero pages. With
# delay accounting on, vmhost shows write-protect copy stalls for that one and none for the other,
# the count of copies matching the merged pages it wrote (the drop of its ksm_merging_pages once
# ksmd has scanned again), the main thread's, not its vCPU's; over an interval, stall_percent and
# ksm_net's copy_stall_seconds. With delay accounting off, stalls are null and stalls_why names the
# switch. The kernel gives a thread its delay record when it starts, and only while accounting is
# on, so the guests start after it is turned on. KSM settings and kernel.task_delayacct are put
# back on every exit path (the cleanup).
. "$VMHOST_TESTS/lib.sh"
ksm_lock "$@"
[ -w $KSM/run ] || skip "needs root and KSM (/sys/kernel/mm/ksm/run not writable)"
delayacct_to 1
ksm_save
echo 2 >$KSM/run # start from nothing merged
[ -f $KSM/advisor_mode ] && echo none >$KSM/advisor_mode
echo 0 >$KSM/use_zero_pages

# vm NAME FIELD FILE: a guest's JSON field (jq path) in a mem --json output.
vm() { jq -r --arg n "$1" ".vms[] | select(.name == \$n) | $2" "$3"; }

# Off: null with the reason and the command.
echo 0 >/proc/sys/kernel/task_delayacct
fake_guest offguest -m 16M -fake-nomerge
"$VMHOST" mem --json --pid "$SPAWNED" >"$TEST_TMP/off.json"
check "accounting off: stalls null" [ "$(vm offguest .stalls "$TEST_TMP/off.json")" = null ]
check "... and stalls_why names the switch and its command" \
	grep -q 'sysctl -w kernel.task_delayacct=1' <<<"$(vm offguest .stalls_why "$TEST_TMP/off.json")"
stop_pid "$SPAWNED"
echo 1 >/proc/sys/kernel/task_delayacct

# One image; only cow1 writes when told. (Guest indices of their own: other tests' fake guests
# may run with the usual ones.)
IMAGE=(-m 64M -fake-seed 45 -fake-shared 0.6 -fake-zero 0.05 -fake-nothp -fake-vcpus 1)
fake_guest_start cow1 "${IMAGE[@]}" -fake-guest 451 -fake-rewrite-when "$TEST_TMP/go"
COW1=$SPAWNED
fake_guest_start cow2 "${IMAGE[@]}" -fake-guest 452
COW2=$SPAWNED
fake_guest_ready cow1 cow2

echo 4000 >$KSM/pages_to_scan
echo 10 >$KSM/sleep_millisecs
echo 1 >$KSM/run
# merging PID: the process's pages KSM merged (as the kernel counts them at its last scan)
merging() { awk '/^ksm_merging_pages/ {print $2}' "/proc/$1/ksm_stat"; }
end=$((SECONDS + 120))
until [ "$(merging "$COW1")" -ge 10000 ] && [ "$(merging "$COW2")" -ge 10000 ]; do
	[ $SECONDS -lt $end ] || die "KSM did not merge the guests (cow1 $(merging "$COW1"), cow2 $(merging "$COW2") pages)"
	sleep 0.2
done
echo 0 >$KSM/run # what is merged stays merged, and nothing more merges while cow1 writes
merged_before=$(merging "$COW1")
"$VMHOST" mem --json >"$TEST_TMP/before.json"
check "accounting on: stalls read, no reason" [ "$(vm cow1 .stalls_why "$TEST_TMP/before.json")" = null ]

# cow1 writes over what was merged, inside a 3 s interval.
spawn "$VMHOST" mem --json --interval 3 --pid "$COW1" --pid "$COW2" >"$TEST_TMP/interval.json"
MEM=$SPAWNED
sleep 1
touch "$TEST_TMP/go"
end=$((SECONDS + 30))
until grep -q rewritten "$TEST_TMP/cow1.out"; do
	[ $SECONDS -lt $end ] || die "cow1 did not write over its pages"
	sleep 0.1
done
wait "$MEM"
"$VMHOST" mem --json >"$TEST_TMP/after.json"
# The kernel drops a page from ksm_merging_pages when ksmd next scans it, not when it is copied.
echo 1 >$KSM/run
scans=$(cat $KSM/full_scans)
end=$((SECONDS + 120))
while [ "$(cat $KSM/full_scans)" -lt $((scans + 2)) ] && [ $SECONDS -lt $end ]; do sleep 0.2; done
echo 0 >$KSM/run
merged_after=$(merging "$COW1")
written=$(awk '/rewritten/ {print $2}' "$TEST_TMP/cow1.out")
unmerged=$((merged_before - merged_after))

d() { # NAME FIELD: its change from before.json to after.json
	awk -v a="$(vm "$1" "$2" "$TEST_TMP/before.json")" -v b="$(vm "$1" "$2" "$TEST_TMP/after.json")" 'BEGIN { printf "%.9g", b - a }'
}
copies1=$(d cow1 .stalls.wpcopy_count) copies2=$(d cow2 .stalls.wpcopy_count)
secs1=$(d cow1 .stalls.wpcopy_seconds) secs2=$(d cow2 .stalls.wpcopy_seconds)
say "cow1 wrote $written pages, $unmerged of them merged ($merged_before -> $merged_after): $copies1 copies, ${secs1} s; cow2: $copies2 copies, ${secs2} s (why unread: $(vm cow1 .stalls_why "$TEST_TMP/after.json"))"
check "cow1's copies match the merged pages it wrote, within 1% ($copies1 vs $unmerged)" \
	awk -v a="$copies1" -v b="$unmerged" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 1000 && d <= b / 100 + 8) }'
check "cow1 stalled on those copies" awk -v s="$secs1" 'BEGIN { exit !(s > 0) }'
check "cow2 wrote nothing merged: no copy, ~0 s ($copies2, $secs2)" \
	awk -v c="$copies2" -v s="$secs2" 'BEGIN { exit !(c <= 2 && s < 0.001) }'
check "the writer was cow1's main thread, not its vCPU (vCPU stall_seconds 0)" \
	[ "$(vm cow1 '.vcpus[0].stall_seconds' "$TEST_TMP/after.json")" = 0 ]
check "interval: cow1's stall_percent above 0" \
	awk -v p="$(vm cow1 .stalls.stall_percent "$TEST_TMP/interval.json")" 'BEGIN { exit !(p > 0) }'
check "interval: ksm_net.copy_stall_seconds is cow1's copy stalls of it" \
	awk -v c="$(vm cow1 .ksm_net.copy_stall_seconds "$TEST_TMP/interval.json")" -v s="$secs1" 'BEGIN { exit !(c > 0 && c <= s + 1e-6) }'
check "interval: cow2 paid nothing" \
	awk -v c="$(vm cow2 .ksm_net.copy_stall_seconds "$TEST_TMP/interval.json")" 'BEGIN { exit !(c < 0.001) }'
check "interval: ksm_net.saved_bytes is ksm_saved_bytes" \
	[ "$(vm cow2 .ksm_net.saved_bytes "$TEST_TMP/interval.json")" = "$(vm cow2 .ksm_saved_bytes "$TEST_TMP/interval.json")" ]
finish
