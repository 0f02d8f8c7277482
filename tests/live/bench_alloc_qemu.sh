#!/bin/bash
# vmhost bench alloc --qemu: a real QEMU with preallocated RAM is started, timed and stopped, and
# none is left behind, neither after a normal run nor when vmhost is killed in the middle.
. "$VMHOST_TESTS/lib.sh"
jqc() { jq -e "$@" >/dev/null; }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (scripts/deps/test/qemu.txt)"

# vmhost puts each QEMU's QMP socket in a private dir under $TMPDIR: this test's QEMUs, and
# only they, have the test's temp dir on their command line (other runs may go on meanwhile).
export TMPDIR=$TEST_TMP
our_qemus() { pgrep -f -- "-qmp unix:$TEST_TMP/" || true; }

json=$TEST_TMP/q.json
"$VMHOST" --json bench alloc --qemu --sizes 64M --threads 1,2 --repeat 2 --strategies madv-populate-write-thp >"$json" 2>"$TEST_TMP/err" \
	|| die "bench alloc --qemu failed: $(cat "$TEST_TMP/err")"
check "qemu-prealloc rows for each thread count" test "$(jq '[.rows[] | select(.strategy == "qemu-prealloc")] | length' "$json")" = 2
check "QEMU create and destroy were timed" \
	jqc '[.rows[] | select(.strategy == "qemu-prealloc")] | length == 2 and all(.[]; .create_seconds > 0 and .destroy_seconds > 0 and .runs == 2 and .efficiency > 0)' "$json"
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
check "QEMU's temp dirs are gone" test -z "$(ls -d "$TEST_TMP"/vmhost-qemu.* 2>/dev/null)"
finish
