/* io/peer/virt: the libvirt connection with a deadline per call, on libvirt's own test driver
 * (test:///default: in-process, one domain "test", hypervisor version 0.0.2, no libvirtd): an
 * answer within the deadline; the hypervisor's version asked only after the first answer is
 * handed over and out of its deadline (a fresh libvirtd probes QEMU for seconds to give it,
 * docs/exits.md), so the first answer carries 0 (not known) and a later one the version; a URI
 * that names no hypervisor costs a one-line reason. Skipped where libvirt.so.0 cannot be loaded
 * and in an AddressSanitizer build (which does not use libvirt). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "io/peer/virt.h"

/* A connection to uri with a 2 s deadline. */
static struct virt *connect_to(const char *uri)
{
	struct virt *v = NULL;
	assert_int_equal(virt_new(uri, 2000, &v), 0);
	return v;
}

/* The statistics of uri's domains, or the test skipped when libvirt cannot be used (v freed then:
 * skip() does not return). */
static int ask(struct virt *v, struct virt_domains *d, char *why, size_t cap)
{
	int r = virt_domain_stats(v, VIRT_STATS_VM | VIRT_STATS_VCPU, d, why, cap);
	if (r == -ELIBACC) {
		print_message("libvirt not usable here: %s\n", why);
		virt_free(v);
		skip();
	}
	return r;
}

static void test_version_after_the_answer(void **state)
{
	(void)state;
	struct virt *v = connect_to("test:///default");
	struct virt_domains d = {0};
	char why[256] = "";
	int r = ask(v, &d, why, sizeof(why));
	if (r < 0)
		virt_free(v);
	assert_int_equal(r, 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].name, "test");
	assert_non_null(virt_domain_find(&d, d.v[0].uuid));
	/* asked once the first answer was handed over, never within it */
	assert_int_equal(d.hypervisor_version, 0);
	virt_domains_free(&d);
	unsigned long version = 0;
	for (int i = 0; i < 200 && !version; i++) {
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
		assert_int_equal(ask(v, &d, why, sizeof(why)), 0);
		version = d.hypervisor_version;
		virt_domains_free(&d);
	}
	assert_int_equal(version, 2); /* the test driver's 0.0.2 */
	virt_free(v);
}

static void test_no_hypervisor(void **state)
{
	(void)state;
	struct virt *v = connect_to("qemu:///nonexistent");
	char why[256] = "";
	assert_int_equal(ask(v, &(struct virt_domains){0}, why, sizeof(why)), -ECONNREFUSED);
	assert_non_null(strstr(why, "libvirt qemu:///nonexistent: cannot connect: "));
	assert_null(strchr(why, '\n'));
	virt_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_after_the_answer),
		cmocka_unit_test(test_no_hypervisor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
