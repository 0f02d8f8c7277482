# What the live PSS tests and bench/pss_cost.sh share, sourced after tests/lib.sh or bench/lib.sh:
# each guest's exact state and whether its KSM count is current, a command run again until the
# guests held still around it, and the errors of build/bench_pss_cost's lines. A guest's PSS is
# compared with smaps_rollup only when nothing moved: with KSM stopped, khugepaged copies split
# huge pages back into huge pages (the KSM mappings that ksm_merging_pages still counts are then
# private pages, until ksmd's next pass: docs/accounting.md), and another program may write KSM's
# run. The guests watched are PSS_PIDS (the test's TEST_PIDS when unset).
PAGE=$(getconf PAGESIZE)

# pss_state: each guest's pid, exact PSS, and whether its KSM count is current: the KSM pages
# smaps_rollup finds mapped are the pages ksm_stat says it merges.
pss_state() {
	local p
	for p in ${PSS_PIDS:-$TEST_PIDS}; do
		awk -v p="$p" -v page="$PAGE" -v m="$(awk '/^ksm_merging_pages/ {print $2}' /proc/$p/ksm_stat)" \
			'/^Pss:/ {pss = $2} /^KSM:/ {ksm = $2} END {print p, pss * 1024, (ksm * 1024 == m * page)}' /proc/$p/smaps_rollup
	done
}

# pss_steady BEFORE AFTER: no guest's PSS moved by more than 64 KiB, and every count was current.
pss_steady() { paste "$1" "$2" | awk '{ d = $2 - $5; if (d < 0) d = -d; if (d > 65536 || !$3 || !$6) bad = 1 } END { exit bad }'; }

# ksm_resettle: KSM on until merging settled again (ksm_wait_settled: pages_sharing the same over
# two full scans, 120 s at most), then stopped again: ksmd's passes bring every count up to date,
# and merge again what another program unmerged (run 2) meanwhile. The settings are saved first if
# they were not.
ksm_resettle() {
	[ -n "$KSM_SAVED" ] || ksm_save
	echo 1 >$KSM/run
	ksm_wait_settled 1 120
	echo 0 >$KSM/run
}

# pss_steady_run OUT COMMAND...: COMMAND's output into OUT, the guests' state after it in OUT.exact;
# run again, KSM resettled first, until the guests held still around it and their counts were
# current, at most 5 times (1 when they never did).
pss_steady_run() {
	local out=$1 try
	shift
	for try in 1 2 3 4 5; do
		pss_state >"$out.before"
		"$@" >"$out"
		pss_state >"$out.exact"
		pss_steady "$out.before" "$out.exact" && return 0
		warn "a guest's PSS moved, or its KSM count went stale, around try $try: KSM resumed until it settled"
		ksm_resettle
	done
	return 1
}

# pss_errors LINES: build/bench_pss_cost's lines as "round name method error bound cost exact_cost",
# the error (against the exact read of the same round) and the bound in % of RSS, the costs in
# CPU seconds.
pss_errors() {
	awk '{ d = $6 - $9; if (d < 0) d = -d; printf "%s %s %s %.3f %.3f %.6f %.6f\n", $1, $3, $4, 100 * d / $5, 100 * $7 / $5, $8, $10 }' "$1"
}
