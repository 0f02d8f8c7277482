# vmhost serve: the writer, the metric families on a fixture, the HTTP server over loopback,
# the sampler's thread (who gathers, who writes), the command line, the whole document against
# golden files, --db on a full disk, and a real Prometheus scraping real mergeable processes.
vmhost_unit_test(test_serve_prom)
vmhost_unit_test(test_serve_metrics)
vmhost_unit_test(test_serve_http)
# --detail basic and full, the document's own families, the cut under the cap, a VM gone.
vmhost_unit_test(test_serve_detail)
vmhost_script_test(serve_cli e2e/serve_cli.sh "cli;sanitize")
vmhost_script_test(serve_prometheus live/serve_prometheus.sh "live" ksm)
vmhost_script_test(serve_kvm e2e/serve_kvm.sh "cli;sanitize")
vmhost_script_test(serve_db e2e/serve_db.sh "cli;sanitize")
vmhost_script_test(serve_golden e2e/serve_golden.sh "cli;sanitize")
vmhost_script_test(contrib_names cli/contrib_names.sh "cli")
vmhost_unit_test(test_serve_sampler)
# /sketch's runs: one at a time on a thread of their own, a second request told to come back.
vmhost_unit_test(test_serve_sketch)
vmhost_script_test(serve_layers e2e/serve_layers.sh "cli")
vmhost_script_test(serve_db_full e2e/serve_db_full.sh "cli;sanitize")
vmhost_script_test(serve_flood e2e/serve_flood.sh "cli")
# The HTTP threads while the sampler's thread adds KVM reason counters (a real /dev/kvm guest).
# Under ASan too (label sanitize): the eBPF counter and the perf filters, a round each.
vmhost_script_test(serve_reasons_scraped live/serve_reasons_scraped.sh "live;sanitize")
set_tests_properties(serve_reasons_scraped PROPERTIES SKIP_RETURN_CODE 77)
vmhost_tsan(test_serve_sampler test_serve_sketch test_serve_http serve_reasons_scraped serve_flood serve_db)
# Hostile peers (issue 41): a gathering that never ends; scrapes answered in time, a prompt stop.
vmhost_script_test(hostile_serve_stuck_gather hostile/serve_stuck_gather.sh "hostile;live")
# /sketch only to authenticated clients, loopback too; one run at a time; /metrics meanwhile.
vmhost_script_test(hostile_serve_sketch hostile/serve_sketch.sh "hostile;live")
# TLS: ECDHE with AEAD by default, cipher_suites and versions honoured, client certificates'
# purpose checked, share plan's client TLS 1.2 at least.
vmhost_script_test(hostile_serve_tls hostile/serve_tls.sh "hostile;live")
# share plan --from against a hostile sketch server: the reply's cap, a sketch denser than any.
vmhost_script_test(hostile_serve_share_plan hostile/serve_share_plan.sh "hostile;live")
# The feed cancelled and left behind at the stop, /sketch's run resuming its request: under TSan too.
vmhost_tsan(hostile_serve_stuck_gather hostile_serve_sketch)
# bench/soak.sh's 2-minute slice: serve --db and record under guests' churn and scrapes; nothing
# failed or missing, fds and threads as at the start, RSS under a bound (2.5 min here, more loaded).
vmhost_script_test(soak_slice live/soak_slice.sh "live")
set_tests_properties(soak_slice PROPERTIES TIMEOUT 900)
