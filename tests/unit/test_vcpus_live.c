/* vcpus_read on this test's own threads, named as QEMU names its vCPU threads: found by name,
 * and with the reading before as a hint (what top and the second reading of an interval pass)
 * the same answer: a vCPU that exits is gone, one that starts is found, other threads are not
 * vCPUs, and a thread that names itself a vCPU after a reading is found in the next; through a
 * kept-open cache as well. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/model/vm_cost.h"
#include "io/io.h"
#include "testthread.h"

/* The process's thread count now (status Threads). */
static long threads_now(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *t = strstr(buf, "Threads:");
	return t ? strtol(t + 8, NULL, 10) : 0;
}

/* Waits until the kernel has dropped every thread but those asked for (joined is not reaped). */
static void settle(size_t threads)
{
	for (int i = 0; i < 1000; i++) {
		if (threads_now() == (long)threads)
			return;
		usleep(1000);
	}
	fail_msg("threads did not settle");
}

static void indexes(const struct vm_cpu *c, const char *want)
{
	char got[64] = "";
	for (size_t i = 0; i < c->nvcpus; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%d", i ? "," : "", c->vcpus[i].index);
	assert_string_equal(got, want);
}

/* A thread that starts with the main thread's name and names itself a vCPU only when told, as
 * QEMU's vCPU threads do right after they start. */
struct late {
	pthread_t th;
	pthread_barrier_t started, rename, renamed, done;
};

static void *late_body(void *arg)
{
	struct late *t = arg;
	pthread_barrier_wait(&t->started);
	pthread_barrier_wait(&t->rename);
	prctl(PR_SET_NAME, "CPU 3/KVM");
	pthread_barrier_wait(&t->renamed);
	pthread_barrier_wait(&t->done);
	return NULL;
}

static void test_a_vcpu_named_after_the_reading_before(void **state)
{
	(void)state;
	struct io_cache *cache;
	assert_int_equal(io_cache_new(&cache), 0);
	struct io_root root = {.proc = "/proc", .sys = "/sys", .cache = cache};
	struct late t;
	pthread_barrier_init(&t.started, NULL, 2);
	pthread_barrier_init(&t.rename, NULL, 2);
	pthread_barrier_init(&t.renamed, NULL, 2);
	pthread_barrier_init(&t.done, NULL, 2);
	struct test_thread worker;
	test_thread_start(&worker, "worker");
	assert_int_equal(pthread_create(&t.th, NULL, late_body, &t), 0);
	pthread_barrier_wait(&t.started);
	struct vm_cpu a = {0}, b = {0};
	assert_int_equal(vcpus_read(&root, getpid(), NULL, &a), 0);
	indexes(&a, "");
	assert_int_equal(a.nnamed, 1); /* the worker; the unnamed thread is read again */
	pthread_barrier_wait(&t.rename);
	pthread_barrier_wait(&t.renamed);
	assert_int_equal(vcpus_read(&root, getpid(), &(struct vcpus_known){.before = &a}, &b), 0);
	indexes(&b, "3");
	pthread_barrier_wait(&t.done);
	pthread_join(t.th, NULL);
	test_thread_finish(&worker);
	settle(1);
	vm_cpu_free(&a);
	vm_cpu_free(&b);
	io_cache_free(cache);
}

/* Two vCPU threads, then a worker, as QEMU starts them. */
static void start_vcpus_and_worker(struct test_thread *cpu0, struct test_thread *cpu1, struct test_thread *worker)
{
	test_thread_start(cpu0, "CPU 0/KVM");
	test_thread_start(cpu1, "CPU 1/KVM");
	test_thread_start(worker, "worker");
}

static void finish_vcpus_and_worker(struct test_thread *cpu0, struct test_thread *cpu1, struct test_thread *worker)
{
	test_thread_finish(cpu0);
	test_thread_finish(cpu1);
	test_thread_finish(worker);
	settle(1);
}

static void run(struct io_root *root)
{
	struct test_thread cpu0, cpu1, worker, cpu2;
	start_vcpus_and_worker(&cpu0, &cpu1, &worker);
	struct vm_cpu a = {0}, b = {0}, c = {0};
	assert_int_equal(vcpus_read(root, getpid(), NULL, &a), 0);
	indexes(&a, "0,1");
	test_thread_finish(&cpu1);
	settle(3);
	test_thread_start(&cpu2, "CPU 2/KVM");
	assert_int_equal(vcpus_read(root, getpid(), &(struct vcpus_known){.before = &a}, &b), 0);
	indexes(&b, "0,2");
	assert_true(b.vcpus[0].tid == a.vcpus[0].tid);
	/* the same as without the hint */
	assert_int_equal(vcpus_read(root, getpid(), NULL, &c), 0);
	indexes(&c, "0,2");
	/* the same with the main thread's name given, as discovery has it from stat */
	char self[64] = "";
	FILE *f = fopen("/proc/self/comm", "r");
	assert_non_null(f);
	assert_non_null(fgets(self, sizeof(self), f));
	fclose(f);
	self[strcspn(self, "\n")] = '\0';
	struct vm_cpu d = {0};
	assert_int_equal(vcpus_read(root, getpid(), &(struct vcpus_known){.main_name = self}, &d), 0);
	indexes(&d, "0,2");
	assert_int_equal(d.nnamed, c.nnamed); /* the worker, named otherwise than the main thread */
	vm_cpu_free(&d);
	test_thread_finish(&cpu0);
	test_thread_finish(&cpu2);
	test_thread_finish(&worker);
	settle(1);
	vm_cpu_free(&c);
	assert_int_equal(vcpus_read(root, getpid(), &(struct vcpus_known){.before = &b}, &c), 0);
	indexes(&c, "");
	vm_cpu_free(&a);
	vm_cpu_free(&b);
	vm_cpu_free(&c);
}

static void test_vcpus_with_and_without_the_reading_before(void **state)
{
	(void)state;
	struct io_root root = {.proc = "/proc", .sys = "/sys"};
	run(&root);
}

static void test_vcpus_through_kept_files(void **state)
{
	(void)state;
	struct io_cache *cache;
	assert_int_equal(io_cache_new(&cache), 0);
	struct io_root root = {.proc = "/proc", .sys = "/sys", .cache = cache};
	run(&root);
	io_cache_free(cache);
}

/* With the most vCPUs known (QEMU -smp), the threads after the last vCPU, as QEMU's I/O workers
 * start after its vCPUs, are not read; with more possible than there are, every thread is. */
static void test_threads_after_the_last_vcpu(void **state)
{
	(void)state;
	struct io_root root = {.proc = "/proc", .sys = "/sys"};
	struct test_thread cpu0, cpu1, worker;
	start_vcpus_and_worker(&cpu0, &cpu1, &worker);
	struct vm_cpu a = {0}, b = {0};
	assert_int_equal(vcpus_read(&root, getpid(), &(struct vcpus_known){.max_vcpus = 2}, &a), 0);
	indexes(&a, "0,1");
	assert_int_equal(a.nnamed, 0); /* the worker was not read */
	assert_int_equal(vcpus_read(&root, getpid(), &(struct vcpus_known){.max_vcpus = 4}, &b), 0);
	indexes(&b, "0,1");
	assert_int_equal(b.nnamed, 1); /* two vCPUs of four possible: the worker is read */
	finish_vcpus_and_worker(&cpu0, &cpu1, &worker);
	vm_cpu_free(&a);
	vm_cpu_free(&b);
}

/* With every vCPU the VMM can have found before, only their schedstat is read: the same vCPUs,
 * counted afresh, and the other threads named before kept; when one of them has exited (a vCPU
 * unplugged and plugged again is a new thread), the thread list is read and the new one found. */
static void test_every_vcpu_known_before(void **state)
{
	(void)state;
	struct io_root root = {.proc = "/proc", .sys = "/sys"};
	struct test_thread cpu0, cpu1, worker, again;
	test_thread_start(&worker, "worker");
	test_thread_start(&cpu0, "CPU 0/KVM");
	test_thread_start(&cpu1, "CPU 1/KVM");
	struct vm_cpu a = {0}, b = {0}, c = {0};
	assert_int_equal(vcpus_read(&root, getpid(), &(struct vcpus_known){.max_vcpus = 2}, &a), 0);
	indexes(&a, "0,1");
	assert_int_equal(a.nnamed, 1);
	assert_int_equal(vcpus_read(&root, getpid(), &(struct vcpus_known){.before = &a, .max_vcpus = 2}, &b), 0);
	indexes(&b, "0,1");
	assert_int_equal(b.vcpus[0].tid, cpu0.tid);
	assert_int_equal(b.vcpus[1].tid, cpu1.tid);
	assert_true(b.vcpus[1].cpu_seconds >= a.vcpus[1].cpu_seconds);
	assert_true(b.vcpu_delay_seconds >= 0);
	assert_int_equal(b.nnamed, 1);
	assert_int_equal(b.named[0], worker.tid);
	test_thread_finish(&cpu1);
	settle(3);
	test_thread_start(&again, "CPU 1/KVM");
	assert_int_equal(vcpus_read(&root, getpid(), &(struct vcpus_known){.before = &b, .max_vcpus = 2}, &c), 0);
	indexes(&c, "0,1");
	assert_int_equal(c.vcpus[1].tid, again.tid);
	test_thread_finish(&cpu0);
	test_thread_finish(&again);
	test_thread_finish(&worker);
	settle(1);
	vm_cpu_free(&a);
	vm_cpu_free(&b);
	vm_cpu_free(&c);
}

/* A remembered vCPU thread id that is now another thread's (the vCPU exited and its id was
 * reused, as a memo from an earlier run can remember): not a vCPU, whether the remembered list
 * holds every vCPU the VMM can have (only their figures read) or not (the thread list read). */
static void test_a_remembered_vcpu_id_now_another_thread(void **state)
{
	(void)state;
	struct io_root root = {.proc = "/proc", .sys = "/sys"};
	struct test_thread cpu0, cpu1, worker;
	start_vcpus_and_worker(&cpu0, &cpu1, &worker);
	struct vcpu was[] = {vcpu_unread(0, cpu0.tid), vcpu_unread(1, worker.tid)};
	struct vm_cpu before = {.vcpus = was, .nvcpus = 2, .vcpus_known = true};
	for (size_t max_vcpus = 2; max_vcpus <= 3; max_vcpus++) {
		struct vm_cpu now = {0};
		struct vcpus_known k = {.before = &before, .max_vcpus = max_vcpus};
		assert_int_equal(vcpus_read(&root, getpid(), &k, &now), 0);
		indexes(&now, "0,1");
		assert_int_equal(now.vcpus[0].tid, cpu0.tid);
		assert_int_equal(now.vcpus[1].tid, cpu1.tid);
		vm_cpu_free(&now);
	}
	finish_vcpus_and_worker(&cpu0, &cpu1, &worker);
}

/* While the thread count is what it was when the vCPUs were named, their names are not read
 * again: a vCPU thread that renames itself (no VMM does) is still taken for a vCPU; once the
 * count moves they are read, and it is not. */
static void test_vcpu_names_not_read_while_the_thread_count_holds(void **state)
{
	(void)state;
	struct io_root root = {.proc = "/proc", .sys = "/sys"};
	struct test_thread cpu0, cpu1, worker;
	start_vcpus_and_worker(&cpu0, &cpu1, &worker);
	struct vm_cpu a = {0}, b = {0}, c = {0};
	long threads = threads_now();
	assert_int_equal(vcpus_read(&root, getpid(), &(struct vcpus_known){.max_vcpus = 2, .threads = threads}, &a), 0);
	indexes(&a, "0,1");
	assert_int_equal(a.threads, threads);
	assert_int_equal(pthread_setname_np(cpu1.th, "renamed"), 0);
	struct vcpus_known k = {.before = &a, .max_vcpus = 2, .threads = threads};
	assert_int_equal(vcpus_read(&root, getpid(), &k, &b), 0);
	indexes(&b, "0,1");
	assert_true(b.vcpus[1].cpu_seconds >= 0); /* its figures are read */
	k = (struct vcpus_known){.before = &b, .max_vcpus = 2, .threads = threads + 1};
	assert_int_equal(vcpus_read(&root, getpid(), &k, &c), 0);
	indexes(&c, "0");
	finish_vcpus_and_worker(&cpu0, &cpu1, &worker);
	vm_cpu_free(&a);
	vm_cpu_free(&b);
	vm_cpu_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vcpus_with_and_without_the_reading_before),
		cmocka_unit_test(test_vcpus_through_kept_files),
		cmocka_unit_test(test_a_vcpu_named_after_the_reading_before),
		cmocka_unit_test(test_threads_after_the_last_vcpu),
		cmocka_unit_test(test_every_vcpu_known_before),
		cmocka_unit_test(test_vcpu_names_not_read_while_the_thread_count_holds),
		cmocka_unit_test(test_a_remembered_vcpu_id_now_another_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
