#!/bin/bash
# Benchmark of vmhost serve on a fixture host with 100 simulated QEMU VMs:
#   1. the cost of one fresh snapshot (gather, --min-interval 0), median over 200 scrapes;
#   2. scrape throughput and latency with wrk (default --min-interval 1: scrapes share a snapshot);
#   3. the same with every scrape gathering afresh (--min-interval 0);
#   4. the same as 2 while 40 slow clients trickle headers and a loop sends malformed requests;
#   5. the server's peak RSS;
#   6. what TLS and basic auth (--web-config) cost a scrape, on one shared snapshot
#      (--min-interval 60: the transport is measured, not the gather): a new connection per scrape
#      (one curl each, median of its time_total over 100) plain, HTTPS, HTTPS + auth (the password
#      cached after the first scrape), a wrong password (a bcrypt, cost 10, every time); and
#      keep-alive with wrk over one connection and over 16, plain and HTTPS + auth.
# Usage: bench/serve.sh [BUILD_DIR]   (loopback only; stops everything it starts by pid)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
. "$here/lib.sh"
n_vms=100 duration=${SERVE_BENCH_SECONDS:-10}
for tool in wrk curl openssl /usr/bin/python3; do
	command -v $tool >/dev/null || { echo "serve bench: $tool is missing (scripts/deps/test/serve.txt)" >&2; exit 1; }
done
"$here/serve_fixture.sh" "$tmp/fix" $n_vms
V="$vmhost --proc-root $tmp/fix/proc --sys-root $tmp/fix/sys"

# start LOG ARGS...: vmhost serve on a free loopback port; sets PORT and SERVER.
start() {
	local log=$1
	shift
	spawn $V serve --listen 127.0.0.1:0 "$@" 2>"$log"
	SERVER=$SPAWNED
	for _ in $(seq 100); do
		PORT=$(sed -n 's|.*listening on https\?://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$log")
		[ -n "$PORT" ] && return 0
		sleep 0.1
	done
	echo "serve bench: server did not start: $(cat "$log")" >&2
	exit 1
}
stop() { stop_pid "$SERVER"; }
# wrk_run LABEL [CONNECTIONS [URL [HEADER]]]: 2 threads, 16 connections to /metrics by default;
# prints req/s and latency percentiles.
wrk_run() {
	local c=${2:-16} t=2 url=${3:-http://127.0.0.1:$PORT/metrics}
	[ "$c" -lt 2 ] && t=1
	wrk -t$t -c"$c" -d"${duration}s" --latency ${4:+-H "$4"} "$url" >"$tmp/wrk.out" 2>&1
	awk -v label="$1" '
		/Requests\/sec/ {rps = $2}
		/^ +50%/ {p50 = $2} /^ +90%/ {p90 = $2} /^ +99%/ {p99 = $2}
		/Non-2xx/ {bad = $NF}
		END {printf "%-44s %9.0f scrapes/s  p50 %-8s p90 %-8s p99 %-8s%s\n", label, rps, p50, p90, p99,
		     bad ? "  NON-2XX " bad : ""}' "$tmp/wrk.out"
}

echo "vmhost serve benchmark: $n_vms simulated VMs (fixture), $(nproc) CPUs, wrk -d${duration}s; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. Fresh snapshot cost, as the server reports it (vmhost_scrape_duration_seconds).
start "$tmp/s1.log" --min-interval 0
urls=$(for _ in $(seq 200); do printf 'http://127.0.0.1:%s/metrics ' "$PORT"; done)
curl -s $urls | awk '/^vmhost_scrape_duration_seconds / {print $2 * 1000}' | sort -n >"$tmp/gather.ms"
body=$(curl -s "http://127.0.0.1:$PORT/metrics" | wc -c)
series=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -vc '^#')
awk '{v[NR] = $1} END {printf "fresh snapshot (gather) of %d VMs:           median %.2f ms, p90 %.2f ms, max %.2f ms (%d samples)\n",
	'"$n_vms"', v[int(NR / 2) + 1], v[int(NR * 0.9)], v[NR], NR}' "$tmp/gather.ms"
echo "document: $body bytes, $series series"
wrk_run "throughput, every scrape gathers (--min-interval 0)"
stop

