#!/bin/bash
# Writes a fixture proc/sys tree with N simulated QEMU VMs (libvirt-style command lines, cgroup
# scopes, status, ksm_stat, stat), a ksmd, meminfo and KSM sysfs, for `vmhost --proc-root
# DIR/proc --sys-root DIR/sys serve` benchmarks, and KVM's debugfs (each VM a copy of a real Intel
# host's VM directory from tests/fixtures/exits-intel). Usage: bench/serve_fixture.sh DIR N
set -eu
dir=$1 n=$2
rm -rf "$dir"
mkdir -p "$dir/proc" "$dir/sys/kernel/mm/ksm"
proc=$dir/proc ksm=$dir/sys/kernel/mm/ksm
kvm_src=$(cd "$(dirname "$0")/../tests/fixtures/exits-intel/sys/kernel/debug/kvm" && pwd)
kvm=$dir/sys/kernel/debug/kvm
mkdir -p "$kvm"
find "$kvm_src" -maxdepth 1 -type f -exec cp {} "$kvm/" \;

cat >"$proc/meminfo" <<MEM
MemTotal:       263824568 kB
MemFree:        20314012 kB
MemAvailable:   63485412 kB
Buffers:            3964 kB
Cached:          5354452 kB
SwapCached:            0 kB
AnonHugePages:   2097152 kB
SwapTotal:       8388604 kB
SwapFree:        8388604 kB
MEM
for kv in run:1 pages_to_scan:1000 sleep_millisecs:20 pages_shared:400000 pages_sharing:2400000 \
	pages_unshared:900000 pages_volatile:12000 full_scans:312 pages_scanned:9876543210 pages_skipped:123456 \
	max_page_sharing:256 merge_across_nodes:1 use_zero_pages:0 ksm_zero_pages:0 general_profit:9600000000 \
	smart_scan:1 stable_node_chains:3 stable_node_dups:40 stable_node_chains_prune_millisecs:2000 \
	advisor_max_cpu:70 advisor_min_pages_to_scan:500 advisor_max_pages_to_scan:30000 \
	advisor_target_scan_time:200; do
	echo "${kv#*:}" >"$ksm/${kv%%:*}"
done
echo "[none] scan-time" >"$ksm/advisor_mode"

# ksmd, a kernel thread.
mkdir -p "$proc/45"
echo ksmd >"$proc/45/comm"
: >"$proc/45/cmdline"
echo "45 (ksmd) S 2 0 0 0 -1 2129984 0 0 0 0 0 98765 0 0 25 5 1 0 50 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0" >"$proc/45/stat"
echo "987654321000 12345678 54321" >"$proc/45/schedstat"
printf '0::/\n' >"$proc/45/cgroup"

for i in $(seq 1 "$n"); do
	pid=$((10000 + i))
	p=$proc/$pid
	mkdir -p "$p"
	name=vm$i
	uuid=$(printf '%08x-0000-4000-8000-%012x' "$i" "$i")
	ram_mib=$((1024 * (1 + i % 8)))
	printf '%s\0' /usr/bin/qemu-system-x86_64 -name "guest=$name,debug-threads=on" -S \
		-machine pc-q35-7.2,usb=off,dump-guest-core=off,memory-backend=pc.ram \
		-m "$ram_mib" -object "{\"qom-type\":\"memory-backend-ram\",\"id\":\"pc.ram\",\"size\":$((ram_mib * 1048576))}" \
		-uuid "$uuid" -smp 2,sockets=2,cores=1,threads=1 -no-user-config -nodefaults \
		-display none >"$p/cmdline"
	echo qemu-system-x86 >"$p/comm"
	echo "$pid (qemu-system-x86) S 1 $pid $pid 0 -1 138412352 1000 0 0 0 4000 2000 0 0 20 0 4 0 $((100000 + i)) 8000000000 $((ram_mib * 200)) 18446744073709551615 1 1 0 0 0 0 0 4096 17475 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0" >"$p/stat"
	printf '0::/machine.slice/machine-qemu\\x2d%d\\x2d%s.scope/libvirt/emulator\n' "$i" "$name" >"$p/cgroup"
	rss_kb=$((ram_mib * 800 + 150000))
	cat >"$p/status" <<ST
Name:	qemu-system-x86
Umask:	0077
State:	S (sleeping)
Tgid:	$pid
Pid:	$pid
PPid:	1
VmPeak:	 8000000 kB
VmSize:	 7800000 kB
VmRSS:	 $rss_kb kB
RssAnon:	 $((rss_kb - 30000)) kB
RssFile:	   28000 kB
RssShmem:	    2000 kB
VmPTE:	    9000 kB
VmSwap:	    $((i * 100)) kB
Threads:	4
ST
	cat >"$p/ksm_stat" <<KS
ksm_rmap_items $((ram_mib * 256))
ksm_zero_pages 0
ksm_merging_pages $((ram_mib * 100))
ksm_process_profit $(((ram_mib * 100) * 4096 - ram_mib * 256 * 64))
ksm_merge_any: no
ksm_mergeable: yes
KS
	cp -a "$kvm_src/1234-12" "$kvm/$pid-12"
done
