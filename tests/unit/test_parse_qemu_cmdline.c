/* parse/cmdline/qemu_cmdline: what a QEMU command line says about its guest: the QMP socket (-qmp,
 * -chardev + -mon mode=control), the CPU model's VMX/SVM, -smp's most vCPUs, a tap backend, shared
 * and huge-page RAM and KSM's mem-merge by every boolean spelling (and cloud-hypervisor's too), the
 * balloon and its free page reporting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "parse/cmdline/qemu_cmdline.h"
#include "parse/cmdline/vmcmd.h"
#include "testutil.h"

/* Parses a command line given as one string with arguments separated by '|'. */
static struct vm_config config_of(const char *args)
{
	char buf[2048];
	size_t n = strlen(args);
	assert_true(n + 1 < sizeof(buf));
	for (size_t i = 0; i < n; i++)
		buf[i] = args[i] == '|' ? '\0' : args[i];
	buf[n] = '\0';
	struct vm_config c;
	assert_int_equal(parse_vm_cmdline(buf, n + 1, &c), 0);
	return c;
}

static void expect(const char *args, enum vm_qmp_kind kind, const char *path)
{
	print_message("%s\n", args);
	struct vm_qmp q = config_of(args).qmp;
	assert_int_equal(q.kind, kind);
	assert_string_equal(q.path, path);
}

static void test_forms(void **state)
{
	(void)state;
	const char *unix_kind = "/tmp/a.sock";
	expect("qemu-system-x86_64|-qmp|unix:/tmp/a.sock,server,nowait", VM_QMP_UNIX, unix_kind);
	expect("qemu-system-x86_64|-qmp|unix:/tmp/a.sock,server=on,wait=off", VM_QMP_UNIX, unix_kind);
	expect("qemu-system-x86_64|--qmp|unix:/tmp/a.sock,server=on,wait=off", VM_QMP_UNIX, unix_kind);
	expect("qemu-system-x86_64|-qmp-pretty|unix:/tmp/a.sock,server", VM_QMP_UNIX, unix_kind);
	expect("qemu-system-x86_64|-qmp|unix:/tmp/with,,comma.sock,server=on", VM_QMP_UNIX, "/tmp/with,comma.sock");
	expect("qemu-system-x86_64|-qmp|unix:/tmp/out.sock", VM_QMP_CLIENT, "");
	expect("qemu-system-x86_64|-qmp|unix:/tmp/out.sock,server=off", VM_QMP_CLIENT, "");
	expect("qemu-system-x86_64|-qmp|tcp:127.0.0.1:4444,server,nowait", VM_QMP_TCP, "");
	expect("qemu-system-x86_64|-qmp|stdio", VM_QMP_OTHER, "");
	expect("qemu-system-x86_64|-m|1G", VM_QMP_NONE, "");
	/* -chardev + -mon, either order; the monitor must be in control mode */
	expect("kvm|-chardev|socket,id=qmp,path=/var/run/qemu-server/100.qmp,server=on,wait=off|-mon|chardev=qmp,mode=control",
	       VM_QMP_UNIX, "/var/run/qemu-server/100.qmp");
	expect("kvm|-mon|chardev=qmp,mode=control|-chardev|socket,id=qmp,path=/run/q.qmp,server,nowait", VM_QMP_UNIX, "/run/q.qmp");
	expect("kvm|-chardev|socket,id=hmp,path=/run/h.sock,server=on,wait=off|-mon|chardev=hmp,mode=readline", VM_QMP_NONE, "");
	expect("kvm|-chardev|socket,id=hmp,path=/run/h.sock,server=on,wait=off|-mon|chardev=hmp", VM_QMP_NONE, "");
	expect("kvm|-chardev|socket,id=qmp,path=/run/q.qmp,server=on", VM_QMP_NONE, ""); /* no -mon */
	expect("kvm|-monitor|unix:/run/hmp.sock,server,nowait", VM_QMP_NONE, "");          /* HMP */
	/* libvirt: the monitor is a file descriptor it passed */
	expect("qemu-system-x86_64|-chardev|socket,id=charmonitor,fd=29,server=on,wait=off|-mon|chardev=charmonitor,id=monitor,mode=control",
	       VM_QMP_FD, "");
	/* a unix socket wins over an earlier fd or stdio monitor; the first unix socket wins */
	expect("qemu-system-x86_64|-qmp|stdio|-chardev|socket,id=m1,fd=3,server=on|-mon|chardev=m1,mode=control"
	       "|-chardev|socket,id=m2,path=/run/second.qmp,server=on|-mon|chardev=m2,mode=control"
	       "|-qmp|unix:/run/third.qmp,server",
	       VM_QMP_UNIX, "/run/third.qmp");
	expect("qemu-system-x86_64|-qmp|unix:/run/first.qmp,server|-qmp|unix:/run/second.qmp,server", VM_QMP_UNIX, "/run/first.qmp");
	expect("qemu-system-x86_64|-chardev|socket,id=m,path=/run/c.qmp,server=on|-mon|chardev=m,mode=control|-qmp|stdio",
	       VM_QMP_UNIX, "/run/c.qmp");
	/* a -chardev that is not a socket */
	expect("qemu-system-x86_64|-chardev|pty,id=m|-mon|chardev=m,mode=control", VM_QMP_OTHER, "");
	/* hints: one line for every kind that cannot be used, none for a unix socket */
	assert_string_equal(vm_qmp_hint(VM_QMP_UNIX), "");
	assert_non_null(strstr(vm_qmp_hint(VM_QMP_FD), "libvirt"));
	assert_non_null(strstr(vm_qmp_hint(VM_QMP_NONE), "--qmp-socket"));
}

