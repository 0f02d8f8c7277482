#!/bin/bash
# Many forged processes, run by nobody, naming one real QEMU's QMP socket on their command lines
# (REVIEW S-H1: a real monitor serves one client at a time, and before 56bcd57 vmhost visited it
# once for each of them, holding it over and over). The real QEMU is the firmware guest under TCG
# (no /dev/kvm needed), tracing every QMP command it handles (-trace handle_qmp_command, stamped
# with the wall clock), its socket where only this test can reach it (qmp_alone.sh): each command
# that visits monitors is run once before the forgers start and once after, and QEMU handles as
# many sessions (qmp_capabilities, one a visit) in the second run as in the first: vmhost does not
# visit the real monitor on their behalf. The forgers start after QEMU (their pids after its, so
# vmhost, which goes through the VMs in pid order, comes to QEMU first). The real QEMU's own visits
# still work (its monitor trusted, its disks from QMP), and each forger's monitor is refused,
# naming QEMU's pid, or not checked when QEMU's listen backlog was full: never trusted.
. "$VMHOST_TESTS/hostile/qmp_lib.sh"
FORGERS=12
SOCK=$ALONE/real.sock
TRACE=$TEST_TMP/trace.log
fw_qemu --name hostile-real --accel tcg --kind idle --qmp "$SOCK" -- -trace handle_qmp_command -msg timestamp=on -D "$TRACE"
REAL=$SPAWNED
"$VMHOST_BUILD/kvmprobe" qmp "$SOCK" query-status >/dev/null || die "the real QEMU's monitor does not answer"
grep -q 'handle_qmp_command.*query-status' "$TRACE" || die "QEMU traces no QMP command into $TRACE (its log trace backend)"

# sessions NAME ARGS...: `bounded NAME ARGS...`; SESSIONS the QMP sessions the real QEMU began while
# it ran (a trace line: TID@SECONDS.MICROSECONDS:handle_qmp_command mon PTR req: JSON).
sessions() {
	local from=$EPOCHREALTIME to
	OK_STATUS="0 1" bounded "$@"
	to=$EPOCHREALTIME
	SESSIONS=$(awk -v from="$from" -v to="$to" 'index($0, ":handle_qmp_command ") && index($0, "\"execute\": \"qmp_capabilities\"") {
		t = $1; sub(/^[0-9]+@/, "", t); sub(/:.*/, "", t); if (t + 0 >= from + 0 && t + 0 <= to + 0) n++ } END { print n + 0 }' "$TRACE")
}
COMMANDS=("mem --io --json" "mem --guest --json" "--json exits --once --interval 0.2"
	"top --batch --iterations 2 --interval 0.5" "doctor --interval 0 --json")
BEFORE=()
for i in "${!COMMANDS[@]}"; do
	sessions "before$i" ${COMMANDS[i]}
	BEFORE[i]=$SESSIONS
done

FORGED=""
for i in $(seq $FORGERS); do
	forged_qemu "forged-$i" sleep "$SOCK"
	# Their pids after QEMU's, as processes started later have unless the pids wrapped meanwhile.
	while [ "$SPAWNED" -lt "$REAL" ]; do
		stop_pid "$SPAWNED"
		forged_qemu "forged-$i" sleep "$SOCK"
	done
	FORGED="$FORGED $SPAWNED"
done
say "$FORGERS forged QEMUs (nobody) name the socket of QEMU $REAL:$FORGED"
for i in "${!COMMANDS[@]}"; do
	sessions "after$i" ${COMMANDS[i]}
	check "${COMMANDS[i]}: the real monitor visited as often with the forgers as without ($SESSIONS, ${BEFORE[i]})" \
		[ "$SESSIONS" = "${BEFORE[i]}" ]
done
check "mem --io: the real QEMU's own visit works: its monitor trusted, its disks from QMP" \
	[ "$(of after0 "$REAL" '.monitor == {"source": "qmp", "trusted": true, "why": null} and .disks_source == "qmp"')" = true ]
# A forger's monitor: refused, naming QEMU's pid; or, when QEMU's listen backlog (one connection,
# QEMU serving one client at a time) was full at vmhost's connect, not checked: QMP busy. Nothing
# sent to it either way, never trusted, its disks unknown.
WHY="the QMP socket's listener is pid $REAL, not the VM: nothing sent to it"
refused=0 busy=0
for pid in $FORGED; do
	case $(of after0 "$pid" '[.monitor.trusted, .monitor.why == "'"$WHY"'", (.monitor.why | startswith("not checked: QMP busy")), .disks == null] | tojson') in
	'[false,true,false,true]') refused=$((refused + 1)) ;;
	'[null,false,true,true]') busy=$((busy + 1)) ;;
	*) say "forger $pid: $(of after0 "$pid" '[.monitor, .disks, .disks_unavailable] | tojson')" ;;
	esac
done
say "mem --io: $refused forger(s) refused, naming QEMU's pid; $busy found its backlog full"
check "mem --io: each forger's monitor refused or found busy, never trusted, its disks unknown" [ $((refused + busy)) = $FORGERS ]
check "  ... the listener checked and named for some ($refused)" [ $refused -gt 0 ]
check "the real QEMU's monitor is usable after" \
	test "$("$VMHOST_BUILD/kvmprobe" qmp "$SOCK" query-status | jq -r .status)" = running
finish
