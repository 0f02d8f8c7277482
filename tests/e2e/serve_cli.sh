#!/bin/bash
# vmhost serve from the command line on the fixture host: errors, a scrape promtool accepts,
# a busy port, socket activation, a clean stop on SIGTERM.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
FIX=$VMHOST_FIXTURES/serve
V="$VMHOST --proc-root $FIX/proc --sys-root $FIX/sys"

check "--help prints the usage" sh -c "$V serve --help | grep -q -- '--min-interval'"
check "a bad --listen is a usage error" expect_exit 2 --listen nonsense
check "a bare IPv6 address needs brackets" expect_exit 2 --listen ::1:9464
check "a negative --min-interval is a usage error" expect_exit 2 --min-interval -1
check "--threads 0 is a usage error" expect_exit 2 --threads 0
check "an extra argument is a usage error" expect_exit 2 extra
check "an unreadable --proc-root fails in one line" expect_exit 1 --proc-root /nonexistent --listen 127.0.0.1:0
check "--db in a missing directory fails in one line" expect_exit 1 --db "$TEST_TMP/no/such/dir/x.db" --listen 127.0.0.1:0
check "--db-interval 0 is a usage error" expect_exit 2 --db "$TEST_TMP/x.db" --db-interval 0
check "--detail takes basic or full" expect_exit 2 --detail most
check "--capacity-size takes a size" expect_exit 2 --capacity-size 4X
check "  ... and says so, naming the bad one" \
	grep -qF -- "--capacity-size takes a guest's RAM as a size (e.g. 4G, 512M), not '4X'" "$TEST_TMP/err"
check "--capacity-size 0 is a usage error" expect_exit 2 --capacity-size 0

serve_start "$TEST_TMP/serve.log" "$FIX" --pid 20000 --detail full --capacity-size 1G --capacity-size 256M \
	--capacity-size 1024M || die "cannot start"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics.txt"
check "the scrape passes promtool check metrics" sh -c "promtool check metrics <'$TEST_TMP/metrics.txt'"
check "the fixture VM is there with its labels" grep -q \
	'^vmhost_vm_guest_ram_bytes{vm="vm1",pid="10001",uuid="00000001-0000-4000-8000-000000000001"} 2147483648$' \
	"$TEST_TMP/metrics.txt"
check "the --pid process is there as a plain process" grep -q \
	'^vmhost_vm_info{vm="",pid="20000",uuid="",vmm="process",cgroup="/user.slice"} 1$' "$TEST_TMP/metrics.txt"
# docs/capacity.md's figures by hand: room 37993426125 bytes, a QEMU's overhead 1083691008 (the median).
check "--capacity-size: how many more guests fit now, by size" grep -qx \
	'vmhost_host_capacity_vms{size="1GiB",when="now"} 17' "$TEST_TMP/metrics.txt"
check "  ... 1G and 1024M are one series" [ "$(grep -c 'size="1GiB"' "$TEST_TMP/metrics.txt")" = 1 ]
check "  ... none after reclaim: serve does not ask the guests" \
	sh -c "! grep -q 'when=\"after_reclaim\"' '$TEST_TMP/metrics.txt'"
check "every family has HELP and TYPE" sh -c "
	awk '/^# TYPE /{t[\$3]=1} /^# HELP /{h[\$3]=1}
	     !/^#/{n=\$1; sub(/\\{.*/, \"\", n); if (!(n in t) || !(n in h)) { print \"no metadata: \" n; bad=1 }}
	     END{exit bad}' '$TEST_TMP/metrics.txt'"
check "OpenMetrics on request ends with # EOF" sh -c "curl -sf -H 'Accept: application/openmetrics-text; version=1.0.0' \
	http://127.0.0.1:$PORT/metrics | tail -n1 | grep -qx '# EOF'"
check "POST is refused with 405" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' -X POST http://127.0.0.1:$PORT/metrics) = 405 ]"

