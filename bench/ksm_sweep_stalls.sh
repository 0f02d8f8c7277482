#!/bin/bash
# What each KSM setting costs the guests (issue 45 item 5): one `vmhost ksm sweep` on fake guests
# of one image that keep writing over their shared pages (-fake-cow-every: every few seconds new
# content, the same in each guest, which KSM merges again and the next write copies), with the
# kernel's delay accounting on: per setting, ksmd's CPU, the savings, and the guests' copy stalls.
#   bench/ksm_sweep_stalls.sh [BUILD_DIR] [GUESTS] [GUEST_MIB] [COW_SECONDS] [SETTINGS] [SCANS]
# Defaults: build 4 128 4 4000/10,1000/20,100/20,100/120 3. Delay accounting is turned on before
# the guests start (the kernel counts only threads started while it is on) and put back on exit,
# with every KSM setting; takes the machine-wide KSM lock.
set -u
build=${1:-build}
guests=${2:-4}
guest_mib=${3:-128}
cow_s=${4:-4}
settings=${5:-4000/10,1000/20,100/20,100/120}
scans=${6:-3}
. "$(dirname "$0")/lib.sh"
ksm_lock "$@"
ksm_save || die "no KSM on this kernel ($KSM)"
da=/proc/sys/kernel/task_delayacct
[ -w $da ] || skip "no kernel.task_delayacct to turn on"
da_was=$(cat $da)
on_cleanup "echo $da_was >$da"
echo 1 >$da
echo 2 >$KSM/run
fake_guests "$guests" cowsweep -m "${guest_mib}M" -fake-seed 47 -fake-shared 0.6 -fake-zero 0.05 -fake-nothp \
	-fake-cow-every "$cow_s"
"$vmhost" ksm sweep --settings "$settings" --scans "$scans" --timeout 600
