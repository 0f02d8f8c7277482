# The firmware guest (tests/helpers/mkfw.sh) under a real qemu-system-x86_64: sourced by
# scripts/lib/common.sh (for tests/lib.sh and bench/lib.sh), the one place a test or a benchmark
# starts one. The includer defines spawn (starts a process, SPAWNED its pid, remembered for its
# cleanup), die and skip, and sets FW_DIR (where the firmware images and QEMU's output go) and
# FW_PROBE (kvmprobe).
FW_MKFW=$(dirname "${BASH_SOURCE[0]}")/mkfw.sh
FW_READY_S=20

# fw_image [KIND]: FW_IMAGE is the firmware of that kind (mkfw.sh's: none, the out 0x80 loop;
# halt; idle), written into FW_DIR once.
fw_image() {
	FW_IMAGE=$FW_DIR/fw${1:+-$1}.bin
	[ -f "$FW_IMAGE" ] || sh "$FW_MKFW" "$FW_IMAGE" ${1:+"$1"} || die "mkfw.sh could not write $FW_IMAGE"
}

# fw_qemu [OPTIONS] [-- QEMU_ARGS...]: starts the firmware guest, 16 MiB and no devices, with
# spawn, and returns once it is ready: every QMP socket made and, under KVM, every vCPU's fd open
# (under TCG without a socket there is nothing to wait for). QEMU's output: FW_DIR/qemu.PID.log.
#   --name NAME     -name NAME
#   --kind KIND     the firmware (fw_image): out 0x80 in a loop (the default), halt or idle
#   --accel ACCEL   kvm (the default: skipped without /dev/kvm) or tcg
#   --smp N         N vCPUs (the default 1)
#   --qmp PATH      a QMP socket at PATH (again for a second one)
#   --prefix CMD    run through CMD, e.g. "taskset -c 0"
fw_qemu() {
	local name="" kind="" accel=kvm smp=1 prefix="" socks=() args=()
	while [ $# -gt 0 ]; do
		case $1 in
		--name) name=$2 ;;
		--kind) kind=$2 ;;
		--accel) accel=$2 ;;
		--smp) smp=$2 ;;
		--qmp) socks+=("$2") ;;
		--prefix) prefix=$2 ;;
		--) shift; break ;;
		*) die "fw_qemu: unknown option $1" ;;
		esac
		shift 2
	done
	command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/deps/test/qemu.txt)"
	[ "$accel" != kvm ] || [ -c /dev/kvm ] || skip "/dev/kvm is absent on this machine (no KVM to run a guest on)"
	fw_image "$kind"
	[ -n "$name" ] && args+=(-name "$name")
	[ "$smp" != 1 ] && args+=(-smp "$smp")
	local sock
	for sock in "${socks[@]}"; do args+=(-qmp "unix:$sock,server=on,wait=off"); done
	spawn $prefix qemu-system-x86_64 "${args[@]}" -machine pc,accel="$accel" -bios "$FW_IMAGE" -m 16 -nographic \
		-nodefaults "$@" >"$FW_DIR/qemu.tmp.log" 2>&1
	mv "$FW_DIR/qemu.tmp.log" "$FW_DIR/qemu.$SPAWNED.log"
	fw_wait_ready "$SPAWNED" "$accel" "$smp" "${socks[@]}"
}

# fw_exits SOCKET: vCPU 0's exits so far, from QEMU's own query-stats on that QMP socket.
fw_exits() { "$FW_PROBE" stats "$1" | awk '$1 == "vcpu0" && $3 == "exits" { print $5 }'; }

# fw_wait_ready PID ACCEL SMP SOCKET...: waits up to FW_READY_S for fw_qemu's readiness; dies
# with QEMU's output when it exits or is not ready by then.
fw_wait_ready() {
	local pid=$1 accel=$2 smp=$3 i sock ready
	shift 3
	for i in $(seq $((FW_READY_S * 10))); do
		kill -0 "$pid" 2>/dev/null || die "QEMU $pid exited at start: $(tr '\n' ' ' <"$FW_DIR/qemu.$pid.log")"
		ready=1
		for sock in "$@"; do [ -S "$sock" ] || ready=0; done
		[ "$accel" = kvm ] && [ "$(ls -l "/proc/$pid/fd" 2>/dev/null | grep -c 'anon_inode:kvm-vcpu')" -lt "$smp" ] && ready=0
		[ $ready = 1 ] && return 0
		sleep 0.1
	done
	die "QEMU $pid not ready in $FW_READY_S s: $(tr '\n' ' ' <"$FW_DIR/qemu.$pid.log")"
}
