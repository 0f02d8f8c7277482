# A tap hot-plugged into a running QEMU (the TCG firmware guest, whose command line names no
# network at all) the way libvirt's attach-interface does it: QMP getfd takes the tap's fd over the
# monitor socket (SCM_RIGHTS), netdev_add tap,fd=NAME makes it a backend, device_add a NIC on it.
# vmhost mem --io --json lists the tap with its bytes, the kernel's own figures; neither the memo a
# run before the hot-plug left (no tap, and the VMM's fd count then) nor the reading before in one
# --interval run (a sampler's) hides it. Before, a QEMU whose command line named no tap had
# "interfaces": [] whatever fds it held. The tap lives in a network namespace this test makes,
# created and removed by name (ip tuntap), and goes with it on every exit.
. "$VMHOST_TESTS/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (a network namespace and a tap)"
command -v ip >/dev/null || die "ip (iproute2) missing"
netns_tap hp 10.232.0 52:54:00:a1:b2:c4
SOCK=$TEST_TMP/qmp.sock
fw_qemu --accel tcg --name hpguest --qmp "$SOCK" --prefix "ip netns exec $NS"
QEMU=$SPAWNED

# qmp STEP: one step of the hot-plug on QEMU's monitor, run in the namespace (the tap is opened
# there by name). getfd: open /dev/net/tun, attach to the tap (TUNSETIFF), pass the fd.
qmp() {
	ip netns exec "$NS" python3 - "$SOCK" "$TAP" "$1" <<'PY'
import fcntl, json, os, socket, struct, sys
sock, tap, step = sys.argv[1:]
s = socket.socket(socket.AF_UNIX); s.connect(sock); f = s.makefile("r")
def cmd(c, args=None, fds=()):
    msg = json.dumps({"execute": c, **({"arguments": args} if args else {})}).encode() + b"\n"
    socket.send_fds(s, [msg], list(fds)) if fds else s.sendall(msg)
    while True:
        m = json.loads(f.readline())
        if "return" in m or "error" in m:
            if "error" in m: sys.exit("%s: %s" % (c, m["error"]))
            return m["return"]
f.readline(); cmd("qmp_capabilities")
if step == "getfd":
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", tap.encode(), 0x0002 | 0x1000))  # TUNSETIFF: IFF_TAP|IFF_NO_PI
    cmd("getfd", {"fdname": "hpfd"}, [fd])
    os.close(fd)
    cmd("netdev_add", {"type": "tap", "id": "hp0", "fd": "hpfd"})
elif step == "nic":
    cmd("device_add", {"driver": "virtio-net-pci", "netdev": "hp0", "id": "hpnic", "mac": "52:54:00:a1:b2:c4", "romfile": ""})
PY
}
# send N: N UDP datagrams of 1000 bytes from the namespace to the guest's address, over the tap.
send() {
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])): s.sendto(b"h" * 1000, ("10.232.0.2", 9))' "$1"
}
kernel() { ip netns exec "$NS" cat "/sys/class/net/$TAP/statistics/$1"; }
iface() { jq -c --argjson p "$QEMU" --arg t "$TAP" '[.vms[] | select(.pid == $p) | .interfaces[]? | select(.name == $t)]' "$1"; }
field() { jq --argjson p "$QEMU" --arg t "$TAP" ".vms[] | select(.pid == \$p) | .interfaces[] | select(.name == \$t) | .$2" "$1"; }

# Before: no tap, known; this run's memo remembers that, with the VMM's fd count.
"$VMHOST" mem --io --json --pid "$QEMU" >"$TEST_TMP/before.json" || die "mem --io failed"
check "before the hot-plug: interfaces [], known" \
	jq -e --argjson p "$QEMU" '.vms[] | select(.pid == $p) | .interfaces == [] and .interfaces_unavailable == null' "$TEST_TMP/before.json"

# One --interval run across the hot-plug: its first reading has no tap, its second must.
"$VMHOST" mem --io --json --pid "$QEMU" --interval 3 >"$TEST_TMP/across.json" &
ACROSS=$!
sleep 1
qmp getfd || die "getfd and netdev_add failed"
send 20 # the backend has no NIC yet: QEMU reads the frames and drops them, the kernel counts them sent
qmp nic || die "device_add failed"
wait $ACROSS
check "one --interval run across the hot-plug: its second reading lists the tap" [ "$(iface "$TEST_TMP/across.json")" != "[]" ]

t0=$(kernel tx_bytes) r0=$(kernel rx_bytes)
"$VMHOST" mem --io --json --pid "$QEMU" >"$TEST_TMP/after.json" || die "mem --io failed"
t1=$(kernel tx_bytes) r1=$(kernel rx_bytes)
say "tap $TAP after the hot-plug: $(iface "$TEST_TMP/after.json"); the kernel's tx_bytes $t0..$t1, rx_bytes $r0..$r1"
check "after the hot-plug (the memo said no tap, the fds moved): the tap is listed" [ "$(iface "$TEST_TMP/after.json" | jq length)" = 1 ]
check "  ... with its bytes as the kernel counts them (tx: what the host sent the guest)" \
	awk -v v="$(field "$TEST_TMP/after.json" tx_bytes)" -v a="$t0" -v b="$t1" 'BEGIN { exit !(v >= 20000 && v >= a && v <= b) }'
check "  ... and its rx bytes (what the guest sent)" \
	awk -v v="$(field "$TEST_TMP/after.json" rx_bytes)" -v a="$r0" -v b="$r1" 'BEGIN { exit !(v >= a && v <= b) }'
check "  ... its fd found, not its command line (it names no network)" \
	sh -c "! tr '\\0' ' ' </proc/$QEMU/cmdline | grep -Eq -- '-(netdev|nic|net) '"
"$VMHOST" mem --io --json --pid "$QEMU" >"$TEST_TMP/again.json" || die "mem --io failed"
check "a run after that (the memo has the tap and the fd count): the tap again" [ "$(iface "$TEST_TMP/again.json" | jq length)" = 1 ]
finish
