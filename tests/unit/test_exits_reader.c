/* core/kvm: the debugfs reader on the checked-in fixture trees and on trees changed between reads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/kvm/kvm.h"
#include "core/kvm/kvm_watch.h"
#include "testutil.h"

static const struct kvm_vm_sample *by_pid(const struct kvm_sample *s, pid_t pid)
{
	for (size_t i = 0; i < s->nvms; i++)
		if (s->vms[i].pid == pid)
			return &s->vms[i];
	return NULL;
}

static void test_intel_fixture(void **state)
{
	(void)state;
	char proc[PATH_MAX], sys[PATH_MAX];
	struct io_root root = fixture_root("exits-intel", proc, sys, sizeof(proc));
	struct kvm_reader *r;
	enum kvm_avail why;
	assert_int_equal(kvm_reader_open(&root, &r, &why), 0);
	assert_int_equal(why, KVM_AVAILABLE);
	/* 15 VM + 45 vCPU stats of a 6.x x86 kernel, minus the three histograms. */
	assert_int_equal(kvm_reader_ncounters(r), 57);
	assert_true(kvm_counter_index(r, "exits") >= 0);
	assert_true(kvm_counter_index(r, "halt_wait_hist") < 0);
	assert_true(kvm_counter_index(r, "mmu_rmaps_stat") < 0);
	int exits = kvm_counter_index(r, "exits");
	assert_int_equal(kvm_counter_kind(r, (size_t)kvm_counter_index(r, "halt_wait_ns")), KVM_STAT_TIME_NS);

	struct kvm_sample s;
	assert_int_equal(kvm_reader_sample(r, &s), 0);
	assert_int_equal(s.nvms, 4);
	assert_int_equal(s.vanished, 0);
	/* Named by exact pid: 1234 is web1, 12345 is db1 (not a substring match). */
	const struct kvm_vm_sample *web1 = by_pid(&s, 1234), *db1 = by_pid(&s, 12345), *build = by_pid(&s, 20001),
				   *orphan = by_pid(&s, 4242);
	assert_non_null(web1);
	assert_non_null(db1);
	assert_non_null(build);
	assert_non_null(orphan);
	assert_string_equal(web1->name, "web1");
	assert_string_equal(db1->name, "db1");
	assert_string_equal(build->name, "build");
	assert_string_equal(orphan->name, ""); /* no such process: unnamed, still counted */
	assert_string_equal(web1->dir, "1234-12");
	assert_int_equal(web1->kvm_fd, 12);
	assert_int_equal(web1->vcpus, 4);
	assert_int_equal(build->vcpus, 8);
	assert_int_equal(orphan->vcpus, -1);
	assert_true(web1->values[exits].known);
	assert_int_equal(web1->values[exits].v, 10012345);
	/* The global file is the kernel's sum over VMs. */
	int64_t sum = 0;
	for (size_t i = 0; i < s.nvms; i++)
		sum += s.vms[i].values[exits].v;
	assert_int_equal(s.total[exits].v, sum);
	kvm_sample_free(&s);
	kvm_reader_close(r);
}

static void test_amd_fixture(void **state)
{
	(void)state;
	char proc[PATH_MAX], sys[PATH_MAX];
	struct io_root root = fixture_root("exits-amd", proc, sys, sizeof(proc));
	struct kvm_reader *r;
	enum kvm_avail why;
	assert_int_equal(kvm_reader_open(&root, &r, &why), 0);
	struct kvm_sample s;
	assert_int_equal(kvm_reader_sample(r, &s), 0);
	assert_int_equal(s.nvms, 2);
	assert_string_equal(by_pid(&s, 3101)->name, "mail");
	assert_string_equal(by_pid(&s, 3202)->name, "ci-runner");
	assert_int_equal(by_pid(&s, 3202)->vcpus, 16);
	int l1d = kvm_counter_index(r, "l1d_flush");
	assert_true(s.total[l1d].known);
	assert_int_equal(s.total[l1d].v, 0); /* an Intel-only mitigation: a known zero on AMD */
	kvm_sample_free(&s);
	kvm_reader_close(r);
}

