/* core/model/vm_disks: a real query-blockstats reply and libvirt's block.N.* fields as disks, named
 * and configured by the command line's disks (parse/cmdline/qemu_disks); vm_read_qmp's visit of a
 * monitor that never answers, stops half way, refuses or answers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "io/clock.h"
#include "core/model/vm.h"
#include "core/model/vm_disks.h"
#include "core/model/vm_visit.h"
#include "fakeqmp.h"
#include "io/peer/qmp.h"
#include "parse/json.h"
#include "parse/cmdline/qemu_disks.h"
#include "parse/cmdline/vmcmd.h"
#include "testutil.h"

/* The reply QEMU 7.2 gave here for the -drive and libvirt -blockdev disks of this command line. */
static const char *const blockstats_args[] = {
	"qemu-system-x86_64", "-drive", "file=/tmp/qbs/a.raw,format=raw,if=none,id=disk0,cache=none,aio=threads",
	"-device", "virtio-blk-pci,drive=disk0,id=vd0",
	"-blockdev", "{\"driver\":\"file\",\"filename\":\"/tmp/qbs/b.raw\",\"node-name\":\"libvirt-1-storage\",\"auto-read-only\":true,\"discard\":\"unmap\",\"aio\":\"native\",\"cache\":{\"direct\":true,\"no-flush\":false}}",
	"-blockdev", "{\"node-name\":\"libvirt-1-format\",\"read-only\":false,\"cache\":{\"direct\":true,\"no-flush\":false},\"driver\":\"raw\",\"file\":\"libvirt-1-storage\"}",
	"-device", "{\"driver\":\"virtio-blk-pci\",\"drive\":\"libvirt-1-format\",\"id\":\"virtio-disk0\",\"write-cache\":\"on\"}",
	NULL};

static void test_blockstats(void **state)
{
	(void)state;
	size_t len;
	char *text = fixture("qmp/query-blockstats.json", &len);
	struct json_doc doc;
	assert_int_equal(json_parse(text, len, &doc), 0);
	char buf[4096];
	struct qemu_disks cmd;
	assert_int_equal(parse_qemu_disks(buf, cmdline_join(buf, sizeof(buf), blockstats_args), &cmd), 0);
	struct vm_disks d;
	assert_int_equal(vm_disks_from_blockstats(&doc, json_get(&doc, json_root(&doc), "return"), &cmd, &d), 0);
	assert_true(d.known);
	assert_string_equal(d.source, "qmp");
	assert_int_equal(d.n, 2);
	const struct vm_disk *a = &d.d[0], *b = &d.d[1];
	assert_string_equal(a->device, "disk0");
	assert_string_equal(a->node_name, ""); /* QEMU's own "#block061": no name of the user's */
	assert_string_equal(a->cache, "none");
	assert_string_equal(a->aio, "threads");
	assert_true(a->read_bytes.known && a->read_bytes.v == 1048576 && a->read_ops.v == 256);
	assert_true(a->write_bytes.known && a->write_bytes.v == 268435456 && a->write_ops.v == 2048);
	assert_true(a->flush_ops.known && a->flush_ops.v == 3);
	assert_float_equal(a->read_seconds, 0.512, 1e-12);
	assert_float_equal(a->write_seconds, 4.096, 1e-12);
	assert_float_equal(a->flush_seconds, 0.0015, 1e-12);
	assert_float_equal(vm_disk_latency(a->write_seconds, a->write_ops), 0.002, 1e-12);
	assert_float_equal(vm_disk_latency(a->read_seconds, a->read_ops), 0.002, 1e-12);
	/* The -blockdev disk: named by its device's id, its node kept; no operations, no latency. */
	assert_string_equal(b->device, "virtio-disk0");
	assert_string_equal(b->node_name, "libvirt-1-format");
	assert_string_equal(b->cache, "none");
	assert_string_equal(b->aio, "native");
	assert_true(b->write_ops.known && b->write_ops.v == 0);
	assert_true(isnan(vm_disk_latency(b->write_seconds, b->write_ops)));
	assert_true(isnan(vm_disk_latency(1.0, UNKNOWN)));
	/* Without the command line: the counters, names from the reply, cache and AIO unknown. */
	assert_int_equal(vm_disks_from_blockstats(&doc, json_get(&doc, json_root(&doc), "return"), NULL, &d), 0);
	assert_string_equal(d.d[1].device, "libvirt-1-format");
	assert_string_equal(d.d[1].cache, "");
	/* Not an array: refused, the output untouched. */
	d.n = 7;
	assert_int_equal(vm_disks_from_blockstats(&doc, json_root(&doc), &cmd, &d), -EBADMSG);
	assert_int_equal(d.n, 7);
	json_free(&doc);
	free(text);
}

