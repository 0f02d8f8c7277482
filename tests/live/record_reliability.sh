#!/bin/bash
# The recorder under abuse: a second recorder on the same database is refused; kill -9 at
# random moments never corrupts it; a read-only database and a full disk give a clear error and
# keep the data already recorded.
. "$VMHOST_TESTS/lib.sh"
DB=$TEST_TMP/vmhost.db
MOUNTS=""
on_cleanup 'for m in $MOUNTS; do umount "$m" 2>/dev/null; done'

fake_guest_start rel1 -m 16M
fake_guest_start rel2 -m 16M -fake-grow 1000000
fake_guest_ready rel1 rel2

count() { sqlite3 "$1" 'SELECT count(*) FROM samples'; }
# Every VM row belongs to a whole sample (one transaction per sample).
orphans() { sqlite3 "$1" 'SELECT count(*) FROM vm_samples WHERE t_ms NOT IN (SELECT t_ms FROM samples)'; }

# --- two recorders ---
"$VMHOST" record --db "$DB" --interval 0.2 --quiet &
REC=$!
adopt "$REC"
for i in $(seq 50); do [ -s "$DB" ] && [ "$(count "$DB" 2>/dev/null || echo 0)" -gt 0 ] && break; sleep 0.1; done
"$VMHOST" record --db "$DB" --interval 0.2 --duration 1 2>"$TEST_TMP/second.err"
check "a second recorder is refused (exit 1)" [ $? -eq 1 ]
check "... with a clear message" grep -q "another recorder is writing to this database" "$TEST_TMP/second.err"
kill -0 $REC 2>/dev/null
check "the first recorder keeps running" [ $? -eq 0 ]
kill -TERM $REC
wait $REC
check "the first recorder stops cleanly" [ $? -eq 0 ]

# --- kill -9 at random moments ---
last=$(count "$DB")
ok=1
for i in $(seq 10); do
	"$VMHOST" record --db "$DB" --interval 0.03 --quiet &
	REC=$!
	sleep "0.$((RANDOM % 6 + 1))$((RANDOM % 10))"
	kill -KILL $REC
	wait $REC 2>/dev/null
	ic=$(sqlite3 "$DB" 'PRAGMA integrity_check')
	now=$(count "$DB")
	if [ "$ic" != ok ] || [ "$now" -lt "$last" ] || [ "$(orphans "$DB")" != 0 ]; then
		fail "after kill -9 #$i: integrity '$ic', samples $last -> $now, orphans $(orphans "$DB")"
		ok=0
	fi
	last=$now
done
check "10 x kill -9: integrity ok, no sample lost or half-written ($last samples)" [ $ok = 1 ]
"$VMHOST" record --db "$DB" --interval 0.1 --duration 0.3 --quiet
check "recording resumes after kill -9" [ $? -eq 0 ]

# --- read-only database (a read-only mount: root ignores file modes) ---
RO=$TEST_TMP/ro
mkdir -p "$RO"
if mount -t tmpfs -o size=8m tmpfs "$RO"; then
	MOUNTS="$MOUNTS $RO"
	cp "$DB" "$RO/vmhost.db"
	before=$(count "$RO/vmhost.db")
	mount -o remount,ro "$RO"
	"$VMHOST" record --db "$RO/vmhost.db" --interval 0.1 --duration 0.5 2>"$TEST_TMP/ro.err"
	check "read-only: exit 1" [ $? -eq 1 ]
	check "read-only: clear message" grep -q "opening the database: .*read-only" "$TEST_TMP/ro.err"
	"$VMHOST" growth --db "$RO/vmhost.db" --json >"$TEST_TMP/ro.json"
	check "read-only: growth still reads it" jq -e '.vms | length > 0' "$TEST_TMP/ro.json"
	check "read-only: data intact" [ "$(sqlite3 "file:$RO/vmhost.db?immutable=1" 'SELECT count(*) FROM samples')" = "$before" ]
else
	fail "cannot mount a tmpfs for the read-only case"
fi

# --- full disk: a 192 KiB tmpfs fills within seconds ---
FULL=$TEST_TMP/full
mkdir -p "$FULL"
if mount -t tmpfs -o size=192k tmpfs "$FULL"; then
	MOUNTS="$MOUNTS $FULL"
	"$VMHOST" record --db "$FULL/vmhost.db" --interval 0.02 --duration 6 >"$TEST_TMP/full.out" 2>"$TEST_TMP/full.err"
	rc=$?
	check "full disk: exit 1 at the end" [ $rc -eq 1 ]
	check "full disk: clear message" grep -q "disk full" "$TEST_TMP/full.err"
	check "full disk: the recorder went on and said what it dropped" grep -q "samples dropped" "$TEST_TMP/full.err"
	cp "$FULL"/vmhost.db* "$TEST_TMP/" 2>/dev/null
	mv "$TEST_TMP/vmhost.db" "$TEST_TMP/full-copy.db" 2>/dev/null
	for x in wal shm; do [ -f "$TEST_TMP/vmhost.db-$x" ] && mv "$TEST_TMP/vmhost.db-$x" "$TEST_TMP/full-copy.db-$x"; done
	check "full disk: integrity ok" [ "$(sqlite3 "$TEST_TMP/full-copy.db" 'PRAGMA integrity_check')" = ok ]
	kept=$(count "$TEST_TMP/full-copy.db")
	check "full disk: the samples that fit are kept ($kept)" ge "$kept" 5
	check "full disk: no half-written sample" [ "$(orphans "$TEST_TMP/full-copy.db")" = 0 ]
else
	fail "cannot mount a tmpfs for the full-disk case"
fi
finish
