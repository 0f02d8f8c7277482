#!/bin/bash
# Done-when: record while one fake guest grows its overhead steadily and two stay flat (plus a
# real, paused QEMU guest); `vmhost growth --json` flags exactly the grower. Also: SIGTERM stops
# the recorder cleanly, and the human and CSV forms agree.
. "$VMHOST_TESTS/lib.sh"
DB=$TEST_TMP/vmhost.db

# start_guest NAME ARGS...: a fake QEMU guest; waits until its RAM is filled.
start_guest() {
	local name=$1
	shift
	fake_guest "$name" "$@"
}

start_guest grower -m 64M -fake-grow 4000000
GROWER=$SPAWNED
start_guest flat1 -m 64M
FLAT1=$SPAWNED
start_guest flat2 -m 64M
FLAT2=$SPAWNED
QEMU_PID=""
if command -v qemu-system-x86_64 >/dev/null; then
	spawn qemu-system-x86_64 -S -m 64M -display none -nodefaults -name qtest
	QEMU_PID=$SPAWNED
else
	fail "qemu-system-x86_64 is not installed (scripts/deps/test/qemu.txt)"
fi
# QEMU taken for a guest (it lists it, named) before the recording starts, not 0.5 s after it did
[ -z "$QEMU_PID" ] || wait_for 30 eval '"$VMHOST" mem --json --pid "$QEMU_PID" | jq -e --argjson p "$QEMU_PID" "any(.vms[]; .pid == \$p and .name == \"qtest\")" >/dev/null'

# 40 samples (20 s at 0.5 s when each is quick), however long they take: the recorder is stopped
# once they are in (TERM ends it as --duration does), 120 s at most.
samples() { [ "$(sqlite3 "$DB" 'SELECT count(*) FROM samples' 2>/dev/null || echo 0)" -ge "$1" ] 2>/dev/null; }
"$VMHOST" record --db "$DB" --interval 0.5 >"$TEST_TMP/record.out" 2>"$TEST_TMP/record.err" &
REC=$!
adopt "$REC"
wait_for 120 samples 40 || fail "no 40 samples in 120 s"
kill -TERM "$REC"
wait "$REC"
check "record exits 0" [ $? -eq 0 ]
check "record says how many samples it took" grep -Eq "^recorded [0-9]+ samples" "$TEST_TMP/record.out"
check "integrity_check ok" [ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ]

"$VMHOST" growth --db "$DB" --json --warmup 0 >"$TEST_TMP/growth.json"
check "growth --json exits 0" [ $? -eq 0 ]
flagged() { jq -r --argjson p "$1" '.vms[] | select(.pid == $p) | .flagged' "$TEST_TMP/growth.json"; }
check "the grower is flagged" [ "$(flagged "$GROWER")" = true ]
check "flat1 is not flagged" [ "$(flagged "$FLAT1")" = false ]
check "flat2 is not flagged" [ "$(flagged "$FLAT2")" = false ]
mine="[$GROWER,$FLAT1,$FLAT2${QEMU_PID:+,$QEMU_PID}]"
check "exactly one of our VMs flagged" \
	[ "$(jq --argjson m "$mine" '[.vms[] | select(.pid as $p | $m | index($p)) | select(.flagged)] | length' "$TEST_TMP/growth.json")" = 1 ]
slope=$(jq --argjson p "$GROWER" '.vms[] | select(.pid == $p) | .overhead_growth_bytes_per_hour' "$TEST_TMP/growth.json")
# 4 MB/s = 14.4 GB/hour; the sampled slope is within 25% (allocation runs in steps).
check "grower slope near 4 MB/s ($slope B/h)" near "$slope" 14400000000 25
check "grower has its samples" ge "$(jq --argjson p "$GROWER" '.vms[] | select(.pid == $p) | .samples' "$TEST_TMP/growth.json")" 30
check "contract keys present" jq -e '.vms[0] | has("pid") and has("name") and has("samples") and has("overhead_growth_bytes_per_hour") and has("flagged")' "$TEST_TMP/growth.json"

if [ -n "$QEMU_PID" ]; then
	rows=$(sqlite3 "$DB" "SELECT count(*) FROM vm_samples JOIN vms ON vms.id = vm_id WHERE vms.pid = $QEMU_PID AND vms.name = 'qtest'")
	check "the real QEMU guest is recorded ($rows samples)" ge "$rows" 35
	check "its guest RAM is 64 MiB" [ "$(sqlite3 "$DB" "SELECT guest_ram_bytes FROM vms WHERE pid = $QEMU_PID")" = 67108864 ]
	check "paused QEMU (RAM untouched) is in warm-up, not flagged" \
		[ "$(jq -r --argjson p "$QEMU_PID" '.vms[] | select(.pid == $p) | "\(.state) \(.flagged)"' "$TEST_TMP/growth.json")" = "warm-up false" ]
fi
check "one series per VM" [ "$(sqlite3 "$DB" "SELECT count(*) FROM vms WHERE pid IN ($GROWER, $FLAT1, $FLAT2)")" = 3 ]

"$VMHOST" growth --db "$DB" --warmup 0 >"$TEST_TMP/growth.txt"
check "human table marks the grower" grep -Eq "^ *$GROWER +grower +growing" "$TEST_TMP/growth.txt"
"$VMHOST" --csv growth --db "$DB" --warmup 0 >"$TEST_TMP/growth.csv"
check "csv has the contract column" grep -q "overhead_growth_bytes_per_hour" "$TEST_TMP/growth.csv"
# Default warm-up (600 s): these VMs are all younger than that, so nobody is judged yet.
"$VMHOST" growth --db "$DB" --json >"$TEST_TMP/growth-default.json"
check "default warm-up: young VMs are not flagged" \
	[ "$(jq --argjson p "$GROWER" '.vms[] | select(.pid == $p) | .flagged' "$TEST_TMP/growth-default.json")" = false ]

# Clean stop on SIGTERM: exit 0, the summary, and a whole database.
"$VMHOST" record --db "$DB" --interval 0.2 >"$TEST_TMP/rec2.out" 2>&1 &
REC=$!
adopt "$REC"
wait_for 60 samples $(($(sqlite3 "$DB" 'SELECT count(*) FROM samples') + 2))
before=$(sqlite3 "$DB" 'SELECT count(*) FROM samples')
kill -TERM $REC
wait $REC
check "SIGTERM: exit 0" [ $? -eq 0 ]
check "SIGTERM: summary printed" grep -q "recorded" "$TEST_TMP/rec2.out"
check "SIGTERM: samples kept" ge "$(sqlite3 "$DB" 'SELECT count(*) FROM samples')" "$before"
check "SIGTERM: integrity ok" [ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ]
finish
