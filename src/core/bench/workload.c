#include "core/bench/workload.h"
#include "core/base/stop.h"
#include "io/file.h"
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE WORKLOAD_PAGE_BYTES

static uint64_t mix(uint64_t x)
{
	/* splitmix64: a cheap, well-spread hash for page classes and contents */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

enum page_class workload_page_class(const struct workload_spec *s, uint64_t page_index)
{
	double u = (double)(mix(page_index ^ 0x5eed) >> 11) / (double)(1ull << 53);
	if (u < s->shared_fraction)
		return PAGE_SHARED;
	if (u < s->shared_fraction + s->zero_fraction)
		return PAGE_ZERO;
	if (u < s->shared_fraction + s->zero_fraction + s->volatile_fraction)
		return PAGE_VOLATILE;
	return PAGE_UNIQUE;
}

static void fill_page(uint64_t *p, uint64_t seed)
{
	uint64_t x = mix(seed);
	for (unsigned i = 0; i < PAGE / sizeof(uint64_t); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		p[i] = x;
	}
}

static uint64_t page_seed(const struct workload_spec *s, uint64_t i, enum page_class c, uint64_t generation)
{
	switch (c) {
	case PAGE_SHARED: return mix(s->image_seed * 0x100000001b3ull + i);
	case PAGE_VOLATILE: return mix(((uint64_t)s->guest_index << 40) ^ (generation << 20) ^ i);
	default: return mix(((uint64_t)(s->guest_index + 1) << 44) ^ i ^ (s->image_seed << 8));
	}
}

/* Maps and fills guest RAM in this process. Returns the mapping or NULL (errno set). */
static void *workload_map(const struct workload_spec *s)
{
	size_t len = (size_t)(s->guest_bytes / PAGE) * PAGE;
	if (!len) {
		errno = EINVAL;
		return NULL;
	}
	/* Align to 2 MiB, as QEMU does, so huge pages can back the whole range. */
	size_t align = 2u << 20;
	char *raw = mmap(NULL, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	char *mem = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
	if (mem > raw)
		munmap(raw, (size_t)(mem - raw));
	size_t tail = (size_t)(raw + len + align - (mem + len));
	if (tail)
		munmap(mem + len, tail);
	if (s->thp)
		madvise(mem, len, MADV_HUGEPAGE);
	bool paced = s->fill_seconds > 0;
	if (s->mergeable && paced)
		madvise(mem, len, MADV_MERGEABLE);
	double start = clock_monotonic_seconds();
	uint64_t pages = len / PAGE, chunk = (2u << 20) / PAGE;
	for (uint64_t i = 0; i < pages; i++) {
		enum page_class c = workload_page_class(s, i);
		uint64_t *p = (uint64_t *)(mem + i * PAGE);
		if (c == PAGE_ZERO)
			memset(p, 0, PAGE); /* resident, like memory a guest has zeroed */
		else
			fill_page(p, page_seed(s, i, c, 0));
		if (paced && (i + 1) % chunk == 0) {
			/* Sleep until this share of fill_seconds has passed. */
			double due = s->fill_seconds * (double)(i + 1) / (double)pages;
			double left = start + due - clock_monotonic_seconds();
			if (left > 0) {
				struct timespec nap = clock_timespec(left);
				nanosleep(&nap, NULL);
			}
		}
	}
	if (s->mergeable && !paced)
		madvise(mem, len, MADV_MERGEABLE);
	return mem;
}

/* Rewrites the volatile pages once (a new generation of content). */
static void workload_rewrite(const struct workload_spec *s, void *mem, uint64_t generation)
{
	uint64_t pages = s->guest_bytes / PAGE;
	for (uint64_t i = 0; i < pages; i++)
		if (workload_page_class(s, i) == PAGE_VOLATILE)
			fill_page((uint64_t *)((char *)mem + i * PAGE), page_seed(s, i, PAGE_VOLATILE, generation));
}

/* Writes content of this guest's own over every shared and zero page once: each write to a page
 * KSM merged is a copy-on-write copy. Returns the pages written. */
static uint64_t workload_rewrite_merged(const struct workload_spec *s, void *mem)
{
	uint64_t pages = s->guest_bytes / PAGE, n = 0;
	for (uint64_t i = 0; i < pages; i++) {
		enum page_class c = workload_page_class(s, i);
		if (c != PAGE_SHARED && c != PAGE_ZERO)
			continue;
		fill_page((uint64_t *)((char *)mem + i * PAGE), page_seed(s, i, PAGE_VOLATILE, 1ull << 19));
		n++;
	}
	return n;
}

/* A new generation of the image's shared content, the same in every guest of it. */
static void workload_rewrite_shared(const struct workload_spec *s, void *mem, uint64_t generation)
{
	uint64_t pages = s->guest_bytes / PAGE;
	for (uint64_t i = 0; i < pages; i++)
		if (workload_page_class(s, i) == PAGE_SHARED)
			fill_page((uint64_t *)((char *)mem + i * PAGE), mix(s->image_seed * 0x100000001b3ull + i) ^ generation);
}

/* The rewrite of rewrite_when, once its file is there; "rewritten N" on fd (-1: none). */
static void rewrite_if_asked(const struct workload_spec *s, void *mem, int fd, bool *done)
{
	if (*done || !s->rewrite_when || !io_can_open(s->rewrite_when, O_RDONLY))
		return;
	*done = true;
	char line[48];
	int len = snprintf(line, sizeof(line), "rewritten %llu\n", (unsigned long long)workload_rewrite_merged(s, mem));
	if (fd >= 0 && write(fd, line, (size_t)len) != len)
		return; /* nobody reads it any more: the rewrite is done all the same */
}

int workload_run(const struct workload_spec *s, int ready_fd)
{
	stop_catch(false);
	void *mem = workload_map(s);
	if (!mem)
		return 1;
	if (ready_fd >= 0) {
		if (write(ready_fd, "ready\n", 6) != 6)
			return 1;
		if (ready_fd > 2)
			close(ready_fd);
	}
	unsigned period_ms = s->rewrite_ms ? s->rewrite_ms : 200;
	uint64_t generation = 0, grown = 0;
	bool unmapped = false, rewritten = false;
	double start = clock_monotonic_seconds(), next_cow = start + s->cow_period_seconds;
	while (sleep_for(period_ms / 1000.0)) {
		rewrite_if_asked(s, mem, ready_fd <= 2 ? ready_fd : -1, &rewritten);
		double now = clock_monotonic_seconds();
		if (s->cow_period_seconds > 0 && now >= next_cow) {
			/* by the time since the start: guests of one image write the same generation */
			workload_rewrite_shared(s, mem, mix((uint64_t)((now - start) / s->cow_period_seconds)));
			next_cow += s->cow_period_seconds;
		}
		if (s->volatile_fraction > 0)
			workload_rewrite(s, mem, ++generation);
		if (!unmapped && s->unmap_after_seconds > 0 && clock_monotonic_seconds() - start >= s->unmap_after_seconds) {
			size_t half = (size_t)(s->guest_bytes / PAGE / 2) * PAGE;
			munmap((char *)mem + half, half);
			unmapped = true;
		}
		if (s->grow_bytes_per_second) {
			double t = clock_monotonic_seconds() - start;
			uint64_t want = (uint64_t)(t * (double)s->grow_bytes_per_second);
			if (want > grown + PAGE) {
				size_t more = (size_t)((want - grown) / PAGE) * PAGE;
				char *extra = mmap(NULL, more, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (extra != MAP_FAILED) {
					for (size_t o = 0; o < more; o += PAGE)
						extra[o] = (char)(o >> 12 | 1);
					grown += more;
				}
			}
		}
	}
	return 0;
}

int workload_spawn(const struct workload_spec *s, pid_t *ret_pid)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(fds[0]);
		close(fds[1]);
		return e;
	}
	if (pid == 0) {
		close(fds[0]);
		/* A benchmark killed at any moment must not leave its guests behind. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(1);
		if (s->cgroup && io_write(s->root, IO_SYS, "0", "%s/cgroup.procs", s->cgroup) < 0) /* NULL: /sys */
			_exit(1); /* its RAM would be charged elsewhere: no such guest */
		_exit(workload_run(s, fds[1]));
	}
	close(fds[1]);
	char buf[8];
	ssize_t n;
	do
		n = read(fds[0], buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n != 6) {
		workload_stop(pid);
		return -ECHILD;
	}
	*ret_pid = pid;
	return 0;
}

void workload_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 100; i++) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid || (r < 0 && errno == ECHILD))
			return;
		sleep_for(0.05);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
