#!/bin/bash
# vmhost serve --db: records while serving (with and without scrapes), one writer per database,
# and what it wrote is read back by sqlite3, vmhost growth and vmhost report. Runs on a copy of
# the Intel exits fixture so that KVM counters are recorded too.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
cp -a "$VMHOST_FIXTURES/exits-intel" "$TEST_TMP/host" && cp "$VMHOST_FIXTURES/serve/proc/meminfo" "$TEST_TMP/host/proc/" ||
	die "cannot copy the fixture"
V="$VMHOST --proc-root $TEST_TMP/host/proc --sys-root $TEST_TMP/host/sys"
DB=$TEST_TMP/serve.db

serve_start "$TEST_TMP/serve.log" "$TEST_TMP/host" --db "$DB" --db-interval 1 || die "cannot start"
# Scrapes for a while, then none: recording goes on without them.
for i in $(seq 6); do curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null || fail "scrape $i"; sleep 0.3; done
LAST_SCRAPE_MS=$(date +%s%3N)
sleep 2.5

# A second writer is refused in one line while the server records.
$V serve --listen 127.0.0.1:0 --db "$DB" >/dev/null 2>"$TEST_TMP/second.err" </dev/null
rc=$?
check "a second serve --db on the same file is refused" sh -c "[ $rc = 1 ] && [ \$(wc -l <'$TEST_TMP/second.err') = 1 ] &&
	grep -q 'another recorder is writing' '$TEST_TMP/second.err'"
$V record --db "$DB" --duration 1 >/dev/null 2>"$TEST_TMP/record.err" </dev/null
rc=$?
check "vmhost record on the serving database is refused" sh -c "[ $rc = 1 ] && grep -q 'another recorder' '$TEST_TMP/record.err'"
check "growth reads the database while the server writes it" sh -c "$VMHOST growth --db '$DB' --json | jq -e '.vms | length == 4' >/dev/null"

stop_pid "$SERVER"
wait "$SERVER" 2>/dev/null
check "the server says how many samples it recorded" grep -Eq 'serve: [0-9]+ samples recorded to' "$TEST_TMP/serve.log"
N=$(sed -n 's/.*serve: \([0-9]*\) samples recorded.*/\1/p' "$TEST_TMP/serve.log")
check "several samples were recorded" sh -c "[ ${N:-0} -ge 3 ]"
check "recording went on after the last scrape" sh -c "[ \$(sqlite3 '$DB' 'select max(t_ms) from samples') -gt $((LAST_SCRAPE_MS + 1000)) ]"
check "the samples table holds them" sh -c "[ \$(sqlite3 '$DB' 'select count(*) from samples') = '$N' ]"
check "every VM has a row per sample (pid 4242 too: a KVM user of no known VMM)" sh -c "[ \$(sqlite3 '$DB' 'select count(*) from vm_samples') = $((N * 4)) ]"
check "the VMs are named" sh -c "[ \"\$(sqlite3 '$DB' 'select coalesce(name, \"-\") from vms order by pid' | tr '\n' ' ')\" = 'web1 - db1 build ' ]"
check "KVM counters were recorded" sh -c "[ \$(sqlite3 '$DB' 'select count(*) from kvm_samples') -gt 0 ]"
check "growth --json lists the VMs" sh -c "$VMHOST growth --db '$DB' --json | jq -e '[.vms[].name] == [\"web1\",null,\"db1\",\"build\"]' >/dev/null"
check "report writes an HTML file with charts" sh -c "$VMHOST report --db '$DB' --out '$TEST_TMP/r.html' >/dev/null &&
	grep -q '<svg' '$TEST_TMP/r.html'"
finish
