#!/bin/bash
# The exits rows of docs/privileges.md: a real KVM guest (kvmguest) runs as root; vmhost exits
# reads it as root, as nobody, with CAP_PERFMON only and with the capabilities the doc names.
# debugfs and tracefs are mounted in a private mount namespace only (the host is left as found).
# Skipped (exit 77, not passed) where /dev/kvm is absent.
. "$VMHOST_TESTS/lib.sh"
[ -c /dev/kvm ] || skip "/dev/kvm is absent on this machine (no KVM guest to read)"
chmod 755 "$TEST_TMP"
NB="setpriv --reuid nobody --regid nogroup --clear-groups"
CAPS="$NB --inh-caps +sys_ptrace,+dac_read_search,+perfmon --ambient-caps +sys_ptrace,+dac_read_search,+perfmon"
$NB true || die "setpriv cannot switch to nobody here"

# --- exits: debugfs and tracefs mounted in a private mount namespace, a real KVM guest.
cat >"$TEST_TMP/exits.sh" <<EOF
mount -t debugfs none /sys/kernel/debug 2>/dev/null
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
"$VMHOST_BUILD/kvmguest" --io 10 --sleep-before 60 >"$TEST_TMP/kg.out" &
KG=\$!
for i in \$(seq 50); do grep -q ready "$TEST_TMP/kg.out" && break; sleep 0.1; done
for who in root:"" nobody:"$NB" perfmon:"$NB --inh-caps +perfmon --ambient-caps +perfmon" caps:"$CAPS"; do
	\${who#*:} "$VMHOST" --json exits --once --interval 0.2 --pid \$KG >"$TEST_TMP/ex-\${who%%:*}.json" 2>"$TEST_TMP/ex-\${who%%:*}.err"
	echo \$? >"$TEST_TMP/ex-\${who%%:*}.rc"
done
kill \$KG
wait \$KG 2>/dev/null
EOF
unshare --mount --propagation private bash "$TEST_TMP/exits.sh"
check "exits as root (debugfs mounted): exit 0" [ "$(cat "$TEST_TMP/ex-root.rc")" = 0 ]
check "exits as nobody: exit 77, 'KVM counters in debugfs need root'" \
	sh -c "[ \$(cat '$TEST_TMP/ex-nobody.rc') = 77 ] && grep -q 'permission denied: KVM counters in debugfs need root' '$TEST_TMP/ex-nobody.err'"
check "exits with CAP_PERFMON only: exit 77 (debugfs is mode 0700)" [ "$(cat "$TEST_TMP/ex-perfmon.rc")" = 77 ]
check "exits with CAP_DAC_READ_SEARCH (+ptrace, perfmon): exit 0, the guest read from debugfs" \
	sh -c "[ \$(cat '$TEST_TMP/ex-caps.rc') = 0 ] && jq -e '.vms[0].source == \"debugfs\"' '$TEST_TMP/ex-caps.json' >/dev/null"
finish
