#!/bin/bash
# vmhost doctor on a real KVM guest: the firmware guest (tests/helpers/mkfw.sh: out 0x80 in a loop
# at the reset vector) under QEMU accel=kvm, its counters read through QMP query-stats where
# debugfs is closed, over doctor's interval: vm-exits-dominated with over 1000 exits/s, and the
# kind this kernel counts them as (on this host's nested PVM real mode is emulated: insn_emulation;
# on bare metal io_exits). The same guest paused (-S) makes no exits: nothing said.
# Needs /dev/kvm: without it the test is skipped (exit 77) and says so. QEMU stopped by pid.
. "$VMHOST_TESTS/lib.sh"
fw_qemu --name doctor-fw --qmp "$TEST_TMP/run.sock"
RUN=$SPAWNED
fw_qemu --name doctor-paused --qmp "$TEST_TMP/paused.sock" -- -S
PAUSED=$SPAWNED
sleep 1
"$VMHOST" doctor --interval 1 --smaps-budget 0 --json >"$TEST_TMP/d.json" 2>"$TEST_TMP/d.err" || die "doctor failed: $(cat "$TEST_TMP/d.err")"
of() { jq -c --argjson p "$1" '[.findings[] | select(.id == "vm-exits-dominated" and .pid == $p)]' "$TEST_TMP/d.json"; }
say "firmware guest: $(of "$RUN")"
check "the looping firmware guest is vm-exits-dominated over the interval" jq -e --argjson p "$RUN" '[.findings[] | select(.id == "vm-exits-dominated" and .pid == $p)] | length == 1 and .[0].vm == "doctor-fw" and .[0].evidence.over == "interval" and .[0].evidence.exits_per_second >= 1000' "$TEST_TMP/d.json"
check "  ... by port I/O, or by emulation where this kernel emulates real mode" jq -e --argjson p "$RUN" '.findings[] | select(.id == "vm-exits-dominated" and .pid == $p) | .evidence.kind | IN("I/O", "emulation")' "$TEST_TMP/d.json"
check "the paused guest (no exits) is not" [ "$(of "$PAUSED")" = "[]" ]
check "  ... with the rate in its summary and the VMM's CPU as what it costs" jq -e --argjson p "$RUN" '.findings[] | select(.id == "vm-exits-dominated" and .pid == $p) | (.summary | test("at [0-9]+ exits/s")) and .evidence.vm_cpu_percent > 0' "$TEST_TMP/d.json"
# --reasons (tracefs mounted in a private mount namespace): which port the exits hit.
unshare -m sh -c 'mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exec "$0" --json doctor --interval 1 --smaps-budget 0 --reasons --only vm-exits-dominated' "$VMHOST" >"$TEST_TMP/r.json" 2>"$TEST_TMP/r.err"
say "with --reasons: $(jq -c --argjson p "$RUN" '.findings[] | select(.pid == $p) | .summary' "$TEST_TMP/r.json") $(cat "$TEST_TMP/r.err")"
check "--reasons: the exits are port writes to 0x80, said in the summary with their share" jq -e --argjson p "$RUN" '.findings[] | select(.id == "vm-exits-dominated" and .pid == $p) | .evidence.top_reason == "kvm_pio/0x80 out" and .evidence.top_reason_count > 0.6 * .evidence.exits and (.summary | test("[0-9]+% of them port 0x80 out$"))' "$TEST_TMP/r.json"
check "--only vm-exits-dominated: no other rule's finding" jq -e '[.findings[] | select(.id != "vm-exits-dominated")] | length == 0' "$TEST_TMP/r.json"
check "the socket is usable after" test "$("$VMHOST_BUILD/kvmprobe" qmp "$TEST_TMP/run.sock" query-status | jq -r .status)" = running
finish