static struct virt_param vparam(const char *field, int64_t v, const char *s)
{
	struct virt_param p = {.i = v, .d = (double)v, .s = (char *)s};
	snprintf(p.field, sizeof(p.field), "%s", field);
	return p;
}

/* libvirt's block group (virsh domstats --block): names, paths, counters, times in ns. */
static void test_virt(void **state)
{
	(void)state;
	struct virt_param params[] = {
		vparam("block.count", 2, NULL), vparam("block.0.name", 0, "vda"),
		vparam("block.0.path", 0, "/var/lib/libvirt/images/disks1.qcow2"), vparam("block.0.rd.reqs", 10, NULL),
		vparam("block.0.rd.bytes", 40960, NULL), vparam("block.0.rd.times", 5000000, NULL),
		vparam("block.0.wr.reqs", 4, NULL), vparam("block.0.wr.bytes", 16384, NULL),
		vparam("block.0.wr.times", 8000000, NULL), vparam("block.0.fl.reqs", 1, NULL),
		vparam("block.0.fl.times", 100000, NULL), vparam("block.0.capacity", 1 << 30, NULL),
		vparam("block.1.name", 0, "sdb"), vparam("block.1.path", 0, "/elsewhere.raw"),
		vparam("block.1.wr.bytes", 512, NULL), vparam("vcpu.0.time", 99, NULL),
	};
	struct virt_domain dom = {.uuid = "6c1b8f0e-3d2a-4f5b-9c7e-0a1b2c3d4e5f", .params = params,
				  .nparams = sizeof(params) / sizeof(params[0])};
	size_t n;
	char *buf = fixture_cmdline("cmdlines/libvirt-json-disks.args", &n);
	struct qemu_disks cmd;
	assert_int_equal(parse_qemu_disks(buf, n, &cmd), 0);
	free(buf);
	struct vm_disks d;
	vm_disks_from_virt(&dom, &cmd, &d);
	assert_true(d.known);
	assert_string_equal(d.source, "libvirt");
	assert_int_equal(d.n, 2);
	assert_string_equal(d.d[0].device, "vda");
	assert_string_equal(d.d[0].node_name, "libvirt-2-format");
	assert_string_equal(d.d[0].cache, "none");
	assert_string_equal(d.d[0].aio, "native");
	assert_true(d.d[0].read_ops.v == 10 && d.d[0].read_bytes.v == 40960 && d.d[0].write_ops.v == 4 &&
		    d.d[0].write_bytes.v == 16384 && d.d[0].flush_ops.v == 1);
	assert_float_equal(d.d[0].read_seconds, 0.005, 1e-12);
	assert_float_equal(d.d[0].write_seconds, 0.008, 1e-12);
	/* A disk the command line does not hold: its counters, cache and AIO unknown; what libvirt did
	 * not give stays unknown, not 0. */
	assert_string_equal(d.d[1].device, "sdb");
	assert_string_equal(d.d[1].cache, "");
	assert_true(d.d[1].write_bytes.known && d.d[1].write_bytes.v == 512);
	assert_false(d.d[1].read_bytes.known);
	assert_true(isnan(d.d[1].read_seconds));
	assert_ptr_equal(virt_domain_find(&(struct virt_domains){.v = &dom, .n = 1}, "6C1B8F0E-3D2A-4F5B-9C7E-0A1B2C3D4E5F"), &dom);
}

/* More disks than vmhost lists (VM_DISKS_MAX): the first ones, and how many were left out, said
 * where the disks are, never a list that looks whole. */
static void test_too_many(void **state)
{
	(void)state;
	char text[8192] = "[";
	for (int i = 0; i < VM_DISKS_MAX + 2; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s{\"device\": \"d%d\", \"stats\": {}}",
			 i ? ", " : "", i);
	strcat(text, "]");
	struct json_doc doc;
	assert_int_equal(json_parse(text, strlen(text), &doc), 0);
	struct vm_disks d;
	assert_int_equal(vm_disks_from_blockstats(&doc, json_root(&doc), NULL, &d), 0);
	assert_true(d.known);
	assert_int_equal(d.n, VM_DISKS_MAX);
	assert_non_null(strstr(d.why, "2 more disks"));
	json_free(&doc);
	/* libvirt's: block.count says how many; a field of disk 17 is not read. */
	struct virt_param params[] = {vparam("block.count", VM_DISKS_MAX + 3, NULL), vparam("block.0.name", 0, "vda"),
				      vparam("block.17.name", 0, "vdr")};
	struct virt_domain dom = {.params = params, .nparams = 3};
	vm_disks_from_virt(&dom, NULL, &d);
	assert_true(d.known);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.why, "3 more disks"));
	/* Up to the limit: nothing said. */
	params[0].i = 1;
	dom.nparams = 2;
	vm_disks_from_virt(&dom, NULL, &d);
	assert_string_equal(d.why, "");
}