static void test_unavailable(void **state)
{
	(void)state;
	char proc[PATH_MAX], sys[PATH_MAX];
	struct kvm_reader *r = NULL;
	enum kvm_avail why;
	struct io_root root = fixture_root("exits-nodebugfs", proc, sys, sizeof(proc));
	assert_int_equal(kvm_reader_open(&root, &r, &why), -ENOENT);
	assert_int_equal(why, KVM_NO_DEBUGFS);
	assert_non_null(strstr(kvm_avail_hint(why), "mount -t debugfs none /sys/kernel/debug"));
	root = fixture_root("exits-nokvm", proc, sys, sizeof(proc));
	assert_int_equal(kvm_reader_open(&root, &r, &why), -ENOENT);
	assert_int_equal(why, KVM_NO_KVM);
	root = fixture_root("does-not-exist", proc, sys, sizeof(proc));
	assert_int_equal(kvm_reader_open(&root, &r, &why), -ENOENT);
	assert_int_equal(why, KVM_NO_DEBUGFS);
	/* KVM loaded, no VM: a reader with counters and no VMs. */
	root = fixture_root("exits-novm", proc, sys, sizeof(proc));
	assert_int_equal(kvm_reader_open(&root, &r, &why), 0);
	struct kvm_sample s;
	assert_int_equal(kvm_reader_sample(r, &s), 0);
	assert_int_equal(s.nvms, 0);
	assert_int_equal(s.total[kvm_counter_index(r, "exits")].v, 0);
	kvm_sample_free(&s);
	kvm_reader_close(r);
}

/* ---- a tree of our own, changed between reads ---- */

struct tree {
	char dir[64];
	char proc[PATH_MAX], sys[PATH_MAX], kvm[PATH_MAX];
};

static void add_vm(struct tree *t, const char *dir, const char *exits)
{
	mkdirf("%s/%s", t->kvm, dir);
	mkdirf("%s/%s/vcpu0", t->kvm, dir);
	putf(exits, "%s/%s/exits", t->kvm, dir);
	putf("1000\n", "%s/%s/halt_wait_ns", t->kvm, dir);
}

static void tree_new(struct tree *t, bool globals)
{
	assert_int_equal(tmp_tree_make(t->dir, sizeof(t->dir), "exits"), 0);
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->dir);
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->dir);
	snprintf(t->kvm, sizeof(t->kvm), "%s/sys/kernel/debug/kvm", t->dir);
	mkdirf("%s", t->proc);
	mkdirf("%s", t->sys);
	mkdirf("%s/kernel", t->sys);
	mkdirf("%s/kernel/debug", t->sys);
	mkdirf("%s", t->kvm);
	if (globals) {
		putf("0\n", "%s/exits", t->kvm);
		putf("0\n", "%s/halt_wait_ns", t->kvm);
	}
}

static void tree_free(struct tree *t)
{
	assert_int_equal(tmp_tree_remove(t->dir), 0);
}

static void test_changes_between_reads(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t, true);
	add_vm(&t, "100-10", "500\n");
	add_vm(&t, "200-11", "900\n");
	struct io_root root = {.proc = t.proc, .sys = t.sys};
	struct kvm_reader *r;
	enum kvm_avail why;
	assert_int_equal(kvm_reader_open(&root, &r, &why), 0);
	assert_int_equal(kvm_reader_ncounters(r), 2);
	int exits = kvm_counter_index(r, "exits");
	struct kvm_sample a, b;
	assert_int_equal(kvm_reader_sample(r, &a), 0);
	assert_int_equal(a.nvms, 2);
	assert_string_equal(a.vms[0].name, ""); /* no /proc entry: unnamed */

	/* Rewritten in place (as the kernel's files are), one VM gone, one new, one reset. */
	putf("800\n", "%s/100-10/exits", t.kvm);
	char gone[PATH_MAX + 8];
	snprintf(gone, sizeof(gone), "%s/200-11", t.kvm);
	assert_int_equal(tmp_tree_remove(gone), 0);
	add_vm(&t, "300-12", "7\n");
	assert_int_equal(kvm_reader_sample(r, &b), 0);
	assert_int_equal(b.nvms, 2);
	assert_null(kvm_sample_find(&b, "200-11"));
	const struct kvm_vm_sample *v100 = kvm_sample_find(&b, "100-10"), *v300 = kvm_sample_find(&b, "300-12");
	assert_non_null(v100);
	assert_non_null(v300);
	assert_int_equal(v100->values[exits].v, 800);
	assert_int_equal(v300->values[exits].v, 7);
	assert_int_equal(v300->vcpus, 1);
	struct kvm_change c = kvm_change(KVM_STAT_EVENTS, kvm_sample_find(&a, "100-10")->values[exits],
					 v100->values[exits], 1.0, false);
	assert_int_equal(c.delta.v, 300);
	kvm_sample_free(&a);

	putf("3\n", "%s/100-10/exits", t.kvm);
	assert_int_equal(kvm_reader_sample(r, &a), 0);
	c = kvm_change(KVM_STAT_EVENTS, v100->values[exits], kvm_sample_find(&a, "100-10")->values[exits], 1.0, false);
	assert_true(c.reset);
	/* A file cut short reads as unknown, not as a number. */
	putf("12", "%s/300-12/exits", t.kvm);
	kvm_sample_free(&b);
	assert_int_equal(kvm_reader_sample(r, &b), 0);
	assert_false(kvm_sample_find(&b, "300-12")->values[exits].known);
	kvm_sample_free(&a);
	kvm_sample_free(&b);

	/* The kvm directory itself going away (module unloaded) is an error, not a crash. */
	assert_int_equal(tmp_tree_remove(t.kvm), 0);
	assert_int_equal(kvm_reader_sample(r, &a), -ENOENT);
	kvm_reader_close(r);
	tree_free(&t);
}

