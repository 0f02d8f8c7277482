# Shared by the bench scripts: their paths and messages, on top of scripts/lib/common.sh (fake
# QEMU guests and the firmware guest started and stopped by pid, KSM settings restored, the
# cleanup, a median, a timer). Needs none of the test suite's environment: a script sets build
# (its BUILD_DIR argument, "build" by default, as from a clone's top directory) and sources this;
# it sets vmhost, fake, probe and tmp (the run's temporary directory, TEST_TMP), and the traps.
build=${build:-build}
vmhost=$build/vmhost
fake=$build/fakeguest
probe=$build/kvmprobe
FAKEGUEST=$fake
FW_PROBE=$probe
TMP_PREFIX=vmhost-bench
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/common.sh"
tmp=$TEST_TMP

die() { echo "${0##*/}: $*" >&2; exit 1; }
skip() { echo "${0##*/}: skipped: $*"; exit 77; }
