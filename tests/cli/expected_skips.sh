# make check's word on skips (tests/skips.sh) on made-up ctest results: a skip the list expects
# passes, any other skip fails, and so does a listed test that ran (a stale entry), as root or
# with CI=true; a developer without root is told, not failed. And tests/expected-skips.txt itself:
# every name a test of this build, every entry with its reason.
. "$VMHOST_TESTS/lib.sh"
SKIPS_SH=$VMHOST_TESTS/skips.sh
LIST=$TEST_TMP/expected.txt
printf '# comment\nknown_skip  needs a thing this machine lacks\n' >"$LIST"

# junit NAME:STATE...: a ctest --output-junit file; STATE ran or skipped.
junit() {
	local t
	echo '<testsuite name="(empty)">'
	for t; do
		printf '\t<testcase name="%s" classname="%s" time="0.1" status="%s">\n' "${t%%:*}" "${t%%:*}" \
			"$([ "${t#*:}" = skipped ] && echo notrun || echo run)"
		[ "${t#*:}" = skipped ] && printf '\t\t<skipped message="SKIP_RETURN_CODE=77"/>\n'
		printf '\t\t<system-out>%s: skipped: the reason it gave\n</system-out>\n\t</testcase>\n' "${t%%:*}"
	done
	echo '</testsuite>'
}
verdict() { # FILE ARGS...: skips.sh's exit status on that run, as CI
	CI=true bash "$SKIPS_SH" "$1" "$LIST" >"$TEST_TMP/out" 2>&1
}
junit a:ran known_skip:skipped >"$TEST_TMP/expected.xml"
check "the listed skip: passes" verdict "$TEST_TMP/expected.xml"
check "  ... and says it was expected" grep -q 'expects: known_skip' "$TEST_TMP/out"
junit a:ran known_skip:skipped other:skipped >"$TEST_TMP/other.xml"
verdict "$TEST_TMP/other.xml"
check "another skip: fails, naming it and its reason" sh -c "[ $? = 1 ] && grep -q '^skips: other skipped' '$TEST_TMP/out' &&
	grep -q 'skipped: the reason it gave' '$TEST_TMP/out'"
junit a:ran known_skip:ran >"$TEST_TMP/stale.xml"
verdict "$TEST_TMP/stale.xml"
check "a listed test that ran: fails (a stale entry)" sh -c "[ $? = 1 ] && grep -q 'known_skip ran, but' '$TEST_TMP/out'"
junit a:ran >"$TEST_TMP/subset.xml"
check "a listed test the run left out: not judged" verdict "$TEST_TMP/subset.xml"
check "no results file: fails" sh -c "! CI=true bash '$SKIPS_SH' '$TEST_TMP/none.xml' '$LIST' 2>/dev/null"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$TEST_TMP" && chmod 644 "$TEST_TMP"/*.xml "$LIST"
	setpriv --reuid 65534 --regid 65534 --clear-groups env -u CI bash "$SKIPS_SH" "$TEST_TMP/other.xml" "$LIST" >"$TEST_TMP/out" 2>&1
	check "not root and not CI: the unexpected skip is told, not failed" sh -c "[ $? = 0 ] && grep -q '^skips: other skipped' '$TEST_TMP/out'"
else
	skip_part "not root, or no setpriv: the developer's view is not checked"
fi

# The real list: names of this build's tests, each with why it skips.
ctest --test-dir "$VMHOST_BUILD" -N | sed -n 's/^ *Test *#[0-9]*: //p' >"$TEST_TMP/names"
check "ctest lists this build's tests" [ "$(wc -l <"$TEST_TMP/names")" -gt 50 ]
while read -r name reason; do
	check "expected skip $name: a test of this build" grep -qx -- "$name" "$TEST_TMP/names"
	check "expected skip $name: says why" [ -n "$reason" ]
done < <(sed 's/#.*//' "$VMHOST_TESTS/expected-skips.txt" | awk 'NF')
finish
