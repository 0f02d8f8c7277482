/* parse/cmdline/qemu_disks: each disk of a QEMU command line with its cache mode and AIO engine, as -drive
 * (named or the names QEMU gives unnamed ones), -hda/-cdrom, and -blockdev chains in QemuOpts and in
 * libvirt's JSON; the lookup by what query-blockstats and libvirt report. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "parse/cmdline/qemu_disks.h"
#include "testutil.h"

static void parse(const char *const *args, struct qemu_disks *ret)
{
	char buf[8192];
	size_t n = cmdline_join(buf, sizeof(buf), args);
	assert_int_equal(parse_qemu_disks(buf, n, ret), 0);
}

static void assert_disk(const struct qemu_disk *d, const char *drive, const char *node, const char *dev,
			const char *file, const char *cache, const char *aio)
{
	assert_string_equal(d->drive, drive);
	assert_string_equal(d->node_name, node);
	assert_string_equal(d->device_id, dev);
	assert_string_equal(d->file, file);
	assert_string_equal(d->cache, cache);
	assert_string_equal(d->aio, aio);
}

/* The e2e_qemu_io guest's disk, and QEMU's defaults. */
static void test_drive(void **state)
{
	(void)state;
	struct qemu_disks d;
	const char *args[] = {"qemu-system-x86_64", "-m", "256", "-nodefaults",
			      "-drive", "file=/tmp/disk.raw,format=raw,if=none,id=disk0,cache=none,aio=threads",
			      "-device", "virtio-blk-pci,drive=disk0,id=vd0",
			      "-drive", "file=/tmp/b.qcow2,if=none,id=disk1",
			      "-drive", "file=/tmp/c.raw,if=none,id=disk2,cache.direct=on,aio=io_uring",
			      "-drive", "file=/tmp/d,,with,,commas.raw,if=none,id=disk3,cache=unsafe,aio=native", NULL};
	parse(args, &d);
	assert_int_equal(d.n, 4);
	assert_disk(&d.d[0], "disk0", "", "vd0", "/tmp/disk.raw", "none", "threads");
	assert_disk(&d.d[1], "disk1", "", "", "/tmp/b.qcow2", "writeback", "threads");
	assert_disk(&d.d[2], "disk2", "", "", "/tmp/c.raw", "none", "io_uring");
	assert_disk(&d.d[3], "disk3", "", "", "/tmp/d,with,commas.raw", "unsafe", "native");
}

/* Unnamed drives take QEMU's names (blockdev.c drive_new): interface, bus, medium, unit. */
static void test_unnamed(void **state)
{
	(void)state;
	struct qemu_disks d;
	const char *args[] = {"qemu-system-x86_64", "-hda", "/img/a.qcow2", "-cdrom", "/img/cd.iso",
			      "-drive", "file=/img/b.raw",
			      "-drive", "file=/img/v0.raw,if=virtio",
			      "-drive", "file=/img/v1.raw,if=virtio,cache=writethrough",
			      "-drive", "file=/img/s.raw,if=scsi,index=8",
			      "-drive", "if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE.fd", NULL};
	parse(args, &d);
	assert_int_equal(d.n, 7);
	assert_disk(&d.d[0], "ide0-hd0", "", "", "/img/a.qcow2", "writeback", "threads");
	assert_disk(&d.d[1], "ide1-cd0", "", "", "/img/cd.iso", "writeback", "threads");
	assert_string_equal(d.d[2].drive, "ide0-hd1"); /* the next free unit after -hda */
	assert_string_equal(d.d[3].drive, "virtio0");
	assert_disk(&d.d[4], "virtio1", "", "", "/img/v1.raw", "writethrough", "threads");
	assert_string_equal(d.d[5].drive, "scsi1-hd1"); /* index 8: 7 units a bus */
	assert_string_equal(d.d[6].drive, "pflash0");
}

/* libvirt 9's form (Debian 12): a format node over a file node, JSON, the cache in both, aio on the
 * file node; and the writethrough a device's write-cache=off makes. */
