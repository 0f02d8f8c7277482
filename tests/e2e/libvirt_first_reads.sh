#!/bin/bash
# libvirt's first seconds (issue 42): in each of 3 rounds a libvirtd started for the round (as a
# fresh machine has it: `libvirtd -d`, no `virsh version` first), a TCG firmware domain created
# and `vmhost exits --once --json` run at once must read the domain through libvirt. The reads
# failed here before (libvirt qemu:///system: no answer within 0.8 s (libvirtd hung or
# overloaded?)) while libvirtd answered virsh in milliseconds: vmhost asked virConnectGetVersion
# within the statistics call's deadline, and a libvirtd whose QEMU capabilities are not cached
# (a fresh machine, QEMU upgraded, /dev/kvm's access changed, or on this host every time:
# /dev/kvm is root's 0600 while libvirt's probe QEMU gets KVM) probes the QEMU binaries for
# seconds to answer it (docs/exits.md). How slow that is depends on the machine; what does not:
# the last round stops the domain's QEMU (SIGSTOP), whose monitor then holds libvirt's call,
# and the reason must say a domain is busy and libvirtd answers, not that libvirtd hung.
# Domains destroyed and daemons this test started stopped by pid; a libvirtd running before
# is left alone (the fresh rounds are then skipped).
. "$VMHOST_TESTS/lib.sh"
LIBVIRT_TOOLS=unshare
. "$VMHOST_TESTS/e2e/libvirt_lib.sh"
UP=""
STOPPED=""
LIBVIRTD=""
libvirt_cleanup() {
	local d pid
	[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null
	for d in $UP; do $VIRSH destroy "$d" >/dev/null 2>&1; done
	[ -n "$LIBVIRTD" ] && stop_libvirtd
	for pid in $STARTED; do stop_pid "$pid"; done
}
on_cleanup libvirt_cleanup
if [ -s /run/libvirtd.pid ] && kill -0 "$(cat /run/libvirtd.pid)" 2>/dev/null; then
	skip "a libvirtd this test did not start runs (pid $(cat /run/libvirtd.pid)): not restarted for fresh rounds"
fi
start_daemon virtlogd || die "cannot start virtlogd"
chmod 755 "$TEST_TMP"
fw_image
chmod 644 "$FW_IMAGE"
ms_since() { awk -v s="$1" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.0f", (e - s) * 1000 }'; }

# fresh_libvirtd: a libvirtd of this round's, answering on qemu:///system (virsh list, which
# does not ask for QEMU's capabilities).
fresh_libvirtd() {
	local i
	start_daemon libvirtd || die "cannot start libvirtd"
	LIBVIRTD=$(cat /run/libvirtd.pid)
	STARTED=${STARTED/$LIBVIRTD/}
	for i in $(seq 200); do $VIRSH list >/dev/null 2>&1 && break; sleep 0.1; done
	$VIRSH list >/dev/null 2>&1 || die "libvirtd does not answer on qemu:///system"
}
# stop_libvirtd: TERM, and up to 60 s for it to finish what it does (a QEMU capabilities probe
# vmhost's version ask started takes seconds; a KILL mid-probe could leave the probe's QEMU).
stop_libvirtd() {
	local i
	kill -TERM "$LIBVIRTD" 2>/dev/null
	for i in $(seq 600); do kill -0 "$LIBVIRTD" 2>/dev/null || break; sleep 0.1; done
	stop_pid "$LIBVIRTD"
	LIBVIRTD=""
}
# exits_once PID OUT: vmhost exits --once --json on that QEMU, its debugfs out of sight (libvirt
# the only source, as in libvirt_kvm.sh); RC its exit status (124: still running after 60 s),
# TOOK_MS how long it took. Its time is not checked: exits' first read visits every QEMU's QMP
# socket before --pid picks one, and other tests' QMP peers on this machine may be slow on purpose.
exits_once() {
	local t=$EPOCHREALTIME
	unshare -m sh -c 'umount -l /sys/kernel/debug 2>/dev/null; exec timeout 60 "$0" --json exits --once --interval 0.5 --pid "$1"' \
		"$VMHOST" "$1" >"$2.json" 2>"$2.err"
	RC=$?
	TOOK_MS=$(ms_since "$t")
}
# busy_said REASON: the reason names a busy domain and a libvirtd that answers, and blames no hung one.
busy_said() {
	grep -q 'libvirt qemu:///system: domain statistics wait on a busy domain (.*); libvirtd itself answers' <<<"$1" &&
		! grep -q hung <<<"$1"
}
# why OUT: the reason exits gave, in one line: the run's error, or the one VM's (--pid) unavailable.
why() { jq -r '.error // .vms[0].unavailable // empty' "$1.json" 2>/dev/null | grep . || tr '\n' ' ' <"$1.err"; }
# read_through_libvirt OUT PID: exits read that QEMU, and read it through libvirt.
read_through_libvirt() { [ -s "$1.json" ] && jq -e --argjson p "$2" '.vms | length == 1 and .[0].pid == $p and .[0].source == "libvirt"' "$1.json" >/dev/null 2>&1; }

for round in 1 2 3; do
	fresh_libvirtd
	dom=vmhost-first-$$-$round
	fw_domain_xml "$dom" qemu none >"$TEST_TMP/$dom.xml"
	UP="$UP $dom"
	t=$EPOCHREALTIME
	$VIRSH create "$TEST_TMP/$dom.xml" >/dev/null 2>"$TEST_TMP/$dom.err" || die "virsh create of $dom failed: $(cat "$TEST_TMP/$dom.err")"
	created_ms=$(ms_since "$t")
	pid=$(cat "/run/libvirt/qemu/$dom.pid" 2>/dev/null)
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || die "no QEMU process for $dom"
	exits_once "$pid" "$TEST_TMP/x$round"
	grep -q 'AddressSanitizer build' "$TEST_TMP/x$round.err" && skip "this vmhost is an AddressSanitizer build, which does not use libvirt"
	t=$EPOCHREALTIME
	virsh -r -q domstats --vm --vcpu >/dev/null
	stats_ms=$(ms_since "$t")
	t=$EPOCHREALTIME
	virsh -r -q version >/dev/null
	version_ms=$(ms_since "$t")
	said=""
	[ "$RC" = 0 ] || said=": $(why "$TEST_TMP/x$round")"
	say "round $round: libvirtd $LIBVIRTD, virsh create ${created_ms} ms; then virsh -r domstats --vm --vcpu ${stats_ms} ms, virsh -r version ${version_ms} ms (it waits behind any QEMU capabilities probe libvirtd runs); exits --once before them: exit $RC in ${TOOK_MS} ms, source $(jq -r '.vms[0].source // "none"' "$TEST_TMP/x$round.json" 2>/dev/null)$said"
	check "round $round: the first reads right after libvirtd's start and the domain's answer (exit 0, the domain read through libvirt)" \
		read_through_libvirt "$TEST_TMP/x$round" "$pid"
	if [ $round = 3 ]; then
		# The domain's QEMU stopped: libvirt's statistics call waits on its monitor, for good.
		kill -STOP "$pid" && STOPPED=$pid
		exits_once "$pid" "$TEST_TMP/busy"
		kill -CONT "$pid"
		STOPPED=""
		reason=$(why "$TEST_TMP/busy")
		say "the domain's QEMU stopped: exits --once exit $RC in ${TOOK_MS} ms: $reason"
		check "a busy domain (its QEMU stopped): exits --once returns" [ "$RC" != 124 ]
		check "  ... saying the statistics wait on a busy domain and libvirtd answers, not that libvirtd hung" busy_said "$reason"
	fi
	$VIRSH destroy "$dom" >/dev/null || fail "virsh destroy of $dom failed"
	UP=${UP/ $dom/}
	stop_libvirtd
done
finish
