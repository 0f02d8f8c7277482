# Sampled PSS on real KSM-merged processes: unlike guests (three sharing 80/50/20% of one image,
# one with 60% zero pages on 4 KiB pages) and three guests of another image, each sampled (the
# sampler alone: build/bench_pss_cost --sample, mem's own code) and then read exactly; then the
# guest sharing 80% stopped, which leaves the KSM pages it shared with one other guest mapped once
# (they weigh a whole page). Memory is compacted first, so the guests that ask for huge pages get
# them, as on a freshly booted machine, and KSM splits them as it merges; a figure is compared only
# when the guests held still around its run (tests/helpers/pss_state.sh). KSM settings are
# restored on every exit path (lib.sh).
. "$VMHOST_TESTS/lib.sh"
[ -w $KSM/run ] || skip "needs root and KSM (/sys/kernel/mm/ksm/run not writable)"
ksm_save
echo 2 >$KSM/run
[ -f $KSM/advisor_mode ] && echo none >$KSM/advisor_mode
echo 0 >$KSM/use_zero_pages
[ -w /proc/sys/vm/compact_memory ] && echo 1 >/proc/sys/vm/compact_memory

start_guest() { fake_guest "$1" -m 96M "${@:2}"; } # name args...
start_guest a80 -fake-guest 100 -fake-seed 4201 -fake-shared 0.8 -fake-zero 0.05
A80=$SPAWNED
start_guest a50 -fake-guest 101 -fake-seed 4201 -fake-shared 0.5 -fake-zero 0.05
start_guest a20 -fake-guest 102 -fake-seed 4201 -fake-shared 0.2 -fake-zero 0.05
start_guest z60 -fake-guest 103 -fake-seed 4201 -fake-shared 0.1 -fake-zero 0.6 -fake-nothp
for i in 1 2 3; do start_guest s$i -fake-guest $i -fake-seed 4207 -fake-shared 0.6 -fake-zero 0.05; done
say "on huge pages before merging: $(awk '/^AnonHugePages:/ {print $2}' /proc/$A80/smaps_rollup) kB of a80's"
echo 4000 >$KSM/pages_to_scan
echo 10 >$KSM/sleep_millisecs
echo 1 >$KSM/run
ksm_wait_settled 20000 180 || die "KSM did not merge (pages_sharing=$(cat $KSM/pages_sharing))"
echo 0 >$KSM/run # freeze the merged state while comparing

# The test's own guests, by pid: other VMs on the host may have the same names.
OURS="[$(echo $TEST_PIDS | tr ' ' ',')]"
ours() { jq --argjson ours "$OURS" "$@"; }
. "$VMHOST_TESTS/helpers/pss_state.sh"
BENCH_PSS=$VMHOST_BUILD/bench_pss_cost
# errors JSON: our guests' "name method error bound", the error against the exact PSS read after
# the run (JSON.exact, pss_state's) and the stated bound both in % of RSS.
errors() {
	ours -r '.vms[] | select(.pid as $p | any($ours[]; . == $p)) | "\(.pid) \(.name) \(.rss_bytes) \(.pss_bytes) \(.pss_method) \(.pss_error_bound_bytes)"' "$1" |
		while read -r pid name rss pss method bound; do
			exact=$(awk -v p="$pid" '$1 == p {print $2}' "$1.exact")
			awk -v n="$name" -v r="$rss" -v p="$pss" -v e="$exact" -v m="$method" -v b="$bound" \
				'BEGIN { d = p - e; printf "%s %s %.3f %.3f\n", n, m, 100 * (d < 0 ? -d : d) / r, 100 * b / r }'
		done
}

