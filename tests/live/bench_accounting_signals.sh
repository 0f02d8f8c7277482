# vmhost bench accounting killed mid-run (SIGTERM, SIGINT): every KSM setting is back as it was
# and none of its guest processes is left behind. Then a short complete run checks the output.
. "$VMHOST_TESTS/lib.sh"
[ -w $KSM/run ] || skip "needs root and KSM"
ksm_save
snapshot() { for f in $KSM_KNOBS; do [ -f $KSM/$f ] && printf '%s=%s\n' "$f" "$(cat $KSM/$f)"; done; }
# Start from settings that differ from what the benchmark uses, so a missed restore shows.
echo 0 >$KSM/run
echo 123 >$KSM/pages_to_scan
echo 37 >$KSM/sleep_millisecs
echo 1 >$KSM/smart_scan
before=$(snapshot)
# killed SIG DELAY CMD...: runs CMD (stderr to $TEST_TMP/err), sends SIG after DELAY seconds, and
# prints its pid and how it ended as its parent's waitpid saw it: "signal N" or "exit N" (bash's
# $? is 128 + N either way).
killed() {
	python3 -c '
import signal, subprocess, sys, time
p = subprocess.Popen(sys.argv[4:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
time.sleep(float(sys.argv[3]))
p.send_signal(getattr(signal, "SIG" + sys.argv[2]))
rc = p.wait()
print(p.pid, "signal %d" % -rc if rc < 0 else "exit %d" % rc)' "$TEST_TMP/err" "$@"
}
for sig in TERM INT; do
	for delay in 1 5; do
		# long enough (many exact reads) that the signal lands while it runs, at any stage
		read -r pid how < <(killed $sig $delay "$VMHOST" bench accounting --guests 3 --guest-size 128M --repeat 400)
		sleep 0.5
		after=$(snapshot)
		check "SIG$sig after ${delay}s: settings restored" [ "$before" = "$after" ]
		[ "$before" = "$after" ] || diff <(echo "$before") <(echo "$after")
		check "SIG$sig after ${delay}s: killed by the signal itself ($how)" [ "$how" = "signal $(kill -l $sig)" ]
		left=$(pgrep -P $pid 2>/dev/null; for p in /proc/[0-9]*; do [ "$(awk '{print $4}' $p/stat 2>/dev/null)" = "$pid" ] && echo ${p#/proc/}; done)
		check "SIG$sig after ${delay}s: no guest process left" [ -z "$left" ]
		check "SIG$sig after ${delay}s: no guest cgroup left" [ -z "$(ls /sys/fs/cgroup/memory /sys/fs/cgroup 2>/dev/null | grep "vmhost-bench-$pid-")" ]
	done
done
# Guests big enough that shared library pages (counted in full by the estimate) are a small part.
"$VMHOST" bench accounting --json --guests 2 --guest-size 256M --repeat 3 >"$TEST_TMP/b.json" 2>"$TEST_TMP/err"
check "a complete run exits 0" [ $? = 0 ]
check "settings restored after a complete run" [ "$before" = "$(snapshot)" ]
check "JSON: five methods per scenario" jq -e '[.methods[] | select(.scenario == "symmetric")] | length == 5' "$TEST_TMP/b.json"
# Proxmox's figure (each guest in a memory cgroup of its own): a merged page is charged to one
# guest only, so per guest it is far off, while over the guests it adds up to their PSS.
if jq -e '.scenarios[0].cgroup_version != null' "$TEST_TMP/b.json" >/dev/null; then
	check "JSON: cgroup is KSM-blind (a merged guest off by more than 10% of RSS)" jq -e '[.guests[] | select(.scenario == "symmetric") | .cgroup_error_pct_of_rss > 10] | any' "$TEST_TMP/b.json"
	check "JSON: over the guests the cgroup charges add up to their PSS (within 10%)" jq -e '[.guests[] | select(.scenario == "symmetric")] | ((map(.cgroup_bytes) | add) / (map(.pss_exact_bytes) | add) - 1 | fabs) < 0.1' "$TEST_TMP/b.json"
else
	check "JSON: no memory cgroup: says why" jq -e '.scenarios[0].cgroup_unavailable | length > 0' "$TEST_TMP/b.json"
fi
check "no guest cgroup left after a complete run" [ -z "$(ls /sys/fs/cgroup/memory /sys/fs/cgroup 2>/dev/null | grep vmhost-bench-)" ]
# The exact figure sees the sharing: merged symmetric guests have a PSS well below their RSS.
check "JSON: exact PSS counts the merged pages as shared" jq -e '[.guests[] | select(.scenario == "symmetric") | .pss_exact_bytes < 0.8 * .rss_bytes] | length > 0 and all' "$TEST_TMP/b.json"
# The calibrated method pays for the exact reads that keep its weights fresh (at least one per
# sample, shared by the guests): never reported at the bare estimate's cost.
check "JSON: calibrated cost includes its exact reads" jq -e '[.methods[] | select(.scenario == "symmetric")] | (map(select(.method == "calibrated"))[0].cost_seconds_per_vm) >= (map(select(.method == "smaps_rollup"))[0].cost_seconds_per_vm) / 2' "$TEST_TMP/b.json"
check "JSON: status RSS overstates merged guests" jq -e '.methods[] | select(.scenario == "symmetric" and .method == "status-rss") | .max_error_pct_of_rss > 10' "$TEST_TMP/b.json"
err=$(jq '.methods[] | select(.scenario == "symmetric" and .method == "vmhost-estimate") | .max_error_pct_of_rss' "$TEST_TMP/b.json")
check "JSON: the estimate is within 2% of RSS for one image ($err%)" jq -e '.methods[] | select(.scenario == "symmetric" and .method == "vmhost-estimate") | .max_error_pct_of_rss < 2' "$TEST_TMP/b.json"
check "JSON: per-guest rows with bounds" jq -e '[.guests[] | select(.estimate_bound_bytes > 0)] | length >= 4' "$TEST_TMP/b.json"
check "JSON: every asymmetric guest within its bound" jq -e '[.guests[] | select(.scenario == "asymmetric") | ((.pss_estimate_bytes - .pss_exact_bytes) | fabs) <= .estimate_bound_bytes] | length > 0 and all' "$TEST_TMP/b.json"
finish
