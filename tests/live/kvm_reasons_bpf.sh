# Exit reasons counted in the kernel by eBPF, and by the perf filters where eBPF cannot load, on
# the /dev/kvm helper guest (N port writes, M MMIO writes, one hlt): both counters give exactly
# N kvm_pio "0x80 out", N userspace IO exits, M MMIO exits and kvm_mmio writes, one HLT; a port
# outside the table is "other out" in both. The perf filters are used, and the reason said in one
# line, when asked for (VMHOST_KVM_REASONS=perf), when the kernel refuses eBPF (CAP_BPF and
# CAP_SYS_ADMIN dropped by setpriv: perf still works with CAP_PERFMON) and where libbpf1 is
# missing (hidden from the loader). serve --kvm-reasons says which counter in its log.
# --reasons-time: the time in the VMM per userspace exit (exit to the thread's next KVM_RUN) is
# exactly N IO exits long, its histogram holds them all, and a guest whose VMM sleeps S in each IO
# exit's handling shows a mean of at least S; --reasons alone and the perf filters time nothing.
# A followed command that forks the VMM (exits -- sh -c 'kvmguest; true') has the VMM's exits on
# its own row, exactly, by eBPF (its descendants followed from sched_process_fork), timed too,
# and by the perf filters (inherited events).
# Per vCPU (--vcpu): QEMU's firmware guest with 2 vCPUs loops on `out 0x80` on vCPU 0 only:
# vCPU 0 (its thread named "CPU 0/KVM") has every kvm_pio 0x80 out, vCPU 1 none; the helper's one
# unnamed vCPU thread is vCPU 0 by order, with exactly N.
# Needs /dev/kvm and root (debugfs and tracefs mounted in a private mount namespace).
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
[ -c /dev/kvm ] || skip "/dev/kvm is absent on this machine (no KVM to run a guest on)"
unshare -m true 2>/dev/null || skip "no mount namespace for debugfs and tracefs (not root?)"
command -v setpriv >/dev/null || die "setpriv missing (util-linux)"
G=$VMHOST_BUILD/kvmguest
N=1000
M=10
MOUNT=(unshare -m sh -c 'mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exec "$@"' sh)
DROP="setpriv --inh-caps=-bpf,-sys_admin --bounding-set=-bpf,-sys_admin"
# held_guest NAME ARGS...: a helper guest held until SIGUSR1, its output in $TEST_TMP/NAME.guest,
# its pid in GUEST, returned once its vCPU exists (it says "ready"). run_guest NAME: the command
# that lets it run and waits until it says it is done (20 s at most): its exits here take from
# 0.1 s to over a second, by the host's load and the counter attached, so no fixed sleep is long
# enough. The guests live on after their run until stopped (--sleep-after 60), so the reads after
# it see them however slow the host.
held_guest() {
	local name=$1
	shift
	spawn "$G" "$@" --wait-signal >"$TEST_TMP/$name.guest"
	GUEST=$SPAWNED
	wait_for 60 grep -q '^ready' "$TEST_TMP/$name.guest" || die "helper guest $name did not start"
}
run_guest() {
	echo "kill -USR1 $GUEST; for i in \$(seq 400); do grep -q '^io_exits=' '$TEST_TMP/$1.guest' && break; sleep 0.05; done"
}

# reasons NAME PORT OUTER INNER: `exits --reasons` over a fresh helper guest's run, into
# $TEST_TMP/NAME.json; OUTER runs before the mount namespace (env, without_library), INNER inside.
reasons() {
	local name=$1 port=$2 outer=$3 inner=$4 guest
	held_guest "$name" --io $N --mmio $M --port "$port" --sleep-after 60
	guest=$GUEST
	$outer "${MOUNT[@]}" $inner "$VMHOST" --json exits --reasons --pid "$guest" -- sh -c "$(run_guest "$name")" \
		>"$TEST_TMP/$name.json" 2>"$TEST_TMP/$name.err"
	check "$name: exit 0" [ $? = 0 ]
	stop_pid "$guest"
	say "$name: $(jq -r .reasons_counter "$TEST_TMP/$name.json")"
}
reason() { jq -r --arg e "$2" --arg r "$3" '.vms[0].reasons[$e][$r].delta' "$TEST_TMP/$1.json"; }
exact() { # exact NAME PORT_REASON: the helper's exits counted exactly
	check "$1: kvm_pio $2 is exactly $N" [ "$(reason "$1" kvm_pio "$2")" = $N ]
	check "$1: kvm_userspace_exit IO $N, MMIO $M, HLT 1" \
		[ "$(reason "$1" kvm_userspace_exit IO) $(reason "$1" kvm_userspace_exit MMIO) $(reason "$1" kvm_userspace_exit HLT)" = "$N $M 1" ]
	check "$1: kvm_mmio write is exactly $M" [ "$(reason "$1" kvm_mmio write)" = $M ]
	check "$1: no other port counted" jq -e --arg p "$2" \
		'[.vms[0].reasons.kvm_pio | to_entries[] | select(.key != $p) | .value.delta] | all(. == 0)' "$TEST_TMP/$1.json"
	check "$1: no restart or error" jq -e '.vms[0].reasons.kvm_userspace_exit | .restart.delta == 0 and .error.delta == 0' "$TEST_TMP/$1.json"
}

