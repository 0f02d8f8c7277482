# Sampled PSS on real KSM-merged processes: unlike guests (three sharing 80/50/20% of one image,
# one with 60% zero pages on 4 KiB pages) and three guests of another image, against each one's
# smaps_rollup read by the test itself. KSM settings are restored on every exit path (lib.sh).
. "$VMHOST_TESTS/lib.sh"
[ -w $KSM/run ] || skip "needs root and KSM (/sys/kernel/mm/ksm/run not writable)"
ksm_save
echo 2 >$KSM/run
[ -f $KSM/advisor_mode ] && echo none >$KSM/advisor_mode
echo 0 >$KSM/use_zero_pages

start_guest() { fake_guest "$1" -m 96M "${@:2}"; } # name args...
start_guest a80 -fake-guest 100 -fake-seed 1 -fake-shared 0.8 -fake-zero 0.05
start_guest a50 -fake-guest 101 -fake-seed 1 -fake-shared 0.5 -fake-zero 0.05
start_guest a20 -fake-guest 102 -fake-seed 1 -fake-shared 0.2 -fake-zero 0.05
start_guest z60 -fake-guest 103 -fake-seed 1 -fake-shared 0.1 -fake-zero 0.6 -fake-nothp
for i in 1 2 3; do start_guest s$i -fake-guest $i -fake-seed 7 -fake-shared 0.6 -fake-zero 0.05; done
echo 4000 >$KSM/pages_to_scan
echo 10 >$KSM/sleep_millisecs
echo 1 >$KSM/run
ksm_wait_settled 20000 180 || die "KSM did not merge (pages_sharing=$(cat $KSM/pages_sharing))"
echo 0 >$KSM/run # freeze the merged state while comparing

# The test's own guests, by pid: other VMs on the host may have the same names.
OURS="[$(echo $TEST_PIDS | tr ' ' ',')]"
ours() { jq --argjson ours "$OURS" "$@"; }
# err_pct NAME JSON: the figure's error against smaps_rollup, % of RSS, and the bound, % of RSS.
errors() {
	ours -r '.vms[] | select(.pid as $p | any($ours[]; . == $p)) | "\(.pid) \(.name) \(.rss_bytes) \(.pss_bytes) \(.pss_method) \(.pss_error_bound_bytes)"' "$1" |
		while read -r pid name rss pss method bound; do
			exact=$(awk '/^Pss:/ {print $2 * 1024}' /proc/$pid/smaps_rollup)
			awk -v n="$name" -v r="$rss" -v p="$pss" -v e="$exact" -v m="$method" -v b="$bound" \
				'BEGIN { d = p - e; printf "%s %s %.3f %.3f\n", n, m, 100 * (d < 0 ? -d : d) / r, 100 * b / r }'
		done
}

"$VMHOST" mem --json --pss-budget 0 >"$TEST_TMP/est.json"
errors "$TEST_TMP/est.json" >"$TEST_TMP/est.txt"
say "estimate only: $(tr '\n' ';' <"$TEST_TMP/est.txt")"
check "budget 0: every VM estimated" ours -e '[.vms[] | select(.pid as $p | any($ours[]; . == $p)) | .pss_method == "estimate"] | all' "$TEST_TMP/est.json"
check "the zero-page guest's estimate is far off (the case sampling is for: > 5% of RSS)" awk '$1 == "z60" { exit !($3 > 5) }' "$TEST_TMP/est.txt"

# A budget large enough for every VM: accuracy, whatever the machine's speed.
"$VMHOST" mem --json --pss-budget 2 >"$TEST_TMP/sampled.json"
errors "$TEST_TMP/sampled.json" >"$TEST_TMP/sampled.txt"
say "sampled: $(tr '\n' ';' <"$TEST_TMP/sampled.txt")"
check "every guest sampled" awk '$2 != "sampled" { bad = 1 } END { exit bad || NR != 7 }' "$TEST_TMP/sampled.txt"
check "every sampled PSS within 2% of RSS of smaps_rollup" awk '$3 > 2 { bad = 1 } END { exit bad }' "$TEST_TMP/sampled.txt"
check "every error inside its stated bound" awk '$3 > $4 { bad = 1 } END { exit bad }' "$TEST_TMP/sampled.txt"
check "the stated bounds are tight (under 2% of RSS)" awk '$4 > 2 { bad = 1 } END { exit bad }' "$TEST_TMP/sampled.txt"

# The default budget (5 ms) samples as many as it can, largest bound first, and says which.
"$VMHOST" mem --json >"$TEST_TMP/default.json"
n=$(jq '[.vms[] | select(.pss_method == "sampled")] | length' "$TEST_TMP/default.json")
say "default budget: $n of 7 guests sampled"
check "the default budget samples the zero-page guest first (largest bound)" ours -e '.vms[] | select(.name == "z60" and (.pid as $p | any($ours[]; . == $p))) | .pss_method == "sampled"' "$TEST_TMP/default.json"
"$VMHOST" mem >"$TEST_TMP/default.txt"
check "human output says PSS was sampled" grep -q '^PSS sampled for [0-9]* VM' "$TEST_TMP/default.txt"

# Without privilege (frame numbers hidden): estimates, no error.
if id nobody >/dev/null 2>&1; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$VMHOST" mem --json >"$TEST_TMP/nobody.json" 2>/dev/null
	check "as nobody: no VM sampled, nothing fails" jq -e '[.vms[] | .pss_method != "sampled"] | all' "$TEST_TMP/nobody.json"
fi
finish