/* The QMP monitors of three corpus command lines. */
static void test_corpus(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		enum vm_qmp_kind kind;
		const char *path;
	} files[] = {
		{"cmdlines/proxmox-basic.args", VM_QMP_UNIX, "/var/run/qemu-server/100.qmp"},
		{"cmdlines/proxmox-no-name.args", VM_QMP_NONE, ""},
		{"cmdlines/libvirt-json-numa.args", VM_QMP_NONE, ""},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t n;
		char *cmd = fixture_cmdline(files[i].file, &n);
		struct vm_config c;
		assert_int_equal(parse_vm_cmdline(cmd, n, &c), 0);
		print_message("%s\n", files[i].file);
		assert_int_equal(c.qmp.kind, files[i].kind);
		assert_string_equal(c.qmp.path, files[i].path);
		free(cmd);
	}
}

/* "qemu-system-x86_64 -m 1G OPTION VALUE" parsed (VALUE NULL: without the option). */
static struct vm_config parse_with(const char *option, const char *value)
{
	char cmd[256];
	int n = value ? snprintf(cmd, sizeof(cmd), "qemu-system-x86_64%c-m%c1G%c%s%c%s%c", 0, 0, 0, option, 0, value, 0)
		      : snprintf(cmd, sizeof(cmd), "qemu-system-x86_64%c-m%c1G%c", 0, 0, 0);
	struct vm_config c;
	print_message("%s %s\n", option, value ? value : "(none)");
	assert_int_equal(parse_vm_cmdline(cmd, (size_t)n, &c), 0);
	return c;
}

