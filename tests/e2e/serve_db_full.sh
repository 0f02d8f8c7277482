#!/bin/bash
# vmhost serve --db when the disk fills up under it: the server keeps answering scrapes with
# fresh samples, warns once that samples are dropped, says "recording again" when there is room,
# exits 1 at SIGTERM with what it recorded and dropped, and the database stays whole.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
FULL=$TEST_TMP/full
mkdir -p "$FULL"
mount -t tmpfs -o size=2m tmpfs "$FULL" || die "cannot mount a tmpfs for the full disk (needs root)"
# After the server (the cleanup stops it first: it holds the database open), before the rest.
on_cleanup 'umount "$FULL"'
DB=$FULL/vmhost.db
LOG=$TEST_TMP/serve.log

serve_start "$LOG" "$VMHOST_FIXTURES/serve" --db "$DB" --db-interval 1 --min-interval 0 || die "cannot start"
snapshots() { curl -sf "http://127.0.0.1:$PORT/metrics" | awk '$1 == "vmhost_snapshots_total" { print $2 }'; }
# wait_log REGEX: up to 10 s for the server to say it.
wait_log() {
	local i
	for i in $(seq 100); do grep -Eq "$1" "$LOG" && return 0; sleep 0.1; done
	return 1
}
sleep 1.5
# Fill what is left of the file system (dd stops at ENOSPC).
dd if=/dev/zero of="$FULL/filler" bs=64k 2>/dev/null
check "a full disk: one warning that samples are dropped" wait_log 'disk full.*samples are dropped until there is room again'
a=$(snapshots)
sleep 1.2
b=$(snapshots)
check "while the disk is full, scrapes get fresh samples ($a, then $b)" sh -c "[ -n '$a' ] && [ -n '$b' ] && [ '$b' -gt '$a' ]"
sleep 1.5
check "the warning is said once per episode" [ "$(grep -c 'samples are dropped' "$LOG")" = 1 ]
rm -f "$FULL/filler"
check "room again: 'recording again'" wait_log 'recording again'
stop_pid "$SERVER"
wait "$SERVER" 2>/dev/null
check "exit 1 at SIGTERM with what was recorded and dropped" \
	grep -Eq 'serve: recording: .*: [0-9]+ samples? recorded, [1-9][0-9]* dropped: disk full' "$LOG"
check "the database is whole" [ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ]
check "no VM row without its sample" \
	[ "$(sqlite3 "$DB" 'SELECT count(*) FROM vm_samples WHERE t_ms NOT IN (SELECT t_ms FROM samples)')" = 0 ]
check "samples from before and after the full disk are kept" sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM samples') -ge 2 ]"
finish
