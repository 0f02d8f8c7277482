# vmhost mem on a frozen host tree: the whole output against golden files (JSON, CSV, human),
# plus the contract's shape and bad trees (empty, garbage, missing).
. "$VMHOST_TESTS/lib.sh"
FX=$VMHOST_FIXTURES/host-mixed
roots="--proc-root $FX/proc --sys-root $FX/sys"

"$VMHOST" $roots mem --json | jq -S . >"$TEST_TMP/mem.json" || die "mem --json failed"
check "mem --json matches the golden file" diff -u "$FX/expected-mem.json" "$TEST_TMP/mem.json"
"$VMHOST" $roots --csv mem >"$TEST_TMP/mem.csv"
check "mem --csv matches the golden file" diff -u "$FX/expected-mem.csv" "$TEST_TMP/mem.csv"
"$VMHOST" $roots >"$TEST_TMP/overview.txt"
check "overview matches the golden file" diff -u "$FX/expected-overview.txt" "$TEST_TMP/overview.txt"

# Contract shape: every field of vmhost mem --json, with the right types.
shape='.host.mem_total_bytes|type=="number"' 
check "host fields are numbers" jq -e '(.host | [.mem_total_bytes, .mem_available_bytes, .page_size_bytes] | all(type=="number"))' "$TEST_TMP/mem.json"
check "ksm fields present" jq -e '.ksm | has("run") and has("pages_shared") and has("pages_sharing") and has("general_profit_bytes")' "$TEST_TMP/mem.json"
fields='pid name uuid vmm cgroup guest_ram_bytes rss_bytes rss_anon_bytes rss_file_bytes rss_shmem_bytes swap_bytes ksm_merging_pages ksm_zero_pages ksm_profit_bytes pss_bytes pss_method overhead_bytes overhead_method'
for f in $fields; do
	jq -e --arg f "$f" '(.vms | length) > 0 and all(.vms[]; has($f))' "$TEST_TMP/mem.json" >/dev/null || fail "field $f missing in a VM"
done
check "halt_poll_seconds null without KVM counters (no debugfs, no --guest)" jq -e 'all(.vms[]; has("halt_poll_seconds") and .halt_poll_seconds == null)' "$TEST_TMP/mem.json"
# From debugfs where it has them: the doctor fixtures' host with web1 halt polling 1.5 s; web2's
# directory has no halt_poll_* files: null, not 0.
H=$TEST_TMP/halt-host
cp -r "$VMHOST_FIXTURES/doctor-healthy" "$H" && cp -r "$VMHOST_FIXTURES/doctor-vm-halt-polling/." "$H/"
"$VMHOST" --proc-root "$H/proc" --sys-root "$H/sys" --json mem >"$TEST_TMP/halt.json"
check "halt_poll_seconds from debugfs: web1 1.5, web2 null" \
	[ "$(jq -c '[.vms[] | [.name, .halt_poll_seconds]] | sort' "$TEST_TMP/halt.json")" = '[["web1",1.5],["web2",null]]' ]
check "skipped counts the vanished guest" jq -e '.skipped == 1' "$TEST_TMP/mem.json"
check "older kernel without ksm_stat gives null, not 0" jq -e '.vms[] | select(.name=="old") | .ksm_zero_pages == null and .ksm_profit_bytes == null' "$TEST_TMP/mem.json"
check "swtpm counted with web1" jq -e '.vms[] | select(.name=="web1") | .helpers == 1 and .rss_bytes == 2370715648' "$TEST_TMP/mem.json"
check "Proxmox name, uuid, cgroup" jq -e '.vms[] | select(.pid==1003) | .name=="db" and .uuid=="aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee" and .cgroup=="/qemu.slice/100.scope"' "$TEST_TMP/mem.json"
check "--bytes prints raw numbers" sh -c "'$VMHOST' $roots mem --bytes | grep -q ' 2370715648 '"

