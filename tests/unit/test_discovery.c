/* Discovery and measurement on a frozen host tree (tests/fixtures/host-mixed): a libvirt guest
 * with swtpm in its scope, a Proxmox guest, a guest that vanished, an older-kernel guest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/sample/calibrate.h"
#include "core/model/vm.h"
#include "testutil.h"

static struct io_root root;
static char proc[4096], sys[4096];

/* malloc fails on demand (linked with --wrap=malloc): the countdown-th call from now fails. While
 * a countdown runs, a fresh block holds 0x02 bytes, as garbage may: 2 is what discovery's first
 * round marks a VM with, the worst garbage for a cleanup that reads what it never wrote. */
void *__real_malloc(size_t n);
static long malloc_countdown = -1; /* -1: none; one thread discovers these few processes */
void *__wrap_malloc(size_t n)
{
	if (malloc_countdown < 0)
		return __real_malloc(n);
	if (malloc_countdown-- == 0)
		return NULL;
	void *p = __real_malloc(n);
	if (p)
		memset(p, 0x02, n);
	return p;
}

static int setup(void **state)
{
	(void)state;
	root = fixture_root("host-mixed", proc, sys, sizeof(proc));
	return 0;
}

static const struct vm *find(const struct vm_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->vms[i].pid == pid)
			return &l->vms[i];
	return NULL;
}

