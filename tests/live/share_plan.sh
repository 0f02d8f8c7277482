#!/bin/bash
# vmhost share --out and share plan on fake guests of known content (tests/helpers/fakeguest.c):
# two "hosts", each a group of guests sketched into its own file. Host A runs a1 and a2 of image X
# and m of image Y; host B runs b1 and b2 of image Y. m's image is on B: the plan must name B as
# m's best target, move it there first, and free what m shares with B (image Y's pages that b1 or
# b2 hold: 50% of m's RAM, within 3%). A file read back holds what share measured; sketches of
# another key or rate are refused with the reason; a cut file is refused, never half read.
. "$VMHOST_TESTS/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root: process_vm_readv of other users' processes"

MIB=128
PAGES=$((MIB * 256))
KEY=$TEST_TMP/fleet.key
declare -A PID
guest() { # NAME IMAGE_SEED FRACTION
	fake_guest "plan-$1" -m $MIB -fake-shared "$3" -fake-zero 0.1 -fake-seed "$2" -fake-guest "$RANDOM" -fake-nomerge
	PID[$1]=$SPAWNED
}
guest a1 7101 0.6
guest a2 7101 0.5
guest m 7102 0.6
guest b1 7102 0.5
guest b2 7102 0.3

A=$TEST_TMP/host-a.sketch
B=$TEST_TMP/host-b.sketch
"$VMHOST" share --db "$TEST_TMP/vmhost.db" --pid "${PID[a1]}" --pid "${PID[a2]}" --pid "${PID[m]}" --sample 1/8 --cpu-budget 0 \
	--key-file "$KEY" --out "$A" --json >"$TEST_TMP/a.json" 2>"$TEST_TMP/a.err" || die "share --out failed: $(cat "$TEST_TMP/a.err")"
"$VMHOST" share --db "$TEST_TMP/vmhost.db" --pid "${PID[b1]}" --pid "${PID[b2]}" --sample 1/8 --cpu-budget 0 \
	--key-file "$KEY" --out "$B" >/dev/null 2>"$TEST_TMP/b.err" || die "share --out failed: $(cat "$TEST_TMP/b.err")"
check "the sketch file is private (0600)" [ "$(stat -c %a "$A")" = 600 ]
# Coded, a kept value takes ~27 bits here (2^37 / 3686 values: gaps of 2^25.2): ~100 KiB per GiB
# at 1/8, against 256 KiB as 8-byte hashes.
check "a sketch file at 1/8 is at most 128 KiB per GiB read: $(stat -c %s "$A") bytes for 3 guests of $MIB MiB" \
	[ "$(stat -c %s "$A")" -lt $((3 * MIB * 128 + 4096)) ]
check "the file is the header, the host's name, and per VM its record, name and the sketch_bytes share showed" \
	[ "$(stat -c %s "$A")" = "$(jq --arg h "$(hostname)" '64 + ($h | length) + ([.vms[] | 64 + (.name | length) + .sketch_bytes] | add)' "$TEST_TMP/a.json")" ]

# Read back alone: the same VMs, pages and zero pages as share measured.
"$VMHOST" share plan --sketch "$A" --json >"$TEST_TMP/one.json" 2>"$TEST_TMP/one.err" || die "plan failed: $(cat "$TEST_TMP/one.err")"
check "read back: the VMs share measured, with their pages and zero pages" sh -c "
	jq -c '[.vms[] | {pid, bytes: (.pages * 4096), zero_bytes: (.zero_pages * 4096)}] | sort_by(.pid)' '$TEST_TMP/a.json' >'$TEST_TMP/m1' &&
	jq -c '[.vms[] | {pid, bytes, zero_bytes}] | sort_by(.pid)' '$TEST_TMP/one.json' >'$TEST_TMP/m2' && cmp -s '$TEST_TMP/m1' '$TEST_TMP/m2'"
check "read back: the host's memory, and one host only" jq -e '(.hosts | length) == 1 and .hosts[0].mem_total_bytes > 0
	and .hosts[0].mem_available_bytes > 0 and .hosts[0].sample == 8 and (.plan.moves | length) == 0' "$TEST_TMP/one.json"

"$VMHOST" share plan --sketch "$A" --sketch "$B" --json >"$TEST_TMP/plan.json" 2>"$TEST_TMP/plan.err" ||
	die "plan failed: $(cat "$TEST_TMP/plan.err")"
