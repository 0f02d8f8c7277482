# What the host could take back from a guest, checked against what it gets back (issue 44 item 5).
# Three TCG guests of the project's Debian kernel and busybox image with a virtio balloon: two of
# 512 MiB polling their statistics every second, which allocate then free 200 MiB
# (vmhost.alloc=200), one with free page reporting off, one with it on; and one with polling off.
# Off: host RSS stays, vmhost says about 200 MiB reclaimable by balloon, and inflating the balloon
# by vmhost's figure (QMP balloon) takes RSS down by at least 90% of it. On: RSS falls by itself,
# and the figure follows it to near zero. Polling off: no figure, and the reason says how to turn
# it on. The figures (predicted, returned) are printed for docs/accounting.md. Guest RAM is kept
# from KSM (mem-merge=off), which another test may run meanwhile. QEMUs stopped by pid.
. "$VMHOST_TESTS/lib.sh"
PROBE=$VMHOST_BUILD/kvmprobe
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/deps/test/qemu.txt)"
img=$("$VMHOST_TESTS/../scripts/guest-image.sh" "$VMHOST_BUILD/guest" | tail -1) || die "cannot build the guest image"
set -- $img
KERNEL=$1 INITRD=$2
MiB=1048576

boot() { # name mem balloon-properties append
	spawn qemu-system-x86_64 -machine pc,accel=tcg,mem-merge=off -m "$2" -smp 1 -display none -monitor none -nodefaults \
		-name "guest=$1" -device "virtio-balloon-pci,id=balloon0$3" \
		-qmp "unix:$TEST_TMP/$1.sock,server=on,wait=off" -kernel "$KERNEL" -initrd "$INITRD" \
		-append "console=ttyS0 quiet $4" -serial "file:$TEST_TMP/$1.log" -no-reboot
}
boot off 512 ",guest-stats-polling-interval=1" vmhost.alloc=200
OFF=$SPAWNED
boot on 512 ",guest-stats-polling-interval=1,free-page-reporting=on" vmhost.alloc=200
ON=$SPAWNED
boot nopoll 256 "" ""
NOPOLL=$SPAWNED
rss() { awk '/^VmRSS/ {print $2 * 1024}' "/proc/$1/status"; }
mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }

# Until both have freed their 200 MiB (and the unpolled one is up), the peak RSS of the one with
# reporting on: it may give its memory back before vmhost looks.
peak_on=0
for i in $(seq 900); do
	r=$(rss "$ON" 2>/dev/null) || die "the guest with reporting on exited"
	[ "$r" -gt "$peak_on" ] && peak_on=$r
	grep -q vmhost-alloc-freed "$TEST_TMP/off.log" 2>/dev/null && grep -q vmhost-alloc-freed "$TEST_TMP/on.log" 2>/dev/null &&
		grep -q vmhost-guest-up "$TEST_TMP/nopoll.log" 2>/dev/null && break
	kill -0 "$OFF" 2>/dev/null && kill -0 "$NOPOLL" 2>/dev/null || die "a guest exited"
	sleep 0.2
done
grep -q vmhost-alloc-freed "$TEST_TMP/off.log" && grep -q vmhost-alloc-freed "$TEST_TMP/on.log" || die "the guests did not allocate and free in 180 s"
say "guests up and freed after ${SECONDS}s"
rss_freed=$(rss "$OFF")
# The guests report every second, and reporting waits 2 s before it hands memory back.
for i in $(seq 40); do
	r=$(rss "$ON")
	[ "$r" -gt "$peak_on" ] && peak_on=$r
	sleep 0.25
done

"$VMHOST" mem --guest --json >"$TEST_TMP/m1.json" || die "mem --guest failed"
vm() { jq -r --argjson p "$1" ".vms[] | select(.pid == \$p) | $2" "$TEST_TMP/$3"; }
rss_off=$(rss "$OFF")
by=$(vm "$OFF" .reclaimable.by.balloon m1.json)
bound=$(vm "$OFF" .reclaimable.error_bound_bytes m1.json)
say "reporting off: RSS $(mib "$rss_freed") MiB once freed, $(mib "$rss_off") MiB 10 s later; vmhost: by balloon $(mib "$by") MiB, $(mib "$(vm "$OFF" .reclaimable.bytes m1.json)") +- $(mib "$bound") MiB in all, resident guest RAM $(mib "$(vm "$OFF" .reclaimable.guest_resident_bytes m1.json)") MiB"
check "reporting off: host RSS stays once the guest freed its memory" ge "$rss_off" $((rss_freed - 16 * MiB))
check "  ... and vmhost says about 200 MiB reclaimable by balloon (at least 150)" ge "$by" $((150 * MiB))
check "  ... and no more than the guest freed and then some" le "$by" $((240 * MiB))
check "  ... as much or more by turning free page reporting on, which is off" \
	[ "$(vm "$OFF" '[.reclaimable.by.free_page_reporting >= .reclaimable.by.balloon, .reclaimable.free_page_reporting] | @csv' m1.json)" = "true,false" ]
