/* Discovery and measurement shared out between threads (core/model/vm_discover.c and
 * vm_measure.c, on core/base/parallel.c): 200 copies of one fixture VM, enough for every round to
 * run on several threads, are each found, named and measured alike. Also run under
 * ThreadSanitizer (label tsan). */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/model/host.h"
#include "core/model/vm.h"
#include "testutil.h"

enum { COPIES = 200, FIRST_PID = 30000 };

static char dir[64], proc[128], sys[128];

static int setup(void **state)
{
	(void)state;
	const char *f = fixtures_dir();
	if (tmp_tree_make(dir, sizeof(dir), "parallel") < 0)
		return -1;
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	/* VM 10001 of the serve fixture, copied as pids 30000.. named g0.., its stat's pid with it, each
	 * in a scope of its own (10001's holds a helper, swtpm). */
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "cp -r '%s/serve/proc' '%s/serve/sys' '%s' && cd '%s' && for i in $(seq 0 %d); do p=$((%d + i)); "
		 "cp -r 10001 $p && sed -i -e \"s/^10001 /$p /\" -e \"s/guest=vm1,/guest=g$i,/\" -e \"s/x2dvm1.scope/x2dg$i.scope/\" "
		 "$p/stat $p/cmdline $p/cgroup || exit 1; done",
		 f, f, dir, proc, COPIES - 1, FIRST_PID);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return tmp_tree_remove(dir);
}

static const struct vm *by_pid(const struct vm_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->vms[i].pid == pid)
			return &l->vms[i];
	return NULL;
}

static void same_figures(const struct vm *a, const struct vm *b)
{
	assert_int_equal(a->mem.rss.known, b->mem.rss.known);
	assert_int_equal(a->mem.rss.v, b->mem.rss.v);
	assert_int_equal(a->mem.ksm_merging_pages.v, b->mem.ksm_merging_pages.v);
	assert_int_equal(a->pss_bytes.known, b->pss_bytes.known);
	assert_int_equal(a->pss_bytes.v, b->pss_bytes.v);
	assert_int_equal(a->overhead_bytes.v, b->overhead_bytes.v);
	assert_int_equal(a->cpu_ticks, b->cpu_ticks);
	assert_int_equal(a->cfg.guest_ram_bytes.v, b->cfg.guest_ram_bytes.v);
}

static void every_copy_found_and_measured(void **state)
{
	(void)state;
	struct io_root root = {.proc = proc, .sys = sys};
	struct host host;
	assert_int_equal(host_read(&root, &host), 0);
	struct vm_list l;
	assert_int_equal(vm_discover(&root, NULL, 0, &l), 0);
	assert_int_equal(vm_measure_all(&root, &host, &l, NULL, 0), 0);
	const struct vm *model = by_pid(&l, FIRST_PID);
	assert_non_null(model);
	assert_true(model->mem.rss.known && model->pss_bytes.known);
	for (int i = 0; i < COPIES; i++) {
		const struct vm *v = by_pid(&l, FIRST_PID + i);
		assert_non_null(v);
		char name[16];
		snprintf(name, sizeof(name), "g%d", i);
		assert_string_equal(v->cfg.name, name);
		same_figures(v, model);
	}
	for (size_t i = 1; i < l.n; i++)
		assert_true(l.vms[i - 1].pid < l.vms[i].pid); /* in pid order, whichever thread found each */
	vm_list_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_copy_found_and_measured),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
