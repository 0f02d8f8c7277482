#!/bin/bash
# hugetlbfs: with huge pages reserved for the test, the strategy runs and populates every page
# (vmhost itself checks residency with mincore before it counts a run); the pool is restored.
. "$VMHOST_TESTS/lib.sh"
jqc() { jq -e "$@" >/dev/null; }
NR=/proc/sys/vm/nr_hugepages
[ -w $NR ] || skip "needs root to reserve huge pages in $NR"
saved=$(cat $NR)
restore_pool() { echo "$saved" >$NR; }
on_cleanup restore_pool
echo $((saved + 24)) >$NR
free=$(awk '/HugePages_Free/ { print $2 }' /proc/meminfo)
[ "$free" -ge 16 ] || die "could not reserve 16 huge pages (free: $free)"

csv=$TEST_TMP/h.csv
"$VMHOST" --csv bench alloc --sizes 32M --threads 1,2 --repeat 2 --strategies hugetlbfs >"$csv" 2>"$TEST_TMP/err" \
	|| die "hugetlbfs run failed: $(cat "$TEST_TMP/err")"
check "hugetlbfs rows for both thread counts" test "$(grep -c ',hugetlbfs,' "$csv")" = 2
check "hugetlbfs rows are timed" awk -F, '$2 == "hugetlbfs" { rows++ } $2 == "hugetlbfs" && !($4 > 0 && $5 > 0 && $7 > 0) { bad = 1 } END { exit bad || !rows }' "$csv"
"$VMHOST" --json bench alloc --sizes 64M --threads 1 --repeat 1 --strategies hugetlbfs >"$TEST_TMP/h.json" 2>/dev/null
check "a pool too small for the size: skipped with the reason" \
	jqc '(.skipped | any(.strategy == "hugetlbfs")) and all(.rows[]; .strategy != "hugetlbfs")' "$TEST_TMP/h.json"
restore_pool
check "the pool is back" test "$(cat $NR)" = "$saved"
finish
