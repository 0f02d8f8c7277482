#!/bin/bash
# vmhost share on fake guests of known content (tests/helpers/fakeguest.c: one image, of which
# the guests hold 80%, 50% and 20%, the same pages as the fractions nest; 10% zero pages; the rest
# unique): every pair's shared memory within 3% of the guest's RAM of the truth at 1/8 (and within
# the error bound the sketch states), zero pages counted apart, a sketch at the default 1/32 coded
# within 32 KiB per GiB, the same key giving the same map (bench/share.sh measures 512 MiB guests);
# bad input marked partial: a VM that exits mid-read, a mapping that goes away, no permission; a
# key file others may read refused.
. "$VMHOST_TESTS/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root: process_vm_readv of other users' processes"
cd "$TEST_TMP" || die "no $TEST_TMP" # where a run would keep its map (only --db writes one)

MIB=128
PAGES=$((MIB * 256))
KEY=$TEST_TMP/fleet.key
declare -A PID
for g in a:0.8 b:0.5 c:0.2; do
	fake_guest "share-${g%%:*}" -m $MIB -fake-shared "${g#*:}" -fake-zero 0.1 -fake-seed 7001 -fake-guest "$RANDOM" -fake-nomerge
	PID[${g%%:*}]=$SPAWNED
done
pids="--pid ${PID[a]} --pid ${PID[b]} --pid ${PID[c]}"

"$VMHOST" share $pids --sample 1/8 --cpu-budget 0 --key-file "$KEY" --json >"$TEST_TMP/s1.json" 2>"$TEST_TMP/s1.err" ||
	die "share failed: $(cat "$TEST_TMP/s1.err")"
check "a new key file is made, mode 0600" [ "$(stat -c %a "$KEY")" = 600 ]
check "and said so" grep -q "created a new key in $KEY" "$TEST_TMP/s1.err"
check "the contract's fields" jq -e '(.vms | length) == 3 and all(.vms[]; has("pid") and has("name") and has("pages")
	and has("zero_pages") and has("self_shared_pages") and has("unique_pages") and (.shared_with | type) == "array"
	and has("sketch_bytes") and has("error_bound_pages") and .partial == false and .partial_reason == null)
	and (.host | has("pages") and has("mergeable_savings_bytes") and has("ksm_saved_bytes"))' "$TEST_TMP/s1.json"
check "every empty page is in the host's savings, on the zero page or not" jq -e '.host |
	.mergeable_savings_bytes >= (.zero_pages + .zero_mapped_pages) * 4096 and .saved_bytes >= .zero_mapped_pages * 4096' \
	"$TEST_TMP/s1.json"
check "the host's empty pages are the VMs'" jq -e '.host.zero_pages == ([.vms[].zero_pages] | add)
	and .host.zero_mapped_pages == ([.vms[].zero_mapped_pages] | add)' "$TEST_TMP/s1.json"

shared() { # FROM TO: pages of FROM that TO holds
	jq --argjson a "${PID[$1]}" --argjson b "${PID[$2]}" \
		'[.vms[] | select(.pid == $a) | .shared_with[] | select(.pid == $b) | .pages] | add // 0' "$TEST_TMP/s1.json"
}
within() { # GOT TRUTH PAGES: |GOT - TRUTH| <= 3% of PAGES
	awk -v g="$1" -v t="$2" -v p="$3" 'BEGIN { d = g - t; if (d < 0) d = -d; exit !(d <= 0.03 * p) }'
}
for pair in a:b:0.5 a:c:0.2 b:c:0.2 b:a:0.5 c:a:0.2; do
	IFS=: read -r x y f <<<"$pair"
	got=$(shared "$x" "$y")
	truth=$(awk -v f="$f" -v p=$PAGES 'BEGIN { printf "%d", f * p }')
	check "$x shares $got pages with $y, truth $truth (within 3% of $PAGES)" within "$got" "$truth" "$PAGES"
	bound=$(jq --argjson p "${PID[$x]}" '.vms[] | select(.pid == $p) | .error_bound_pages' "$TEST_TMP/s1.json")
	# the bound is two standard errors (one pair in 20 beyond it, by chance); four are beyond any
	# sampling chance (6 in 100,000): only a biased estimate or a wrong bound passes them
	check "$x with $y: off by no more than twice its stated bound ($bound pages, two standard errors)" \
		awk -v g="$got" -v t="$truth" -v b="$bound" 'BEGIN { d = g - t; if (d < 0) d = -d; exit !(d <= 2 * b) }'
