# Foundation: parsers, VM command lines, accounting formulas, writers, and the mem command.
vmhost_unit_test(test_parse)
vmhost_unit_test(test_taskstats)
vmhost_unit_test(test_base)
vmhost_unit_test(test_io_cache)
vmhost_unit_test(test_io_file)
vmhost_unit_test(test_io_mountns)
vmhost_unit_test(test_dynlib)
vmhost_unit_test(test_vcpus_live)
vmhost_unit_test(test_parse_vmcmd)
vmhost_unit_test(test_parse_qemu_opts)
vmhost_unit_test(test_parse_qemu_disks)
vmhost_unit_test(test_model_vm_disks)
vmhost_unit_test(test_account)
# The memo's costs of reading each VM's PSS (pss_refine's choice between sampling and exact).
vmhost_unit_test(test_vm_memo)
vmhost_unit_test(test_share)
vmhost_unit_test(test_sketch_file)
vmhost_unit_test(test_sketch_take)
vmhost_unit_test(test_io_http)
vmhost_unit_test(test_out)
target_link_options(test_out PRIVATE -Wl,--wrap=realloc)
vmhost_unit_test(test_discovery)
target_link_options(test_discovery PRIVATE -Wl,--wrap=malloc)
vmhost_unit_test(test_discovery_parallel)
# The memo of the VMs and the other processes: the file, the processes known by their stat alone.
vmhost_unit_test(test_vm_memo_others)
vmhost_tsan(test_discovery_parallel)
vmhost_unit_test(test_cost)
vmhost_unit_test(test_vm_io)
vmhost_unit_test(test_bench_accounting)
vmhost_unit_test(test_opts)

vmhost_script_test(cli_mem_fixtures cli/mem_fixtures.sh "cli;sanitize")
vmhost_script_test(cli_usage cli/usage.sh "cli;sanitize")
vmhost_script_test(cleanup_signals cli/cleanup_signals.sh "cli")
vmhost_script_test(live_mem_processes live/mem_processes.sh "live")
vmhost_script_test(live_mem_memo live/mem_memo.sh "live")
vmhost_script_test(live_mem_numa live/mem_numa.sh "live")
vmhost_script_test(live_mem_io_columns live/mem_io_columns.sh "live")
vmhost_script_test(live_churn live/churn.sh "live")
vmhost_script_test(live_share live/share_live.sh "live")
vmhost_script_test(live_share_report live/share_report.sh "live")
vmhost_script_test(live_share_plan live/share_plan.sh "live")
vmhost_script_test(live_share_serve live/share_serve.sh "live")
# serve's /sketch runs on an HTTP worker while serve stops it from the main thread.
vmhost_tsan(live_share_serve)
vmhost_script_test(live_share_tls live/share_tls.sh "live")
# serve verifies client certificates on its HTTP workers.
vmhost_tsan(live_share_tls)
# The name's lookup abandoned on a thread of its own past --timeout.
vmhost_script_test(live_share_resolve live/share_resolve.sh "live")
vmhost_tsan(live_share_resolve)
# A VM moved between cgroups while read (issue 13: bad input).
vmhost_script_test(live_cgroup_move live/cgroup_move.sh "live")
vmhost_script_test(live_mem_ksm live/mem_ksm.sh "live" ksm)
# What KSM costs a guest that writes over its merged pages (delay accounting on for the test).
vmhost_script_test(live_stalls_ksm live/stalls_ksm.sh "live" ksm)
# A guest under a memory cgroup limit that forces reclaim, and one without.
vmhost_script_test(live_stalls_reclaim live/stalls_reclaim.sh "live")
# bench ksm and ksm sweep: the guests' copy stalls, and --delayacct restored on every exit path.
vmhost_script_test(live_stalls_bench live/stalls_bench.sh "live" ksm)
vmhost_script_test(live_mem_pss_sampled live/mem_pss_sampled.sh "live" ksm)
# PSS never dearer than exact (issue 43 item 2): mem's choice per VM by what each way costs.
vmhost_script_test(live_mem_pss_cost live/mem_pss_cost.sh "live" ksm)
vmhost_script_test(e2e_qemu_guests e2e/qemu_guests.sh "e2e" ksm)
set_tests_properties(e2e_qemu_guests PROPERTIES TIMEOUT 600)
# Guest RAM on 2 MiB huge pages in both QEMU forms (issue 34); the pool and a hugetlbfs mount given back.
vmhost_script_test(e2e_qemu_hugetlb e2e/qemu_hugetlb.sh "e2e" hugepages)
set_tests_properties(e2e_qemu_hugetlb PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
vmhost_script_test(e2e_guest_view e2e/guest_view.sh "e2e")
set_tests_properties(e2e_guest_view PROPERTIES TIMEOUT 300)
vmhost_script_test(live_bench_accounting live/bench_accounting_signals.sh "live" ksm)

# Benchmark: what each /proc file mem reads for a VM costs here (the floor under mem at scale).
# Run: bench/mem_scale.sh (it runs this on its fake guests), or build/bench_proc_files PID...
add_executable(bench_proc_files ${PROJECT_SOURCE_DIR}/bench/proc_files.c)
set_target_properties(bench_proc_files PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
# Benchmark and live tests' instrument: mem's PSS per VM against the exact read, both timed in one
# process as vmhost times them. Run: bench/pss_cost.sh, or build/bench_pss_cost PID...
add_executable(bench_pss_cost ${PROJECT_SOURCE_DIR}/bench/pss_cost.c)
target_link_libraries(bench_pss_cost PRIVATE vmhostcore)
set_target_properties(bench_pss_cost PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
vmhost_script_test(layers cli/layers.sh "cli")
vmhost_script_test(test_map cli/test_map.sh "cli")
vmhost_script_test(function_length cli/function_length.sh "cli")
# One shell library (scripts/lib/common.sh): no test or bench script carries a copy of it.
vmhost_script_test(shell_lib cli/shell_lib.sh "cli")
# Disk and network of a real QEMU guest (issue 31): a virtio disk written with O_DIRECT, a tap in
# a network namespace the test makes.
vmhost_script_test(e2e_qemu_io e2e/qemu_io.sh "e2e")
set_tests_properties(e2e_qemu_io PROPERTIES TIMEOUT 400)
# A tap hot-plugged into a running QEMU (QMP getfd + netdev_add, as libvirt's attach-interface)
# is found from its fds: mem --io --json lists it with its bytes (issue 42).
vmhost_script_test(e2e_tap_hotplug e2e/tap_hotplug.sh "e2e")
set_tests_properties(e2e_tap_hotplug PROPERTIES TIMEOUT 120)