pss_steady_run "$TEST_TMP/est.json" "$VMHOST" mem --json --pss-budget 0 || die "the guests' state never held still for a run"
errors "$TEST_TMP/est.json" >"$TEST_TMP/est.txt"
say "estimate only: $(tr '\n' ';' <"$TEST_TMP/est.txt")"
check "budget 0: every VM estimated" ours -e '[.vms[] | select(.pid as $p | any($ours[]; . == $p)) | .pss_method == "estimate"] | all' "$TEST_TMP/est.json"
check "the zero-page guest's estimate is far off (the case sampling is for: > 5% of RSS)" awk '$1 == "z60" { exit !($3 > 5) }' "$TEST_TMP/est.txt"

# The sampler alone, whatever an exact read would cost (mem reads a VM exactly where that is
# cheaper: tests/live/mem_pss_cost.sh), with a budget large enough for every VM: its accuracy,
# whatever the machine's speed, against the exact read of each guest right after its sample.
sampled_checks() { # LABEL LINES GUESTS
	pss_errors "$2" >"$2.err"
	say "$1, sampled: $(awk '{printf "%s %s %s %s;", $2, $3, $4, $5}' "$2.err")"
	check "$1: every guest sampled" awk -v n="$3" '$3 != "sampled" { bad = 1 } END { exit bad || NR != n }' "$2.err"
	check "$1: every sampled PSS within 2% of RSS of smaps_rollup" awk '$4 > 2 { bad = 1 } END { exit bad }' "$2.err"
	check "$1: every error inside its stated bound" awk '$4 > $5 { bad = 1 } END { exit bad }' "$2.err"
	check "$1: the stated bounds are tight (under 2% of RSS)" awk '$5 > 2 { bad = 1 } END { exit bad }' "$2.err"
}
pss_steady_run "$TEST_TMP/sampled" "$BENCH_PSS" --sample --budget 2 $TEST_PIDS || die "the guests' state never held still for a run"
sampled_checks "seven guests" "$TEST_TMP/sampled" 7

# The default budget (5 ms) refines as many as it can, largest bound first, and says which (sampled,
# or read exactly where that costs less). Other VMs on the host may take it all: the order is
# checked among ours.
"$VMHOST" mem --json >"$TEST_TMP/default.json"
n=$(ours '[.vms[] | select((.pid as $p | any($ours[]; . == $p)) and .pss_method != "estimate")] | length' "$TEST_TMP/default.json")
say "default budget: $n of our 7 guests refined"
check "the default budget refines our guests largest bound first" ours -e --slurpfile est "$TEST_TMP/est.json" '
	($est[0].vms | map({key: (.pid | tostring), value: .pss_error_bound_bytes}) | from_entries) as $b |
	[.vms[] | select(.pid as $p | any($ours[]; . == $p)) | {s: (.pss_method != "estimate"), b: $b[.pid | tostring]}] as $v |
	([$v[] | select(.s) | .b] | min // infinite) >= ([$v[] | select(.s | not) | .b] | max // 0) or ($v | map(.s) | any | not)' \
	"$TEST_TMP/default.json"
"$VMHOST" mem >"$TEST_TMP/default.txt"
[ "$n" -gt 0 ] && check "human output says PSS was refined" grep -q '^PSS sampled for [0-9]* VMs*, read exactly for [0-9]*' "$TEST_TMP/default.txt"

# Without privilege (frame numbers hidden): estimates, no error.
if id nobody >/dev/null 2>&1; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$VMHOST" mem --json >"$TEST_TMP/nobody.json" 2>/dev/null
	check "as nobody: no VM sampled, nothing fails" jq -e '[.vms[] | .pss_method != "sampled"] | all' "$TEST_TMP/nobody.json"
fi

# a80 stopped: the KSM pages only it and a50 mapped (its share of a50's pages, 30% of them) are now
# mapped by a50 alone, still KSM pages and still in a50's ksm_merging_pages, and weigh a whole page.
stop_pid "$A80"
pss_steady_run "$TEST_TMP/alone" "$BENCH_PSS" --sample --budget 2 $TEST_PIDS || die "the guests' state never held still for a run"
sampled_checks "a80 stopped" "$TEST_TMP/alone" 6
finish
