#!/bin/bash
# A real Prometheus scrapes `vmhost serve --web-config` over TLS with basic auth (scheme https,
# tls_config ca_file, basic_auth password_file): the target is up and the host's series come back
# through Prometheus's HTTP API. Beside it, a job with a wrong password and one trusting another
# CA are down, each with the reason Prometheus gives. promtool accepts the scrape config.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
. "$VMHOST_TESTS/e2e/web_config_lib.sh"
PY=/usr/bin/python3 # Debian's, not a version-manager shim that might fork
for tool in prometheus promtool curl jq openssl $PY; do
	command -v $tool >/dev/null || die "$tool is missing (make check installs it: scripts/deps/test/serve.txt)"
done

PKI=$TEST_TMP/pki
web_pki "$PKI" || die "openssl could not make the test certificates"
web_example "$PKI"
spawn "$VMHOST" serve --listen 127.0.0.1:0 --web-config "$PKI/web.yml" --min-interval 0.5 2>"$TEST_TMP/serve.log"
SERVE=$SPAWNED
serve_port "$TEST_TMP/serve.log" "$SERVE" || die "vmhost serve did not start"

printf 'change-me' >"$PKI/password"
printf 'wrong' >"$PKI/wrong-password"
# job JOB CA PASSWORD_FILE: a scrape job of vmhost over https with basic auth.
job() {
	cat <<CFG
  - job_name: $1
    scheme: https
    tls_config:
      ca_file: $PKI/$2
    basic_auth:
      username: prometheus
      password_file: $PKI/$3
    static_configs:
      - targets: ["127.0.0.1:$PORT"]
CFG
}
{
	printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n'
	job vmhost ca.crt password
	job wrong-password ca.crt wrong-password
	job wrong-ca other-ca.crt password
} >"$TEST_TMP/prometheus.yml"
check "promtool check config passes on the https scrape config" sh -c "promtool check config '$TEST_TMP/prometheus.yml' >/dev/null"
prometheus_start "$TEST_TMP/prometheus.yml"
scraped() { local n; n=$(query "count_over_time(up{job=\"$1\"}[5m])"); [ -n "$n" ] && [ "$n" -ge 2 ]; }
# last_error JOB: the target's lastError as Prometheus reports it.
last_error() { curl -sf "$API/targets" | jq -r --arg j "$1" '.data.activeTargets[] | select(.labels.job == $j) | .lastError'; }

for j in vmhost wrong-password wrong-ca; do
	wait_for 60 scraped $j || die "Prometheus did not scrape job $j twice: $(tail -5 "$TEST_TMP/prometheus.log")"
done
pass "Prometheus scraped every job at least twice"
check "over TLS with basic auth the target is up" test "$(query 'up{job="vmhost"}')" = 1
total=$(awk '/^MemTotal:/ {printf "%.0f", $2 * 1024}' /proc/meminfo)
check "host memory total came through and matches /proc/meminfo" test "$(query 'vmhost_host_mem_total_bytes{job="vmhost"}')" = "$total"
check "the scrape counter went up between scrapes" ge "$(query 'vmhost_snapshots_total{job="vmhost"}')" 2
check "a wrong password: the target is down" test "$(query 'up{job="wrong-password"}')" = 0
err=$(last_error wrong-password)
check "  ... with 401 as the reason ($err)" grep -q 401 <<<"$err"
check "  ... and none of its series stored" test -z "$(query 'vmhost_host_mem_total_bytes{job="wrong-password"}')"
check "trusting another CA: the target is down" test "$(query 'up{job="wrong-ca"}')" = 0
err=$(last_error wrong-ca)
check "  ... with a certificate error as the reason ($err)" grep -qi 'certificate' <<<"$err"
check "the vmhost job has no error" test -z "$(last_error vmhost)"

stop_pid "$PROM"
stop_pid "$SERVE"
finish
