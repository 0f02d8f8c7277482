#!/bin/bash
# A VM moved between cgroups while vmhost reads it: a fake guest hops between two per-VM scopes
# (libvirt's machine.slice layout, in the v1 memory controller on a hybrid host like this one, else
# in the unified tree), and the scope it leaves is removed and made again each time. Every
# `vmhost mem` exits 0 and lists the guest; its cgroup is one of the two scopes, never a mix, and
# its cgroup memory a scope's own figure or null (the scope gone at that moment). record runs
# through it too.
. "$VMHOST_TESTS/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (cgroups)"
if [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
	CG=/sys/fs/cgroup/memory
else
	CG=/sys/fs/cgroup
	[ -f "$CG/cgroup.procs" ] || CG=/sys/fs/cgroup/unified
fi
TOP=$CG/vmhost-move-$$
A=$TOP/machine.slice/machine-qemu\\x2d1\\x2dhopper.scope
B=$TOP/machine.slice/machine-qemu\\x2d2\\x2dhopper.scope
on_cleanup 'for d in "$A" "$B" "$TOP/machine.slice" "$TOP"; do rmdir "$d" 2>/dev/null; done'

mkdir -p "$A" "$B" || die "cannot make cgroups under $CG"
if [ "$CG" != /sys/fs/cgroup/memory ]; then
	# The unified tree: the memory controller is given to the scopes by their parents (ours;
	# the root's is the host's, left as it is).
	grep -qw memory "$CG/cgroup.subtree_control" || skip "no memory controller under $CG"
	echo +memory >"$TOP/cgroup.subtree_control" 2>/dev/null
	echo +memory >"$TOP/machine.slice/cgroup.subtree_control" 2>/dev/null
fi
fake_guest hopper -m 32M -fake-nomerge
G=$SPAWNED
echo "$G" >"$A/cgroup.procs" || die "cannot move the guest into $A"
scope_a=${A#"$CG"}
scope_b=${B#"$CG"}

# The mover: into B, A made again; into A, B made again; as fast as the shell goes.
hop() {
	while :; do
		echo "$G" >"$B/cgroup.procs" 2>/dev/null
		rmdir "$A" 2>/dev/null
		mkdir -p "$A"
		echo "$G" >"$A/cgroup.procs" 2>/dev/null
		rmdir "$B" 2>/dev/null
		mkdir -p "$B"
	done
}
spawn hop
MOVER=$SPAWNED

runs=40 bad=0 seen_a=0 seen_b=0 numbers=0 nulls=0
memtotal=$(awk '/^MemTotal:/ { print $2 * 1024 }' /proc/meminfo)
for i in $(seq "$runs"); do
	"$VMHOST" mem --json >"$TEST_TMP/mem.json" 2>"$TEST_TMP/mem.err"
	rc=$?
	vm=$(jq -c --argjson p "$G" '.vms[] | select(.pid == $p)' "$TEST_TMP/mem.json" 2>/dev/null)
	cg=$(echo "$vm" | jq -r '.cgroup // "null"' 2>/dev/null)
	mem=$(echo "$vm" | jq -r '.cgroup_memory_bytes // "null"' 2>/dev/null)
	if [ "$rc" != 0 ] || [ -z "$vm" ] || [ "$(echo "$vm" | jq -r .name)" != hopper ]; then
		bad=$((bad + 1))
		say "run $i: rc=$rc, guest: ${vm:-missing} $(head -c 300 "$TEST_TMP/mem.err")"
		continue
	fi
	case $cg in
	"$scope_a") seen_a=$((seen_a + 1)) ;;
	"$scope_b") seen_b=$((seen_b + 1)) ;;
	*)
		bad=$((bad + 1))
		say "run $i: cgroup '$cg' is neither scope"
		continue
		;;
	esac
	if [ "$mem" = null ]; then
		nulls=$((nulls + 1))
	elif [[ $mem =~ ^[0-9]+$ ]] && le "$mem" "$memtotal"; then
		numbers=$((numbers + 1))
	else
		bad=$((bad + 1))
		say "run $i: cgroup memory '$mem' is not a figure"
	fi
done
say "$runs runs: in scope A $seen_a, in B $seen_b; cgroup memory a figure $numbers times, null $nulls"
check "every mem run exits 0 and lists the guest in one of its two scopes, with a figure or null ($bad bad)" [ "$bad" = 0 ]
check "the guest was read in both scopes (it moved while vmhost read it)" sh -c "[ $seen_a -gt 0 ] && [ $seen_b -gt 0 ]"
check "the scope's memory was read as a figure in some runs" [ "$numbers" -gt 0 ]

"$VMHOST" record --db "$TEST_TMP/m.db" --interval 0.1 --duration 1 --kvm-interval 0 --quiet 2>"$TEST_TMP/rec.err"
rc=$?
check "record through the moves: exit 0 ($(head -c 300 "$TEST_TMP/rec.err"))" [ "$rc" = 0 ]
check "record: the guest's samples are written" \
	ge "$(sqlite3 "$TEST_TMP/m.db" "SELECT count(*) FROM vm_samples JOIN vms ON vms.id = vm_id WHERE pid = $G")" 5
stop_pid "$MOVER"
kill -0 "$G" 2>/dev/null
check "the guest lived through it" [ $? = 0 ]
echo "$G" >"$CG/cgroup.procs" 2>/dev/null
finish
