# KVM sources beside debugfs (issue 12): the JSON reader, the QMP client, QMP sockets on VM
# command lines, KVM stats through query-stats, exit reasons by tracepoints, the host's KVM
# settings; real QEMU, real perf events, real /dev/kvm where the machine has one.
vmhost_unit_test(test_json)
vmhost_unit_test(test_qmp)
vmhost_unit_test(test_parse_qemu_cmdline)
vmhost_unit_test(test_qmp_stats)
vmhost_unit_test(test_trace_format)
vmhost_unit_test(test_kvm_times)
vmhost_unit_test(test_kvm_host)
vmhost_unit_test(test_virt_stats)

# Helpers: a /dev/kvm guest with known exits, and a driver for the modules.
add_executable(kvmguest helpers/kvmguest.c)
set_target_properties(kvmguest PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
add_executable(kvmprobe helpers/kvmprobe.c)
target_link_libraries(kvmprobe PRIVATE vmhostcore)
set_target_properties(kvmprobe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})

vmhost_script_test(live_qmp_client live/qmp_client.sh "live")
vmhost_script_test(live_kvm_trace_setup live/kvm_trace_setup.sh "live")
vmhost_script_test(live_kvm_guest live/kvm_guest.sh "live")
vmhost_script_test(live_qmp_pace live/qmp_pace.sh "live")
vmhost_script_test(live_kvm_reasons_bpf live/kvm_reasons_bpf.sh "live")
# Skipped (not passed, not failed) only where /dev/kvm is absent.

# Benchmark: CPU cost of one query-stats refresh for 10 VMs x 4 vCPUs.
# Run: build/bench_qmp_stats [--vms 10] [--vcpus 4] [--refreshes 50]
add_executable(bench_qmp_stats ${PROJECT_SOURCE_DIR}/bench/qmp_stats_refresh.c)
target_link_libraries(bench_qmp_stats PRIVATE vmhostcore)
set_target_properties(bench_qmp_stats PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
target_compile_definitions(bench_qmp_stats PRIVATE VMHOST_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures")
add_test(NAME qmp_stats_bench COMMAND bench_qmp_stats --refreshes 20)
set_tests_properties(qmp_stats_bench PROPERTIES LABELS "bench")

# Every KVM VM (issue 30): a /dev/kvm program that is no known VMM, found by its fds or its
# debugfs directory, and counted by exits -- PROGRAM.
vmhost_script_test(live_any_kvm_vm live/any_kvm_vm.sh "live;sanitize")
set_tests_properties(live_any_kvm_vm PROPERTIES SKIP_RETURN_CODE 77)

# What a fresh machine lacks (issue 42): exits --reasons -- PROGRAM where the host has mounted
# neither debugfs nor tracefs counts exactly, and leaves the host's mounts as they were.
vmhost_script_test(live_exits_unmounted live/exits_unmounted.sh "live")
