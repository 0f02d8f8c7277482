#!/bin/bash
# Memory pressure per VM without PSI (issue 45 item 4): a fake guest reading its disk through the
# page cache inside a memory cgroup whose limit is below what it reads (the cgroup reclaims its own
# cache on every read) shows reclaim stalls, and stall_percent over an interval; the same guest
# outside any limit shows none. On a hybrid host (the limit in v1's memory controller) the guest
# is also put in a per-VM scope of the unified tree, whose memory PSI then tells the same story as
# its stalls. Delay accounting is turned on for the test and put back on every exit path; the
# guests start after it is on (a thread gets its delay record when it starts).
. "$VMHOST_TESTS/lib.sh"
delayacct_to 1
if [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
	CG=/sys/fs/cgroup/memory/vmhost-stalls-$$
	LIMIT=memory.limit_in_bytes
else
	base=/sys/fs/cgroup
	[ -f $base/cgroup.procs ] || base=/sys/fs/cgroup/unified
	grep -qw memory $base/cgroup.subtree_control 2>/dev/null || skip "no memory cgroup controller (v1 or v2)"
	CG=$base/vmhost-stalls-$$
	LIMIT=memory.max
fi
on_cleanup 'rmdir "$CG" 2>/dev/null'
mkdir "$CG" && echo $((48 << 20)) >"$CG/$LIMIT" || die "cannot make a memory cgroup with a limit at $CG"
# The unified tree's PSI, per cgroup whatever its controllers: a libvirt-like scope there.
SCOPE=""
if [ "$LIMIT" = memory.limit_in_bytes ] && [ -f /sys/fs/cgroup/unified/cgroup.procs ]; then
	# libvirt's layout, which discovery takes for a VM's scope (machine.slice stays if others use it)
	SCOPE="/sys/fs/cgroup/unified/machine.slice/machine-qemu\\x2d9\\x2dpressed$$.scope"
	on_cleanup 'rmdir "$SCOPE" "${SCOPE%/*}" 2>/dev/null'
	mkdir -p "$SCOPE" && [ -f "$SCOPE/memory.pressure" ] || SCOPE=""
fi

# Each guest's disk: 160 MiB written around the page cache, so that its reads fill its own cache.
for d in pressed free; do
	dd if=/dev/urandom of="$TEST_TMP/$d.img" bs=1M count=160 oflag=direct status=none || skip "cannot write $TEST_TMP/$d.img with O_DIRECT"
done
# The pressed guest starts inside the cgroup, so that everything it reads is charged there.
printf 'echo $$ >"$1/cgroup.procs" || exit 1\n[ -z "$2" ] || echo $$ >"$2/cgroup.procs" || exit 1\nshift 2\nexec "$@"\n' \
	>"$TEST_TMP/enter.sh"
GUEST=(-m 16M -fake-nothp -fake-nomerge -fake-vcpus 1)
FAKE_PREFIX="bash $TEST_TMP/enter.sh $CG ${SCOPE:-''}" fake_guest pressed "${GUEST[@]}" -fake-read-file "$TEST_TMP/pressed.img"
PRESSED=$SPAWNED
fake_guest free "${GUEST[@]}" -fake-read-file "$TEST_TMP/free.img"
FREE=$SPAWNED
check "the pressed guest is in the limited cgroup" grep -qx "$PRESSED" "$CG/cgroup.procs"
sleep 3 # a few passes over each disk

"$VMHOST" mem --json --interval 2 --pid "$PRESSED" --pid "$FREE" >"$TEST_TMP/mem.json"
vm() { jq -r --arg n "$1" ".vms[] | select(.name == \$n) | $2" "$TEST_TMP/mem.json"; }
say "pressed: reclaim $(vm pressed .stalls.reclaim_seconds) s, stall_percent $(vm pressed .stalls.stall_percent), cgroup $(vm pressed .cgroup); free: reclaim $(vm free .stalls.reclaim_seconds) s"
check "stalls read for both" [ "$(vm pressed .stalls_why)$(vm free .stalls_why)" = nullnull ]
check "the pressed guest stalled in reclaim" awk -v s="$(vm pressed .stalls.reclaim_seconds)" 'BEGIN { exit !(s > 0) }'
check "... over the interval too (stall_percent above 0)" awk -v p="$(vm pressed .stalls.stall_percent)" 'BEGIN { exit !(p > 0) }'
check "the guest without a limit did not" [ "$(vm free .stalls.reclaim_seconds)" = 0 ]
check "... nor did its vCPU (the reader is another thread)" [ "$(vm pressed '.vcpus[0].stall_seconds')" = 0 ]
if [ -n "$SCOPE" ]; then
	# Both count from the guest's start (its scope is new): PSI the wall time one of its tasks
	# stalled on memory, the stalls each thread's own (one reader here), reclaim with preemption.
	psi=$(vm pressed .pressure.memory.some_seconds)
	mine=$(vm pressed '.stalls | .wpcopy_seconds + .swapin_seconds + .reclaim_seconds + .thrashing_seconds + .compact_seconds')
	say "pressed: memory PSI some $psi s, memory stalls $mine s, since it started"
	check "its scope's memory PSI tells the same story as its stalls (within 2x)" \
		awk -v a="$psi" -v b="$mine" 'BEGIN { exit !(a > 0.05 && b > 0.05 && a <= 2 * b && b <= 2 * a) }'
else
	skip_part "no PSI per cgroup beside a memory limit here (a v2-only host: the limit's cgroup has it)"
fi
finish
