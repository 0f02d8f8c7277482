#!/bin/bash
# A real libvirt: Debian's libvirtd and virtlogd (started here when they are not running, and
# then stopped by pid; left alone when they were), a transient TCG domain from XML booting the
# e2e guest kernel, and vmhost's view of it checked against virsh: name, uuid (domuuid), guest
# RAM (dominfo), cgroup (libvirt's scope for the domain id), RSS (dommemstat), then the series
# `vmhost serve` exports for it, and its disk (mem --io) against domstats --block. The domain is
# destroyed on every exit path.
. "$VMHOST_TESTS/lib.sh"
LIBVIRT_TOOLS=curl
. "$VMHOST_TESTS/e2e/libvirt_lib.sh"
DOM=vmhost-e2e-$$
quiet() { "$@" >/dev/null 2>&1; }
DOMAIN_UP=0

libvirt_cleanup() {
	[ "$DOMAIN_UP" = 1 ] && $VIRSH destroy "$DOM" >/dev/null 2>&1
	local pid
	for pid in $STARTED; do stop_pid "$pid"; done
}
on_cleanup libvirt_cleanup
libvirt_up

# The guest: the e2e kernel and initramfs, copied where libvirt's qemu user may read them.
img=$("$VMHOST_TESTS/../scripts/guest-image.sh" "$VMHOST_BUILD/guest" | tail -1) || die "cannot build the guest image"
set -- $img
chmod 755 "$TEST_TMP"
cp "$1" "$TEST_TMP/vmlinuz" && cp "$2" "$TEST_TMP/initramfs.gz" || die "cannot copy the guest image"
truncate -s 16M "$TEST_TMP/disk.raw"
UUID=$(cat /proc/sys/kernel/random/uuid)
cat >"$TEST_TMP/domain.xml" <<XML
<domain type='qemu'>
  <name>$DOM</name>
  <uuid>$UUID</uuid>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$TEST_TMP/vmlinuz</kernel>
    <initrd>$TEST_TMP/initramfs.gz</initrd>
    <cmdline>console=ttyS0 quiet panic=-1 vmhost.spin</cmdline>
  </os>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <serial type='file'><source path='$TEST_TMP/console.log'/><target port='0'/></serial>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw' cache='none' io='native'/>
      <source file='$TEST_TMP/disk.raw'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <memballoon model='none'/>
  </devices>
</domain>
XML
DOMAIN_UP=1
$VIRSH create "$TEST_TMP/domain.xml" >/dev/null || die "virsh create failed"
PID=$(cat "/run/libvirt/qemu/$DOM.pid" 2>/dev/null)
[ -n "$PID" ] && kill -0 "$PID" 2>/dev/null || die "no QEMU process for $DOM"
for i in $(seq 300); do
	grep -q vmhost-guest-up "$TEST_TMP/console.log" 2>/dev/null && break
	kill -0 "$PID" 2>/dev/null || die "the domain's QEMU exited during boot"
	sleep 0.1
done
grep -q vmhost-guest-up "$TEST_TMP/console.log" || die "the guest did not boot in 30 s"
say "domain $DOM (pid $PID) up after ${SECONDS}s"

# What libvirt says.
v_uuid=$($VIRSH domuuid "$DOM")
v_id=$($VIRSH domid "$DOM")
v_mem_kib=$($VIRSH dominfo "$DOM" | awk '/^Max memory:/ {print $3}')
v_cgroup=$(sed -n 's/^0:://p' "/proc/$PID/cgroup")

