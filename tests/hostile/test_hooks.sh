#!/bin/bash
# No test hook in an installed vmhost (issue 41 item 7, REVIEW S-L10): the environment variables
# the tests steer vmhost with (VMHOST_KSM_LOCKED skips the KSM lock, VMHOST_TUNE_LOCK moves the
# tuner's, VMHOST_RUNTIME_DIR the runtime directory, VMHOST_EXITS_TEST_HOOK runs a script,
# VMHOST_KVM_REASONS) are read through io_test_hook() (src/io/test_hook.h) alone, which reads
# nothing unless the build defines VMHOST_TEST_HOOKS, and only VMHOST_TESTS=ON defines it: a
# build configured as `make` and the .deb configure it (VMHOST_TESTS=OFF) has no hook, whatever
# root's environment holds. The reads are found in src/ as layers.sh finds includes, and a read
# planted in a copy is found too.
. "$VMHOST_TESTS/lib.sh"
SRC=$(cd "$VMHOST_TESTS/../src" && pwd)

# What src/ may read from the environment directly, with why: not test hooks, and none of them
# gives a user more than the command line does.
ALLOWED_ENV='NO_COLOR|LISTEN_PID|LISTEN_FDS|TMPDIR|XDG_RUNTIME_DIR|VMHOST_BENCH_VERBOSE'
# NO_COLOR: top's colours; LISTEN_*: systemd's socket activation (serve); TMPDIR: where a
# benchmark's scratch files go; XDG_RUNTIME_DIR: a user's runtime directory; VMHOST_BENCH_VERBOSE:
# bench ksm's progress prints more.

# direct_reads DIR: every getenv of a variable not allowed above, outside io/test_hook.h.
direct_reads() {
	(cd "$1" && grep -rnE '(secure_)?getenv *\(' --include='*.[ch]' . | grep -v '^\./io/test_hook\.h:' |
		grep -vE "getenv *\\(\"($ALLOWED_ENV)\"\\)" | grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/?\*|//)')
}
reads=$(direct_reads "$SRC")
check "src/ reads no other environment variable but through io_test_hook" [ -z "$reads" ]
[ -z "$reads" ] || say "$reads"
copy=$(mktemp -d)
cp -r "$SRC/." "$copy/"
echo 'static const char *planted(void) { return getenv("VMHOST_KSM_LOCKED"); }' >>"$copy/core/tune/ksm_guard.c"
check "a getenv of VMHOST_KSM_LOCKED planted in core/tune/ksm_guard.c is found" \
	sh -c "$(declare -f direct_reads); ALLOWED_ENV='$ALLOWED_ENV'; direct_reads '$copy' | grep -q 'ksm_guard.c:.*VMHOST_KSM_LOCKED'"
rm -rf "$copy"

# io_test_hook itself, built both ways.
cat >"$TEST_TMP/hook.c" <<'C'
#include <stdio.h>
#include "io/test_hook.h"
int main(void) { const char *v = io_test_hook("VMHOST_KSM_LOCKED"); puts(v ? v : "(none)"); return 0; }
C
gcc -I"$SRC" -o "$TEST_TMP/hook_on" -DVMHOST_TEST_HOOKS "$TEST_TMP/hook.c" &&
	gcc -I"$SRC" -o "$TEST_TMP/hook_off" "$TEST_TMP/hook.c" || die "cannot compile io/test_hook.h"
check "a test build reads the hook" [ "$(VMHOST_KSM_LOCKED=1 "$TEST_TMP/hook_on")" = 1 ]
check "any other build does not" [ "$(VMHOST_KSM_LOCKED=1 "$TEST_TMP/hook_off")" = "(none)" ]

# The build's side: VMHOST_TEST_HOOKS in this (test) build's compile commands, and not in a tree
# configured as make and the .deb configure it (configured only, not built).
commands_of() { jq -r --arg f "$SRC/core/tune/ksm_guard.c" '.[] | select(.file == $f) | .command' "$1/compile_commands.json"; }
check "this test build defines VMHOST_TEST_HOOKS" sh -c "$(declare -f commands_of); SRC='$SRC'; commands_of '$VMHOST_BUILD' | grep -q -- -DVMHOST_TEST_HOOKS"
if cmake -S "$SRC/.." -B "$TEST_TMP/off" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVMHOST_TESTS=OFF >"$TEST_TMP/cmake.log" 2>&1; then
	commands_of "$TEST_TMP/off" >"$TEST_TMP/off.cmd"
	check "a VMHOST_TESTS=OFF build compiles ksm_guard.c" [ -s "$TEST_TMP/off.cmd" ]
	check "  ... without VMHOST_TEST_HOOKS" sh -c "! grep -q -- -DVMHOST_TEST_HOOKS '$TEST_TMP/off.cmd'"
else
	cat "$TEST_TMP/cmake.log"
	fail "cmake -DVMHOST_TESTS=OFF does not configure"
fi
finish
