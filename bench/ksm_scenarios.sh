#!/bin/bash
# vmhost bench ksm in every lifecycle scenario, one table each, and the goals of the KSM issue:
# on late and churn, vmhost to 95% within 1.2x the kernel default's time; on every scenario its
# steady ksmd CPU no higher than conservative's.
#   bench/ksm_scenarios.sh [BUILD_DIR] [SCENARIOS] [-- BENCH_KSM_OPTIONS...]
# Defaults: build, "start late churn volatile", --quick --policies kernel-default,conservative,vmhost
# (add --repeat 3 for medians, --policies with ksmtuned,ksmtuned-model,kernel-advisor for all).
# Each run takes the machine-wide KSM lock itself and restores every KSM setting.
set -u
build=${1:-build}
scenarios=${2:-start late churn volatile}
shift $(($# > 2 ? 2 : $#))
[ "${1:-}" = "--" ] && shift
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--quick --policies kernel-default,conservative,vmhost)
. "$(dirname "$0")/lib.sh"
out=$tmp
for sc in $scenarios; do
	echo "== scenario $sc: vmhost bench ksm --scenario $sc ${opts[*]}"
	if ! "$build/vmhost" bench ksm --scenario "$sc" "${opts[@]}" --svg "$out/$sc.svg" >"$out/$sc.txt" 2>"$out/$sc.err"; then
		cat "$out/$sc.err"
		continue
	fi
	cat "$out/$sc.txt"
	echo
done
