# Shared by serve's shell tests, sourced after lib.sh: a server on a free loopback port, exit
# codes and messages of failed starts, a free port for another server, Prometheus.

# serve_start LOG ROOT ARGS...: vmhost serve on the tree ROOT/{proc,sys}, listening on
# 127.0.0.1:0, stderr to LOG; waits for its "listening" line; sets SERVER (its pid) and PORT.
serve_start() {
	local log=$1 root=$2 i
	shift 2
	spawn $VMHOST --proc-root "$root/proc" --sys-root "$root/sys" serve --listen 127.0.0.1:0 "$@" 2>"$log"
	SERVER=$SPAWNED
	serve_port "$log" "$SERVER"
}

# serve_port LOG PID: waits for the server PID's "listening" line (http or https) in LOG; sets PORT.
serve_port() {
	local i
	for i in $(seq 100); do
		PORT=$(sed -n 's|.*listening on https\?://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$1")
		[ -n "$PORT" ] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	say "server did not start: $(cat "$1")"
	return 1
}

# expect_exit CODE ARGS...: `$V serve ARGS` ($V: the binary with its global options) exits with
# CODE and prints exactly one line on stderr, into $TEST_TMP/err.
expect_exit() {
	local code=$1
	shift
	$V serve "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
	local rc=$? lines
	lines=$(wc -l <"$TEST_TMP/err")
	[ "$rc" = "$code" ] && [ "$lines" = 1 ] && grep -q '^vmhost: serve: ' "$TEST_TMP/err" ||
		{ say "rc=$rc (want $code): $(cat "$TEST_TMP/err")"; return 1; }
}

# free_port: a loopback TCP port free a moment ago (for a server that cannot take port 0).
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# prometheus_start CONFIG: a real Prometheus with CONFIG on a free loopback port, its TSDB and
# log ($TEST_TMP/prometheus.log) in $TEST_TMP; sets PROM (its pid) and API (its /api/v1 URL).
prometheus_start() {
	local port
	port=$(free_port)
	spawn prometheus --config.file="$1" --storage.tsdb.path="$TEST_TMP/tsdb" \
		--web.listen-address="127.0.0.1:$port" --log.level=warn 2>"$TEST_TMP/prometheus.log"
	PROM=$SPAWNED
	API=http://127.0.0.1:$port/api/v1
}

# query EXPR: the first result's value through Prometheus's API (empty when there is none).
query() { curl -sf --get "$API/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'; }
