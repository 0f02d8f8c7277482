# Shared by the libvirt tests (source after lib.sh; LIBVIRT_TOOLS names the commands a test needs
# beyond libvirt's, QEMU's and jq): root (skipped without) and the tools (a missing one fails), one
# libvirt test at a time on this machine (the other's daemons must not stop under us), Debian's
# libvirtd and virtlogd started with libvirt_up when they are not running (their pids in STARTED,
# for the test to stop by pid; left alone when they were), and VIRSH on qemu:///system.
[ "$(id -u)" = 0 ] || skip "needs root (libvirtd, qemu:///system)"
for tool in libvirtd virtlogd virsh qemu-system-x86_64 jq ${LIBVIRT_TOOLS:-}; do
	command -v "$tool" >/dev/null || die "$tool missing (scripts/deps/test/libvirt.txt)"
done
exec 9>/run/lock/vmhost-libvirt-test.lock
flock -w 300 9 || die "another libvirt test holds /run/lock/vmhost-libvirt-test.lock"
VIRSH="virsh -q -c qemu:///system"
STARTED=""

# start_daemon NAME: runs NAME -d unless its pid file names a live process; remembers the pid.
start_daemon() {
	local name=$1 pidfile=/run/$1.pid i pid
	if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
		say "$name already running (pid $(cat "$pidfile")): left alone"
		return 0
	fi
	"$name" -d 9>&- || return 1 # the lock is the test's, not the daemon's to keep
	for i in $(seq 100); do
		pid=$(cat "$pidfile" 2>/dev/null)
		[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	[ -n "$pid" ] || return 1
	STARTED="$pid $STARTED"
	say "started $name (pid $pid)"
}

libvirt_up() {
	local i
	start_daemon virtlogd || die "cannot start virtlogd"
	start_daemon libvirtd || die "cannot start libvirtd"
	for i in $(seq 200); do $VIRSH version >/dev/null 2>&1 && break; sleep 0.1; done
	$VIRSH version >/dev/null 2>&1 || die "libvirtd does not answer on qemu:///system"
}

# fw_domain_xml NAME TYPE MEMBALLOON: on stdout, the XML of a 16 MiB, one-vCPU domain of TYPE
# (kvm, qemu) with a fresh uuid and a MEMBALLOON (virtio, none), that runs $FW_IMAGE (fw_image:
# tests/helpers/fw_qemu.sh) as its ROM.
fw_domain_xml() {
	cat <<XML
<domain type='$2'>
  <name>$1</name>
  <uuid>$(cat /proc/sys/kernel/random/uuid)</uuid>
  <memory unit='MiB'>16</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <loader type='rom' readonly='yes'>$FW_IMAGE</loader>
  </os>
  <devices><memballoon model='$3'/></devices>
</domain>
XML
}