# What vmhost says, and libvirt's RSS read right after.
"$VMHOST" mem --json >"$TEST_TMP/mem.json" || die "mem --json failed"
v_rss_kib=$($VIRSH dommemstat "$DOM" | awk '$1 == "rss" {print $2}')
vm() { jq -r --argjson p "$PID" ".vms[] | select(.pid == \$p) | $1" "$TEST_TMP/mem.json"; }
check "vmhost finds the domain's QEMU" [ "$(vm .vmm)" = qemu ]
check "name is the domain's ($(vm .name))" [ "$(vm .name)" = "$DOM" ]
check "uuid is virsh domuuid's ($(vm .uuid) vs $v_uuid)" [ "$(vm .uuid)" = "$v_uuid" ]
check "guest RAM is virsh dominfo's ($(vm .guest_ram_bytes) vs $v_mem_kib KiB)" [ "$(vm .guest_ram_bytes)" = $((v_mem_kib * 1024)) ]
check "cgroup is the domain's scope, holding the process's own ($(vm .cgroup), $v_cgroup)" sh -c "case '$v_cgroup' in '$(vm .cgroup)'|'$(vm .cgroup)'/*) exit 0;; esac; exit 1"
# libvirt names its scope after the domain id: /machine/qemu-ID-NAME.libvirt-qemu (no systemd),
# machine.slice/machine-qemu\x2dID\x2dNAME.scope (systemd).
case $(vm .cgroup) in
"/machine/qemu-$v_id-$DOM.libvirt-qemu"* | *"machine-qemu\\x2d$v_id\\x2d"*) scope=yes ;;
*) scope=no ;;
esac
check "  ... libvirt's scope for domain id $v_id" [ $scope = yes ]
say "RSS: vmhost $(vm .rss_bytes) B, virsh dommemstat $v_rss_kib KiB"
check "RSS within 3% of virsh dommemstat's" near "$(vm .rss_bytes)" $((v_rss_kib * 1024)) 3

# mem --guest: libvirt holds the monitor, so the balloon comes from libvirt's statistics (one
# call for all its domains). No balloon device here: balloon.current and .maximum still come, the
# guest's own stats do not, and it says why.
"$VMHOST" mem --guest --json >"$TEST_TMP/guest.json" || die "mem --guest --json failed"
g() { jq -r --argjson p "$PID" ".vms[] | select(.pid == \$p) | $1" "$TEST_TMP/guest.json"; }
$VIRSH domstats --balloon "$DOM" >"$TEST_TMP/balloon"
b_cur=$(awk -F= '/balloon\.current=/ { print $2 }' "$TEST_TMP/balloon")
b_max=$(awk -F= '/balloon\.maximum=/ { print $2 }' "$TEST_TMP/balloon")
say "mem --guest: balloon $(g .balloon_bytes) B, maximum $(g .balloon_maximum_bytes) B; virsh domstats --balloon: current $b_cur KiB, maximum $b_max KiB; $(g .guest_unavailable)"
check "mem --guest: balloon_bytes and balloon_maximum_bytes are libvirt's balloon.current and .maximum" \
	[ "$(g .balloon_bytes) $(g .balloon_maximum_bytes)" = "$((b_cur * 1024)) $((b_max * 1024))" ]
check "mem --guest: no guest stats without a balloon device, and it says why" \
	jq -e --argjson p "$PID" '.vms[] | select(.pid == $p) | .guest_available_bytes == null and (.guest_unavailable | startswith("libvirt: the guest reports no memory stats"))' "$TEST_TMP/guest.json"

