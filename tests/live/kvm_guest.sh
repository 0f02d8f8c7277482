# Real KVM: the /dev/kvm helper guest's exits, counted exactly by tracepoints, and the firmware
# guest's KVM statistics through QMP query-stats (exits growing ~100k/s), the socket left usable.
# Needs /dev/kvm: without it this test is skipped (exit 77) and says so.
. "$VMHOST_TESTS/lib.sh"
[ -c /dev/kvm ] || { say "SKIP: /dev/kvm is absent on this machine (no KVM to run a guest on)"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/deps/qemu.txt)"
P=$VMHOST_BUILD/kvmprobe
G=$VMHOST_BUILD/kvmguest
N=1000
M=10

"$G" --io $N --mmio $M >"$TEST_TMP/guest" 2>&1
check "the helper guest ran: $N port writes, $M MMIO writes, one hlt, each a userspace exit" \
	grep -q "^io_exits=$N mmio_exits=$M hlt_exits=1 " "$TEST_TMP/guest"
cat "$TEST_TMP/guest"

# Tracepoints on the helper: it waits for SIGUSR1, sent once every event is open.
if [ -d /sys/kernel/tracing/events ]; then run() { "$@"; }; else
	run() { unshare -m sh -c 'mount -t tracefs nodev /sys/kernel/tracing && exec "$@"' sh "$@"; }
fi
spawn "$G" --io $N --mmio $M --wait-signal
GUEST=$SPAWNED
sleep 0.3
run "$P" trace "$GUEST" --signal >"$TEST_TMP/trace" 2>&1
cat "$TEST_TMP/trace"
count() { awk -v e="$1" -v r="$2" '$1 == e && substr($0, length(e) + 2, length(r)) == r && NF == split(r, x, " ") + 2 { print $NF }' "$TEST_TMP/trace"; }
check "kvm_pio: exactly $N port writes to 0x80" test "$(count kvm_pio '0x80 out')" = $N
check "kvm_userspace_exit IO: exactly $N" test "$(count kvm_userspace_exit IO)" = $N
check "kvm_userspace_exit MMIO: exactly $M" test "$(count kvm_userspace_exit MMIO)" = $M
check "kvm_userspace_exit HLT: exactly 1" test "$(count kvm_userspace_exit HLT)" = 1
exits=$(grep -c '^kvm_exit ' "$TEST_TMP/trace")
[ "$exits" = 0 ] && say "kvm:kvm_exit did not fire (as on nested PVM): no reason counted"

# The firmware guest under QEMU with accel=kvm: query-stats twice, a second apart.
sh "$VMHOST_TESTS/helpers/mkfw.sh" "$TEST_TMP/fw.bin"
SOCK=$TEST_TMP/qmp.sock
spawn qemu-system-x86_64 -machine pc,accel=kvm -bios "$TEST_TMP/fw.bin" -m 16 -nographic -nodefaults \
	-qmp "unix:$SOCK,server=on,wait=off"
for i in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
exits() { "$P" stats "$SOCK" | awk '$1 == "vcpu0" && $3 == "exits" { print $5 }'; }
a=$(exits); t0=$(date +%s%N); sleep 1; b=$(exits); t1=$(date +%s%N)
rate=$(awk -v a="$a" -v b="$b" -v t=$((t1 - t0)) 'BEGIN { printf "%d", (b - a) / (t / 1e9) }')
say "firmware guest: exits $a -> $b, $rate per second"
check "query-stats: vCPU 0's exits grow by more than 10,000 a second" ge "$rate" 10000
"$P" stats "$SOCK" --vcpu >"$TEST_TMP/stats"
check "per-vCPU kinds from the schema (exits events, halt_wait_ns time_ns)" \
	sh -c "grep -q ' exits events ' '$TEST_TMP/stats' && grep -q ' halt_wait_ns time_ns ' '$TEST_TMP/stats'"
check "histograms as arrays" grep -q ' log2-histogram \[' "$TEST_TMP/stats"
check "the socket is usable after" test "$("$P" qmp "$SOCK" query-status | jq -r .status)" = running
"$P" hold "$SOCK" 2 >"$TEST_TMP/hold" &
TEST_PIDS="$TEST_PIDS $!"
sleep 0.5
"$P" stats "$SOCK" 2>"$TEST_TMP/err" >/dev/null
check "while another client holds it: busy" grep -q '^error: QMP busy' "$TEST_TMP/err"
finish
