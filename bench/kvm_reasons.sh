#!/bin/bash
# What counting exit reasons costs the guest: the firmware guest under QEMU with accel=kvm (a loop
# of port writes, ~100k exits/s here) pinned to CPU 0, its exits per second from QEMU's own
# query-stats over SECONDS, in alternating rounds: nothing attached, `vmhost exits --reasons
# --log` counting by eBPF (in the kernel, one map update per exit), the same timing each exit too
# (--reasons-time: a stamp at kvm_userspace_exit, a program on every ioctl of the host ending it at
# KVM_RUN), and the same forced onto the perf filters (VMHOST_KVM_REASONS=perf: ~100 filtered perf events per thread, evaluated in the
# vCPU thread at each exit). vmhost runs on CPU 1, refreshing every second (it reads QMP only at
# start, so the two never share the monitor); its own CPU time per refresh is from /proc.
# Prints the medians of R rounds and their ratios to nothing attached.
#   bench/kvm_reasons.sh [BUILD_DIR] [SECONDS] [R]
set -u
build=${1:-build}
secs=${2:-6}
rounds=${3:-7}
. "$(dirname "$0")/lib.sh"
tracer=""
sock=$tmp/qmp.sock
fw_qemu --name reasons --prefix "taskset -c 0" --qmp "$sock"
qemu=$SPAWNED
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# rate MODE: exits per second over secs into $tmp/MODE, and vmhost's CPU ms per refresh into
# $tmp/MODE.cpu (one refresh a second)
rate() {
	local a b t0 t1 c0 c1
	a=$(fw_exits "$sock"); t0=$(date +%s%N); c0=$([ -n "$tracer" ] && cpu_ticks "$tracer")
	sleep "$secs"
	b=$(fw_exits "$sock"); t1=$(date +%s%N); c1=$([ -n "$tracer" ] && cpu_ticks "$tracer")
	awk -v a="$a" -v b="$b" -v t=$((t1 - t0)) 'BEGIN { printf "%d\n", (b - a) / (t / 1e9) }' >>"$tmp/$1"
	[ -n "$tracer" ] && awk -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v t=$((t1 - t0)) \
		'BEGIN { printf "%.2f\n", c / hz * 1000 / (t / 1e9) }' >>"$tmp/$1.cpu"
	return 0
}
attach() { # attach MODE: vmhost exits --reasons on the guest, counting by MODE (bpf, time or perf)
	local counter=$([ "$1" = time ] && echo bpf || echo "$1") option=$([ "$1" = time ] && echo --reasons-time || echo --reasons)
	spawn env VMHOST_KVM_REASONS="$counter" taskset -c 1 unshare -m sh -c 'mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
		exec "$0" exits --log "$3" --interval 1 --pid "$1" --qmp-socket "$1=$2"' \
		"$vmhost" "$qemu" "$sock" "$option" >"$tmp/log.$1" 2>&1
	tracer=$SPAWNED
	local said i
	said="reasons counted by $([ "$counter" = bpf ] && echo eBPF || echo perf)"
	for i in $(seq 100); do grep -qs "$said" "$tmp/log.$1" && break; sleep 0.1; done # the first refresh
	grep -q "$said" "$tmp/log.$1" || { echo "vmhost did not count by $1:"; cat "$tmp/log.$1"; exit 1; }
	sleep 1
}
detach() { stop_pid "$tracer"; tracer=""; }
for r in $(seq "$rounds"); do
	rate off
	attach bpf; rate bpf; detach
	attach time; rate time; detach
	attach perf; rate perf; detach
done
off=$(median <"$tmp/off")
echo "guest exits per second (QEMU query-stats, ${secs}s windows, median of $rounds alternating rounds):"
printf '  %-34s %8d\n' "nothing attached:" "$off"
for m in bpf time perf; do
	v=$(median <"$tmp/$m")
	case $m in
	bpf) label="exits --reasons, eBPF:" ;;
	time) label="exits --reasons-time, eBPF:" ;;
	*) label="exits --reasons, perf filters:" ;;
	esac
	awk -v l="$label" -v v="$v" -v o="$off" -v c="$(median <"$tmp/$m.cpu")" \
		'BEGIN { printf "  %-34s %8d  ratio %.3f  vmhost %.2f ms CPU per refresh\n", l, v, v / o, c }'
done
awk -v t="$(median <"$tmp/time")" -v b="$(median <"$tmp/bpf")" 'BEGIN { printf "  timing, against counting alone:    ratio %.3f\n", t / b }'
