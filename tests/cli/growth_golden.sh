#!/bin/bash
# vmhost growth through the binary on a database of known series (tests/helpers/growth_fixture.c
# writes it with the store's own writer: a steady VM, a growing one, one in warm-up, one with too
# few samples, one before the window): the whole output against golden files in every form.
. "$VMHOST_TESTS/lib.sh"
FX=$VMHOST_FIXTURES/growth
DB=$TEST_TMP/vmhost.db
"$VMHOST_BUILD/growth_fixture" "$DB" || die "growth_fixture could not write $DB"

"$VMHOST" growth --db "$DB" >"$TEST_TMP/growth.txt"
check "growth exits 0" [ $? -eq 0 ]
check "growth matches the golden file" diff -u "$FX/expected-growth.txt" "$TEST_TMP/growth.txt"
"$VMHOST" --json growth --db "$DB" >"$TEST_TMP/raw.json"
check "growth --json is one JSON document" jq -e . "$TEST_TMP/raw.json" >/dev/null
jq -S . "$TEST_TMP/raw.json" >"$TEST_TMP/growth.json"
check "growth --json matches the golden file" diff -u "$FX/expected-growth.json" "$TEST_TMP/growth.json"
"$VMHOST" --csv growth --db "$DB" >"$TEST_TMP/growth.csv"
check "growth --csv matches the golden file" diff -u "$FX/expected-growth.csv" "$TEST_TMP/growth.csv"

# What a user reads off it, whatever the golden files say.
J=$TEST_TMP/growth.json
state() { jq -r --arg n "$1" '.vms[] | select(.name == $n) | .state + " " + (.flagged | tostring)' "$J"; }
check "leaky-db is growing and flagged" [ "$(state leaky-db)" = "growing true" ]
check "steady-web is steady" [ "$(state steady-web)" = "steady false" ]
check "young is in warm-up" [ "$(state young)" = "warm-up false" ]
check "short has too few samples" [ "$(state short)" = "too few samples false" ]
check "a VM only before the window is not listed" [ -z "$(state gone-early)" ]
check "leaky-db's slope is its 25 MiB/hour" near "$(jq '.vms[] | select(.name == "leaky-db") | .overhead_growth_bytes_per_hour' "$J")" 26214400 2
check "contract fields in every VM" jq -e '(.vms | length) > 0 and all(.vms[]; has("pid") and has("name") and has("samples") and has("overhead_growth_bytes_per_hour") and has("flagged"))' "$J"
check "human summary: 1 of 4 growing" grep -q '^1 of 4 VMs growing (at least 10.0 MiB/hour' "$TEST_TMP/growth.txt"
finish
