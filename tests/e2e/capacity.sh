# vmhost capacity, checked by starting what it says fits (issue 44, "Done when"). A TCG guest of
# 256 MiB that uses its RAM (vmhost.hold: 110 MiB of a tmpfs filled, the rest its kernel's) is the
# --image; the reserve is set so that about four more fit on this host as it is now. Then that many
# guests of 256 MiB are started, each using its RAM: every one runs (no OOM in a guest, none on the
# host, no host swap used), and what they cost the host (each QEMU's PSS and page tables, read
# once they hold their memory) fits in the room capacity counted (MemAvailable less the reserve,
# when it answered). Then one more is started: with it, their cost exceeds that room, so it does
# not fit within the reserve. Their cost is measured, not MemAvailable after: on a host others use
# too, MemAvailable moves by more than a guest while the guests start (it is printed). Guest RAM
# is kept from KSM (mem-merge=off): no merging blurs what a guest costs, and capacity says a guest
# like it shares nothing. Every QEMU stopped by pid.
. "$VMHOST_TESTS/lib.sh"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/deps/test/qemu.txt)"
img=$("$VMHOST_TESTS/../scripts/guest-image.sh" "$VMHOST_BUILD/guest" | tail -1) || die "cannot build the guest image"
set -- $img
KERNEL=$1 INITRD=$2
MiB=1048576

boot() { # name
	spawn qemu-system-x86_64 -machine pc,accel=tcg,mem-merge=off -m 256 -smp 1 -display none -monitor none -nodefaults \
		-name "guest=$1" -device virtio-balloon-pci,id=balloon0,guest-stats-polling-interval=2 \
		-qmp "unix:$TEST_TMP/$1.sock,server=on,wait=off" -kernel "$KERNEL" -initrd "$INITRD" \
		-append "console=ttyS0 quiet panic=-1 vmhost.hold=110" -serial "file:$TEST_TMP/$1.log" -no-reboot
	PIDS="$PIDS $SPAWNED"
}
wait_held() {
	local n i
	for i in $(seq 600); do
		for n; do grep -q vmhost-hold-done "$TEST_TMP/$n.log" 2>/dev/null || { sleep 0.5; continue 2; }; done
		return 0
	done
	die "guests $* did not fill their memory in 300 s"
}
avail() { awk '/^MemAvailable:/ {print $2 * 1024}' /proc/meminfo; }
oom_kills() { awk '/^oom_kill / {print $2}' /proc/vmstat; }
alive() { local p; for p in $PIDS; do kill -0 "$p" 2>/dev/null || return 1; done; }
mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }

PIDS=""
boot cap0
wait_held cap0
sleep 3
total=$(awk '/^MemTotal:/ {print $2 * 1024}' /proc/meminfo)
"$VMHOST" capacity --size 256M --image cap0 --reserve 0 --json >"$TEST_TMP/c0.json" || die "capacity failed"
per_vm=$(jq '.size_bytes + .overhead_bytes_per_vm' "$TEST_TMP/c0.json")
[ "$per_vm" -gt $((256 * MiB)) ] || die "no overhead measured on cap0: $(cat "$TEST_TMP/c0.json")"
# A reserve that leaves room for about 4.3 guests now: a handful to start on a shared 2-CPU host.
pct=$(awk -v a="$(avail)" -v p="$per_vm" -v t="$total" 'BEGIN { r = a - 4.3 * p; printf "%.3f", (r > 0 ? 100 * r / t : 0) }')
"$VMHOST" capacity --size 256M --image cap0 --reserve "$pct" --json >"$TEST_TMP/c.json" || die "capacity failed"
n=$(jq .fit_now "$TEST_TMP/c.json")
reserve=$(jq .reserve_bytes "$TEST_TMP/c.json")
say "capacity --size 256M --image cap0 --reserve $pct: $(jq -c '{fit_now, fit_after_reclaim, fit_with_sharing, limited_by, overhead_bytes_per_vm, mem_available_bytes, reserve_bytes}' "$TEST_TMP/c.json")"
check "it names a number of guests, limited by memory" [ "$(jq -r '.limited_by' "$TEST_TMP/c.json")" = memory ]
[ "$n" -ge 1 ] || die "capacity says none fit"

oom0=$(oom_kills)
room=$(($(jq .mem_available_bytes "$TEST_TMP/c.json") - reserve))
check "a guest like cap0 shares nothing (mem-merge=off): fit_with_sharing null, and why" \
	jq -e '.fit_with_sharing == null and (.sharing_why | test("mem-merge-off|not running"))' "$TEST_TMP/c.json"
# cost PIDS...: what these QEMUs cost the host, now: their PSS (smaps_rollup) and page tables.
cost() {
	local p sum=0
	for p; do
		sum=$((sum + $(awk '/^Pss:/ {print $2 * 1024}' "/proc/$p/smaps_rollup") + $(awk '/^VmPTE:/ {print $2 * 1024}' "/proc/$p/status")))
	done
	echo "$sum"
}
before=$(avail)
names="" started=""
for i in $(seq "$n"); do boot "cap$i"; names="$names cap$i"; started="$started $SPAWNED"; done
wait_held $names
sleep 5
used=$(cost $started)
after=$(avail)
say "$n guests started, holding their memory: they cost $(mib "$used") MiB ($(mib $((used / n))) MiB a guest; capacity counted $(mib "$per_vm")), in a room of $(mib "$room") MiB; MemAvailable meanwhile $(mib "$before") -> $(mib "$after") MiB, reserve $(mib "$reserve") MiB"
check "the $n guests run, each using its RAM" alive
check "  ... no guest ran out of memory" sh -c '! grep -lE "Kernel panic|Out of memory" "$1"/cap*.log | grep -q .' _ "$TEST_TMP"
check "  ... no OOM kill on the host" [ "$(oom_kills)" = "$oom0" ]
check "  ... no host swap used (SwapTotal $(awk '/^SwapTotal:/ {print $2}' /proc/meminfo) kB)" \
	[ "$(awk '/^SwapTotal:/ {t = $2} /^SwapFree:/ {f = $2} END {print t - f}' /proc/meminfo)" = 0 ]
check "  ... and what they cost fits in the room above the reserve" le "$used" "$room"

# One more: with it, the guests' cost exceeds the room: it does not fit within the reserve.
boot "cap$((n + 1))"
wait_held "cap$((n + 1))"
sleep 5
one=$(cost "$SPAWNED")
say "one more costs $(mib "$one") MiB: $(mib $((used + one))) MiB in all against the room's $(mib "$room") (MemAvailable now $(mib "$(avail)") MiB)"
check "one more guest does not fit within the reserve: with it the guests cost more than the room" ge $((used + one)) "$room"
finish
