#!/bin/bash
# serve whose gathering never ends, as a forged VM's monitor that never answers would make it:
# serve still listens, every scrape is answered within --scrape-timeout (503 before the first
# snapshot, then the last one with its age in X-Vmhost-Snapshot-Age), and SIGTERM stops it within
# seconds. The gathering hangs on a FIFO in a --proc-root tree (opening /proc/meminfo blocks
# until someone writes it): no test hook in the binary.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
for tool in curl mkfifo; do command -v $tool >/dev/null || die "$tool is missing"; done

ROOT=$TEST_TMP/host
cp -a "$VMHOST_FIXTURES/serve" "$ROOT"
mv "$ROOT/proc/meminfo" "$TEST_TMP/meminfo"
mkfifo "$ROOT/proc/meminfo"
# feed: one gathering gets meminfo through the FIFO; the next one hangs again. A gathering may
# open it twice (pread fails on a FIFO, and io/io.c then reads from a fresh open): a second writer
# (SECOND, its pid) serves that open; it is stopped once the fed snapshot is scraped (unfed: not
# after a fixed second, which a slow gathering could open it after), so the next gathering hangs.
feed() {
	cat "$TEST_TMP/meminfo" >"$ROOT/proc/meminfo"
	timeout 60 sh -c 'cat "$1" >"$2"' sh "$TEST_TMP/meminfo" "$ROOT/proc/meminfo" &
	SECOND=$!
	adopt "$SECOND"
}
# scrape N: GET /metrics, headers in $TEST_TMP/hN, body in bN; prints "CODE SECONDS".
scrape() {
	curl -s -D "$TEST_TMP/h$1" -o "$TEST_TMP/b$1" -w '%{http_code} %{time_total}\n' --max-time 20 \
		"http://127.0.0.1:$PORT/metrics"
}
age() { sed -n 's/^X-Vmhost-Snapshot-Age: *\([0-9.]*\).*/\1/Ip' "$TEST_TMP/h$1"; }

start=$SECONDS
serve_start "$TEST_TMP/serve.log" "$ROOT" --no-kvm --min-interval 1 --scrape-timeout 2 ||
	die "serve did not start while its first gathering hangs"
check "it listens though the first gathering hangs, and says so ($((SECONDS - start)) s)" \
	grep -q 'first gathering is taking over 2 s' "$TEST_TMP/serve.log"

read -r code t < <(scrape 1)
check "no snapshot yet: 503 ($code) within the scrape timeout ($t s)" sh -c "[ '$code' = 503 ] && awk 'BEGIN{exit !($t <= 2)}'"
check "... with Retry-After" grep -qi '^Retry-After:' "$TEST_TMP/h1"

feed
# scraped until the fed gathering is in (503 till then), 30 s at most: not 0.5 s after the feed
for i in $(seq 30); do
	read -r code t < <(scrape 2)
	[ "$code" = 503 ] || break
done
stop_pid "$SECOND"
check "the first gathering fed: 200 ($code) within the scrape timeout ($t s)" sh -c "[ '$code' = 200 ] && awk 'BEGIN{exit !($t <= 2)}'"
check "... the host's metrics" grep -q '^vmhost_host_mem_total_bytes ' "$TEST_TMP/b2"

sleep 1.2 # past --min-interval: the scrape asks for a gathering, which hangs
read -r code t < <(scrape 3)
check "a gathering that hangs: 200 ($code) within the scrape timeout ($t s)" sh -c "[ '$code' = 200 ] && awk 'BEGIN{exit !($t <= 2)}'"
check "... the last snapshot, its age said ($(age 3) s)" sh -c "[ -n '$(age 3)' ] && awk 'BEGIN{exit !($(age 3 || echo 0) >= 1)}'"
check "... and its metrics" grep -q '^vmhost_host_mem_total_bytes ' "$TEST_TMP/b3"

# Eight scrapes at once while the gathering still hangs: each answered at once, none queued
# behind another's wait.
pids=
for i in 1 2 3 4 5 6 7 8; do
	scrape "p$i" >"$TEST_TMP/p$i.out" &
	pids="$pids $!"
done
wait $pids
slow=$(cat "$TEST_TMP"/p*.out | awk '$1 != 200 || $2 > 2' | wc -l)
check "eight scrapes at once: each 200 within the scrape timeout ($(cat "$TEST_TMP"/p*.out | tr '\n' ' '))" [ "$slow" = 0 ]

start=$(date +%s.%N)
kill -TERM "$SERVER"
for i in $(seq 100); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
check "SIGTERM with the gathering hung: serve stopped in $took s (at most 4)" sh -c "! kill -0 $SERVER 2>/dev/null && awk 'BEGIN{exit !($took <= 4)}'"
check "... saying what it left behind" grep -q 'stopped (SIGTERM), a gathering that did not end left behind' "$TEST_TMP/serve.log"
stop_pid "$SERVER"
finish