/* -cpu: whether the guest is offered VMX/SVM (doctor's kvm-nested-unused). */
static void cpu_nested_models(void **state)
{
	(void)state;
	static const struct {
		const char *cpu; /* NULL: no -cpu */
		enum vm_nested want;
	} cases[] = {
		{NULL, VM_NESTED_NO}, {"host", VM_NESTED_YES}, {"max", VM_NESTED_YES},
		{"host,-vmx", VM_NESTED_NO}, {"Skylake-Client", VM_NESTED_UNKNOWN},
		{"Skylake-Client,vmx=on", VM_NESTED_YES}, {"qemu64,+svm", VM_NESTED_YES},
		{"Skylake-Client,-vmx", VM_NESTED_NO}, {"hostile", VM_NESTED_UNKNOWN},
		{"max,vmx=off,+vmx", VM_NESTED_YES}, {"Skylake-Client,vmx=yes", VM_NESTED_YES},
		{"host,svm=false", VM_NESTED_NO}, {"Skylake-Client,vmx", VM_NESTED_YES}, {"host,vmx=maybe", VM_NESTED_YES},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(parse_with("-cpu", cases[i].cpu).cpu_nested, cases[i].want);
}

/* -smp: the most vCPUs, from maxcpus, a whole topology, or cpus alone; 0 when QEMU's rules for
 * a partial topology would decide. */
static void smp_max_vcpus(void **state)
{
	(void)state;
	static const struct {
		const char *smp; /* NULL: no -smp */
		unsigned want;
	} cases[] = {
		{NULL, 0}, {"4", 4}, {"cpus=4", 4}, {"2,maxcpus=8", 8},
		{"2,sockets=2,cores=1,threads=1", 2}, {"1,sockets=2,dies=1,cores=2,threads=2", 8},
		{"8,sockets=2,cores=4,maxcpus=8", 8}, {"4,sockets=2", 0}, {"cores=4", 0},
		{"0", 0}, {"4x", 0}, {"-1", 0}, {"99999", 0}, {"sockets=64,cores=64,threads=2", 0},
		{"{\"cpus\":2,\"maxcpus\":6}", 6},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(parse_with("-smp", cases[i].smp).max_vcpus, cases[i].want);
}

/* An argument that starts with '-' is still its option's: -append's "-m" is no -m. */
static void dashed_arguments(void **state)
{
	(void)state;
	const char append[] = "qemu-system-x86_64\0-append\0-m\0-name\0vm1\0";
	struct vm_config c;
	assert_int_equal(parse_vm_cmdline(append, sizeof(append) - 1, &c), 0);
	assert_string_equal(c.name, "vm1");
	assert_true(c.guest_ram_bytes.known);
	assert_int_equal(c.guest_ram_bytes.v, 128ll << 20); /* no -m: QEMU's default */
	c = parse_with("-name", "-m");
	assert_string_equal(c.name, "-m");
	assert_int_equal(c.guest_ram_bytes.v, 1ll << 30);
}

/* Every on/off value as QEMU spells it (qemu_opt_bool): on, yes, true, y or a bare key; off, no,
 * false, n. memory-backend-memfd's hugetlb=yes was not huge pages before (share=yes was shared). */
static void booleans(void **state)
{
	(void)state;
	static const char *const on[] = {"=on", "=yes", "=true", "=y", ""}, *const off[] = {"=off", "=no", "=false", "=n"};
	char args[256];
	for (size_t i = 0; i < 9; i++) {
		bool yes = i < 5;
		const char *v = yes ? on[i] : off[i - 5];
		print_message("value '%s'\n", v);
		snprintf(args, sizeof(args), "qemu-system-x86_64|-object|memory-backend-memfd,id=m0,size=1G,hugetlb%s"
			 "|-machine|pc,memory-backend=m0,mem-merge%s", v, v);
		struct vm_config c = config_of(args);
		assert_int_equal(c.ram_hugetlb, yes);
		assert_true(c.ram_shared); /* memfd is shared memory whatever share= says */
		assert_int_equal(c.mem_merge_off, !yes);
		snprintf(args, sizeof(args), "qemu-system-x86_64|-object|memory-backend-ram,id=r0,size=1G,share%s"
			 "|-numa|node,memdev=r0", v);
		assert_int_equal(config_of(args).ram_shared, yes);
		if (!v[0])
			continue; /* a bare key: no form cloud-hypervisor documents */
		snprintf(args, sizeof(args), "cloud-hypervisor|--memory|size=1G,shared%s,hugepages%s", v, v);
		c = config_of(args);
		assert_int_equal(c.ram_shared, yes);
		assert_int_equal(c.ram_hugetlb, yes);
	}
	/* JSON's own true and false, as libvirt writes them. */
	struct vm_config c = config_of("qemu-system-x86_64|-object|{\"qom-type\":\"memory-backend-memfd\",\"id\":\"m0\","
				       "\"size\":1073741824,\"hugetlb\":true}|-numa|node,memdev=m0");
	assert_true(c.ram_hugetlb);
	c = config_of("qemu-system-x86_64|-object|{\"qom-type\":\"memory-backend-memfd\",\"id\":\"m0\","
		      "\"size\":1073741824,\"hugetlb\":false}|-numa|node,memdev=m0");
	assert_false(c.ram_hugetlb);
	/* A value QEMU refuses says nothing; no -machine mem-merge leaves KSM on. */
	c = config_of("qemu-system-x86_64|-machine|pc,mem-merge=maybe|-m|1G");
	assert_false(c.mem_merge_off);
}

/* The balloon and its free page reporting (off unless said: QEMU's default), in QemuOpts, in the
 * JSON libvirt writes, and as Proxmox writes it. */
static void balloon_reporting(void **state)
{
	(void)state;
	struct vm_config c = config_of("qemu-system-x86_64|-m|1G");
	assert_false(c.has_balloon);
	assert_false(c.balloon_free_page_reporting);
	c = config_of("qemu-system-x86_64|-device|virtio-balloon-pci,id=balloon0");
	assert_true(c.has_balloon);
	assert_string_equal(c.balloon_id, "balloon0");
	assert_false(c.balloon_free_page_reporting);
	c = config_of("qemu-system-x86_64|-device|virtio-balloon-pci,id=balloon0,bus=pci.0,addr=0x3,free-page-reporting=on");
	assert_true(c.balloon_free_page_reporting);
	c = config_of("qemu-system-x86_64|-device|virtio-balloon-pci,free-page-reporting=off");
	assert_true(c.has_balloon);
	assert_false(c.balloon_free_page_reporting);
	c = config_of("qemu-system-x86_64|-device|{\"driver\":\"virtio-balloon-pci\",\"id\":\"balloon0\","
		      "\"free-page-reporting\":true,\"bus\":\"pci.5\",\"addr\":\"0x0\"}");
	assert_string_equal(c.balloon_id, "balloon0");
	assert_true(c.balloon_free_page_reporting);
	/* Another device's property of that name is not the balloon's. */
	c = config_of("qemu-system-x86_64|-device|virtio-net-pci,free-page-reporting=on");
	assert_false(c.balloon_free_page_reporting);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms), cmocka_unit_test(test_corpus), cmocka_unit_test(cpu_nested_models),
		cmocka_unit_test(smp_max_vcpus), cmocka_unit_test(dashed_arguments),
		cmocka_unit_test(booleans), cmocka_unit_test(balloon_reporting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
