# A real QEMU guest (TCG, the busybox image) with a virtio disk and a tap in a network namespace
# this test makes: the guest writes 256 MiB to its disk with O_DIRECT; vmhost's write bytes for it
# are within 5% of QMP's query-blockstats and of /proc/PID/io, and so are the disk's own (mem --io,
# with its cache mode and AIO from the command line); bytes the host sends to the tap
# (UDP) are counted within 5% on that VM and interface. QEMU stopped by pid, the namespace (and
# the tap in it) deleted on every exit.
. "$VMHOST_TESTS/lib.sh"
QEMU=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 missing (scripts/deps/test/qemu.txt)"
command -v ip >/dev/null || die "ip (iproute2) missing"
[ "$(id -u)" = 0 ] || die "needs root (a network namespace and a tap)"
img=$("$VMHOST_TESTS/../scripts/guest-image.sh" "$VMHOST_BUILD/guest" | tail -1) || die "cannot build the guest image"
set -- $img
KERNEL=$1 INITRD=$2
netns_tap io 10.231.0 52:54:00:a1:b2:c3

MIB=256
truncate -s $((MIB + 16))M "$TEST_TMP/disk.raw"
spawn ip netns exec "$NS" "$QEMU" -name guest=e2e-io,debug-threads=on -m 256 -machine pc,accel=tcg -smp 1 \
	-nodefaults -display none -kernel "$KERNEL" -initrd "$INITRD" \
	-append "console=ttyS0 quiet panic=-1 vmhost.write=$MIB" -serial "file:$TEST_TMP/guest.log" -no-reboot \
	-drive file="$TEST_TMP/disk.raw",format=raw,if=none,id=disk0,cache=none,aio=threads \
	-device virtio-blk-pci,drive=disk0,id=vd0 \
	-netdev tap,id=n0,ifname="$TAP",script=no,downscript=no -device virtio-net-pci,netdev=n0,mac=52:54:00:a1:b2:c3,romfile= \
	-qmp unix:"$TEST_TMP/qmp.sock",server=on,wait=off
PID=$SPAWNED
# record samples the guest's writes as they happen (--io: its disk's too): the report charts them
# next to its memory
spawn "$VMHOST" record --db "$TEST_TMP/io.db" --interval 1 --kvm-interval 0 --io --quiet
RECORDER=$SPAWNED
for i in $(seq 480); do
	grep -q vmhost-write-done "$TEST_TMP/guest.log" 2>/dev/null && break
	kill -0 $PID 2>/dev/null || die "the guest exited: $(tail -n 3 "$TEST_TMP/guest.log")"
	sleep 0.5
done
grep -q vmhost-write-done "$TEST_TMP/guest.log" || die "the guest did not write its disk in 240 s: $(tail -n 3 "$TEST_TMP/guest.log")"
say "guest wrote $MIB MiB after ${SECONDS}s"
# recorded until a sample holds the whole write (60 s at most), not for 2 s more
rec_w() { sqlite3 "$TEST_TMP/io.db" "SELECT MAX(s.io_write) - MIN(s.io_write) FROM vm_samples s JOIN vms v ON v.id = s.vm_id WHERE v.pid = $PID" 2>/dev/null; }
wait_for 60 eval 'near "$(rec_w)" $((MIB << 20)) 5'
stop_pid "$RECORDER"
rec_w=$(rec_w)
check "record: the VM's stored write bytes grew by its $MIB MiB (within 5%)" near "${rec_w:-0}" $((MIB << 20)) 5
"$VMHOST" report --db "$TEST_TMP/io.db" --out "$TEST_TMP/io.html" >/dev/null 2>&1
check "report: the VM's section charts its disk and network" grep -q 'e2e-io: disk and network, bytes a second' "$TEST_TMP/io.html"
# disk0_chart: the section's chart of each disk holds disk0's written line, drawn (a polyline)
disk0_chart() { awk '/<figcaption>e2e-io: disks, bytes a second/ {on = 1} on && /<polyline/ {line = 1}
	on && /<span><i class="" style="background:[^"]*"><\/i>disk0 written</ {legend = 1} on && /<\/figure>/ {on = 0}
	END {exit !(line && legend)}' "$TEST_TMP/io.html"; }
check "report: ... and each disk (record --io): disk0's bytes written a second" disk0_chart