# CPU: the guest spins one shell loop (vmhost.spin), so its one vCPU thread is busy. libvirt's
# vcpu.0.time is the vCPU thread's CPU time; vmhost's comes from the same thread's schedstat.
"$VMHOST" mem --json --interval 2 >"$TEST_TMP/cpu.json" || die "mem --interval failed"
v_vcpu_ns=$($VIRSH domstats --vcpu "$DOM" | awk -F= '/vcpu.0.time=/ {print $2}')
cpu() { jq -r --argjson p "$PID" ".vms[] | select(.pid == \$p) | $1" "$TEST_TMP/cpu.json"; }
say "vCPU 0: vmhost $(cpu '.vcpus[0].cpu_seconds') s, libvirt vcpu.0.time $v_vcpu_ns ns; busy $(cpu '.vcpus[0].cpu_percent')%"
check "one vCPU thread found (libvirt names them: debug-threads=on)" [ "$(cpu '.vcpus | length')" = 1 ]
check "vCPU time equals libvirt's vcpu.0.time within 5%" near "$(cpu '.vcpus[0].cpu_seconds * 1e9 | floor')" "$v_vcpu_ns" 5
check "cpu_percent over 2 s shows the busy vCPU (> 50% of one CPU)" ge "$(cpu '.vcpus[0].cpu_percent')" 50
check "the VM's cpu_percent covers its vCPU's" ge "$(cpu .cpu_percent)" "$(cpu '.vcpus[0].cpu_percent * 0.9')"
# The scope's memory: the file itself, read right after (v1 memory controller here, v2 elsewhere).
scope=$(cpu .cgroup)
f=/sys/fs/cgroup/memory$scope/memory.usage_in_bytes
[ -r "$f" ] || f=/sys/fs/cgroup$scope/memory.current
[ -r "$f" ] || f=/sys/fs/cgroup/unified$scope/memory.current
"$VMHOST" mem --json >"$TEST_TMP/cg.json"
file_bytes=$(cat "$f" 2>/dev/null)
cg=$(jq -r --argjson p "$PID" '.vms[] | select(.pid == $p) | .cgroup_memory_bytes' "$TEST_TMP/cg.json")
say "cgroup memory: vmhost $cg, $f $file_bytes"
check "cgroup memory equals the scope's file (within 1%)" near "$cg" "$file_bytes" 1

