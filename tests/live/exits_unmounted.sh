# A host that has mounted neither debugfs nor tracefs (a fresh machine whose init is not systemd,
# a container host): `vmhost exits --reasons -- PROGRAM` as root counts the /dev/kvm helper's exits
# exactly, N port writes, M MMIO writes and one hlt, on its row and in the total. It mounts both
# for its run alone (src/io/mountns.h), says so (JSON "private_mounts", a line in the human form),
# and the host's mounts are byte for byte what they were, before, during (the test hook after the
# first read, while the mounts are held) and after: this shell's /proc/self/mountinfo and PID 1's
# /proc/mounts. Without CAP_SYS_ADMIN it mounts nothing and says tracefs is missing, as before.
# Where this host has them mounted, everything runs in a mount namespace where they are not
# (unmounted there only: nothing changes outside it).
. "$VMHOST_TESTS/lib.sh"
[ -c /dev/kvm ] || skip "/dev/kvm is absent on this machine (no KVM to run a guest on)"
[ "$(id -u)" = 0 ] || skip "needs root: mounting for its run alone is root's"
command -v setpriv >/dev/null || die "setpriv missing (util-linux)"
G=$VMHOST_BUILD/kvmguest
N=1000
M=10
T=$TEST_TMP

cat >"$T/unmounted.sh" <<EOF
tables() { cat /proc/self/mountinfo >"$T/mountinfo.\$1"; cat /proc/1/mounts >"$T/pid1.\$1"; }
tables before
VMHOST_EXITS_TEST_HOOK='cat /proc/self/mountinfo >"$T/mountinfo.during"; cat /proc/1/mounts >"$T/pid1.during"' \\
	"$VMHOST" --json exits --reasons -- "$G" --io $N --mmio $M >"$T/x.json" 2>"$T/x.err"
echo \$? >"$T/x.rc"
tables after
"$VMHOST" exits --reasons -- "$G" --io 10 >"$T/h.txt" 2>&1
setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$VMHOST" --json exits --reasons -- "$G" --io 10 \\
	>"$T/n.json" 2>"$T/n.err"
tables last
EOF
if grep -Eq ' (debugfs|tracefs) ' /proc/self/mounts; then
	say "this host has debugfs or tracefs mounted: the test runs where they are not"
	unshare -m --propagation private sh -c 'for m in $(awk '\''$3 == "debugfs" || $3 == "tracefs" { print $2 }'\'' /proc/self/mounts | sort -r); do
		umount -l "$m" || exit 1; done; exec bash "$1"' sh "$T/unmounted.sh" || die "could not unmount them in a mount namespace"
else
	bash "$T/unmounted.sh"
fi
check "neither was mounted where exits ran" sh -c "! grep -Eq ' - (debugfs|tracefs) ' '$T/mountinfo.before'"

check "exits --reasons -- PROGRAM: exit 0" [ "$(cat "$T/x.rc")" = 0 ]
say "$(jq -c '{private_mounts, reasons_counter, reasons_unavailable}' "$T/x.json") $(tail -1 "$T/x.err")"
check "it says both were mounted for its run alone" jq -e '.private_mounts == "debugfs and tracefs"' "$T/x.json"
PROG=$(sed -n 's/^ready pid=//p' "$T/x.err")
say "the program was pid $PROG: $(jq -c --argjson p "${PROG:-0}" '.vms[] | select(.pid == $p) |
	{vmm, pio: .reasons.kvm_pio["0x80 out"].delta, io: .reasons.kvm_userspace_exit.IO.delta}' "$T/x.json")"
row() { # row EVENT REASON: the program's delta
	jq -r --argjson p "${PROG:-0}" --arg e "$1" --arg r "$2" '[.vms[] | select(.pid == $p) | .reasons[$e][$r].delta] | @tsv' "$T/x.json"
}
check "the program's row: exactly $N kvm_pio 0x80 out" [ "$(row kvm_pio "0x80 out")" = $N ]
check "the program's row: kvm_userspace_exit IO $N, MMIO $M, HLT 1" \
	[ "$(row kvm_userspace_exit IO) $(row kvm_userspace_exit MMIO) $(row kvm_userspace_exit HLT)" = "$N $M 1" ]
check "the program's row: kvm_mmio write exactly $M" [ "$(row kvm_mmio write)" = $M ]
check "the total has them too" jq -e --argjson n $N '.total.reasons.kvm_pio["0x80 out"].delta >= $n' "$T/x.json"
for t in during after; do
	check "the host's mounts $t the run: this shell's mountinfo as before" cmp -s "$T/mountinfo.before" "$T/mountinfo.$t"
	check "the host's mounts $t the run: PID 1's /proc/mounts as before" cmp -s "$T/pid1.before" "$T/pid1.$t"
done
check "human form: one line says which way it took" \
	grep -q '^debugfs and tracefs: not mounted on this host; mounted for this run alone' "$T/h.txt"
check "without CAP_SYS_ADMIN: nothing mounted, tracefs said to be missing" \
	jq -e '(has("private_mounts") | not) and (.reasons_unavailable | test("tracefs is not mounted"))' "$T/n.json"
check "and the mounts still as before" sh -c "cmp -s '$T/mountinfo.before' '$T/mountinfo.last' && cmp -s '$T/pid1.before' '$T/pid1.last'"
finish
