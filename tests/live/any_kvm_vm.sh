# Any process holding a KVM VM is a VM: the /dev/kvm helper guest (no VMM vmhost knows) is listed
# with vmm "kvm", found by its fds (anon_inode:kvm-vm) without debugfs and by its PID-FD
# directory with debugfs; `exits --reasons -- PROGRAM` counts exactly the port writes of a
# program that creates its VM and exits between exits' two reads.
# Needs /dev/kvm and root (another process's fds): skipped (exit 77) without them.
. "$VMHOST_TESTS/lib.sh"
[ -c /dev/kvm ] || { say "SKIP: /dev/kvm is absent on this machine"; exit 77; }
[ "$(id -u)" = 0 ] || { say "SKIP: needs root to read another process's fds and debugfs"; exit 77; }
G=$VMHOST_BUILD/kvmguest
N=1000

spawn "$G" --io 10 --sleep-before 60
GUEST=$SPAWNED
for i in $(seq 50); do [ -e "/proc/$GUEST/fd" ] && ls -l "/proc/$GUEST/fd" 2>/dev/null | grep -q 'anon_inode:kvm-vm' && break; sleep 0.1; done
vmm_of() { jq -r --argjson p "$GUEST" '[.vms[] | select(.pid == $p) | .vmm] | if length == 1 then .[0] else "listed \(length) times" end' "$1"; }
# Without debugfs (a private mount namespace where it is not mounted): the fds.
unshare -m sh -c 'umount -l /sys/kernel/debug 2>/dev/null; exec "$0" --json mem' "$VMHOST" >"$TEST_TMP/nodebugfs.json"
check "without debugfs: the helper guest is a VM, vmm kvm (found by its fds)" [ "$(vmm_of "$TEST_TMP/nodebugfs.json")" = kvm ]
# With debugfs: its PID-FD directory.
unshare -m sh -c 'mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	ls /sys/kernel/debug/kvm | grep -q "^$1-" || { echo "no debugfs directory for $1" >&2; exit 3; }
	exec "$0" --json mem' "$VMHOST" "$GUEST" >"$TEST_TMP/debugfs.json"
check "with debugfs: the helper guest is a VM, vmm kvm (its PID-FD directory)" [ "$(vmm_of "$TEST_TMP/debugfs.json")" = kvm ]
check "a process holding no KVM VM is still no VM" jq -e --argjson p $$ '[.vms[] | select(.pid == $p)] | length == 0' "$TEST_TMP/debugfs.json"
stop_pid "$GUEST"

# exits -- PROGRAM: the program's VM lives only between the two reads.
unshare -m sh -c 'mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exec "$0" --json exits --reasons -- "$1" --io "$2"' "$VMHOST" "$G" "$N" >"$TEST_TMP/cmd.json" 2>"$TEST_TMP/cmd.err"
check "exits --reasons -- PROGRAM: exit 0" [ $? = 0 ]
CMD_PID=$(sed -n 's/^ready pid=//p' "$TEST_TMP/cmd.err")
say "the program was pid $CMD_PID; $(jq -c '[.vms[] | {pid, vmm, source, pio: .reasons.kvm_pio["0x80 out"].delta}]' "$TEST_TMP/cmd.json")"
check "exits --reasons -- PROGRAM: its row counts exactly $N kvm_pio 0x80 out" \
	jq -e --argjson p "${CMD_PID:-0}" --argjson n $N '[.vms[] | select(.pid == $p) | .reasons.kvm_pio["0x80 out"].delta] == [$n]' "$TEST_TMP/cmd.json"
check "exits --reasons -- PROGRAM: and its vmm is kvm" \
	jq -e --argjson p "${CMD_PID:-0}" '[.vms[] | select(.pid == $p) | .vmm] == ["kvm"]' "$TEST_TMP/cmd.json"
check "exits --reasons -- PROGRAM: the host total has them too" \
	jq -e --argjson n $N '.total.reasons.kvm_pio["0x80 out"].delta >= $n' "$TEST_TMP/cmd.json"

