/* A VM-like process for tests: run it with argv[0] "qemu-system-x86_64" (bash: exec -a) and
 * QEMU-style "-name NAME -m SIZE" so discovery takes it for a guest. Its own options:
 *   -fake-shared F -fake-zero F -fake-volatile F   page mix (fractions; rest unique)
 *   -fake-guest N -fake-seed S                      unique content index, image seed
 *   -fake-nothp -fake-nomerge                       no MADV_HUGEPAGE / MADV_MERGEABLE
 *   -fake-grow BYTES_PER_SECOND                     allocate extra memory steadily
 *   -fake-vcpus N                                   N idle threads named like QEMU's "CPU n/KVM"
 *                                                   between two others, as QEMU starts its RCU
 *                                                   thread before the vCPUs and I/O workers after
 *   -fake-busy-vcpus                                the vCPU threads spin instead (a busy guest)
 *   -fake-fill-seconds S                            mark RAM mergeable first, then fill it over S
 *                                                   seconds (a booting guest); else fill, then mark
 *   -fake-unmap-after S                             unmap the upper half of its RAM S seconds after
 *                                                   it is filled (a mapping gone under a reader)
 *   -fake-write BYTES_PER_SECOND -fake-write-file F write F steadily with O_DIRECT, 1 MiB at a time,
 *                                                   round a 32 MiB ring (a guest writing its disk)
 *   -fake-fds N                                     hold N more fds (/dev/null), as many as a
 *                                                   QEMU's eventfds, vCPU and device fds
 *   -fake-read-file F                               read F over and over through the page cache,
 *                                                   1 MiB at a time, on a thread of its own (a
 *                                                   guest reading a disk of cache=writeback)
 *   -fake-cow-every SEC                             every SEC seconds, new content over its shared
 *                                                   pages, the same in every guest of one seed and
 *                                                   start (a guest whose merged pages KSM copies)
 *   -fake-rewrite-when F                            once file F exists, write new content over its
 *                                                   shared and zero pages once (a guest writing over
 *                                                   what KSM merged) and print "rewritten N" (pages)
 * Prints "ready" on stdout once its memory is filled; stops on SIGTERM. */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/bench/workload.h"
#include "parse/parse.h"

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *busy_thread(void *arg)
{
	volatile unsigned long *spins = arg;
	for (;;)
		(*spins)++;
	return NULL;
}

struct writer {
	int fd;
	unsigned long long bytes_per_second;
	void *buf;
};

#define WRITE_CHUNK (1u << 20)
#define WRITE_RING (32u << 20)

/* Writes a chunk every 1/(rate/chunk) seconds, O_DIRECT so /proc/PID/io counts every one. */
static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	double period = (double)WRITE_CHUNK / (double)w->bytes_per_second;
	struct timespec ts = {.tv_sec = (time_t)period, .tv_nsec = (long)((period - (double)(time_t)period) * 1e9)};
	for (off_t off = 0;; off = (off + WRITE_CHUNK) % WRITE_RING) {
		if (pwrite(w->fd, w->buf, WRITE_CHUNK, off) != (ssize_t)WRITE_CHUNK)
			perror("fakeguest: write");
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int start_writer(const char *path, unsigned long long bytes_per_second)
{
	static struct writer w;
	w = (struct writer){.fd = open(path, O_WRONLY | O_CREAT | O_DIRECT, 0600), .bytes_per_second = bytes_per_second};
	if (w.fd < 0 || posix_memalign(&w.buf, 4096, WRITE_CHUNK))
		return -1;
	memset(w.buf, 0xa5, WRITE_CHUNK);
	pthread_t t;
	return pthread_create(&t, NULL, writer_thread, &w) ? -1 : 0;
}

/* Reads a file through the page cache round and round: under a memory limit smaller than the
 * file, its own cache is what the cgroup reclaims. */
static void *reader_thread(void *arg)
{
	const char *path = arg;
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror("fakeguest: -fake-read-file");
		return NULL;
	}
	for (off_t off = 0;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		off = n > 0 ? off + n : 0;
		if (n <= 0)
			usleep(1000);
	}
	return NULL;
}