reasons bpf 0x80 "" ""
check "bpf: the counter in use is eBPF" jq -e '.reasons_counter == "eBPF (counted in the kernel)"' "$TEST_TMP/bpf.json"
exact bpf "0x80 out"
reasons bpf_other 0x1234 "" ""
exact bpf_other "other out"

reasons forced 0x80 "env VMHOST_KVM_REASONS=perf" ""
check "forced: perf filters, and why" \
	jq -e '.reasons_counter == "perf tracepoint filters: VMHOST_KVM_REASONS=perf asks for the perf filters"' "$TEST_TMP/forced.json"
exact forced "0x80 out"
reasons forced_other 0x1234 "env VMHOST_KVM_REASONS=perf" ""
exact forced_other "other out"

reasons refused 0x80 "" "$DROP"
check "refused (CAP_BPF, CAP_SYS_ADMIN dropped): perf filters, and why" \
	jq -e '.reasons_counter | startswith("perf tracepoint filters: eBPF not allowed (needs CAP_BPF and CAP_PERFMON")' "$TEST_TMP/refused.json"
exact refused "0x80 out"

reasons nolib 0x80 "without_library bpf" ""
check "libbpf1 missing: perf filters, and the loader's reason with the package" \
	jq -e '.reasons_counter | startswith("perf tracepoint filters: eBPF not loaded: libbpf.so.1") and contains("apt install libbpf1")' "$TEST_TMP/nolib.json"
exact nolib "0x80 out"

# timed NAME OPTION IO_SLEEP OUTER: `exits OPTION` over a helper guest whose IO exits are handled
# IO_SLEEP seconds each, into $TEST_TMP/NAME.json.
timed() {
	local name=$1 option=$2 io_sleep=$3 outer=$4 guest
	held_guest "$name" --io $N --io-sleep "$io_sleep" --sleep-after 60
	guest=$GUEST
	$outer "${MOUNT[@]}" "$VMHOST" --json exits "$option" --pid "$guest" -- sh -c "$(run_guest "$name")" \
		>"$TEST_TMP/$name.json" 2>"$TEST_TMP/$name.err"
	check "$name: exit 0" [ $? = 0 ]
	stop_pid "$guest"
	say "$name: $(jq -c '.vms[0].reasons.kvm_userspace_exit.IO' "$TEST_TMP/$name.json")"
}
io() { jq -r ".vms[0].reasons.kvm_userspace_exit.IO.$2" "$TEST_TMP/$1.json"; }
timed time --reasons-time 0 ""
check "time: eBPF, timed" jq -e '.reasons_counter == "eBPF (counted in the kernel)"' "$TEST_TMP/time.json"
check "time: IO exits counted $N, timed $N" [ "$(io time delta) $(io time count)" = "$N $N" ]
check "time: their time is more than 0" jq -e '.vms[0].reasons.kvm_userspace_exit.IO.seconds > 0' "$TEST_TMP/time.json"
check "time: the histogram holds every timed exit" \
	jq -e '.vms[0].reasons.kvm_userspace_exit.IO | ([.histogram[].count] | add) == .count' "$TEST_TMP/time.json"
check "time: the buckets are log2 of ns" \
	jq -e '[.vms[0].reasons.kvm_userspace_exit.IO.histogram[] | .to_ns == 2 * (if .from_ns == 0 then 1 else .from_ns end)] | all' "$TEST_TMP/time.json"
check "time: kvm_pio is a count, not timed" jq -e '.vms[0].reasons.kvm_pio["0x80 out"] | has("seconds") | not' "$TEST_TMP/time.json"
timed slept --reasons-time 0.0005 ""
check "slept: IO exits timed $N" [ "$(io slept count)" = $N ]
check "slept: the mean is at least the VMM's 0.5 ms of handling" \
	jq -e '.vms[0].reasons.kvm_userspace_exit.IO | .seconds / .count >= 0.0005' "$TEST_TMP/slept.json"
