# Shared by the hostile QMP tests (tests/hostile/qmp_*.sh), sourced first: the test alone with its
# monitors (qmp_alone.sh, which sources tests/lib.sh), forged QEMUs run as nobody, the hostile peer
# (qmp_peer.py) serving their sockets or another process's, commands bounded in time, and a real
# QEMU whose QMP sessions are counted.
. "$VMHOST_TESTS/hostile/qmp_alone.sh"
# Where an unprivileged forger keeps its sockets and logs; the peer's code, readable by nobody.
FORGED_DIR=$ALONE/nobody
mkdir "$FORGED_DIR" && chown nobody:nogroup "$FORGED_DIR" || die "cannot make $FORGED_DIR for nobody"
PEER=$ALONE/qmp_peer.py
cp "$VMHOST_TESTS/hostile/qmp_peer.py" "$PEER" && chmod 644 "$PEER" || die "cannot copy qmp_peer.py"
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
command -v setpriv >/dev/null || skip "setpriv missing (util-linux): cannot run a forger as nobody"

# forged_qemu NAME MODE SOCKET [ARGS...]: a forged QEMU, as nobody: Python with argv[0]
# qemu-system-x86_64 and QEMU's options ("-name NAME -m 64M ARGS... -qmp unix:SOCKET,server=on,
# wait=off", after its code), a balloon device and a disk on its command line so that --guest and
# --io visit it; qmp_peer.py's MODE (sleep: serves nothing; flood, slow, endless: serves SOCKET
# itself, logging what it reads into SOCKET.log). SPAWNED is its pid; returns once it runs as a
# QEMU (its command line Python's, argv[0] QEMU's) and, unless MODE is sleep, its socket is there.
# With FORGED_AFTER=FILE it is dormant at first (a shell, no QEMU) and becomes the forged QEMU, in
# the same pid, once FILE exists (forged_ready waits for that): a pid from before another process's.
forged_qemu() {
	local name=$1 mode=$2 sock=$3 dormant=()
	shift 3
	[ -n "${FORGED_AFTER:-}" ] && dormant=(bash -c 'until [ -e "$0" ]; do sleep 0.1; done; exec "$@"' "$FORGED_AFTER")
	spawn "${AS_NOBODY[@]}" "${dormant[@]}" env QMP_PEER="$mode" QMP_PEER_LOG="$sock.log" "${AS_QEMU[@]}" \
		/usr/bin/python3 -c "exec(open('$PEER').read())" -name "$name" -m 64M \
		-device virtio-balloon-pci,id=balloon0 -drive "file=$FORGED_DIR/$name.raw,if=virtio,id=drive0" "$@" \
		-qmp "unix:$sock,server=on,wait=off"
	[ -n "${FORGED_AFTER:-}" ] || forged_ready "$SPAWNED" "$name"
	[ "$mode" = sleep ] || wait_socket "$sock"
}

# forged_ready PID NAME: waits up to 10 s until the forged QEMU runs as one.
forged_ready() {
	local i
	for i in $(seq 100); do
		[ "$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | cut -d' ' -f1-2)" = "qemu-system-x86_64 -c" ] && break
		sleep 0.1
	done
	[ "$(readlink "/proc/$1/exe")" = "$(readlink -f /usr/bin/python3)" ] || die "forged QEMU $2 did not start"
}

# peer_server MODE SOCKET: qmp_peer.py as a server of its own on SOCKET, as nobody, logging what it
# reads into SOCKET.log: another process than any VM whose command line names SOCKET. SPAWNED is
# its pid; returns once the socket is there.
peer_server() {
	spawn "${AS_NOBODY[@]}" env QMP_PEER="$1" QMP_PEER_LOG="$2.log" /usr/bin/python3 "$PEER" -qmp "unix:$2,server=on"
	wait_socket "$2"
}