# 2. Shared snapshot: the default.
start "$tmp/s2.log"
wrk_run "one connection, shared snapshot" 1
wrk_run "throughput, shared snapshot (--min-interval 1)"
base=$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.out")

# 4. Bad clients beside good ones: 40 slow connections trickling a header byte a second,
#    and a loop sending malformed requests, while wrk measures the good ones.
/usr/bin/python3 - "$PORT" "$((duration + 3))" <<'PY' &
import socket, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + secs
slow = []
for _ in range(40):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
    slow.append(s)
bad = [b"\x00\x01\x02garbage\r\n\r\n", b"GET /metrics HTTP/9.9\r\n\r\n", b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n",
       b"GET /" + b"a" * 40000 + b" HTTP/1.1\r\n\r\n", b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"]
i = 0
while time.time() < end:
    for s in list(slow):
        try:
            s.send(b"a")
        except OSError:
            slow.remove(s)
    t = time.time() + 1
    while time.time() < t:
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=1)
            c.sendall(bad[i % len(bad)]); i += 1
            c.recv(256)
            c.close()
        except OSError:
            pass
print(f"bad clients: 40 slow connections, {i} malformed requests sent", file=sys.stderr)
PY
badpid=$!
adopt "$badpid"
sleep 1
wrk_run "  same, beside 40 slow + malformed clients"
wait "$badpid" 2>/dev/null
awk -v a="$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.out")" -v b="$base" \
	'BEGIN {printf "throughput with bad clients / without: %.2f\n", a / b}'
hwm=$(awk '/^VmHWM:/ {print $2}' /proc/$SERVER/status)
echo "server peak RSS (VmHWM): $((hwm / 1024)) MiB ($hwm kB)"
stop

# 6. TLS and basic auth: the test suite's certificates (tests/e2e/web_config_lib.sh) and
#    contrib's example web config, with the parts each line needs.
VMHOST_TESTS=$here/../tests
. "$VMHOST_TESTS/e2e/web_config_lib.sh"
web_pki "$tmp/pki" || { echo "serve bench: openssl failed" >&2; exit 1; }
web_example "$tmp/pki"
grep -v '^basic_auth_users:\|^  prometheus:' "$tmp/pki/web.yml" >"$tmp/pki/tls-only.yml"
# scrapes LABEL STATUS CURL_ARGS...: 100 scrapes, one curl (one connection) each, all with STATUS.
scrapes() {
	local label=$1 want=$2
	shift 2
	for _ in $(seq 100); do curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$@"; done | sort -k2,2n |
		awk -v label="$label" -v want="$want" '$1 != want {bad++} {v[NR] = $2 * 1000}
		END {printf "%-44s median %6.2f ms  p90 %6.2f ms%s\n", label, v[int(NR / 2) + 1], v[int(NR * 0.9)],
		     bad ? "  " bad " NOT " want : ""}'
}
CA=(--cacert "$tmp/pki/ca.crt")
start "$tmp/s6.log" --min-interval 60
scrapes "new connection, plain HTTP" 200 "http://127.0.0.1:$PORT/metrics"
wrk_run "keep-alive, 1 connection, plain HTTP" 1
stop
start "$tmp/s6.log" --min-interval 60 --web-config "$tmp/pki/tls-only.yml"
scrapes "new connection, HTTPS (TLS 1.3, P-256)" 200 "${CA[@]}" "https://127.0.0.1:$PORT/metrics"
scrapes "new connection, HTTPS, / (the handshake)" 200 "${CA[@]}" "https://127.0.0.1:$PORT/"
stop
start "$tmp/s6.log" --min-interval 60 --web-config "$tmp/pki/web.yml"
scrapes "new connection, HTTPS + basic auth (cached)" 200 "${CA[@]}" -u prometheus:change-me "https://127.0.0.1:$PORT/metrics"
scrapes "new connection, HTTPS + wrong password" 401 "${CA[@]}" -u prometheus:wrong "https://127.0.0.1:$PORT/metrics"
auth="Authorization: Basic $(printf 'prometheus:change-me' | base64)"
wrk_run "keep-alive, 1 connection, HTTPS + auth" 1 "https://127.0.0.1:$PORT/metrics" "$auth"
wrk_run "keep-alive, 16 connections, HTTPS + auth" 16 "https://127.0.0.1:$PORT/metrics" "$auth"
stop
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
