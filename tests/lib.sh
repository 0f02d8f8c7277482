# Shared by the shell tests: assertions and the verdict, on top of scripts/lib/common.sh (processes
# stopped by pid, the cleanup, KSM settings restored, fake guests, median and ms).
# Source it first: `. "$VMHOST_TESTS/lib.sh"`. Every test exits 0 on pass, 1 on failure,
# and 77 when it, or a part of it, cannot run here: CTest shows it as skipped (SKIP_RETURN_CODE,
# tests/CMakeLists.txt), never as passed, and make check fails on a skip that
# tests/expected-skips.txt does not list.
set -u
: "${VMHOST:?VMHOST (the binary) must be set}"
FAKEGUEST=${VMHOST_BUILD:-}/fakeguest
FW_PROBE=${VMHOST_BUILD:-}/kvmprobe
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/common.sh"
TEST_NAME=$RUN_NAME
FAILURES=0
SKIPS=0

say() { printf '%s: %s\n' "$TEST_NAME" "$*"; }
fail() { say "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
die() { say "FAIL: $*"; exit 1; }
pass() { say "ok: $*"; }

# skip REASON: the rest of the test cannot run here: says why and exits 77 (1 if a check failed).
skip() {
	say "skipped: $*"
	[ "$FAILURES" -gt 0 ] && die "$FAILURES check(s) failed before"
	exit 77
}
# skip_part REASON: a part cannot run here: says why; the test then ends skipped unless one failed.
skip_part() { say "skipped: $*"; SKIPS=$((SKIPS + 1)); }

# check "what" CONDITION... : runs the condition (a command), records pass or fail; a condition
# that skipped its part (skip_part) is not reported as passed.
check() {
	local what=$1 skips=$SKIPS
	shift
	if ! "$@"; then
		fail "$what"
	elif [ "$SKIPS" = "$skips" ]; then
		pass "$what"
	fi
}

# near A B PCT: |A-B| <= PCT% of B (integers or floats).
near() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= p / 100 * (b < 0 ? -b : b)) }'; }
# le A B / ge A B: numeric comparisons usable with check.
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# vcpu_schedstat PID: the run and delay nanoseconds so far of its vCPU threads (named as QEMU's,
# "CPU N/KVM"), summed from their schedstat: "RUN DELAY".
vcpu_schedstat() {
	local t run=0 delay=0 r d
	for t in /proc/"$1"/task/*; do
		case $(cat "$t/comm" 2>/dev/null) in
		"CPU "*/KVM) read -r r d _ <"$t/schedstat" 2>/dev/null && run=$((run + r)) && delay=$((delay + d)) ;;
		esac
	done
	echo "$run $delay"
}

# two_node_sys DIR: a sys root in DIR of two NUMA nodes holding CPU 0 (node 0) and CPU 1 (node 1),
# the rest of this host's /sys linked in: the live /proc read as on a two-node host.
two_node_sys() {
	local s=$1 d
	mkdir -p "$s/devices/system/node/node0" "$s/devices/system/node/node1"
	for d in /sys/*; do [ "$d" = /sys/devices ] || ln -s "$d" "$s/${d##*/}"; done
	for d in /sys/devices/*; do [ "$d" = /sys/devices/system ] || ln -s "$d" "$s/devices/${d##*/}"; done
	for d in /sys/devices/system/*; do [ "$d" = /sys/devices/system/node ] || ln -s "$d" "$s/devices/system/${d##*/}"; done
	echo 0-1 >"$s/devices/system/node/online"
	echo 0 >"$s/devices/system/node/node0/cpulist"
	echo 1 >"$s/devices/system/node/node1/cpulist"
}

# chrome ARGS... URL: headless Chromium with no name resolving (no network), its console on
# stderr (lines with ":CONSOLE"), a fresh profile, a 1280x1000 window.
chrome() {
	local profile rc
	profile=$(mktemp -d)
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0 \
		--user-data-dir="$profile" --window-size=1280,1000 "$@"
	rc=$?
	rm -rf "$profile"
	return $rc
}

