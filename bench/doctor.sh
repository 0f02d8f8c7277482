#!/bin/bash
# How long `vmhost doctor` takes with N VM processes (default 100 fake guests): the median of R
# runs (wall clock) of one reading (--interval 0: counters, KVM settings, the timed smaps_rollup
# sample within its 50 ms budget), and of the default run less its 1 s observation interval.
#   bench/doctor.sh [BUILD_DIR] [N] [R]
set -u
build=${1:-build}
n=${2:-100}
runs=${3:-15}
vmhost=$build/vmhost
fake=$build/fakeguest
tmp=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
for i in $(seq "$n"); do
	bash -c 'exec -a qemu-system-x86_64 "$0" "$@"' "$fake" -name "doc$i" -m 16M -fake-guest "$i" -fake-nomerge -fake-vcpus 2 >"$tmp/$i.out" &
	pids="$pids $!"
done
for i in $(seq "$n"); do
	until grep -q ready "$tmp/$i.out" 2>/dev/null; do sleep 0.05; done
done
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo "scale=3; ($t1 - $t0) / 1000000" | bc; }
found=$("$vmhost" mem --json | jq '[.vms[] | select(.name // "" | startswith("doc"))] | length')
once_ms=$(for r in $(seq "$runs"); do ms "$vmhost" doctor --json --interval 0; done | median)
nosmaps_ms=$(for r in $(seq "$runs"); do ms "$vmhost" doctor --json --interval 0 --smaps-budget 0; done | median)
full_ms=$(for r in $(seq 5); do ms "$vmhost" doctor --json; done | median)
mem_ms=$(for r in $(seq "$runs"); do ms "$vmhost" mem --json; done | median)
findings=$("$vmhost" doctor --json --interval 0 | jq -c '[.findings[].id] | group_by(.) | map({(.[0]): length}) | add // {}')
printf 'VM processes: %d found of %d started; findings: %s\n' "$found" "$n" "$findings"
case $n in 100) goal=" (goal < 200 ms)" ;; *) goal="" ;; esac
printf 'vmhost doctor --interval 0                   median %8.2f ms wall%s\n' "$once_ms" "$goal"
printf 'vmhost doctor --interval 0 --smaps-budget 0  median %8.2f ms wall\n' "$nosmaps_ms"
printf 'vmhost doctor (1 s interval)                 median %8.2f ms wall, %.2f ms beyond the interval\n' "$full_ms" "$(echo "$full_ms - 1000" | bc)"
printf 'vmhost mem --json (the survey alone)         median %8.2f ms wall\n' "$mem_ms"
