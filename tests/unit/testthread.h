/* A thread of the test process itself, for tests that read /proc about threads: it names itself
 * (as QEMU names its vCPU threads), then waits until told to exit. */
#ifndef VMHOST_TESTTHREAD_H
#define VMHOST_TESTTHREAD_H

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

struct test_thread {
	const char *name;
	pid_t tid;
	pthread_t th;
	pthread_barrier_t named, done;
};

static inline void *test_thread_body(void *arg)
{
	struct test_thread *t = arg;
	prctl(PR_SET_NAME, t->name);
	t->tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&t->named);
	pthread_barrier_wait(&t->done);
	return NULL;
}

/* Returns once the thread has its name (and t->tid is set). */
static inline void test_thread_start(struct test_thread *t, const char *name)
{
	t->name = name;
	pthread_barrier_init(&t->named, NULL, 2);
	pthread_barrier_init(&t->done, NULL, 2);
	assert_int_equal(pthread_create(&t->th, NULL, test_thread_body, t), 0);
	pthread_barrier_wait(&t->named);
}

/* Lets it exit and joins it (the kernel may not have reaped it yet). */
static inline void test_thread_finish(struct test_thread *t)
{
	pthread_barrier_wait(&t->done);
	pthread_join(t->th, NULL);
	pthread_barrier_destroy(&t->named);
	pthread_barrier_destroy(&t->done);
}

#endif