# netns_tap NAME NET PEER_MAC: a network namespace of the test's own (NS, removed at the cleanup)
# holding a tap (TAP: NAME and the test's pid, cut to IFNAMSIZ) up at NET.1/24, where NET.2 (the
# guest's NIC) has PEER_MAC as its neighbour: what the host sends it leaves at once. Root.
netns_tap() {
	NS=vmhost-$1-$$
	TAP=vmh$1$$
	TAP=${TAP:0:15}
	on_cleanup 'ip netns del "$NS" 2>/dev/null'
	ip netns add "$NS" || die "cannot make a network namespace"
	ip -n "$NS" tuntap add dev "$TAP" mode tap || die "cannot make a tap"
	ip -n "$NS" addr add "$2.1/24" dev "$TAP"
	ip -n "$NS" link set "$TAP" up
	ip -n "$NS" neigh add "$2.2" lladdr "$3" dev "$TAP"
}

# without_mounting CMD...: runs CMD (vmhost, as root) without CAP_SYS_ADMIN, so that it reads
# debugfs and tracefs only where the host mounted them, never one mounted for its run alone
# (src/io/mountns.h): for the tests of what it does where they are missing.
without_mounting() { setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$@"; }

# without_library NAME CMD...: runs CMD where the dynamic loader finds no libNAME (root): in a mount
# namespace of its own, the library's directory is replaced by symbolic links to everything else
# in it. For the libraries vmhost loads when a command needs them (src/io/dynlib.h).
without_library() {
	local name=$1 libdir farm
	shift
	libdir=$(dirname "$(readlink -f "$(ldconfig -p | awk -v n="lib$name" 'index($1, n ".so.") == 1 { print $NF; exit }')")")
	farm=$(mktemp -d "$TEST_TMP/no-$name.XXXXXX")
	unshare -m bash -c '
		set -e
		mount --make-rprivate /
		mkdir -p "$2/real" "$2/farm"
		mount --bind "$1" "$2/real"
		for f in "$2"/real/*; do
			case ${f##*/} in "lib$3".*) ;; *) ln -s "$f" "$2/farm/${f##*/}" ;; esac
		done
		mount --bind "$2/farm" "$1"
		shift 3
		exec "$@"' sh "$libdir" "$farm" "$name" "$@"
}

# wait_for SECONDS CMD...: polls the command every 0.1 s until it succeeds; 1 when SECONDS ran
# out. How a test waits for something to be under way (a line, a file, a row), never a sleep.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
}

# delayacct_to 0|1: sets the kernel's delay accounting (kernel.task_delayacct) for this test; the
# cleanup puts back what it was on every exit path. Skips, saying why, where it cannot: not root
# (taskstats answers CAP_NET_ADMIN only), or no switch to turn (before 5.14).
delayacct_to() {
	local f=/proc/sys/kernel/task_delayacct
	[ "$(id -u)" = 0 ] || skip "needs root: delay accounting is read over taskstats, CAP_NET_ADMIN's"
	[ -w $f ] || skip "no kernel.task_delayacct to turn on ($f)"
	if [ -z "${DELAYACCT_WAS:-}" ]; then
		DELAYACCT_WAS=$(cat $f)
		on_cleanup 'echo "$DELAYACCT_WAS" >/proc/sys/kernel/task_delayacct || warn "could not restore kernel.task_delayacct=$DELAYACCT_WAS"'
	fi
	echo "$1" >$f || skip "cannot set kernel.task_delayacct"
}

# finish: the test's verdict: failed, else skipped when a part was, else passed.
finish() {
	if [ "$FAILURES" -gt 0 ]; then
		say "$FAILURES check(s) failed"
		exit 1
	fi
	if [ "$SKIPS" -gt 0 ]; then
		say "the checks that ran passed; $SKIPS part(s) skipped"
		exit 77
	fi
	say "all checks passed"
	exit 0
}
