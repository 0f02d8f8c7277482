# A short run of every libFuzzer target (fuzz/fuzz_*.c, built with clang by fuzz/build.sh into
# build/fuzz); bench/fuzz.sh runs them longer and prints the figures.
vmhost_script_test(fuzz_parsers cli/fuzz_smoke.sh "fuzz")
set_tests_properties(fuzz_parsers PROPERTIES TIMEOUT 600)
