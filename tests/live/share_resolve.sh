#!/bin/bash
# share plan --from: --timeout covers the host name's lookup. A resolver that never answers is a
# loopback address (127.0.0.77:53) that reads queries and drops them; resolv.conf naming it, with
# 30 s a try, is bind-mounted in a private mount namespace (the machine's own is not touched). With
# --timeout 2 share plan returns within 3 s (getaddrinfo alone held it 30 s), for http:// and
# https:// alike; a name that does not resolve at all still says so.
. "$VMHOST_TESTS/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root: a mount namespace and port 53"
for tool in unshare mount bc /usr/bin/python3; do command -v $tool >/dev/null || die "$tool is missing"; done

# resolver ADDR MODE: a UDP "resolver" on ADDR:53 that drops queries (MODE silent) or answers each
# with NXDOMAIN (MODE nxdomain); waits until it listens.
resolver() {
	spawn /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
print("ready", flush=True)
while True:
    q, peer = s.recvfrom(4096)
    if sys.argv[2] == "nxdomain" and len(q) > 12:
        # the query back as a response: QR, RD and RA set, RCODE 3 (no such name)
        s.sendto(q[:2] + bytes([0x81, 0x83]) + q[4:], peer)' "$1" "$2" >"$TEST_TMP/dns-$2.log"
	for i in $(seq 50); do grep -q ready "$TEST_TMP/dns-$2.log" && return 0; sleep 0.1; done
	die "the $2 resolver did not start"
}

# plan_with RESOLVER URL: share plan --from URL --timeout 2 with resolv.conf naming RESOLVER, in a
# private mount namespace; its exit code in RC, its seconds in TOOK, stderr in err.
plan_with() {
	local t0
	printf 'nameserver %s\noptions timeout:30 attempts:1\n' "$1" >"$TEST_TMP/resolv.conf"
	t0=$(date +%s.%N)
	unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$TEST_TMP/resolv.conf" \
		"$VMHOST" share plan --from "$2" --timeout 2 >/dev/null 2>"$TEST_TMP/err"
	RC=$?
	TOOK=$(echo "$(date +%s.%N) - $t0" | bc)
}
# exited CODE MAX: the last plan exited CODE within MAX seconds beyond what starting and ending the
# command takes (BASE: a refused connection to loopback; ~1 s under ThreadSanitizer, 0.01 s else).
exited() { [ "$RC" = "$1" ] && le "$TOOK" "$(echo "$2 + $BASE" | bc)"; }
one_line() { [ "$(wc -l <"$TEST_TMP/err")" = 1 ] && grep -q "$1" "$TEST_TMP/err"; }

# Under ThreadSanitizer a process that exits while another thread runs (the abandoned lookup)
# sleeps atexit_sleep_ms first, 1 s by default: not the command's time.
[ -n "${TSAN_OPTIONS:-}" ] && export TSAN_OPTIONS="$TSAN_OPTIONS atexit_sleep_ms=0"
t0=$(date +%s.%N)
"$VMHOST" share plan --from http://127.0.0.1:1/sketch --timeout 2 >/dev/null 2>&1
BASE=$(echo "$(date +%s.%N) - $t0" | bc)
resolver 127.0.0.77 silent
for url in http://sketch-host.vmhost-test.invalid:9/sketch https://sketch-host.vmhost-test.invalid:9/sketch; do
	plan_with 127.0.0.77 "$url"
	check "a resolver that never answers, ${url%%:*}: --timeout 2 returns in $TOOK s (at most 3 + $BASE), exit 1 ($RC)" exited 1 3
	check "  ... saying it timed out, in one line ($(cat "$TEST_TMP/err"))" one_line "no answer within --timeout 2 s"
done
resolver 127.0.0.78 nxdomain
plan_with 127.0.0.78 http://sketch-host.vmhost-test.invalid:9/sketch
check "a name the resolver says does not exist: exit 1 ($RC) at once ($TOOK s, at most 1 + $BASE)" exited 1 1
check "  ... in one line ($(cat "$TEST_TMP/err"))" one_line "resolve"
finish