/* Threads that look like QEMU's, in its order: the RCU thread, the vCPUs by QEMU's names, an
 * I/O worker. */
static int start_threads(int vcpus, bool busy)
{
	static volatile unsigned long spins;
	for (int i = -1; i <= vcpus; i++) {
		bool vcpu = i >= 0 && i < vcpus;
		pthread_t t;
		if (pthread_create(&t, NULL, busy && vcpu ? busy_thread : idle_thread, (void *)&spins))
			return -1;
		char name[32]; /* the kernel keeps 15 characters */
		if (vcpu)
			snprintf(name, sizeof(name), "CPU %d/KVM", i % 1000);
		else
			snprintf(name, sizeof(name), i < 0 ? "call_rcu" : "worker");
		pthread_setname_np(t, name);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int vcpus = 0, fds = 0;
	bool busy = false;
	unsigned long long write_rate = 0;
	const char *write_file = NULL, *read_file = NULL;
	struct workload_spec s = {.guest_bytes = 64u << 20, .shared_fraction = 0.5, .zero_fraction = 0.1,
				  .image_seed = 1, .thp = true, .mergeable = true};
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "-fake-nothp")) {
			s.thp = false;
			continue;
		}
		if (!strcmp(o, "-fake-busy-vcpus")) {
			busy = true;
			continue;
		}
		if (!strcmp(o, "-fake-nomerge")) {
			s.mergeable = false;
			continue;
		}
		if (!v)
			break;
		if (!strcmp(o, "-m") && parse_qemu_size(v, strlen(v), 1u << 20, &s.guest_bytes) < 0) {
			fprintf(stderr, "fakeguest: bad -m %s\n", v);
			return 2;
		}
		if (!strcmp(o, "-fake-shared"))
			s.shared_fraction = atof(v);
		else if (!strcmp(o, "-fake-zero"))
			s.zero_fraction = atof(v);
		else if (!strcmp(o, "-fake-volatile"))
			s.volatile_fraction = atof(v);
		else if (!strcmp(o, "-fake-guest"))
			s.guest_index = (unsigned)atoi(v);
		else if (!strcmp(o, "-fake-seed"))
			s.image_seed = strtoull(v, NULL, 10);
		else if (!strcmp(o, "-fake-grow"))
			s.grow_bytes_per_second = strtoull(v, NULL, 10);
		else if (!strcmp(o, "-fake-vcpus"))
			vcpus = atoi(v);
		else if (!strcmp(o, "-fake-fill-seconds"))
			s.fill_seconds = atof(v);
		else if (!strcmp(o, "-fake-unmap-after"))
			s.unmap_after_seconds = atof(v);
		else if (!strcmp(o, "-fake-write"))
			write_rate = strtoull(v, NULL, 10);
		else if (!strcmp(o, "-fake-write-file"))
			write_file = v;
		else if (!strcmp(o, "-fake-fds"))
			fds = atoi(v);
		else if (!strcmp(o, "-fake-read-file"))
			read_file = v;
		else if (!strcmp(o, "-fake-cow-every"))
			s.cow_period_seconds = atof(v);
		else if (!strcmp(o, "-fake-rewrite-when"))
			s.rewrite_when = v;
	}
	for (int i = 0; i < fds; i++)
		if (open("/dev/null", O_RDONLY) < 0) {
			perror("fakeguest: -fake-fds");
			return 1;
		}
	if (write_rate && (!write_file || start_writer(write_file, write_rate) < 0)) {
		perror("fakeguest: -fake-write needs a -fake-write-file it can open with O_DIRECT");
		return 1;
	}
	pthread_t reader;
	if (read_file && pthread_create(&reader, NULL, reader_thread, (void *)read_file)) {
		fprintf(stderr, "fakeguest: cannot start the reader\n");
		return 1;
	}
	if (vcpus > 0 && start_threads(vcpus, busy) < 0) {
		fprintf(stderr, "fakeguest: cannot start threads\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	return workload_run(&s, STDOUT_FILENO);
}
