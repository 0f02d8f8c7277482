# vmhost capacity on a frozen host tree (host-mixed: MemTotal 62.8 GiB, MemAvailable 19.1 GiB,
# QEMUs web1 and old): the contract's JSON, the sums worked by hand, --image, --overhead,
# --reserve, CSV and the human sentence, and the usage errors.
. "$VMHOST_TESTS/lib.sh"
FX=$VMHOST_FIXTURES/host-mixed
cap() { "$VMHOST" --proc-root "$FX/proc" --sys-root "$FX/sys" capacity "$@"; }

cap --size 1G --json >"$TEST_TMP/c.json" || die "capacity --json failed"
check "the contract's keys" jq -e 'has("size_bytes") and has("reserve_bytes") and has("overhead_bytes_per_vm") and
	has("fit_now") and has("fit_after_reclaim") and has("fit_with_sharing") and has("limited_by")' "$TEST_TMP/c.json"
# Room 20480000000 - 6743746150 (10% of 67437461504); overhead the median of 227328000 and 76800000.
check "fit_now: (MemAvailable - 10% of MemTotal) / (1 GiB + the QEMUs' median overhead) = 11" \
	jq -e '.fit_now == 11 and .reserve_bytes == 6743746150 and .overhead_bytes_per_vm == 152064000 and
	.overhead_vms == 2 and .limited_by == "memory"' "$TEST_TMP/c.json"
check "no guest reports in a tree: what reclaim gives is null, not 0, and so is fit_after_reclaim" \
	jq -e '.reclaimable_bytes == null and .fit_after_reclaim == null and .reclaim_unknown_vms == 2' "$TEST_TMP/c.json"
check "no --image: fit_with_sharing null, and why" jq -e '.fit_with_sharing == null and (.sharing_why | test("--image"))' "$TEST_TMP/c.json"
cap --size 1G --image web1 --json >"$TEST_TMP/i.json" || die "capacity --image failed"
check "--image web1: a guest like web1 costs web1's overhead (10 fit), sharing unknown under --proc-root" \
	jq -e '.fit_now == 10 and .overhead_bytes_per_vm == 227328000 and .overhead_vms == 1 and .image == "web1" and
	.fit_with_sharing == null and (.sharing_why | test("proc-root"))' "$TEST_TMP/i.json"
check "--image by pid is the same VM" sh -c "[ \"\$(\"\$0\" --proc-root '$FX/proc' --sys-root '$FX/sys' capacity --size 1G --image 1001 --json | jq .image)\" = '\"web1\"' ]" "$VMHOST"
check "--overhead and --reserve: (20480000000 - 0) / (1 GiB + 1 GiB) = 9" \
	[ "$(cap --size 1G --overhead 1G --reserve 0 --json | jq '[.fit_now, .overhead_vms, .reserve_bytes] | @csv')" = '"9,0,0"' ]
check "a reserve above MemAvailable: none fit, limited by the reserve" \
	[ "$(cap --size 1G --reserve 50 --json | jq -r '[.fit_now, .limited_by] | @csv')" = '0,"reserve"' ]
cap --size 1G >"$TEST_TMP/c.txt" || die "capacity failed"
check "the human sentence" grep -q '^room for 11 more 1.00 GiB guests now$' "$TEST_TMP/c.txt"
check "  ... and what it rests on" grep -q 'limited by memory: MemAvailable 19.1 GiB, less a reserve of 6.28 GiB (10% of MemTotal)' "$TEST_TMP/c.txt"
check "CSV: one record with the JSON's keys" sh -c "cap() { \"\$0\" --proc-root '$FX/proc' --sys-root '$FX/sys' --csv capacity --size 1G; }; [ \"\$(cap | wc -l)\" = 2 ] && cap | head -1 | grep -q '^size_bytes,fit_now,fit_after_reclaim,fit_with_sharing,limited_by,'" "$VMHOST"

cap >/dev/null 2>"$TEST_TMP/err"
check "no --size: a usage error (2)" [ $? = 2 ]
check "  ... that says so" grep -q -- '--size SIZE is needed' "$TEST_TMP/err"
cap --size 1G --image nosuch >/dev/null 2>"$TEST_TMP/err"
check "an --image no VM is: a usage error naming it" sh -c "[ $? = 2 ] && grep -q 'nosuch: no such VM' '$TEST_TMP/err'"
cap --size 1G --reserve 101 >/dev/null 2>&1
check "--reserve over 100: a usage error" [ $? = 2 ]
cap --size lots >/dev/null 2>&1
check "--size not a size: a usage error" [ $? = 2 ]
finish
