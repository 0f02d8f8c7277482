#!/bin/bash
# make check's word on skips: compares the tests a ctest run skipped (its --output-junit file)
# with tests/expected-skips.txt. As root or with CI=true (CI's machine, where every package is
# installed) it fails on a skip the list does not name, and on a listed test that ran: that entry
# is stale, and the test could later skip unnoticed. Elsewhere (a developer without root) it
# names both and passes. Tests the run did not include are not judged.
# usage: skips.sh JUNIT_XML [EXPECTED_SKIPS]
set -u
junit=${1:?usage: skips.sh JUNIT_XML [EXPECTED_SKIPS]}
expected=${2:-$(dirname "$0")/expected-skips.txt}
[ -r "$junit" ] || { echo "skips: no test results in $junit" >&2; exit 1; }
[ -r "$expected" ] || { echo "skips: no list of expected skips: $expected" >&2; exit 1; }
strict=0
[ "$(id -u)" = 0 ] || [ "${CI:-}" = true ] && strict=1

# Each test of the run: "NAME skipped" or "NAME ran".
results=$(awk '
	/<testcase / { if (name != "") print name, state; match($0, /name="[^"]*"/); name = substr($0, RSTART + 6, RLENGTH - 7); state = "ran" }
	/<skipped / { state = "skipped" }
	END { if (name != "") print name, state }' "$junit")
listed=$(sed 's/#.*//' "$expected" | awk 'NF { print $1 }' | sort -u)
skipped=$(awk '$2 == "skipped" { print $1 }' <<<"$results" | sort -u)
ran=$(awk '$2 == "ran" { print $1 }' <<<"$results" | sort -u)
unexpected=$(comm -23 <(echo "$skipped") <(echo "$listed") | grep .)
stale=$(comm -12 <(echo "$ran") <(echo "$listed") | grep .)
as_expected=$(comm -12 <(echo "$skipped") <(echo "$listed") | grep . | tr '\n' ' ')

# why NAME: the "skipped: ..." lines that test printed.
why() {
	awk -v n="$1" '/<testcase / { on = index($0, "name=\"" n "\"") > 0 } on && /skipped: / { sub(/^.*skipped: /, "    skipped: "); print }' "$junit" | sort -u
}
[ -n "$as_expected" ] && echo "skips: skipped as tests/expected-skips.txt expects: $as_expected"
for name in $unexpected; do
	echo "skips: $name skipped, and tests/expected-skips.txt does not expect it:"
	why "$name"
done
for name in $stale; do
	echo "skips: $name ran, but tests/expected-skips.txt lists it as skipped here: remove it from the list"
done
[ -z "$unexpected$stale" ] && exit 0
if [ $strict = 0 ]; then
	echo "skips: not root and not CI: reported, not failed"
	exit 0
fi
exit 1
