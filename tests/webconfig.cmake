# vmhost serve --web-config: the exporter-toolkit YAML parser and the basic auth verifier (unit),
# the command line's refusals and errors, and a real Prometheus scraping over TLS with basic auth.
vmhost_unit_test(test_web_config)
target_link_libraries(test_web_config PRIVATE PkgConfig::CRYPT)
vmhost_script_test(web_config e2e/web_config.sh "cli;sanitize")
vmhost_script_test(web_config_prometheus live/web_config_prometheus.sh "live")
