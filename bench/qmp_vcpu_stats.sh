#!/bin/bash
# What one vCPU `query-stats` costs a QEMU 7.1-8.0 guest (Debian 12's 7.2 answers it with a call
# run on every vCPU thread, kicking the vCPU out of the guest; 8.1 reads a stats fd it keeps).
# The firmware guest under QEMU with accel=kvm (a loop of `out 0x80`, ~100k exits/s here), the
# whole QEMU pinned to CPU 0, its exits per second from QEMU's own query-stats on a first QMP
# socket over SECONDS, in alternating rounds: no reader, a reader asking `query-stats` for the
# vCPUs on a second QMP socket at 1 Hz, and at 10 Hz (the reader on CPU 1, one short visit per
# call as vmhost makes), and as a control a reader asking `query-status` at 10 Hz (the visit
# without the vCPU call). Prints the medians of R rounds (and their range), their ratios to no
# reader, the calls actually made per second and one call's wall time as the reader sees it.
# This machine is shared: the exit rate alone swings with the other tenants' load, so each window
# also gives the exits per second of CPU time the vCPU thread had (schedstat), which a call run on
# the vCPU thread lowers and a busy neighbour does not, and the CPU of QEMU's main thread (where
# QMP is answered), and the time the vCPU thread was blocked (neither running nor waiting for a
# CPU: a guest spinning on `out` only blocks when QEMU stops it, for a call or for its lock).
# A reader calling back to back (as fast as QEMU answers) bounds one call's cost.
#   bench/qmp_vcpu_stats.sh [BUILD_DIR] [SECONDS] [R]
set -u
build=${1:-build}
secs=${2:-6}
rounds=${3:-7}
. "$(dirname "$0")/lib.sh"
reader=""
sock=$tmp/qmp.sock
rsock=$tmp/reader.sock
fw_qemu --name qmpcost --prefix "taskset -c 0" --qmp "$sock" --qmp "$rsock"
qemu=$SPAWNED
version=$("$probe" qmp "$sock" query-version | jq -r '.qemu | "\(.major).\(.minor).\(.micro)"')
vcpu_tid=$("$probe" qmp "$sock" query-cpus-fast | jq '.[0]["thread-id"]')
vcpu_ns() { awk '{ print $1 }' "/proc/$qemu/task/$vcpu_tid/schedstat"; }
vcpu_idle_ns() {
	local run wait rest
	read -r run wait rest <"/proc/$qemu/task/$vcpu_tid/schedstat"
	echo $(($(date +%s%N) - run - wait))
}
qemu_ns() { awk '{ print $1 }' "/proc/$qemu/task/$qemu/schedstat"; } # the main thread
# rate MODE: the guest's exits per second over secs into $tmp/MODE, its exits per vCPU CPU
# second into $tmp/MODE.cpu, QEMU's main thread's CPU ms per second into $tmp/MODE.other
rate() {
	local a b t0 t1 v0 v1 q0 q1 i0 i1
	a=$(fw_exits "$sock"); t0=$(date +%s%N); v0=$(vcpu_ns); q0=$(qemu_ns); i0=$(vcpu_idle_ns)
	sleep "$secs"
	b=$(fw_exits "$sock"); t1=$(date +%s%N); v1=$(vcpu_ns); q1=$(qemu_ns); i1=$(vcpu_idle_ns)
	awk -v i=$((i1 - i0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.2f\n", i / 1e6 / (t / 1e9) }' >>"$tmp/$1.blocked"
	awk -v a="$a" -v b="$b" -v t=$((t1 - t0)) 'BEGIN { printf "%d\n", (b - a) / (t / 1e9) }' >>"$tmp/$1"
	awk -v a="$a" -v b="$b" -v v=$((v1 - v0)) 'BEGIN { printf "%d\n", (b - a) / (v / 1e9) }' >>"$tmp/$1.cpu"
	awk -v q=$((q1 - q0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.2f\n", q / 1e6 / (t / 1e9) }' >>"$tmp/$1.other"
}
vcpu_stats='{"target":"vcpu","providers":[{"provider":"kvm"}]}'
# attach NAME HZ COMMAND [ARGS]: a reader on CPU 1 asking COMMAND HZ times a second, each on a
# fresh connection; each call's wall ms goes to $tmp/NAME.ms
attach() {
	spawn taskset -c 1 bash -c 'period=$(awk -v h="$3" "BEGIN { print 1 / h }")
		while :; do
			t0=$EPOCHREALTIME
			"$0" qmp "$1" "$4" ${5:+"$5"} >/dev/null || exit 1
			t1=$EPOCHREALTIME
			awk -v a="$t0" -v b="$t1" "BEGIN { printf \"%.3f\n\", (b - a) * 1000 }" >>"$2"
			left=$(awk -v a="$t0" -v p="$period" -v n="$EPOCHREALTIME" "BEGIN { l = a + p - n; print (l > 0 ? l : 0) }")
			sleep "$left"
		done' "$probe" "$rsock" "$tmp/$1.ms" "$2" "$3" "${4:-}"
	reader=$SPAWNED
	sleep 1
}
detach() { stop_pid "$reader"; reader=""; }
range() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%d-%d", lo, hi }'; }
calls() { wc -l <"$tmp/$1.ms"; }
# measure NAME HZ COMMAND [ARGS]: one window with that reader, and the calls it made in it
measure() {
	attach "$@"
	local c1 c2
	c1=$(calls "$1"); rate "$1"; c2=$(calls "$1")
	echo $((c2 - c1)) >>"$tmp/$1.n"
	detach
}
for r in $(seq "$rounds"); do
	rate off
	measure vcpu1 1 query-stats "$vcpu_stats"
	measure vcpu10 10 query-stats "$vcpu_stats"
	measure status10 10 query-status
	measure vcpumax 1000 query-stats "$vcpu_stats"
done
off=$(median <"$tmp/off")
offc=$(median <"$tmp/off.cpu")
echo "QEMU $version, firmware guest (QEMU on CPU 0), exits per second from QEMU's query-stats,"
echo "${secs}s windows, median (range) of $rounds alternating rounds; per vCPU CPU second; and the"
echo "CPU ms per second of QEMU's main thread (main), ms per second the vCPU thread was blocked:"
printf '  %-36s %8d  (%s)  per vCPU s %d  main %s ms/s  blocked %s ms/s\n' "no reader:" "$off" "$(range <"$tmp/off")" \
	"$offc" "$(median <"$tmp/off.other")" "$(median <"$tmp/off.blocked")"
for m in vcpu1 vcpu10 status10 vcpumax; do
	case $m in
	vcpu1) label="vCPU query-stats at 1 Hz:" ;;
	vcpu10) label="vCPU query-stats at 10 Hz:" ;;
	status10) label="control: query-status at 10 Hz:" ;;
	vcpumax) label="vCPU query-stats back to back:" ;;
	esac
	v=$(median <"$tmp/$m")
	n=$(awk -v s="$secs" '{ t += $1; k++ } END { printf "%.1f", t / k / s }' "$tmp/$m.n")
	awk -v l="$label" -v v="$v" -v o="$off" -v n="$n" -v ms="$(median <"$tmp/$m.ms")" -v rg="$(range <"$tmp/$m")" \
		-v c="$(median <"$tmp/$m.cpu")" -v oc="$offc" -v ot="$(median <"$tmp/$m.other")" -v bl="$(median <"$tmp/$m.blocked")" \
		'BEGIN { printf "  %-36s %8d  (%s)  ratio %.3f  per vCPU s %d ratio %.3f  main %s ms/s  blocked %s ms/s  %s calls/s, %.2f ms a call\n", l, v, rg, v / o, c, c / oc, ot, bl, n, ms }'
done
