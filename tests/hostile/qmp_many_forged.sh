#!/bin/bash
# Many forged processes, run by nobody, naming one real QEMU's QMP socket on their command lines
# (REVIEW S-H1: a real monitor serves one client at a time, and before 56bcd57 vmhost visited it
# once for each of them, holding it over and over). The real QEMU is the firmware guest under TCG
# (no /dev/kvm needed), tracing every QMP command it handles, its socket where only this test can
# reach it (qmp_alone.sh): each command that visits monitors is run once before the forgers start
# and once after, and QEMU begins no more sessions (qmp_capabilities, one a visit) in the second
# run than in the first: vmhost does not visit the real monitor on their behalf. Each forger's
# monitor is refused, naming QEMU's pid, or not checked when QEMU's listen backlog was full: never
# trusted. The forgers start after QEMU, their pids after its (vmhost goes through the VMs in pid
# order). That QEMU's own visits are not lost to the forgers is qmp_forged_first.sh's to check.
. "$VMHOST_TESTS/hostile/qmp_lib.sh"
FORGERS=12
SOCK=$ALONE/real.sock
traced_qemu hostile-real "$SOCK"
BEFORE=()
for i in "${!MONITOR_COMMANDS[@]}"; do
	sessions "before$i" ${MONITOR_COMMANDS[i]}
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
for i in "${!MONITOR_COMMANDS[@]}"; do
	sessions "after$i" ${MONITOR_COMMANDS[i]}
	check "${MONITOR_COMMANDS[i]}: no session of the real monitor on the forgers' behalf ($SESSIONS with them, ${BEFORE[i]} without)" \
		le "$SESSIONS" "${BEFORE[i]}"
done
# A forger's monitor: never connected to (it holds no listening socket bound there, asked of /proc
# before any connect: so forgers cannot fill QEMU's listen backlog either), never trusted, its
# disks unknown.
WHY="the VM process holds no listening socket bound there: not connected to, nothing sent"
refused=0
for pid in $FORGED; do
	case $(of after0 "$pid" '[.monitor.trusted, .monitor.why == "'"$WHY"'", .disks == null] | tojson') in
	'[false,true,true]') refused=$((refused + 1)) ;;
	*) say "forger $pid: $(of after0 "$pid" '[.monitor, .disks, .disks_unavailable] | tojson')" ;;
	esac
done
say "mem --io: $refused forger(s) refused without a connect"
check "mem --io: each forger's monitor refused without a connect, never trusted, its disks unknown" [ $refused = $FORGERS ]
check "the real QEMU's monitor is usable after" \
	test "$("$VMHOST_BUILD/kvmprobe" qmp "$SOCK" query-status | jq -r .status)" = running
finish
