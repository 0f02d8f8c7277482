#!/bin/bash
# Forged processes naming a real QEMU's QMP socket whose pids come before QEMU's (a local user
# forks until the pids wrap, 32768 of them here: then the forgers' pids are the lower) must not
# cost QEMU its own visits (REVIEW S-H1; issue 41: "the real QEMU's own visits still work"). The
# real QEMU is qmp_many_forged.sh's, tracing each QMP command it handles; 12 forgers, as nobody,
# are started before it, dormant (no QEMU yet), and become forged QEMUs naming its socket, in the
# same pids, once each command that visits monitors has run without them: with them, QEMU begins
# as many sessions (qmp_capabilities, one a visit) as without, and mem --io has its own visit
# (its monitor trusted, its disks from QMP). Fails on 56bcd57: vmhost connects to a forger's
# socket before it asks who listens, and goes through the VMs in pid order, so the forgers'
# connections fill QEMU's listen backlog (one, QEMU serving one client at a time) before QEMU's
# own visit comes, which finds it full: QMP busy, its figures unknown (in every run here: four or
# five of the five commands, mem --io among them, in the release build; three under ASan or TSan).
. "$VMHOST_TESTS/hostile/qmp_lib.sh"
FORGERS=12
SOCK=$ALONE/real.sock
FORGED_AFTER=$TEST_TMP/forge
FORGED=""
for i in $(seq $FORGERS); do
	forged_qemu "forged-$i" sleep "$SOCK"
	FORGED="$FORGED $SPAWNED"
done
unset FORGED_AFTER
traced_qemu hostile-real "$SOCK"
for pid in $FORGED; do
	[ "$pid" -lt "$REAL" ] || die "forger $pid comes after QEMU $REAL (the pids wrapped meanwhile): run again"
done
BEFORE=()
for i in "${!MONITOR_COMMANDS[@]}"; do
	sessions "before$i" ${MONITOR_COMMANDS[i]}
	BEFORE[i]=$SESSIONS
done
# mem --io and --guest visit it; exits, top and doctor's KVM reader do not (a TCG guest has no KVM
# counters to give), and must not on the forgers' behalf either.
check "without the forgers, mem --io and mem --guest visit the real monitor (${BEFORE[*]} sessions)" \
	[ "${BEFORE[0]}" -gt 0 -a "${BEFORE[1]}" -gt 0 ]
touch "$TEST_TMP/forge"
i=0
for pid in $FORGED; do
	forged_ready "$pid" "forged-$((i += 1))"
done
say "$FORGERS forged QEMUs (nobody) name the socket of QEMU $REAL, their pids before its:$FORGED"
for i in "${!MONITOR_COMMANDS[@]}"; do
	sessions "after$i" ${MONITOR_COMMANDS[i]}
	check "${MONITOR_COMMANDS[i]}: the real monitor visited as often with the forgers as without ($SESSIONS, ${BEFORE[i]})" \
		[ "$SESSIONS" = "${BEFORE[i]}" ]
done
say "mem --io: QEMU's monitor $(of after0 "$REAL" '[.monitor, .disks_source, .disks_unavailable] | tojson')"
check "mem --io: the real QEMU's own visit works: its monitor trusted, its disks from QMP" \
	[ "$(of after0 "$REAL" '.monitor == {"source": "qmp", "trusted": true, "why": null} and .disks_source == "qmp"')" = true ]
finish
