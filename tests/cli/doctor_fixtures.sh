#!/bin/bash
# vmhost doctor on frozen host trees: tests/fixtures/doctor-healthy is a host with nothing wrong
# (two libvirt guests of one image, KSM running and saving, kvm_intel with every feature on), and
# each tests/fixtures/doctor-<id>/ is an overlay of the files that make finding <id> appear (a
# REMOVE file lists paths of the healthy tree to drop first). Each overlay must give exactly its
# finding; a near miss just below each threshold gives none; --fail-on, --json and the human form.
. "$VMHOST_TESTS/lib.sh"
HEALTHY=$VMHOST_FIXTURES/doctor-healthy

# tree NAME [OVERLAY]: a copy of the healthy host with the overlay on top, in $TEST_TMP/NAME.
tree() {
	local t=$TEST_TMP/$1
	rm -rf "$t"
	cp -r "$HEALTHY" "$t"
	if [ -n "${2:-}" ]; then
		if [ -f "$2/REMOVE" ]; then
			while read -r p; do rm -rf "${t:?}/$p"; done <"$2/REMOVE"
		fi
		cp -r "$2/." "$t/"
		rm -f "$t/REMOVE"
	fi
	echo "$t"
}
doctor() { local t=$1; shift; "$VMHOST" --proc-root "$t/proc" --sys-root "$t/sys" doctor --interval 0 "$@"; }
jqe() { jq -e "$@" >/dev/null; }
ids() { doctor "$1" --json | jq -c '[.findings[].id]'; }

# The healthy host: nothing to say, exit 0, whatever --fail-on asks.
H=$(tree healthy)
doctor "$H" >"$TEST_TMP/healthy.txt"
check "healthy host: exit 0" [ $? -eq 0 ]
check "healthy host: the output is 'no findings'" [ "$(cat "$TEST_TMP/healthy.txt")" = "no findings" ]
check "healthy host: --json has an empty findings array" [ "$(doctor "$H" --json)" = '{"findings":[]}' ]
doctor "$H" --fail-on info >/dev/null
check "healthy host: --fail-on info still exits 0" [ $? -eq 0 ]
doctor "$H" --interval 0.2 >"$TEST_TMP/healthy-interval.txt"
check "healthy host over an interval: no findings" [ "$(cat "$TEST_TMP/healthy-interval.txt")" = "no findings" ]

# Every overlay: exactly its own finding, with the contract's fields.
n=0
for fx in "$VMHOST_FIXTURES"/doctor-*/; do
	fx=${fx%/}
	id=${fx##*/doctor-}
	[ "$id" = healthy ] && continue
	n=$((n + 1))
	t=$(tree "$id" "$fx")
	check "doctor-$id gives exactly $id" [ "$(ids "$t")" = "[\"$id\"]" ]
	doctor "$t" --json >"$TEST_TMP/$id.json"
	check "doctor-$id: contract fields and types" jqe '.findings | length == 1 and all(.[];
		(.id|type)=="string" and (.severity|IN("info","warning","critical")) and
		has("vm") and has("pid") and (.evidence|type)=="object" and (.evidence|length) > 0 and
		(.advice|type)=="string" and (.advice|length) > 10)' "$TEST_TMP/$id.json"
done
check "an overlay for each of 25 fixture findings" [ "$n" -eq 25 ]