# What a VM costs besides memory: CPU of the VMM and helpers, each vCPU, the scope's cgroup.
check "web1: CPU of the VMM and its swtpm (stat ticks)" jq -e '.vms[] | select(.name=="web1") | .cpu_seconds == 6.5' "$TEST_TMP/mem.json"
check "web1: two KVM vCPUs from task/*/schedstat" jq -e '.vms[] | select(.name=="web1") | [.vcpus[] | [.index, .tid, .cpu_seconds, .delay_seconds]] == [[0,1010,1.5,0.25],[1,1011,0.5,0.05]] and .vcpu_delay_seconds == 0.3' "$TEST_TMP/mem.json"
check "web1: the scheduler's wait (schedstats on) from vCPU 0's sched, null where the file is missing" jq -e '.vms[] | select(.name=="web1") | [.vcpus[].sched_wait_seconds] == [0.125, null]' "$TEST_TMP/mem.json"
check "web1: v2 scope memory, limit, OOM kills" jq -e '.vms[] | select(.name=="web1") | .cgroup_memory_bytes == 2415919104 and .cgroup_memory_limit_bytes == 4294967296 and .oom_kills == 1' "$TEST_TMP/mem.json"
check "web1: memory and cpu pressure; truncated io.pressure is null" jq -e '.vms[] | select(.name=="web1") | .pressure.memory.some_avg10 == 1.5 and .pressure.cpu.some_seconds == 90 and .pressure.io == null' "$TEST_TMP/mem.json"
check "db (Proxmox): memory.max 'max' is no limit (null), no PSI files: pressure null" jq -e '.vms[] | select(.name=="db") | .cgroup_memory_bytes == 1073741824 and .cgroup_memory_limit_bytes == null and .pressure == null' "$TEST_TMP/mem.json"
check "no cgroup scope: cgroup figures null" jq -e '.vms[] | select(.name=="old") | .cgroup_memory_bytes == null and .oom_kills == null' "$TEST_TMP/mem.json"
check "deprecated aliases: vcpu_wait_* and the vCPUs' wait_* carry the delay's figures" jq -e '([.vms[] | .vcpu_wait_seconds == .vcpu_delay_seconds and .vcpu_wait_percent == .vcpu_delay_percent and all(.vcpus[]; .wait_seconds == .delay_seconds and .wait_percent == .delay_percent)] | all) and (.vms[] | select(.name=="web1") | .vcpu_wait_seconds == 0.3 and .vcpus[0].wait_seconds == 0.25)' "$TEST_TMP/mem.json"
check "CSV has the delay columns, not the deprecated ones" sh -c "head -1 '$TEST_TMP/mem.csv' | grep -q ',vcpu_delay_percent,' && ! head -1 '$TEST_TMP/mem.csv' | grep -q vcpu_wait"
check "without --interval the rates are null" jq -e '[.vms[] | .cpu_percent, .vcpu_delay_percent] | length > 0 and all(. == null)' "$TEST_TMP/mem.json"

# A hybrid host (v1 memory controller, libvirt without systemd) and why a VM does not merge.
V1=$VMHOST_FIXTURES/host-v1
"$VMHOST" --proc-root "$V1/proc" --sys-root "$V1/sys" mem --json >"$TEST_TMP/v1.json" || die "mem on the v1 tree failed"
check "v1: libvirt domain group found as the VM's scope" jq -e '.vms[] | select(.name=="lv1") | .cgroup == "/machine/qemu-2001-lv1.libvirt-qemu"' "$TEST_TMP/v1.json"
check "v1: usage_in_bytes, unlimited limit is null, oom_kill from oom_control, no PSI" jq -e '.vms[] | select(.name=="lv1") | .cgroup_memory_bytes == 1099511627 and .cgroup_memory_limit_bytes == null and .oom_kills == 2 and .pressure == null' "$TEST_TMP/v1.json"
check "v1: a set limit is reported" jq -e '.vms[] | select(.name=="nomerge") | .cgroup_memory_limit_bytes == 2147483648' "$TEST_TMP/v1.json"
check "reasons: mem-merge-off, hugetlbfs, shared-memory, not-marked, none; ksm_mergeable false for each of the VM's own" jq -e '[.vms[] | [.pid, .ksm_unmergeable_reason, .ksm_mergeable]] == [[2001,null,true],[2002,"mem-merge-off",false],[2003,"hugetlbfs",false],[2004,"shared-memory",false],[2005,"not-marked",false]]' "$TEST_TMP/v1.json"
check "cloud-hypervisor vcpuN threads; a vCPU whose schedstat vanished is dropped" jq -e '.vms[] | select(.pid==2005) | [.vcpus[] | .index] == [0] and .vcpus[0].cpu_seconds == 3' "$TEST_TMP/v1.json"
"$VMHOST" --proc-root "$V1/proc" --sys-root "$V1/sys" mem >"$TEST_TMP/v1.txt"
check "human: one line says which VMs cannot merge and why" grep -qx 'KSM cannot merge the RAM of: nomerge (mem-merge-off), huge (hugetlbfs), shared (shared-memory), pid 2005 (not-marked)' "$TEST_TMP/v1.txt"
mkdir -p "$TEST_TMP/stopped" && cp -r "$V1/sys" "$TEST_TMP/stopped/" && echo 0 >"$TEST_TMP/stopped/sys/kernel/mm/ksm/run"
"$VMHOST" --proc-root "$V1/proc" --sys-root "$TEST_TMP/stopped/sys" mem --json >"$TEST_TMP/stopped.json"
check "KSM stopped: ksm-stopped for a VM that would merge, its own reason for the others" jq -e '[.vms[] | .ksm_unmergeable_reason] == ["ksm-stopped","mem-merge-off","hugetlbfs","shared-memory","not-marked"]' "$TEST_TMP/stopped.json"
"$VMHOST" --proc-root "$V1/proc" --sys-root "$TEST_TMP/stopped/sys" mem >"$TEST_TMP/stopped.txt"
check "KSM stopped: the human output says so" grep -q '^KSM is stopped (run=0)' "$TEST_TMP/stopped.txt"

