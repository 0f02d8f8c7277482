# vmhost record / growth / report (src/store, src/core/trend, src/out/html*).
vmhost_unit_test(test_trend)
vmhost_unit_test(test_store)
vmhost_unit_test(test_store_chart)
vmhost_script_test(store_cli e2e/report_cli.sh "cli;sanitize")
vmhost_script_test(record_live live/record_growth.sh "live")
vmhost_script_test(record_reliability live/record_reliability.sh "live")
vmhost_script_test(report_chromium e2e/report_chromium.sh "e2e")
