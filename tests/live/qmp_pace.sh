# QEMU 7.1-8.0 answer vCPU query-stats by interrupting every vCPU: long-running readers (exits
# --log, top, serve) read such a QEMU at most every --kvm-interval, reusing its last figures in
# between, and say so in one line. The firmware guest under QEMU 7.2 with accel=kvm traces every
# QMP command it handles (-trace handle_qmp_command; -msg timestamp=on -D FILE: the log backend
# stamps each line with the wall clock), and the readers run one after the other, so the vCPU
# query-stats in a reader's window of time are the ones it really sent. (No proxy can stand
# between: vmhost speaks only to a socket the VM process itself listens on.) The test runs in a
# mount namespace of its own, the socket on a tmpfs only it sees (tests/hostile/qmp_alone.sh), so
# no other vmhost on the host (another engineer's serve, say) can find the socket on QEMU's command
# line and add reads.
# Needs /dev/kvm: without it this test is skipped (exit 77) and says so.
. "$VMHOST_TESTS/hostile/qmp_alone.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
P=$VMHOST_BUILD/kvmprobe
SOCK=$ALONE/qmp.sock
TRACE=$TEST_TMP/trace.log
fw_qemu --name paced --qmp "$SOCK" -- -trace handle_qmp_command -msg timestamp=on -D "$TRACE"
QEMU=$SPAWNED
version=$("$P" qmp "$SOCK" query-version | jq -r '.qemu | "\(.major).\(.minor)"')
say "QEMU $version"
case $version in
7.[1-9] | 8.0) ;;
*) skip "QEMU $version answers vCPU query-stats without interrupting the vCPUs: nothing is paced" ;;
esac
grep -q 'handle_qmp_command.*query-version' "$TRACE" || die "QEMU traces no QMP command into $TRACE (its log trace backend)"
# vcpu_reads FROM TO: the vCPU query-stats QEMU handled between those wall-clock times (a reader's
# window), one time a line. A trace line: TID@SECONDS.MICROSECONDS:handle_qmp_command mon PTR req: JSON
vcpu_reads() {
	awk -v from="$1" -v to="$2" 'index($0, ":handle_qmp_command ") && index($0, "\"execute\": \"query-stats\"") &&
		index($0, "\"target\": \"vcpu\"") { t = $1; sub(/^[0-9]+@/, "", t); sub(/:.*/, "", t); if (t + 0 >= from + 0 && t + 0 <= to + 0) print t }' "$TRACE"
}
# min_gap: the shortest time between reads after the first three: a reader's first two reads are
# never paced (the first figures need two), and the first of all asks twice (once for the schema)
min_gap() { awk 'NR > 3 { g = $1 - last; if (!m || g < m) m = g } { last = $1 } END { printf "%.3f\n", m ? m : 999 }'; }
# paced WHO MAX WHAT: WHO (the reader whose window is FROM..TO) sent at most MAX vCPU query-stats
# over WHAT, and the fourth on at least 1.96 s apart (--kvm-interval 2, 2% early allowed)
paced() {
	local n gap
	n=$(vcpu_reads "$FROM" "$TO" | wc -l)
	gap=$(vcpu_reads "$FROM" "$TO" | min_gap)
	say "$1: $n vCPU query-stats in $3, shortest gap after the first three $gap s"
	check "$1: at most $2 vCPU reads, not one a refresh" le "$n" "$2"
	check "$1: reads after the first three at least 1.96 s apart" ge "$gap" 1.96
}
# run CMD...: CMD, RC its status, FROM..TO its window of time
run() { FROM=$EPOCHREALTIME; "$@"; RC=$?; TO=$EPOCHREALTIME; }

# exits --log every 0.25 s for 5 s with --kvm-interval 2: its first reads, then one in 2 s.
run "$VMHOST" --json exits --log --interval 0.25 --count 20 --kvm-interval 2 --pid "$QEMU" --fields '^exits$' \
	>"$TEST_TMP/log.json" 2>"$TEST_TMP/log.err"
check "exits --log --kvm-interval 2: exit 0" [ $RC = 0 ]
paced "exits --log" 6 "20 refreshes over 5 s" # 3 + 5/2 + 1
check "exits --log: the JSON says why, every line" \
	jq -se 'all(.[]; .vcpu_stats_paced == "QEMU '"$version"' interrupts every vCPU for query-stats: read every 2 s")' "$TEST_TMP/log.json"
check "exits --log: held lines reuse the last rate (known, > 0) and say how old it is" \
	jq -se '[.[] | .vms[0] | select(.held)] | length >= 3 and all(.[]; .counters.exits.per_second > 0 and .stats_age_seconds >= 0 and .stats_age_seconds < 4 and .stats_interval_seconds > 0)' "$TEST_TMP/log.json"
check "exits --log: the rate of a fresh read is over the time since the last (about 2 s)" \
	jq -se '[.[] | .vms[0] | select(.held == false) | .stats_interval_seconds] | .[1:] | length >= 1 and all(.[]; . >= 1.9 and . < 5)' "$TEST_TMP/log.json"
# The control: --kvm-interval 0 reads it every refresh (the trace does count them).
run "$VMHOST" --json exits --log --interval 0.25 --count 8 --kvm-interval 0 --pid "$QEMU" --fields '^exits$' >/dev/null 2>&1
n0=$(vcpu_reads "$FROM" "$TO" | wc -l)
check "exits --log --kvm-interval 0: every refresh reads it ($n0 for 8 refreshes and the first read)" ge "$n0" 9

# top --batch every 0.5 s for 4 s with --kvm-interval 2
run "$VMHOST" top --batch --interval 0.5 --iterations 8 --kvm-interval 2 >"$TEST_TMP/top.txt" 2>&1
check "top --batch: exit 0" [ $RC = 0 ]
paced top 6 "8 refreshes over 4 s" # 3 + 4/2 + 1
check "top: the paced guest's EXITS/S stays known between reads" \
	sh -c "awk -F'\t' -v p=$QEMU '\$1 == \"vm\" && \$2 == p { print \$11 }' '$TEST_TMP/top.txt' | tail -n +2 | grep -qv 'n/a'"

# serve --min-interval 0, scraped every 0.3 s for 3 s, --kvm-interval 2 (the default 10 s here)
FROM=$EPOCHREALTIME
serve_start "$TEST_TMP/serve.log" "" --min-interval 0 --kvm-interval 2
for i in $(seq 10); do curl -s "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/m.$i"; sleep 0.3; done
stop_pid "$SERVER"
TO=$EPOCHREALTIME
paced serve 5 "10 scrapes over 3 s" # 3 + 3/2 + 1
check "serve: the log says why in one line" grep -q "QEMU $version interrupts every vCPU for query-stats: read every 2 s" "$TEST_TMP/serve.log"
check "serve: the paced guest's exits exported in every scrape" \
	sh -c "for i in \$(seq 10); do grep -q '^vmhost_kvm_events_total{.*pid=\"$QEMU\".*event=\"exits\"' '$TEST_TMP/m.'\$i || exit 1; done"
check "the socket is usable after" test "$("$P" qmp "$SOCK" query-status | jq -r .status)" = running
finish
