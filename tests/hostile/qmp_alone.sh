# A QMP test alone with its monitors, sourced first (it sources tests/lib.sh itself) by the tests
# that count or flood what reaches a monitor (tests/hostile/qmp_*.sh, tests/live/qmp_pace.sh).
# Any vmhost on the host visits a QMP socket named on a QEMU's command line, and other engineers'
# tests run theirs at any time (an older build among them, which would hang on a hostile peer or
# send it bytes): the test re-runs itself in a mount namespace of its own and keeps its sockets on
# a tmpfs mounted there, ALONE (0755, TEST_TMP made 0755 so that an unprivileged forger reaches
# it), which no other process can see, so a socket its processes name is ENOENT to everyone else.
# Needs root (unshare --mount); the test is skipped without it.
if [ -z "${VMHOST_QMP_ALONE:-}" ] && unshare --mount true 2>/dev/null; then
	exec unshare --mount --propagation private env VMHOST_QMP_ALONE=1 bash "$0" "$@"
fi
. "$VMHOST_TESTS/lib.sh"
[ -n "${VMHOST_QMP_ALONE:-}" ] || skip "cannot make a mount namespace of its own (unshare --mount needs root)"
ALONE=$TEST_TMP/alone
chmod 755 "$TEST_TMP"
mkdir "$ALONE" && mount -t tmpfs -o size=64M,mode=0755 vmhost-qmp-alone "$ALONE" || die "cannot mount a tmpfs on $ALONE"
on_cleanup "umount '$ALONE'"
