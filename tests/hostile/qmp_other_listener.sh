#!/bin/bash
# A forged QEMU, run by nobody, whose QMP socket another process serves (REVIEW S-H1, S-M1; issue
# 41): that process, also nobody's, floods events at whoever connects and logs every byte it reads.
# Each command that visits monitors finishes (a hang is the failure: the flood kept a reader
# spinning before 56bcd57), the flooding server is not even connected to (the VM holds no listening
# socket bound there: asked of /proc before any connect), and the VM's monitor says it is not
# trusted, and why; its figures are unknown, with that reason.
. "$VMHOST_TESTS/hostile/qmp_lib.sh"
SOCK=$FORGED_DIR/other.sock
peer_server flood "$SOCK"
SERVER=$SPAWNED
forged_qemu forged-other sleep "$SOCK"
FORGED=$SPAWNED
say "forged QEMU $FORGED (nobody) names $SOCK, served by pid $SERVER"
WHY="the VM process holds no listening socket bound there: not connected to, nothing sent"

bounded io mem --io --json
say "mem --io: its monitor $(of io "$FORGED" '.monitor | tojson'), disks $(of io "$FORGED" '.disks_unavailable')"
check "mem --io: its monitor is not trusted, and why names the listener" \
	[ "$(of io "$FORGED" '.monitor == {"source": "qmp", "trusted": false, "why": "'"$WHY"'"}')" = true ]
check "mem --io: its disks unknown, with that reason" \
	[ "$(of io "$FORGED" '.disks == null and (.disks_unavailable | endswith("'"$WHY"'"))')" = true ]
bounded guest mem --guest --json
check "mem --guest: its balloon and the guest's stats unknown, with that reason" \
	[ "$(of guest "$FORGED" '.balloon_bytes == null and .guest_available_bytes == null and (.guest_unavailable | endswith("'"$WHY"'"))')" = true ]
check "mem --guest: its monitor is not trusted" [ "$(of guest "$FORGED" .monitor.trusted)" = false ]
# Only the forged VM: no counters from anywhere (1, said on stderr), never the flood's.
OK_STATUS="0 1" bounded exits --json exits --once --interval 0.2 --pid "$FORGED"
check "exits --once: no counters of it" \
	sh -c "! jq -e '.vms[]? | select(.pid == $FORGED) | .counters | .. | numbers' '$TEST_TMP/exits.out' >/dev/null"
bounded top top --batch --iterations 2 --interval 0.5
check "top --batch: its exits unknown in every refresh" [ "$(top_column "$FORGED" exits | sort -u)" = n/a ]
bounded doctor doctor --interval 0 --json
check "doctor: no balloon finding about it" \
	[ "$(jq --argjson p "$FORGED" '[.findings[] | select(.pid == $p and (.id | startswith("vm-balloon")))] | length' "$TEST_TMP/doctor.out")" = 0 ]

say "the flooding server: $(grep -c '^connected' "$SOCK.log" 2>/dev/null || echo 0) connection(s), $(grep -c '^read' "$SOCK.log" 2>/dev/null || echo 0) read(s)"
check "vmhost never connected to the flooding server, let alone sent it a byte" sh -c "! grep -q '^connected' '$SOCK.log' 2>/dev/null"
finish
