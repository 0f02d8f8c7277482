# Foundation: parsers, VM command lines, accounting formulas, writers, and the mem command.
vmhost_unit_test(test_parse)
vmhost_unit_test(test_vmcmd)
vmhost_unit_test(test_account)
vmhost_unit_test(test_out)
vmhost_unit_test(test_discovery)

vmhost_script_test(cli_mem_fixtures cli/mem_fixtures.sh "cli;sanitize")
vmhost_script_test(cli_usage cli/usage.sh "cli;sanitize")
vmhost_script_test(live_mem_processes live/mem_processes.sh "live")
vmhost_script_test(live_mem_ksm live/mem_ksm.sh "live" ksm)
vmhost_script_test(e2e_qemu_guests e2e/qemu_guests.sh "e2e" ksm)
set_tests_properties(e2e_qemu_guests PROPERTIES TIMEOUT 600)
vmhost_script_test(live_bench_accounting live/bench_accounting_signals.sh "live" ksm)
