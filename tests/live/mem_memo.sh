# vmhost mem remembers the VMs it saw in its runtime directory (core/model/vm_memo.h): the next run
# takes a VM it knows (same pid and start time) without reading its command line or thread
# list, nor its vCPUs' names while its thread count holds, only their figures, and says the same; a
# process that is no VM is known by its stat alone (no command line, no walk of its fds while their
# count holds). A memo of another boot, damaged, or in a directory others may
# write is not used; a runtime directory that cannot be written costs nothing but the speed.
. "$VMHOST_TESTS/lib.sh"
export VMHOST_RUNTIME_DIR=$TEST_TMP/run
MEMO=$VMHOST_RUNTIME_DIR/vms

fake_guest memoalpha -m 32M -fake-nomerge -fake-vcpus 2 -smp 2
A=$SPAWNED
fake_guest memobeta -m 32M -fake-nomerge -fake-vcpus 2 -smp 2
B=$SPAWNED
# A process that is no VM, and one that opens a file when told (its fd count moves).
spawn sleep 300
S=$SPAWNED
spawn /usr/bin/python3 -c '
import os, sys, time
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[1]): time.sleep(0.05)
f = open("/dev/null")
open(sys.argv[3], "w").close()
time.sleep(300)' "$TEST_TMP/open" "$TEST_TMP/ready" "$TEST_TMP/opened"
P=$SPAWNED
# Both have exec'd (a memo keeps the name it saw) and python has its fds of after its start-up.
for i in $(seq 100); do
	[ "$(cat /proc/$S/comm) $(cat /proc/$P/comm)" = "sleep python3" ] && [ -e "$TEST_TMP/ready" ] && break
	sleep 0.05
done

# What a user sees of the two guests: identity, RAM, cgroup and vCPU threads (in pid order: the
# table's order is by PSS, which moves).
seen() {
	jq -S --argjson a "$A" --argjson b "$B" '[.vms[] | select(.pid == $a or .pid == $b) |
		{pid, name, vmm, uuid, guest_ram_bytes, cgroup, vcpus: [.vcpus[] | {index, tid}]}] | sort_by(.pid)' "$1"
}
# opened FILE PID: how many times the last traced run opened /proc/PID/FILE (FILE a pattern).
opened() { grep -cE "\"/proc/$2/$1\"" "$TEST_TMP/trace" || true; }
traced_mem() { strace -f -e trace=openat -o "$TEST_TMP/trace" "$VMHOST" mem --json >"$1"; }

VMHOST_RUNTIME_DIR= "$VMHOST" mem --json >"$TEST_TMP/nomemo.json" || die "mem without a memo failed"
check "VMHOST_RUNTIME_DIR empty: no memo written" test ! -e "$MEMO"
seen "$TEST_TMP/nomemo.json" >"$TEST_TMP/want"
check "both guests found with their two vCPUs" jq -e 'length == 2 and all(.[]; (.vcpus | length) == 2)' "$TEST_TMP/want"

traced_mem "$TEST_TMP/first.json" || die "first mem failed"
check "the first run writes the memo" test -s "$MEMO"
check "the memo is private: file 0600, directory 0700" \
	test "$(stat -c %a "$MEMO") $(stat -c %a "$VMHOST_RUNTIME_DIR")" = "600 700"
check "the first run reads guest alpha's command line" test "$(opened cmdline "$A")" -ge 1
check "and the other process's" test "$(opened cmdline "$S")" -ge 1
seen "$TEST_TMP/first.json" >"$TEST_TMP/got"
check "the first run says what a run without memo says" cmp -s "$TEST_TMP/want" "$TEST_TMP/got"

before=$(stat -c %Y.%i "$MEMO")
traced_mem "$TEST_TMP/second.json" || die "second mem failed"
seen "$TEST_TMP/second.json" >"$TEST_TMP/got"
check "the second run says the same" cmp -s "$TEST_TMP/want" "$TEST_TMP/got"
check "the second run reads no command line or thread list of the known guests" \
	test "$(( $(opened cmdline "$A") + $(opened 'task' "$A") + $(opened cmdline "$B") ))" = 0
check "nor its vCPU names (its thread count held), but each vCPU's schedstat, its stat, status and cgroup (a VM can be moved)" \
	test "$(opened 'task/[0-9]+/comm' "$A") $(opened 'task/[0-9]+/schedstat' "$A") $(opened stat "$A") $(opened status "$A") $(opened cgroup "$A")" = "0 2 1 1 1"
check "a process that is no VM: its stat alone, not its command line nor its fds" \
	test "$(opened stat "$S") $(opened cmdline "$S") $(opened fd "$S")" = "1 0 0"
# Without debugfs a KVM VM is found by its fds: a process whose fd count moved is looked at again.
if [ ! -d /sys/kernel/debug/kvm ] && [ "$(stat -c %s /proc/self/fd)" -gt 0 ]; then
	touch "$TEST_TMP/open"
	for i in $(seq 100); do
		[ -e "$TEST_TMP/opened" ] && break
		sleep 0.05
	done
	traced_mem "$TEST_TMP/moved.json" || die "mem after an fd opened failed"
	check "no debugfs: the process whose fd count moved has its fds looked at" \
		test "$(opened cmdline "$P") $(opened fd "$P")" = "0 1"
	MOVED=1
else
	skip_part "debugfs' kvm directory is readable, or this kernel does not count fds: no fd walk to spare"
fi
check "the vCPU figures are read afresh" jq -e --argjson a "$A" \
	'.vms[] | select(.pid == $a) | (.vcpus | length) == 2 and all(.vcpus[]; .cpu_seconds >= 0 and .delay_seconds >= 0)' "$TEST_TMP/second.json"
check "an unchanged memo is not written again" test "$(stat -c %Y.%i "$MEMO")" = "$before"

