# Debian's real ksmtuned run by core/ksmtuned (tests/helpers/run_ksmtuned) on VM-like mergeable
# processes, with a 1 s monitor interval: it runs as its own process group with a config of its
# own, really changes KSM, and afterwards every KSM setting is as before and none of its
# processes is left, whether it is stopped, sent SIGTERM, or its caller is killed with SIGKILL.
. "$VMHOST_TESTS/lib.sh"
[ -d $KSM ] || skip "this kernel has no KSM"
[ -x /usr/sbin/ksmtuned ] || die "/usr/sbin/ksmtuned is missing: make check installs it (scripts/deps/test/ksmtuned.txt)"
ksm_save || die "cannot read KSM settings"
RUN=$VMHOST_BUILD/run_ksmtuned

knobs() { local f; for f in $KSM_KNOBS; do [ -f $KSM/$f ] && printf '%s=%s\n' "$f" "$(cat $KSM/$f)"; done; }
wait_out() { # FILE PATTERN TIMEOUT_S
	local i
	for i in $(seq $(($3 * 10))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
group_gone() { # PGID: no process of the group within 5 s
	local i
	for i in $(seq 50); do kill -0 -- "-$1" 2>/dev/null || return 0; sleep 0.1; done
	return 1
}
restored() { # within 5 s (the supervisor restores after the group is gone)
	local i
	for i in $(seq 50); do knobs | diff -q "$TEST_TMP/before" - >/dev/null && return 0; sleep 0.1; done
	knobs | diff "$TEST_TMP/before" -
	return 1
}
# KSM as ksmtuned would not leave it (it writes 300 / 10 / run=1 here): a change is visible.
echo 0 >$KSM/run
echo 123 >$KSM/pages_to_scan
echo 45 >$KSM/sleep_millisecs
# ksmtuned counts the RSS of processes matching '^qemu-system.*-enable-kvm'.
for i in 1 2; do
	fake_guest_start "tuned$i" -enable-kvm -m 64 -fake-guest "$i" -fake-seed 31
done
knobs >"$TEST_TMP/before"

# 1. Its own config (threshold at 100% of MemTotal: it starts KSM and boosts), stopped on time:
# 15 s, so its first decision and the check of it (10 s at most each) fall before its end.
"$RUN" --interval 1 --duration 15 --thres-coef 100 >"$TEST_TMP/run1" 2>&1 &
run=$!
adopt "$run"
check "ksmtuned starts as its own process group" wait_out "$TEST_TMP/run1" "started pgid=" 10
pgid=$(sed -n 's/^started pgid=\([0-9]*\).*/\1/p' "$TEST_TMP/run1")
log=$(sed -n 's/^started .* log=//p' "$TEST_TMP/run1")
check "its loop wrote its pid file in its own directory" wait_out "$TEST_TMP/run1" "^loop=" 10
check "it ran with our config: 1 s interval, 300-page boost, KSM started" \
	wait_out "$log" "KSMCTL start 300" 10
seen="$(cat $KSM/pages_to_scan)/$(cat $KSM/run)"
check "its writes reached the kernel (pages_to_scan/run $seen)" test "$seen" = 300/1
wait "$run"
check "the helper stopped it cleanly" grep -q "^stopped$" "$TEST_TMP/run1"
check "no process of its group is left" group_gone "$pgid"
check "every KSM setting is as before" restored
check "its directory is removed" test ! -e "$(dirname "$log")"

# 2. The caller gets SIGTERM in the middle.
"$RUN" --interval 1 --duration 60 --thres-coef 100 >"$TEST_TMP/run2" 2>&1 &
run=$!
adopt "$run"
wait_out "$TEST_TMP/run2" "^loop=" 10
log=$(sed -n 's/^started .* log=//p' "$TEST_TMP/run2")
wait_out "$log" "KSMCTL start" 10
pgid=$(sed -n 's/^started pgid=\([0-9]*\).*/\1/p' "$TEST_TMP/run2")
kill -TERM "$run"
wait "$run"
check "SIGTERM: stopped" grep -q "^stopped" "$TEST_TMP/run2"
check "SIGTERM: no process of its group is left" group_gone "$pgid"
check "SIGTERM: every KSM setting is as before" restored

# 3. The caller is killed outright: the supervisor, told by the kernel, cleans up.
"$RUN" --interval 1 --duration 60 --thres-coef 100 >"$TEST_TMP/run3" 2>&1 &
run=$!
adopt "$run"
wait_out "$TEST_TMP/run3" "^loop=" 10
log=$(sed -n 's/^started .* log=//p' "$TEST_TMP/run3")
wait_out "$log" "KSMCTL start" 10
pgid=$(sed -n 's/^started pgid=\([0-9]*\).*/\1/p' "$TEST_TMP/run3")
check "SIGKILL: KSM was changed before the kill" test "$(cat $KSM/run)" = 1
kill -KILL "$run"
wait "$run" 2>/dev/null
check "SIGKILL: no process of its group is left" group_gone "$pgid"
check "SIGKILL: every KSM setting is as before" restored
check "SIGKILL: its directory is removed" test ! -e "$(dirname "$log")"
finish
