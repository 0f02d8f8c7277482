#!/bin/bash
# vmhost exits through the binary on frozen debugfs trees (Intel, AMD, KVM without VMs): the whole
# output against golden files in every form (--once human and JSON, --log CSV). The trees do not
# change between reads, so every delta and rate is 0; what varies from run to run (the measured
# interval, the wall clock) is checked, then masked. Deltas over changing files are exits_cli's.
. "$VMHOST_TESTS/lib.sh"
GOLD=$VMHOST_FIXTURES/exits-golden
vx() {
	local tree=$VMHOST_FIXTURES/$1
	shift
	"$VMHOST" --proc-root "$tree/proc" --sys-root "$tree/sys" "$@"
}
for tree in exits-intel exits-amd exits-novm; do
	vx "$tree" exits --once --interval 0.05 >"$TEST_TMP/raw.txt"
	check "$tree: --once exits 0" [ $? -eq 0 ]
	check "$tree: the heading gives the measured interval" grep -Eq '^KVM counters over [0-9.]+m?s' "$TEST_TMP/raw.txt"
	sed -E 's/^KVM counters over [0-9.]+m?s/KVM counters over MEASURED/' "$TEST_TMP/raw.txt" >"$TEST_TMP/$tree.txt"
	check "$tree: human output matches the golden file" diff -u "$GOLD/$tree.txt" "$TEST_TMP/$tree.txt"

	vx "$tree" --json exits --once --interval 0.05 >"$TEST_TMP/raw.json"
	check "$tree: the measured interval is about the one asked for" \
		jq -e '.interval_seconds >= 0.05 and .interval_seconds < 5' "$TEST_TMP/raw.json"
	jq -S '.interval_seconds = "MEASURED"' "$TEST_TMP/raw.json" >"$TEST_TMP/$tree.json"
	check "$tree: --json matches the golden file" diff -u "$GOLD/$tree.json" "$TEST_TMP/$tree.json"

	vx "$tree" --csv exits --log --count 2 --interval 0.05 >"$TEST_TMP/raw.csv"
	check "$tree: --log --csv: a header and two rows" [ "$(wc -l <"$TEST_TMP/raw.csv")" -eq 3 ]
	awk -F, 'NR > 1 { $1 = "TIME"; $2 = "MEASURED" } { print }' OFS=, "$TEST_TMP/raw.csv" >"$TEST_TMP/$tree.csv"
	check "$tree: --log --csv matches the golden file" diff -u "$GOLD/$tree.csv" "$TEST_TMP/$tree.csv"
done

# What a user reads off it, whatever the golden files say.
check "intel: the four VMs, named by pid" grep -q '^KVM counters over MEASURED, 4 VMs: web1, db1, build, pid 4242$' "$TEST_TMP/exits-intel.txt"
check "intel: host total is the kernel's global file" jq -e '.total.exits.total == 82123450' "$TEST_TMP/exits-intel.json"
check "intel: nothing changed, so no delta is other than 0" jq -e '[.. | objects | select(has("delta")) | .delta] | length > 0 and all(. == 0)' "$TEST_TMP/exits-intel.json"
check "no VM: says so" grep -q '^KVM is loaded but no VM is running' "$TEST_TMP/exits-novm.txt"
finish
