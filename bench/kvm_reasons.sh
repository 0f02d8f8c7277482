#!/bin/bash
# What counting exit reasons costs the guest: the firmware guest under QEMU with accel=kvm (a loop
# of port writes, ~100k exits/s here), its exits per second from QEMU's own query-stats over
# SECONDS, alternately without and with `vmhost exits --reasons --log` running (its events open;
# it reads QMP only at start, so the two never share the monitor; one perf event
# per thread and reason, ~170 per thread), R rounds; prints the medians and their ratio.
#   bench/kvm_reasons.sh [BUILD_DIR] [SECONDS] [R]
set -u
build=${1:-build}
secs=${2:-3}
rounds=${3:-5}
vmhost=$build/vmhost
probe=$build/kvmprobe
[ -c /dev/kvm ] || { echo "no /dev/kvm: nothing to measure"; exit 77; }
tmp=$(mktemp -d)
qemu=""
cleanup() {
	[ -n "$qemu" ] && kill "$qemu" 2>/dev/null && wait "$qemu" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
sh "$(dirname "$0")/../tests/helpers/mkfw.sh" "$tmp/fw.bin"
sock=$tmp/qmp.sock
qemu-system-x86_64 -name reasons -machine pc,accel=kvm -bios "$tmp/fw.bin" -m 16 -nographic -nodefaults \
	-qmp "unix:$sock,server=on,wait=off" >/dev/null 2>&1 &
qemu=$!
for i in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
exits() { "$probe" stats "$sock" | awk '$1 == "vcpu0" && $3 == "exits" { print $5 }'; }
rate() { # exits per second over secs
	local a b t0 t1
	a=$(exits); t0=$(date +%s%N); sleep "$secs"; b=$(exits); t1=$(date +%s%N)
	awk -v a="$a" -v b="$b" -v t=$((t1 - t0)) 'BEGIN { printf "%d\n", (b - a) / (t / 1e9) }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
: >"$tmp/off"
: >"$tmp/on"
for r in $(seq "$rounds"); do
	rate >>"$tmp/off"
	unshare -m sh -c 'mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
		exec "$0" exits --log --reasons --interval 30 --pid "$1" --qmp-socket "$1=$2"' \
		"$vmhost" "$qemu" "$sock" >"$tmp/log" 2>&1 &
	tracer=$!
	sleep 1 # its events are open after the first read
	rate >>"$tmp/on"
	kill "$tracer"
	wait "$tracer" 2>/dev/null
done
off=$(median <"$tmp/off")
on=$(median <"$tmp/on")
echo "guest exits per second (QEMU query-stats, ${secs}s windows, median of $rounds):"
echo "  without vmhost:                 $off"
echo "  with exits --reasons running:   $on"
awk -v a="$off" -v b="$on" 'BEGIN { printf "  ratio with/without:             %.3f\n", b / a }'