vm() { jq --argjson p "${PID[$1]}" ".vms[] | select(.pid == \$p) | $2" "$TEST_TMP/plan.json"; }
check "two hosts, called by their files (one machine's name for both)" \
	jq -e --arg a "$A" --arg b "$B" '[.hosts[].name] == [$a, $b]' "$TEST_TMP/plan.json"
check "m's best target is host B, where its image is" [ "$(vm m .best_host)" = "\"$B\"" ]
check "a1's best is where it runs" [ "$(vm a1 .best_host)" = "\"$A\"" ]
common=$(vm m "(.shares[] | select(.host == \"$B\") | .common_bytes) / 4096")
truth=$((PAGES / 2))
within() { awk -v g="$1" -v t="$2" -v p="$3" 'BEGIN { d = g - t; if (d < 0) d = -d; exit !(d <= 0.03 * p) }'; }
check "m shares $common pages with host B's VMs, truth $truth (within 3% of $PAGES)" within "$common" "$truth" "$PAGES"
check "and nothing with host A's" [ "$(vm m "(.shares[] | select(.host == \"$A\") | .common_bytes)")" = 0 ]
check "zero pages count on every host alike" jq -e 'all(.vms[]; .zero_bytes as $z | $z > 0 and all(.shares[]; .shared_bytes == .common_bytes + $z))' "$TEST_TMP/plan.json"
check "the plan moves m from A to B first" jq -e --argjson p "${PID[m]}" --arg a "$A" --arg b "$B" \
	'.plan.moves[0] | .pid == $p and .from == $a and .to == $b' "$TEST_TMP/plan.json"
freed=$(jq '.plan.moves[0].freed_bytes / 4096' "$TEST_TMP/plan.json")
check "moving m frees $freed pages, truth $truth" within "$freed" "$truth" "$PAGES"
check "one move only, checked against each host's MemAvailable" jq -e '.plan.memory_checked == true and (.plan.moves | length) == 1' "$TEST_TMP/plan.json"
"$VMHOST" share plan --sketch "$A" --sketch "$B" --vm plan-m >"$TEST_TMP/plan.txt" 2>&1
check "the table names m's best target" grep -q "^plan-m (pid ${PID[m]}) on $A: best on $B" "$TEST_TMP/plan.txt"
check "and the move" grep -q "move plan-m (pid ${PID[m]}) from $A to $B: frees" "$TEST_TMP/plan.txt"

# Sketches that do not compare, and files that are not sketches.
refused() { # WHAT PATTERN ARGS...: share plan ARGS fails with one line matching PATTERN
	local what=$1 pattern=$2
	shift 2
	"$VMHOST" share plan "$@" >/dev/null 2>"$TEST_TMP/refused.err"
	local rc=$?
	check "$what: refused (exit $rc) in one line" sh -c "[ $rc -ne 0 ] && [ \$(wc -l <'$TEST_TMP/refused.err') = 1 ] &&
		grep -q '$pattern' '$TEST_TMP/refused.err'"
}
"$VMHOST" share --db "$TEST_TMP/vmhost.db" --pid "${PID[b1]}" --sample 1/8 --cpu-budget 0 --key-file "$TEST_TMP/other.key" --out "$TEST_TMP/other-key.sketch" >/dev/null 2>&1
refused "another key" "different keys" --sketch "$A" --sketch "$TEST_TMP/other-key.sketch"
"$VMHOST" share --db "$TEST_TMP/vmhost.db" --pid "${PID[b1]}" --sample 1/16 --cpu-budget 0 --key-file "$KEY" --out "$TEST_TMP/other-rate.sketch" >/dev/null 2>&1
refused "another rate" "sampled at 1/8 and .* at 1/16" --sketch "$A" --sketch "$TEST_TMP/other-rate.sketch"
head -c $(($(stat -c %s "$B") - 5)) "$B" >"$TEST_TMP/cut.sketch"
refused "a cut file" "truncated" --sketch "$A" --sketch "$TEST_TMP/cut.sketch"
refused "not a sketch file" "not a vmhost sketch file" --sketch /etc/passwd
cp "$A" "$TEST_TMP/v1.sketch"
printf '\001' | dd of="$TEST_TMP/v1.sketch" bs=1 seek=8 conv=notrunc status=none
refused "a version 1 file" "written by an older vmhost: sketch again" --sketch "$TEST_TMP/v1.sketch"
refused "an unknown VM" "no VM named nosuch" --sketch "$A" --vm nosuch
for g in a1 a2 m b1 b2; do stop_pid "${PID[$g]}"; done
finish