done
for g in a b c; do
	z=$(jq --argjson p "${PID[$g]}" '.vms[] | select(.pid == $p) | .zero_pages' "$TEST_TMP/s1.json")
	check "share-$g: $z zero pages, 10% of $PAGES" within "$z" $((PAGES / 10)) "$PAGES"
done

# At the default rate (1/32), coded: ~27 bits a kept value for these guests (2^35 / ~900 values:
# gaps of 2^25.2), ~24 KiB per GiB; as 8-byte hashes it was 57 KiB.
"$VMHOST" share $pids --cpu-budget 0 --key-file "$KEY" --json >"$TEST_TMP/s1.json" 2>/dev/null
check "the default rate is 1/32" jq -e 'all(.vms[]; .sample == 32)' "$TEST_TMP/s1.json"
check "a sketch at 1/32 is at most 32 KiB per GiB read ($(jq -c '[.vms[] | .sketch_bytes]' "$TEST_TMP/s1.json") bytes)" \
	jq -e 'all(.vms[]; .sketch_bytes <= 32768 * .pages / 262144)' "$TEST_TMP/s1.json"
check "... at most 3.5 bytes a kept value, not 8" jq -e 'all(.vms[]; .sketch_hashes > 500 and .sketch_bytes <= 3.5 * .sketch_hashes)' \
	"$TEST_TMP/s1.json"
"$VMHOST" share $pids --cpu-budget 0 --key-file "$KEY" --json >"$TEST_TMP/s2.json" 2>/dev/null
check "the same key: the same map" sh -c "jq -c '[.vms[] | del(.cpu_seconds, .wall_seconds)]' '$TEST_TMP/s1.json' >'$TEST_TMP/m1' &&
	jq -c '[.vms[] | del(.cpu_seconds, .wall_seconds)]' '$TEST_TMP/s2.json' >'$TEST_TMP/m2' && cmp -s '$TEST_TMP/m1' '$TEST_TMP/m2'"

# A VM that exits mid-read: its sketch is partial, and says why.
fake_guest share-exit -m 512 -fake-seed 7001 -fake-nomerge
EXIT_PID=$SPAWNED
"$VMHOST" share --pid "$EXIT_PID" --cpu-budget 2 --key-file "$KEY" --json >"$TEST_TMP/exit.json" 2>/dev/null &
SHARE=$!
sleep 1
stop_pid "$EXIT_PID"
wait "$SHARE"
check "a VM that exits mid-read: partial, vm-exited" jq -e '.vms[0] | .partial == true and .partial_reason == "vm-exited"
	and .pages < .ram_pages' "$TEST_TMP/exit.json"

# A RAM mapping that goes away mid-read: partial, mapping-gone (fakeguest unmaps half its RAM).
fake_guest share-unmap -m 512 -fake-seed 7001 -fake-nomerge -fake-unmap-after 1
UNMAP_PID=$SPAWNED
"$VMHOST" share --pid "$UNMAP_PID" --cpu-budget 2 --key-file "$KEY" --json >"$TEST_TMP/unmap.json" 2>/dev/null
check "a mapping that goes away mid-read: partial, mapping-gone" jq -e '.vms[0] | .partial == true
	and .partial_reason == "mapping-gone" and .pages < .ram_pages' "$TEST_TMP/unmap.json"
check "and the VM lives on" kill -0 "$UNMAP_PID"
stop_pid "$UNMAP_PID"

# No permission: nobody may not read root's guests.
setpriv --reuid=65534 --regid=65534 --clear-groups "$VMHOST" share --pid "${PID[a]}" --json >"$TEST_TMP/perm.json" 2>"$TEST_TMP/perm.err"
rc=$?
check "no permission: exit 77 ($rc)" [ $rc -eq 77 ]
check "no permission: said so" grep -q "no permission" "$TEST_TMP/perm.err"

# A key others may read is refused.
chmod 644 "$KEY"
"$VMHOST" share --pid "${PID[a]}" --key-file "$KEY" >/dev/null 2>"$TEST_TMP/key.err"
rc=$?
check "a key file of mode 644 is refused (exit $rc)" [ $rc -eq 77 ]
check "with the fix" grep -q "chmod 600" "$TEST_TMP/key.err"
finish