# wait_socket PATH: waits up to 10 s for the socket.
wait_socket() {
	local i
	for i in $(seq 100); do
		[ -S "$1" ] && return 0
		sleep 0.1
	done
	die "no socket $1"
}

# bounded NAME ARGS...: vmhost ARGS under `timeout -k 10 60` (a hostile monitor must not hold it:
# finishing is what is checked, never how fast; KILL 10 s after TERM, which a reader spinning in a
# monitor's flood never looked at before 56bcd57), stdout into TEST_TMP/NAME.out, stderr
# TEST_TMP/NAME.err; RC its status. Checks that it finished, with one of the statuses OK_STATUS
# allows (default 0), and that no sanitizer reported (the suite runs under ASan and TSan too,
# where a report's status may be one OK_STATUS allows).
bounded() {
	local name=$1
	shift
	timeout -k 10 60 "$VMHOST" "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err"
	RC=$?
	check "vmhost $* finishes (status $RC; 124 or 137: still running after 60 s)" \
		sh -c "case ' ${OK_STATUS:-0} ' in *' $RC '*) ;; *) exit 1 ;; esac
			! grep -E 'ERROR: [A-Za-z]+Sanitizer|WARNING: ThreadSanitizer|runtime error:' '$TEST_TMP/$name.err'"
}

# of NAME PID JQ: JQ on the VM of that pid in TEST_TMP/NAME.out (a mem --json document).
of() { jq -r --argjson p "$2" ".vms[] | select(.pid == \$p) | $3" "$TEST_TMP/$1.out"; }

# top_column PID COLUMN: that VM's COLUMN (a header name) in every refresh of TEST_TMP/top.out (top
# --batch), one a line.
top_column() {
	awk -F'\t' -v p="$1" -v c="$2" '$1 == "kind" { for (i = 1; i <= NF; i++) if ($i == c) k = i }
		$1 == "vm" && $2 == p && k { print $k }' "$TEST_TMP/top.out"
}

# traced_qemu NAME SOCKET: a real QEMU, the firmware guest under TCG (fw_qemu: no /dev/kvm needed),
# its QMP socket SOCKET, tracing every QMP command it handles into TRACE (-trace handle_qmp_command;
# -msg timestamp=on: the log backend stamps each line with the wall clock); REAL its pid.
traced_qemu() {
	TRACE=$TEST_TMP/trace.log
	fw_qemu --name "$1" --accel tcg --kind idle --qmp "$2" -- -trace handle_qmp_command -msg timestamp=on -D "$TRACE"
	REAL=$SPAWNED
	"$VMHOST_BUILD/kvmprobe" qmp "$2" query-status >/dev/null || die "the real QEMU's monitor does not answer"
	grep -q 'handle_qmp_command.*query-status' "$TRACE" || die "QEMU traces no QMP command into $TRACE (its log trace backend)"
}

# The commands that visit monitors, each run by sessions before and after forgers come.
MONITOR_COMMANDS=("mem --io --json" "mem --guest --json" "--json exits --once --interval 0.2"
	"top --batch --iterations 2 --interval 0.5" "doctor --interval 0 --json")

# sessions NAME ARGS...: `bounded NAME ARGS...` (status 0 or 1: exits has no counters of a TCG
# guest); SESSIONS the QMP sessions traced_qemu's QEMU began while it ran (its qmp_capabilities,
# one a visit; a trace line: TID@SECONDS.MICROSECONDS:handle_qmp_command mon PTR req: JSON).
sessions() {
	local from=$EPOCHREALTIME to
	OK_STATUS="0 1" bounded "$@"
	to=$EPOCHREALTIME
	SESSIONS=$(awk -v from="$from" -v to="$to" 'index($0, ":handle_qmp_command ") && index($0, "\"execute\": \"qmp_capabilities\"") {
		t = $1; sub(/^[0-9]+@/, "", t); sub(/:.*/, "", t); if (t + 0 >= from + 0 && t + 0 <= to + 0) n++ } END { print n + 0 }' "$TRACE")
}
