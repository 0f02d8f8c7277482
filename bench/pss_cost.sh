#!/bin/bash
# What vmhost mem's PSS costs per VM against the exact smaps_rollup it stands in for (issue 43):
#   bench/pss_cost.sh [BUILD_DIR] [GUEST_MIB] [ROUNDS]     (defaults: build 512 9)
# Three kinds of fake guests side by side: KSM-merged on huge pages (memory compacted first; three
# of one image and one sharing 30% of it), KSM-merged on 4 KiB pages (-fake-nothp, as on a
# fragmented machine; likewise), and small unmerged ones (16 MiB, whose estimate's bound is their
# file pages). Once merged and frozen, build/bench_pss_cost times in one process, in the CPU time
# of its thread as vmhost times them, mem's PSS (choosing by the costs its memo remembers, as
# successive runs of mem do), the sampler alone, and each exact read, over ROUNDS rounds; the
# medians leave out mem's first round (a first sight: every VM read exactly, its cost learned).
# Prints per kind the median cost per VM of each way, mem's ratio to the exact read, the methods
# mem chose and the largest error. Takes the machine-wide KSM lock and restores every KSM setting.
set -u
build=${1:-build}
mib=${2:-512}
rounds=${3:-9}
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (kpagecount, KSM)"
ksm_lock "$@"
. "$(dirname "$0")/../tests/helpers/pss_state.sh"
ksm_save || die "no KSM on this kernel ($KSM)"
echo 2 >$KSM/run
[ -f $KSM/advisor_mode ] && echo none >$KSM/advisor_mode
echo 0 >$KSM/use_zero_pages
echo 1 >/proc/sys/vm/compact_memory

for kind in huge small; do
	nothp=""
	[ $kind = small ] && nothp=-fake-nothp
	seed=$([ $kind = huge ] && echo 4407 || echo 4409)
	for i in 1 2 3; do fake_guest ${kind}_pages$i -m ${mib}M -fake-guest $((i + ${#kind} * 10)) -fake-seed $seed -fake-shared 0.6 -fake-zero 0.05 $nothp; done
	fake_guest ${kind}_pages_mixed -m ${mib}M -fake-guest $((4 + ${#kind} * 10)) -fake-seed $seed -fake-shared 0.3 -fake-zero 0.05 $nothp
done
for i in 1 2 3; do fake_guest unmerged$i -m 16M -fake-guest $((i + 90)) -fake-nomerge; done
echo 4000 >$KSM/pages_to_scan
echo 10 >$KSM/sleep_millisecs
echo 1 >$KSM/run
ksm_wait_settled 100000 600 || die "KSM did not merge (pages_sharing=$(cat $KSM/pages_sharing))"
echo 0 >$KSM/run

bench=$build/bench_pss_cost
pss_steady_run "$tmp/mem" "$bench" --rounds "$rounds" --memo "$tmp/memo" --budget 10 $TEST_PIDS ||
	warn "the guests never held still for mem's rounds: errors include their moves"
pss_steady_run "$tmp/sample" "$bench" --rounds "$rounds" --sample --budget 10 $TEST_PIDS ||
	warn "the guests never held still for the sampler's rounds: errors include their moves"

# kind_of NAME: the kind a guest's name says.
kind_of() { case $1 in huge_pages*) echo "merged, huge pages" ;; small_pages*) echo "merged, 4 KiB pages" ;; *) echo "small, unmerged" ;; esac; }
us() { awk '{ printf "%.0f", $1 * 1e6 }'; }
printf '%s guests of %s MiB (unmerged: 16 MiB), %s rounds, CPU time per VM (medians), error in %% of RSS\n' \
	"$(echo $TEST_PIDS | wc -w)" "$mib" "$rounds"
printf '%-22s %10s %10s %10s %8s %-26s %9s\n' kind "mem us" "sampler us" "exact us" mem/exact "mem's methods" "max error"
for kind in "merged, huge pages" "merged, 4 KiB pages" "small, unmerged"; do
	while read -r round pid name method rss pss bound cost epss ecost; do
		[ "$(kind_of "$name")" = "$kind" ] || continue
		[ "$round" -gt 1 ] || continue
		echo "$cost" >>"$tmp/m.cost"
		echo "$ecost" >>"$tmp/e.cost"
		echo "$method" >>"$tmp/m.method"
		awk -v p="$pss" -v e="$epss" -v r="$rss" 'BEGIN { d = p - e; printf "%.3f\n", 100 * (d < 0 ? -d : d) / r }' >>"$tmp/m.err"
	done <"$tmp/mem"
	while read -r round pid name method rss pss bound cost epss ecost; do
		[ "$(kind_of "$name")" = "$kind" ] && echo "$cost" >>"$tmp/s.cost"
	done <"$tmp/sample"
	m=$(median <"$tmp/m.cost") s=$(median <"$tmp/s.cost") e=$(median <"$tmp/e.cost")
	printf '%-22s %10s %10s %10s %8.2f %-26s %8s%%\n' "$kind" "$(echo "$m" | us)" "$(echo "$s" | us)" "$(echo "$e" | us)" \
		"$(awk -v m="$m" -v e="$e" 'BEGIN { print m / e }')" "$(sort "$tmp/m.method" | uniq -c | awk '{printf "%s %s ", $2, $1}')" \
		"$(sort -n "$tmp/m.err" | tail -1)"
	rm -f "$tmp"/m.* "$tmp"/s.* "$tmp"/e.*
done
