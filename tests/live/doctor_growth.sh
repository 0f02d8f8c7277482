#!/bin/bash
# vmhost doctor --db on a real recording: one fake guest grows its overhead steadily and one stays
# flat while `vmhost record` samples them for 15 s; doctor --db (warm-up 0, as these guests are
# seconds old) gives vm-overhead-growing for the grower alone, with its slope and since when; with
# growth's default warm-up (600 s) the young grower is not judged yet.
. "$VMHOST_TESTS/lib.sh"
DB=$TEST_TMP/vmhost.db

fake_guest doctor-grower -m 64M -fake-grow 4000000
GROWER=$SPAWNED
fake_guest doctor-flat -m 64M
FLAT=$SPAWNED
"$VMHOST" record --db "$DB" --interval 0.5 --duration 15 >/dev/null 2>"$TEST_TMP/record.err" || die "record failed: $(cat "$TEST_TMP/record.err")"

t0=$(date +%s)
"$VMHOST" doctor --db "$DB" --warmup 0 --interval 0 --json >"$TEST_TMP/d.json"
check "doctor --db exits 0" [ $? -eq 0 ]
grow() { jq -c --argjson p "$1" '[.findings[] | select(.id == "vm-overhead-growing" and .pid == $p)]' "$2"; }
say "grower: $(grow "$GROWER" "$TEST_TMP/d.json")"
check "the grower is vm-overhead-growing, a warning" jq -e --argjson p "$GROWER" '[.findings[] | select(.id == "vm-overhead-growing" and .pid == $p)] | length == 1 and .[0].vm == "doctor-grower" and .[0].severity == "warning"' "$TEST_TMP/d.json"
slope=$(jq --argjson p "$GROWER" '.findings[] | select(.id == "vm-overhead-growing" and .pid == $p) | .evidence.overhead_growth_bytes_per_hour' "$TEST_TMP/d.json")
# 4 MB/s = 14.4 GB/hour; allocation runs in steps, so within 25%.
check "its slope is the grower's 4 MB/s ($slope B/h)" near "${slope:-0}" 14400000000 25
since=$(jq --argjson p "$GROWER" '.findings[] | select(.id == "vm-overhead-growing" and .pid == $p) | .evidence.since_seconds' "$TEST_TMP/d.json")
check "since: within the recording ($since)" awk -v s="${since:-0}" -v t="$t0" 'BEGIN { exit !(s > t - 60 && s <= t) }'
check "the flat guest is not" [ "$(grow "$FLAT" "$TEST_TMP/d.json")" = "[]" ]
"$VMHOST" doctor --db "$DB" --warmup 0 --interval 0 --fail-on warning >"$TEST_TMP/d.txt"
check "--fail-on warning: exit 1" [ $? -eq 1 ]
check "human: the grower's line with its slope" grep -Eq "^warning  vm-overhead-growing  doctor-grower \(pid $GROWER\): memory beyond guest RAM grows [0-9.]+ MiB per hour" "$TEST_TMP/d.txt"
"$VMHOST" doctor --db "$DB" --interval 0 --json >"$TEST_TMP/default.json"
check "growth's default warm-up: the seconds-old grower is not judged" [ "$(grow "$GROWER" "$TEST_TMP/default.json")" = "[]" ]
finish
