#!/bin/bash
# serve's /sketch and share plan --from: on loopback with basic auth, /sketch answers this host's
# sketches in the sketch file format, the same a share --out of the same VMs writes, kept for a
# minute (a second request gets the very same bytes); share plan --from reads them. Without
# authentication (--insecure-listen beyond loopback; loopback alone: tests/hostile/serve_sketch.sh)
# /sketch is 403 with the reason and --from says so; with basic auth it is served to the right
# password only. Without --key-file there is no /sketch (404).
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
. "$VMHOST_TESTS/e2e/web_config_lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root: process_vm_readv of other users' processes"
for tool in curl jq cmp; do command -v $tool >/dev/null || die "$tool is missing"; done

KEY=$TEST_TMP/fleet.key
fake_guest serve-s1 -m 64 -fake-shared 0.5 -fake-zero 0.1 -fake-seed 7201 -fake-guest "$RANDOM" -fake-nomerge
S1=$SPAWNED
"$VMHOST" share --db "$TEST_TMP/vmhost.db" --pid "$S1" --sample 1/8 --cpu-budget 0 --key-file "$KEY" --out "$TEST_TMP/s1.sketch" >/dev/null 2>&1 ||
	die "share --out failed"

# serve_on ADDR ARGS...: vmhost serve listening on ADDR:0 with /sketch; sets SERVER and PORT.
serve_on() {
	local addr=$1
	shift
	spawn "$VMHOST" serve --listen "$addr:0" --min-interval 5 --no-kvm --sketch-sample 1/8 --sketch-cpu-budget 0 "$@" \
		2>"$TEST_TMP/serve.log"
	SERVER=$SPAWNED
	serve_port "$TEST_TMP/serve.log" "$SERVER" || die "vmhost serve did not start"
}

printf 'basic_auth_users:\n  ops: %s\n' "$(web_hash 's3cret')" >"$TEST_TMP/web.yml"
serve_on 127.0.0.1 --key-file "$KEY" --web-config "$TEST_TMP/web.yml"
URL=http://ops:s3cret@127.0.0.1:$PORT/sketch
curl -s -o "$TEST_TMP/first" -w '%{http_code}' --max-time 300 "$URL" >"$TEST_TMP/code"
check "loopback with basic auth: /sketch is 200 ($(cat "$TEST_TMP/code"))" [ "$(cat "$TEST_TMP/code")" = 200 ]
check "in the sketch file format" sh -c "head -c 8 '$TEST_TMP/first' | grep -q VMHSKTCH"
start=$SECONDS
curl -s -o "$TEST_TMP/second" --max-time 300 "$URL"
check "kept for a minute: the second answer is the same bytes, at once ($((SECONDS - start)) s)" \
	cmp -s "$TEST_TMP/first" "$TEST_TMP/second"
"$VMHOST" share plan --from "$URL" --sketch "$TEST_TMP/s1.sketch" --json >"$TEST_TMP/plan.json" 2>"$TEST_TMP/plan.err" ||
	die "plan --from failed: $(cat "$TEST_TMP/plan.err")"
SHOWN=http://ops:***@127.0.0.1:$PORT/sketch # the URL as share plan shows it
check "--from reads the served sketches: two hosts, the URL one first" \
	jq -e --arg u "$SHOWN" '(.hosts | length) == 2 and .hosts[0].source == $u and .hosts[0].vms >= 1' "$TEST_TMP/plan.json"
check "serve's sketch of s1 holds what share --out measured" jq -e --argjson p "$S1" \
	'[.vms[] | select(.pid == $p) | {bytes, zero_bytes}] | length == 2 and .[0] == .[1]' "$TEST_TMP/plan.json"
check "and s1 shares all of its non-zero pages with itself as served" jq -e --argjson p "$S1" --arg u "$SHOWN" \
	'[.vms[] | select(.pid == $p and .host != $u)][0] | .best_host == $u' "$TEST_TMP/plan.json"
stop_pid "$SERVER"

