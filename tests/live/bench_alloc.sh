#!/bin/bash
# vmhost bench alloc: CSV and JSON shape, the size guard, usage errors, the SVG file.
. "$VMHOST_TESTS/lib.sh"
jqc() { jq -e "$@" >/dev/null; }

csv=$TEST_TMP/out.csv
"$VMHOST" --csv bench alloc --sizes 32M,64M --threads 1,2 --repeat 2 >"$csv" 2>"$TEST_TMP/err" || die "bench alloc --csv failed: $(cat "$TEST_TMP/err")"
check "CSV header is the contract's" \
	test "$(head -1 "$csv")" = "size_bytes,strategy,threads,create_seconds,destroy_seconds,create_gib_per_s,efficiency"
check "every CSV row has 7 fields" awk -F, 'NR > 1 && NF != 7 { exit 1 }' "$csv"
check "a memset-reference row per size and thread count, efficiency 1" \
	test "$(awk -F, '$2 == "memset-reference" && $7 == 1' "$csv" | wc -l)" = 4
check "a first-touch row per size" test "$(grep -c ',first-touch,' "$csv")" = 2
check "madv-populate-write-thp rows for both sizes and thread counts" \
	test "$(grep -c ',madv-populate-write-thp,' "$csv")" = 4
check "sizes are bytes" test "$(awk -F, 'NR > 1 { print $1 }' "$csv" | sort -u | tr '\n' ' ')" = "33554432 67108864 "
check "populate rows have positive create, destroy, GiB/s and efficiency" \
	awk -F, 'NR > 1 && $2 != "memset-reference" && !($4 > 0 && $5 > 0 && $6 > 0 && $7 > 0) { exit 1 }' "$csv"
check "create_gib_per_s = size / create_seconds" \
	awk -F, 'NR > 1 { r = $1 / 1073741824 / $4; d = r - $6; if (d < 0) d = -d; if (d > 0.001 * $6 + 0.0001) exit 1 }' "$csv"

json=$TEST_TMP/out.json
"$VMHOST" --json bench alloc --sizes 32M --threads 2 --repeat 1 --strategies touch-4k,madv-populate-write-thp,hugetlbfs \
	--svg "$TEST_TMP/a.svg" >"$json" || die "bench alloc --json failed"
check "JSON rows carry the CSV columns and the run counts" \
	jqc '.rows | length == 4 and all(.[]; has("size_bytes") and has("strategy") and has("threads") and has("create_seconds")
		and has("destroy_seconds") and has("create_gib_per_s") and has("efficiency") and has("runs"))' "$json"
check "JSON sizes and threads are integers" jqc 'all(.rows[]; (.size_bytes | type) == "number" and .size_bytes == 33554432 and .threads == 2)' "$json"
check "memset-reference has no destroy time (null, not 0)" jqc '.rows[] | select(.strategy == "memset-reference") | .destroy_seconds == null' "$json"
check "host facts in JSON" jqc '.host.mem_total_bytes > 0 and (.host.thp_enabled | type) == "string" and .repeats == 1 and .qemu == null' "$json"
if [ "$(awk '/HugePages_Free/ { print $2 }' /proc/meminfo)" -lt 16 ]; then
	check "hugetlbfs without a pool is skipped with the reason" \
		jqc '.skipped | any(.strategy == "hugetlbfs" and (.reason | test("nr_hugepages")))' "$json"
	check "no hugetlbfs row when skipped" jqc 'all(.rows[]; .strategy != "hugetlbfs")' "$json"
fi
check "SVG written" grep -q '</svg>' "$TEST_TMP/a.svg"
check "SVG has one series per strategy row" test "$(grep -c '<g class="series"' "$TEST_TMP/a.svg")" = 4
check "SVG axes are labelled" grep -q 'guest memory size' "$TEST_TMP/a.svg"

human=$("$VMHOST" bench alloc --sizes 32M --threads 1 --repeat 1 --strategies touch-thp)
check "human table has the headings" grep -q 'STRATEGY.*THREADS.*CREATE.*DESTROY.*EFFICIENCY' <<<"$human"
check "human output names the best strategy" grep -q '^best at 32.0 MiB: touch-thp' <<<"$human"

# The size guard refuses before allocating anything: the answer is immediate and says why.
"$VMHOST" bench alloc --sizes 64M,1000T >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
check "too large a size fails with exit 1" test "$rc" = 1
check "one-line error naming the margin" grep -qE '^vmhost: bench alloc: size refused: 1000 TiB would leave less than the .* safety margin of MemAvailable' "$TEST_TMP/err"
check "the error is one line" test "$(wc -l <"$TEST_TMP/err")" = 1
check "nothing measured (no table on stdout)" test ! -s "$TEST_TMP/out"
"$VMHOST" --json bench alloc --sizes 1000T >"$TEST_TMP/out" 2>/dev/null
check "--json refusal is an error document" jqc '.error | test("size refused")' "$TEST_TMP/out"

for bad in "--sizes abc" "--sizes 0" "--threads 0" "--threads 1,x" "--strategies touch" "--repeat 0" "--bogus"; do
	# shellcheck disable=SC2086
	"$VMHOST" bench alloc $bad >/dev/null 2>"$TEST_TMP/err"
	rc=$?
	check "usage error for '$bad' (exit 2, one line)" test "$rc" = 2 -a "$(wc -l <"$TEST_TMP/err")" = 1
done
check "--help lists the strategies" sh -c "'$VMHOST' bench alloc --help | grep -q madv-populate-write-thp-tail"
finish
