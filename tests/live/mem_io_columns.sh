#!/bin/bash
# vmhost mem --io-columns on a live writer: a fake guest writing a file at 8 MB/s with O_DIRECT
# shows WRITE/S within 30% of that over --interval 1 (and IO WRITE growing), where a guest that
# writes nothing shows 0; the default table has no I/O columns.
. "$VMHOST_TESTS/lib.sh"
fake_guest iocol-writer -m 32M -fake-nomerge -fake-write 8000000 -fake-write-file "$TEST_TMP/disk.img"
W=$SPAWNED
fake_guest iocol-idle -m 32M -fake-nomerge
I=$SPAWNED
"$VMHOST" mem --io-columns --interval 1 --bytes >"$TEST_TMP/t.txt" || die "mem --io-columns failed"
head -1 "$TEST_TMP/t.txt" | grep -q 'WRITE/S' || die "no WRITE/S column: $(head -1 "$TEST_TMP/t.txt")"
check "the I/O columns come last: IO READ, IO WRITE, READ/S, WRITE/S" sh -c "head -1 '$TEST_TMP/t.txt' | grep -Eq 'IO READ +IO WRITE +READ/S +WRITE/S\$'"
# WRITE/S of a pid's row: its last field (names have no blanks here).
col() { awk -v pid="$1" '$1 == pid { print $NF }' "$TEST_TMP/t.txt"; }
wrate=$(col "$W")
irate=$(col "$I")
say "writer WRITE/S $wrate, idle $irate"
check "the writer's WRITE/S is its 8 MB/s within 30% ($wrate)" near "${wrate:-0}" 8000000 30
check "the idle guest's WRITE/S is 0 ($irate)" [ "$irate" = 0 ]
"$VMHOST" mem >"$TEST_TMP/plain.txt"
check "the default table has no I/O columns" sh -c "! grep -Eq 'IO WRITE|WRITE/S' '$TEST_TMP/plain.txt'"
finish
