#!/bin/bash
# vmhost share against the truth and against KSM (issue 33's "done when"):
#   bench/share.sh [BUILD_DIR] [GUEST_MIB] [SAMPLE_N]     (defaults: build 512 12)
# Fake guests of one image: "host 1" holds 80%, 50% and 20% of it, "host 2" 60% and 30% (the
# fractions nest, so two guests share the pages of fraction min(f1, f2), counted exactly); 10% zero
# pages each, the rest unique. It measures: every pair's shared pages against the truth, in one run
# and over KEYS (default 15) more runs of new random keys (another sample each: the spread); the
# sketch size per GiB (the coded size: 1/12 is the densest rate within 64 KiB per GiB read for
# 512 MiB guests, 58.9 KiB; 1/11 takes 65.1); share's CPU per GiB hashed and its --cpu-budget; host 1's predicted
# savings against what KSM reaches when left to converge (what the guests then no longer use: their
# pages less their PSS); host 2's guests then started beside
# them, sketched apart (two hosts that never ran together, one key) and predicted together
# against KSM's convergence, by one share run over both sets and by the two hosts' sketch files
# joined by share plan (each alone, plus what the plan's moves free); ksmd's CPU for one full scan at the kernel default; and the yield
# rule on a guest that shares nothing, with ksmd's CPU per full scan before and after merging
# is turned off for it (restarted with -fake-nomerge, as mem-merge=off would).
# Takes the machine-wide KSM lock, and restores every KSM setting it changes on exit.
set -u
build=${1:-build}
mib=${2:-512}
rate=${3:-12}
. "$(dirname "$0")/lib.sh"
ksm_lock "$@"
[ "$(id -u)" = 0 ] || { echo "bench/share.sh: needs root" >&2; exit 77; }
key=$tmp/key
ksm_save || die "no KSM on this kernel ($KSM)"
ksmd=$(pgrep -x ksmd | head -1)
ksmd_ns() { awk '{print $1}' /proc/"$ksmd"/schedstat; }
saved_pages() { echo $(($(cat $KSM/pages_sharing) + $(cat $KSM/ksm_zero_pages))); }
declare -A PID FRAC
guest() { # NAME FRACTION [options]
	local name=$1 f=$2
	shift 2
	fake_guest "$name" -m "$mib" -fake-shared "$f" -fake-zero 0.1 -fake-seed 3303 -fake-guest "$((RANDOM + 10))" "$@"
	PID[$name]=$SPAWNED
	FRAC[$name]=$f
}
# truth F PAGES: pages whose class is "shared" at fraction F (tests/helpers/fakeguest.c: page i is
# when splitmix64(i ^ 0x5eed) >> 11, over 2^53, is below F; the fractions nest).
truth() {
	python3 -c '
import sys
M = (1 << 64) - 1
def mix(x):
    x = (x + 0x9e3779b97f4a7c15) & M
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & M
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)
f, n = float(sys.argv[1]), int(sys.argv[2])
print(sum(1 for i in range(n) if (mix(i ^ 0x5eed) >> 11) / (1 << 53) < f))' "$1" "$2"
}
pidargs() { local g; for g in "$@"; do printf -- '--pid %s ' "${PID[$g]}"; done; }
# converge [NAMES...]: KSM scanning fast until what it saves holds still over three full scans (at
# most 600 s; a warning when it did not). With NAMES, what those guests save (freed, below): KSM's
# host-wide counters move with any other process on the host, and can hold still while these
# guests' huge pages are still being split. Prints what was reached.
converge() {
	local scans0 last=-1 now t=0
	scans0=$(cat $KSM/full_scans)
	now=$(reached "$@") # what it reached, if no three full scans come (nothing to scan)
	while [ $t -lt 600 ]; do
		sleep 2
		t=$((t + 2))
		[ $(($(cat $KSM/full_scans) - scans0)) -ge 3 ] || continue
		now=$(reached "$@")
		[ "$last" -ge 0 ] && awk -v a="$now" -v b="$last" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.002 * a) }' && break
		last=$now
		scans0=$(cat $KSM/full_scans)
	done
	[ $t -lt 600 ] || echo "bench/share.sh: KSM did not converge in 600 s: the figure below is what it reached" >&2
	echo "$now"
}
reached() { if [ $# -gt 0 ]; then freed "$@"; else saved_pages; fi; }
# freed NAMES...: the pages those guests no longer use, counted from their memory itself: each wrote
# every page of its RAM, so what it saves is its pages less the PSS of its RAM mapping (a merged
# page counts 1/k to each of its k holders, a page on the zero page nothing). This takes in KSM's
# merges, its zero pages, and the empty pages the kernel freed when KSM split a huge page (in no
# KSM counter), and nothing of any other process on the host (whose KSM savings come and go).
freed() {
	local g t=0 pss
	for g in "$@"; do
		pss=$(awk -v min=$((mib * 1024)) '/^[0-9a-f]+-[0-9a-f]+ / { f = 0 } /^Size:/ { f = $2 >= min }
			/^Pss:/ { if (f) s += $2 } END { printf "%d", s / 4 }' /proc/"${PID[$g]}"/smaps)
		t=$((t + pages - pss))
	done
	echo "$t"
}
ksm_zero() { # NAMES...: their empty pages KSM itself put on the zero page (ksm_stat)
	local g t=0
	for g in "$@"; do
		t=$((t + $(awk '$1 == "ksm_zero_pages" { print $2 }' /proc/"${PID[$g]}"/ksm_stat)))
	done
	echo "$t"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f%%", (a - b) / b * 100 }'; }

echo 2 >$KSM/run # every page unmerged: the counts below start from nothing
echo 1 >$KSM/use_zero_pages
[ -e $KSM/smart_scan ] && echo 0 >$KSM/smart_scan
echo 4000 >$KSM/pages_to_scan
echo 10 >$KSM/sleep_millisecs
echo 1 >$KSM/run
base=$(converge)
echo "baseline: other processes' KSM savings $base pages (subtracted from KSM's counters below)"

guest h1a 0.8
guest h1b 0.5
guest h1c 0.2
pages=$((mib * 256))
"$vmhost" share --db "$tmp/vmhost.db" $(pidargs h1a h1b h1c) --sample 1/"$rate" --cpu-budget 0 --key-file "$key" --out "$tmp/h1.sketch" --json \
	>"$tmp/h1.json" 2>/dev/null
echo "== pairs on host 1 (1/$rate, $mib MiB guests: $pages pages) =="
worst=0
for x in h1a h1b h1c; do
	for y in h1a h1b h1c; do
		[ "$x" = "$y" ] && continue
		got=$(jq --argjson a "${PID[$x]}" --argjson b "${PID[$y]}" '[.vms[] | select(.pid == $a) | .shared_with[] | select(.pid == $b) | .pages] | add // 0' "$tmp/h1.json")
		truth=$(truth "$(awk -v f="${FRAC[$x]}" -v g="${FRAC[$y]}" 'BEGIN { print (f < g ? f : g) }')" $pages)
		err=$(awk -v a="$got" -v b="$truth" -v p=$pages 'BEGIN { d = a - b; if (d < 0) d = -d; printf "%.2f", d / p * 100 }')
		echo "$x with $y: predicted $got, truth $truth pages: off by $err% of the guest ($(pct "$got" "$truth") of the truth)"
		worst=$(awk -v a="$err" -v b="$worst" 'BEGIN { print (a > b ? a : b) }')
	done
done
echo "worst pair error: $worst% of a guest's pages"
# The same pairs over KEYS more keys (a new random key per run: another sample each time): how the
# error spreads, against the sampling theory (the ratio estimator, docs/share.md), and how many runs
# had every pair within 3% of its own truth.
keys=${KEYS:-15}
declare -A TRUTH
for f in 0.2 0.5 0.8; do TRUTH[$f]=$(truth $f $pages); done
for k in $(seq 1 "$keys"); do
	"$vmhost" share --db "$tmp/vmhost.db" $(pidargs h1a h1b h1c) --sample 1/"$rate" --cpu-budget 0 --json \
		>"$tmp/k$k.json" 2>/dev/null
done
for x in h1a h1b h1c; do
	for y in h1a h1b h1c; do
		[ "$x" = "$y" ] && continue
		truth=${TRUTH[$(awk -v f="${FRAC[$x]}" -v g="${FRAC[$y]}" 'BEGIN { print (f < g ? f : g) }')]}
		for k in $(seq 1 "$keys"); do
			jq --argjson a "${PID[$x]}" --argjson b "${PID[$y]}" --argjson t "$truth" -r \
				'.vms[] | select(.pid == $a) | "\($t) \(.pages - .zero_pages - .zero_mapped_pages) \(.sketch_hashes) \([.shared_with[] | select(.pid == $b) | .pages] | add // 0) \(.error_bound_pages)"' \
				"$tmp/k$k.json"
		done | awk -v x="$x" -v y="$y" -v n="$rate" '{ e = ($4 - $1) / $1 * 100; s += e; ss += e * e; a = e < 0 ? -e : e; if (a > m) m = a
			if (a <= 3) w++; p = $1 / $2; th += sqrt(p * (1 - p) * (1 - 1 / n) / $3) / p * 100; b += ($5 / 2) / $1 * 100; c++ }
			END { mean = s / c; printf "%s with %s over %d keys: error mean %+.2f%%, sd %.2f%% (theory %.2f%%; the stated bound a sd of %.2f%%), worst %.2f%%, within 3%% in %d of %d\n",
				x, y, c, mean, sqrt(ss / c - mean * mean), th / c, b / c, m, w, c }'
	done
done
for k in $(seq 1 "$keys"); do
	for x in h1a h1b h1c; do
		for y in h1a h1b h1c; do
			[ "$x" = "$y" ] && continue
			truth=${TRUTH[$(awk -v f="${FRAC[$x]}" -v g="${FRAC[$y]}" 'BEGIN { print (f < g ? f : g) }')]}
			jq --argjson a "${PID[$x]}" --argjson b "${PID[$y]}" --argjson t "$truth" \
				'[.vms[] | select(.pid == $a) | .shared_with[] | select(.pid == $b) | .pages] | add // 0 | (. - $t) / $t * 100 | fabs' "$tmp/k$k.json"
		done
	done | awk '$1 > m { m = $1 } END { print m }'
done | awk '{ c++; if ($1 <= 3) w++ } END { printf "keys with every pair within 3%% of its truth: %d of %d\n", w, c }'
jq -r '.vms[] | "sketch of \(.name): \(.sketch_bytes) bytes (\(.sketch_hashes) values, \(.sketch_bytes * 8 / .sketch_hashes * 100 | floor / 100) bits each) for \(.pages) pages read: \(.sketch_bytes * 262144 / .pages / 1024 | floor) KiB per GiB"' "$tmp/h1.json"
jq -r '"share CPU: \([.vms[].cpu_seconds] | add) s for \([.vms[].pages] | add) pages: \(([.vms[].cpu_seconds] | add) / (([.vms[].pages] | add) / 262144)) s per GiB hashed"' "$tmp/h1.json"
t0=$EPOCHREALTIME
/usr/bin/time -f "%U %S" -o "$tmp/time" "$vmhost" share --db "$tmp/vmhost.db" $(pidargs h1a h1b h1c) --sample 1/"$rate" --cpu-budget 20 --key-file "$key" --json >/dev/null 2>&1
t1=$EPOCHREALTIME
read -r u s <"$tmp/time"
awk -v u="$u" -v s="$s" -v a="$t0" -v b="$t1" 'BEGIN { c = u + s; w = b - a; printf "--cpu-budget 20: %.2f s CPU in %.2f s: %.1f%% of one CPU\n", c, w, c / w * 100 }'

pred1=$(jq '.host.mergeable_savings_bytes / 4096' "$tmp/h1.json")
got1=$(converge h1a h1b h1c)
ksm1=$(($(saved_pages) - base))
echo "== host 1: predicted savings $pred1 pages; KSM converged, its guests then use $got1 pages less than they wrote: $(pct "$pred1" "$got1") =="
echo "   (KSM's host-wide counters moved by $ksm1 pages, $(ksm_zero h1a h1b h1c) of them the guests' ksm_zero_pages: the rest of the empty pages were freed by huge-page splits)"

guest h2a 0.6
guest h2b 0.3
"$vmhost" share --db "$tmp/vmhost.db" $(pidargs h2a h2b) --sample 1/"$rate" --cpu-budget 0 --key-file "$key" --out "$tmp/h2.sketch" --json \
	>"$tmp/h2.json" 2>/dev/null
# The two hosts' sketch files (host 1's written before it ran with host 2) joined by share plan:
# running them together saves what each saves alone plus what the plan's moves free.
"$vmhost" share plan --sketch "$tmp/h1.sketch" --sketch "$tmp/h2.sketch" --json >"$tmp/plan.json" 2>"$tmp/plan.err" ||
	echo "share plan failed: $(cat "$tmp/plan.err")"
freed=$(jq '.plan.freed_bytes / 4096' "$tmp/plan.json")
moves=$(jq -r '[.plan.moves[] | "\(.name) to \(.to | split("/") | last) (\(.freed_bytes / 4096) pages)"] | join(", ")' "$tmp/plan.json")
"$vmhost" share --db "$tmp/vmhost.db" $(pidargs h1a h1b h1c h2a h2b) --sample 1/"$rate" --cpu-budget 0 --key-file "$key" --json >"$tmp/all.json" 2>/dev/null
pred2=$(jq '.host.mergeable_savings_bytes / 4096' "$tmp/h2.json")
predall=$(jq '.host.mergeable_savings_bytes / 4096' "$tmp/all.json")
gotall=$(converge h1a h1b h1c h2a h2b)
echo "host 2 alone: predicted $pred2 pages; both hosts' guests together: predicted $predall, KSM converged and they use $gotall pages less than they wrote: $(pct "$predall" "$gotall")"
predplan=$((pred1 + pred2 + freed))
echo "two sketch files joined by share plan: host 1 alone $pred1 + host 2 alone $pred2 + the plan's moves $freed ($moves) = $predplan pages; KSM freed $gotall with both hosts' guests together: $(pct "$predplan" "$gotall")"
# What the moves can free: the image pages both hosts hold (host 2's 60%, within host 1's 80%).
movetruth=$(truth 0.6 $pages)
echo "the plan's moves free $freed pages; truth $movetruth: $(pct "$freed" "$movetruth")"

echo 100 >$KSM/pages_to_scan
echo 20 >$KSM/sleep_millisecs
n0=$(ksmd_ns)
s0=$(cat $KSM/pages_scanned)
sleep 20
n1=$(ksmd_ns)
s1=$(cat $KSM/pages_scanned)
rmap=$(($(cat $KSM/pages_shared) + $(cat $KSM/pages_sharing) + $(cat $KSM/pages_unshared) + $(cat $KSM/pages_volatile)))
awk -v n=$((n1 - n0)) -v s=$((s1 - s0)) -v r="$rmap" -v c="$(jq '[.vms[].cpu_seconds] | add' "$tmp/all.json")" \
	-v p="$(jq '[.vms[].pages] | add' "$tmp/all.json")" 'BEGIN {
	per = n / 1e9 / s; printf "ksmd at the default (100 pages / 20 ms): %.1f%% of a CPU, %.2f us per page scanned\n", n / 1e9 / 20 * 100, per * 1e6
	printf "one full scan of %d tracked pages: %.2f s of ksmd CPU (%.2f s per GiB); share: %.2f s for %d pages (%.2f s per GiB)\n", r, per * r, per * 262144, c, p, c / p * 262144 }'

guest lonely 0 -fake-zero 0
echo 4000 >$KSM/pages_to_scan
echo 10 >$KSM/sleep_millisecs
converge >/dev/null
"$vmhost" doctor --interval 0 --json >"$tmp/doctor.json" 2>/dev/null
jq -r --argjson p "${PID[lonely]}" '.findings[] | select(.id == "vm-ksm-no-yield" and .pid == $p) | "doctor: \(.summary); fix: \(.advice)"' "$tmp/doctor.json"
jq -e --argjson p "${PID[lonely]}" '[.findings[] | select(.id == "vm-ksm-no-yield")] | map(.pid) == [$p]' "$tmp/doctor.json" >/dev/null &&
	echo "doctor: vm-ksm-no-yield names the lonely guest, and no other" || echo "doctor: vm-ksm-no-yield did NOT find the lonely guest alone"
scan_cost() { # ksmd CPU seconds per full scan, over 3 full scans
	local f0 n0 f1
	f0=$(cat $KSM/full_scans)
	until [ $(($(cat $KSM/full_scans) - f0)) -ge 1 ]; do sleep 0.2; done
	f0=$(cat $KSM/full_scans)
	n0=$(ksmd_ns)
	until [ $(($(cat $KSM/full_scans) - f0)) -ge 3 ]; do sleep 0.2; done
	awk -v n=$(($(ksmd_ns) - n0)) 'BEGIN { printf "%.3f", n / 3 / 1e9 }'
}
before=$(scan_cost)
stop_pid "${PID[lonely]}"
guest lonely 0 -fake-zero 0 -fake-nomerge
after=$(scan_cost)
echo "ksmd CPU per full scan (4000 pages / 10 ms): $before s with the lonely guest merged, $after s with merging off for it: $(pct "$after" "$before")"
