#!/bin/bash
# serve's /sketch against other local users: no sketches without authentication, loopback
# included (403 without a web config, 401 without credentials); one sketching run at a time, the
# others told 503 with Retry-After at once; /metrics answered all along (a run is on a thread of
# its own, not on an HTTP worker); SIGTERM during a run stops serve within seconds.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
. "$VMHOST_TESTS/e2e/web_config_lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root: process_vm_readv of the guest, a sketching run that lasts"
for tool in curl; do command -v $tool >/dev/null || die "$tool is missing"; done

KEY=$TEST_TMP/fleet.key # made by the first serve
# A guest big enough that a run at 1% of a CPU takes about a minute.
fake_guest serve-sk -m 256 -fake-seed 7301 -fake-guest "$RANDOM" -fake-nomerge
GUEST=$SPAWNED

serve_on() {
	spawn "$VMHOST" serve --listen 127.0.0.1:0 --min-interval 1 --no-kvm --key-file "$KEY" "$@" 2>"$TEST_TMP/serve.log"
	SERVER=$SPAWNED
	serve_port "$TEST_TMP/serve.log" "$SERVER" || die "vmhost serve did not start"
}
code() { curl -s -o "$TEST_TMP/body" -D "$TEST_TMP/headers" -w '%{http_code}' --max-time 20 "$@"; }

# Loopback without a web config: any local user could read the sketches.
serve_on
check "loopback, no authentication configured: /sketch is 403 ($(code "http://127.0.0.1:$PORT/sketch"))" \
	[ "$(code "http://127.0.0.1:$PORT/sketch")" = 403 ]
check "... with the reason in one line" grep -q 'only to authenticated clients' "$TEST_TMP/body"
check "... said at start" grep -q '/sketch answers 403 here' "$TEST_TMP/serve.log"
check "/metrics is served there" [ "$(code "http://127.0.0.1:$PORT/metrics")" = 200 ]
stop_pid "$SERVER"

printf 'basic_auth_users:\n  ops: %s\n' "$(web_hash 's3cret')" >"$TEST_TMP/web.yml"
serve_on --web-config "$TEST_TMP/web.yml" --sketch-cpu-budget 1 --threads 2
URL=http://127.0.0.1:$PORT
check "loopback with basic auth: /sketch without credentials is 401" [ "$(code "$URL/sketch")" = 401 ]

curl -s -o "$TEST_TMP/first" -w '%{http_code}' -u ops:s3cret --max-time 120 "$URL/sketch" >"$TEST_TMP/first.code" &
FIRST=$!
sleep 1
start=$(date +%s.%N)
c=$(code -u ops:s3cret "$URL/sketch")
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}')
check "a second /sketch during the run: 503 ($c) at once ($took s)" sh -c "[ '$c' = 503 ] && awk 'BEGIN{exit !($took < 2)}'"
check "... with Retry-After ($(grep -i '^Retry-After' "$TEST_TMP/headers" | tr -d '\r'))" grep -qi '^Retry-After: [1-9]' "$TEST_TMP/headers"
ok=0
for i in 1 2 3 4 5 6; do
	c=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' -u ops:s3cret --max-time 5 "$URL/metrics")
	[ "${c%% *}" = 200 ] && awk -v t="${c#* }" 'BEGIN{exit !(t < 2)}' && ok=$((ok + 1))
done
check "/metrics during the run: $ok of 6 scrapes answered within 2 s" [ "$ok" = 6 ]
check "the run is still going" kill -0 "$FIRST"

start=$(date +%s.%N)
kill -TERM "$SERVER"
for i in $(seq 100); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
check "SIGTERM during the run: serve stopped in $took s (at most 6)" sh -c "! kill -0 $SERVER 2>/dev/null && awk 'BEGIN{exit !($took <= 6)}'"
wait "$FIRST"
check "... and the request of the run was answered, not served partial sketches ($(cat "$TEST_TMP/first.code"))" \
	sh -c "[ '$(cat "$TEST_TMP/first.code")' != 200 ]"
stop_pid "$SERVER"
stop_pid "$GUEST"
finish