# Who and what: the VM a finding concerns, and figures that prove it.
J=$TEST_TMP
check "oom: web1, pid 1001, critical, 2 kills" jqe '.findings[0] | .vm=="web1" and .pid==1001 and .severity=="critical" and .evidence.oom_kills==2' "$J/vm-oom-kills.json"
check "near limit: 95% of 4 GiB" jqe '.findings[0].evidence | .cgroup_memory_limit_bytes==4294967296 and (.used_percent|floor)==95' "$J/vm-near-cgroup-limit.json"
check "swapping: web2's 200 MiB" jqe '.findings[0] | .vm=="web2" and .evidence.swap_bytes==209715200' "$J/vm-swapping.json"
check "vcpu delay: lifetime share of web1's vCPUs" jqe '.findings[0] | .vm=="web1" and .evidence.over=="lifetime" and (.evidence.vcpu_delay_share_percent|floor)==31' "$J/vcpu-delay-high.json"
check "overcommit: 4 vCPUs on 2 CPUs, host finding" jqe '.findings[0] | .vm==null and .pid==null and .evidence.vcpus==4 and .evidence.host_cpus==2' "$J/vcpus-overcommit.json"
check "ept off: module and value" jqe '.findings[0].evidence | .module=="kvm_intel" and .parameter=="ept" and .value=="N"' "$J/kvm-ept-off.json"
check "npt off on kvm_amd" jqe '.findings[0].evidence | .module=="kvm_amd" and .value=="0"' "$J/kvm-npt-off.json"
check "KSM stopped: 2 guests, 4 GiB, the image match said to be not estimated" jqe '.findings[0].evidence | .mergeable_guests==2 and .guest_ram_bytes==4294967296 and (.same_image|startswith("not estimated"))' "$J/ksm-stopped-with-guests.json"
check "unmergeable: web2, mem-merge-off" jqe '.findings[0] | .vm=="web2" and .evidence.ksm_unmergeable_reason=="mem-merge-off"' "$J/vm-ksm-unmergeable.json"
check "no yield: web2, 2 GiB scanned, nothing merged, half of ksmd's work" jqe '.findings[0] | .vm=="web2" and .evidence.ksm_scanned_bytes==2147483648 and .evidence.ksm_yield_percent==0 and .evidence.ksmd_cpu_share_percent==50 and (.advice|contains("mem-merge=off") and contains("<nosharepages/>") and contains("saves ~50% of ksmd"))' "$J/vm-ksm-no-yield.json"
check "tuners: ksmtuned's pid and the advisor" jqe '.findings[0] | .pid==3000 and .evidence.advisor_mode=="scan-time"' "$J/ksm-tuners-fighting.json"
check "exits: web1's I/O exits, over its lifetime" jqe '.findings[0] | .vm=="web1" and .evidence.kind=="I/O" and .evidence.io_exits==4000000 and .evidence.over=="lifetime"' "$J/vm-exits-dominated.json"
t=$(tree emulation "$VMHOST_FIXTURES/doctor-vm-exits-dominated")
echo 2000000 >"$t/sys/kernel/debug/kvm/insn_emulation"
echo 2000000 >"$t/sys/kernel/debug/kvm/1002-12/insn_emulation"
echo 0 >"$t/sys/kernel/debug/kvm/1001-12/insn_emulation"
doctor "$t" --json >"$J/emulation.json"
check "exits: web2 emulates 2 instructions per exit (no exit kind dominates), web1 stays I/O" jqe '[.findings[] | [.vm, .evidence.kind, .evidence.insn_emulation]] == [["web1","I/O",0],["web2","emulation",2000000]]' "$J/emulation.json"
check "halt polling: web1's 1.5 s polling against 0.5 s of guest, with the module's setting" jqe '.findings[0] | .vm=="web1" and .evidence.halt_poll_seconds==1.5 and .evidence.vcpu_cpu_seconds==2 and .evidence.halt_poll_ns=="200000" and (.advice|contains("/sys/module/kvm/parameters/halt_poll_ns") and contains("poll-control"))' "$J/vm-halt-polling.json"
# Over an interval: 0.6 s of polling added to web1 within a 2 s window, its vCPUs idle. The
# counters change once doctor says its first readings are taken (its test hook), however long
# they took on this machine.
t=$(tree halt-interval "$VMHOST_FIXTURES/doctor-vm-halt-polling")
K=$t/sys/kernel/debug/kvm
add_polling='for f in "$K/1001-12/halt_poll_success_ns" "$K/halt_poll_success_ns"; do echo $(($(cat "$f") + 600000000)) >"$f"; done'
K=$K VMHOST_DOCTOR_TEST_HOOK=$add_polling "$VMHOST" --proc-root "$t/proc" --sys-root "$t/sys" doctor --interval 2 --json >"$J/halt-interval.json"
check "halt polling over an interval: ~30% of a CPU, the rate in the summary" jqe '[.findings[] | select(.id == "vm-halt-polling")] | length == 1 and .[0].evidence.over == "interval" and .[0].evidence.halt_poll_seconds == 0.6 and .[0].evidence.halt_poll_percent > 20 and .[0].evidence.halt_poll_percent < 31 and (.[0].summary | test("% of a host CPU polling"))' "$J/halt-interval.json"
check "unreadable counters: web2, why and how to open them" jqe '.findings[0] | .vm=="web2" and (.evidence.why|test("no QMP socket")) and (.advice|contains("-qmp unix:") and contains("mount -t debugfs"))' "$J/vm-kvm-counters-unreadable.json"
t=$(tree unreadable-tcg "$VMHOST_FIXTURES/doctor-vm-kvm-counters-unreadable")
mkdir "$t/proc/1002/fd" && ln -s /dev/null "$t/proc/1002/fd/0" && ln -s 'socket:[4242]' "$t/proc/1002/fd/1"
check "near miss: a VM none of whose fds is a KVM VM (TCG) is not unreadable" [ "$(ids "$t")" = "[]" ]
ln -s anon_inode:kvm-vm "$t/proc/1002/fd/2"
check "... and one holding anon_inode:kvm-vm is" [ "$(ids "$t")" = '["vm-kvm-counters-unreadable"]' ]
t=$(tree unreadable-libvirt "$VMHOST_FIXTURES/doctor-vm-kvm-counters-unreadable")
rm -rf "$t/sys/kernel/debug"
tr '\0' '\n' <"$t/proc/1001/cmdline" | sed 's/^-name$/-chardev\nsocket,id=charmonitor,fd=31,server=on,wait=off\n-mon\nchardev=charmonitor,id=monitor,mode=control\n-name/' | tr '\n' '\0' >"$t/proc/1001/cmdline.new" && mv "$t/proc/1001/cmdline.new" "$t/proc/1001/cmdline"
doctor "$t" --json >"$J/unreadable-libvirt.json"
check "unreadable counters without debugfs: both VMs, web1's monitor libvirt's (its fix says libvirtd)" jqe '[.findings[] | select(.id == "vm-kvm-counters-unreadable") | .vm] == ["web1","web2"] and (.findings[] | select(.vm == "web1") | (.evidence.why|test("libvirt")) and (.advice|contains("libvirtd")))' "$J/unreadable-libvirt.json"
t=$(tree mmio "$VMHOST_FIXTURES/doctor-vm-exits-dominated")
echo 3500000 >"$t/sys/kernel/debug/kvm/1001-12/mmio_exits"
echo 500000 >"$t/sys/kernel/debug/kvm/1001-12/io_exits"
doctor "$t" --json >"$J/mmio.json"
check "exits: web1's MMIO exits (70%), the fix names ioeventfd" jqe '.findings[0] | .vm=="web1" and .evidence.kind=="MMIO" and .evidence.mmio_exits==3500000 and (.summary|test("^70% of its KVM exits are MMIO exits")) and (.advice|contains("ioeventfd"))' "$J/mmio.json"
check "tap dropping: web1's vnet3, 1500 of the packets sent to the guest" jqe '.findings[0] | .vm=="web1" and .evidence.interface=="vnet3" and .evidence.tx_dropped==1500 and .evidence.rx_dropped==0 and (.summary|test("2.4% of the packets sent to the guest"))' "$J/vm-tap-dropping.json"
check "hugepages: 2 GiB unused" jqe '.findings[0].evidence.unused_bytes==2147483648' "$J/hugepages-unused.json"
check "small pages: web2's 2 GiB, none of it on THP while THP is madvise" jqe '.findings[0] | .vm=="web2" and .evidence.thp_bytes==0 and .evidence.transparent_hugepage=="madvise" and (.summary|test("^its 2.0 GiB of guest RAM is on 4 KiB pages")) and (.advice|contains("<hugepages/>") and contains("prealloc"))' "$J/vm-ram-small-pages.json"
check "NUMA: 65% of web1's memory on node 1, its vCPUs on node 0" jqe '.findings[0] | .vm=="web1" and .evidence.remote_bytes==1526726656 and .evidence.memory_nodes=="1" and .evidence.vcpu_nodes=="0" and (.summary|test("^65% of its 2.2 GiB on node 1, its vCPUs on node 0$")) and (.advice|test("nodeset=.0."))' "$J/vm-numa-remote-memory.json"

