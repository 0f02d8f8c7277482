#!/bin/bash
# Builds every fuzz target (fuzz/fuzz_*.c) with clang into DIR (default build/fuzz).
set -e
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$src/build/fuzz}
command -v clang >/dev/null || { echo "vmhost: fuzz: clang missing (scripts/deps/test/fuzz.txt)" >&2; exit 1; }
# Configured once; the build re-runs CMake itself when a fuzz_*.c or parser file comes or goes.
[ -f "$dir/CMakeCache.txt" ] || cmake -S "$src/fuzz" -B "$dir" -DCMAKE_C_COMPILER=clang >/dev/null
cmake --build "$dir" -j "$(nproc 2>/dev/null || echo 2)" >"$dir/build.log" 2>&1 || { cat "$dir/build.log" >&2; exit 1; }
