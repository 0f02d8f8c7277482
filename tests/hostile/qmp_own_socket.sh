#!/bin/bash
# Forged QEMUs, run by nobody, that serve their own QMP sockets (so they are their monitors'
# listeners, and vmhost does speak to them) as badly as they can (REVIEW S-H1; issue 41): one
# floods events (before 56bcd57 a reader that waited for the socket to run dry spun forever), one
# answers each command with plausible figures just inside a per-call deadline (0.25 s: mem's
# visits had 0.3 s a call, the KVM reader's 0.5; the per-call deadline took them all), one sends a
# JSON string without end. Each command that visits monitors finishes
# (bounded loosely: each visit has its deadline, nothing here times it finer), and the figures
# from those monitors are unknown with a reason, never the forgers' made-up ones.
. "$VMHOST_TESTS/hostile/qmp_lib.sh"
for mode in flood slow endless; do
	forged_qemu "forged-$mode" $mode "$FORGED_DIR/$mode.sock"
	eval "PID_$mode=$SPAWNED"
done
PIDS="$PID_flood $PID_slow $PID_endless"
say "forged QEMUs: flood $PID_flood, slow $PID_slow, endless $PID_endless (nobody, each on its own socket)"

# each_forged NAME JQ: JQ holds for each forged VM in TEST_TMP/NAME.out.
each_forged() {
	local pid
	for pid in $PIDS; do
		[ "$(of "$1" "$pid" "$2")" = true ] || { say "pid $pid: $(of "$1" "$pid" "$3")"; return 1; }
	done
}
bounded io mem --io --json
check "mem --io: each forger's disks unknown, with a reason" \
	each_forged io '.disks == null and (.disks_unavailable | length > 0)' '[.disks, .disks_unavailable] | tojson'
check "mem --io: each forger listens on its socket: its monitor spoken to, not refused" \
	each_forged io '.monitor.source == "qmp" and .monitor.trusted != false' '.monitor | tojson'
bounded guest mem --guest --json
check "mem --guest: each forger's balloon and guest stats unknown, with a reason" \
	each_forged guest '.balloon_bytes == null and .guest_available_bytes == null and (.guest_unavailable | length > 0)' \
	'[.balloon_bytes, .guest_available_bytes, .guest_unavailable] | tojson'
OK_STATUS="0 1" bounded exits --json exits --once --interval 0.2 --pid "$PID_flood" --pid "$PID_slow" --pid "$PID_endless"
check "exits --once: no counters of any forger (the slow one's grow by a million a reply)" \
	sh -c "! jq -e '.vms[]? | .counters | .. | numbers' '$TEST_TMP/exits.out' >/dev/null"
bounded top top --batch --iterations 2 --interval 0.5
for pid in $PIDS; do
	check "top --batch: forger $pid's exits unknown in every refresh" [ "$(top_column "$pid" exits | sort -u)" = n/a ]
done
bounded doctor doctor --interval 0 --json
check "doctor: no balloon finding about a forger (the slow one's balloon leaves 16 of 64 MiB)" \
	[ "$(jq "[.findings[] | select(.pid as \$p | [$(echo $PIDS | tr ' ' ,)] | index(\$p)) | select(.id | startswith(\"vm-balloon\"))] | length" "$TEST_TMP/doctor.out")" = 0 ]
for mode in flood slow endless; do
	say "forged-$mode: $(grep -c '^connected' "$FORGED_DIR/$mode.sock.log") visit(s)"
	check "forged-$mode's monitor was visited (the defence is the visit's deadline and caps, not a refusal)" \
		grep -q '^connected' "$FORGED_DIR/$mode.sock.log"
done
finish
