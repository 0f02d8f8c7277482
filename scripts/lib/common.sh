# What every shell test and benchmark shares, in one place: a temporary directory, processes
# started and stopped by pid (never by name), one cleanup that runs to its end on any exit (a
# second INT, TERM or HUP while it runs is ignored: ctest, timeout and Ctrl-C signal the whole
# process group, and a second signal used to cut a KSM restore short, 3993d39), every KSM setting
# saved and put back, fake QEMU guests (with a scripted monitor of their own, too) and the firmware
# guest under QEMU, a median and a timer.
# Sourced by tests/lib.sh and bench/lib.sh, which add what is theirs (a test's checks and
# verdict; a benchmark's paths); a script sources one of those, not this file.
#
# The includer defines die and skip (fw_qemu.sh uses them too), may set TMP_PREFIX (the
# temporary directory's name before the script's: "vmhost" by default), and sets FAKEGUEST (the
# fakeguest program) and FW_PROBE (kvmprobe) before it starts a guest. Sourcing this file makes
# TEST_TMP and sets the traps: cleanup on exit; INT, TERM and HUP exit 130, 143 and 129 (so the
# cleanup runs). Scripts add steps of their own with on_cleanup, never a trap of their own
# (tests/cli/shell_lib.sh checks that, and that nothing here is defined twice).
RUN_NAME=$(basename "$0" .sh)
TEST_TMP=$(mktemp -d "/tmp/${TMP_PREFIX:-vmhost}-$RUN_NAME.XXXXXX") || {
	echo "$RUN_NAME: cannot make a temporary directory" >&2
	exit 1
}
TEST_PIDS=""
CLEANUP_STEPS=()
KSM_SAVED=""

# warn TEXT: a warning on stderr, named by the script.
warn() { printf '%s: warning: %s\n' "$RUN_NAME" "$*" >&2; }

# spawn CMD...: starts a background process, SPAWNED its pid, stopped by the cleanup.
spawn() {
	"$@" &
	SPAWNED=$!
	TEST_PIDS="$TEST_PIDS $SPAWNED"
}

# adopt PID...: processes started otherwise (a here-document's, a pane's), stopped by the cleanup.
adopt() { TEST_PIDS="$TEST_PIDS $*"; }

