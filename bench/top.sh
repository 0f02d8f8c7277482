#!/bin/bash
# What `vmhost top` itself costs left running: N fake QEMU guests (2 vCPU threads each), then
# `vmhost top --batch --interval 1 --iterations ITER`; prints its CPU (utime + stime from
# /proc/PID/stat, read while it runs) as percent of one CPU over its run, and per refresh.
# Goal (issue 14): under 1% of one CPU with 100 VMs at a 1 s refresh.
#   bench/top.sh [BUILD_DIR] [VMS] [ITERATIONS]
set -u
build=${1:-build}
vms=${2:-100}
iter=${3:-30}
. "$(dirname "$0")/lib.sh"
fake_guests "$vms" bench -m 4M -fake-vcpus 2 -fake-nomerge
echo "$vms fake guests ready"
t0=$(date +%s%N)
"$vmhost" top --batch --interval 1 --iterations "$iter" >"$tmp/frames" &
top=$!
# its CPU as last seen alive, read every 0.2 s until it exits
while t=$(awk '{ print $14 + $15 }' /proc/$top/stat 2>/dev/null) && [ -n "$t" ]; do echo "$t" >"$tmp/ticks"; sleep 0.2; done
wait "$top"
rc=$?
t1=$(date +%s%N)
ticks=$(cat "$tmp/ticks" 2>/dev/null || echo 0)
hz=$(getconf CLK_TCK)
rows=$(awk -F'\t' '$1 == "vm" && $4 ~ /^bench/' "$tmp/frames" | wc -l)
echo "vmhost top --batch --interval 1 --iterations $iter: exit $rc, $rows bench VM rows ($((rows / iter)) a frame)"
awk -v t="$ticks" -v hz="$hz" -v n="$iter" -v wall="$(( (t1 - t0) / 1000000 ))" 'BEGIN {
	cpu = t / hz
	printf "  CPU %.2f s over %.1f s: %.2f%% of one CPU, %.1f ms per refresh (tick %d ms)\n", cpu, wall / 1000, 100 * cpu / (wall / 1000), 1000 * cpu / (n + 1), 1000 / hz }'
