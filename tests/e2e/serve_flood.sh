# vmhost serve under a connection flood on loopback: 400 idle connections (10 from each of 40
# addresses, 127.0.0.2 ...) and 40 slowloris ones (a request trickled a byte a second, from 40
# more addresses), reconnected as soon as the server closes them. Every loopback address is one
# client to the guard (any local user can use any of 127.0.0.0/8), so the flood is one client,
# blamed as a whole: a scraper from another network (this host's own non-loopback address) gets
# /metrics 20 times in a row on new connections, each within 2 s; a local scraper that keeps its
# connection alive, as Prometheus does, 20 times on it (its kept-alive connection is shed after
# the flood's, never first); the server's RSS stays bounded. One busy process per CPU makes the
# scrapers slow to send their requests after connecting, as on a loaded host: shedding by age
# alone then lost about one scrape in ten. (A local scraper's new connections compete with a
# local flood's: nothing tells them apart before their requests come in.)
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
FIX=$VMHOST_FIXTURES/serve
spawn $VMHOST --proc-root "$FIX/proc" --sys-root "$FIX/sys" serve --listen 0.0.0.0:0 --insecure-listen \
	2>"$TEST_TMP/serve.log"
SERVER=$SPAWNED
serve_port "$TEST_TMP/serve.log" "$SERVER" || die "cannot start"
# This host's first non-loopback IPv4 address: another client than the flood's.
OTHER=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
cat >"$TEST_TMP/flood.py" <<'EOF'
import socket, sys, time, selectors
port, idle, slow = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
sel = selectors.DefaultSelector()
REQ = b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: slowloris\r\n"
def connect(kind, i):
    src = "127.0.0.%d" % ((2 + i // 10) if kind == "idle" else (60 + i))
    s = socket.socket()
    s.bind((src, 0))
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    sel.register(s, selectors.EVENT_READ, (kind, i, [0]))
    return s
conns = [connect("idle", i) for i in range(idle)] + [connect("slow", i) for i in range(slow)]
print("flooding", flush=True)
reconnects = 0
last = time.monotonic()
while True:
    for key, _ in sel.select(timeout=0.2):
        kind, i, sent = key.data
        try:
            gone = not key.fileobj.recv(4096)
        except OSError:
            gone = True
        if gone:  # closed by the server: come right back
            sel.unregister(key.fileobj)
            key.fileobj.close()
            connect(kind, i)
            reconnects += 1
    if time.monotonic() - last >= 1:
        last = time.monotonic()
        for key in list(sel.get_map().values()):
            kind, i, sent = key.data
            if kind == "slow" and sent[0] < len(REQ):
                try:
                    key.fileobj.send(REQ[sent[0]:sent[0] + 1])
                    sent[0] += 1
                except OSError:
                    pass
        print("reconnects", reconnects, flush=True)
EOF
# The local scraper's connection, kept alive from before the flood (as a Prometheus that has been
# scraping does): one scrape now, 20 once $TEST_TMP/go exists.
cat >"$TEST_TMP/kept.py" <<'EOF'
import http.client, os, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=2, source_address=("127.0.0.1", 0))
def scrape(i):
    t0 = time.monotonic()
    try:
        c.request("GET", "/metrics")
        r = c.getresponse()
        ok = r.status == 200 and b"vmhost_host_mem_total_bytes" in r.read()
    except OSError as e:
        ok = False
        print("scrape", i, "failed:", e)
    print("kept-alive scrape", i, "ok" if ok else "FAILED", "in %d ms" % ((time.monotonic() - t0) * 1000), flush=True)
scrape(0)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
for i in range(1, 21):
    scrape(i)
    time.sleep(0.1)
EOF
/usr/bin/python3 "$TEST_TMP/kept.py" "$PORT" "$TEST_TMP/go" >"$TEST_TMP/kept.out" 2>&1 &
KEPT=$!
adopt "$KEPT"
for i in $(seq 50); do grep -q 'scrape 0' "$TEST_TMP/kept.out" && break; sleep 0.1; done
python3 "$TEST_TMP/flood.py" "$PORT" 400 40 >"$TEST_TMP/flood.out" 2>&1 &
FLOOD=$!
adopt "$FLOOD"
for i in $(seq 50); do grep -q flooding "$TEST_TMP/flood.out" && break; sleep 0.1; done
for i in $(seq "$(nproc)"); do spawn bash -c 'while :; do :; done'; done
# the flood under way (the server has turned connections away and they came back), not 1 s later
wait_for 30 grep -q 'reconnects [1-9]' "$TEST_TMP/flood.out"
# First the kept-alive connection (idle since before the flood: under --timeout, 10 s).
touch "$TEST_TMP/go"
wait "$KEPT"
while read -r line; do say "$line"; done <"$TEST_TMP/kept.out"
check "a local scraper's kept-alive connection: 20 of 20 scrapes answered within 2 s under the flood" \
	[ "$(grep -c 'scrape [1-9][0-9]* ok in' "$TEST_TMP/kept.out")" = 20 ]
if [ -n "$OTHER" ]; then
	ok=0
	for i in $(seq 20); do
		t0=${EPOCHREALTIME/./}
		code=$(curl -s -o "$TEST_TMP/m.txt" -w '%{http_code}' --max-time 2 "http://$OTHER:$PORT/metrics")
		ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
		say "scrape $i from $OTHER: HTTP $code in ${ms} ms"
		[ "$code" = 200 ] && grep -q '^vmhost_host_mem_total_bytes' "$TEST_TMP/m.txt" && ok=$((ok + 1))
	done
	check "from another network: 20 of 20 scrapes answered within 2 s under 400 idle + 40 slowloris connections" [ "$ok" = 20 ]
else
	skip_part "no non-loopback IPv4 address here: the scraper from another network"
fi
check "the flood was really there (it kept reconnecting)" grep -q 'reconnects [1-9]' "$TEST_TMP/flood.out"
rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$SERVER/status)
say "server RSS ${rss} kB; flood: $(tail -1 "$TEST_TMP/flood.out")"
check "the server's RSS stays under 64 MiB" [ "$rss" -lt 65536 ]
kill "$FLOOD"
finish
