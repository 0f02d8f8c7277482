#!/bin/bash
# What finding every KVM VM costs discovery: `vmhost mem --json` with N plain processes (default
# 400, each holding 10 fds), in a private mount namespace without debugfs (each process's fds read
# for anon_inode:kvm-vm) and with it (one listing of debugfs' kvm directory), in alternating runs.
#   bench/kvm_scan.sh [BUILD_DIR] [N] [R]     (root: unshare, another process's fds)
set -u
build=${1:-build}
n=${2:-400}
runs=${3:-21}
. "$(dirname "$0")/lib.sh"
plain=""
for i in $(seq "$n"); do
	spawn bash -c 'exec 3</dev/null 4</dev/null 5</dev/null 6</dev/null 7</dev/null 8</dev/null 9</dev/null; exec sleep 600'
	plain="$plain $SPAWNED"
done
sleep 1
fds=$(for p in $plain; do ls "/proc/$p/fd" 2>/dev/null | wc -l; done | awk '{ s += $1 } END { print s }')
all=$(ls -d /proc/[0-9]* | wc -l)
scan() { unshare -m sh -c 'umount -l /sys/kernel/debug 2>/dev/null; exec "$0" --json mem --pss-budget 0' "$vmhost"; }
list() { unshare -m sh -c 'mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; exec "$0" --json mem --pss-budget 0' "$vmhost"; }
export VMHOST_RUNTIME_DIR=   # no memo: every run a first run
for r in $(seq "$runs"); do
	ms scan >>"$tmp/scan"
	ms list >>"$tmp/list"
done
s=$(median <"$tmp/scan")
l=$(median <"$tmp/list")
echo "processes: $all on the host ($n plain ones holding $fds fds); runs: $runs alternating"
echo "mem --json, fds read (no debugfs):   $s ms (median)"
echo "mem --json, debugfs' kvm listing:    $l ms (median)"
awk -v s="$s" -v l="$l" -v a="$all" 'BEGIN { printf "the fd scan costs %.2f ms, %.1f us a process\n", s - l, (s - l) * 1000 / a }'
