#!/bin/bash
# vmhost doctor on real vCPU contention: a fake guest whose two vCPU threads spin, all pinned to
# one host CPU, waits for it about half the time it wants it: vcpu-delay-high over the interval
# (and its three vCPUs with this 2-CPU host's are vcpus-overcommit); a fake guest whose vCPUs
# idle is not judged (below the activity floor). Processes stopped by pid.
. "$VMHOST_TESTS/lib.sh"
command -v taskset >/dev/null || die "taskset missing (util-linux)"
FAKE_PREFIX="taskset -c 0" fake_guest doctor-busy -m 16M -fake-nomerge -fake-vcpus 2 -fake-busy-vcpus
BUSY=$SPAWNED
fake_guest doctor-idle -m 16M -fake-nomerge -fake-vcpus 1
IDLE=$SPAWNED
sleep 0.5
before=$(vcpu_schedstat "$BUSY")
"$VMHOST" doctor --interval 2 --smaps-budget 0 --json >"$TEST_TMP/d.json" || die "doctor failed"
after=$(vcpu_schedstat "$BUSY")
wait_of() { jq -c --argjson p "$1" '[.findings[] | select(.id == "vcpu-delay-high" and .pid == $p)]' "$TEST_TMP/d.json"; }
say "busy guest: $(wait_of "$BUSY")"
check "two spinning vCPUs on one CPU: vcpu-delay-high over the interval" jq -e --argjson p "$BUSY" '[.findings[] | select(.id == "vcpu-delay-high" and .pid == $p)] | length == 1 and .[0].vm == "doctor-busy" and .[0].evidence.over == "interval" and .[0].evidence.vcpus == 2' "$TEST_TMP/d.json"
share=$(jq --argjson p "$BUSY" '.findings[] | select(.id == "vcpu-delay-high" and .pid == $p) | .evidence.vcpu_delay_share_percent' "$TEST_TMP/d.json")
# Two threads sharing one CPU: each runs half the time and waits the other half, and more when
# other tasks want that CPU too (a loaded host): the kernel's own share over the window around
# doctor's is what it must report, about half on an idle host.
kernel=$(awk -v a="$before" -v b="$after" 'BEGIN { split(a, x, " "); split(b, y, " "); r = y[1] - x[1]; d = y[2] - x[2]
	printf "%.1f", (r + d > 0 ? 100 * d / (r + d) : 0) }')
say "vCPU delay share by the kernel's schedstat around doctor's interval: $kernel%"
check "its wait share is at least about half ($share%)" ge "${share:-0}" 35
check "its wait share is the kernel's over the same window ($share% against $kernel%)" near "${share:-0}" "$kernel" 30
check "the idle guest is not judged" [ "$(wait_of "$IDLE")" = "[]" ]
if [ "$(nproc)" -lt 3 ]; then
	check "our 3 vCPUs outnumber this host's $(nproc) CPUs: vcpus-overcommit" jq -e '[.findings[] | select(.id == "vcpus-overcommit")] | length == 1 and .[0].evidence.vcpus >= 3' "$TEST_TMP/d.json"
fi
finish
