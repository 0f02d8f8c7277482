#!/bin/bash
# A test's cleanup (tests/lib.sh) and a benchmark's (bench/lib.sh) run to the end when a second
# signal comes while they run: ctest, timeout and Ctrl-C signal a whole process group, so a second
# TERM is usual, and it used to cut the restore short (a benchmark left KSM as it had set it). A
# child script's cleanup here waits for a process that ignores TERM; the child gets TERM twice, the
# second while it waits; its temporary directory, removed last, must be gone.
. "$VMHOST_TESTS/lib.sh"

# second_term LIB REGISTER TMPVAR: a child sources LIB, starts a process ignoring TERM (until
# $TEST_TMP/go, 10 s at most) and a sleep, has cleanup stop both (REGISTER: the lib's way), writes
# its tmp dir (TMPVAR) to $TEST_TMP/dir, and waits; it gets TERM, then TERM again once its cleanup
# is under way (the sleep it stops is gone: not 0.5 s later, which a slow child may not have
# reached), while that cleanup waits for the process ignoring TERM. Prints the dir.
second_term() {
	local child i sleeper
	rm -f "$TEST_TMP/dir" "$TEST_TMP/go" "$TEST_TMP/sleeper"
	printf '%s\n' ". '$1'" \
		"bash -c 'trap \"\" TERM; for i in \$(seq 200); do [ -e \"$TEST_TMP/go\" ] && exit; sleep 0.05; done' &" "$2" \
		"sleep 30 &" "$2" "echo \$! >'$TEST_TMP/sleeper'" \
		"echo \"\$$3\" >'$TEST_TMP/dir'" 'wait $!' >"$TEST_TMP/child.sh"
	bash "$TEST_TMP/child.sh" &
	child=$!
	for i in $(seq 200); do [ -s "$TEST_TMP/dir" ] && break; sleep 0.05; done
	sleeper=$(cat "$TEST_TMP/sleeper")
	kill -TERM "$child"
	for i in $(seq 200); do kill -0 "$sleeper" 2>/dev/null || break; sleep 0.05; done
	kill -TERM "$child" 2>/dev/null
	: >"$TEST_TMP/go"
	wait "$child" 2>/dev/null
	cat "$TEST_TMP/dir"
}

dir=$(second_term "$VMHOST_TESTS/lib.sh" 'adopt $!' TEST_TMP)
check "tests/lib.sh: a second TERM during cleanup does not cut it short ($dir removed)" test -n "$dir" -a ! -e "$dir"
dir=$(second_term "$VMHOST_TESTS/../bench/lib.sh" 'adopt $!' tmp)
check "bench/lib.sh: a second TERM during cleanup does not cut it short ($dir removed)" test -n "$dir" -a ! -e "$dir"
exit $((FAILURES > 0))