timed untimed --reasons 0 ""
check "untimed: --reasons alone times nothing" jq -e '.vms[0].reasons.kvm_userspace_exit.IO | has("seconds") | not' "$TEST_TMP/untimed.json"
timed perf_time --reasons-time 0 "env VMHOST_KVM_REASONS=perf"
check "perf_time: the counter says the exits are not timed" jq -e '.reasons_counter | endswith("; exits not timed (eBPF only)")' "$TEST_TMP/perf_time.json"
check "perf_time: counted $N by the perf filters, no time made up" \
	jq -e --argjson n $N '.vms[0].reasons.kvm_userspace_exit.IO | .delta == $n and (has("seconds") | not)' "$TEST_TMP/perf_time.json"

# fork MODE OPTION: a command whose child is the VMM, into $TEST_TMP/fork.MODE.json
fork() {
	env VMHOST_KVM_REASONS="$1" "${MOUNT[@]}" "$VMHOST" --json exits "$2" -- sh -c "$G --io $N >/dev/null; true" \
		>"$TEST_TMP/fork.$1.json" 2>"$TEST_TMP/fork.$1.err"
	check "fork ($1): exit 0" [ $? = 0 ]
	say "fork ($1): $(jq -c '[.vms[] | {pid, unavailable, io: .reasons.kvm_userspace_exit.IO}]' "$TEST_TMP/fork.$1.json")"
}
ROW='[.vms[] | select((.unavailable // "") | startswith("the command"))]'
for mode in bpf perf; do
	fork $mode --reasons
	check "fork ($mode): one row for the command, its child's kvm_pio 0x80 out exactly $N" \
		jq -e --argjson n $N "$ROW | length == 1 and .[0].reasons.kvm_pio[\"0x80 out\"].delta == \$n" "$TEST_TMP/fork.$mode.json"
done
check "fork (bpf): counted by eBPF" jq -e '.reasons_counter == "eBPF (counted in the kernel)"' "$TEST_TMP/fork.bpf.json"
fork time --reasons-time
check "fork (time): the child's $N IO exits timed on the command's row" \
	jq -e --argjson n $N "$ROW | .[0].reasons.kvm_userspace_exit.IO | .delta == \$n and .count == \$n and .seconds > 0" "$TEST_TMP/fork.time.json"

# vcpus NAME PID ARGS...: `exits --reasons --vcpu --pid PID ARGS` into $TEST_TMP/NAME.json
vcpus() {
	local name=$1 pid=$2
	shift 2
	"${MOUNT[@]}" "$VMHOST" --json exits --reasons --vcpu --pid "$pid" "$@" >"$TEST_TMP/$name.json" 2>"$TEST_TMP/$name.err"
	check "$name: exit 0" [ $? = 0 ]
	say "$name: $(jq -c '[.vms[0].vcpus[] | {index, pio: .reasons.kvm_pio["0x80 out"].delta}]' "$TEST_TMP/$name.json")"
}
pio() { jq -r --argjson i "$2" '.vms[0].vcpus[] | select(.index == $i) | .reasons.kvm_pio["0x80 out"].delta' "$TEST_TMP/$1.json"; }
held_guest vcpu_helper --io $N --sleep-after 60
vcpus vcpu_helper "$GUEST" -- sh -c "$(run_guest vcpu_helper)"
stop_pid "$GUEST"
check "vcpu_helper: vCPU 0 by order, kvm_pio 0x80 out exactly $N" [ "$(pio vcpu_helper 0)" = $N ]
# Read once its loop is under way (QEMU's own count of vCPU 0's exits), not a second after start.
fw_qemu --name reasons-smp --smp 2 --qmp "$TEST_TMP/smp.sock"
QEMU=$SPAWNED
looping() { [ "$(fw_exits "$TEST_TMP/smp.sock")" -ge 1000 ] 2>/dev/null; }
wait_for 60 looping || fail "the firmware guest's loop did not start"
vcpus vcpu_qemu "$QEMU" --once --interval 1
stop_pid "$QEMU"
check "vcpu_qemu: vCPUs 0 and 1 listed" jq -e '[.vms[0].vcpus[].index] == [0, 1]' "$TEST_TMP/vcpu_qemu.json"
check "vcpu_qemu: vCPU 0 loops on port 0x80 (over 100 in the second)" [ "$(pio vcpu_qemu 0)" -gt 100 ]
check "vcpu_qemu: vCPU 1 never runs it" [ "$(pio vcpu_qemu 1)" = 0 ]
check "vcpu_qemu: the vCPUs' counts are the VM's" \
	jq -e '.vms[0] | .reasons.kvm_pio["0x80 out"].delta == ([.vcpus[].reasons.kvm_pio["0x80 out"].delta] | add)' "$TEST_TMP/vcpu_qemu.json"

