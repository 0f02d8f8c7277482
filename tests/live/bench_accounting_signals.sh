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
# killed SIG STAGE CMD...: runs CMD (stderr to $TEST_TMP/err), sends SIG as soon as CMD says on
# stderr that STAGE is under way, and prints its pid and how it ended as its parent's waitpid saw
# it: "signal N" or "exit N" (bash's $? is 128 + N either way), or "never STAGE" when CMD ended
# without saying it.
killed() {
	python3 -c '
import signal, subprocess, sys
p = subprocess.Popen(sys.argv[4:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
log = open(sys.argv[1], "w")
seen = False
for line in p.stderr:
	log.write(line)
	if not seen and sys.argv[3] in line:
		p.send_signal(getattr(signal, "SIG" + sys.argv[2]))
		seen = True
rc = p.wait()
print(p.pid, ("signal %d" % -rc if rc < 0 else "exit %d" % rc) if seen else "never " + sys.argv[3])' "$TEST_TMP/err" "$@"
}
# guests_of ARGS: the processes still running `vmhost bench accounting ARGS` (its guests are forks of
# it: once it is gone they are orphans, no longer its children).
guests_of() {
	local p want="$VMHOST bench accounting $*"
	for p in /proc/[0-9]*; do
		[ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "$want " ] && echo "${p#/proc/}"
	done
}
# all_gone ARGS: waits, 10 s at most, until no such process is left (a guest told to stop by its
# parent's death takes a moment to unmap its RAM); false when one is still there.
all_gone() {
	local i
	for i in $(seq 100); do
		[ -z "$(guests_of "$@")" ] && return 0
		sleep 0.1
	done
	return 1
}
args="--guests 3 --guest-size 128M --repeat 400"
for sig in TERM INT; do
	# The signal lands while the guests start, and while KSM merges them: each stage says so on
	# stderr before its work begins, so the test needs no guess of how long a stage lasts here.
	for stage in starting "KSM merging"; do
		read -r pid how < <(killed $sig "$stage" "$VMHOST" bench accounting $args)
		after=$(snapshot)
		check "SIG$sig while $stage: settings restored" [ "$before" = "$after" ]
		[ "$before" = "$after" ] || diff <(echo "$before") <(echo "$after")
		check "SIG$sig while $stage: killed by the signal itself ($how)" [ "$how" = "signal $(kill -l $sig)" ]
		check "SIG$sig while $stage: no guest process left" all_gone $args
		[ -z "$(guests_of $args)" ] || say "left: $(guests_of $args)"
		check "SIG$sig while $stage: no guest cgroup left" [ -z "$(ls /sys/fs/cgroup/memory /sys/fs/cgroup 2>/dev/null | grep "vmhost-bench-$pid-")" ]
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
