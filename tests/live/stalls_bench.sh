#!/bin/bash
# The guests' copy stalls in bench ksm and ksm sweep (issue 45 item 5), and bench ksm --delayacct's
# restore of kernel.task_delayacct on every exit path: a run to its end, SIGTERM, and SIGKILL
# (left written down in the saved-settings file, put back by `ksm status --restore`). Without
# delay accounting both say why the column is null. KSM settings and the switch are put back by
# the cleanup too.
. "$VMHOST_TESTS/lib.sh"
ksm_lock "$@"
[ -w $KSM/run ] || skip "needs root and KSM (/sys/kernel/mm/ksm/run not writable)"
delayacct_to 0
ksm_save
DA=/proc/sys/kernel/task_delayacct
BENCH=(bench ksm --policies kernel-default --scenario volatile --guests 2 --guest-size 16M --steady 4)

"$VMHOST" --json "${BENCH[@]}" --duration 8 >"$TEST_TMP/off.json" 2>"$TEST_TMP/off.err"
check "bench without --delayacct exits 0" [ $? = 0 ]
check "... its copy stalls null, and why" jq -e '.policies[0].guest_copy_stall_seconds == null and (.copy_stalls_why | test("task_delayacct"))' "$TEST_TMP/off.json"

"$VMHOST" --json "${BENCH[@]}" --duration 8 --delayacct >"$TEST_TMP/on.json" 2>"$TEST_TMP/on.err"
check "bench --delayacct exits 0" [ $? = 0 ]
check "... the guests' copy stalls read (a number), no reason" \
	jq -e '.copy_stalls_why == null and (.policies[0].guest_copy_stall_seconds | type == "number")' "$TEST_TMP/on.json"
say "volatile guests paid $(jq '.policies[0].guest_copy_stall_seconds' "$TEST_TMP/on.json") s of copy stalls in 8 s"
check "... and kernel.task_delayacct is 0 again" [ "$(cat $DA)" = 0 ]

# bench_until_ready: bench ksm --delayacct in the background until its guests are up; BENCH_PID.
bench_until_ready() {
	"$VMHOST" "${BENCH[@]}" --duration 60 --delayacct >"$TEST_TMP/sig.out" 2>"$TEST_TMP/sig.err" &
	BENCH_PID=$!
	adopt "$BENCH_PID"
	for _ in $(seq 200); do grep -q "guests ready" "$TEST_TMP/sig.err" && break; sleep 0.1; done
	check "while bench --delayacct runs, delay accounting is on" [ "$(cat $DA)" = 1 ]
}
bench_until_ready
kill -TERM "$BENCH_PID"
wait "$BENCH_PID"
check "SIGTERM: bench exits 143 ($?) and kernel.task_delayacct is 0 again" [ "$(cat $DA)" = 0 ]
bench_until_ready
kill -KILL "$BENCH_PID"
wait "$BENCH_PID" 2>/dev/null
check "SIGKILL: nothing could restore it (still 1)" [ "$(cat $DA)" = 1 ]
"$VMHOST" --json ksm status --restore >"$TEST_TMP/restore.json"
check "ksm status --restore puts it back to 0" [ "$(cat $DA)" = 0 ]
check "... and says so" jq -e '.restored == true and .settings["kernel.task_delayacct"] == "0"' "$TEST_TMP/restore.json"

# ksm sweep on guests that write (started after accounting is on: only they are counted).
echo 1 >$DA
fake_guests 2 sweepw -m 32M -fake-seed 46 -fake-volatile 0.3 -fake-nothp
"$VMHOST" --json ksm sweep --settings 4000/10,200/50 --scans 1 --timeout 120 >"$TEST_TMP/sweep.json" 2>"$TEST_TMP/sweep.err"
check "sweep exits 0" [ $? = 0 ]
check "sweep: every setting has the guests' copy stalls (numbers) and no reason" \
	jq -e '.copy_stalls_why == null and all(.settings[]; (.guest_copy_stall_seconds | type == "number") and (.guest_copy_stall_percent | type == "number"))' "$TEST_TMP/sweep.json"
say "sweep: $(jq -c '[.settings[] | [.setting, .ksmd_cpu_percent, .saved_bytes, .guest_copy_stall_seconds]]' "$TEST_TMP/sweep.json")"
echo 0 >$DA
"$VMHOST" --json ksm sweep --settings 4000/10 --scans 1 --timeout 120 >"$TEST_TMP/sweep0.json" 2>/dev/null
check "sweep with accounting off: null, and why" \
	jq -e '(.copy_stalls_why | test("task_delayacct")) and .settings[0].guest_copy_stall_seconds == null' "$TEST_TMP/sweep0.json"
finish
