/* core/kvm_host on fixture trees (intel, amd, no kvm, this machine's PVM frozen) and on this
 * machine's real /sys. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "core/kvm/kvm_host.h"
#include "testutil.h"

static void read_fixture(const char *scenario, struct kvm_host *h)
{
	const char *fx = getenv("VMHOST_FIXTURES");
	static char sys[512];
	snprintf(sys, sizeof(sys), "%s/%s/sys", fx ? fx : "tests/fixtures", scenario);
	struct io_root root = {.sys = sys};
	assert_int_equal(kvm_host_read(&root, h), 0);
}

static void test_intel(void **state)
{
	(void)state;
	struct kvm_host h;
	read_fixture("kvmhost-intel", &h);
	assert_true(h.loaded);
	assert_string_equal(h.module, "kvm_intel");
	assert_int_equal(h.vendor, KVM_VENDOR_INTEL);
	assert_true(h.device);
	assert_int_equal(h.nmodule_params, 25);
	assert_int_equal(h.nkvm_params, 23);
	assert_string_equal(kvm_host_param(&h, "ept"), "Y");
	assert_string_equal(kvm_host_param(&h, "vpid"), "Y");
	assert_string_equal(kvm_host_param(&h, "unrestricted_guest"), "Y");
	assert_string_equal(kvm_host_param(&h, "vmentry_l1d_flush"), "cond");
	assert_string_equal(kvm_host_param(&h, "ple_window_max"), "4294967295");
	assert_string_equal(kvm_host_param(&h, "halt_poll_ns"), "200000"); /* kvm's own */
	assert_null(kvm_host_param(&h, "npt"));
	/* sorted by name */
	for (size_t i = 1; i < h.nmodule_params; i++)
		assert_true(strcmp(h.module_params[i - 1].name, h.module_params[i].name) < 0);
	kvm_host_free(&h);
	kvm_host_free(&h);
}

static void test_amd_none_pvm(void **state)
{
	(void)state;
	struct kvm_host h;
	read_fixture("kvmhost-amd", &h);
	assert_string_equal(h.module, "kvm_amd");
	assert_string_equal(kvm_vendor_name(h.vendor), "amd");
	assert_string_equal(kvm_host_param(&h, "npt"), "Y");
	assert_string_equal(kvm_host_param(&h, "avic"), "N");
	assert_string_equal(kvm_host_param(&h, "nested"), "1");
	assert_null(kvm_host_param(&h, "ept"));
	kvm_host_free(&h);
	read_fixture("kvmhost-none", &h);
	assert_false(h.loaded); /* not an error */
	assert_string_equal(h.module, "");
	assert_int_equal(h.nmodule_params + h.nkvm_params, 0);
	assert_null(kvm_host_param(&h, "halt_poll_ns"));
	kvm_host_free(&h);
	read_fixture("kvmhost-pvm", &h);
	assert_true(h.loaded);
	assert_string_equal(h.module, "kvm_pvm");
	assert_int_equal(h.vendor, KVM_VENDOR_OTHER);
	assert_false(h.device); /* this machine: the module refused to bind, no /dev/kvm */
	assert_int_equal(h.nmodule_params, 11);
	assert_string_equal(kvm_host_param(&h, "pvm_native"), "Y");
	assert_string_equal(kvm_host_param(&h, "halt_poll_ns_grow"), "2");
	kvm_host_free(&h);
	struct io_root missing = {.sys = "/nonexistent/vmhost/sys"};
	assert_int_equal(kvm_host_read(&missing, &h), 0);
	assert_false(h.loaded);
}

static size_t count_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_this_machine(void **state)
{
	(void)state;
	struct kvm_host h;
	struct io_root root = {0};
	assert_int_equal(kvm_host_read(&root, &h), 0);
	struct stat st;
	assert_int_equal(h.loaded, stat("/sys/module/kvm", &st) == 0);
	assert_int_equal(h.device, stat("/sys/class/misc/kvm", &st) == 0);
	if (h.loaded) {
		print_message("this machine: module %s (%s), /dev/kvm %s\n", h.module, kvm_vendor_name(h.vendor),
			      h.device ? "registered" : "absent");
		assert_int_equal(h.nkvm_params, count_files("/sys/module/kvm/parameters"));
		char dir[128];
		snprintf(dir, sizeof(dir), "/sys/module/%s/parameters", h.module);
		if (h.vendor != KVM_VENDOR_NONE)
			assert_int_equal(h.nmodule_params, count_files(dir));
		/* every value is the file's content */
		for (size_t i = 0; i < h.nkvm_params; i++) {
			char path[256], buf[160] = "";
			snprintf(path, sizeof(path), "/sys/module/kvm/parameters/%s", h.kvm_params[i].name);
			FILE *f = fopen(path, "r");
			if (!f)
				continue;
			if (fgets(buf, sizeof(buf), f))
				buf[strcspn(buf, "\n")] = '\0';
			fclose(f);
			assert_string_equal(h.kvm_params[i].value, buf);
		}
	}
	kvm_host_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_intel), cmocka_unit_test(test_amd_none_pvm),
					   cmocka_unit_test(test_this_machine)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