# The memo is trusted for what it says: a name changed in it shows (same length, same file)...
sed -i 's/memoalpha/memogamma/' "$MEMO"
"$VMHOST" mem --json >"$TEST_TMP/tampered.json"
check "a VM the memo knows is taken from it" jq -e --argjson a "$A" \
	'.vms[] | select(.pid == $a) | .name == "memogamma"' "$TEST_TMP/tampered.json"
# ... so only our own directory, that no one else may write, is read.
sed -i 's/memoalpha/memogamma/' "$MEMO"
chmod 0777 "$VMHOST_RUNTIME_DIR"
"$VMHOST" mem --json >"$TEST_TMP/open.json" || fail "mem with a world-writable runtime directory failed"
check "a memo in a directory others may write is ignored" jq -e --argjson a "$A" \
	'.vms[] | select(.pid == $a) | .name == "memoalpha"' "$TEST_TMP/open.json"
chmod 0700 "$VMHOST_RUNTIME_DIR"

# Another boot's memo (its pids and start times mean nothing here): read everything, write anew.
printf '00000000-0000-0000-0000-000000000000' | dd of="$MEMO" bs=1 seek=13 conv=notrunc status=none
"$VMHOST" mem --json >"$TEST_TMP/boot.json"
seen "$TEST_TMP/boot.json" >"$TEST_TMP/got"
check "another boot's memo is not used" cmp -s "$TEST_TMP/want" "$TEST_TMP/got"
check "and is replaced by this boot's" cmp -s -n 50 "$MEMO" <(printf 'vmhost vms 3\n%s\n' "$(cat /proc/sys/kernel/random/boot_id)")
cp "$MEMO" "$TEST_TMP/good.memo"

# Damaged memos: cut short, or noise. Same answer, memo rewritten whole (the next run knows the
# guests by it again; its other processes are whoever runs now).
size=$(stat -c %s "$MEMO")
memo_is_good() {
	cmp -s -n 50 "$MEMO" "$TEST_TMP/good.memo" && traced_mem "$TEST_TMP/again.json" && [ "$(opened cmdline "$A")" = 0 ]
}
for damage in truncate noise; do
	case $damage in
	truncate) truncate -s $((size / 2)) "$MEMO" ;;
	noise) head -c "$size" /dev/urandom >"$MEMO" ;;
	esac
	"$VMHOST" mem --json >"$TEST_TMP/$damage.json" || fail "mem with a memo ($damage) failed"
	seen "$TEST_TMP/$damage.json" >"$TEST_TMP/got"
	check "a damaged memo ($damage) is not used" cmp -s "$TEST_TMP/want" "$TEST_TMP/got"
	check "and is written anew ($damage)" memo_is_good
done

# A guest that exits is forgotten; its pid would have another start time if reused.
stop_pid "$B"
"$VMHOST" mem --json >"$TEST_TMP/gone.json"
check "a guest that exited is not listed" jq -e --argjson b "$B" '[.vms[] | select(.pid == $b)] | length == 0' "$TEST_TMP/gone.json"
check "and no longer in the memo" sh -c "grep -qa memoalpha '$MEMO' && ! grep -qa memobeta '$MEMO'"
# A memo rewritten (its VMs changed) holds the other processes' new fd counts: a few changes alone
# do not rewrite it (vm_memo_save).
if [ -n "${MOVED:-}" ]; then
	traced_mem "$TEST_TMP/after.json" || die "mem failed"
	check "the fd count that moved is remembered once the memo is rewritten" test "$(opened fd "$P")" = 0
fi

# A process remembered as a VM that then execs another program keeps its pid and start time, not
# its name: it is read afresh, and is no VM. (/usr/bin/python3: a pyenv shim would exec again.)
spawn "${AS_QEMU[@]}" /usr/bin/python3 -c '
import os, sys, time
while not os.path.exists(sys.argv[-1]): time.sleep(0.05)
os.execv("/bin/sleep", ["sleep", "300"])' -name memoexec -m 16M -go "$TEST_TMP/go"
X=$SPAWNED
for i in $(seq 100); do
	"$VMHOST" mem --json --pss-budget 0 >"$TEST_TMP/exec1.json"
	jq -e --argjson x "$X" 'any(.vms[]; .pid == $x)' "$TEST_TMP/exec1.json" >/dev/null && break
	sleep 0.1
done
check "a VM that will exec is found and remembered" sh -c \
	"jq -e --argjson x $X 'any(.vms[]; .pid == \$x and .name == \"memoexec\")' '$TEST_TMP/exec1.json' >/dev/null && grep -qa memoexec '$MEMO'"
touch "$TEST_TMP/go"
for i in $(seq 100); do
	[ "$(cat "/proc/$X/comm" 2>/dev/null)" = sleep ] && break
	sleep 0.05
done
"$VMHOST" mem --json >"$TEST_TMP/exec2.json"
check "after its exec it is no VM" jq -e --argjson x "$X" '[.vms[] | select(.pid == $x)] | length == 0' "$TEST_TMP/exec2.json"
check "and is forgotten" sh -c "! grep -qa memoexec '$MEMO'"
stop_pid "$X"

# A runtime directory that cannot be made: the same answer, no complaint, exit 0.
VMHOST_RUNTIME_DIR=/proc/vmhost-no "$VMHOST" mem --json >"$TEST_TMP/nodir.json" 2>"$TEST_TMP/nodir.err"
rc=$?
check "an unusable runtime directory costs nothing but speed" \
	sh -c "[ $rc = 0 ] && [ ! -s '$TEST_TMP/nodir.err' ] && jq -e --argjson a $A '[.vms[] | select(.pid == \$a)] | length == 1' '$TEST_TMP/nodir.json' >/dev/null"
finish