# The host's KVM settings: module and parameters under host.kvm, one line in the overview.
check "no KVM module in the tree: host.kvm is null" jq -e '.host.kvm == null' "$TEST_TMP/mem.json"
KI=$VMHOST_FIXTURES/kvmhost-intel/sys
"$VMHOST" --proc-root "$FX/proc" --sys-root "$KI" mem --json >"$TEST_TMP/kvm.json"
check "kvm_intel: module, vendor and every parameter" jq -e '.host.kvm.module == "kvm_intel" and .host.kvm.vendor == "intel" and .host.kvm.parameters.ept == "Y" and .host.kvm.parameters.vpid == "Y" and .host.kvm.kvm_parameters.halt_poll_ns == "200000"' "$TEST_TMP/kvm.json"
"$VMHOST" --proc-root "$FX/proc" --sys-root "$KI" >"$TEST_TMP/kvm.txt"
check "kvm_intel: the overview's line" grep -qx 'kvm   kvm_intel: ept Y, vpid Y, enable_apicv Y, unrestricted_guest Y, pml Y, nested Y, halt_poll_ns 200000' "$TEST_TMP/kvm.txt"
"$VMHOST" --proc-root "$FX/proc" --sys-root "$VMHOST_FIXTURES/kvmhost-amd/sys" >"$TEST_TMP/amd.txt"
check "kvm_amd: its own parameters" grep -q '^kvm   kvm_amd: ' "$TEST_TMP/amd.txt"
check "no module: 'not loaded'" grep -qx 'kvm   not loaded' "$TEST_TMP/overview.txt"

# A tree without KSM: KSM figures are null, never 0.
mkdir -p "$TEST_TMP/noksm/sys"
"$VMHOST" --proc-root "$FX/proc" --sys-root "$TEST_TMP/noksm/sys" mem --json >"$TEST_TMP/noksm.json"
check "no KSM: ksm.run is null" jq -e '.ksm.run == null and .ksm.pages_sharing == null' "$TEST_TMP/noksm.json"
"$VMHOST" --proc-root "$FX/proc" --sys-root "$TEST_TMP/noksm/sys" >"$TEST_TMP/noksm.txt"
check "no KSM: the overview says so" grep -q "not available in this kernel" "$TEST_TMP/noksm.txt"
# ... and a VM whose ksm_stat counts merged pages has a PSS and KSM savings of unknown weight:
# null / n/a in every form, never RSS and 0; a VM with nothing merged keeps its figures.
check "no KSM: PSS and KSM savings of VMs with merged pages are null" jq -e \
	'[.vms[] | [.pid, .pss_bytes, .ksm_saved_bytes]] == [[1003,3114008576,0],[1001,null,null],[1005,null,null]]' "$TEST_TMP/noksm.json"
"$VMHOST" --proc-root "$FX/proc" --sys-root "$TEST_TMP/noksm/sys" --csv mem >"$TEST_TMP/noksm.csv"
check "no KSM: empty in CSV" test "$(awk -F, '$1 == 1001 { print "[" $16 "][" $17 "][" $18 "]" }' "$TEST_TMP/noksm.csv")" = "[][][]"
"$VMHOST" --proc-root "$FX/proc" --sys-root "$TEST_TMP/noksm/sys" mem >"$TEST_TMP/noksm-mem.txt"
check "no KSM: n/a in the table" grep -qE '^1001 +web1 +qemu .* 200000 +n/a +n/a ' "$TEST_TMP/noksm-mem.txt"
"$VMHOST" --proc-root "$FX/proc" --sys-root "$TEST_TMP/noksm/sys" record --db "$TEST_TMP/noksm.db" --interval 0.1 \
	--duration 0.2 --kvm-interval 0 --quiet || fail "record on the tree without KSM failed"
check "no KSM: NULL in record's database" test "$(sqlite3 "$TEST_TMP/noksm.db" "SELECT DISTINCT v.pid, \
	quote(s.pss), quote(s.ksm_saved) FROM vm_samples s JOIN vms v ON v.id = s.vm_id WHERE v.pid IN (1001, 1003) \
	ORDER BY v.pid")" = "$(printf '1001|NULL|NULL\n1003|3114008576|0')"

