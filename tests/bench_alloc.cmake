# vmhost bench alloc: population strategies, the size guard, CSV/JSON/SVG, real QEMU starts.
# The huge page pool is machine-wide: tests that read or change it do not run at the same time.
vmhost_unit_test(test_bench_alloc)
set_tests_properties(test_bench_alloc PROPERTIES RESOURCE_LOCK hugepages)
vmhost_script_test(bench_alloc_cli live/bench_alloc.sh "live" hugepages)
vmhost_script_test(bench_alloc_qemu live/bench_alloc_qemu.sh "live")
vmhost_script_test(bench_alloc_hugetlbfs live/bench_alloc_hugetlbfs.sh "live" hugepages)
