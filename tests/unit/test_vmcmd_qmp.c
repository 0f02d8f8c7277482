/* parse/cmdline/vmcmd: the QMP socket on a VM's command line (-qmp, -chardev + -mon mode=control). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "parse/cmdline/vmcmd.h"
#include "testutil.h"

/* Parses a command line given as one string with arguments separated by '|'. */
static struct vm_qmp qmp_of(const char *args)
{
	char buf[2048];
	size_t n = strlen(args);
	assert_true(n + 1 < sizeof(buf));
	for (size_t i = 0; i < n; i++)
		buf[i] = args[i] == '|' ? '\0' : args[i];
	buf[n] = '\0';
	struct vm_config c;
	assert_int_equal(parse_vm_cmdline(buf, n + 1, &c), 0);
	return c.qmp;
}

static void expect(const char *args, enum vm_qmp_kind kind, const char *path)
{
	print_message("%s\n", args);
	struct vm_qmp q = qmp_of(args);
	assert_string_equal(vm_qmp_kind_name(q.kind), vm_qmp_kind_name(kind));
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

/* The corpus: files with a "# qmp: KIND [PATH]" header say what they hold. */
static void test_corpus(void **state)
{
	(void)state;
	static const char *const files[][3] = {
		{"cmdlines/proxmox-basic.args", "unix", "/var/run/qemu-server/100.qmp"},
		{"cmdlines/proxmox-no-name.args", "none", ""},
		{"cmdlines/libvirt-json-numa.args", "none", ""},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t n;
		char *cmd = fixture_cmdline(files[i][0], &n);
		struct vm_config c;
		assert_int_equal(parse_vm_cmdline(cmd, n, &c), 0);
		print_message("%s\n", files[i][0]);
		assert_string_equal(vm_qmp_kind_name(c.qmp.kind), files[i][1]);
		assert_string_equal(c.qmp.path, files[i][2]);
		free(cmd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_forms), cmocka_unit_test(test_corpus)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
