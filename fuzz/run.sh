#!/bin/bash
# fuzz/run.sh BIN SECONDS WORKDIR: runs one fuzz target for SECONDS from its checked-in corpus
# (fuzz/corpus/<target>, read only: new inputs go to WORKDIR/corpus) and prints one line,
#   target executions exec/s cov ft corpus_units corpus_bytes crashes
# with libFuzzer's own figures (coverage and corpus as of its last status line). The exit status
# is libFuzzer's: 0, or non-zero after a crash, a sanitizer report, a broken invariant, a leak
# or a timeout; the input that caused it is WORKDIR/crash-* (or leak-*, timeout-*, oom-*) and
# libFuzzer's output is WORKDIR/log.
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$1 seconds=$2 work=$3
name=$(basename "$bin")
target=${name#fuzz_}
mkdir -p "$work/corpus"
# A smaller quarantine than ASan's 256 MiB: use-after-free is still caught within an input, and
# the allocations of the VM command-line parser stop paging in fresh memory at every run.
ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16} \
	"$bin" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 -artifact_prefix="$work/" \
	"$work/corpus" "$src/fuzz/corpus/$target" >"$work/log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
# The last status line: "#N DONE cov: C ft: F corp: U/Sb ..." (or INITED, pulse, NEW, REDUCE).
status=$(grep -E '^#[0-9]+' "$work/log" | tail -1)
field() { sed -n "s/.* $1: \\([^ ]*\\).*/\\1/p" <<<"$status"; }
corp=$(field corp)
crashes=$(find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
[ "$rc" = 0 ] || [ "$crashes" -gt 0 ] || crashes=1
printf '%s %s %s %s %s %s %s %s\n' "$target" "${execs:-0}" "${rate:-0}" "$(field cov)" "$(field ft)" \
	"${corp%%/*}" "${corp#*/}" "$crashes"
exit $rc