check "  ... with the guest's polling interval, 1 s, and its report's age under 3 s" \
	[ "$(vm "$OFF" '.reclaimable.stats_polling_seconds == 1 and .reclaimable.stats_age_seconds < 3' m1.json)" = true ]
check "  ... nothing in host swap" [ "$(vm "$OFF" .reclaimable.free_in_swap_bytes m1.json)" = "$(vm "$OFF" .swap_bytes m1.json)" ]

# Inflate the balloon by vmhost's figure: the guest hands back that much of its free memory.
actual=$("$PROBE" qmp "$TEST_TMP/off.sock" query-balloon | jq .actual)
target=$((actual - by))
"$PROBE" qmp "$TEST_TMP/off.sock" balloon "{\"value\":$target}" >/dev/null || die "QMP balloon failed"
for i in $(seq 120); do
	[ "$("$PROBE" qmp "$TEST_TMP/off.sock" query-balloon | jq .actual)" -le $((target + MiB)) ] && break
	sleep 0.5
done
sleep 2
rss_after=$(rss "$OFF")
returned=$((rss_off - rss_after))
say "reporting off, balloon inflated by $(mib "$by") MiB: RSS $(mib "$rss_off") -> $(mib "$rss_after") MiB, returned $(mib "$returned") MiB ($(awk -v r="$returned" -v b="$by" 'BEGIN { printf "%.0f", 100 * r / b }')% of the figure)"
check "inflating the balloon by vmhost's figure takes RSS down by at least 90% of it" ge "$returned" "$(awk -v b="$by" 'BEGIN { printf "%.0f", 0.9 * b }')"
"$VMHOST" mem --guest --json >"$TEST_TMP/m2.json" || die "mem --guest failed"
left=$(vm "$OFF" .reclaimable.bytes m2.json)
say "  ... then vmhost says $(mib "$left") +- $(mib "$(vm "$OFF" .reclaimable.error_bound_bytes m2.json)") MiB"
all=$(vm "$OFF" .reclaimable.bytes m1.json)
off_by=$((left - (all - returned)))
check "  ... and vmhost's figure falls by what came back (within 16 MiB)" le "${off_by#-}" $((16 * MiB))

rss_on=$(rss "$ON")
fell=$((peak_on - rss_on))
by_on=$(vm "$ON" .reclaimable.bytes m1.json)
say "reporting on: RSS $(mib "$peak_on") MiB at its peak, $(mib "$rss_on") MiB now (fell $(mib "$fell") MiB by itself); vmhost: $(mib "$by_on") +- $(mib "$(vm "$ON" .reclaimable.error_bound_bytes m1.json)") MiB"
check "reporting on: RSS falls by itself by most of the 200 MiB (at least 150)" ge "$fell" $((150 * MiB))
check "  ... and reclaimable follows it to near zero (under 64 MiB of the 200 freed)" le "$by_on" $((64 * MiB))
check "  ... of which neither action surely reaches more than 16 MiB" le "$(vm "$ON" .reclaimable.by.balloon m1.json)" $((16 * MiB))
check "  ... reporting on, nothing more to gain by turning it on" \
	[ "$(vm "$ON" '[.reclaimable.free_page_reporting, .reclaimable.by.free_page_reporting] | @csv' m1.json)" = "true,0" ]

why=$(vm "$NOPOLL" .reclaimable_why m1.json)
say "polling off: $why"
check "polling off: reclaimable is null" [ "$(vm "$NOPOLL" .reclaimable m1.json)" = null ]
check "  ... and says why and how to turn it on" sh -c "echo \"\$1\" | grep -q 'polling is off' && echo \"\$1\" | grep -q 'guest-stats-polling-interval' && echo \"\$1\" | grep -q 'virsh dommemstat'" _ "$why"
finish