# Near misses: just below each threshold, nothing.
near_miss() { # what OVERLAY-ID FILE CONTENT
	local t
	t=$(tree "miss-$2" "$VMHOST_FIXTURES/doctor-$2")
	printf '%b' "$4" >"$t/$3"
	check "near miss: $1" [ "$(ids "$t")" = "[]" ]
}
S='sys/fs/cgroup/machine.slice/machine-qemu\x2d1\x2dweb1.scope'
near_miss "cgroup at 85% of its limit" vm-near-cgroup-limit "$S/memory.current" '3650722201\n'
near_miss "32 MiB swapped" vm-swapping proc/1002/status "$(sed 's/^VmSwap:.*/VmSwap:\t   32768 kB/' "$HEALTHY/proc/1002/status")\n"
near_miss "vCPU delay at 9% of wanted time" vcpu-delay-high proc/1001/task/1010/schedstat '1500000000 180000000 9000\n'
near_miss "4 vCPUs on 4 CPUs" vcpus-overcommit sys/devices/system/cpu/online '0-3\n'
near_miss "npt on (1)" kvm-npt-off sys/module/kvm_amd/parameters/npt '1\n'
near_miss "ksmtuned alone (advisor none)" ksm-tuners-fighting sys/kernel/mm/ksm/advisor_mode '[none] scan-time\n'
near_miss "two NUMA nodes, merge_across_nodes 0" ksm-merge-across-nodes sys/kernel/mm/ksm/merge_across_nodes '0\n'
near_miss "chained pages with use_zero_pages 1" ksm-zero-pages-chained sys/kernel/mm/ksm/use_zero_pages '1\n'
near_miss "512 MiB of huge pages unused" hugepages-unused proc/meminfo "$(sed 's/^HugePages_Free:.*/HugePages_Free:      256/' "$HEALTHY/proc/meminfo")\n"
near_miss "exits: I/O 50% of web1's" vm-exits-dominated sys/kernel/debug/kvm/1001-12/io_exits '2500000\n'
near_miss "exits: fewer than a million in web1's life" vm-exits-dominated sys/kernel/debug/kvm/1001-12/exits '900000\n'
near_miss "halt polling: 1.0 s polling against 1.0 s of guest" vm-halt-polling sys/kernel/debug/kvm/1001-12/halt_poll_success_ns '700000000\n'
near_miss "web2 merged 2% of the pages ksmd tracks" vm-ksm-no-yield proc/1002/ksm_stat 'ksm_rmap_items 524288\nksm_zero_pages 486\nksm_merging_pages 10000\nksm_mergeable: yes\n'
near_miss "web2 yields nothing but ksmd has not scanned twice" vm-ksm-no-yield sys/kernel/mm/ksm/full_scans '1\n'
near_miss "a tap dropping 0.8% of the packets sent to the guest" vm-tap-dropping proc/1001/net/dev ' vnet3: 50000000 40000 0 0 0 0 0 0 90000000 60000 0 500 0 0 0 0\n'
W2='sys/fs/cgroup/machine.slice/machine-qemu\x2d2\x2dweb2.scope'
near_miss "web2 with 6% of its anonymous memory on THP" vm-ram-small-pages "$W2/memory.stat" 'anon 2331803648\nanon_thp 140509184\n'
near_miss "web2 merging 10% of its memory with KSM (which splits huge pages)" vm-ram-small-pages proc/1002/ksm_stat 'ksm_rmap_items 60000\nksm_zero_pages 0\nksm_merging_pages 57000\nksm_mergeable: yes\n'
t=$(tree small-guest "$VMHOST_FIXTURES/doctor-vm-ram-small-pages")
tr '\0' '\n' <"$t/proc/1002/cmdline" | sed 's/^size=2097152k$/size=1048576k/; s/"size":2147483648/"size":1073741824/' | tr '\n' '\0' >"$t/proc/1002/cmdline.new" && mv "$t/proc/1002/cmdline.new" "$t/proc/1002/cmdline"
sed -i 's/^RssAnon:.*/RssAnon:\t 1000000 kB/' "$t/proc/1002/status"
check "near miss: web2 of 1 GiB, all on 4 KiB pages (small guests are not judged)" [ "$(ids "$t")" = "[]" ]
near_miss "web1's memory 24% on node 1" vm-numa-remote-memory "$S/memory.numa_stat" 'anon N0=1772363776 N1=559669248\n'
near_miss "web1's vCPUs allowed on both nodes" vm-numa-remote-memory proc/1001/task/1011/status 'Name:\tx\nCpus_allowed_list:\t0-7\n'
near_miss "web1's remote memory under 256 MiB" vm-numa-remote-memory "$S/memory.numa_stat" 'anon N0=100000000 N1=200000000\n'
near_miss "THP never with the only guest RAM on hugetlbfs" thp-never sys/kernel/mm/transparent_hugepage/enabled 'always [madvise] never\n'
t=$(tree nested-cpu-host "$VMHOST_FIXTURES/doctor-kvm-nested-unused")
tr '\0' '\n' <"$t/proc/1002/cmdline" | sed 's/^-smp$/-cpu\nhost\n-smp/' | tr '\n' '\0' >"$t/proc/1002/cmdline.new" && mv "$t/proc/1002/cmdline.new" "$t/proc/1002/cmdline"
check "near miss: nested on and web2 is given -cpu host" [ "$(ids "$t")" = "[]" ]
tr '\0' '\n' <"$t/proc/1002/cmdline" | sed 's/^host$/Skylake-Client/' | tr '\n' '\0' >"$t/proc/1002/cmdline.new" && mv "$t/proc/1002/cmdline.new" "$t/proc/1002/cmdline"
check "near miss: nested on and web2's CPU model is one vmhost cannot judge" [ "$(ids "$t")" = "[]" ]
tr '\0' '\n' <"$t/proc/1002/cmdline" | sed 's/^Skylake-Client$/Skylake-Client,-vmx/' | tr '\n' '\0' >"$t/proc/1002/cmdline.new" && mv "$t/proc/1002/cmdline.new" "$t/proc/1002/cmdline"
check "nested on and web2's model without vmx (-vmx): kvm-nested-unused" [ "$(ids "$t")" = '["kvm-nested-unused"]' ]
# ksmtuned against vmhost's own tuner (advisor off): found; the tuner alone, or a sweep: not.
t=$(tree tune-fight "$VMHOST_FIXTURES/doctor-ksm-tuners-fighting")
printf '[none] scan-time\n' >"$t/sys/kernel/mm/ksm/advisor_mode"
mkdir -p "$t/proc/3001" && printf 'vmhost\n' >"$t/proc/3001/comm"
printf '/usr/bin/vmhost\0--json\0ksm\0tune\0--cpu-budget\0002\0' >"$t/proc/3001/cmdline"
sed 's/^Name:.*/Name:\tvmhost/' "$t/proc/3000/status" >"$t/proc/3001/status"
doctor "$t" --json >"$J/tune-fight.json"
check "ksmtuned and 'vmhost ksm tune': ksm-tuners-fighting with both pids" jqe '.findings | length == 1 and .[0].id == "ksm-tuners-fighting" and .[0].evidence.ksmtuned_pid == 3000 and .[0].evidence.vmhost_tune_pid == 3001' "$J/tune-fight.json"
# Only root's processes are KSM tuners (they write /sys/kernel/mm/ksm): another user's that merely
# calls itself ksmtuned or 'vmhost ksm tune' is none (REVIEW S-L12).
for p in 3000 3001; do sed -i 's/^Uid:.*/Uid:\t65534\t65534\t65534\t65534/' "$t/proc/$p/status"; done
check "near miss: a ksmtuned and a 'vmhost ksm tune' of nobody's are no tuners" [ "$(ids "$t")" = "[]" ]
for p in 3000 3001; do sed -i 's/^Uid:.*/Uid:\t0\t0\t0\t0/' "$t/proc/$p/status"; done
printf '/usr/bin/vmhost\0ksm\0sweep\0' >"$t/proc/3001/cmdline"
check "near miss: ksmtuned and 'vmhost ksm sweep'" [ "$(ids "$t")" = "[]" ]
printf '/usr/bin/vmhost\0ksm\0tune\0' >"$t/proc/3001/cmdline"
rm -rf "$t/proc/3000"
check "near miss: 'vmhost ksm tune' alone" [ "$(ids "$t")" = "[]" ]
t=$(tree one-guest "$VMHOST_FIXTURES/doctor-ksm-stopped-with-guests")
rm -rf "$t/proc/1002"
check "near miss: KSM stopped with one guest" [ "$(ids "$t")" = "[]" ]
t=$(tree unmergeable-stopped "$VMHOST_FIXTURES/doctor-vm-ksm-unmergeable")
echo 0 >"$t/sys/kernel/mm/ksm/run"
check "near miss: an unmergeable VM while KSM is stopped (one mergeable guest left)" [ "$(ids "$t")" = "[]" ]

