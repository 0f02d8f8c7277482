# A short libFuzzer run of every fuzz target (fuzz/fuzz_*.c: one per parser, ASan+UBSan, each
# asserting its parser's invariants) from its checked-in corpus, regression inputs included:
# any crash, sanitizer report, broken invariant, leak or timeout fails the test. Prints the
# executions per target. FUZZ_SECONDS per target (default 1: libFuzzer counts whole seconds and
# stops after about 2, about 3 s with start-up and the corpus; 17 targets take under a minute);
# bench/fuzz.sh runs longer.
. "$VMHOST_TESTS/lib.sh"
src=$VMHOST_TESTS/..
seconds=${FUZZ_SECONDS:-1}
"$src/fuzz/build.sh" "$VMHOST_BUILD/fuzz" || die "cannot build the fuzz targets (clang, libclang-rt-14-dev)"
n=0
printf '%-14s %10s %8s %6s %6s\n' target executions exec/s cov crashes
for f in "$src"/fuzz/fuzz_*.c; do
	t=$(basename "$f" .c)
	t=${t#fuzz_}
	n=$((n + 1))
	line=$("$src/fuzz/run.sh" "$VMHOST_BUILD/fuzz/fuzz_$t" "$seconds" "$TEST_TMP/$t")
	rc=$?
	read -r name execs rate cov ft units bytes crashes <<<"$line"
	printf '%-14s %10s %8s %6s %6s\n' "$name" "$execs" "$rate" "$cov" "$crashes"
	if [ "$rc" = 0 ]; then
		check "$t: no crash in $execs executions over its corpus ($units inputs)" [ "$execs" -gt 0 ]
	else
		fail "$t: libFuzzer exit $rc after $execs executions"
		grep -m1 -A25 -E 'invariant broken|ERROR: [A-Za-z]+Sanitizer|runtime error|ERROR: libFuzzer' "$TEST_TMP/$t/log"
		mkdir -p "$VMHOST_BUILD/fuzz/crashes/$t"
		for input in "$TEST_TMP/$t"/crash-* "$TEST_TMP/$t"/leak-* "$TEST_TMP/$t"/timeout-*; do
			[ -f "$input" ] || continue
			cp "$input" "$VMHOST_BUILD/fuzz/crashes/$t/"
			say "input kept as $VMHOST_BUILD/fuzz/crashes/$t/$(basename "$input"):"
			od -c "$input" | head -8
		done
	fi
done
check "every parser has a target ($n)" [ "$n" -ge 19 ]
finish
