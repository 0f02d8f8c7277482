#!/bin/bash
# The database failing under a running recorder (vmhost record, vmhost serve --db), beyond the
# full disk of record_reliability.sh: its file system goes read-only (ext4 errors=remount-ro
# after an error), its file is deleted, another program holds SQLite's lock. Each gives one
# clear line, and what was recorded before stays readable. Decisions: docs/record.md "Faults".
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
H=$VMHOST_FIXTURES/host-mixed
V="$VMHOST --proc-root $H/proc --sys-root $H/sys"
MNT=$TEST_TMP/ext4
LOOPDEV=""
on_cleanup 'mountpoint -q "$MNT" && umount "$MNT"'

count() { sqlite3 "file:$1?mode=ro" 'SELECT count(*) FROM samples'; }
# wait_line FILE REGEX: up to 15 s for the line.
wait_line() {
	local i
	for i in $(seq 150); do grep -Eq "$2" "$1" && return 0; sleep 0.1; done
	return 1
}
# wait_samples DB N: up to 10 s for N samples.
wait_samples() {
	local i
	for i in $(seq 100); do [ "$(count "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0; sleep 0.1; done
	return 1
}

# --- read-only after start: a real ext4 on a loop device remounts itself read-only on an error
# (/sys/fs/ext4/DEV/trigger_fs_error); a plain "mount -o remount,ro" is refused while a file is
# open for writing, so that is not how a recorder meets it.
mkdir -p "$MNT"
truncate -s 16M "$TEST_TMP/ext4.img"
if mkfs.ext4 -q -F "$TEST_TMP/ext4.img" && mount -o loop,errors=remount-ro "$TEST_TMP/ext4.img" "$MNT"; then
	LOOPDEV=$(basename "$(findmnt -n -o SOURCE "$MNT")")
	DB=$MNT/ro.db
	$V record --db "$DB" --interval 0.1 --duration 30 --quiet 2>"$TEST_TMP/ro.err" &
	REC=$!
	adopt "$REC"
	wait_samples "$DB" 5 || fail "read-only: the recorder did not start"
	echo 1 >"/sys/fs/ext4/$LOOPDEV/trigger_fs_error"
	findmnt -n -o OPTIONS "$MNT" | grep -Eq '(^|,)(ro|emergency_ro)(,|$)' || fail "the file system did not go read-only"
	wait $REC
	rc=$?
	check "read-only after start: record stops with exit 1 (not 30 s later)" [ $rc -eq 1 ]
	check "read-only after start: one line saying the database is read-only" \
		sh -c "[ \$(wc -l <'$TEST_TMP/ro.err') = 1 ] && grep -q 'writing a sample: .*ro.db: the database is read-only (the samples before it are kept)' '$TEST_TMP/ro.err'"
	kept=$(count "$DB")
	check "read-only after start: the samples before it are readable ($kept)" ge "${kept:-0}" 5
	$VMHOST growth --db "$DB" --json >"$TEST_TMP/ro.json"
	check "read-only after start: growth reads them" jq -e '.vms | length == 3' "$TEST_TMP/ro.json" >/dev/null
	umount "$MNT"
else
	fail "cannot make and mount an ext4 image (needs root and a loop device)"
fi

# --- deleted under the recorder: noticed before the next sample, a new database at the path.
DB=$TEST_TMP/deleted.db
$V record --db "$DB" --interval 0.1 --quiet 2>"$TEST_TMP/del.err" &
REC=$!
adopt "$REC"
wait_samples "$DB" 5 || fail "deleted: the recorder did not start"
rm -f "$DB"
# Stopped once five samples are in the new database, however long that took (it was a --duration
# of 3 s, which a slow start could leave short of five).
wait_line "$TEST_TMP/del.err" 'the database file was deleted' && wait_samples "$DB" 5 || fail "deleted: no new database"
kill -TERM "$REC"
wait $REC
rc=$?
check "deleted: record goes on and ends with exit 0" [ $rc -eq 0 ]
check "deleted: no WAL or shm file left behind at the path" sh -c "! ls '$DB'-* 2>/dev/null | grep -q ."
check "deleted: one warning that a new database was started" \
	sh -c "[ \$(wc -l <'$TEST_TMP/del.err') = 1 ] && grep -q 'the database file was deleted; recording into a new one at that path' '$TEST_TMP/del.err'"
check "deleted: the new database exists and is whole" [ "$(sqlite3 "$DB" 'PRAGMA integrity_check' 2>/dev/null)" = ok ]
n=$(count "$DB")
check "deleted: the samples after the deletion are in it ($n)" ge "${n:-0}" 5

# --- locked by another writer: a sqlite3 shell holding BEGIN EXCLUSIVE until the recorder has met
# it (its warning), not for a fixed 4 s that a slow recorder could sleep through. The recorder
# waits 0.5 s for each sample, drops it with one warning, records again once the lock is gone, exits 1
# at the end (stopped once it recorded again) saying how many it dropped, and nothing recorded
# before is lost.
DB=$TEST_TMP/locked.db
$V record --db "$DB" --interval 0.2 --quiet 2>"$TEST_TMP/lock.err" &
REC=$!
adopt "$REC"
wait_samples "$DB" 5 || fail "locked: the recorder did not start"
before=$(count "$DB")
{ echo '.timeout 10000'; echo 'BEGIN EXCLUSIVE;'; wait_line "$TEST_TMP/lock.err" 'locked by another program'; echo 'ROLLBACK;'; } | sqlite3 "$DB"
wait_line "$TEST_TMP/lock.err" 'recording again' && wait_samples "$DB" $((before + 2)) || fail "locked: no samples after the lock"
kill -TERM "$REC"
wait $REC
rc=$?
check "locked: record does not crash or stop; exit 1 at the end for the dropped samples" [ $rc -eq 1 ]
check "locked: one warning while locked" grep -q 'the database is locked by another program (a sqlite3 shell in a transaction?): samples are dropped until it is released; the recorded ones are kept' "$TEST_TMP/lock.err"
check "locked: it says when it records again" grep -q 'locked.db: recording again' "$TEST_TMP/lock.err"
check "locked: the end line counts the dropped samples" grep -Eq 'writing samples: .*locked.db: [0-9]+ samples? dropped: the database is locked by another program' "$TEST_TMP/lock.err"
after=$(count "$DB")
check "locked: the samples before are kept and more were recorded after ($before -> $after)" sh -c "[ $after -gt $before ]"
check "locked: integrity ok" [ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ]

# --- the same two under vmhost serve --db: scrapes go on, recording follows the file.
DB=$TEST_TMP/serve.db
LOG=$TEST_TMP/serve.log
serve_start "$LOG" "$H" --db "$DB" --db-interval 1 --min-interval 0 || die "cannot start serve"
wait_samples "$DB" 2 || fail "serve: no samples recorded"
# The lock taken (the shell says so), scrapes while serve meets it: 5 at least, until its warning.
{ echo '.timeout 10000'; echo 'BEGIN EXCLUSIVE;'; echo "SELECT 'locked';"; for i in $(seq 600); do [ -e "$TEST_TMP/scraped" ] && break; sleep 0.1; done; echo 'ROLLBACK;'; } |
	sqlite3 "$DB" >"$TEST_TMP/locker.out" &
LOCKER=$!
wait_line "$TEST_TMP/locker.out" locked || fail "serve: the sqlite3 shell did not take the lock"
ok=1 i=0
while [ $i -lt 5 ] || { ! grep -q 'serve.db: the database is locked' "$LOG" && [ $i -lt 100 ]; }; do
	curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$PORT/metrics" || ok=0
	i=$((i + 1))
	sleep 0.3
done
echo done >"$TEST_TMP/scraped"
check "serve, locked: $i scrapes while the database is locked, each answered within 2 s" [ $ok = 1 ]
wait $LOCKER
check "serve, locked: one warning" wait_line "$LOG" 'serve.db: the database is locked by another program.*samples are dropped until it is released'
check "serve, locked: recording again after" wait_line "$LOG" 'serve.db: recording again'
rm -f "$DB"
check "serve, deleted: a warning and a new database" wait_line "$LOG" 'serve.db: the database file was deleted; recording into a new one'
wait_samples "$DB" 1
check "serve, deleted: the new database gets samples" ge "$(count "$DB" 2>/dev/null || echo 0)" 1
check "serve, deleted: scrapes still answered" curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$PORT/metrics"
stop_pid "$SERVER"
wait "$SERVER" 2>/dev/null
finish
