#!/bin/bash
# doctor's balloon rules on libvirt domains: libvirt holds their QEMU's monitor, so the guest's
# view comes from libvirt's balloon statistics through the same visit as mem --guest's. Two
# transient TCG domains on a real libvirt (the firmware guest, no driver in it): one with a
# virtio balloon, whose guest never reports stats (vm-balloon-no-stats, the balloon as virsh
# domstats --balloon gives it, the reason libvirt's), and one without a balloon device (no
# balloon finding: libvirt reports balloon.current for it all the same). A wrong --libvirt-uri
# leaves the balloon unread: no finding, exit 0. Domains destroyed, daemons this test started
# stopped by pid.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/libvirt_lib.sh"
BALLOON=vmhost-doc-b-$$
PLAIN=vmhost-doc-n-$$
UP=""
libvirt_cleanup() {
	local d pid
	for d in $UP; do $VIRSH destroy "$d" >/dev/null 2>&1; done
	for pid in $STARTED; do stop_pid "$pid"; done
}
on_cleanup libvirt_cleanup
libvirt_up
chmod 755 "$TEST_TMP"
fw_image
chmod 644 "$FW_IMAGE"

# domain NAME MEMBALLOON: the firmware's domain under TCG, started; DPID its QEMU's pid.
domain() {
	fw_domain_xml "$1" qemu "$2" >"$TEST_TMP/$1.xml"
	UP="$UP $1"
	$VIRSH create "$TEST_TMP/$1.xml" >/dev/null 2>"$TEST_TMP/$1.err" || die "virsh create of $1 failed: $(cat "$TEST_TMP/$1.err")"
	DPID=$(cat "/run/libvirt/qemu/$1.pid" 2>/dev/null)
	[ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null || die "no QEMU process for $1"
}
domain "$BALLOON" virtio
B=$DPID
domain "$PLAIN" none
N=$DPID
b_cur=$($VIRSH domstats --balloon "$BALLOON" | awk -F= '/balloon\.current=/ { print $2 }')
say "domains: $BALLOON (pid $B, virtio balloon, balloon.current $b_cur KiB), $PLAIN (pid $N, none)"

"$VMHOST" --json doctor --interval 0 --smaps-budget 0 >"$TEST_TMP/d.json" 2>"$TEST_TMP/d.err"
rc=$?
of() { jq -c --argjson p "$1" '[.findings[] | select(.pid == $p and (.id | startswith("vm-balloon")))]' "$TEST_TMP/d.json"; }
say "doctor: exit $rc; $BALLOON: $(of "$B"); $PLAIN: $(of "$N")"
check "doctor: exit 0" [ $rc = 0 ]
check "the balloon domain: vm-balloon-no-stats only, its balloon libvirt's balloon.current" \
	jq -e --argjson p "$B" --argjson b $((b_cur * 1024)) '[.findings[] | select(.pid == $p and (.id | startswith("vm-balloon")))] | length == 1 and .[0].id == "vm-balloon-no-stats" and .[0].evidence.balloon_bytes == $b' "$TEST_TMP/d.json"
check "  ... why: libvirt's word, the guest reports no stats" \
	jq -e --argjson p "$B" '.findings[] | select(.pid == $p and .id == "vm-balloon-no-stats") | .evidence.why | startswith("libvirt: the guest reports no memory stats")' "$TEST_TMP/d.json"
check "the domain without a balloon device: no balloon finding" [ "$(of "$N")" = '[]' ]

"$VMHOST" --json doctor --interval 0 --smaps-budget 0 --libvirt-uri qemu:///nonexistent >"$TEST_TMP/bad.json" 2>/dev/null
rc=$?
say "doctor --libvirt-uri qemu:///nonexistent: exit $rc; $BALLOON: $(jq -c --argjson p "$B" '[.findings[] | select(.pid == $p) | .id]' "$TEST_TMP/bad.json")"
check "a libvirt that cannot be reached: exit 0, no balloon finding (the balloon is unknown)" \
	sh -c "[ $rc = 0 ] && jq -e --argjson p $B '[.findings[] | select(.pid == \$p and (.id | startswith(\"vm-balloon\")))] | length == 0' '$TEST_TMP/bad.json' >/dev/null"
finish
