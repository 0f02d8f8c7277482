# The guest's own view (vmhost mem --guest) on a real TCG guest whose Debian kernel loads the
# virtio balloon driver: the balloon's size against QEMU's own query-balloon, before and after
# the test inflates it; the guest's stats once polling is on; the overhead estimate taking the
# balloon into account; a monitor that never answers costs a bounded wait, not a hang; and the
# QMP socket is left usable. QEMU is stopped by its pid on every exit path.
. "$VMHOST_TESTS/lib.sh"
PROBE=$VMHOST_BUILD/kvmprobe
img=$("$VMHOST_TESTS/../scripts/guest-image.sh" "$VMHOST_BUILD/guest" | tail -1) || die "cannot build the guest image"
set -- $img
SOCK=$TEST_TMP/qmp.sock
spawn qemu-system-x86_64 -machine pc,accel=tcg -m 256 -smp 1 -display none -monitor none \
	-name guest=gv,debug-threads=on -device virtio-balloon-pci,id=balloon0 \
	-qmp "unix:$SOCK,server=on,wait=off" -kernel "$1" -initrd "$2" -append "console=ttyS0 quiet" \
	-serial "file:$TEST_TMP/console.log"
QEMU=$SPAWNED
for i in $(seq 600); do grep -q vmhost-guest-up "$TEST_TMP/console.log" 2>/dev/null && break; sleep 0.1; done
grep -q vmhost-guest-up "$TEST_TMP/console.log" || die "the guest did not boot in 60 s"
actual() { "$PROBE" qmp "$SOCK" query-balloon | jq '.actual'; }
vm() { jq -r --argjson p "$QEMU" ".vms[] | select(.pid == \$p) | $1" "$TEST_TMP/$2"; }

"$VMHOST" mem --json >"$TEST_TMP/plain.json" || die "mem failed"
check "without --guest the guest figures are null" [ "$(vm '[.balloon_bytes, .guest_available_bytes] | map(. == null) | all' plain.json)" = true ]
"$VMHOST" mem --json --guest >"$TEST_TMP/g1.json" || die "mem --guest failed"
check "balloon_bytes is QEMU's query-balloon (256 MiB, not inflated)" [ "$(vm .balloon_bytes g1.json)" = "$(actual)" ]
check "  ... which is all of guest RAM" [ "$(vm .balloon_bytes g1.json)" = $((256 << 20)) ]
check "  ... read from its own QMP socket, which QEMU listens on: trusted" [ "$(vm '.monitor == {"source": "qmp", "trusted": true, "why": null}' g1.json)" = true ]
# Before polling is set the guest has reported at most once (its driver's first report, at load).
check "guest stats: known and inside guest RAM, or null with the reason" [ "$(vm 'if .guest_available_bytes == null then (.guest_unavailable | test("stats")) else .guest_available_bytes <= .balloon_bytes end' g1.json)" = true ]

# Inflate: the guest gives 96 MiB back.
"$PROBE" qmp "$SOCK" balloon '{"value":167772160}' >/dev/null || die "balloon command failed"
for i in $(seq 100); do [ "$(actual)" -le $((170 << 20)) ] && break; sleep 0.2; done
say "balloon inflated: actual $(actual) bytes"
"$VMHOST" mem --json --guest-poll 1 >/dev/null || die "mem --guest-poll failed"
sleep 2.5
"$VMHOST" mem --json --guest >"$TEST_TMP/g2.json" || die "mem --guest failed"
a=$(actual)
check "balloon_bytes follows the inflated balloon ($(vm .balloon_bytes g2.json) vs $a)" [ "$(vm .balloon_bytes g2.json)" = "$a" ]
check "the guest's MemAvailable and free memory are known once it reports" [ "$(vm '.guest_available_bytes > 0 and .guest_free_bytes > 0' g2.json)" = true ]
check "  ... and below the balloon's size" [ "$(vm '.guest_available_bytes <= .balloon_bytes' g2.json)" = true ]
"$VMHOST" mem --json >"$TEST_TMP/p2.json"
say "overhead: $(vm .overhead_bytes p2.json) assuming all guest RAM resident, $(vm .overhead_bytes g2.json) with the balloon"
check "the overhead estimate uses the balloon: guest RAM counted as populated is smaller, overhead larger" \
	[ "$(jq -n --argjson a "$(vm .overhead_bytes p2.json)" --argjson b "$(vm .overhead_bytes g2.json)" '$b >= $a')" = true ]
check "the monitor is still usable after vmhost's visits" sh -c "'$PROBE' qmp '$SOCK' query-status | grep -q running"

# A monitor held by another client: one bounded wait, the reason, and the rest of mem as usual.
"$PROBE" hold "$SOCK" 20 &
HOLDER=$!
adopt "$HOLDER"
sleep 0.5
t0=$(date +%s%N)
"$VMHOST" mem --json --guest >"$TEST_TMP/busy.json" || fail "mem --guest failed with a busy monitor"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
say "mem --guest with the monitor busy: ${ms} ms; reason: $(vm .guest_unavailable busy.json)"
check "a busy monitor gives the reason, not a hang" [ "$(vm '.guest_unavailable | test("busy|another client")' busy.json)" = true ]
check "  ... and the memory figures as usual" [ "$(vm '.rss_bytes > 0' busy.json)" = true ]
stop_pid "$HOLDER"
finish
