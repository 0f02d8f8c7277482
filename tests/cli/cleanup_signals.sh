#!/bin/bash
# A test's cleanup (tests/lib.sh) and a benchmark's (bench/lib.sh) run to the end when a second
# signal comes while they run: ctest, timeout and Ctrl-C signal a whole process group, so a second
# TERM is usual, and it used to cut the restore short (a benchmark left KSM as it had set it). A
# child script's cleanup here waits for a process that ignores TERM; the child gets TERM twice, the
# second while it waits; its temporary directory, removed last, must be gone.
. "$VMHOST_TESTS/lib.sh"

# second_term LIB REGISTER TMPVAR: a child sources LIB, starts a process ignoring TERM for 2 s and a
# sleep, has cleanup stop both (REGISTER: the lib's way), writes its tmp dir (TMPVAR) to
# $TEST_TMP/dir, and waits; it gets TERM, then TERM again 0.5 s into its cleanup. Prints the dir.
second_term() {
	local child i
	rm -f "$TEST_TMP/dir"
	printf '%s\n' ". '$1'" "bash -c 'trap \"\" TERM; sleep 2' &" "$2" "sleep 30 &" "$2" \
		"echo \"\$$3\" >'$TEST_TMP/dir'" 'wait $!' >"$TEST_TMP/child.sh"
	bash "$TEST_TMP/child.sh" &
	child=$!
	for i in $(seq 100); do [ -s "$TEST_TMP/dir" ] && break; sleep 0.05; done
	kill -TERM "$child"
	sleep 0.5
	kill -TERM "$child" 2>/dev/null
	wait "$child" 2>/dev/null
	cat "$TEST_TMP/dir"
}

dir=$(second_term "$VMHOST_TESTS/lib.sh" 'adopt $!' TEST_TMP)
check "tests/lib.sh: a second TERM during cleanup does not cut it short ($dir removed)" test -n "$dir" -a ! -e "$dir"
dir=$(second_term "$VMHOST_TESTS/../bench/lib.sh" 'adopt $!' tmp)
check "bench/lib.sh: a second TERM during cleanup does not cut it short ($dir removed)" test -n "$dir" -a ! -e "$dir"
exit $((FAILURES > 0))