# qmp_blockstats FIELD: the disk's counter as QEMU's query-blockstats gives it.
qmp_blockstats() {
	python3 - "$TEST_TMP/qmp.sock" "$1" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
def cmd(c):
    f.write(json.dumps({"execute": c}) + "\n"); f.flush()
    while True:
        m = json.loads(f.readline())
        if "return" in m or "error" in m: return m
f.readline(); cmd("qmp_capabilities")
for d in cmd("query-blockstats")["return"]:
    if d.get("qdev", "").endswith("vd0") or d.get("device") == "disk0": print(d["stats"][sys.argv[2]])
PY
}
"$VMHOST" mem --pid $PID --json >"$TEST_TMP/mem.json" || die "mem --json failed"
proc_w=$(awk '/^write_bytes/ {print $2}' /proc/$PID/io)
qmp_w=$(qmp_blockstats wr_bytes)
ours=$(jq --argjson p $PID '.vms[] | select(.pid == $p) | .io.write_bytes' "$TEST_TMP/mem.json")
say "write bytes: vmhost $ours, /proc/PID/io $proc_w, QMP query-blockstats $qmp_w, guest $((MIB << 20))"
check "QMP saw the guest's $MIB MiB" near "$qmp_w" $((MIB << 20)) 1
check "vmhost's write bytes within 5% of QMP's" near "$ours" "$qmp_w" 5
check "vmhost's write bytes within 5% of /proc/PID/io" near "$ours" "$proc_w" 5
# Per disk (mem --io): the same short QMP visit --guest makes, query-blockstats, with the cache
# mode and AIO of the command line; the guest is idle now, so QEMU's counters stand still.
"$VMHOST" mem --pid $PID --io --json >"$TEST_TMP/io.json" || die "mem --io failed"
qmp_ops=$(qmp_blockstats wr_operations)
qmp_ns=$(qmp_blockstats wr_total_time_ns)
disk() { jq -r --argjson p $PID ".vms[] | select(.pid == \$p) | .disks[] | select(.device == \"disk0\") | $1" "$TEST_TMP/io.json"; }
say "disk0: vmhost $(disk .write_bytes) B in $(disk .write_ops) writes, $(disk .write_seconds) s ($(disk .write_latency_seconds) s each), cache $(disk .cache), aio $(disk .aio); QMP $qmp_w B in $qmp_ops, $qmp_ns ns"
check "without --io (or --guest) disks are null, with the reason" \
	jq -e --argjson p $PID '.vms[] | select(.pid == $p) | .disks == null and (.disks_unavailable | test("--io"))' "$TEST_TMP/mem.json"
check "mem --io: one disk, disk0, from QMP" \
	jq -e --argjson p $PID '.vms[] | select(.pid == $p) | [.disks[].device] == ["disk0"] and .disks_source == "qmp"' "$TEST_TMP/io.json"
check "  ... QEMU's own socket, which it listens on: its monitor trusted" \
	jq -e --argjson p $PID '.vms[] | select(.pid == $p) | .monitor == {"source": "qmp", "trusted": true, "why": null}' "$TEST_TMP/io.json"
check "the disk's write bytes within 5% of QMP's query-blockstats" near "$(disk .write_bytes)" "$qmp_w" 5
check "  ... and of the $MIB MiB the guest wrote" near "$(disk .write_bytes)" $((MIB << 20)) 5
check "its write operations and their time are QMP's" sh -c "[ '$(disk .write_ops)' = '$qmp_ops' ] && [ '$(disk '.write_seconds * 1e9 | round')' = '$qmp_ns' ]"
# record --io stored the same disk, sample by sample: its last row is mem --io's (QEMU's counters
# stand still since), its bytes grew by what the guest wrote.
rec_disk() { sqlite3 "$TEST_TMP/io.db" "SELECT $1 FROM vm_disk_samples d JOIN vms v ON v.id = d.vm_id WHERE v.pid = $PID AND d.device = 'disk0' ORDER BY d.t_ms DESC LIMIT 1"; }
rec_dw=$(sqlite3 "$TEST_TMP/io.db" "SELECT MAX(write_bytes) - MIN(write_bytes) FROM vm_disk_samples d JOIN vms v ON v.id = d.vm_id WHERE v.pid = $PID AND d.device = 'disk0'")
say "record --io: disk0's last row $(rec_disk write_bytes) B in $(rec_disk write_ops) writes, $(rec_disk write_time_ns) ns; grew by $rec_dw B"
check "record --io: the last disk0 row holds mem --io's write bytes" [ "$(rec_disk write_bytes)" = "$(disk .write_bytes)" ]
check "  ... its writes, and their time to the nanosecond" \
	sh -c "[ '$(rec_disk write_ops)' = '$qmp_ops' ] && [ '$(rec_disk write_time_ns)' = '$qmp_ns' ]"
check "  ... and its reads and flushes" sh -c "[ '$(rec_disk read_bytes)' = '$(disk .read_bytes)' ] && [ '$(rec_disk flush_ops)' = '$(disk .flush_ops)' ]"
check "  ... whose write bytes grew by the guest's $MIB MiB (within 5%)" near "${rec_dw:-0}" $((MIB << 20)) 5
check "its latency is the time per write" awk -v l="$(disk .write_latency_seconds)" -v s="$(disk .write_seconds)" -v n="$(disk .write_ops)" \
	'BEGIN { exit !(n > 0 && l > 0 && l * n > s * 0.999 && l * n < s * 1.001) }'