# Beyond loopback without authentication: 403 with the reason, and --from passes it on.
serve_on 0.0.0.0 --insecure-listen --key-file "$KEY"
curl -s -o "$TEST_TMP/refused" -w '%{http_code}' "http://127.0.0.1:$PORT/sketch" >"$TEST_TMP/code"
check "--insecure-listen without auth: /sketch is 403 ($(cat "$TEST_TMP/code"))" [ "$(cat "$TEST_TMP/code")" = 403 ]
check "with the reason in one line" sh -c "[ \$(wc -l <'$TEST_TMP/refused') = 1 ] && grep -q 'only to authenticated clients' '$TEST_TMP/refused'"
"$VMHOST" share plan --from "http://127.0.0.1:$PORT/sketch" >/dev/null 2>"$TEST_TMP/err"
rc=$?
check "share plan --from: exit 77 ($rc), the server's reason in one line" sh -c "[ $rc = 77 ] &&
	[ \$(wc -l <'$TEST_TMP/err') = 1 ] && grep -q 'HTTP 403: /sketch is served only to authenticated clients' '$TEST_TMP/err'"
check "/metrics is still served there" curl -sf -o /dev/null "http://127.0.0.1:$PORT/metrics"
stop_pid "$SERVER"

# Beyond loopback with basic auth: served to the right password only.
printf 'basic_auth_users:\n  ops: %s\n' "$(web_hash 's3cret')" >"$TEST_TMP/web.yml"
serve_on 0.0.0.0 --web-config "$TEST_TMP/web.yml" --key-file "$KEY"
"$VMHOST" share plan --from "http://ops:s3cret@127.0.0.1:$PORT/sketch" --json >"$TEST_TMP/auth.json" 2>"$TEST_TMP/err"
check "basic auth: --from with the user and password reads the sketches" \
	jq -e --argjson p "$S1" 'any(.vms[]; .pid == $p)' "$TEST_TMP/auth.json"
"$VMHOST" share plan --from "http://ops:wrong@127.0.0.1:$PORT/sketch" >/dev/null 2>"$TEST_TMP/err"
rc=$?
check "a wrong password: exit 77 ($rc), 401" sh -c "[ $rc = 77 ] && grep -q 'HTTP 401' '$TEST_TMP/err'"
stop_pid "$SERVER"

# SIGTERM in the middle of a slow sketching run (1% of a CPU over 256 MiB: about a minute): serve
# stops within seconds, the run cut short, not waited for.
fake_guest serve-big -m 256 -fake-seed 7202 -fake-guest "$RANDOM" -fake-nomerge
BIG=$SPAWNED
spawn "$VMHOST" serve --listen 127.0.0.1:0 --min-interval 5 --no-kvm --key-file "$KEY" --sketch-cpu-budget 1 \
	--web-config "$TEST_TMP/web.yml" 2>"$TEST_TMP/serve.log"
SERVER=$SPAWNED
serve_port "$TEST_TMP/serve.log" "$SERVER" || die "vmhost serve did not start"
curl -s -o /dev/null --max-time 120 "http://ops:s3cret@127.0.0.1:$PORT/sketch" &
CURL=$!
sleep 2
start=$SECONDS
kill -TERM "$SERVER"
for i in $(seq 100); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
check "SIGTERM during a sketching run: serve stopped in $((SECONDS - start)) s (at most 10)" sh -c "! kill -0 $SERVER 2>/dev/null"
stop_pid "$SERVER"
wait "$CURL" 2>/dev/null
stop_pid "$BIG"

serve_on 127.0.0.1
check "without --key-file: no /sketch (404)" [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/sketch")" = 404 ]
"$VMHOST" share plan --from "https://127.0.0.1:$PORT/sketch" --timeout 5 >/dev/null 2>"$TEST_TMP/err"
rc=$?
check "https:// to a plain HTTP serve: exit 1 ($rc), TLS failed, in one line ($(cat "$TEST_TMP/err"))" sh -c "[ $rc = 1 ] &&
	[ \$(wc -l <'$TEST_TMP/err') = 1 ] && grep -q ': TLS: ' '$TEST_TMP/err'"
stop_pid "$SERVER"
stop_pid "$S1"
finish
