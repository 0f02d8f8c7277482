# core/kvm_trace with real perf events on a real QEMU (TCG: no KVM events fire, so every count
# is exactly 0): every reason's filter accepted by this kernel, one event set per thread, and
# the one-line reasons when tracefs is not mounted or perf is not allowed. tracefs is mounted in
# a private mount namespace when the host has none (nothing changes outside the test).
. "$VMHOST_TESTS/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root for perf tracepoints and tracefs"
P=$VMHOST_BUILD/kvmprobe
fw_qemu --accel tcg --smp 2
QEMU=$SPAWNED
sleep 1
threads=$(ls /proc/$QEMU/task | wc -l)

if [ -d /sys/kernel/tracing/events ]; then
	say "tracefs is mounted on this host"
	run() { "$@"; }
else
	"$P" trace "$QEMU" --seconds 0.1 >/dev/null 2>"$TEST_TMP/err"
	check "without tracefs: the mount command in one line" \
		grep -qx 'error: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)' "$TEST_TMP/err"
	run() { unshare -m sh -c 'mount -t tracefs nodev /sys/kernel/tracing && exec "$@"' sh "$@"; }
fi
for isa in vmx svm unknown; do
	run "$P" trace "$QEMU" --isa $isa --seconds 0.3 --all --filters >"$TEST_TMP/$isa" 2>"$TEST_TMP/err"
	check "$isa: every filter accepted, events open on QEMU's $threads threads" \
		grep -q "^counters [0-9]* threads $threads\$" "$TEST_TMP/$isa"
	check "$isa: TCG fires no KVM event: every count is 0" \
		test "$(grep -E '^kvm_' "$TEST_TMP/$isa" | awk '$NF != 0' | wc -l)" = 0
done
check "vmx: VMX names (HLT, EPT_VIOLATION)" grep -qx 'kvm_exit HLT 0' "$TEST_TMP/vmx"
check "vmx: filter by number" grep -qx 'filter kvm_exit HLT: exit_reason == 12' "$TEST_TMP/vmx"
check "svm: SVM names" grep -qx 'filter kvm_exit hlt: exit_reason == 120' "$TEST_TMP/svm"
check "unknown vendor: one unfiltered kvm_exit" test "$(grep -c '^kvm_exit ' "$TEST_TMP/unknown")" = 1
check "userspace exits by KVM_EXIT_* reason" grep -qx 'filter kvm_userspace_exit IO: errno >= 0 && reason == 2' "$TEST_TMP/vmx"
check "port writes by port and direction" grep -qx 'filter kvm_pio 0x80 out: rw == 1 && port == 128' "$TEST_TMP/vmx"
check "ports outside the table are counted as other" grep -q '^filter kvm_pio other in: rw == 0 && port != 32 && ' "$TEST_TMP/vmx"

# An unprivileged user: perf refuses, and says so.
run setpriv --reuid=65534 --regid=65534 --clear-groups "$P" trace "$QEMU" --seconds 0.1 >/dev/null 2>"$TEST_TMP/err"
check "unprivileged: perf events not allowed, with perf_event_paranoid" \
	grep -Eq '^error: perf events or tracefs not allowed \(perf_event_paranoid is -?[0-9]+\): run as root or with CAP_PERFMON$' "$TEST_TMP/err"
[ -s "$TEST_TMP/err" ] && say "$(cat "$TEST_TMP/err")"
run "$P" trace 999999999 --seconds 0.1 >/dev/null 2>"$TEST_TMP/err"
check "no such process" grep -qx 'error: no such process' "$TEST_TMP/err"
finish
