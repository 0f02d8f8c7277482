#!/bin/bash
# numa.vcpu_nodes on live processes: a fake guest with two vCPU threads. On this host's own
# topology (read from /sys/devices/system/node), and on the same live /proc against a sys root
# whose two nodes hold CPU 0 and CPU 1 (the rest of /sys linked in): the vCPUs pinned to CPU 0
# give [0], one moved to CPU 1 gives [0,1], both on CPU 1 gives [1]; a guest without vCPU
# threads gives null with its reason, never []. With --exact, numa_maps' bytes over the nodes are
# the guest's RSS.
. "$VMHOST_TESTS/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs two CPUs to pin two vCPUs apart"

fake_guest numavcpus -m 32M -fake-nomerge -fake-vcpus 2 -smp 2
G=$SPAWNED
fake_guest numanone -m 32M -fake-nomerge
N=$SPAWNED
numa() { jq -c --argjson p "$2" '.vms[] | select(.pid == $p) | .numa' "$1"; }
tid() { grep -l "^CPU $1/KVM" /proc/$G/task/*/comm | cut -d/ -f5; }
T0=$(tid 0)
T1=$(tid 1)
[ -n "$T0" ] && [ -n "$T1" ] || die "the fake guest's vCPU threads are not there"

# This host as it is.
"$VMHOST" mem --json >"$TEST_TMP/host.json" || die "mem failed"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
say "this host: $nodes node(s); $(numa "$TEST_TMP/host.json" "$G")"
if [ "$nodes" -eq 1 ]; then
	check "one node: the vCPUs run on node 0" jq -e --argjson p "$G" '.vms[] | select(.pid == $p) | .numa.vcpu_nodes == [0]' "$TEST_TMP/host.json"
else
	check "the vCPUs' nodes are known" jq -e --argjson p "$G" '.vms[] | select(.pid == $p) | .numa.vcpu_nodes | length >= 1' "$TEST_TMP/host.json"
fi
check "no vCPU threads: null with the reason" jq -e --argjson p "$N" '.vms[] | select(.pid == $p) | .numa.vcpu_nodes == null and (.numa.vcpu_nodes_unavailable | test("no vCPU threads"))' "$TEST_TMP/host.json"

# --exact: where the memory sits by numa_maps, on this host's pages.
"$VMHOST" mem --exact --json >"$TEST_TMP/exact.json" || die "mem --exact failed"
say "--exact: $(jq -c --argjson p "$G" '.vms[] | select(.pid == $p) | [.rss_bytes, .numa.nodes, .numa.hugetlb_nodes]' "$TEST_TMP/exact.json")"
check "--exact: nodes from numa_maps" jq -e --argjson p "$G" '.vms[] | select(.pid == $p) | .numa.nodes_source == "numa_maps"' "$TEST_TMP/exact.json"
sum=$(jq --argjson p "$G" '.vms[] | select(.pid == $p) | [.numa.nodes[]] | add' "$TEST_TMP/exact.json")
rss=$(jq --argjson p "$G" '.vms[] | select(.pid == $p) | .rss_bytes' "$TEST_TMP/exact.json")
check "--exact: numa_maps' bytes over the nodes are its RSS within 2% ($sum, $rss)" near "${sum:-0}" "${rss:-1}" 2
check "--exact: no hugetlbfs memory on any node" jq -e --argjson p "$G" '.vms[] | select(.pid == $p) | [.numa.hugetlb_nodes[]] | add == 0' "$TEST_TMP/exact.json"

# Two nodes of one CPU each, around the live /proc.
S=$TEST_TMP/sys
two_node_sys "$S"
two() { "$VMHOST" --sys-root "$S" mem --json >"$TEST_TMP/two.json" || die "mem on two nodes failed"; numa "$TEST_TMP/two.json" "$G" | jq -c .vcpu_nodes; }
taskset -pc 0 "$T0" >/dev/null && taskset -pc 0 "$T1" >/dev/null || die "taskset failed"
check "both vCPUs on CPU 0: node [0]" [ "$(two)" = "[0]" ]
taskset -pc 1 "$T1" >/dev/null
check "vCPU 1 moved to CPU 1: nodes [0,1]" [ "$(two)" = "[0,1]" ]
taskset -pc 1 "$T0" >/dev/null
check "both on CPU 1: node [1]" [ "$(two)" = "[1]" ]
taskset -pc 0-1 "$T0" >/dev/null
check "vCPU 0 free on both CPUs again: nodes [0,1]" [ "$(two)" = "[0,1]" ]
finish