# vmhost serve: the domain's series, labelled with its name and uuid.
# With --io: its disk from libvirt's block stats, on the connection serve keeps (two scrapes).
spawn "$VMHOST" serve --detail full --io --listen 127.0.0.1:0 --min-interval 0 --no-kvm 2>"$TEST_TMP/serve.log"
SERVER=$SPAWNED
for i in $(seq 100); do
	PORT=$(sed -n 's|.*listening on http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$TEST_TMP/serve.log")
	[ -n "$PORT" ] && break
	kill -0 "$SERVER" 2>/dev/null || break
	sleep 0.1
done
[ -n "$PORT" ] || die "serve did not start: $(cat "$TEST_TMP/serve.log")"
curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null || die "scrape failed"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics.txt" || die "scrape failed"
labels="vm=\"$DOM\",pid=\"$PID\",uuid=\"$v_uuid\""
check "vmhost_vm_guest_ram_bytes{$labels} = dominfo's" grep -qxF "vmhost_vm_guest_ram_bytes{$labels} $((v_mem_kib * 1024))" "$TEST_TMP/metrics.txt"
metric() { awk -v m="$1{$labels${2:-}}" '$1 == m {print $2}' "$TEST_TMP/metrics.txt"; }
anon=$(metric vmhost_vm_rss_bytes ',type="anon"')
file=$(metric vmhost_vm_rss_bytes ',type="file"')
shmem=$(metric vmhost_vm_rss_bytes ',type="shmem"')
check "vmhost_vm_rss_bytes by type sums to dommemstat's RSS within 3%" near $((${anon:-0} + ${file:-0} + ${shmem:-0})) $((v_rss_kib * 1024)) 3
check "vmhost_vm_pss_bytes and vmhost_vm_overhead_bytes for it" sh -c "[ -n '$(metric vmhost_vm_pss_bytes)' ] && [ -n '$(metric vmhost_vm_overhead_bytes)' ]"
check "vmhost_vm_info carries its cgroup" grep -qF "vmhost_vm_info{$labels,vmm=\"qemu\",cgroup=\"$(vm .cgroup)\"} 1" "$TEST_TMP/metrics.txt"
blk() { $VIRSH domstats --block "$DOM" | awk -F= -v k="block.0.$1" '$1 ~ k"$" {print $2}'; }
say "serve --io: vda read $(metric vmhost_vm_disk_read_bytes_total ',device="vda"') B in $(metric vmhost_vm_disk_operations_total ',device="vda",op="read"'); virsh $(blk rd.bytes) B in $(blk rd.reqs)"
check "serve --io: vmhost_vm_disk_read_bytes_total{device=\"vda\"} is domstats --block's" \
	sh -c "[ '$(metric vmhost_vm_disk_read_bytes_total ',device="vda"')' = '$(blk rd.bytes)' ] && [ '$(metric vmhost_vm_disk_operations_total ',device="vda",op="read"')' = '$(blk rd.reqs)' ]"
stop_pid "$SERVER"

# vCPU delay: libvirt's vcpu.0.delay is the same schedstat figure (run-queue delay), read just
# before and after vmhost's.
delay_ns() { $VIRSH domstats --vcpu "$DOM" | awk -F= '/vcpu\.0\.delay=/ {print $2}'; }
d0=$(delay_ns)
"$VMHOST" mem --json >"$TEST_TMP/delay.json"
d1=$(delay_ns)
ours=$(jq -r --argjson p "$PID" '.vms[] | select(.pid == $p) | .vcpus[0].delay_seconds * 1e9 | floor' "$TEST_TMP/delay.json")
say "vCPU 0 delay: vmhost $ours ns, libvirt vcpu.0.delay $d0 .. $d1 ns"
check "vCPU delay equals libvirt's vcpu.0.delay within 5%" \
	awk -v o="$ours" -v a="$d0" -v b="$d1" 'BEGIN { exit !(a != "" && o >= 0.95 * a && o <= 1.05 * b) }'

# The disk (mem --io): libvirt holds the monitor, so its block statistics, the domain matched by
# libvirt's pid file (/run/libvirt/qemu/NAME.pid), never by a uuid on a command line; the cache
# mode and AIO from the -blockdev JSON libvirt wrote. The guest only spins, so the counters (what
# its kernel read probing the disk) stand still between the two virsh reads.
rd0=$(blk rd.bytes)
"$VMHOST" mem --io --json >"$TEST_TMP/io.json" || fail "mem --io failed"
rd1=$(blk rd.bytes)
d() { jq -r --argjson p "$PID" ".vms[] | select(.pid == \$p) | $1" "$TEST_TMP/io.json"; }
say "disk: vmhost $(d '.disks | tojson') from $(d .disks_source) ($(d .disks_unavailable)); virsh block.0.rd.bytes $rd0 .. $rd1, rd.reqs $(blk rd.reqs)"
check "mem --io: the domain's one disk, vda, from libvirt" [ "$(d '[.disks[].device] | join(",")')/$(d .disks_source)" = vda/libvirt ]
check "  ... the domain tied to its process by libvirt's pid file (root's, 0644): its monitor trusted" \
	sh -c "[ '$(d '.monitor | tojson')' = '{\"source\":\"libvirt\",\"trusted\":true,\"why\":null}' ] && [ '$(stat -c %U:%a "/run/libvirt/qemu/$DOM.pid")' = root:644 ]"
check "  ... its read bytes and operations are virsh domstats --block's" \
	sh -c "[ '$rd0' = '$rd1' ] && [ '$(d '.disks[0].read_bytes')' = '$rd1' ] && [ '$(d '.disks[0].read_ops')' = '$(blk rd.reqs)' ]"
check "  ... cache none and aio native, as the domain's <driver> says" [ "$(d '.disks[0].cache + "/" + .disks[0].aio')" = none/native ]

# Destroyed: the process is gone and vmhost no longer lists it.
$VIRSH destroy "$DOM" >/dev/null || fail "virsh destroy failed"
DOMAIN_UP=0
for i in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
check "virsh destroy stops the QEMU process" sh -c "! kill -0 $PID 2>/dev/null"
"$VMHOST" mem --json >"$TEST_TMP/after.json"
check "vmhost no longer lists it" quiet jq -e --argjson p "$PID" '[.vms[] | select(.pid == $p)] | length == 0' "$TEST_TMP/after.json"
finish
