# Sourced first by the hostile tests that run vmhost as it is installed against what another user
# can do in /run: it runs the script again in a private mount namespace (root and unshare; else
# the test skips), sources tests/lib.sh there and mounts a fresh tmpfs over /run (0755, root's, as
# /run is; /run/lock 1777 as systemd makes it), so vmhost makes /run/vmhost and takes its locks
# there, apart from the real KSM lock the harness holds to keep the test from every other KSM
# test; the test hooks (src/io/test_hook.h) are unset, so vmhost uses its own paths.
if [ "${HOSTILE_NS:-}" != 1 ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	exec env HOSTILE_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
. "$VMHOST_TESTS/lib.sh"
[ "${HOSTILE_NS:-}" = 1 ] || skip "needs root and unshare (a private /run)"
mount -t tmpfs -o mode=0755 tmpfs /run || skip "cannot mount a private /run"
mkdir -m 1777 /run/lock && chmod 1777 /run/lock || die "cannot make /run/lock"
unset VMHOST_KSM_LOCKED VMHOST_RUNTIME_DIR VMHOST_TUNE_LOCK
