# serve's HTTP threads render samples while the sampler's thread adds the KVM exit-reason
# counters: a real /dev/kvm guest appears while clients scrape serve --kvm-reasons --kvm-events
# at --min-interval 0 (a new sample per scrape). Every scrape must answer, the reasons must
# appear, and in the ThreadSanitizer build (label tsan, `make check-tsan`) TSan must find no race:
# the server stops at the first report (halt_on_error) and its log says where. The reasons appear
# once per server, and TSan saw the old code's race in about a third of such runs here: under
# TSan the test makes 8 of them (about 25 s), elsewhere two. Rounds alternate the counters: eBPF
# timing the exits too (odd rounds, --kvm-reasons-time: the time families rendered while they
# appear) and the perf filters (even, VMHOST_KVM_REASONS=perf); the ASan build runs it too.
# Needs /dev/kvm, debugfs and tracefs (mounted in a private mount namespace): skipped otherwise.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
[ -c /dev/kvm ] || { say "SKIP: /dev/kvm is absent on this machine (no KVM to run a guest on)"; exit 77; }
unshare -m true 2>/dev/null || { say "SKIP: no mount namespace for debugfs and tracefs (not root?)"; exit 77; }
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 exitcode=66}"
G=$VMHOST_BUILD/kvmguest
CLIENTS=4
ROUNDS=2
ldd "$VMHOST" 2>/dev/null | grep -q libtsan && ROUNDS=8
OM='Accept: application/openmetrics-text; version=1.0.0'

# serve sees a /proc of its own: the host's files and processes but its VMs (this host may be
# shared: another's VM would bring the reasons before any scrape), and the guest once it runs.
PROC=$TEST_TMP/proc
mkdir "$PROC"
for e in /proc/*; do
	case ${e##*/} in
	*[!0-9]*) ln -s "$e" "$PROC/" ;;
	*) tr '\0' ' ' <"$e/cmdline" 2>/dev/null | grep -Eq 'qemu|kvm|crosvm|firecracker|cloud-hyp|fakeguest' ||
		ln -s "$e" "$PROC/" ;;
	esac
done

# scraper N [HEADER]: batches of 20 scrapes on one kept-alive connection, back to back (no
# process start between two, so a render of one sample runs while the next is taken), until
# $TEST_TMP/stop or 15 s; one status code a line into $TEST_TMP/scraper.N.
scraper() {
	local args=() i end=$((SECONDS + 15))
	for i in $(seq 20); do args+=(-o /dev/null "http://127.0.0.1:$PORT/metrics"); done
	: >"$TEST_TMP/scraper.$1"
	while [ ! -f "$TEST_TMP/stop" ] && [ $SECONDS -lt $end ]; do
		timeout 10 curl -s -w '%{http_code}\n' ${2:+-H "$2"} "${args[@]}" >>"$TEST_TMP/scraper.$1"
	done
}

# guest_counted N TIMEOUT_S: a scrape shows the guest's port 0x80 writes as N, within the time.
guest_counted() {
	local i
	for i in $(seq $(($2 * 10))); do
		curl -s "http://127.0.0.1:$PORT/metrics" |
			grep -q "^vmhost_kvm_exit_reasons_total{.*pid=\"$GUEST\".*event=\"kvm_pio\",reason=\"0x80 out\"} $1\$" && return 0
		sleep 0.1
	done
	return 1
}

