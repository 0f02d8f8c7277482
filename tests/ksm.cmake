# KSM: status, tune, sweep, bench ksm.
vmhost_unit_test(test_ksm_rates)
vmhost_unit_test(test_ksm_tuner)
vmhost_unit_test(test_ksm_tune_cmd)
vmhost_unit_test(test_ksm_ini)
# The cleanup handlers (KSM guard, bench accounting, bench alloc's QEMU) die by the signal.
vmhost_unit_test(test_fatal_signals)
# The machine-wide lock in a private mount namespace (root; exit 77 elsewhere).
vmhost_unit_test(test_ksm_lock)
# The saved-settings file: its text, and a guard killed outright put back by the next.
vmhost_unit_test(test_ksm_saved)
vmhost_unit_test(test_bench_ksm)
# The command in-process on a fixture tree, its experiment and table_new replaced (no KSM touched).
vmhost_unit_test(test_bench_ksm_cmd)
target_link_options(test_bench_ksm_cmd PRIVATE -Wl,--wrap=bench_ksm_run,--wrap=bench_ksm_result_free,--wrap=table_new)
vmhost_script_test(ksm_json e2e/ksm_json.sh "cli;sanitize")
vmhost_script_test(ksm_signals live/ksm_signals.sh "live" ksm)
# A sweep run to its end: its rows, its SVG, the settings restored.
vmhost_script_test(ksm_sweep live/ksm_sweep.sh "live" ksm)
vmhost_script_test(ksm_tune_live live/ksm_tune_live.sh "live" ksm)
vmhost_script_test(ksm_tune_late live/ksm_tune_late.sh "live" ksm)
vmhost_script_test(ksm_bench_small live/ksm_bench_small.sh "live" ksm)
add_executable(run_ksmtuned helpers/run_ksmtuned.c)
target_link_libraries(run_ksmtuned PRIVATE vmhostcore)
set_target_properties(run_ksmtuned PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
vmhost_script_test(ksmtuned_real live/ksmtuned_real.sh "live" ksm)
vmhost_script_test(ksm_golden cli/ksm_golden.sh "cli;sanitize")
vmhost_script_test(ksm_reasons live/ksm_reasons.sh "live" ksm)