# No MemAvailable (kernels before 3.14): "n/a", never a made-up 0, in every form.
cp -r "$FX/proc" "$TEST_TMP/noavail"
grep -v '^MemAvailable:' "$FX/proc/meminfo" >"$TEST_TMP/noavail/meminfo"
"$VMHOST" --proc-root "$TEST_TMP/noavail" --sys-root "$FX/sys" --bytes >"$TEST_TMP/noavail.txt"
check "no MemAvailable: --bytes says n/a" grep -q '^host  memory [0-9]*, available n/a' "$TEST_TMP/noavail.txt"
"$VMHOST" --proc-root "$TEST_TMP/noavail" --sys-root "$FX/sys" >"$TEST_TMP/noavail.txt"
check "no MemAvailable: the overview says n/a" grep -q '^host  memory .*, available n/a' "$TEST_TMP/noavail.txt"
"$VMHOST" --proc-root "$TEST_TMP/noavail" --sys-root "$FX/sys" mem --json >"$TEST_TMP/noavail.json"
check "no MemAvailable: null in JSON" jq -e '.host.mem_available_bytes == null' "$TEST_TMP/noavail.json"

# Bad trees: clear errors, no crash.
mkdir -p "$TEST_TMP/bad/proc/77"
printf 'garbage\n' >"$TEST_TMP/bad/proc/meminfo"
"$VMHOST" --proc-root "$TEST_TMP/bad/proc" mem --json >"$TEST_TMP/bad.json" 2>"$TEST_TMP/bad.err"
rc=$?
check "garbage meminfo: exit 1" [ "$rc" = 1 ]
check "garbage meminfo: one-line error" grep -q '^vmhost: mem: reading host memory: ' "$TEST_TMP/bad.err"
check "garbage meminfo: JSON error document" jq -e '.error | test("meminfo")' "$TEST_TMP/bad.json"
cp "$FX/proc/meminfo" "$TEST_TMP/bad/proc/meminfo"
printf 'qemu-system-x86_64\0-m\0' >"$TEST_TMP/bad/proc/77/cmdline"
printf 'Name:\tqemu\nVmRSS:\t 10' >"$TEST_TMP/bad/proc/77/status"   # truncated
printf '77 (qemu) S 1 2' >"$TEST_TMP/bad/proc/77/stat"                # truncated
"$VMHOST" --proc-root "$TEST_TMP/bad/proc" --sys-root "$TEST_TMP/noksm/sys" mem --json >"$TEST_TMP/trunc.json"
check "truncated status: rss is null, not a cut number" jq -e '.vms[0].rss_bytes == null and .vms[0].pss_bytes == null' "$TEST_TMP/trunc.json"
check "dangling -m: QEMU's default RAM" jq -e '.vms[0].guest_ram_bytes == 134217728' "$TEST_TMP/trunc.json"

