/* The memo of the VMs (core/model/vm_memo.c) as pss_refine uses it: what reading each VM's PSS cost
 * is kept from one run to the next for that process alone (its pid, start time and name), a run
 * that timed nothing keeps what was remembered, and the costs' file is rewritten only for news
 * (pss_cost_news), a damaged one ignored. Written to a directory of the test's own, against this
 * boot's id in /proc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/model/vm_memo.h"

static char dir[] = "/tmp/test_vm_memo.XXXXXX";
static const struct io_root root = {.proc = "/proc", .sys = "/sys"};
static char cmdline[] = "qemu-system-x86_64\0-m\0" "64";

static struct vm vm_of(pid_t pid, uint64_t start_ticks, const char *comm, struct pss_cost cost)
{
	struct vm vm = {.pid = pid, .start_ticks = start_ticks, .stat_known = true, .cmdline = cmdline,
			.cmdline_len = sizeof(cmdline), .pss_cost = cost};
	vm.cfg.vmm = VMM_QEMU;
	snprintf(vm.comm, sizeof(vm.comm), "%s", comm);
	return vm;
}

/* Saves vms over what the memo in dir says, and loads it again into *ret. */
static void save_and_load(struct vm *vms, size_t n, struct vm_memo *ret)
{
	struct vm_memo was;
	vm_memo_load(&root, dir, &was);
	if (!was.boot_id[0])
		skip(); /* no boot id here: no memo is kept */
	struct vm_list now = {.vms = vms, .n = n};
	assert_int_equal(vm_memo_save(dir, &was, &now), 0);
	vm_memo_free(&was);
	vm_memo_load(&root, dir, ret);
}

static long long costs_mtime(void)
{
	char path[64];
	snprintf(path, sizeof(path), "%s/pss", dir);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return (long long)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

static void costs_kept_for_the_same_process(void **state)
{
	(void)state;
	struct pss_cost cost = {.exact_seconds = 0.004, .exact_at = 100, .exact_merging = 1000,
				.sample_seconds = 0.001, .seconds = 0.001};
	struct vm vms[2] = {vm_of(1234, 99, "qemu-kvm", cost), vm_of(1240, 7, "qemu-kvm", (struct pss_cost){0})};
	struct vm_memo m;
	save_and_load(vms, 2, &m);
	const struct pss_cost *got = vm_memo_pss_cost(&m, &vms[0]);
	assert_non_null(got);
	assert_true(got->exact_seconds == 0.004 && got->exact_at == 100 && got->exact_merging == 1000 &&
		    got->sample_seconds == 0.001 && got->seconds == 0);
	assert_null(vm_memo_pss_cost(&m, &vms[1])); /* never timed */
	struct vm other = vm_of(1234, 98, "qemu-kvm", cost);
	assert_null(vm_memo_pss_cost(&m, &other)); /* another process under the same pid */
	other = vm_of(1234, 99, "bash", cost);
	assert_null(vm_memo_pss_cost(&m, &other)); /* the same process, another program (exec) */
	assert_null(vm_memo_pss_cost(NULL, &vms[0]));
	vm_memo_free(&m);

	/* A run that timed nothing keeps the costs; one whose costs moved a little does not rewrite. */
	vms[0].pss_cost = (struct pss_cost){0};
	save_and_load(vms, 2, &m);
	assert_non_null(got = vm_memo_pss_cost(&m, &vms[0]));
	assert_true(got->exact_seconds == 0.004);
	vm_memo_free(&m);
	long long before = costs_mtime();
	usleep(20000);
	vms[0].pss_cost = (struct pss_cost){.exact_seconds = 0.0045, .exact_at = 150, .exact_merging = 1010,
					    .sample_seconds = 0.001};
	save_and_load(vms, 2, &m);
	assert_true(costs_mtime() == before);
	assert_true(vm_memo_pss_cost(&m, &vms[0])->exact_seconds == 0.004);
	vm_memo_free(&m);

	/* News is written. */
	vms[0].pss_cost.exact_seconds = 0.009;
	save_and_load(vms, 2, &m);
	assert_true(vm_memo_pss_cost(&m, &vms[0])->exact_seconds == 0.009);
	vm_memo_free(&m);

	/* A damaged costs' file is no memo of costs; the VMs' own memo still is one. */
	char path[64];
	snprintf(path, sizeof(path), "%s/pss", dir);
	assert_int_equal(truncate(path, 60), 0);
	vm_memo_load(&root, dir, &m);
	assert_null(vm_memo_pss_cost(&m, &vms[0]));
	assert_int_equal(m.n, 2);
	vm_memo_free(&m);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(costs_kept_for_the_same_process),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	char path[64];
	snprintf(path, sizeof(path), "%s/vms", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/pss", dir);
	unlink(path);
	rmdir(dir);
	return r;
}
