# vmhost top on a frozen host tree: --batch agrees with `vmhost mem` (the same model), helpers
# under their VM, the JSON form, top under a pipe, and the command line's errors.
. "$VMHOST_TESTS/lib.sh"
FX=$VMHOST_FIXTURES/host-mixed
roots="--proc-root $FX/proc --sys-root $FX/sys"

"$VMHOST" $roots top --batch --iterations 2 --interval 0.1 >"$TEST_TMP/b" 2>"$TEST_TMP/b.err"
check "batch: exit 0, no error" sh -c "[ $? = 0 ] && ! [ -s '$TEST_TMP/b.err' ]"
check "batch: two frames" [ "$(grep -c '^# vmhost top time_unix=[0-9.]* interval_seconds=0.100 ' "$TEST_TMP/b")" = 2 ]
"$VMHOST" $roots mem --json >"$TEST_TMP/m.json"
# each VM's figures as mem has them, in top's batch columns (rss pss ksm overhead cgroup)
jq -r '.vms[] | [.pid, .name, .rss_bytes, .pss_bytes, .ksm_saved_bytes, .overhead_bytes, (.cgroup_memory_bytes // "n/a")] | @tsv' \
	"$TEST_TMP/m.json" | sort >"$TEST_TMP/want"
awk -F'\t' '/^$/ { exit } $1 == "vm" { print $2 "\t" $4 "\t" $7 "\t" $8 "\t" $9 "\t" $10 "\t" $12 }' "$TEST_TMP/b" | sort >"$TEST_TMP/got"
check "batch: every VM's RSS, PSS, KSM saved, overhead and cgroup memory are mem's" diff -u "$TEST_TMP/want" "$TEST_TMP/got"
check "batch: web1's pressure (memory 1.5, cpu 12.0 some avg10)" \
	test "$(awk -F'\t' '$1 == "vm" && $4 == "web1" { print $13, $14; exit }' "$TEST_TMP/b")" = "1.5 12.0"
check "batch: swtpm is a helper right under web1" \
	test "$(awk -F'\t' '$1 == "vm" && $4 == "web1" { getline; print $1, $2, $3, $4; exit }' "$TEST_TMP/b")" = "helper 1002 1001 swtpm"
check "batch: the vanished process is counted" grep -q ' skipped=1$' "$TEST_TMP/b"
check "batch: --sort rss puts db first" \
	test "$("$VMHOST" $roots top --batch --iterations 1 --interval 0.1 --sort rss | awk -F'\t' '$1 == "vm" { print $4; exit }')" = db
check "batch: --sort name --reverse: web1 first" \
	test "$("$VMHOST" $roots top --batch --iterations 1 --interval 0.1 --sort name --reverse | awk -F'\t' '$1 == "vm" { print $4; exit }')" = web1
"$VMHOST" $roots --json top --batch --iterations 2 --interval 0.1 >"$TEST_TMP/j"
check "batch --json: two documents, one a line, web1 with its helper" \
	test "$(jq -c '[.vms[] | select(.name == "web1") | .helpers[0].name]' "$TEST_TMP/j" | tr -d '\n')" = '["swtpm"]["swtpm"]'
check "batch --json: bytes are whole numbers" \
	test "$(jq '.vms[] | select(.name == "db") | .rss_bytes' "$TEST_TMP/j" | head -1)" = "$(jq '.vms[] | select(.name == "db") | .rss_bytes' "$TEST_TMP/m.json")"
"$VMHOST" $roots top --iterations 1 --interval 0.1 | cat >"$TEST_TMP/pipe"
check "under a pipe, top prints batch frames" grep -q '^kind	pid	vm_pid	name' "$TEST_TMP/pipe"

"$VMHOST" top --help >"$TEST_TMP/help"
check "help: the keys and the batch format" sh -c "grep -q '^keys: q quit' '$TEST_TMP/help' && grep -q 'batch frame' '$TEST_TMP/help'"
for bad in "--sort memory" "--interval 0" "--iterations 0" "--bogus" "extra"; do
	"$VMHOST" top $bad >/dev/null 2>"$TEST_TMP/err"
	check "usage error: top $bad exits 2" sh -c "[ $? = 2 ] && grep -q '^vmhost: top: usage: ' '$TEST_TMP/err'"
done
"$VMHOST" --csv top >/dev/null 2>&1
check "--csv is refused" [ $? = 2 ]
"$VMHOST" --json top >"$TEST_TMP/e" 2>/dev/null
check "--json without --batch: exit 2, an error document" sh -c "[ $? = 2 ] && jq -e .error '$TEST_TMP/e' >/dev/null"
"$VMHOST" --proc-root "$TEST_TMP/nothing" top --batch --iterations 1 >/dev/null 2>"$TEST_TMP/err"
check "no proc tree: exit 1, says what failed" sh -c "[ $? = 1 ] && grep -q 'vmhost: top: reading host memory' '$TEST_TMP/err'"
finish
