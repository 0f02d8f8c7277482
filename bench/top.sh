#!/bin/bash
# What `vmhost top` itself costs left running: N fake QEMU guests (2 vCPU threads each), then
# `vmhost top --batch --interval 1 --iterations ITER`, ROUNDS times; prints its CPU (perf stat's
# task-clock, every thread it had) as percent of one CPU and per reading (the first, which opens
# every file, included), and the median over the rounds. With REF=/path/to/other/vmhost the
# other binary runs in alternate rounds against the same guests, and the ratio of the medians
# is printed (an older build: what a change bought, measured in one run).
# Goal (issue 14): under 1% of one CPU with 100 VMs at a 1 s refresh.
#   [REF=VMHOST] bench/top.sh [BUILD_DIR] [VMS] [ITERATIONS] [ROUNDS]
set -u
build=${1:-build}
vms=${2:-100}
iter=${3:-30}
rounds=${4:-3}
. "$(dirname "$0")/lib.sh"
command -v perf >/dev/null || { echo "bench/top.sh: needs perf (linux-perf)" >&2; exit 1; }
fake_guests "$vms" bench -m 4M -fake-vcpus 2 -fake-nomerge
echo "$vms fake guests ready; vmhost top --batch --interval 1 --iterations $iter, $rounds round(s)"

# one LABEL BINARY: one run; appends its ms per reading to $tmp/LABEL.
one() {
	local label=$1 bin=$2 rc ms rows
	perf stat -x, -e task-clock -o "$tmp/perf" "$bin" top --batch --interval 1 --iterations "$iter" >"$tmp/frames"
	rc=$?
	ms=$(awk -F, '$3 ~ /^task-clock/ { print $1 }' "$tmp/perf")
	rows=$(awk -F'\t' '$1 == "vm" && $4 ~ /^bench/' "$tmp/frames" | wc -l)
	awk -v l="$label" -v ms="$ms" -v n="$((iter + 1))" -v rc="$rc" -v rows="$((rows / iter))" 'BEGIN {
		printf "  %-5s exit %d, %d bench VMs a frame: CPU %.3f s, %.1f ms per reading, %.2f%% of one CPU at 1 s\n",
			l, rc, rows, ms / 1000, ms / n, ms / n / 10 }'
	echo "$ms $((iter + 1))" | awk '{ print $1 / $2 }' >>"$tmp/$label"
}
for r in $(seq "$rounds"); do
	one this "$vmhost"
	[ -n "${REF:-}" ] && one ref "$REF"
done
this=$(median <"$tmp/this")
printf "median: %.1f ms per reading, %.2f%% of one CPU at a 1 s refresh\n" "$this" "$(echo "$this / 10" | bc -l)"
if [ -n "${REF:-}" ]; then
	ref=$(median <"$tmp/ref")
	printf "REF median: %.1f ms per reading; this / REF = %.2f\n" "$ref" "$(echo "$this / $ref" | bc -l)"
fi