# Several findings: sorted by severity, critical first; the human form.
t=$(tree several "$VMHOST_FIXTURES/doctor-thp-never")
cp -r "$VMHOST_FIXTURES/doctor-vm-oom-kills/." "$VMHOST_FIXTURES/doctor-vm-swapping/." "$t/"
check "sorted by severity: critical, warning, info" [ "$(ids "$t")" = '["vm-oom-kills","vm-swapping","thp-never"]' ]
doctor "$t" >"$TEST_TMP/several.txt"
check "human: one line per finding, severity and id first" \
	grep -qx "critical vm-oom-kills  web1 (pid 1001): the kernel OOM-killed in this VM's cgroup 2 times" "$TEST_TMP/several.txt"
check "human: the host's findings say host" grep -q '^info     thp-never  host: guest RAM of 2 VMs is on 4 KiB pages' "$TEST_TMP/several.txt"
check "human: evidence indented under its finding" grep -qE '^    oom_kills +2$' "$TEST_TMP/several.txt"
check "human: the fix last, after the evidence" sh -c "awk '/^[a-z]/{ if (n) exit 1; n=1; next } /^    fix: /{ n=0; next } !/^    /{ exit 1 } END { exit n }' '$TEST_TMP/several.txt'"
check "human: sizes for people" grep -qE '^    swap_bytes +200 MiB$' "$TEST_TMP/several.txt"

