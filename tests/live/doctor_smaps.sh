#!/bin/bash
# vmhost doctor's accounting cost on a real process: a fake guest with 5 GiB of RAM on 4 KiB
# pages (no THP) makes smaps_rollup walk some 1.3 million page-table entries, about 20 ms per read
# here: accounting-smaps-slow (from 10 ms), the big guest the slowest one sampled. (3 GiB read in
# 10 to 17 ms on this machine, too near the threshold to say either way.) --smaps-budget 0 measures
# nothing and says nothing. Processes stopped by pid.
. "$VMHOST_TESTS/lib.sh"
fake_guest doctor-big -m 5G -fake-nothp -fake-nomerge -fake-shared 0 -fake-zero 0
BIG=$SPAWNED
"$VMHOST" doctor --interval 0 --json >"$TEST_TMP/d.json" || die "doctor failed"
say "$(jq -c '.findings[] | select(.id == "accounting-smaps-slow")' "$TEST_TMP/d.json")"
check "a 5 GiB guest on 4 KiB pages: accounting-smaps-slow" jq -e '[.findings[] | select(.id == "accounting-smaps-slow")] | length == 1 and .[0].evidence.mean_seconds >= 0.01 and .[0].evidence.sampled_vms >= 1' "$TEST_TMP/d.json"
check "  ... the big guest is the slowest read" jq -e --argjson p "$BIG" '.findings[] | select(.id == "accounting-smaps-slow") | .evidence.slowest_pid == $p and .evidence.slowest_rss_bytes >= 3000000000' "$TEST_TMP/d.json"
"$VMHOST" doctor --interval 0 --smaps-budget 0 --json >"$TEST_TMP/none.json"
check "--smaps-budget 0: not measured, not said" [ "$(jq '[.findings[] | select(.id == "accounting-smaps-slow")] | length' "$TEST_TMP/none.json")" = 0 ]
finish
