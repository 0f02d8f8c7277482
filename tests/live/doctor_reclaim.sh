#!/bin/bash
# vmhost doctor's rules on what the host could take back (issue 44), on this host's real /proc with
# fake guests whose scripted monitors (tests/helpers/fake_qmp.py, served on the socket the fake
# guest itself listens on) report their memory: a 1.5 GiB guest that reports 1.2 GiB free, its
# balloon without free-page-reporting: vm-free-page-reporting-off (its RAM is all resident: about
# 1.1 GiB reachable, over the 1 GiB line); the same with free-page-reporting=on: nothing; a guest
# whose polling is off and whose only report is 300 s old: vm-balloon-no-stats saying so; one
# polled every 5 s with a fresh report: nothing. Processes stopped by pid.
. "$VMHOST_TESTS/lib.sh"
G=$((1 << 30)) M=$((1 << 20))
report=(--balloon $((1536 * M)) --available $((1300 * M)) --free $((1228 * M)) --total $((1472 * M)) --polling 5)
fake_guest_qmp doctor-fpr-off "$TEST_TMP/off.sock" "${report[@]}" -- \
	-m 1536M -fake-nomerge -device virtio-balloon-pci,id=balloon0
OFF=$SPAWNED
fake_guest_qmp doctor-fpr-on "$TEST_TMP/on.sock" "${report[@]}" -- \
	-m 1536M -fake-nomerge -device virtio-balloon-pci,id=balloon0,free-page-reporting=on
ON=$SPAWNED
fake_guest_qmp doctor-poll-off "$TEST_TMP/poll.sock" --balloon $((256 * M)) --available $((100 * M)) --polling 0 \
	--age 300 -- -m 256M -fake-nomerge -device virtio-balloon-pci,id=balloon0
POLLOFF=$SPAWNED
fake_guest_qmp doctor-polled "$TEST_TMP/polled.sock" --balloon $((256 * M)) --available $((100 * M)) --polling 5 \
	-- -m 256M -fake-nomerge -device virtio-balloon-pci,id=balloon0
POLLED=$SPAWNED

"$VMHOST" doctor --interval 0 --smaps-budget 0 --json >"$TEST_TMP/d.json" || die "doctor failed"
# The reclaim and balloon-stats findings of a pid.
of() {
	jq -c --argjson p "$1" '[.findings[] | select(.pid == $p and (.id | IN("vm-balloon-no-stats",
		"vm-free-page-reporting-off", "vm-guest-free-in-swap"))) | .id]' "$TEST_TMP/d.json"
}
say "reporting off: $(of "$OFF"), on: $(of "$ON"), polling off: $(of "$POLLOFF"), polled: $(of "$POLLED")"
check "1.2 GiB free and resident, reporting off: vm-free-page-reporting-off" [ "$(of "$OFF")" = '["vm-free-page-reporting-off"]' ]
check "  ... over 1 GiB reachable, all of its RAM resident, and the fix names the property" jq -e --argjson p "$OFF" \
	--argjson g "$G" '.findings[] | select(.pid == $p and .id == "vm-free-page-reporting-off") |
	.evidence.free_page_reporting_bytes >= $g and .evidence.guest_resident_bytes > 1500 * 1048576 and
	(.advice | contains("free-page-reporting=on") and contains("freePageReporting='"'"'on'"'"'"))' "$TEST_TMP/d.json"
check "the same guest with free-page-reporting=on: nothing" [ "$(of "$ON")" = '[]' ]
check "polling off, a 300 s old report: vm-balloon-no-stats" [ "$(of "$POLLOFF")" = '["vm-balloon-no-stats"]' ]
check "  ... that says polling is off" jq -e --argjson p "$POLLOFF" '.findings[] | select(.pid == $p and
	.id == "vm-balloon-no-stats") | (.summary | startswith("its balloon'"'"'s statistics polling is off")) and
	.evidence.stats_polling_seconds == 0 and (.evidence.why | test("polling is off"))' "$TEST_TMP/d.json"
check "polled every 5 s, a fresh report: nothing" [ "$(of "$POLLED")" = '[]' ]
finish