# A name with accents and a terminal escape (any user names their own processes): the table
# shows the escape as \x1b, readable and never obeyed, and lines up by characters; JSON keeps the
# name as it is.
cp -r "$FX" "$TEST_TMP/esc"
printf '/usr/bin/kvm\000-id\000100\000-name\000d\303\251j\303\240\033[2J\000-m\0004096\000' >"$TEST_TMP/esc/proc/1003/cmdline"
esc="--proc-root $TEST_TMP/esc/proc --sys-root $TEST_TMP/esc/sys"
"$VMHOST" $esc mem >"$TEST_TMP/esc.txt"
"$VMHOST" $esc top --batch --iterations 1 --interval 0.1 >"$TEST_TMP/esc.tsv"
# shown FILE TEXT: FILE has TEXT and no escape character
shown() { ! grep -q $'\033' "$1" && grep -qF "$2" "$1"; }
check "an escape in a name is not written to the terminal" shown "$TEST_TMP/esc.txt" ' déjà\x1b[2J '
check "  ... and the rows still line up (VMM starts in one column)" python3 -c 'import sys
cols = {l.index(" qemu ") for l in open(sys.argv[1], encoding="utf-8") if " qemu " in l}
sys.exit(len(cols) != 1)' "$TEST_TMP/esc.txt"
check "top --batch: no escape either" shown "$TEST_TMP/esc.tsv" $'\tdéjà\\x1b[2J\t'
check "mem --json keeps the name" jq -e '.vms[] | select(.pid == 1003) | .name == "déjà\u001b[2J"' <("$VMHOST" $esc mem --json)
# Guest RAM on hugetlbfs (issue 34): 1 GiB and 2 MiB pools, the -mem-path form, shared huge pages
# mapped by a vhost-user helper too, and a kernel without HugetlbPages.
HF=$VMHOST_FIXTURES/host-hugetlb
hroots="--proc-root $HF/proc --sys-root $HF/sys"
"$VMHOST" $hroots mem --json >"$TEST_TMP/huge.json" || die "mem on the hugetlb tree failed"
check "1 GiB pages: hugetlb_bytes from HugetlbPages, cost = PSS + huge pages" jq -e '.vms[] | select(.name=="big") | .hugetlb_bytes == 4294967296 and .memory_cost_bytes == .pss_bytes + 4294967296' "$TEST_TMP/huge.json"
check "-mem-path (no backend on the command line): recognised from the process" jq -e '.vms[] | select(.name=="mempath") | .hugetlb_bytes == 2147483648 and .ksm_unmergeable_reason == "hugetlbfs" and .ksm_mergeable == false' "$TEST_TMP/huge.json"
check "-mem-path: the overhead estimate is all of RSS (guest RAM is not in it)" jq -e '.vms[] | select(.name=="mempath") | .overhead_bytes == .rss_bytes' "$TEST_TMP/huge.json"
check "every VM on huge pages: reason hugetlbfs and ksm_mergeable false together" jq -e '[.vms[] | select(.hugetlb_bytes > 0) | [.ksm_unmergeable_reason, .ksm_mergeable]] == [["hugetlbfs",false],["hugetlbfs",false],["hugetlbfs",false]]' "$TEST_TMP/huge.json"
check "vhost-user helper maps the same huge pages: counted once" jq -e '.vms[] | select(.name=="vhost") | .helpers == 1 and .hugetlb_bytes == 2147483648 and .memory_cost_bytes == .pss_bytes + 2147483648' "$TEST_TMP/huge.json"
check "no HugetlbPages line (old kernel): hugetlb and cost null, never 0" jq -e '.vms[] | select(.name=="oldkernel") | .hugetlb_bytes == null and .memory_cost_bytes == null and .pss_bytes != null' "$TEST_TMP/huge.json"
check "host: every pool reserved, used, free" jq -e '.host | .hugetlb_total_bytes == 10737418240 and .hugetlb_used_bytes == 8589934592 and .hugetlb_free_bytes == 2147483648' "$TEST_TMP/huge.json"
check "the hugetlb controller's charge of a v2 scope (1GB and 2MB files); null where the scope has none" jq -e '[.vms[] | [.name, .cgroup_hugetlb_bytes]] | sort == [["big",4294967296],["mempath",null],["oldkernel",null],["vhost",null]]' "$TEST_TMP/huge.json"
"$VMHOST" $hroots mem --exact --json >"$TEST_TMP/huge-exact.json" || die "mem --exact on the hugetlb tree failed"
check "--exact: private and shared huge pages from smaps_rollup" jq -e '[.vms[] | [.name, .hugetlb_private_bytes, .hugetlb_shared_bytes]] | sort == [["big",4294967296,0],["mempath",2147483648,0],["oldkernel",null,null],["vhost",0,4294967296]]' "$TEST_TMP/huge-exact.json"
check "--exact: shared huge pages divided among the VM's two mappers" jq -e '.vms[] | select(.name=="vhost") | .memory_cost_bytes == .pss_bytes + 2147483648' "$TEST_TMP/huge-exact.json"
check "--exact: no Hugetlb lines in smaps_rollup: cost still null" jq -e '.vms[] | select(.name=="oldkernel") | .memory_cost_bytes == null' "$TEST_TMP/huge-exact.json"
"$VMHOST" $hroots >"$TEST_TMP/huge.txt"
check "overview: the host's huge pages line" grep -qx 'huge  reserved 10.0 GiB (4 x 1.00 GiB, 3072 x 2.00 MiB), used 8.00 GiB, free 2.00 GiB' "$TEST_TMP/huge.txt"
check "mem: HUGETLB and COST columns when a VM has huge pages" grep -q ' PSS   HUGETLB      COST  OVERHEAD$' "$TEST_TMP/huge.txt"
check "mem: which VMs hold the huge pages" grep -qx 'huge pages held by: big 4.00 GiB, mempath 2.00 GiB, vhost 2.00 GiB; 2.00 GiB free' "$TEST_TMP/huge.txt"
check "no huge pages anywhere: no HUGETLB column, no huge line" sh -c "! grep -q 'HUGETLB\|^huge' '$TEST_TMP/v1.txt'"
"$VMHOST" $hroots doctor --interval 0 --json >"$TEST_TMP/huge-doctor.json"
check "doctor: no contradiction (reason hugetlbfs, ksm_mergeable 0), with the huge pages and the cost" jq -e '[.findings[] | select(.id == "vm-ksm-unmergeable" and .pid == 3001) | .evidence | [.ksm_unmergeable_reason, .ksm_mergeable, .hugetlb_bytes, .memory_cost_bytes > .hugetlb_bytes]] == [["hugetlbfs",0,4294967296,true]]' "$TEST_TMP/huge-doctor.json"
check "doctor: hugepages-unused keeps its meaning (2 GiB of the default size free) and counts the VMs on huge pages" jq -e '[.findings[] | select(.id == "hugepages-unused") | .evidence | [.unused_bytes, .vms_on_hugetlbfs]] == [[2147483648,3]]' "$TEST_TMP/huge-doctor.json"
"$VMHOST" $hroots --csv mem >"$TEST_TMP/huge.csv"
check "CSV: hugetlb_bytes and memory_cost_bytes" sh -c "head -1 '$TEST_TMP/huge.csv' | grep -q ',hugetlb_bytes,.*,memory_cost_bytes,'"

