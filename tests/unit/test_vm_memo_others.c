/* The memo of the VMs and of the processes that are no VM (core/model/vm_memo.h), on a copy of
 * the serve fixture host: what discovery remembers round-trips through the file (the VMs' cgroups
 * and thread counts, the other processes with their start times and fd counts, kernel threads as
 * such), a process the memo knows is taken by its stat alone (its command line removed, it is
 * found the same; a VM's cgroup is read each time, as a VM can be moved), one whose stat says it is another process is read afresh, and
 * a memo made of a reading in memory (top's, the sampler's) does the same. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/model/vm.h"
#include "core/model/vm_memo.h"
#include "testutil.h"

static char *dir;
static char proc[1100], sys_[1100], run[1100];
static struct io_root root;

static int setup(void **state)
{
	(void)state;
	if (!(dir = tmp_tree_new("memo")))
		return -1;
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "cp -a '%s/serve' '%s/host' && mkdir -p '%s/host/proc/sys/kernel/random' '%s/run'",
		 fixtures_dir(), dir, dir, dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(proc, sizeof(proc), "%s/host/proc", dir);
	snprintf(sys_, sizeof(sys_), "%s/host/sys", dir);
	snprintf(run, sizeof(run), "%s/run", dir);
	chmod(run, 0700);
	putf("0b6a7c52-3c44-4b0e-9a0e-6f1c1c0d0a01\n", "%s/sys/kernel/random/boot_id", proc);
	root = (struct io_root){.proc = proc, .sys = sys_};
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tmp_tree_free(dir);
	return 0;
}

static const struct vm *vm_of(const struct vm_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->vms[i].pid == pid)
			return &l->vms[i];
	return NULL;
}

static const struct vm_other *other_of(const struct vm_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->nothers; i++)
		if (l->others[i].pid == pid)
			return &l->others[i];
	return NULL;
}

static void discover(struct vm_memo *memo, struct vm_list *l)
{
	assert_int_equal(vm_discover_known(&root, NULL, 0, memo, l), 0);
}

/* The fixture's VMs (10001, 10002) and its other processes: swtpm (10101), python3 (20000) and
 * the kernel thread ksmd (45). */
static void check_host(const struct vm_list *l)
{
	assert_int_equal(l->n, 2);
	assert_non_null(vm_of(l, 10001));
	assert_non_null(vm_of(l, 10002));
	assert_string_equal(vm_of(l, 10001)->cfg.name, "vm1");
	assert_string_equal(vm_of(l, 10001)->cgroup, "/machine.slice/machine-qemu\\x2d1\\x2dvm1.scope");
	assert_true(vm_of(l, 10001)->vm_scope);
	assert_int_equal(l->nothers, 3);
	assert_non_null(other_of(l, 10101));
	assert_non_null(other_of(l, 20000));
	assert_int_equal(other_of(l, 45)->fds, -1); /* a kernel thread: no fds to look at */
	assert_string_equal(other_of(l, 20000)->comm, "python3");
}

static void test_round_trip_and_known_by_stat(void **state)
{
	(void)state;
	struct vm_memo memo;
	vm_memo_load(&root, run, &memo);
	assert_int_equal(memo.n, 0);
	struct vm_list a;
	discover(&memo, &a);
	check_host(&a);
	a.vms[0].cpu.threads = 4; /* as vcpus_read leaves it */
	assert_int_equal(vm_memo_save(run, &memo, &a), 0);
	vm_memo_free(&memo);

	vm_memo_load(&root, run, &memo);
	assert_int_equal(memo.n, 2);
	assert_int_equal(memo.nothers, 3);
	const struct vm_memo_vm *was = vm_memo_find(&memo, 10001);
	assert_non_null(was);
	assert_string_equal(was->cgroup, a.vms[0].cgroup);
	assert_int_equal(was->cpu.threads, 4);
	assert_int_equal(was->vm_scope, true);
	assert_int_equal(vm_memo_find_other(&memo, 20000)->start_ticks, other_of(&a, 20000)->start_ticks);
	assert_null(vm_memo_find_other(&memo, 10001));

	/* Known by their stat: no command line read. */
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "rm '%s/10001/cmdline' '%s/20000/cmdline' '%s/45/cmdline'", proc, proc, proc);
	assert_int_equal(system(cmd), 0);
	struct vm_list b;
	discover(&memo, &b);
	check_host(&b);
	vm_memo_free(&memo);

	/* Another process under 20000's pid (its start time moved): read afresh, and with no command
	 * line left it is gone. */
	putf("20000 (python3) S 1 20000 20000 0 -1 4194304 100 0 0 0 5 3 0 0 20 0 1 0 99999 1000000 100 "
	     "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
	     "%s/20000/stat", proc);
	vm_memo_load(&root, run, &memo);
	struct vm_list c;
	discover(&memo, &c);
	assert_null(other_of(&c, 20000));
	assert_non_null(vm_of(&c, 10001));
	vm_memo_free(&memo);

	/* A reading kept in memory is a memo too. */
	struct vm_memo kept;
	assert_int_equal(vm_memo_of_list(&b, &kept), 0);
	assert_int_equal(kept.n, 2);
	assert_int_equal(kept.nothers, 3);
	struct vm_list d;
	discover(&kept, &d);
	assert_string_equal(vm_of(&d, 10001)->cgroup, vm_of(&b, 10001)->cgroup);
	assert_string_equal(vm_of(&d, 10001)->cfg.name, "vm1");
	vm_memo_free(&kept);
	vm_list_free(&a);
	vm_list_free(&b);
	vm_list_free(&c);
	vm_list_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_and_known_by_stat, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
