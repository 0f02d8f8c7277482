#!/bin/bash
# How long `vmhost doctor` takes with N VM processes (default 100 fake guests): the median of R
# runs (wall clock) of one reading (--interval 0: counters, KVM settings, the timed smaps_rollup
# sample within its 50 ms budget), and of the default run less its 1 s observation interval.
#   bench/doctor.sh [BUILD_DIR] [N] [R]
set -u
build=${1:-build}
n=${2:-100}
runs=${3:-15}
. "$(dirname "$0")/lib.sh"
fake_guests "$n" doc -m 16M -fake-nomerge -fake-vcpus 2
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
