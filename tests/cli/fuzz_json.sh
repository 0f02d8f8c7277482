# A short libFuzzer run over the JSON reader and the QMP reply parsers (fuzz/fuzz_json.c) with
# ASan+UBSan, seeded from the QMP fixtures: any crash, overread or undefined behaviour fails.
. "$VMHOST_TESTS/lib.sh"
command -v clang >/dev/null || die "clang missing (scripts/deps/build.txt)"
src=$VMHOST_TESTS/..
bin=$TEST_TMP/fuzz_json
clang -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$src/src" "$src/fuzz/fuzz_json.c" "$src/src/parse/json.c" "$src/src/parse/qmp_stats.c" \
	"$src/src/parse/kvm_debugfs.c" -o "$bin" -lm 2>"$TEST_TMP/cc.err" \
	|| { cat "$TEST_TMP/cc.err"; die "cannot build the fuzz target"; }
corpus=$TEST_TMP/corpus
mkdir -p "$corpus"
cp "$VMHOST_FIXTURES"/qmp/*.json "$corpus/"
"$bin" -max_total_time=${FUZZ_SECONDS:-15} -max_len=16384 -timeout=5 "$corpus" >"$TEST_TMP/fuzz.log" 2>&1
rc=$?
tail -n 3 "$TEST_TMP/fuzz.log"
check "libFuzzer found no crash in ${FUZZ_SECONDS:-15} s over the QMP fixtures" [ "$rc" = 0 ]
[ "$rc" = 0 ] || grep -A30 -m1 'ERROR' "$TEST_TMP/fuzz.log"
finish
