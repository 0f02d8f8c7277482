# vmhost record / growth / report (src/store, src/core/trend, src/out/html*).
vmhost_unit_test(test_trend)
vmhost_unit_test(test_series)
vmhost_unit_test(test_history)
vmhost_unit_test(test_store)
vmhost_unit_test(test_store_write)
vmhost_unit_test(test_store_share)
vmhost_unit_test(test_out_svg)
vmhost_script_test(store_cli e2e/report_cli.sh "cli;sanitize")
vmhost_script_test(record_live live/record_growth.sh "live")
vmhost_script_test(record_reliability live/record_reliability.sh "live")
vmhost_script_test(report_chromium e2e/report_chromium.sh "e2e")
vmhost_script_test(report_scale e2e/report_scale.sh "e2e")

# Golden outputs of vmhost growth on a database of known series (tests/helpers/growth_fixture.c).
add_executable(growth_fixture helpers/growth_fixture.c)
target_link_libraries(growth_fixture PRIVATE vmhostcore)
set_target_properties(growth_fixture PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
vmhost_script_test(growth_golden cli/growth_golden.sh "cli;sanitize")