# stop_pids PID...: TERM to each, KILL to those still there after 5 s; waits for our children so
# nothing is left behind, and forgets the pids (a pid stopped early is not signalled again at the
# end, when it may be another process's).
stop_pids() {
	local pid left i kept=" $TEST_PIDS "
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	for i in $(seq 50); do
		left=""
		for pid; do kill -0 "$pid" 2>/dev/null && left="$left $pid"; done
		[ -n "$left" ] || break
		sleep 0.1
	done
	[ -z "$left" ] || kill -KILL $left 2>/dev/null
	for pid; do
		wait "$pid" 2>/dev/null
		kept=${kept// $pid / }
	done
	TEST_PIDS=$kept
	return 0
}

# stop_pid PID: stop_pids for one.
stop_pid() { stop_pids "$1"; }

# stop_spawned: stops every process spawned or adopted so far.
stop_spawned() { stop_pids $TEST_PIDS; }

# on_cleanup COMMAND: a shell command the cleanup runs (eval) once the processes are stopped and
# before KSM is restored and TEST_TMP removed (unmounting, giving back a pool, removing cgroups);
# several run in the order given.
on_cleanup() { CLEANUP_STEPS+=("$1"); }

cleanup() {
	trap '' INT TERM HUP # a second signal must not cut the restore short
	local step
	stop_spawned
	for step in "${CLEANUP_STEPS[@]}"; do eval "$step"; done
	ksm_restore
	rm -rf "$TEST_TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# A test that runs out of its time is killed by ctest (SIGKILL, before CMake 3.27), which runs no
# cleanup: daemons and guests it started would outlive it. Told its TIMEOUT (VMHOST_TEST_TIMEOUT,
# tests/CMakeLists.txt), a script sends itself and its children TERM 20 s before, and its cleanup
# stops the rest. The watchdog is a process of the script's, stopped with the others (its sleep
# with it).
WATCHDOG=""
if [ "${VMHOST_TEST_TIMEOUT:-0}" -gt 40 ] 2>/dev/null; then
	(
		trap 'kill "$nap" 2>/dev/null; exit 0' TERM
		sleep $((VMHOST_TEST_TIMEOUT - 20)) </dev/null >/dev/null 2>&1 &
		nap=$!
		wait "$nap" || exit 0
		warn "$((VMHOST_TEST_TIMEOUT - 20)) s of its ${VMHOST_TEST_TIMEOUT} s gone: stopped (TERM) so that its cleanup runs"
		kill -TERM $$
		# the script runs its trap once the command it waits for ends: TERM to that too
		for child in $(pgrep -P $$); do [ "$child" = "$BASHPID" ] || kill -TERM "$child" 2>/dev/null; done
	) &
	WATCHDOG=$!
	TEST_PIDS="$TEST_PIDS $WATCHDOG"
fi

KSM=/sys/kernel/mm/ksm
KSM_KNOBS="run pages_to_scan sleep_millisecs use_zero_pages smart_scan max_page_sharing merge_across_nodes advisor_mode advisor_target_scan_time advisor_max_cpu advisor_min_pages_to_scan advisor_max_pages_to_scan"

# ksm_lock ARGS...: runs the script again, with ARGS, under the machine-wide KSM lock (the one
# vmhost and the KSM tests take: /run/vmhost/ksm.lock, in root's private directory), unless it
# holds it already. Call it first: what was started before is left behind by the exec (the
# temporary directory is removed). vmhost skips the lock it is told it holds only in a test build.
ksm_lock() {
	[ -z "${VMHOST_KSM_LOCKED:-}" ] || return 0
	rm -rf "$TEST_TMP"
	trap - EXIT
	[ -z "$WATCHDOG" ] || stop_pid "$WATCHDOG" # the script run again starts its own
	mkdir -p -m 0700 /run/vmhost
	exec flock /run/vmhost/ksm.lock env VMHOST_KSM_LOCKED=1 bash "$0" "$@"
}

# ksm_save: remembers every writable KSM setting; cleanup puts them back. 1 without KSM.
ksm_save() {
	[ -d $KSM ] || return 1
	KSM_SAVED=$TEST_TMP/ksm.saved
	: >"$KSM_SAVED"
	local f v
	for f in $KSM_KNOBS; do
		[ -f $KSM/$f ] || continue
		v=$(cat $KSM/$f)
		[ "$f" = advisor_mode ] && v=$(printf '%s' "$v" | sed -n 's/.*\[\(.*\)\].*/\1/p')
		echo "$f $v" >>"$KSM_SAVED"
	done
}

# ksm_restore: the settings ksm_save saw, the advisor off while the others are written, run last.
ksm_restore() {
	[ -n "$KSM_SAVED" ] && [ -f "$KSM_SAVED" ] || return 0
	local f v
	[ -f $KSM/advisor_mode ] && echo none >$KSM/advisor_mode 2>/dev/null
	while read -r f v; do
		case $f in run|advisor_mode) continue ;; esac
		[ "$(cat $KSM/$f)" = "$v" ] || echo "$v" >$KSM/$f 2>/dev/null || warn "could not restore $f=$v"
	done <"$KSM_SAVED"
	while read -r f v; do
		case $f in advisor_mode|run) echo "$v" >$KSM/$f 2>/dev/null || warn "could not restore $f=$v" ;; esac
	done <"$KSM_SAVED"
	KSM_SAVED=""
}

# ksm_wait_settled MIN_PAGES_SHARING TIMEOUT_S: waits until KSM has merged at least that much
# and two full scans in a row leave pages_sharing unchanged.
ksm_wait_settled() {
	local want=$1 timeout=$2 start=$SECONDS last=-1 scans now
	while [ $((SECONDS - start)) -lt "$timeout" ]; do
		scans=$(cat $KSM/full_scans)
		while [ "$(cat $KSM/full_scans)" = "$scans" ] && [ $((SECONDS - start)) -lt "$timeout" ]; do sleep 0.2; done
		now=$(cat $KSM/pages_sharing)
		if [ "$now" -ge "$want" ] && [ "$now" = "$last" ]; then return 0; fi
		last=$now
	done
	return 1
}

