# What make, make run and make check install (scripts/deps/), and make check's list of expected
# skips (tests/skips.sh, tests/expected-skips.txt).
vmhost_script_test(deps cli/deps.sh "cli")
vmhost_script_test(expected_skips cli/expected_skips.sh "cli")