check "cache and aio are the command line's (cache=none, aio=threads)" sh -c "[ '$(disk .cache)' = none ] && [ '$(disk .aio)' = threads ]"
# serve --io: the same disk's series, scraped (and with --db, recorded as record --io records it).
. "$VMHOST_TESTS/e2e/serve_lib.sh"
serve_start "$TEST_TMP/serve.log" "" --io --min-interval 0 --no-kvm --db "$TEST_TMP/serve.db" --db-interval 1 ||
	die "serve --io did not start"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics.txt" || die "scrape failed"
# until disk0's row is recorded (--db-interval 1; 30 s at most), not for 1.2 s
served() { sqlite3 "$TEST_TMP/serve.db" "SELECT write_bytes || ' ' || write_ops FROM vm_disk_samples d JOIN vms v ON v.id = d.vm_id WHERE v.pid = $PID AND d.device = 'disk0' ORDER BY d.t_ms DESC LIMIT 1" 2>/dev/null; }
wait_for 30 eval '[ -n "$(served)" ]'
stop_pid "$SERVER"
served=$(served)
check "serve --io --db: disk0's row holds QMP's write bytes and writes" [ "$served" = "$qmp_w $qmp_ops" ]
series() { awk -v m="$1" -v l="pid=\"$PID\"" -v d="device=\"disk0\"${2:-}" 'index($1, m "{") == 1 && index($1, l) && index($1, d) {print $2}' "$TEST_TMP/metrics.txt"; }
say "serve --io: write bytes $(series vmhost_vm_disk_write_bytes_total), writes $(series vmhost_vm_disk_operations_total ',op="write"'), seconds $(series vmhost_vm_disk_io_seconds_total ',op="write"')"
check "serve --io: vmhost_vm_disk_write_bytes_total{device=\"disk0\"} is QMP's" [ "$(series vmhost_vm_disk_write_bytes_total)" = "$qmp_w" ]
check "  ... vmhost_vm_disk_operations_total{op=\"write\"} too" [ "$(series vmhost_vm_disk_operations_total ',op="write"')" = "$qmp_ops" ]
check "  ... and vmhost_vm_disk_io_seconds_total{op=\"write\"}" near "$(series vmhost_vm_disk_io_seconds_total ',op="write"')" "$(awk -v n="$qmp_ns" 'BEGIN { print n / 1e9 }')" 0.01
check "the VM's interfaces: its tap, found from its tun fd" \
	jq -e --argjson p $PID --arg t "$TAP" '[.vms[] | select(.pid == $p) | .interfaces[].name] == [$t]' "$TEST_TMP/mem.json"

# The host sends 2000 UDP datagrams of 1400 bytes to the guest's address over the tap, paced
# (a TCG guest drains its NIC slowly: an unpaced burst overflows the tap's queue, tx_dropped).
tx() { jq --argjson p $PID --arg t "$TAP" '.vms[] | select(.pid == $p) | .interfaces[] | select(.name == $t) | .tx_bytes' "$1"; }
before=$(tx "$TEST_TMP/mem.json")
sent=$(ip netns exec "$NS" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); n = 0
for i in range(2000):
    n += s.sendto(b"v" * 1400, ("10.231.0.2", 9))
    if i % 10 == 9: time.sleep(0.01)
print(n)')
# the kernel's count of them on the tap, not 1 s after (60 s at most)
tap_tx() { ip netns exec "$NS" cat /sys/class/net/$TAP/statistics/tx_bytes; }
wait_for 60 eval '[ $(($(tap_tx) - before)) -ge $((sent * 95 / 100)) ]'
"$VMHOST" mem --pid $PID --json >"$TEST_TMP/mem2.json" || die "mem --json failed"
after=$(tx "$TEST_TMP/mem2.json")
kernel=$(ip netns exec "$NS" cat /sys/class/net/$TAP/statistics/tx_bytes)
dropped=$(jq --argjson p $PID --arg t "$TAP" '.vms[] | select(.pid == $p) | .interfaces[] | select(.name == $t) | .tx_dropped' "$TEST_TMP/mem2.json")
say "tap $TAP: host sent $sent bytes of UDP payload; vmhost's tx_bytes $before -> $after (the kernel's $kernel), tx_dropped $dropped"
check "bytes sent to the tap counted within 5% on the VM and interface" near "$((after - before))" "$sent" 5
check "the tap's counter is the kernel's" near "$after" "$kernel" 1
other=$(jq --argjson p $PID --arg t "$TAP" '[.vms[] | select(.pid != $p) | .interfaces // [] | .[] | select(.name == $t)] | length' "$TEST_TMP/mem2.json")
check "no other VM has the tap" [ "$other" = 0 ]
finish
