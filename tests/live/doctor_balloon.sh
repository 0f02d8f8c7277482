#!/bin/bash
# vmhost doctor's balloon findings through QEMU's monitor: a real QEMU (paused, no guest driver)
# with a virtio-balloon device answers query-balloon with all of its RAM and never has guest
# stats: vm-balloon-no-stats, not inflated. A fake QEMU whose scripted monitor
# (tests/helpers/fake_qmp.py, served on the socket the fake guest itself listens on, as vmhost
# requires: fake_guest_qmp) says the balloon leaves the guest 64 MiB of 256 MiB, with stats:
# vm-balloon-inflated, not no-stats. A VM without a balloon device is not visited (no finding).
# Processes stopped by pid.
. "$VMHOST_TESTS/lib.sh"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/deps/test/qemu.txt)"
wait_socket() { local i; for i in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.1; done; die "no socket $1"; }
spawn qemu-system-x86_64 -S -m 64 -display none -nodefaults -name doctor-qemu-balloon \
	-device virtio-balloon-pci,id=balloon0 -qmp "unix:$TEST_TMP/real.sock,server=on,wait=off"
REAL=$SPAWNED
wait_socket "$TEST_TMP/real.sock"
fake_guest_qmp doctor-inflated "$TEST_TMP/fake.sock" --balloon $((64 << 20)) --available $((40 << 20)) -- \
	-m 256M -fake-nomerge -device virtio-balloon-pci,id=balloon0
INFLATED=$SPAWNED
fake_guest doctor-noballoon -m 32M -fake-nomerge
PLAIN=$SPAWNED

"$VMHOST" doctor --interval 0 --smaps-budget 0 --json >"$TEST_TMP/d.json" || die "doctor failed"
of() { jq -c --argjson p "$1" '[.findings[] | select(.pid == $p and (.id | startswith("vm-balloon"))) | .id]' "$TEST_TMP/d.json"; }
say "real QEMU: $(of "$REAL"), fake: $(of "$INFLATED"), no balloon: $(of "$PLAIN")"
check "real QEMU without a guest driver: vm-balloon-no-stats only" [ "$(of "$REAL")" = '["vm-balloon-no-stats"]' ]
check "  ... its balloon is all of its 64 MiB" jq -e --argjson p "$REAL" '.findings[] | select(.pid == $p and .id == "vm-balloon-no-stats") | .evidence.balloon_bytes == 67108864 and .evidence.balloon_id == "balloon0"' "$TEST_TMP/d.json"
check "the scripted monitor's 64 of 256 MiB: vm-balloon-inflated only" [ "$(of "$INFLATED")" = '["vm-balloon-inflated"]' ]
check "  ... 25% with the guest's MemAvailable" jq -e --argjson p "$INFLATED" '.findings[] | select(.pid == $p and .id == "vm-balloon-inflated") | .evidence.balloon_percent == 25 and .evidence.guest_available_bytes == 41943040' "$TEST_TMP/d.json"
check "no balloon device: no balloon finding" [ "$(of "$PLAIN")" = '[]' ]
check "the real QEMU's monitor is usable after" test "$("$VMHOST_BUILD/kvmprobe" qmp "$TEST_TMP/real.sock" query-status | jq -r .status)" = prelaunch
finish