check "a busy port fails in one line" expect_exit 1 --listen "127.0.0.1:$PORT"
grep -q 'Address already in use' "$TEST_TMP/err" || fail "the busy-port error names the cause: $(cat "$TEST_TMP/err")"

stop_pid "$SERVER"
wait "$SERVER" 2>/dev/null
check "SIGTERM stops it cleanly" grep -q 'stopped (SIGTERM)' "$TEST_TMP/serve.log"

# systemd socket activation: the listening socket arrives as fd 3 with LISTEN_PID/LISTEN_FDS.
spawn python3 -c '
import os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
os.dup2(s.fileno(), 3); os.set_inheritable(3, True)
os.environ["LISTEN_PID"] = str(os.getpid()); os.environ["LISTEN_FDS"] = "1"
os.execv(sys.argv[1], sys.argv[1:])' $V serve --listen 127.0.0.1:1 >"$TEST_TMP/port" 2>"$TEST_TMP/act.log"
ACT=$SPAWNED
for i in $(seq 100); do grep -q listening "$TEST_TMP/act.log" && break; sleep 0.1; done
APORT=$(head -n1 "$TEST_TMP/port")
check "socket-activated: serves on the passed socket" sh -c "curl -sf http://127.0.0.1:$APORT/metrics | grep -q '^vmhost_vms 2$'"
check "socket-activated: says --listen is ignored" grep -q 'socket-activated' "$TEST_TMP/act.log"
stop_pid "$ACT"

# LISTEN_FDS=2 (a unit with two ListenStream=): serve uses the first, and no passed socket leaks
# into what it starts (each is close-on-exec: O_CLOEXEC, 02000000, in /proc/PID/fdinfo's flags).
spawn python3 -c '
import os, socket, sys
a = socket.socket(); a.bind(("127.0.0.1", 0)); a.listen(16)
b = socket.socket(); b.bind(("127.0.0.1", 0)); b.listen(16)
print(a.getsockname()[1], flush=True)
os.dup2(a.fileno(), 3); os.dup2(b.fileno(), 4); os.set_inheritable(3, True); os.set_inheritable(4, True)
os.environ["LISTEN_PID"] = str(os.getpid()); os.environ["LISTEN_FDS"] = "2"
os.execv(sys.argv[1], sys.argv[1:])' $V serve >"$TEST_TMP/port2" 2>"$TEST_TMP/act2.log"
ACT=$SPAWNED
for i in $(seq 100); do grep -q listening "$TEST_TMP/act2.log" && break; sleep 0.1; done
APORT=$(head -n1 "$TEST_TMP/port2")
cloexec() { local f; f=$(sed -n 's/^flags:[[:space:]]*//p' "/proc/$ACT/fdinfo/$1") && (((8#$f & 8#2000000) != 0)); }
check "two sockets passed: serves on the first" sh -c "curl -sf http://127.0.0.1:$APORT/metrics | grep -q '^vmhost_vms 2$'"
check "two sockets passed: the first is close-on-exec" cloexec 3
check "two sockets passed: the second is close-on-exec" cloexec 4
stop_pid "$ACT"

# Only serve loads libmicrohttpd (src/net/mhd.h): on a host without it, serve says which library
# is missing in one line and the other commands work (without_library: tests/lib.sh).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	without_library microhttpd $V serve --listen 127.0.0.1:0 >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
	rc=$?
	check "without libmicrohttpd serve fails in one line that names it (rc=$rc: $(cat "$TEST_TMP/err"))" sh -c "
		[ $rc = 1 ] && [ \$(wc -l <'$TEST_TMP/err') = 1 ] && grep -q 'libmicrohttpd.so.*apt install libmicrohttpd' '$TEST_TMP/err'"
	without_library microhttpd $V mem --json >"$TEST_TMP/mem.json"
	check "without libmicrohttpd the other commands work" jq -e '.vms | length == 2' "$TEST_TMP/mem.json"
else
	skip_part "not root, or no unshare: serve without libmicrohttpd is not checked"
fi
finish
