#!/bin/bash
# vmhost bench alloc --qemu: a real QEMU with preallocated RAM is started, timed and stopped, and
# none is left behind, neither after a normal run nor when vmhost is killed in the middle.
. "$VMHOST_TESTS/lib.sh"
jqc() { jq -e "$@" >/dev/null; }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (scripts/deps/qemu.txt)"

# Our QEMUs, and only ours, carry this memory backend id and a private dir under /tmp.
our_qemus() { pgrep -f 'id=vmhost-ram,size=' || true; }
[ -z "$(our_qemus)" ] || die "a vmhost bench alloc QEMU is already running: $(our_qemus)"

json=$TEST_TMP/q.json
"$VMHOST" --json bench alloc --qemu --sizes 64M --threads 1,2 --repeat 2 --strategies madv-populate-write-thp >"$json" 2>"$TEST_TMP/err" \
	|| die "bench alloc --qemu failed: $(cat "$TEST_TMP/err")"
check "qemu-prealloc rows for each thread count" test "$(jq '[.rows[] | select(.strategy == "qemu-prealloc")] | length' "$json")" = 2
check "QEMU create and destroy were timed" \
	jqc 'all(.rows[] | select(.strategy == "qemu-prealloc"); .create_seconds > 0 and .destroy_seconds > 0 and .runs == 2 and .efficiency > 0)' "$json"
check "the accelerator is reported" jqc '.qemu.accel == "kvm" or .qemu.accel == "tcg"' "$json"
check "no QEMU left after the run" test -z "$(our_qemus)"

# A QEMU that cannot start is a clear error, and leaves nothing behind.
"$VMHOST" bench alloc --qemu-binary /nonexistent/qemu --sizes 32M --threads 1 --repeat 1 --strategies touch-4k >/dev/null 2>"$TEST_TMP/err"
check "missing QEMU binary: exit 1" test $? = 1
check "missing QEMU binary: says so" grep -q '^vmhost: bench alloc: qemu: .*nonexistent' "$TEST_TMP/err"

# Killed while QEMU runs: the signal handler kills QEMU by pid.
spawn "$VMHOST" bench alloc --qemu --sizes 128M --threads 1 --repeat 20 --strategies touch-4k
vmhost_pid=$SPAWNED
seen=""
for _ in $(seq 300); do
	seen=$(our_qemus)
	[ -n "$seen" ] && break
	sleep 0.05
done
check "a QEMU was started" test -n "$seen"
kill -TERM "$vmhost_pid"
wait "$vmhost_pid"
rc=$?
check "vmhost exits with 128+SIGTERM" test "$rc" = 143
sleep 0.2
check "no QEMU left after SIGTERM" test -z "$(our_qemus)"
check "its temp dir is gone" test -z "$(ls -d /tmp/vmhost-qemu.* 2>/dev/null | while read -r d; do [ -O "$d" ] && [ ! -e "$d/qemu.log" ] || echo "$d"; done | head -1)"
finish