static void test_names_from_discovery(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t, true);
	/* A QEMU process 4321 and a plain process 43210: only the exact pid names the VM. */
	mkdirf("%s/4321", t.proc);
	static const char qemu[] = "qemu-system-x86_64\0-name\0guest=alpha,debug-threads=on\0-m\0001024\0";
	FILE *f = fopen(strcat(strcpy((char[PATH_MAX]){0}, t.proc), "/4321/cmdline"), "w");
	assert_non_null(f);
	fwrite(qemu, 1, sizeof(qemu) - 1, f);
	fclose(f);
	putf("4321 (qemu-system-x86) S 1 4321 4321 0 -1 0 0 0 0 0 5 5 0 0 20 0 3 0 777 0 0\n", "%s/4321/stat", t.proc);
	putf("0::/system.slice/qemu.service\n", "%s/4321/cgroup", t.proc);
	putf("Name:\tqemu\nVmRSS:\t1000 kB\n", "%s/4321/status", t.proc);
	add_vm(&t, "43210-5", "1\n");
	struct io_root root = {.proc = t.proc, .sys = t.sys};
	struct kvm_reader *r;
	enum kvm_avail why;
	assert_int_equal(kvm_reader_open(&root, &r, &why), 0);
	struct kvm_sample s;
	assert_int_equal(kvm_reader_sample(r, &s), 0);
	assert_string_equal(s.vms[0].name, "");
	kvm_sample_free(&s);
	add_vm(&t, "4321-9", "2\n"); /* appears later: named when it appears */
	assert_int_equal(kvm_reader_sample(r, &s), 0);
	assert_int_equal(s.nvms, 2);
	assert_string_equal(kvm_sample_find(&s, "4321-9")->name, "alpha");
	assert_int_equal(kvm_sample_find(&s, "4321-9")->start_ticks, 777);
	assert_string_equal(kvm_sample_find(&s, "43210-5")->name, "");
	kvm_sample_free(&s);
	kvm_reader_close(r);
	tree_free(&t);
}

static void test_counters_from_first_vm(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t, false); /* an empty kvm directory */
	struct io_root root = {.proc = t.proc, .sys = t.sys};
	struct kvm_reader *r;
	enum kvm_avail why;
	assert_int_equal(kvm_reader_open(&root, &r, &why), 0);
	assert_int_equal(kvm_reader_ncounters(r), 0);
	struct kvm_sample s;
	assert_int_equal(kvm_reader_sample(r, &s), 0);
	assert_int_equal(s.nvms, 0);
	kvm_sample_free(&s);
	add_vm(&t, "55-3", "99\n");
	assert_int_equal(kvm_reader_sample(r, &s), 0);
	assert_int_equal(kvm_reader_ncounters(r), 2);
	assert_int_equal(s.nvms, 1);
	assert_int_equal(s.vms[0].values[kvm_counter_index(r, "exits")].v, 99);
	assert_false(s.total[0].known); /* no global files: unknown, not zero */
	kvm_sample_free(&s);
	kvm_reader_close(r);
	tree_free(&t);
}