# --only and --skip select rules by id; the old id vcpu-wait-high stands for vcpu-delay-high.
check "--only two of three rules" [ "$(doctor "$t" --json --only vm-swapping --only thp-never | jq -c '[.findings[].id]')" = '["vm-swapping","thp-never"]' ]
check "--skip a list" [ "$(doctor "$t" --json --skip vm-oom-kills,thp-never | jq -c '[.findings[].id]')" = '["vm-swapping"]' ]
d=$(tree delay-alias "$VMHOST_FIXTURES/doctor-vcpu-delay-high")
check "--skip vcpu-wait-high (deprecated) silences vcpu-delay-high" [ "$(doctor "$d" --json --skip vcpu-wait-high 2>"$TEST_TMP/alias.err" | jq -c '[.findings[].id]')" = '[]' ]
check "--skip vcpu-wait-high: a warning names the new id" grep -q "'vcpu-wait-high' is the deprecated id of 'vcpu-delay-high'" "$TEST_TMP/alias.err"
check "--only vcpu-wait-high keeps vcpu-delay-high" [ "$(doctor "$d" --json --only vcpu-wait-high 2>/dev/null | jq -c '[.findings[].id]')" = '["vcpu-delay-high"]' ]
doctor "$d" --only no-such-rule >/dev/null 2>&1
check "--only with an unknown id: usage error 2" [ $? -eq 2 ]