# The human form says it in one line.
held_guest text --io $N --sleep-after 60
"${MOUNT[@]}" "$VMHOST" exits --reasons --pid "$GUEST" -- sh -c "$(run_guest text)" >"$TEST_TMP/text" 2>&1
check "text: which counter, in one line" grep -qx 'exit reasons counted by eBPF (counted in the kernel)' "$TEST_TMP/text"
stop_pid "$GUEST"

# serve --kvm-reasons: its log names the counter once; the counts are exact.
# scrape NAME COUNTER OPTION: serve OPTION counting by COUNTER (bpf, perf) on a fresh helper
# guest, scraped before and after the guest's run into $TEST_TMP/serve.NAME.txt (log: .log).
scrape() {
	held_guest "serve.$1" --io $N --mmio $M --sleep-after 60
	spawn env VMHOST_KVM_REASONS="$2" "${MOUNT[@]}" "$VMHOST" serve --listen 127.0.0.1:0 --min-interval 0 "$3" --pid "$GUEST" \
		2>"$TEST_TMP/serve.$1.log"
	SERVER=$SPAWNED
	serve_port "$TEST_TMP/serve.$1.log" "$SERVER" || die "serve ($1) did not start"
	curl -s "http://127.0.0.1:$PORT/metrics" >/dev/null
	sh -c "$(run_guest "serve.$1")"
	curl -s "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/serve.$1.txt"
	stop_pid "$SERVER"
	stop_pid "$GUEST"
}
for mode in bpf perf; do
	scrape $mode $mode --kvm-reasons
	rv() { awk -v e="$1" -v r="$2" -v p="$GUEST" '/^vmhost_kvm_exit_reasons_total\{/ && index($0, "pid=\"" p "\"") && index($0, "event=\"" e "\"") && index($0, "reason=\"" r "\"") { print $NF }' "$TEST_TMP/serve.$mode.txt"; }
	check "serve ($mode): kvm_pio 0x80 out $N, IO $N, MMIO $M" [ "$(rv kvm_pio '0x80 out') $(rv kvm_userspace_exit IO) $(rv kvm_userspace_exit MMIO)" = "$N $N $M" ]
	grep 'exit reasons counted by' "$TEST_TMP/serve.$mode.log"
	check "serve ($mode): the log says which counter, once" test "$(grep -c 'exit reasons counted by' "$TEST_TMP/serve.$mode.log")" = 1
done
# serve --kvm-reasons-time: the time per reason and the exits timed, the helper's N IO exits.
scrape time bpf --kvm-reasons-time
series() { awk -v m="$1" -v p="$GUEST" 'index($0, m "{") == 1 && index($0, "pid=\"" p "\"") && index($0, "event=\"kvm_userspace_exit\"") && index($0, "reason=\"IO\"") { print $NF }' "$TEST_TMP/serve.time.txt"; }
say "serve (time): IO $(series vmhost_kvm_exit_reason_seconds_total) s over $(series vmhost_kvm_exit_reason_timed_total) exits"
check "serve (time): the $N IO exits timed" [ "$(series vmhost_kvm_exit_reason_timed_total)" = $N ]
check "serve (time): their seconds more than 0" awk -v s="$(series vmhost_kvm_exit_reason_seconds_total)" 'BEGIN { exit !(s > 0) }'
check "serve (time): the families are described" grep -q '^# TYPE vmhost_kvm_exit_reason_seconds_total counter' "$TEST_TMP/serve.time.txt"
check "serve (bpf): no time without --kvm-reasons-time" sh -c "! grep -q vmhost_kvm_exit_reason_seconds_total '$TEST_TMP/serve.bpf.txt'"

check "serve (bpf): eBPF" grep -q 'exit reasons counted by eBPF' "$TEST_TMP/serve.bpf.log"
check "serve (perf): the perf filters" grep -q 'exit reasons counted by perf tracepoint filters' "$TEST_TMP/serve.perf.log"
finish