static void test_libvirt_blockdev(void **state)
{
	(void)state;
	struct qemu_disks d;
	const char *args[] = {
		"/usr/bin/qemu-system-x86_64", "-name", "guest=vm1,debug-threads=on",
		"-blockdev", "{\"driver\":\"file\",\"filename\":\"/var/lib/libvirt/images/vm1.qcow2\",\"node-name\":\"libvirt-2-storage\",\"auto-read-only\":true,\"discard\":\"unmap\",\"aio\":\"native\",\"cache\":{\"direct\":true,\"no-flush\":false}}",
		"-blockdev", "{\"node-name\":\"libvirt-2-format\",\"read-only\":false,\"discard\":\"unmap\",\"cache\":{\"direct\":true,\"no-flush\":false},\"driver\":\"qcow2\",\"file\":\"libvirt-2-storage\",\"backing\":null}",
		"-device", "{\"driver\":\"virtio-blk-pci\",\"bus\":\"pci.4\",\"addr\":\"0x0\",\"drive\":\"libvirt-2-format\",\"id\":\"virtio-disk0\",\"bootindex\":1,\"write-cache\":\"on\"}",
		"-blockdev", "{\"driver\":\"file\",\"filename\":\"/var/lib/libvirt/images/data.raw\",\"node-name\":\"libvirt-1-storage\",\"auto-read-only\":true,\"discard\":\"unmap\"}",
		"-blockdev", "{\"node-name\":\"libvirt-1-format\",\"read-only\":false,\"driver\":\"raw\",\"file\":\"libvirt-1-storage\"}",
		"-device", "{\"driver\":\"scsi-hd\",\"bus\":\"scsi0.0\",\"channel\":0,\"scsi-id\":0,\"lun\":1,\"device_id\":\"drive-scsi0-0-0-1\",\"drive\":\"libvirt-1-format\",\"id\":\"scsi0-0-0-1\",\"write-cache\":\"off\"}",
		NULL};
	parse(args, &d);
	assert_int_equal(d.n, 2);
	assert_disk(&d.d[0], "", "libvirt-2-format", "virtio-disk0", "/var/lib/libvirt/images/vm1.qcow2", "none", "native");
	assert_disk(&d.d[1], "", "libvirt-1-format", "scsi0-0-0-1", "/var/lib/libvirt/images/data.raw", "writethrough",
		    "threads");
	/* query-blockstats names a -blockdev disk by node-name and qdev, its "device" empty. */
	assert_ptr_equal(qemu_disks_find(&d, "", "libvirt-1-format", NULL), &d.d[1]);
	assert_ptr_equal(qemu_disks_find(&d, "", "", "/machine/peripheral/virtio-disk0/virtio-backend"), &d.d[0]);
	assert_ptr_equal(qemu_disks_find(&d, "", "", "scsi0-0-0-1"), &d.d[1]);
	assert_null(qemu_disks_find(&d, "", "libvirt-1-storage", "/machine/peripheral-anon/device[0]/virtio-backend"));
	assert_ptr_equal(qemu_disks_find_file(&d, "/var/lib/libvirt/images/data.raw"), &d.d[1]);
	assert_null(qemu_disks_find_file(&d, "/var/lib/libvirt/images/other.raw"));
}

/* QemuOpts -blockdev with an inline child (file.*), a child's own setting over its parent's, a
 * chain through a filter node, and options a node inherits. */
static void test_blockdev_opts(void **state)
{
	(void)state;
	struct qemu_disks d;
	const char *args[] = {
		"qemu-kvm",
		"-blockdev", "driver=qcow2,node-name=root0,cache.direct=on,file.driver=file,file.filename=/srv/r.qcow2,file.aio=io_uring",
		"-device", "virtio-blk-pci,drive=root0,id=vda",
		"-blockdev", "driver=file,filename=/srv/t.raw,node-name=proto1,cache.no-flush=on",
		"-blockdev", "driver=raw,node-name=fmt1,file=proto1",
		"-blockdev", "driver=throttle,node-name=thr1,throttle-group=tg0,file=fmt1",
		"-device", "virtio-blk-pci,drive=thr1",
		"-blockdev", "driver=file,filename=/srv/o.raw,node-name=proto2,cache.direct=off",
		"-blockdev", "driver=raw,node-name=fmt2,file=proto2,cache.direct=on",
		"-device", "ide-hd,drive=fmt2,id=hd2",
		"-device", "virtio-blk-pci,drive=nosuchnode,id=vdz",
		"-device", "virtio-net-pci,netdev=n0", NULL};
	parse(args, &d);
	assert_int_equal(d.n, 3);
	assert_disk(&d.d[0], "", "root0", "vda", "/srv/r.qcow2", "none", "io_uring");
	assert_disk(&d.d[1], "", "thr1", "", "/srv/t.raw", "unsafe", "threads");
	assert_disk(&d.d[2], "", "fmt2", "hd2", "/srv/o.raw", "writeback", "threads"); /* the file node's own */
}

/* No disks, an empty buffer, a cut-short command line, an argument that looks like an option, a
 * node chain that loops. */
static void test_edges(void **state)
{
	(void)state;
	struct qemu_disks d = {.n = 99};
	assert_int_equal(parse_qemu_disks("", 0, &d), -EINVAL);
	assert_int_equal(d.n, 99); /* untouched on failure */
	const char *none[] = {"qemu-system-x86_64", "-m", "1G", "-nodefaults", NULL};
	parse(none, &d);
	assert_int_equal(d.n, 0);
	const char cut[] = "qemu-system-x86_64\0-drive\0file=/a.raw,if=none,id=d0,cache=no";
	assert_int_equal(parse_qemu_disks(cut, sizeof(cut) - 1, &d), 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.d[0].cache, "no"); /* what the line says, cut: QEMU would have refused it */
	/* -name's argument "-drive" is a name, not a drive (QEMU's rule: -name takes the next word). */
	const char *named[] = {"qemu-system-x86_64", "-name", "-drive", "-drive", "file=/a.raw,if=none,id=d0", NULL};
	parse(named, &d);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.d[0].drive, "d0");
	const char *loop[] = {"qemu-system-x86_64", "-blockdev", "driver=raw,node-name=a,file=b",
			      "-blockdev", "driver=raw,node-name=b,file=a,cache.direct=on", "-device", "virtio-blk-pci,drive=a", NULL};
	parse(loop, &d);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.d[0].cache, "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drive),           cmocka_unit_test(test_unnamed),
		cmocka_unit_test(test_libvirt_blockdev), cmocka_unit_test(test_blockdev_opts),
		cmocka_unit_test(test_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
