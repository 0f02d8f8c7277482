# Why a VM does not merge, on real processes: real QEMUs (TCG, paused) with -machine
# mem-merge=off, with guest RAM on a shared memfd backend, and plain; a VM-like process that
# never marks its RAM mergeable; and the plain QEMU once KSM is stopped. `vmhost mem --json`
# gives each its ksm_mergeable and ksm_unmergeable_reason, the human output names them in one line.
. "$VMHOST_TESTS/lib.sh"
[ -d $KSM ] || skip "this kernel has no KSM"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/deps/test/qemu.txt)"
ksm_save || die "cannot read KSM settings"
Q=(qemu-system-x86_64 -accel tcg -m 64 -S -display none -nodefaults -monitor none -serial none)
spawn "${Q[@]}" -machine pc,mem-merge=off -name reason-nomerge
nomerge=$SPAWNED
spawn "${Q[@]}" -machine pc,memory-backend=ram0 -object memory-backend-memfd,id=ram0,size=64M,share=on -name reason-shared
shared=$SPAWNED
spawn "${Q[@]}" -machine pc -name reason-plain
plain=$SPAWNED
fake_guest reason-unmarked -m 16 -fake-nomerge
unmarked=$SPAWNED
# QEMU maps guest RAM (and marks it) before it waits paused: wait for its RAM to be there.
for _ in $(seq 100); do
	n=$(for p in $nomerge $shared $plain; do grep -c . /proc/$p/ksm_stat 2>/dev/null; done | wc -l)
	[ "$n" = 3 ] && grep -q "ksm_mergeable: yes" /proc/$plain/ksm_stat 2>/dev/null && break
	sleep 0.1
done

reason() { # JSON NAME: "mergeable reason"
	jq -r --arg n "$2" '.vms[] | select(.name == $n) | "\(.ksm_mergeable) \(.ksm_unmergeable_reason)"' "$1"
}
echo 1 >$KSM/run
"$VMHOST" --json mem >"$TEST_TMP/run.json" || die "vmhost mem failed"
"$VMHOST" mem >"$TEST_TMP/run.txt"
got=$(reason "$TEST_TMP/run.json" reason-nomerge)
check "mem-merge=off: the kernel says not mergeable, the reason is mem-merge-off ($got)" test "$got" = "false mem-merge-off"
got=$(reason "$TEST_TMP/run.json" reason-shared)
check "RAM on a shared memfd: shared-memory ($got)" test "${got#* }" = shared-memory
got=$(reason "$TEST_TMP/run.json" reason-unmarked)
check "RAM never marked mergeable: not-marked ($got)" test "$got" = "false not-marked"
got=$(reason "$TEST_TMP/run.json" reason-plain)
check "plain QEMU with KSM running: mergeable, nothing in the way ($got)" test "$got" = "true null"
check "human output names them in one line" \
	grep -q "KSM cannot merge the RAM of: .*reason-nomerge (mem-merge-off).*reason-shared (shared-memory)" "$TEST_TMP/run.txt"
check "... and not the plain one" bash -c "! grep 'KSM cannot merge' '$TEST_TMP/run.txt' | grep -q reason-plain"

echo 0 >$KSM/run
"$VMHOST" --json mem >"$TEST_TMP/stopped.json" || die "vmhost mem failed"
got=$(reason "$TEST_TMP/stopped.json" reason-plain)
check "plain QEMU with KSM stopped: ksm-stopped ($got)" test "$got" = "true ksm-stopped"
got=$(reason "$TEST_TMP/stopped.json" reason-nomerge)
check "its own reason stays first for mem-merge=off ($got)" test "$got" = "false mem-merge-off"
for p in $nomerge $shared $plain $unmarked; do stop_pid $p; done
finish
