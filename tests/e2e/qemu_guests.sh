# Two real QEMU guests (TCG, a Debian kernel, a busybox initramfs built here) with different
# names and RAM sizes: discovery, names, guest RAM, exact overhead from QEMU's real mappings,
# KSM merging between them, and both stopped afterwards (by pid).
. "$VMHOST_TESTS/lib.sh"
QEMU=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 missing (scripts/deps/test/qemu.txt)"
img=$("$VMHOST_TESTS/../scripts/guest-image.sh" "$VMHOST_BUILD/guest" | tail -1) || die "cannot build the guest image"
set -- $img
KERNEL=$1 INITRD=$2
# TCG always: /dev/kvm can exist on a nested host where KVM guests never run (this machine).
accel=${VMHOST_E2E_ACCEL:-tcg}

boot() { # log name-arg mem
	spawn "$QEMU" -name "$2" -m "$3" -machine pc,accel=$accel -smp 1 -nodefaults -display none \
		-kernel "$KERNEL" -initrd "$INITRD" -append "console=ttyS0 quiet panic=-1" \
		-serial "file:$TEST_TMP/$1.log" -no-reboot
}
boot small "guest=e2e-small,debug-threads=on" 256M
SMALL=$SPAWNED
boot big "e2e-big" 384
BIG=$SPAWNED
for i in $(seq 240); do
	grep -q vmhost-guest-up "$TEST_TMP/small.log" 2>/dev/null && grep -q vmhost-guest-up "$TEST_TMP/big.log" 2>/dev/null && break
	kill -0 $SMALL 2>/dev/null && kill -0 $BIG 2>/dev/null || die "a guest exited during boot"
	sleep 0.5
done
if ! grep -q vmhost-guest-up "$TEST_TMP/small.log" || ! grep -q vmhost-guest-up "$TEST_TMP/big.log"; then
	tail -n 3 "$TEST_TMP/small.log" "$TEST_TMP/big.log"
	die "guests did not boot in 120 s"
fi
say "both guests up after ${SECONDS}s"

"$VMHOST" mem --json >"$TEST_TMP/mem.json" || die "mem --json failed"
vm() { jq -e --argjson p "$1" ".vms[] | select(.pid == \$p) | $2" "$TEST_TMP/mem.json" >/dev/null; }
check "small guest found, named from -name guest=...,debug-threads=on" vm $SMALL '.vmm == "qemu" and .name == "e2e-small"'
check "big guest found, named from -name e2e-big" vm $BIG '.name == "e2e-big"'
check "guest RAM 256 MiB" vm $SMALL '.guest_ram_bytes == 268435456'
check "guest RAM 384 MiB (bare -m number is MiB)" vm $BIG '.guest_ram_bytes == 402653184'
check "RSS and overhead known" vm $SMALL '.rss_bytes > 20000000 and .overhead_bytes != null'
check "RSS is the kernel's" near "$(jq --argjson p $SMALL '.vms[] | select(.pid == $p) | .rss_bytes' "$TEST_TMP/mem.json")" \
	"$(awk '/^VmRSS/ {print $2 * 1024}' /proc/$SMALL/status)" 2

# Exact: PSS from smaps_rollup; overhead from QEMU's mappings with guest RAM found among them.
"$VMHOST" mem --exact --json >"$TEST_TMP/exact.json"
ex() { jq -e --argjson p "$1" ".vms[] | select(.pid == \$p) | $2" "$TEST_TMP/exact.json" >/dev/null; }
check "--exact finds guest RAM in QEMU's mappings (overhead_method exact)" ex $SMALL '.overhead_method == "exact" and .pss_method == "exact"'
check "--exact overhead of the big guest too" ex $BIG '.overhead_method == "exact"'
oh=$(jq --argjson p $SMALL '.vms[] | select(.pid == $p) | .overhead_bytes' "$TEST_TMP/exact.json")
rss=$(jq --argjson p $SMALL '.vms[] | select(.pid == $p) | .rss_bytes' "$TEST_TMP/exact.json")
say "small guest: rss $rss, exact overhead $oh (TCG's translation cache and QEMU itself)"
check "exact overhead is part of RSS" sh -c "[ $oh -gt 0 ] && [ $oh -lt $rss ]"

# KSM: QEMU marks guest RAM mergeable; two guests booted from one image share pages.
[ -w $KSM/run ] || skip "needs root and KSM"
ksm_save
[ -f $KSM/advisor_mode ] && echo none >$KSM/advisor_mode
echo 2 >$KSM/run
echo 4000 >$KSM/pages_to_scan
echo 10 >$KSM/sleep_millisecs
echo 1 >$KSM/run
ksm_wait_settled 1000 120 || die "KSM did not merge the guests (pages_sharing=$(cat $KSM/pages_sharing))"
echo 0 >$KSM/run
"$VMHOST" mem --json --pss-budget 0 >"$TEST_TMP/ksm.json" # the estimate and its bound (sampled and exact: mem_pss_*.sh)
for p in $SMALL $BIG; do
	kernel=$(awk '/^ksm_merging_pages/ {print $2}' /proc/$p/ksm_stat)
	got=$(jq --argjson p $p '.vms[] | select(.pid == $p) | .ksm_merging_pages' "$TEST_TMP/ksm.json")
	check "guest $p: ksm_merging_pages is the kernel's ($got vs $kernel) and > 0" sh -c "[ '$got' = '$kernel' ] && [ $got -gt 0 ]"
	check "guest $p: KSM saves it something and PSS < RSS" jq -e --argjson p $p '.vms[] | select(.pid == $p) | .ksm_saved_bytes > 0 and .pss_bytes < .rss_bytes' "$TEST_TMP/ksm.json"
	exact=$(awk '/^Pss:/ {print $2 * 1024}' /proc/$p/smaps_rollup)
	est=$(jq --argjson p $p '.vms[] | select(.pid == $p) | .pss_bytes' "$TEST_TMP/ksm.json")
	bound=$(jq --argjson p $p '.vms[] | select(.pid == $p) | .pss_error_bound_bytes' "$TEST_TMP/ksm.json")
	say "guest $p: PSS estimate $est, exact $exact, stated bound $bound"
	check "guest $p: PSS estimate within its stated bound" awk -v a="$est" -v b="$exact" -v m="$bound" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= m) }'
done
check "ksm section saw the merge" jq -e '.ksm.pages_sharing > 0' "$TEST_TMP/ksm.json"

# Stop both by pid, and make sure they are gone.
stop_pid $SMALL
stop_pid $BIG
check "both guests stopped" sh -c "! kill -0 $SMALL 2>/dev/null && ! kill -0 $BIG 2>/dev/null"
"$VMHOST" mem --json >"$TEST_TMP/after.json"
check "vmhost no longer lists them" jq -e --argjson a $SMALL --argjson b $BIG '[.vms[] | select(.pid == $a or .pid == $b)] | length == 0' "$TEST_TMP/after.json"
finish
