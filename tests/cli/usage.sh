# The command line: help, version, exit codes, errors in the contract's form.
. "$VMHOST_TESTS/lib.sh"
out() { "$VMHOST" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"; echo $? >"$TEST_TMP/rc"; }
rc() { cat "$TEST_TMP/rc"; }

out --version; check "--version" grep -q '^vmhost [0-9]' "$TEST_TMP/out"
out --help; check "--help lists the commands" grep -q 'mem ' "$TEST_TMP/out"
check "--help exits 0" [ "$(rc)" = 0 ]
out help mem; check "help mem explains PSS" grep -q 'PSS' "$TEST_TMP/out"
out mem --help; check "mem --help is the same help" grep -q -- '--exact' "$TEST_TMP/out"
out help bench; check "help bench lists the benchmarks" grep -q 'accounting' "$TEST_TMP/out"
out frobnicate; check "unknown command: exit 2" [ "$(rc)" = 2 ]
check "unknown command: one line on stderr" [ "$(wc -l <"$TEST_TMP/err")" = 1 ]
out mem --bogus; check "unknown option: exit 2" [ "$(rc)" = 2 ]
check "error format vmhost: <command>: <what>: <why>" grep -q '^vmhost: mem: usage: unknown option' "$TEST_TMP/err"
out mem --pid abc --json; check "bad --pid with --json: error document on stdout" jq -e '.error' "$TEST_TMP/out"
out me --json --pid $$; check "unambiguous prefix 'me' runs mem" jq -e 'any(.vms[]; .pid == '$$')' "$TEST_TMP/out"
out mem --json --pid $$ --pid 999999999; check "a pid that does not exist is skipped, not an error" jq -e '.skipped == 1' "$TEST_TMP/out"
check "  ... and exit 0" [ "$(rc)" = 0 ]
out --json mem --pid $$; check "global options before the command" jq -e '.vms | length >= 1' "$TEST_TMP/out"
out --proc-root; check "--proc-root without a value: exit 2" [ "$(rc)" = 2 ]
finish
