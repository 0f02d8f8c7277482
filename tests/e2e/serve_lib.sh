# Shared by serve's shell tests, sourced after lib.sh: a server on a free loopback port.

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
