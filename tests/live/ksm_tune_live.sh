# vmhost ksm tune on real KSM and VM-like guests: it scans fast, merges the guests' identical
# memory, goes idle once full scans find nothing more, and wakes up for a new guest.
. "$VMHOST_TESTS/lib.sh"
[ -d $KSM ] || skip "this kernel has no KSM"
ksm_save || die "cannot read KSM settings"
export VMHOST_TUNE_LOCK=$TEST_TMP/tune.lock

guest() { # INDEX SIZE_MIB
	fake_guest "live$1" -m "$2" -fake-guest "$1" -fake-seed 77 -fake-volatile 0.1
}
wait_log() { # PATTERN TIMEOUT_S [FROM_LINE]
	local i
	for i in $(seq $(($2 * 10))); do tail -n +"${3:-1}" "$TEST_TMP/tune.log" | grep -q "$1" && return 0; sleep 0.1; done
	return 1
}

echo 2 >$KSM/run
guest 1 48
guest 2 48
before=$(cat $KSM/pages_to_scan)/$(cat $KSM/sleep_millisecs)/$(cat $KSM/run)
"$VMHOST" ksm tune --interval 0.5 --verbose >"$TEST_TMP/tune.log" 2>&1 &
tune=$!
adopt "$tune"

check "starts fast" wait_log "fast pages_to_scan=.*start:" 10
check "goes idle once scans find nothing more" wait_log "idle pages_to_scan=100 sleep_millisecs=1000 .*idle: .* full scans in a row" 120
merged=$(cat $KSM/pages_sharing)
check "the guests' identical memory was merged (pages_sharing $merged)" ge "$merged" 4000
check "kernel runs the idle setting" test "$(cat $KSM/pages_to_scan)/$(cat $KSM/sleep_millisecs)" = 100/1000
lines=$(wc -l <"$TEST_TMP/tune.log")
guest 3 48
# Only what was logged after the new guest started counts.
check "wakes up fast for a new guest" wait_log "fast pages_to_scan=.*| fast: " 60 $((lines + 1))
stop_pid "$tune"
check "stopping restores the settings" test "$(cat $KSM/pages_to_scan)/$(cat $KSM/sleep_millisecs)/$(cat $KSM/run)" = "$before"
say "tune log ($lines lines before the new guest):"
grep -E "start:|idle: [0-9]|fast: (process|new mergeable|mergeable process|ksmd met)|pages_to_scan [0-9]+ ->" "$TEST_TMP/tune.log" | head -20
finish
