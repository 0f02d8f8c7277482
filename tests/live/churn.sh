# VMs that come and go: fake QEMU guests started every 20 ms, each killed after 0.1-0.5 s (about
# 20 alive at a time, pids reused by the kernel as they go), while `vmhost mem`, `vmhost serve`
# and `vmhost record` run, and `vmhost top --batch`. Nothing crashes or errs, and every figure
# belongs to the process it is shown for: each (pid, name) vmhost reports was a guest started
# with that name and pid.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
FAKE=$VMHOST_BUILD/fakeguest
SPAWNED_LOG=$TEST_TMP/spawned
: >"$SPAWNED_LOG"
bash "$VMHOST_TESTS/helpers/churn.sh" "$FAKE" "$SPAWNED_LOG" &
CHURN=$!
adopt "$CHURN"
sleep 1

serve_start "$TEST_TMP/serve.log" / --min-interval 0 || die "cannot start serve"
"$VMHOST" record --db "$TEST_TMP/c.db" --interval 0.2 --duration 4 --quiet 2>"$TEST_TMP/record.err" &
RECORD=$!
adopt "$RECORD"
"$VMHOST" top --batch --interval 0.2 --iterations 20 >"$TEST_TMP/top.out" 2>"$TEST_TMP/top.err" &
TOP=$!
adopt "$TOP"

mem_fail=0 seen=0 skipped=0 scrape_fail=0
for r in $(seq 30); do
	if "$VMHOST" mem --json >"$TEST_TMP/m$r.json" 2>>"$TEST_TMP/mem.err" && jq -e . "$TEST_TMP/m$r.json" >/dev/null; then
		jq -r '.vms[] | select(.name // "" | startswith("churn")) | "\(.pid) \(.name)"' "$TEST_TMP/m$r.json" >>"$TEST_TMP/reported"
		skipped=$((skipped + $(jq .skipped "$TEST_TMP/m$r.json")))
	else
		mem_fail=$((mem_fail + 1))
	fi
	code=$(curl -s -o "$TEST_TMP/s$r.txt" -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/metrics")
	if [ "$code" = 200 ]; then
		sed -n 's/^vmhost_vm_info{vm="\(churn[0-9]*\)",pid="\([0-9]*\)".*/\2 \1/p' "$TEST_TMP/s$r.txt" >>"$TEST_TMP/reported"
	else
		scrape_fail=$((scrape_fail + 1))
	fi
	sleep 0.1
done
wait "$RECORD"
record_rc=$?
wait "$TOP"
top_rc=$?
awk -F'\t' '$1 == "vm" && $4 ~ /^churn/ { print $2 " " $4 }' "$TEST_TMP/top.out" >>"$TEST_TMP/reported"
kill "$CHURN"
wait "$CHURN" 2>/dev/null
while read -r p name; do kill "$p" 2>/dev/null; done <"$SPAWNED_LOG"

started=$(wc -l <"$SPAWNED_LOG")
reports=$(wc -l <"$TEST_TMP/reported")
say "$started guests started; $reports (pid, name) reports checked; mem skipped $skipped vanished processes over 30 runs"
check "mem: 30 of 30 runs exit 0 with one JSON document" [ "$mem_fail" = 0 ]
check "mem: no error printed" [ ! -s "$TEST_TMP/mem.err" ]
check "serve: 30 of 30 scrapes answered" [ "$scrape_fail" = 0 ]
check "record: exit 0, no warning" sh -c "[ $record_rc = 0 ] && ! [ -s '$TEST_TMP/record.err' ]"
check "top --batch: exit 0, 20 frames, no error" \
	sh -c "[ $top_rc = 0 ] && [ \$(grep -c '^# vmhost top ' '$TEST_TMP/top.out') = 20 ] && ! [ -s '$TEST_TMP/top.err' ]"
check "record: the database is intact" [ "$(sqlite3 "$TEST_TMP/c.db" 'PRAGMA integrity_check')" = ok ]
sqlite3 "$TEST_TMP/c.db" "SELECT pid || ' ' || name FROM vms WHERE name LIKE 'churn%'" >>"$TEST_TMP/reported"
check "the churn was seen (guests reported while they lived)" [ "$reports" -gt 20 ]
sort -u "$TEST_TMP/reported" >"$TEST_TMP/reported.u"
sort -u "$SPAWNED_LOG" >"$TEST_TMP/spawned.u"
check "every (pid, name) reported by mem, serve, record and top was a guest started so" \
	sh -c "[ -z \"\$(comm -23 '$TEST_TMP/reported.u' '$TEST_TMP/spawned.u')\" ]"
comm -23 "$TEST_TMP/reported.u" "$TEST_TMP/spawned.u" | head -5
check "serve survived" kill -0 "$SERVER"
finish
