#!/bin/bash
# record / growth / report from the command line: short real recordings, bad input, and what
# the HTML must (not) contain. Quick; runs under the sanitizers too.
. "$VMHOST_TESTS/lib.sh"
DB=$TEST_TMP/v.db

"$VMHOST" record --db "$DB" --interval 0.1 --duration 0.5 >"$TEST_TMP/rec.out"
check "record exits 0" [ $? -eq 0 ]
check "samples in the database" ge "$(sqlite3 "$DB" 'SELECT count(*) FROM samples')" 3
check "schema version 1" [ "$(sqlite3 "$DB" 'PRAGMA user_version')" = 1 ]
check "WAL mode" [ "$(sqlite3 "$DB" 'PRAGMA journal_mode')" = wal ]
"$VMHOST" --json record --db "$DB" --interval 0.1 --duration 0.2 >"$TEST_TMP/rec.json"
check "record --json summary" jq -e '.samples >= 1 and .dropped_samples == 0' "$TEST_TMP/rec.json"

"$VMHOST" growth --db "$DB" --json >"$TEST_TMP/g.json"
check "growth --json is one document with vms" jq -e '.vms | type == "array"' "$TEST_TMP/g.json"
"$VMHOST" growth --db "$DB" >/dev/null
check "growth human exits 0" [ $? -eq 0 ]

"$VMHOST" report --db "$DB" --out "$TEST_TMP/r.html" >/dev/null
check "report exits 0" [ $? -eq 0 ]
check "report has inline SVG charts" ge "$(grep -o '<svg' "$TEST_TMP/r.html" | wc -l)" 3
check "report has no script" bash -c "! grep -qi '<script' '$TEST_TMP/r.html'"
check "report loads nothing from the network" bash -c "! grep -Eo '(src|href)=\"[^\"]*' '$TEST_TMP/r.html' | grep -q ."
check "no temporary file left" [ ! -e "$TEST_TMP/r.html.tmp" ]

# Bad input: one clear line, the right exit code, never a crash.
"$VMHOST" growth --db "$TEST_TMP/missing.db" 2>"$TEST_TMP/e1"
check "missing database: exit 1" [ $? -eq 1 ]
check "missing database: says so" grep -q "^vmhost: growth: opening the database: .*missing.db: no such file" "$TEST_TMP/e1"
echo "just some text, not a database at all, long enough for a header" >"$TEST_TMP/text.db"
"$VMHOST" --json report --db "$TEST_TMP/text.db" --out "$TEST_TMP/x.html" >"$TEST_TMP/e2.json" 2>/dev/null
check "foreign file: exit 1" [ $? -eq 1 ]
check "foreign file: JSON error" jq -e '.error | test("not a vmhost database")' "$TEST_TMP/e2.json"
"$VMHOST" record --db "$TEST_TMP/text.db" --duration 0.1 2>/dev/null
check "record refuses a foreign file" [ $? -eq 1 ]
check "foreign file untouched" grep -q "just some text" "$TEST_TMP/text.db"
"$VMHOST" report --db "$DB" 2>/dev/null
check "report without --out: usage error" [ $? -eq 2 ]
"$VMHOST" record --interval abc 2>/dev/null
check "record --interval abc: usage error" [ $? -eq 2 ]
"$VMHOST" growth --threshold lots 2>/dev/null
check "growth --threshold lots: usage error" [ $? -eq 2 ]
"$VMHOST" growth --db "$DB" --consistency 2 2>/dev/null
check "growth --consistency 2: usage error" [ $? -eq 2 ]
"$VMHOST" report --db "$DB" --out "$TEST_TMP/no/such/dir/r.html" 2>"$TEST_TMP/e3"
check "report into a missing directory: exit 1" [ $? -eq 1 ]
check "... with the path" grep -q "no/such/dir/r.html.tmp: No such file" "$TEST_TMP/e3"
for c in record growth report; do
	"$VMHOST" $c --help | grep -q "usage: vmhost $c"
	check "$c --help" [ $? -eq 0 ]
done
finish
