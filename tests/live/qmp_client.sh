# io/qmp against a real QEMU running the firmware guest (accel=kvm where /dev/kvm exists, else
# TCG: the client does not care): replies, error replies, "busy" while another client holds the
# monitor, the socket usable again after, a stale socket, a missing one. QEMU stopped by pid.
. "$VMHOST_TESTS/lib.sh"
P=$VMHOST_BUILD/kvmprobe
accel=tcg
[ -c /dev/kvm ] && [ -w /dev/kvm ] && accel=kvm
say "QEMU with accel=$accel"
SOCK=$TEST_TMP/qmp.sock
fw_qemu --accel $accel --qmp "$SOCK"
QEMU=$SPAWNED

status() { "$P" qmp "$SOCK" query-status "$@" 2>"$TEST_TMP/err" | jq -r .status; }
check "query-status answers: running" test "$(status)" = running
"$P" qmp "$SOCK" human-monitor-command '{"command-line":"info registers"}' >"$TEST_TMP/regs"
check "the firmware loops at the reset vector (CS base ffff0000, EIP fff0..fff3)" \
	grep -Eq 'EIP=0000fff[0-3].*|CS =f000 ffff0000' "$TEST_TMP/regs"
"$P" qmp "$SOCK" no-such-command 2>"$TEST_TMP/err"
check "an error reply is one line with QEMU's class and text" \
	grep -qx 'error: QMP error reply: CommandNotFound: The command no-such-command has not been found' "$TEST_TMP/err"

# Another client holds the monitor: connecting succeeds into the backlog, no greeting comes.
"$P" hold "$SOCK" 3 >"$TEST_TMP/hold" &
HOLD=$!
adopt "$HOLD"
for i in $(seq 50); do grep -q holding "$TEST_TMP/hold" && break; sleep 0.1; done
check "the holder got the monitor" grep -q holding "$TEST_TMP/hold"
start=$(date +%s%N)
status --timeout 400 >/dev/null
took=$((($(date +%s%N) - start) / 1000000))
check "a second client is told: busy" grep -q '^error: QMP busy: no greeting in time' "$TEST_TMP/err"
say "busy after $took ms (timeout 400 ms)"
wait "$HOLD"
check "once the holder left, the socket is usable" test "$(status)" = running
check "and usable again by the next client" test "$(status)" = running

# QEMU killed without cleaning up: the socket file stays, nobody listens.
kill -KILL "$QEMU"
wait "$QEMU" 2>/dev/null
status >/dev/null
check "a stale socket: nothing listens" grep -q '^error: nothing listens on the QMP socket' "$TEST_TMP/err"
rm -f "$SOCK"
status >/dev/null
check "no socket: no such QMP socket" grep -qx 'error: no such QMP socket' "$TEST_TMP/err"
finish
