# Exit reasons counted in the kernel by eBPF, and by the perf filters where eBPF cannot load, on
# the /dev/kvm helper guest (N port writes, M MMIO writes, one hlt): both counters give exactly
# N kvm_pio "0x80 out", N userspace IO exits, M MMIO exits and kvm_mmio writes, one HLT; a port
# outside the table is "other out" in both. The perf filters are used, and the reason said in one
# line, when asked for (VMHOST_KVM_REASONS=perf), when the kernel refuses eBPF (CAP_BPF and
# CAP_SYS_ADMIN dropped by setpriv: perf still works with CAP_PERFMON) and where libbpf1 is
# missing (hidden from the loader). serve --kvm-reasons says which counter in its log.
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

# reasons NAME PORT OUTER INNER: `exits --reasons` over a fresh helper guest's run, into
# $TEST_TMP/NAME.json; OUTER runs before the mount namespace (env, without_library), INNER inside.
reasons() {
	local name=$1 port=$2 outer=$3 inner=$4 guest
	spawn "$G" --io $N --mmio $M --port "$port" --wait-signal --sleep-after 5
	guest=$SPAWNED
	sleep 0.3
	$outer "${MOUNT[@]}" $inner "$VMHOST" --json exits --reasons --pid "$guest" -- sh -c "kill -USR1 $guest; sleep 0.5" \
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

# The human form says it in one line.
spawn "$G" --io $N --wait-signal --sleep-after 5
GUEST=$SPAWNED
sleep 0.3
"${MOUNT[@]}" "$VMHOST" exits --reasons --pid "$GUEST" -- sh -c "kill -USR1 $GUEST; sleep 0.5" >"$TEST_TMP/text" 2>&1
check "text: which counter, in one line" grep -qx 'exit reasons counted by eBPF (counted in the kernel)' "$TEST_TMP/text"
stop_pid "$GUEST"

# serve --kvm-reasons: its log names the counter once; the counts are exact.
for mode in bpf perf; do
	spawn "$G" --io $N --mmio $M --wait-signal --sleep-after 5
	GUEST=$SPAWNED
	sleep 0.3
	spawn env VMHOST_KVM_REASONS=$mode "${MOUNT[@]}" "$VMHOST" serve --listen 127.0.0.1:0 --min-interval 0 --kvm-reasons --pid "$GUEST" \
		2>"$TEST_TMP/serve.$mode.log"
	SERVER=$SPAWNED
	serve_port "$TEST_TMP/serve.$mode.log" "$SERVER" || die "serve ($mode) did not start"
	curl -s "http://127.0.0.1:$PORT/metrics" >/dev/null
	kill -USR1 "$GUEST"
	sleep 0.5
	curl -s "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/serve.$mode.txt"
	rv() { awk -v e="$1" -v r="$2" -v p="$GUEST" '/^vmhost_kvm_exit_reasons_total\{/ && index($0, "pid=\"" p "\"") && index($0, "event=\"" e "\"") && index($0, "reason=\"" r "\"") { print $NF }' "$TEST_TMP/serve.$mode.txt"; }
	check "serve ($mode): kvm_pio 0x80 out $N, IO $N, MMIO $M" [ "$(rv kvm_pio '0x80 out') $(rv kvm_userspace_exit IO) $(rv kvm_userspace_exit MMIO)" = "$N $N $M" ]
	stop_pid "$SERVER"
	stop_pid "$GUEST"
	grep 'exit reasons counted by' "$TEST_TMP/serve.$mode.log"
	check "serve ($mode): the log says which counter, once" test "$(grep -c 'exit reasons counted by' "$TEST_TMP/serve.$mode.log")" = 1
done
check "serve (bpf): eBPF" grep -q 'exit reasons counted by eBPF' "$TEST_TMP/serve.bpf.log"
check "serve (perf): the perf filters" grep -q 'exit reasons counted by perf tracepoint filters' "$TEST_TMP/serve.perf.log"
finish
