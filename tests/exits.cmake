# vmhost exits: KVM counters from debugfs. No /dev/kvm on the build machines: everything runs
# on fixture trees (tests/fixtures/exits-*), copied to a temporary directory when changed.
vmhost_unit_test(test_exits_parse)
vmhost_unit_test(test_exits_reader)
vmhost_unit_test(test_kvm_delta)
vmhost_unit_test(test_kvm_pace)
vmhost_script_test(exits_cli cli/exits_cli.sh "cli;sanitize")
vmhost_script_test(exits_live cli/exits_live.sh "cli;sanitize")
vmhost_script_test(exits_golden cli/exits_golden.sh "cli;sanitize")

# Benchmark: CPU time of one refresh (10 VMs x 40 counters) on a generated tree.
# Run: build/bench_exits [--vms N] [--counters N] [--refreshes N]
add_executable(bench_exits ${PROJECT_SOURCE_DIR}/bench/exits_refresh.c)
target_link_libraries(bench_exits PRIVATE vmhostcore)
set_target_properties(bench_exits PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
add_test(NAME exits_bench COMMAND bench_exits --refreshes 2000)
set_tests_properties(exits_bench PROPERTIES LABELS "bench")
