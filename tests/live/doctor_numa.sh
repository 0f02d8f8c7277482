#!/bin/bash
# vm-numa-remote-memory on a live guest without a cgroup scope (its memory's nodes from doctor's
# numa_maps read): the real /proc against a sys root whose two nodes hold CPU 0 and CPU 1 (the
# rest of /sys linked in). All of this one-node host's memory is on node 0: a 512 MiB fake guest
# whose vCPUs are pinned to CPU 1 (node 1) is named, with its memory on node 0; pinned to CPU 0 it
# is not; without --smaps-budget (no numa_maps read) nothing is said, never a guess.
. "$VMHOST_TESTS/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs two CPUs to place vCPUs on two nodes"

fake_guest numa-remote -m 512M -fake-nomerge -fake-vcpus 2 -smp 2
G=$SPAWNED
S=$TEST_TMP/sys
two_node_sys "$S"
pin() { local t; for t in $(grep -l "^CPU [01]/KVM" /proc/$G/task/*/comm | cut -d/ -f5); do taskset -pc "$1" "$t" >/dev/null || die "taskset failed"; done; }
remote() { "$VMHOST" --sys-root "$S" doctor --interval 0 "$@" --json | jq -c --argjson p "$G" '[.findings[] | select(.id == "vm-numa-remote-memory" and .pid == $p)]'; }

pin 1
R=$(remote --smaps-budget 1)
say "vCPUs on CPU 1: $R"
check "vCPUs on node 1, memory on node 0: named" jq -e 'length == 1 and .[0].vm == "numa-remote" and .[0].evidence.memory_nodes == "0" and .[0].evidence.vcpu_nodes == "1" and .[0].evidence.source == "numa_maps" and .[0].evidence.remote_percent > 99' <<<"$R"
check "its remote bytes are its resident memory (at least its 512 MiB)" jq -e '.[0].evidence.remote_bytes >= 536870912' <<<"$R"
check "the advice moves this pid's pages from node 0 to node 1" jq -e --arg m "migratepages $G 0 1" '.[0].advice | contains($m)' <<<"$R"
check "without numa_maps read (--smaps-budget 0): nothing said" [ "$(remote --smaps-budget 0)" = "[]" ]
pin 0
check "vCPUs on CPU 0, with the memory: not named" [ "$(remote --smaps-budget 1)" = "[]" ]
finish
