#!/bin/bash
# What TLS and basic auth (serve --web-config) cost a scrape, on the fixture host with 100
# simulated QEMU VMs and one shared snapshot (--min-interval 60: the transport is measured, not
# the gather):
#   1. a scrape on a new connection each (one curl per scrape, its time_total), median of 100:
#      plain HTTP, HTTPS, HTTPS with basic auth (the password cached after the first scrape), and
#      basic auth with a wrong password (a bcrypt every time, cost 10);
#   2. keep-alive throughput and latency with wrk (as Prometheus scrapes), over one connection
#      and over 16: plain, HTTPS + auth.
# Usage: bench/web_config.sh [BUILD_DIR]   (loopback only; stops everything it starts by pid)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
vmhost=$build/vmhost
n=${WEB_BENCH_SCRAPES:-100} duration=${WEB_BENCH_SECONDS:-10}
for tool in wrk curl openssl /usr/bin/python3; do
	command -v $tool >/dev/null || { echo "web config bench: $tool is missing (scripts/deps/serve.txt)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/vmhost-bench-web.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill -TERM "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
VMHOST_TESTS=$here/../tests
. "$VMHOST_TESTS/e2e/web_config_lib.sh"
web_pki "$tmp/pki" || { echo "web config bench: openssl failed" >&2; exit 1; }
web_example "$tmp/pki"
grep -v '^tls_server_config:\|^  cert_file\|^  key_file\|^  min_version' "$tmp/pki/web.yml" >"$tmp/pki/auth-only.yml"
grep -v '^basic_auth_users:\|^  prometheus:' "$tmp/pki/web.yml" >"$tmp/pki/tls-only.yml"

"$here/serve_fixture.sh" "$tmp/fix" 100
V="$vmhost --proc-root $tmp/fix/proc --sys-root $tmp/fix/sys"

# start LOG ARGS...: vmhost serve on a free loopback port; sets PORT and SERVER.
start() {
	local log=$1
	shift
	$V serve --listen 127.0.0.1:0 --min-interval 60 "$@" 2>"$log" &
	SERVER=$!
	pids="$pids $SERVER"
	for _ in $(seq 100); do
		PORT=$(sed -n 's|.*listening on https\?://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$log")
		[ -n "$PORT" ] && return 0
		sleep 0.1
	done
	echo "web config bench: server did not start: $(cat "$log")" >&2
	exit 1
}
stop() { kill -TERM "$SERVER"; wait "$SERVER" 2>/dev/null; }

# scrapes LABEL EXPECTED_STATUS CURL_ARGS...: n scrapes, one curl (one connection) each.
scrapes() {
	local label=$1 want=$2 i
	shift 2
	: >"$tmp/times"
	for i in $(seq "$n"); do
		curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$@" >>"$tmp/times"
	done
	sort -k2,2n "$tmp/times" | awk -v label="$label" -v want="$want" '
		$1 != want {bad++} {v[NR] = $2 * 1000}
		END {printf "%-46s median %7.2f ms  p90 %7.2f ms  (%d scrapes%s)\n", label, v[int(NR / 2) + 1],
		     v[int(NR * 0.9)], NR, bad ? ", " bad " NOT " want : ""}'
}

# wrk_run LABEL CONNECTIONS URL [HEADER]: keep-alive connections (2 threads when more than one).
wrk_run() {
	local label=$1 args=(-t2 -c"$2" -d"${duration}s" --latency)
	[ "$2" = 1 ] && args=(-t1 -c1 -d"${duration}s" --latency)
	[ $# -gt 3 ] && args+=(-H "$4")
	wrk "${args[@]}" "$3" >"$tmp/wrk.out" 2>&1
	awk -v label="$label" '
		/Requests\/sec/ {rps = $2}
		/^ +50%/ {p50 = $2} /^ +90%/ {p90 = $2} /^ +99%/ {p99 = $2}
		/Non-2xx/ {bad = $NF}
		END {printf "%-46s %9.0f scrapes/s  p50 %-8s p90 %-8s p99 %-8s%s\n", label, rps, p50, p90, p99,
		     bad ? "  NON-2XX " bad : ""}' "$tmp/wrk.out"
}

CA=(--cacert "$tmp/pki/ca.crt")
echo "vmhost serve --web-config benchmark: 100 simulated VMs (fixture), $(nproc) CPUs, $n scrapes per line, wrk -d${duration}s; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
start "$tmp/plain.log"
echo "document: $(curl -s "http://127.0.0.1:$PORT/metrics" | wc -c) bytes"
scrapes "new connection, plain HTTP" 200 "http://127.0.0.1:$PORT/metrics"
wrk_run "keep-alive, 1 connection, plain HTTP" 1 "http://127.0.0.1:$PORT/metrics"
wrk_run "keep-alive, 16 connections, plain HTTP" 16 "http://127.0.0.1:$PORT/metrics"
stop
start "$tmp/tls.log" --web-config "$tmp/pki/tls-only.yml"
scrapes "new connection, HTTPS (TLS 1.3, P-256)" 200 "${CA[@]}" "https://127.0.0.1:$PORT/metrics"
scrapes "new connection, HTTPS, / (the handshake alone)" 200 "${CA[@]}" "https://127.0.0.1:$PORT/"
stop
start "$tmp/auth.log" --web-config "$tmp/pki/web.yml"
scrapes "new connection, HTTPS + basic auth (cached)" 200 "${CA[@]}" -u prometheus:change-me "https://127.0.0.1:$PORT/metrics"
scrapes "new connection, HTTPS + wrong password (bcrypt)" 401 "${CA[@]}" -u prometheus:wrong "https://127.0.0.1:$PORT/metrics"
auth="Authorization: Basic $(printf 'prometheus:change-me' | base64)"
wrk_run "keep-alive, 1 connection, HTTPS + auth" 1 "https://127.0.0.1:$PORT/metrics" "$auth"
wrk_run "keep-alive, 16 connections, HTTPS + auth" 16 "https://127.0.0.1:$PORT/metrics" "$auth"
stop
start "$tmp/auth-only.log" --web-config "$tmp/pki/auth-only.yml"
scrapes "new connection, plain HTTP + basic auth (cached)" 200 -u prometheus:change-me "http://127.0.0.1:$PORT/metrics"
stop