# I/O (issue 31): /proc/PID/io over the VMM and its helpers, the scope's io.stat (v2) or blkio (v1),
# taps from the tun fds' fdinfo read in the VMM's net/dev; bad input is null with a reason, never 0.
IF=$VMHOST_FIXTURES/host-io
"$VMHOST" --proc-root $IF/proc --sys-root $IF/sys mem --json >"$TEST_TMP/io.json" || die "mem on the I/O tree failed"
check "/proc/PID/io summed over the VMM and its helper" jq -e '.vms[] | select(.name=="v2disk") | .io | .read_bytes == 1048576 + 4096 and .write_bytes == 268435456 + 8192 and .read_chars == 5001000 and .write_chars == 300002000' "$TEST_TMP/io.json"
check "v2 io.stat summed over two devices" jq -e '.vms[] | select(.name=="v2disk") | .io | .cgroup_read_bytes == 1052672 and .cgroup_write_bytes == 268443648' "$TEST_TMP/io.json"
check "v1 blkio: Read and Write of each device, Total lines not added" jq -e '.vms[] | select(.name=="v1disk") | .io | .cgroup_read_bytes == 8192 and .cgroup_write_bytes == 1048576' "$TEST_TMP/io.json"
check "a two-queue tap is one interface, as the host sees it (rx: the guest sent)" jq -e '.vms[] | select(.name=="v2disk") | [.interfaces[] | select(.name == "vnet0")] == [{"name":"vnet0","rx_bytes":1000000,"tx_bytes":5000000,"rx_packets":800,"tx_packets":4000,"rx_dropped":2,"tx_dropped":7,"rx_errors":1,"tx_errors":3,"rx_bytes_per_second":null,"tx_bytes_per_second":null,"unavailable":null}]' "$TEST_TMP/io.json"
check "a macvtap fd (/dev/tap7): the interface whose ifindex is 7, with its counters" jq -e '.vms[] | select(.name=="v2disk") | ([.interfaces[].name] | sort) == ["macvtap0","vnet0"] and ([.interfaces[] | select(.name == "macvtap0") | [.rx_bytes, .tx_packets, .unavailable]] == [[3000000,3000,null]])' "$TEST_TMP/io.json"
MV=$TEST_TMP/macvtap-gone
cp -a "$IF" "$MV"
ln -sfn /dev/tap99 "$MV/proc/4001/fd/23"
"$VMHOST" --proc-root "$MV/proc" --sys-root "$MV/sys" mem --json >"$TEST_TMP/mv.json" || die "mem on the macvtap tree failed"
check "a macvtap fd whose ifindex no interface has: interfaces null with the reason, never a part" jq -e '.vms[] | select(.name=="v2disk") | .interfaces == null and (.interfaces_unavailable | test("/dev/tap99.*ifindex 99"))' "$TEST_TMP/mv.json"
check "QEMU without a tap: no interfaces, known (no tun or macvtap among its fds)" jq -e '.vms[] | select(.name=="v1disk") | .interfaces == [] and .interfaces_unavailable == null' "$TEST_TMP/io.json"
# A tap its command line does not name (QMP getfd and netdev_add, libvirt's attach-interface): the
# same QEMU with a tun fd on vnet0 lists it, with its counters.
HP=$TEST_TMP/hotplugged
cp -a "$IF" "$HP"
ln -sfn /dev/net/tun "$HP/proc/4003/fd/30"
mkdir -p "$HP/proc/4003/fdinfo"
cp "$HP/proc/4001/fdinfo/20" "$HP/proc/4003/fdinfo/30"
cp "$HP/proc/4001/net/dev" "$HP/proc/4003/net/dev"
"$VMHOST" --proc-root "$HP/proc" --sys-root "$HP/sys" mem --json >"$TEST_TMP/hp.json" || die "mem on the hot-plugged tree failed"
check "a tap on no command line: found from its tun fd, with its counters" jq -e '.vms[] | select(.name=="v1disk") | [.interfaces[] | [.name, .rx_bytes, .tx_bytes]] == [["vnet0",1000000,5000000]]' "$TEST_TMP/hp.json"
check "a tun fd without iff: interfaces null with the reason, never []" jq -e '.vms[] | select(.name=="noiff") | .interfaces == null and (.interfaces_unavailable | test("no iff:"))' "$TEST_TMP/io.json"
check "no /proc/PID/io and no io.stat: io null with the reason, never 0" jq -e '.vms[] | select(.name=="noiff") | .io == null and (.io_unavailable | test("/proc/PID/io"))' "$TEST_TMP/io.json"
check "a tap that vanished: listed, its counters null and gone" jq -e '.vms[] | select(.name=="gone") | [.interfaces[] | [.name, .rx_bytes, .tx_dropped, (.unavailable | test("^gone"))]] == [["tap9",null,null,true]]' "$TEST_TMP/io.json"
check "no scope: the cgroup's bytes null, the process's known" jq -e '.vms[] | select(.name=="gone") | .io | .cgroup_write_bytes == null and .write_bytes == 0' "$TEST_TMP/io.json"
check "THP from the v2 scope's memory.stat anon_thp, from v1's total_rss_huge" jq -e '[.vms[] | [.name, .thp_bytes]] == [["v2disk",805306368],["v1disk",419430400],["noiff",null],["gone",null]]' "$TEST_TMP/io.json"
check "two nodes from v2 numa_stat (anon + shmem, bytes)" jq -e '.vms[] | select(.name=="v2disk") | .numa.nodes == {"0":268435456,"1":809500672}' "$TEST_TMP/io.json"
check "two nodes from v1 numa_stat (hierarchical_anon, pages)" jq -e '.vms[] | select(.name=="v1disk") | .numa.nodes == {"0":131072000,"1":393216000}' "$TEST_TMP/io.json"
"$VMHOST" --proc-root $IF/proc --sys-root $IF/sys mem --exact --json >"$TEST_TMP/io-exact.json"
check "--exact: THP from smaps_rollup AnonHugePages of the VMM and its helper (30 + 2 MiB)" jq -e '.vms[] | select(.name=="v2disk") | .thp_bytes == 33554432' "$TEST_TMP/io-exact.json"
check "--exact: nodes from numa_maps of the VMM and its helper, 4 KiB pages (284135424 and 813498368 + 1 MiB)" jq -e '.vms[] | select(.name=="v2disk") | .numa | .nodes == {"0":284135424,"1":814546944} and .nodes_source == "numa_maps" and .hugetlb_nodes == {"0":0,"1":0}' "$TEST_TMP/io-exact.json"
check "--exact: hugetlbfs guest RAM recognised (\"huge\", 512 pages of 2048 kB on node 1), even without a scope" jq -e '.vms[] | select(.name=="gone") | .numa | .nodes == {"0":8192000,"1":1073741824} and .hugetlb_nodes == {"0":0,"1":1073741824}' "$TEST_TMP/io-exact.json"
check "--exact: a cut numa_maps gives null nodes and the reason, not the cgroup's or a part" jq -e '.vms[] | select(.name=="v1disk") | .numa | .nodes == null and .hugetlb_nodes == null and .nodes_unavailable == "numa_maps: malformed or cut"' "$TEST_TMP/io-exact.json"
check "--exact: no numa_maps, null with the reason" jq -e '.vms[] | select(.name=="noiff") | .numa | .nodes == null and (.nodes_unavailable | test("^numa_maps: No such file"))' "$TEST_TMP/io-exact.json"
check "without --exact: nodes from numa_stat, no hugetlb_nodes" jq -e '.vms[] | select(.name=="v2disk") | .numa | .nodes_source == "numa_stat" and .hugetlb_nodes == null' "$TEST_TMP/io.json"
check "no scope: thp and numa's nodes null with the reason, never 0" jq -e '.vms[] | select(.name=="gone") | .thp_bytes == null and .numa.nodes == null and .numa.nodes_unavailable == "no cgroup scope of its own"' "$TEST_TMP/io.json"
check "vCPU nodes: allowed CPUs 0-3 and 1,3 are node 0; 2-5 spans both nodes" jq -e '[.vms[] | select(.name=="v2disk" or .name=="v1disk") | .numa.vcpu_nodes] == [[0],[0,1]]' "$TEST_TMP/io.json"
check "a vCPU thread gone since it was listed (no status) is left out, not the VM's answer" jq -e '.vms[] | select(.name=="v1disk") | (.vcpus | length) == 2 and .numa.vcpu_nodes == [0,1]' "$TEST_TMP/io.json"
check "a vCPU's status without Cpus_allowed_list: vcpu_nodes null with the reason" jq -e '.vms[] | select(.name=="noiff") | .numa.vcpu_nodes == null and (.numa.vcpu_nodes_unavailable | test("task 4041.*no Cpus_allowed_list"))' "$TEST_TMP/io.json"
check "no vCPU threads: vcpu_nodes null, never []" jq -e '.vms[] | select(.name=="gone") | .numa.vcpu_nodes == null and .numa.vcpu_nodes_unavailable == "no vCPU threads found"' "$TEST_TMP/io.json"
"$VMHOST" --proc-root $IF/proc --sys-root $VMHOST_FIXTURES/host-v1/sys mem --json >"$TEST_TMP/io-nonuma.json" 2>/dev/null
check "no node tree under /sys: vcpu_nodes null with the reason" jq -e '.vms[] | select(.name=="v2disk") | .numa.vcpu_nodes == null and (.numa.vcpu_nodes_unavailable | test("no NUMA topology"))' "$TEST_TMP/io-nonuma.json"
"$VMHOST" --proc-root $IF/proc --sys-root $IF/sys doctor --interval 0 --json >"$TEST_TMP/io-doctor.json"
check "doctor: v2disk's memory 75% on node 1 while its vCPUs run on node 0; v1disk's vCPUs span both" jq -e '[.findings[] | select(.id == "vm-numa-remote-memory") | [.vm, .evidence.memory_nodes, .evidence.vcpu_nodes, (.evidence.remote_percent | floor)]] == [["v2disk","1","0",75]]' "$TEST_TMP/io-doctor.json"
"$VMHOST" --proc-root $IF/proc --sys-root $IF/sys mem >"$TEST_TMP/io.txt"
"$VMHOST" --proc-root $IF/proc --sys-root $IF/sys mem --io-columns >"$TEST_TMP/io-cols.txt"
check "the default table stays narrow: no I/O columns" sh -c "! grep -q 'IO READ' '$TEST_TMP/io.txt'"
check "--io-columns: IO READ and IO WRITE, v2disk's 1.00 MiB read and 256 MiB written" sh -c "head -1 '$TEST_TMP/io-cols.txt' | grep -Eq 'IO READ +IO WRITE\$' && grep -Eq '^4001 .* 1\.00 MiB +256 MiB\$' '$TEST_TMP/io-cols.txt'"
check "--io-columns: unknown I/O is n/a, never 0" grep -Eq '^4004 .* n/a +n/a$' "$TEST_TMP/io-cols.txt"
check "--io-columns without --interval: no rates" sh -c "! grep -q 'WRITE/S' '$TEST_TMP/io-cols.txt'"
"$VMHOST" --proc-root $IF/proc --sys-root $IF/sys --csv mem >"$TEST_TMP/io.csv"
check "CSV: the io fields and the interfaces as JSON" sh -c "head -1 '$TEST_TMP/io.csv' | grep -q ',io.read_bytes,io.write_bytes,.*,interfaces,interfaces_unavailable' && grep -q '^4001,.*vnet0' '$TEST_TMP/io.csv'"
# Per disk (--io): a QMP socket that is not there, none at all: null with the reason, never [].
"$VMHOST" --proc-root $IF/proc --sys-root $IF/sys mem --io --json >"$TEST_TMP/disks.json" || die "mem --io on the I/O tree failed"
check "--io: a QMP socket that is not there: disks null, the socket and why" jq -e '.vms[] | select(.name=="v1disk") | .disks == null and .disks_source == null and (.disks_unavailable | test("/run/vmhost-fixture-absent/qmp.sock: no such QMP socket"))' "$TEST_TMP/disks.json"
check "--io: no QMP socket on the command line: null and that reason" jq -e '.vms[] | select(.name=="v2disk") | .disks == null and (.disks_unavailable | test("no QMP socket"))' "$TEST_TMP/disks.json"
check "without --io: null, not asked" jq -e '[.vms[] | .disks == null and (.disks_unavailable | test("not asked"))] | all' "$TEST_TMP/io.json"
"$VMHOST" --proc-root $IF/proc --sys-root $IF/sys mem --io >"$TEST_TMP/disks.txt"
check "the table's notes say why per VM" grep -qx 'disks of v1disk: /run/vmhost-fixture-absent/qmp.sock: no such QMP socket' "$TEST_TMP/disks.txt"

finish