# AS_QEMU: a command prefix running a program with argv[0] qemu-system-x86_64, as discovery
# takes a QEMU guest; the pid stays the program's (bash execs it):
#   spawn "${AS_QEMU[@]}" PROGRAM ARGS...
AS_QEMU=(bash -c 'exec -a qemu-system-x86_64 "$0" "$@"')

# fake_guest_start NAME ARGS...: starts FAKEGUEST as a QEMU guest named NAME ("-name NAME
# ARGS..."), through $FAKE_PREFIX when set (e.g. "taskset -c 0"); SPAWNED is its pid, its
# stdout TEST_TMP/NAME.out. fake_guest_ready waits for it.
fake_guest_start() {
	local name=$1
	shift
	spawn ${FAKE_PREFIX:-} "${AS_QEMU[@]}" "${FAKEGUEST:?}" -name "$name" "$@" >"$TEST_TMP/$name.out"
}

# fake_guest_ready NAME...: waits until each of those guests filled its RAM, 60 s at most each.
fake_guest_ready() {
	local name end
	for name; do
		end=$((SECONDS + 60))
		until grep -q ready "$TEST_TMP/$name.out" 2>/dev/null; do
			[ $SECONDS -lt $end ] || die "fake guest $name did not start"
			sleep 0.05
		done
	done
}

# fake_guest NAME ARGS...: one guest started and ready; SPAWNED is its pid.
fake_guest() {
	fake_guest_start "$@"
	local pid=$SPAWNED
	fake_guest_ready "$1"
	SPAWNED=$pid
}

# fake_guest_qmp NAME SOCKET MONITOR_ARGS... -- ARGS...: fake_guest NAME ARGS... with a scripted QMP
# monitor on SOCKET that the guest itself listens on, as QEMU does on its own (vmhost speaks only to
# a socket the VM process listens on): tests/helpers/fake_qmp.py SOCKET MONITOR_ARGS binds and
# listens, serves from a child and execs the guest in its own pid, "-qmp unix:SOCKET,server=on,
# wait=off" last on the guest's command line. Returns once it is ready; SPAWNED is its pid.
FAKE_QMP=$(dirname "${BASH_SOURCE[0]}")/../../tests/helpers/fake_qmp.py
fake_guest_qmp() {
	local name=$1 sock=$2 monitor=() pid
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		monitor+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	spawn ${FAKE_PREFIX:-} python3 "$FAKE_QMP" "$sock" "${monitor[@]}" --exec "${FAKEGUEST:?}" -name "$name" "$@" \
		-qmp "unix:$sock,server=on,wait=off" >"$TEST_TMP/$name.out"
	pid=$SPAWNED
	fake_guest_ready "$name"
	SPAWNED=$pid
}

# fake_guests N PREFIX ARGS...: N guests named PREFIX1..PREFIXN, each with -fake-guest i, started
# together; returns once every one is ready. FAKE_PIDS holds their pids.
fake_guests() {
	local n=$1 prefix=$2 i
	shift 2
	FAKE_PIDS=""
	for i in $(seq "$n"); do
		fake_guest_start "$prefix$i" -fake-guest "$i" "$@"
		FAKE_PIDS="$FAKE_PIDS $SPAWNED"
	done
	fake_guest_ready $(for i in $(seq "$n"); do echo "$prefix$i"; done)
}

# fw_qemu and fw_image: the firmware guest under a real QEMU, its files in TEST_TMP.
FW_DIR=$TEST_TMP
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/helpers/fw_qemu.sh"

# median: the median of the numbers on stdin, one a line (0 for none).
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# ms CMD...: the wall time of CMD in milliseconds, its output discarded. Bash's own clock: timing
# with $(date) counted date's fork and exec too, about 7 ms a run in this nested VM.
ms() {
	local t0=$EPOCHREALTIME t1
	"$@" >/dev/null 2>&1
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
}