# Without debugfs, a running KVM user of no known VMM is listed (its counters unknown, and why)
# and its exit reasons are counted by tracepoints like any VM's. Here and below exits runs without
# CAP_SYS_ADMIN, so that it mounts no debugfs for its run (src/io/mountns.h).
spawn "$G" --io $N --wait-signal --sleep-after 5 >"$TEST_TMP/nd.guest"
GUEST=$SPAWNED
sleep 0.3
unshare -m sh -c 'umount -l /sys/kernel/debug 2>/dev/null
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exec setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$0" --json exits --reasons --pid "$1" -- sh -c "kill -USR1 $1; for i in \$(seq 400); do grep -q ^io_exits= $2 && break; sleep 0.05; done"' \
	"$VMHOST" "$GUEST" "$TEST_TMP/nd.guest" >"$TEST_TMP/nd.json" 2>"$TEST_TMP/nd.err"
say "without debugfs: $(jq -c '[.vms[] | {pid, vmm, source, unavailable, pio: .reasons.kvm_pio["0x80 out"].delta}]' "$TEST_TMP/nd.json")"
check "without debugfs: the running KVM user is listed, vmm kvm, with why its counters are unknown" \
	jq -e --argjson p "$GUEST" '[.vms[] | select(.pid == $p)] | length == 1 and .[0].vmm == "kvm" and .[0].source == null and (.[0].unavailable | test("debugfs"))' "$TEST_TMP/nd.json"
check "without debugfs: its $N port writes counted by tracepoints, in its row and the total" \
	jq -e --argjson p "$GUEST" --argjson n $N '(.vms[] | select(.pid == $p) | .reasons.kvm_pio["0x80 out"].delta) == $n and .total.reasons.kvm_pio["0x80 out"].delta == $n' "$TEST_TMP/nd.json"
stop_pid "$GUEST"

# Without debugfs, a KVM user of no known VMM listed before a QEMU read through QMP, whose schema
# fixes the counter set in the middle of the read: every row follows the set, the helper's
# counters null. (Its row kept a one-entry array, read far past its end: a heap overflow.)
spawn "$G" --io 10 --sleep-before 60
GUEST=$SPAWNED
fw_qemu --name anykvmfw --qmp "$TEST_TMP/qmp.sock"
QEMU=$SPAWNED
# record: its first read is the one that fixes the set (exits probes before its two reads).
unshare -m sh -c 'umount -l /sys/kernel/debug 2>/dev/null
	exec "$0" record --db "$1" --interval 0.2 --duration 1' "$VMHOST" "$TEST_TMP/r.db" 2>"$TEST_TMP/rec.err"
check "without debugfs, a KVM user before a QMP-read QEMU: record exits 0" [ $? = 0 ]
check "and no sanitizer report" sh -c "! grep -E 'runtime error|Sanitizer' '$TEST_TMP/rec.err'"
unshare -m sh -c 'umount -l /sys/kernel/debug 2>/dev/null
	exec setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$0" --json exits --once --interval 0.3 --pid "$1" --pid "$2"' "$VMHOST" "$GUEST" "$QEMU" \
	>"$TEST_TMP/nq.json" 2>"$TEST_TMP/nq.err"
check "exits: exit 0" [ $? = 0 ]
say "$(jq -c '[.vms[] | {pid, vmm, source, exits: .counters.exits.delta}]' "$TEST_TMP/nq.json" 2>/dev/null)"
check "the QEMU's exits through QMP, the helper's unknown" jq -e --argjson g "$GUEST" --argjson q "$QEMU" \
	'(.vms[] | select(.pid == $q) | .source == "qmp" and .counters.exits.delta > 0) and
	 (.vms[] | select(.pid == $g) | .counters.exits.delta == null)' "$TEST_TMP/nq.json"
stop_pid "$QEMU"
stop_pid "$GUEST"
finish
