# Shared by the bench scripts: fake QEMU guests and the firmware guest under QEMU started and
# stopped by pid, a median, a timer.
# Source it after setting build; it sets vmhost, fake, probe, tmp and an EXIT/INT/TERM cleanup.
vmhost=$build/vmhost
fake=$build/fakeguest
probe=$build/kvmprobe
tmp=$(mktemp -d)
pids=""
cleanup() {
	trap '' INT TERM HUP # a second signal must not cut the restore short
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() { echo "${0##*/}: $*" >&2; exit 1; }
skip() { echo "${0##*/}: skipped: $*"; exit 77; }
# spawn CMD...: starts a background process, SPAWNED its pid, stopped by the cleanup.
spawn() {
	"$@" &
	SPAWNED=$!
	pids="$pids $SPAWNED"
}
# fw_qemu and fw_image: the firmware guest under a real QEMU (tests/helpers/fw_qemu.sh).
FW_DIR=$tmp
FW_PROBE=$probe
. "$(dirname "${BASH_SOURCE[0]}")/../tests/helpers/fw_qemu.sh"

# fake_guests N PREFIX FAKEGUEST_OPTIONS...: N guests named PREFIX1..PREFIXN that discovery takes
# for QEMU, each with -fake-guest i; returns once every one is filled and ready.
fake_guests() {
	local n=$1 prefix=$2 i
	shift 2
	for i in $(seq "$n"); do
		spawn bash -c 'exec -a qemu-system-x86_64 "$0" "$@"' "$fake" -name "$prefix$i" -fake-guest "$i" "$@" >"$tmp/$prefix$i.out" 2>/dev/null
	done
	for i in $(seq "$n"); do
		until grep -q ready "$tmp/$prefix$i.out" 2>/dev/null; do sleep 0.05; done
	done
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# ms CMD...: the wall time of CMD in milliseconds, its output discarded. Bash's own clock: timing
# with $(date) counted date's fork and exec too, about 7 ms a run in this nested VM.
ms() {
	local t0=$EPOCHREALTIME t1
	"$@" >/dev/null 2>&1
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
}
