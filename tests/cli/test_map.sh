# Tests map to their sources (issue 40): every file of src/ with a header has a unit test that
# includes that header, or a line in tests/test-map.txt naming the tests that run it; every test
# named there is one of tests/*.cmake, and no line names a file that is gone or is unit-tested now.
. "$VMHOST_TESTS/lib.sh"
SRC=$VMHOST_TESTS/../src
MAP=$VMHOST_TESTS/test-map.txt
grep -ho 'vmhost_[a-z_]*test(\s*[a-z0-9_]*' "$VMHOST_TESTS"/*.cmake | sed 's/.*(\s*//' | sort -u >"$TEST_TMP/tests"
[ -s "$TEST_TMP/tests" ] || die "no tests found in tests/*.cmake"
unit_tested() { grep -qhF "#include \"${1%.c}.h\"" "$VMHOST_TESTS"/unit/*.[ch]; }
missing="" stale="" unknown=""
while read -r c; do
	[ -f "$SRC/${c%.c}.h" ] || continue
	unit_tested "$c" && continue
	grep -q "^$c " "$MAP" || missing="$missing $c"
done < <(cd "$SRC" && find . -name '*.c' | sed 's|^\./||' | sort)
while read -r c tests; do
	case $c in '#'* | '') continue ;; esac
	{ [ -f "$SRC/$c" ] && ! unit_tested "$c"; } || stale="$stale $c"
	for t in $tests; do grep -qx "$t" "$TEST_TMP/tests" || unknown="$unknown $c:$t"; done
done <"$MAP"
check "every source with a header has a unit test or a line in tests/test-map.txt${missing:+ (missing:$missing)}" [ -z "$missing" ]
check "test-map.txt names only files that exist and no unit test covers${stale:+ (stale:$stale)}" [ -z "$stale" ]
check "test-map.txt names only tests that exist${unknown:+ (unknown:$unknown)}" [ -z "$unknown" ]
finish
