#!/bin/bash
# vmhost ksm through the binary on frozen KSM trees (a 6.x kernel with the advisor and
# general_profit, an older kernel without them, a tree with malformed files, no KSM at all):
# the whole output against golden files in every form. The measured interval is the one figure
# that varies from run to run; it is checked, then masked.
. "$VMHOST_TESTS/lib.sh"
GOLD=$VMHOST_FIXTURES/ksm-golden
ksm() {
	local tree=$VMHOST_FIXTURES/$1
	shift
	"$VMHOST" --proc-root "$tree/proc" --sys-root "$tree/sys" "$@" ksm --interval 0.1
}
for tree in ksm-new ksm-old ksm-bad ksm-absent; do
	ksm "$tree" >"$TEST_TMP/raw.txt"
	check "$tree: ksm exits 0" [ $? -eq 0 ]
	sed -E 's/^(interval +)[0-9.]+m?s$/\1MEASURED/' "$TEST_TMP/raw.txt" |
		sed "s#$VMHOST_FIXTURES/##" >"$TEST_TMP/$tree.txt"
	check "$tree: human output matches the golden file" diff -u "$GOLD/$tree.txt" "$TEST_TMP/$tree.txt"

	ksm "$tree" --json >"$TEST_TMP/raw.json"
	check "$tree: --json is one JSON document" jq -e . "$TEST_TMP/raw.json" >/dev/null
	if [ "$tree" != ksm-absent ]; then
		check "$tree: the measured interval is about the one asked for" \
			jq -e '.interval_seconds >= 0.1 and .interval_seconds < 5' "$TEST_TMP/raw.json"
	fi
	jq -S 'if (.interval_seconds | type) == "number" then .interval_seconds = "MEASURED" else . end' "$TEST_TMP/raw.json" |
		sed "s#$VMHOST_FIXTURES/##" >"$TEST_TMP/$tree.json"
	check "$tree: --json matches the golden file" diff -u "$GOLD/$tree.json" "$TEST_TMP/$tree.json"

	ksm "$tree" --csv >"$TEST_TMP/raw.csv"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "interval_seconds") c = i }
		 NR > 1 && c && $c != "" { $c = "MEASURED" } { print }' OFS=, "$TEST_TMP/raw.csv" |
		sed "s#$VMHOST_FIXTURES/##" >"$TEST_TMP/$tree.csv"
	check "$tree: --csv matches the golden file" diff -u "$GOLD/$tree.csv" "$TEST_TMP/$tree.csv"
done

# What a user reads off it, whatever the golden files say.
check "new kernel: saved is (pages_sharing + ksm_zero_pages) x 4 KiB" \
	grep -q '^true,421888000,' "$TEST_TMP/ksm-new.csv"
check "old kernel: profit is computed and says so" grep -q 'computed: this kernel has no general_profit' "$TEST_TMP/ksm-old.txt"
check "malformed files: n/a, never a number" grep -Eq '^saved +n/a$' "$TEST_TMP/ksm-bad.txt"
check "no KSM: says so in one line" grep -q '^KSM is not available in this kernel' "$TEST_TMP/ksm-absent.txt"
finish
