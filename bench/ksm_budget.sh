#!/bin/bash
# Does `vmhost ksm tune` keep ksmd within its CPU budget while scanning fast, with the host's
# cores idle and with every core busy (a spinning process per core)? And what does the tuner
# itself cost while idle, beside ksmd's idle floor?
#   bench/ksm_budget.sh [BUILD_DIR] [BUDGET_PCT] [GUESTS] [GUEST_MIB] [IDLE_SECONDS]
# Defaults: build 20 4 256 60. Per case: fresh VM-like guests (half of each the same image, 10%
# rewritten all the time), KSM unmerged, the tuner run with --json; every interval decided fast
# (after the first two, while the fit settles) gives one ksmd CPU % sample. Takes the
# machine-wide KSM lock and restores every KSM setting on exit. CASES (default "idle busy cost")
# picks cases; TUNE_CONFIG names a [tune] file for the fast cases.
set -u
build=${1:-build}
budget=${2:-20}
guests=${3:-4}
guest_mib=${4:-256}
idle_s=${5:-60}
. "$(dirname "$0")/lib.sh"
ksm_lock "$@"
ksm_save || die "no KSM on this kernel ($KSM)"

start_guests() { # COUNT MIB [fakeguest options]
	local n=$1 mib=$2
	shift 2
	fake_guests "$n" budget -m "$mib" -fake-seed 41 "$@"
}
unmerge() {
	echo 2 >$KSM/run
	until [ "$(cat $KSM/pages_shared)" = 0 ] && [ "$(cat $KSM/pages_sharing)" = 0 ]; do sleep 0.2; done
	echo 0 >$KSM/run
}
runtime_ns() { awk '{print $1}' "/proc/$1/schedstat"; }
ksmd=$(for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = ksmd ] && basename $p; done | head -1)

# One fast case: HOG (0 or 1) -> a row
fast_case() {
	local hog=$1 label=$2 hogs="" c
	start_guests "$guests" "$guest_mib" -fake-volatile 0.1
	unmerge
	if [ "$hog" = 1 ]; then
		for c in $(seq "$(nproc)"); do
			spawn sh -c 'while :; do :; done'
			hogs="$hogs $SPAWNED"
		done
	fi
	spawn "$vmhost" --json ksm tune ${TUNE_CONFIG:+--config "$TUNE_CONFIG"} --cpu-budget "$budget" --interval 2 --duration 90 \
		--verbose >"$tmp/tune.json" 2>"$tmp/tune.err"
	local tune=$SPAWNED
	# Until the tuner went idle (or its 90 s are over).
	until grep -q '"mode":"idle"' "$tmp/tune.json" 2>/dev/null || ! kill -0 $tune 2>/dev/null; do sleep 1; done
	stop_pid "$tune"
	stop_pids $hogs
	stop_spawned
	# Fast intervals after the first two, with a measured CPU figure.
	jq -r 'select(.mode == "fast" and .ksmd_cpu_percent != null) | .ksmd_cpu_percent' "$tmp/tune.json" | tail -n +3 >"$tmp/cpu"
	local n med mean within
	n=$(wc -l <"$tmp/cpu")
	med=nan
	[ "$n" -gt 0 ] && med=$(median <"$tmp/cpu")
	mean=$(awk '{ s += $1 } END { if (NR) printf "%.2f", s / NR; else print "nan" }' "$tmp/cpu")
	within=$(awk -v b="$budget" '$1 >= 0.75 * b && $1 <= 1.25 * b { k++ } END { printf "%d/%d", k, NR }' "$tmp/cpu")
	local pts
	pts=$(jq -r 'select(.mode == "fast") | .pages_to_scan' "$tmp/tune.json" | tail -1)
	printf '%-16s %9s %10s %8s %8s %10s %12s %10s\n' "$label" "$n" "$med" "$mean" "$budget" \
		"$(awk -v m="$med" -v b="$budget" 'BEGIN { printf "%.2f", m / b }')" "$within" "$pts"
}

echo "ksmd CPU while vmhost ksm tune scans fast ($guests guests x $guest_mib MiB, budget $budget%, $(nproc) cores)"
printf '%-16s %9s %10s %8s %8s %10s %12s %10s\n' HOST INTERVALS "MEDIAN %" "MEAN %" "BUDGET" "MED/BUDGET" "WITHIN 25%" "LAST P/S"
cases=${CASES:-idle busy cost}
case " $cases " in *" idle "*) fast_case 0 "cores idle" ;; esac
case " $cases " in *" busy "*) fast_case 1 "all cores busy" ;; esac
case " $cases " in *" cost "*) ;; *) exit 0 ;; esac

# The tuner's own cost at idle: 20 small mergeable processes, already scanned.
start_guests 20 16
spawn "$vmhost" ksm tune --interval 2 --verbose >"$tmp/idle.log" 2>&1
tune=$SPAWNED
until grep -q "idle pages_to_scan=100 sleep_millisecs=1000" "$tmp/idle.log"; do sleep 1; done
sleep 4
t0=$(runtime_ns $tune) k0=$(runtime_ns "$ksmd") w0=$(date +%s%N)
sleep "$idle_s"
t1=$(runtime_ns $tune) k1=$(runtime_ns "$ksmd") w1=$(date +%s%N)
stop_spawned
procs=$(ls -d /proc/[0-9]* 2>/dev/null | wc -l)
awk -v t=$((t1 - t0)) -v k=$((k1 - k0)) -v w=$((w1 - w0)) -v s="$idle_s" -v p="$procs" 'BEGIN {
	printf "idle, 20 mergeable processes (%d processes on the host), %d s: vmhost ksm tune %.4f%% of one CPU (%.2f ms per 2 s interval), ksmd %.4f%%\n",
		p, s, 100 * t / w, t / 1e6 / (w / 2e9), 100 * k / w }'
grep "/proc watch" "$tmp/idle.log" | sed 's/^vmhost: ksm tune: //'
