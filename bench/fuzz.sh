#!/bin/bash
# bench/fuzz.sh SECONDS [TARGET...]: runs each fuzz target (every fuzz/fuzz_*.c, or the ones
# named) for SECONDS, one after the other, and prints libFuzzer's figures per target:
# executions, executions per second, coverage (cov: edges, ft: features, at the end), the
# corpus it reached (inputs/bytes, seeds included) and crashes (a crash, sanitizer report,
# broken invariant, leak or timeout: libFuzzer stops at the first). The goal is >= 10^6
# executions per parser with no crash: `bench/fuzz.sh 60`, longer for the slow targets.
# Builds with clang into $BUILD/fuzz (default build/fuzz); inputs found go to a temporary
# directory, kept (with the crash inputs) when FUZZ_KEEP=DIR is set. Exit 1 if anything crashed.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:?usage: bench/fuzz.sh SECONDS [TARGET...]}
shift
. "$src/bench/lib.sh"
fuzz_build=${BUILD:-$src/build}/fuzz
"$src/fuzz/build.sh" "$fuzz_build" || exit 1
if [ $# -gt 0 ]; then
	targets=("$@")
else
	targets=()
	for f in "$src"/fuzz/fuzz_*.c; do
		n=$(basename "$f" .c)
		targets+=("${n#fuzz_}")
	done
fi
work=${FUZZ_KEEP:-$(mktemp -d /tmp/vmhost-fuzz.XXXXXX)}
keep=${FUZZ_KEEP:+yes}
on_cleanup '[ -n "$keep" ] || rm -rf "$work"'

echo "vmhost bench fuzz: ${#targets[@]} targets, ${seconds} s each, serially (clang $(clang -dumpversion), ASan+UBSan)"
printf '%-14s %12s %9s %6s %7s %8s %10s %8s\n' target executions exec/s cov ft corpus bytes crashes
failed=0 total=0
for t in "${targets[@]}"; do
	line=$("$src/fuzz/run.sh" "$fuzz_build/fuzz_$t" "$seconds" "$work/$t")
	rc=$?
	read -r name execs rate cov ft units bytes crashes <<<"$line"
	printf '%-14s %12s %9s %6s %7s %8s %10s %8s\n' "$name" "$execs" "$rate" "$cov" "$ft" "$units" "$bytes" "$crashes"
	total=$((total + execs))
	if [ "$rc" != 0 ]; then
		failed=1
		grep -m1 -E 'invariant broken|ERROR: [A-Za-z]+Sanitizer|runtime error|ERROR: libFuzzer' "$work/$t/log" | sed 's/^/    /'
		ls "$work/$t"/crash-* "$work/$t"/leak-* "$work/$t"/timeout-* "$work/$t"/oom-* 2>/dev/null | sed 's/^/    input: /'
	fi
done
echo "total executions: $total"
# Crash inputs are kept; a clean run leaves nothing unless asked to.
if [ -n "$keep" ] || [ "$failed" != 0 ]; then
	keep=yes
	echo "inputs and logs kept in $work"
fi
exit $failed