/* The reader as nobody (root reads every file whatever its mode), in a child: the unavailable
 * text of the VM dir, or "(absent)", into buf. */
static void read_as_nobody(const struct tree *t, const char *dir, char *buf, size_t cap)
{
	int fd;
	pid_t pid = fork_piped(&fd);
	if (pid == 0) {
		if (geteuid() == 0 && (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0))
			_exit(3);
		struct io_root root = {.proc = t->proc, .sys = t->sys};
		struct kvm_reader *r;
		enum kvm_avail why;
		struct kvm_sample s;
		if (kvm_reader_open(&root, &r, &why) < 0 || kvm_reader_sample(r, &s) < 0)
			_exit(4);
		const struct kvm_vm_sample *v = kvm_sample_find(&s, dir);
		dprintf(fd, "%u %s", s.vanished, v ? v->unavailable : "(absent)");
		_exit(0);
	}
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	buf[n > 0 ? n : 0] = '\0';
}

/* A VM whose files were partly denied vanishes while read (its exits file reads as a vanished
 * VM's does: an error that is no denial, here EISDIR); the next VM takes its slot in the sample
 * and must not inherit its reason. */
static void test_vanished_slot_reused(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t, true);
	assert_int_equal(chmod(t.dir, 0755), 0);
	mkdirf("%s/100-1", t.kvm);
	mkdirf("%s/100-1/exits", t.kvm);
	putf("5\n", "%s/100-1/halt_wait_ns", t.kvm);
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/100-1/halt_wait_ns", t.kvm);
	assert_int_equal(chmod(path, 0), 0);
	add_vm(&t, "200-2", "7\n");
	char got[512];
	read_as_nobody(&t, "200-2", got, sizeof(got));
	assert_string_equal(got, "1 "); /* 100-1 vanished; 200-2 read whole, with no reason */
	tree_free(&t);
}

/* exits' selection (core/kvm/kvm_watch.h): the reader opened for it, VMs by name or pid, counters
 * by a regular expression, in what changed between two reads. */
static void test_watch_selection(void **state)
{
	(void)state;
	char proc[PATH_MAX], sys[PATH_MAX], qmp_why[256];
	struct io_root root = fixture_root("exits-intel", proc, sys, sizeof(proc));
	regex_t fields;
	assert_int_equal(regcomp(&fields, "^exits$", REG_EXTENDED | REG_NOSUB), 0);
	const char *names[] = {"db1"};
	pid_t pids[] = {4242};
	struct kvm_watch w = {.vm_names = names, .nvm_names = 1, .pids = pids, .npids = 1, .fields = &fields,
			      .pace_seconds = -1, .probe = true};
	struct kvm_reader *r = NULL;
	enum kvm_avail why;
	assert_int_equal(kvm_watch_open(&root, &w, &r, &why, qmp_why, sizeof(qmp_why)), 0);
	struct kvm_sample a, b;
	assert_int_equal(kvm_reader_sample(r, &a), 0);
	assert_int_equal(kvm_reader_sample(r, &b), 0);
	assert_true(kvm_watch_selects(&w, by_pid(&b, 12345)));  /* db1, by name */
	assert_true(kvm_watch_selects(&w, by_pid(&b, 4242)));   /* by pid */
	assert_false(kvm_watch_selects(&w, by_pid(&b, 1234))); /* web1 */
	struct kvm_delta d;
	assert_int_equal(kvm_watch_delta(r, &w, &a, &b, &d), 0);
	assert_int_equal(d.nvms, 2);
	assert_int_equal(d.nsel, 1);
	assert_string_equal(kvm_counter_name(r, d.sel[0]), "exits");
	kvm_delta_free(&d);
	kvm_sample_free(&a);
	kvm_sample_free(&b);
	kvm_reader_close(r);
	regfree(&fields);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intel_fixture),
		cmocka_unit_test(test_amd_fixture),
		cmocka_unit_test(test_unavailable),
		cmocka_unit_test(test_changes_between_reads),
		cmocka_unit_test(test_names_from_discovery),
		cmocka_unit_test(test_counters_from_first_vm),
		cmocka_unit_test(test_vanished_slot_reused),
		cmocka_unit_test(test_watch_selection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