# round N: a fresh server and a fresh guest, its checks named "round N: ...".
round() {
	local r=$1 scrapers="" c i rc ok bad mode option
	mode=$([ $((r % 2)) = 1 ] && echo bpf || echo perf)
	option=$([ $mode = bpf ] && echo --kvm-reasons-time || echo --kvm-reasons)
	rm -f "$TEST_TMP/stop" "$TEST_TMP"/scraper.*
	spawn env VMHOST_KVM_REASONS=$mode unshare -m sh -c 'mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
		mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
		exec "$0" --proc-root "$1" serve --listen 127.0.0.1:0 --min-interval 0 --threads 4 "$2" --kvm-events "exits|/"' \
		"$VMHOST" "$PROC" "$option" 2>"$TEST_TMP/serve.log"
	SERVER=$SPAWNED
	serve_port "$TEST_TMP/serve.log" "$SERVER" || die "round $r: serve did not start"
	curl -s "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/first.txt"
	check "round $r: no exit reasons before the guest" sh -c "! grep -q '^vmhost_kvm_exit_reasons_total' '$TEST_TMP/first.txt'"
	for c in $(seq $CLIENTS); do
		scraper "$c" "$([ $((c % 2)) = 0 ] && echo "$OM")" & # both formats rendered
		scrapers="$scrapers $!"
	done
	adopt "$scrapers"
	sleep 0.5
	# The guest's VM appears while they scrape, in debugfs before serve's /proc lists its process
	# (the order a --proc-root tree may show them in): a scrape after its VM exists makes serve
	# meet it there first. Its events open once the process is listed, and the reason counters
	# with them; it runs once they are open, and then sleeps until stopped.
	spawn "$G" --io 1000 --wait-signal --sleep-after 60 >"$TEST_TMP/guest"
	GUEST=$SPAWNED
	for i in $(seq 100); do grep -q '^ready' "$TEST_TMP/guest" && break; sleep 0.1; done
	curl -s "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/unlisted.txt"
	check "round $r: no counters for the guest while its process is unlisted" \
		sh -c "! grep -q 'pid=\"$GUEST\"' '$TEST_TMP/unlisted.txt'"
	ln -s "/proc/$GUEST" "$PROC/$GUEST"
	check "round $r: the guest's counters opened once its process was listed" guest_counted 0 30
	kill -USR1 "$GUEST"
	for i in $(seq 100); do grep -q '^io_exits=' "$TEST_TMP/guest" && break; sleep 0.1; done
	sleep 0.5 # scraped with the counts in
	touch "$TEST_TMP/stop"
	wait $scrapers
	curl -s "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/last.txt"
	ok=$(cat "$TEST_TMP"/scraper.* | grep -c '^200$')
	bad=$(cat "$TEST_TMP"/scraper.* | grep -vc '^200$')
	say "round $r: $ok scrapes answered, $bad failed, by $CLIENTS clients"
	check "round $r: the clients scraped (at least 100 answers)" ge "$ok" 100
	check "round $r: every scrape answered" [ "$bad" = 0 ]
	check "round $r: the guest's exit reasons appeared while scraped" \
		grep -q "^vmhost_kvm_exit_reasons_total{.*pid=\"$GUEST\".*event=\"kvm_pio\",reason=\"0x80 out\"} 1000$" "$TEST_TMP/last.txt"
	grep -q "^vmhost_kvm_exit_reasons_total{.*pid=\"$GUEST\".*reason=\"0x80 out\"} 1000$" "$TEST_TMP/last.txt" || {
		say "the guest said: $(cat "$TEST_TMP/guest"); its port 0x80 counters at the end:"
		grep "^vmhost_kvm_exit_reasons_total{.*pid=\"$GUEST\".*0x80" "$TEST_TMP/last.txt"
	}
	[ $mode = bpf ] && check "round $r: the guest's 1000 IO exits timed" \
		grep -q "^vmhost_kvm_exit_reason_timed_total{.*pid=\"$GUEST\".*event=\"kvm_userspace_exit\",reason=\"IO\"} 1000$" "$TEST_TMP/last.txt"
	check "round $r: --kvm-events kept the matching counters only (no time counters)" \
		sh -c "! grep -q '^vmhost_kvm_time_seconds_total{' '$TEST_TMP/last.txt'"
	check "round $r: the server ran throughout" kill -0 "$SERVER"
	kill -0 "$SERVER" 2>/dev/null || sed -n '1,60p' "$TEST_TMP/serve.log"
	check "round $r: counted by $mode, said once in the log" \
		test "$(grep -c "exit reasons counted by $([ $mode = bpf ] && echo eBPF || echo perf)" "$TEST_TMP/serve.log")" = 1
	kill -TERM "$SERVER"
	wait "$SERVER"
	rc=$?
	check "round $r: serve stopped on SIGTERM with status 0 (was $rc)" [ "$rc" = 0 ]
	if grep -q 'ThreadSanitizer' "$TEST_TMP/serve.log"; then
		fail "round $r: ThreadSanitizer reported:"
		sed -n '/ThreadSanitizer/,$p' "$TEST_TMP/serve.log" | head -60
	fi
	stop_pid "$GUEST"
	rm -f "$PROC/$GUEST"
}

for r in $(seq $ROUNDS); do
	round "$r"
	[ "$FAILURES" = 0 ] || break
done
finish
