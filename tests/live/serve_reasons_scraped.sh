# serve's HTTP threads render samples while the sampler's thread adds the KVM exit-reason
# counters: a real /dev/kvm guest appears while four clients scrape serve --kvm-reasons
# --kvm-events at --min-interval 0 (a new sample per scrape). Every scrape must answer, the
# reasons must appear, and in the ThreadSanitizer build (label tsan, `make check-tsan`) TSan
# must find no race: the server stops at the first report (halt_on_error) and its log says where.
# Needs /dev/kvm, debugfs and tracefs (mounted in a private mount namespace): skipped otherwise.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
[ -c /dev/kvm ] || { say "SKIP: /dev/kvm is absent on this machine (no KVM to run a guest on)"; exit 77; }
unshare -m true 2>/dev/null || { say "SKIP: no mount namespace for debugfs and tracefs (not root?)"; exit 77; }
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 exitcode=66}"
G=$VMHOST_BUILD/kvmguest
CLIENTS=4

# Another KVM VM would bring the reasons before the first scrape: wait up to 30 s for none.
kvm_vms() { unshare -m sh -c 'mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	ls /sys/kernel/debug/kvm' 2>/dev/null | grep -c -- -; }
for i in $(seq 60); do [ "$(kvm_vms)" = 0 ] && break; sleep 0.5; done

spawn unshare -m sh -c 'mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exec "$0" serve --listen 127.0.0.1:0 --min-interval 0 --threads 4 --kvm-reasons --kvm-events "exits|/"' \
	"$VMHOST" 2>"$TEST_TMP/serve.log"
SERVER=$SPAWNED
serve_port "$TEST_TMP/serve.log" "$SERVER" || die "serve did not start"
curl -s "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/first.txt"
if grep -q '^vmhost_kvm_exit_reasons_total' "$TEST_TMP/first.txt"; then
	say "SKIP: another KVM VM runs on this host, so the reasons were there before any scrape"
	stop_pid "$SERVER"
	exit 77
fi

# scraper N: scrapes for at most 8 s (at most 400 times), counting answers and failures.
scraper() {
	local ok=0 bad=0 end=$((SECONDS + 8)) i
	for i in $(seq 400); do
		[ $SECONDS -ge $end ] && break
		[ -f "$TEST_TMP/stop" ] && break
		if curl -sf -m 10 -o /dev/null "http://127.0.0.1:$PORT/metrics"; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
	done
	echo "$ok $bad" >"$TEST_TMP/scraper.$1"
}
for c in $(seq $CLIENTS); do
	scraper "$c" &
	TEST_PIDS="$TEST_PIDS $!"
done
sleep 1
# The guest's VM appears while they scrape: its events open, and the reason counters with them.
spawn "$G" --io 1000 --sleep-before 1 --sleep-after 3 >"$TEST_TMP/guest"
GUEST=$SPAWNED
sleep 3
touch "$TEST_TMP/stop"
wait $(echo "$TEST_PIDS" | tr ' ' '\n' | grep -vx -e "$SERVER" -e "$GUEST" -e '')
curl -s "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/last.txt"
ok=$(cat "$TEST_TMP"/scraper.* | awk '{ s += $1 } END { print s + 0 }')
bad=$(cat "$TEST_TMP"/scraper.* | awk '{ s += $2 } END { print s + 0 }')
say "$ok scrapes answered, $bad failed, by $CLIENTS clients"
check "the clients scraped (at least 20 answers)" ge "$ok" 20
check "every scrape answered" [ "$bad" = 0 ]
check "the guest's exit reasons appeared while scraped" \
	grep -q "^vmhost_kvm_exit_reasons_total{.*pid=\"$GUEST\".*event=\"kvm_pio\",reason=\"0x80 out\"} 1000$" "$TEST_TMP/last.txt"
check "--kvm-events kept the matching counters only (no time counters)" sh -c "! grep -q '^vmhost_kvm_time_seconds_total{' '$TEST_TMP/last.txt'"
check "the server ran throughout" kill -0 "$SERVER"
kill -TERM "$SERVER"
wait "$SERVER"
rc=$?
check "serve stopped on SIGTERM with status 0 (was $rc)" [ "$rc" = 0 ]
if grep -q 'ThreadSanitizer' "$TEST_TMP/serve.log"; then
	fail "ThreadSanitizer reported:"
	sed -n '/ThreadSanitizer/,$p' "$TEST_TMP/serve.log" | head -60
fi
stop_pid "$GUEST"
finish