# --fail-on: 1 when a finding reaches the level, else 0.
doctor "$t" --fail-on critical >/dev/null
check "--fail-on critical with a critical finding: exit 1" [ $? -eq 1 ]
t2=$(tree fail-thp "$VMHOST_FIXTURES/doctor-thp-never")
doctor "$t2" --fail-on warning >/dev/null
check "--fail-on warning with only an info finding: exit 0" [ $? -eq 0 ]
doctor "$t2" --fail-on info >/dev/null
check "--fail-on info with an info finding: exit 1" [ $? -eq 1 ]
doctor "$t2" >/dev/null
check "without --fail-on: exit 0 whatever is found" [ $? -eq 0 ]
doctor "$t2" --json --fail-on info >"$TEST_TMP/fail.json"
check "--fail-on with --json: still the whole document" jqe '.findings[0].id == "thp-never"' "$TEST_TMP/fail.json"
doctor "$H" --fail-on severe 2>/dev/null
check "--fail-on with an unknown level: usage error 2" [ $? -eq 2 ]
"$VMHOST" --proc-root "$H/proc" --sys-root "$H/sys" --csv doctor --interval 0 >/dev/null 2>&1
check "--csv: usage error 2" [ $? -eq 2 ]

# Growth from a recorded history (--db): the leaking VM of growth_fixture's database.
DB=$TEST_TMP/growth.db
"$VMHOST_BUILD/growth_fixture" "$DB" || die "growth_fixture could not write $DB"
doctor "$H" --db "$DB" --json >"$TEST_TMP/growth.json"
check "--db: leaky-db is vm-overhead-growing, 25 MiB/hour, since a known time" jqe '[.findings[] | select(.id=="vm-overhead-growing")] | length == 1 and .[0].vm == "leaky-db" and (.[0].evidence.overhead_growth_bytes_per_hour / 26214400 | . > 0.98 and . < 1.02) and (.[0].evidence.since_seconds|type)=="number"' "$TEST_TMP/growth.json"
check "--db: the steady VMs are not flagged" jqe '[.findings[] | .vm] == ["leaky-db"]' "$TEST_TMP/growth.json"
DB2=$TEST_TMP/short.db
"$VMHOST" --proc-root "$H/proc" --sys-root "$H/sys" record --db "$DB2" --interval 0.2 --duration 1 >/dev/null 2>&1
check "--db of a short, flat recording: no findings" [ "$(doctor "$H" --db "$DB2" --json)" = '{"findings":[]}' ]
doctor "$H" --db "$TEST_TMP/missing.db" >/dev/null 2>"$TEST_TMP/missing.err"
check "--db of a missing file: exit 1 with the reason" [ $? -eq 1 ]
check "--db of a missing file: one error line" grep -q '^vmhost: doctor: .*missing.db' "$TEST_TMP/missing.err"

# --list names every rule once; a bad tree fails as mem does.
check "--list: every rule id once" sh -c "'$VMHOST' doctor --list --json | jq -e '[.rules[].id] | length == (unique | length) and length >= 22' >/dev/null"
mkdir -p "$TEST_TMP/empty/proc" "$TEST_TMP/empty/sys"
doctor "$TEST_TMP/empty" >/dev/null 2>&1
check "a tree without meminfo: exit 1" [ $? -eq 1 ]
finish