/* A QEMU VM whose QMP socket is path, as vm_read_qmp sees it. */
static void qmp_vm(struct vm *vm, const char *path, char *buf, size_t cap)
{
	char qmp[128];
	snprintf(qmp, sizeof(qmp), "unix:%s,server=on,wait=off", path);
	const char *args[] = {"qemu-system-x86_64", "-drive", "file=/tmp/a.raw,if=none,id=disk0,cache=none,aio=threads",
			      "-device", "virtio-blk-pci,drive=disk0,id=vd0", "-qmp", qmp, NULL};
	*vm = (struct vm){.pid = getpid()}; /* the fake monitor's listener: this process */
	vm->cmdline_len = cmdline_join(buf, cap, args);
	vm->cmdline = buf;
	assert_int_equal(parse_vm_cmdline(buf, vm->cmdline_len, &vm->cfg), 0);
	assert_int_equal(vm->cfg.qmp.kind, VM_QMP_UNIX);
}

/* Visits vm's QMP for its disks (and its guest view) within 300 ms; returns the seconds it took. */
static double visit(struct vm *vm)
{
	struct host host = {0};
	struct vm_qmp_visit v = {.guest = true, .disks = true, .timeout_ms = 300};
	double t0 = clock_monotonic_seconds();
	vm_read_qmp(vm, &host, &v);
	return clock_monotonic_seconds() - t0;
}

/* A monitor that never answers, one that stops after negotiating, and one that answers: the
 * first two cost at most the deadline and leave disks unknown with the reason; never a []. */
static void test_visit(void **state)
{
	(void)state;
	char buf[1024];
	struct vm vm;
	struct fake_qmp f;
	const struct fake_step never[] = {{'x', 0}};
	assert_int_equal(fake_qmp_start(&f, never, 1), 0);
	qmp_vm(&vm, f.path, buf, sizeof(buf));
	double took = visit(&vm);
	fake_qmp_stop(&f);
	assert_non_null(vm.disks);
	assert_false(vm.disks->known);
	assert_int_equal(vm.disks->n, 0);
	assert_non_null(strstr(vm.disks->why, f.path));
	assert_non_null(strstr(vm.disks->why, qmp_strerror(-EBUSY)));
	assert_true(took < 0.6);
	assert_string_equal(vm.guest->why, "no virtio-balloon device on the command line");
	free(vm.disks);
	free(vm.guest);

	size_t len;
	char *reply = fixture("qmp/query-blockstats.json", &len);
	const struct fake_step stuck[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'w', "400"}};
	const struct fake_step answers[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', reply}};
	assert_int_equal(fake_qmp_start(&f, stuck, 5), 0);
	qmp_vm(&vm, f.path, buf, sizeof(buf));
	took = visit(&vm);
	fake_qmp_stop(&f);
	assert_false(vm.disks->known);
	assert_int_equal(strncmp(vm.disks->why, "query-blockstats: ", 18), 0);
	assert_true(took < 0.6);
	free(vm.disks);
	free(vm.guest);

	/* QEMU refusing the command: its own words. */
	const struct fake_step refused[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0},
					    {'s', "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command query-blockstats has not been found\"}}\r\n"}};
	assert_int_equal(fake_qmp_start(&f, refused, 5), 0);
	qmp_vm(&vm, f.path, buf, sizeof(buf));
	visit(&vm);
	fake_qmp_stop(&f);
	assert_false(vm.disks->known);
	assert_string_equal(vm.disks->why, "query-blockstats: The command query-blockstats has not been found");
	free(vm.disks);
	free(vm.guest);

	assert_int_equal(fake_qmp_start(&f, answers, 5), 0);
	qmp_vm(&vm, f.path, buf, sizeof(buf));
	visit(&vm);
	fake_qmp_stop(&f);
	assert_int_equal(f.lines_read, 2); /* qmp_capabilities and query-blockstats: one visit */
	assert_true(vm.disks->known);
	assert_int_equal(vm.disks->n, 2);
	assert_string_equal(vm.disks->d[0].device, "disk0");
	assert_string_equal(vm.disks->d[0].cache, "none");
	assert_true(vm.disks->d[0].write_bytes.v == 268435456);
	free(vm.disks);
	free(vm.guest);
	free(reply);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blockstats), cmocka_unit_test(test_virt),
		cmocka_unit_test(test_visit),      cmocka_unit_test(test_too_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
