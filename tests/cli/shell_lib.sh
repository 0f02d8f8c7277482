#!/bin/bash
# One shell library for tests and benchmarks (scripts/lib/common.sh): no test or bench script
# defines its own cleanup trap, process starting and stopping, KSM save and restore, median, ms or
# fake-guest launcher, nor spells `exec -a qemu-system` (the library's AS_QEMU); a script that
# writes a KSM setting calls ksm_save (its cleanup puts the settings back); every bench script
# sources bench/lib.sh. Copies drift: 3993d39 had to patch one line into seven cleanups. With
# SHELL_LIB_ROOT=DIR it checks another tree: the test plants each kind of copy in a copy of the
# scripts and expects the check to find it.
. "$VMHOST_TESTS/lib.sh"

# What must stay, with why (FILE:RULE):
SHELL_ALLOWED=(
	# A process of its own (started by live_churn and bench/churn.sh) that stops on TERM, killing
	# the guest it started last; it sources no library, so it names its guests QEMU itself.
	tests/helpers/churn.sh:trap tests/helpers/churn.sh:exec-a
	# The child script it writes runs a process that ignores TERM: the library's cleanup is the
	# subject of the test.
	tests/cli/cleanup_signals.sh:trap
	# Writes a fixture tree for bench/serve.sh; runs nothing, so it has nothing to clean up.
	bench/serve_fixture.sh:bench-lib
)
LIBRARY_FUNCTIONS='cleanup|on_cleanup|spawn|adopt|stop_pid|stop_pids|stop_spawned|ksm_lock|ksm_save|ksm_restore|median|ms|warn|fake_guest|fake_guest_start|fake_guest_ready|fake_guests'

# scripts ROOT: the shell scripts checked, relative to ROOT (every test and bench script, their
# libraries included; not this file, which spells what it looks for).
scripts() {
	(cd "$1" && find bench tests -name '*.sh' -not -path 'tests/fixtures/*' -not -path tests/cli/shell_lib.sh | sort)
}

# code FILE: FILE's lines as "NUMBER:TEXT", comments blanked (a whole-line one, or from " #").
code() { awk '{ sub(/^[[:space:]]*#.*/, ""); sub(/[[:space:]]#[^"'\'']*$/, ""); print NR ":" $0 }' "$1"; }

# hits FILE RULE GREP_ARGS...: "FILE:LINE: RULE: TEXT" for each line of CODE (FILE's) that matches.
hits() {
	local file=$1 rule=$2
	shift 2
	grep "$@" <<<"$CODE" | sed "s|^\([0-9]*\):[[:space:]]*|$file:\1: $rule: |"
}

# findings ROOT: "FILE:LINE: RULE: what" for each copy of the library outside it, less the
# allowed ones.
findings() {
	local root=$1 file
	scripts "$root" | while IFS= read -r file; do
		CODE=$(code "$root/$file")
		hits "$file" trap -E '(^|[^[:alnum:]_])trap[[:space:]]'
		hits "$file" defines -E "^[0-9]+:[[:space:]]*(function[[:space:]]+)?($LIBRARY_FUNCTIONS)[[:space:]]*\(\)"
		hits "$file" exec-a -F 'exec -a qemu-system'
		hits "$file" median -F '(NR + 1) / 2'
		if grep -qE '>[[:space:]]*"?(\$\{?KSM\}?|/sys/kernel/mm/ksm)/' <<<"$CODE" && ! grep -qw ksm_save <<<"$CODE"; then
			echo "$file:1: ksm-save: writes a KSM setting without ksm_save"
		fi
		case $file in bench/lib.sh) ;; bench/*)
			grep -qE '^[0-9]+:[[:space:]]*\.[[:space:]].*/lib\.sh"?[[:space:]]*$' <<<"$CODE" ||
				echo "$file:1: bench-lib: does not source bench/lib.sh" ;;
		esac
	done | while IFS= read -r hit; do
		allowed "$hit" || echo "$hit"
	done
}

# allowed HIT: the allow-list has HIT's file and rule.
allowed() {
	local file=${1%%:*} rule a
	rule=${1#*: }
	rule=${rule%%:*}
	for a in "${SHELL_ALLOWED[@]}"; do
		[ "$a" = "$file:$rule" ] && return 0
	done
	return 1
}

# none ROOT: nothing found in ROOT.
none() {
	local out
	out=$(findings "$1")
	[ -z "$out" ] || { say "$out"; return 1; }
}

# PLANTS: FILE<TAB>LINE, each kind of copy appended to a file (made when missing) in one copy of
# the scripts, whose findings are read once into PLANTED.
PLANTS=$(printf '%s\t%s\n' \
	tests/live/mem_ksm.sh "trap 'rm -rf \"\$X\"' EXIT" \
	bench/doctor.sh 'median() { sort -n | head -1; }' \
	bench/top.sh "m=\$(awk '{ a[NR] = \$1 } END { print a[(NR + 1) / 2] }' f)" \
	tests/e2e/report_cli.sh "spawn bash -c 'exec -a qemu-system-x86_64 \"\$0\"' x" \
	tests/live/churn.sh 'echo 1 >$KSM/run' \
	bench/planted.sh 'echo hello')

# planted ROOT: the findings in a copy of ROOT's scripts with PLANTS planted.
planted() {
	local copy file line
	copy=$(mktemp -d "$TEST_TMP/copy.XXXXXX") || return 1
	scripts "$1" | (cd "$1" && xargs cp --parents -t "$copy") || return 1
	while IFS=$'\t' read -r file line; do printf '%s\n' "$line" >>"$copy/$file"; done <<<"$PLANTS"
	findings "$copy"
}

# caught PATTERN: a finding in the planted copy matches PATTERN.
caught() { grep -q "$1" <<<"$PLANTED" || { say "planted line not found: $PLANTED"; return 1; }; }

ROOT=${SHELL_LIB_ROOT:-$VMHOST_TESTS/..}
[ -f "$ROOT/scripts/lib/common.sh" ] || die "no scripts/lib/common.sh under $ROOT"
check "no test or bench script repeats the shell library (scripts/lib/common.sh)" none "$ROOT"
PLANTED=$(planted "$ROOT")
check "a cleanup trap planted in a test is found" caught '^tests/live/mem_ksm.sh:[0-9]*: trap: '
check "a median function planted in a bench script is found" caught '^bench/doctor.sh:[0-9]*: defines: median'
check "a median planted inline is found" caught '^bench/top.sh:[0-9]*: median: '
check "exec -a qemu-system planted in a test is found" caught '^tests/e2e/report_cli.sh:[0-9]*: exec-a: '
check "a KSM setting written without ksm_save is found" caught '^tests/live/churn.sh:1: ksm-save: '
check "a bench script without bench/lib.sh is found" caught '^bench/planted.sh:1: bench-lib: '
finish
