# KSM: status, tune, sweep, bench ksm.
vmhost_unit_test(test_ksm_rates)
vmhost_unit_test(test_ksm_tuner)
vmhost_unit_test(test_ksm_tune_cmd)
vmhost_unit_test(test_ksm_ini)
vmhost_script_test(ksm_json e2e/ksm_json.sh "cli;sanitize")
vmhost_script_test(ksm_signals live/ksm_signals.sh "live" ksm)
vmhost_script_test(ksm_tune_live live/ksm_tune_live.sh "live" ksm)
vmhost_script_test(ksm_bench_small live/ksm_bench_small.sh "live" ksm)
