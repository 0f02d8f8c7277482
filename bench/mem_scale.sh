#!/bin/bash
# How long `vmhost mem --json` takes with N VM processes (default 100): starts N small fake
# guests that discovery takes for QEMU VMs, times the command (median of R runs, wall clock), and
# compares with reading every guest's smaps_rollup in the same run.
#   bench/mem_scale.sh [BUILD_DIR] [N] [R]
# REF=/path/to/other/vmhost also times that binary, in runs alternating with this one's.
# FDS=N gives each guest N more open fds, as a QEMU holds (vCPU, eventfd and device fds: ~50 to
# a few hundred), which mem looks through for taps (core/model/vm_io.c).
# DELAYACCT=1 turns the kernel's delay accounting on before the guests start (put back on exit),
# so that mem reads each VM's stalls over taskstats (docs/accounting.md, "Stalls").
# Then build/bench_proc_files prints what each /proc file mem reads per VM costs on these guests.
set -u
build=${1:-build}
n=${2:-100}
runs=${3:-20}
. "$(dirname "$0")/lib.sh"
# Each guest has two vCPU threads between two others, as a small QEMU has (its RCU thread before,
# an I/O worker after), and says so with -smp, so that the vCPU figures (the thread list, the
# names up to the last vCPU, each vCPU's schedstat) are in the cost.
if [ "${DELAYACCT:-}" = 1 ]; then
	[ -w /proc/sys/kernel/task_delayacct ] || die "DELAYACCT=1: no kernel.task_delayacct to turn on (root?)"
	on_cleanup "echo $(cat /proc/sys/kernel/task_delayacct) >/proc/sys/kernel/task_delayacct"
	echo 1 >/proc/sys/kernel/task_delayacct # before the guests: the kernel counts threads started after
fi
fake_guests "$n" scale -m 16M -fake-nomerge -fake-vcpus 2 -smp 2 ${FDS:+-fake-fds "$FDS"}
# mem remembers the VMs it saw (their command lines, vCPU threads and taps) in its runtime
# directory: here one of the run's own, which this first run fills. "no memo" is a first run's
# cost. REF keeps its own (another build may write another format, which this one would not use).
export VMHOST_RUNTIME_DIR=$tmp/run
found=$("$vmhost" mem --json | jq '[.vms[] | select(.name // "" | startswith("scale"))] | length')
[ -n "${REF:-}" ] && VMHOST_RUNTIME_DIR=$tmp/run-ref "$REF" mem --json >/dev/null
# Every command once a round, rounds alternating, so that each median saw the same moments of
# this host's noise (it moves absolute times by a third within minutes) and the ratios hold.
smaps_files=$(for p in $FAKE_PIDS; do printf '/proc/%s/smaps_rollup ' "$p"; done)
for r in $(seq "$runs"); do
	ms "$vmhost" mem --json >>"$tmp/mem"
	[ -n "${REF:-}" ] && VMHOST_RUNTIME_DIR=$tmp/run-ref ms "$REF" mem --json >>"$tmp/ref"
	ms "$vmhost" mem --json --pss-budget 0 >>"$tmp/nobudget"
	VMHOST_RUNTIME_DIR= ms "$vmhost" mem --json >>"$tmp/nomemo"
	[ -n "${REF:-}" ] && VMHOST_RUNTIME_DIR= ms "$REF" mem --json >>"$tmp/ref-nomemo"
	ms "$vmhost" mem --json --exact >>"$tmp/exact"
	ms sh -c "cat $smaps_files" >>"$tmp/smaps"
	ms "$vmhost" --version >>"$tmp/version"
	ms /bin/true >>"$tmp/true"
done
mem_ms=$(median <"$tmp/mem")
nobudget_ms=$(median <"$tmp/nobudget")
nomemo_ms=$(median <"$tmp/nomemo")
exact_ms=$(median <"$tmp/exact")
smaps_ms=$(median <"$tmp/smaps")
true_ms=$(median <"$tmp/version")
bin_true_ms=$(median <"$tmp/true")
procs=$(ls -d /proc/[0-9]* | wc -l)
printf 'VM processes: %d found of %d started (host has %d processes)\n' "$found" "$n" "$procs"
# The scale goals: 20 ms for 100 VMs, 40 ms for 400 (the cheap figure must stay cheap); none for other sizes.
case $n in 100) goal="goal < 20 ms" ;; 400) goal="goal < 40 ms" ;; *) goal="" ;; esac
row() { printf '%-34s median %8.2f ms wall%s\n' "$1" "$2" "${3:+ ($3)}"; }
row "vmhost mem --json" "$mem_ms" "${goal:-}"
if [ -n "${REF:-}" ]; then
	ref_ms=$(median <"$tmp/ref")
	row "  REF mem --json" "$ref_ms" "$REF; this build $(awk -v a="$mem_ms" -v b="$ref_ms" 'BEGIN { printf "%.2f", a / b }') of it"
fi
row "vmhost mem --json --pss-budget 0" "$nobudget_ms" "estimates only: no PSS sampling"
row "vmhost mem --json, no memo" "$nomemo_ms" "VMHOST_RUNTIME_DIR= : a first run, everything read"
if [ -n "${REF:-}" ]; then
	ref_nomemo_ms=$(median <"$tmp/ref-nomemo")
	row "  REF mem --json, no memo" "$ref_nomemo_ms" "this build $(awk -v a="$nomemo_ms" -v b="$ref_nomemo_ms" 'BEGIN { printf "%.2f", a / b }') of it"
fi
row "vmhost mem --json --exact" "$exact_ms" ""
row "cat every smaps_rollup" "$smaps_ms" "these guests are unmerged: the cheap case"
row "vmhost --version" "$true_ms" "process start-up alone"
row "/bin/true" "$bin_true_ms" "starting any process from this shell"
# The floor under those figures: what the /proc files mem reads for each VM cost here.
if [ -x "$build/bench_proc_files" ]; then
	echo
	"$build/bench_proc_files" $FAKE_PIDS
fi
