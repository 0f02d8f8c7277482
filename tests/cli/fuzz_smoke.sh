# A short libFuzzer run over every parser (fuzz/fuzz_parsers.c) with ASan+UBSan, seeded from the
# fixture files: any crash, overread or undefined behaviour fails the test.
. "$VMHOST_TESTS/lib.sh"
command -v clang >/dev/null || die "clang missing (scripts/deps/build.txt)"
src=$VMHOST_TESTS/..
bin=$TEST_TMP/fuzz_parsers
clang -std=gnu11 -D_GNU_SOURCE -DVMHOST_VERSION='"fuzz"' -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -I"$src/src" "$src/fuzz/fuzz_parsers.c" \
	$(find "$src/src/parse" "$src/src/io" -name '*.c') "$src/src/core/ksm.c" -o "$bin" -lm 2>"$TEST_TMP/cc.err" \
	|| { cat "$TEST_TMP/cc.err"; die "cannot build the fuzz target"; }
corpus=$TEST_TMP/corpus
mkdir -p "$corpus"
i=0
# Seeds: each fixture file prefixed with every parser selector.
for f in "$VMHOST_FIXTURES"/parse/* "$VMHOST_FIXTURES"/host-mixed/proc/1001/*; do
	[ -f "$f" ] || continue
	for sel in 0 1 2 3 4 5 6 7 8 9; do
		{ printf "\\x$(printf %02x $sel)"; head -c 4000 "$f"; } >"$corpus/seed$i"
		i=$((i + 1))
	done
done
"$bin" -max_total_time=${FUZZ_SECONDS:-20} -max_len=8192 -timeout=5 "$corpus" >"$TEST_TMP/fuzz.log" 2>&1
rc=$?
tail -n 3 "$TEST_TMP/fuzz.log"
check "libFuzzer found no crash in ${FUZZ_SECONDS:-20} s over $i seeds" [ "$rc" = 0 ]
[ "$rc" = 0 ] || grep -A30 -m1 'ERROR' "$TEST_TMP/fuzz.log"
finish
