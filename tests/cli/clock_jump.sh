#!/bin/bash
# Wall-clock steps in a recording: the growth fixture's last three hours moved back one hour
# (overlapping the hour before, as after `date -s` an hour back) or forward one day. growth and
# report read them without an error; the leaking VM is still found and the steady one is not
# flagged. (The recorder's own side, no sample replaced, is tests/unit/test_store_faults.c.)
. "$VMHOST_TESTS/lib.sh"
T=1767225600000 # the fixture's first sample, ms
STEP_AT=$((T + 4 * 3600000))
"$VMHOST_BUILD/growth_fixture" "$TEST_TMP/base.db" || die "growth_fixture could not write the database"

# shift DB MS: moves every sample from STEP_AT on by MS (+7 ms: a step never lands on a sample).
shift_db() {
	cp "$TEST_TMP/base.db" "$1"
	sqlite3 "$1" "UPDATE samples SET t_ms = t_ms + $2 + 7 WHERE t_ms >= $STEP_AT;
		UPDATE vm_samples SET t_ms = t_ms + $2 + 7 WHERE t_ms >= $STEP_AT;"
}
state() { jq -r --arg n "$2" '.vms[] | select(.name == $n) | .state + " " + (.flagged | tostring)' "$1"; }
slope() { jq -r '.vms[] | select(.name == "leaky-db") | .overhead_growth_bytes_per_hour' "$1"; }

for step in back:-3600000 forward:86400000; do
	name=${step%%:*}
	shift_db "$TEST_TMP/$name.db" "${step#*:}"
	"$VMHOST" --json growth --db "$TEST_TMP/$name.db" >"$TEST_TMP/$name.json" 2>"$TEST_TMP/$name.err"
	check "clock $name: growth exits 0 with nothing on stderr" sh -c "[ $? = 0 ] && [ ! -s '$TEST_TMP/$name.err' ]"
	check "clock $name: leaky-db is growing and flagged" [ "$(state "$TEST_TMP/$name.json" leaky-db)" = "growing true" ]
	check "clock $name: steady-web is steady" [ "$(state "$TEST_TMP/$name.json" steady-web)" = "steady false" ]
	check "clock $name: leaky-db's slope is near its 25 MiB/hour ($(slope "$TEST_TMP/$name.json"))" \
		near "$(slope "$TEST_TMP/$name.json")" 26214400 25
	"$VMHOST" report --db "$TEST_TMP/$name.db" --out "$TEST_TMP/$name.html" >/dev/null 2>"$TEST_TMP/$name.rerr"
	check "clock $name: report writes its charts" sh -c "[ $? = 0 ] && grep -q '<svg' '$TEST_TMP/$name.html'"
done
finish
