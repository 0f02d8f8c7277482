/* A sketch of a real process (a child of this test with an anonymous mapping of the guest RAM's
 * exact size) pins it (REVIEW S-L8): with the start time the VM was found with, its pages are read;
 * with another start time (its pid now another process's) nothing is read and the sketch says the
 * VM exited; a process held by its pidfd that has exited reads as gone, whatever its pid reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/share/sketch.h"
#include "io/vmread.h"
#include "parse/parse.h"

#define RAM_BYTES ((8u << 20) + 3 * 4096u) /* an exact size no other mapping of the child has */

static pid_t child;
static uint64_t child_start;
static void *child_ram;

/* A child whose guest RAM is RAM_BYTES of distinct non-zero pages; it waits to be killed. */
static int setup(void **state)
{
	(void)state;
	int ready[2];
	if (!child_ram) { /* mapped before the fork: the child's is at the same address */
		/* Between two inaccessible pages: no neighbour merges into its mapping. */
		unsigned char *ram = mmap(NULL, RAM_BYTES + 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ram == MAP_FAILED || mprotect(ram += 4096, RAM_BYTES, PROT_READ | PROT_WRITE) < 0)
			return -1;
		for (size_t i = 0; i < RAM_BYTES; i += 4096)
			snprintf((char *)ram + i, 64, "page %zu", i / 4096);
		child_ram = ram;
	}
	if (pipe(ready) < 0)
		return -1;
	child = fork();
	if (child == 0) {
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char x;
	close(ready[1]);
	if (child < 0 || read(ready[0], &x, 1) != 1)
		return -1;
	close(ready[0]);
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)child);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	struct proc_stat st;
	if (parse_stat(buf, n, &st) < 0)
		return -1;
	child_start = st.start_ticks;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	return 0;
}

static struct sketch take(uint64_t start_ticks)
{
	struct vm vm = {.pid = child, .start_ticks = start_ticks, .stat_known = true};
	vm.cfg.vmm = VMM_QEMU;
	vm.cfg.guest_ram_bytes = MAYBE(RAM_BYTES);
	vm.cfg.nblocks = 1;
	vm.cfg.block_bytes[0] = RAM_BYTES;
	struct sketch_opts o = {.sample_n = 1};
	memset(&o.key, 9, sizeof(o.key));
	struct sketch s;
	assert_int_equal(sketch_take(&(struct io_root){.proc = "/proc", .sys = "/sys"}, &vm, &o, &s), 0);
	return s;
}

static void pinned_by_start_time(void **state)
{
	(void)state;
	char probe;
	if (io_process_read(child, (uint64_t)(uintptr_t)child_ram, &probe, 1) == -EPERM)
		skip(); /* neither root nor allowed to ptrace our child */
	struct sketch s = take(child_start);
	assert_int_equal(s.gap, SKETCH_COMPLETE);
	assert_int_equal(s.ram_pages, RAM_BYTES / 4096);
	assert_int_equal(s.nhashes, RAM_BYTES / 4096); /* 1/1: every page, all distinct */
	sketch_free(&s);
	/* Found with another start time: the process at its pid is not that VM. */
	s = take(child_start + 1);
	assert_int_equal(s.gap, SKETCH_VM_EXITED);
	assert_int_equal(s.pages, 0);
	assert_int_equal(s.nhashes, 0);
	sketch_free(&s);
}

/* A held process that exited (not reaped yet: its pid is not reused, so the pidfd is what tells)
 * is gone to the reads. */
static void held_process_exits(void **state)
{
	(void)state;
	struct io_process p;
	assert_int_equal(io_process_hold(child, &p), 0);
	if (p.pidfd < 0) {
		io_process_release(&p);
		skip(); /* no pidfd_open here */
	}
	assert_true(io_process_alive(&p));
	char buf[16];
	ssize_t n = io_process_read_held(&p, (uint64_t)(uintptr_t)child_ram, buf, sizeof(buf));
	if (n == -EPERM)
		skip();
	assert_int_equal(n, sizeof(buf));
	assert_string_equal(buf, "page 0");
	kill(child, SIGKILL);
	waitid(P_PID, (id_t)child, NULL, WEXITED | WNOWAIT); /* a zombie: exited, not reaped */
	assert_false(io_process_alive(&p));
	assert_int_equal(io_process_read_held(&p, (uint64_t)(uintptr_t)child_ram, buf, sizeof(buf)), -ESRCH);
	io_process_release(&p);
	struct io_process none;
	waitpid(child, NULL, 0);
	assert_int_equal(io_process_hold(child, &none), -ESRCH);
	child = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(pinned_by_start_time, setup, teardown),
		cmocka_unit_test_setup_teardown(held_process_exits, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
