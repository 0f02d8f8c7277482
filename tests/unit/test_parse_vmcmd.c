/* parse/cmdline/vmcmd: the command-line corpus, where every tests/fixtures/cmdlines/NAME.args file
 * is one real-style command line (one argument per line) with its expected VMM, name, guest RAM and
 * uuid in its header; VMM detection, cut command lines, RAM sizes the fuzzer broke; and
 * parse/qemu_log, QEMU's first error in its log. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "parse/qemu_log.h"
#include "parse/cmdline/vmcmd.h"
#include "testutil.h"

static char *header(const char *text, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "# %s: ", key);
	const char *p = strstr(text, pat);
	assert_non_null(p);
	p += strlen(pat);
	size_t l = strcspn(p, "\n");
	char *v = strndup(p, l);
	assert_non_null(v);
	return v;
}

static void corpus(void **state)
{
	(void)state;
	const char *dir = getenv("VMHOST_FIXTURES");
	char path[4096];
	snprintf(path, sizeof(path), "%s/cmdlines", dir ? dir : "tests/fixtures");
	DIR *d = opendir(path);
	assert_non_null(d);
	struct dirent *de;
	int cases = 0;
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		if (nl < 6 || strcmp(de->d_name + nl - 5, ".args"))
			continue;
		char rel[512];
		snprintf(rel, sizeof(rel), "cmdlines/%s", de->d_name);
		size_t len;
		char *text = fixture(rel, &len);
		char *want_vmm = header(text, "vmm"), *want_name = header(text, "name");
		char *want_ram = header(text, "guest_ram_bytes"), *want_uuid = header(text, "uuid");
		size_t n;
		char *cmd = fixture_cmdline(rel, &n);
		struct vm_config c;
		print_message("case %s\n", de->d_name);
		assert_int_equal(parse_vm_cmdline(cmd, n, &c), 0);
		assert_string_equal(vmm_kind_name(c.vmm), want_vmm);
		assert_string_equal(c.name[0] ? c.name : "null", want_name);
		assert_string_equal(c.uuid[0] ? c.uuid : "null", want_uuid);
		if (!strcmp(want_ram, "null")) {
			assert_false(c.guest_ram_bytes.known);
		} else {
			assert_true(c.guest_ram_bytes.known);
			assert_int_equal(c.guest_ram_bytes.v, strtoll(want_ram, NULL, 10));
			/* the RAM blocks add up to guest RAM (virtio-mem's plugged part aside) */
			uint64_t sum = 0;
			for (size_t i = 0; i < c.nblocks; i++)
				sum += c.block_bytes[i];
			if (!strstr(cmd + 0, "virtio-mem") && !memmem(cmd, n, "virtio-mem", 10))
				assert_int_equal(sum, c.guest_ram_bytes.v);
		}
		free(cmd);
		free(want_vmm), free(want_name), free(want_ram), free(want_uuid);
		free(text);
		cases++;
	}
	closedir(d);
	assert_true(cases >= 25);
}

static void not_a_vm(void **state)
{
	(void)state;
	struct vm_config c;
	const char bash[] = "/bin/bash\0-c\0qemu-system-x86_64 -m 4G\0";
	assert_int_equal(parse_vm_cmdline(bash, sizeof(bash) - 1, &c), -ENOENT);
	assert_int_equal(parse_vm_cmdline("", 0, &c), -EINVAL);
	/* "kvm" must be the program, not a substring of another one */
	const char kvmstat[] = "/usr/bin/kvm_stat\0-1\0";
	assert_int_equal(parse_vm_cmdline(kvmstat, sizeof(kvmstat) - 1, &c), -ENOENT);
}

static void truncated_cmdline(void **state)
{
	(void)state;
	struct vm_config c;
	/* A cmdline cut in the middle of an argument (no final NUL) must not crash or overread. */
	const char cut[] = {'q','e','m','u','-','s','y','s','t','e','m','-','x','8','6','_','6','4',0,'-','m',0,'4','0'};
	assert_int_equal(parse_vm_cmdline(cut, sizeof(cut), &c), 0);
	assert_int_equal(c.guest_ram_bytes.v, 40ll << 20);
	const char dangling[] = "qemu-system-x86_64\0-m\0";
	assert_int_equal(parse_vm_cmdline(dangling, sizeof(dangling) - 1, &c), 0);
	assert_int_equal(c.guest_ram_bytes.v, 128ll << 20); /* -m without a value: QEMU's default */
}

/* QEMU's log when it failed to start: its first line that is no warning. */
static void qemu_log_error(void **state)
{
	(void)state;
	char buf[32];
	const char log[] = "\nqemu-system-x86_64: warning: host doesn't support requested feature\r\n"
			   "qemu-system-x86_64: -m 1T: cannot set up guest memory 'pc.ram'\nsecond\n";
	assert_int_equal(parse_qemu_log_error(log, sizeof(log) - 1, buf, sizeof(buf)), 62);
	assert_string_equal(buf, "qemu-system-x86_64: -m 1T: cann"); /* cut to fit */
	const char only_warnings[] = "a warning: x\n\n\r\n";
	assert_int_equal(parse_qemu_log_error(only_warnings, sizeof(only_warnings) - 1, buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "");
	assert_int_equal(parse_qemu_log_error("cut", 3, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "cut");
	assert_int_equal(parse_qemu_log_error("", 0, buf, sizeof(buf)), -ENOENT);
}

/* Inputs fuzz/fuzz_cmdline.c broke an invariant on (fuzz/corpus/cmdline/bug-*). */
static void ram_fuzz_regressions(void **state)
{
	(void)state;
	struct vm_config c;
	/* cloud-hypervisor: zones replace --memory's size wherever it stands. */
	const char after[] = "cloud-hypervisor\0--memory-zone\0id=mem0,size=1G\0--memory\0size=0\0";
	assert_int_equal(parse_vm_cmdline(after, sizeof(after) - 1, &c), 0);
	assert_true(c.guest_ram_bytes.known && c.guest_ram_bytes.v == 1ll << 30);
	/* ... and a zone that cannot be read makes the size unknown, whatever --memory says. */
	const char bad[] = "cloud-hypervisor\0--memory-zone\0id=mem0,size=x\0--memory\0size=1G\0";
	assert_int_equal(parse_vm_cmdline(bad, sizeof(bad) - 1, &c), 0);
	assert_false(c.guest_ram_bytes.known);
	/* A size past INT64_MAX, alone or as a sum, is unknown, never a negative number. */
	const char huge[] = "qemu-system-x86_64\0-m\08E\0";
	assert_int_equal(parse_vm_cmdline(huge, sizeof(huge) - 1, &c), 0);
	assert_false(c.guest_ram_bytes.known);
	const char sum[] = "qemu-system-x86_64\0-object\0memory-backend-ram,id=a,size=7E\0-object\0"
			   "memory-backend-ram,id=b,size=7E\0-numa\0node,memdev=a\0-numa\0node,memdev=b\0";
	assert_int_equal(parse_vm_cmdline(sum, sizeof(sum) - 1, &c), 0);
	assert_false(c.guest_ram_bytes.known);
	const char fits[] = "qemu-system-x86_64\0-m\0" "7E";
	assert_int_equal(parse_vm_cmdline(fits, sizeof(fits) - 1, &c), 0);
	assert_true(c.guest_ram_bytes.known && c.guest_ram_bytes.v == 7ll << 60);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(corpus), cmocka_unit_test(not_a_vm),
		cmocka_unit_test(truncated_cmdline),
		cmocka_unit_test(ram_fuzz_regressions), cmocka_unit_test(qemu_log_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