static void discovers_vms_and_helpers(void **state)
{
	(void)state;
	struct vm_list l;
	assert_int_equal(vm_discover(&root, NULL, 0, &l), 0);
	assert_int_equal(l.n, 3); /* 1001, 1003, 1005; 1004 vanished */
	assert_int_equal(l.skipped, 1);
	const struct vm *web1 = find(&l, 1001), *db = find(&l, 1003), *old = find(&l, 1005);
	assert_non_null(web1), assert_non_null(db), assert_non_null(old);
	assert_string_equal(web1->cfg.name, "web1");
	assert_string_equal(web1->cfg.uuid, "11111111-2222-3333-4444-555555555555");
	assert_string_equal(web1->cgroup, "/machine.slice/machine-qemu\\x2d1\\x2dweb1.scope");
	assert_int_equal(web1->nhelpers, 1);
	assert_int_equal(web1->helpers[0], 1002);
	assert_int_equal(web1->start_ticks, 5000);
	assert_string_equal(db->cfg.name, "db");
	assert_string_equal(db->cfg.uuid, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
	assert_string_equal(db->cgroup, "/qemu.slice/100.scope");
	assert_int_equal(db->cfg.guest_ram_bytes.v, 4ll << 30);
	assert_int_equal(old->nhelpers, 0); /* user.slice is not a per-VM scope: bash is not a helper */
	vm_list_free(&l);
}

static void extra_pids(void **state)
{
	(void)state;
	struct vm_list l;
	pid_t extra[] = {1006, 4242}; /* bash, and a pid that does not exist */
	assert_int_equal(vm_discover(&root, extra, 2, &l), 0);
	assert_int_equal(l.n, 4);
	const struct vm *bash = find(&l, 1006);
	assert_non_null(bash);
	assert_int_equal(bash->cfg.vmm, VMM_PROCESS);
	assert_false(bash->cfg.guest_ram_bytes.known);
	assert_int_equal(l.skipped, 2); /* 1004 vanished, 4242 never existed */
	vm_list_free(&l);
}

static void measures(void **state)
{
	(void)state;
	struct host host;
	assert_int_equal(host_read(&root, &host), 0);
	assert_true(host.ksm.present);
	assert_string_equal(host.ksm.advisor_mode, "none");
	struct vm_list l;
	assert_int_equal(vm_discover(&root, NULL, 0, &l), 0);
	assert_int_equal(vm_measure_all(&root, &host, &l, NULL, 0), 0);
	const struct vm *web1 = find(&l, 1001), *old = find(&l, 1005);
	const int64_t P = host.page_size_bytes;
	/* web1 + swtpm */
	assert_int_equal(web1->mem.rss_anon.v, (2097152 + 180000 + 3000) * 1024ll);
	assert_int_equal(web1->mem.ksm_merging_pages.v, 200000);
	double w = 50000.0 / (50000 + 151000);
	int64_t rss = (2097152 + 180000 + 30000 + 3000 + 5000) * 1024ll;
	assert_true(llabs(web1->pss_bytes.v - (rss - (int64_t)(200000 * P * (1 - w)))) <= 1);
	assert_int_equal(web1->pss_method, METHOD_ESTIMATE);
	/* overhead: anon beyond 2 GiB (+1000 KSM zero pages that left RSS) plus file */
	assert_int_equal(web1->overhead_bytes.v, (180000 + 3000) * 1024ll + 1000 * P + (30000 + 5000) * 1024ll);
	/* older kernel: merging pages from /proc/PID/ksm_merging_pages, no ksm_stat */
	assert_int_equal(old->mem.ksm_merging_pages.v, 1000);
	assert_false(old->mem.ksm_zero_pages.known);
	assert_false(old->mem.ksm_profit.known);
	vm_list_free(&l);
}

/* The fixture's VMs measured; VM 1005, the one with a readable smaps_rollup and no helpers. */
static const struct vm *measured_fixture(struct host *host, struct vm_list *l)
{
	assert_int_equal(host_read(&root, host), 0);
	assert_int_equal(vm_discover(&root, NULL, 0, l), 0);
	vm_measure_all(&root, host, l, NULL, 0);
	return find(l, 1005);
}

/* VM 1005's exact PSS (its smaps_rollup), in KiB. */
static const int64_t exact_1005_kb = (1048576 + 50000 - 4000) + 1000 + 25000 / 2;

/* Amortized exact PSS: the one VM with a readable smaps_rollup (no helpers) is calibrated, and
 * its estimate then reproduces the exact PSS from counters alone. */
static void calibration_cache(void **state)
{
	(void)state;
	struct host host;
	struct vm_list l;
	const struct vm *old = measured_fixture(&host, &l);
	int64_t before = old->pss_bytes.v;
	struct calib_cache *c = calib_new();
	assert_non_null(c);
	/* budget 0: still one VM per call; the oldest-first order reaches every VM in turn */
	int reads = 0;
	for (int i = 0; i < 3; i++)
		reads += calib_apply(c, &root, &host, &l, 0);
	assert_int_equal(reads, 3); /* 1003 (no smaps_rollup) and 1005; 1001 has a helper */
	assert_true(llabs(old->pss_bytes.v - exact_1005_kb * 1024) <= 4096);
	assert_true(old->pss_bytes.v != before);
	/* the next sample's fresh estimate goes through the cache again */
	vm_measure_all(&root, &host, &l, NULL, 0);
	calib_apply(c, &root, &host, &l, 0);
	assert_true(llabs(find(&l, 1005)->pss_bytes.v - exact_1005_kb * 1024) <= 4096);
	calib_free(c);
	vm_list_free(&l);
}

/* More VMs than the cache first makes room for (32), new in one sample: each is calibrated with
 * its own entry (the entries once moved under pointers taken before: serve crashed with more than 32 VMs).
 * 100 records of VM 1005 under start times of their own, each a VM to the cache. */
static void calibration_cache_many(void **state)
{
	(void)state;
	struct host host;
	struct vm_list l;
	const struct vm *old = measured_fixture(&host, &l);
	enum { N = 100 };
	struct vm_list many = {.vms = calloc(N, sizeof(struct vm)), .n = N};
	assert_non_null(many.vms);
	for (size_t i = 0; i < N; i++)
		many.vms[i] = (struct vm){.pid = old->pid, .start_ticks = 1 + i, .cfg = old->cfg, .mem = old->mem,
					  .pss_bytes = old->pss_bytes, .pss_method = METHOD_ESTIMATE};
	struct calib_cache *c = calib_new();
	assert_non_null(c);
	assert_int_equal(calib_apply(c, &root, &host, &many, 60), N);
	for (size_t i = 0; i < N; i++)
		assert_true(llabs(many.vms[i].pss_bytes.v - exact_1005_kb * 1024) <= 4096);
	/* the next sample: every VM known, none new, one read (budget 0) */
	assert_int_equal(calib_apply(c, &root, &host, &many, 0), 1);
	calib_free(c);
	free(many.vms);
	vm_list_free(&l);
}

/* A file we may not read is a figure we do not know, not a failed measurement: vm_measure
 * returns 0 and counts it (run as nobody on a copy with one VM's ksm_stat unreadable). */
struct measured {
	int rc;
	unsigned denied;
	bool rss_known;
};

static int measure_as_nobody(const struct io_root *r, pid_t pid, unsigned *ret_denied, bool *ret_rss_known)
{
	struct host host;
	struct vm_list l;
	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
		return -errno;
	if (host_read(r, &host) < 0 || vm_discover(r, NULL, 0, &l) < 0)
		return -EIO;
	int rc = -ENOENT;
	for (size_t i = 0; i < l.n; i++)
		if (l.vms[i].pid == pid) {
			rc = vm_measure(r, &host, &l.vms[i], NULL, 0);
			*ret_denied = l.vms[i].denied_files;
			*ret_rss_known = l.vms[i].mem.rss.known;
		}
	vm_list_free(&l);
	return rc;
}

static void denied_files_are_counted(void **state)
{
	(void)state;
	char *tmp = tmp_tree_new("denied"), cmd[8192], p[4200], s[4200];
	snprintf(cmd, sizeof(cmd), "cp -a '%s/..' '%s/host' && chmod 755 '%s' && chmod 000 '%s/host/proc/1003/ksm_stat'",
		 proc, tmp, tmp, tmp);
	assert_int_equal(system(cmd), 0);
	snprintf(p, sizeof(p), "%s/host/proc", tmp);
	snprintf(s, sizeof(s), "%s/host/sys", tmp);
	struct io_root r = {.proc = p, .sys = s};
	int pipefd[2];
	assert_int_equal(pipe(pipefd), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct measured out = {0};
		out.rc = measure_as_nobody(&r, 1003, &out.denied, &out.rss_known);
		_exit(write(pipefd[1], &out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	struct measured got = {0};
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &got, sizeof(got)), sizeof(got));
	close(pipefd[0]);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	tmp_tree_free(tmp);
	assert_int_equal(got.rc, 0);       /* measured, */
	assert_int_equal(got.denied, 1);  /* with ksm_stat counted as denied */
	assert_true(got.rss_known);        /* and what could be read is there */
}

static void missing_root(void **state)
{
	(void)state;
	struct io_root nowhere = {.proc = "/nonexistent/proc", .sys = "/nonexistent/sys"};
	struct vm_list l;
	assert_int_equal(vm_discover(&nowhere, NULL, 0, &l), -ENOENT);
	struct host h;
	assert_int_equal(host_read(&nowhere, &h), -ENOENT);
	assert_false(h.ksm.present);
}

/* Each allocation of a discovery failing in turn: -ENOMEM or a list without what could not be
 * kept, never a crash (the cleanup once freed the garbage of a list it had not filled yet). */
static void out_of_memory(void **state)
{
	(void)state;
	int enomem = 0;
	for (long k = 0;; k++) {
		struct vm_list l;
		malloc_countdown = k;
		int r = vm_discover(&root, NULL, 0, &l);
		bool failed = malloc_countdown < 0;
		malloc_countdown = -1;
		assert_true(r == 0 || r == -ENOMEM);
		enomem += r == -ENOMEM;
		if (r == 0)
			vm_list_free(&l);
		if (!failed)
			break; /* every allocation was made: the same list as always */
		assert_true(k < 1000);
	}
	assert_true(enomem >= 3); /* the pid list, the classifier's arrays, the records */
}

/* A process may make its command line as long as it likes (here past the 64 MiB whole reads stop
 * at): it is read as far as VM_CMDLINE_MAX and cut there. The VM is still there, its name from the
 * front, its RAM unknown (a cut command line may have lost a size), never a vanished process. */
static void huge_cmdline(void **state)
{
	(void)state;
	char *dir = tmp_tree_new("huge-cmdline");
	mkdirf("%s/proc/4242", dir);
	mkdirf("%s/sys", dir);
	putf("4242 (qemu-system-x86) S 1 4242 4242 0 -1 0 0 0 0 0 5 5 0 0 20 0 3 0 999 0 0\n", "%s/proc/4242/stat", dir);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/proc/4242/cmdline", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("qemu-system-x86_64", f);
	fputc(0, f);
	fputs("-name", f);
	fputc(0, f);
	fputs("big", f);
	fputc(0, f);
	static char junk[1 << 16];
	memset(junk, 'x', sizeof(junk) - 1);
	for (int i = 0; i < 1100; i++) /* 1100 arguments of 64 KiB: 68.75 MiB */
		assert_int_equal(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	assert_int_equal(fclose(f), 0);
	char p[PATH_MAX], y[PATH_MAX];
	snprintf(p, sizeof(p), "%s/proc", dir);
	snprintf(y, sizeof(y), "%s/sys", dir);
	struct io_root r = {.proc = p, .sys = y};
	struct vm_list l;
	assert_int_equal(vm_discover(&r, NULL, 0, &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.vms[0].cfg.name, "big");
	assert_false(l.vms[0].cfg.guest_ram_bytes.known);
	vm_list_free(&l);
	tmp_tree_free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(discovers_vms_and_helpers), cmocka_unit_test(extra_pids),
		cmocka_unit_test(measures), cmocka_unit_test(calibration_cache), cmocka_unit_test(calibration_cache_many), cmocka_unit_test(denied_files_are_counted),
		cmocka_unit_test(missing_root), cmocka_unit_test(out_of_memory), cmocka_unit_test(huge_cmdline),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
