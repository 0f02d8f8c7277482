/* A VM's taps (core/model/vm_io.c) on the host-io fixture tree: found from the VMM's fds whatever
 * its command line says, in the order of their fds, a two-queue tap once; the list of the reading
 * before kept only while the VMM holds as many fds as then, looked for again when the count
 * moved or the kernel does not give it; and the count itself (io_proc_fd_count) as this process's
 * own fds say on a live /proc. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/model/vm_io.h"
#include "testutil.h"

static char proc[512], sys[512];

static struct vm_io read_v2disk(const struct vm_io *before)
{
	struct io_root root = fixture_root("host-io", proc, sys, sizeof(proc));
	pid_t pids[] = {4001};
	struct vm_io_source src = {pids, 1, NULL, 2};
	struct vm_io io;
	vm_io_read(&root, &src, before, &io);
	return io;
}

static void names_are(const struct vm_io *io, const char *a, const char *b)
{
	assert_true(io->ifaces_known);
	assert_int_equal(io->nifaces, b ? 2 : 1);
	assert_string_equal(io->ifaces[0].name, a);
	if (b)
		assert_string_equal(io->ifaces[1].name, b);
}

static void taps_from_the_fds(void **state)
{
	(void)state;
	struct vm_io io = read_v2disk(NULL);
	names_are(&io, "vnet0", "macvtap0"); /* fds 20 and 21 (one tap, two queues), then 23 */
	assert_true(io.ifaces_fds > 0);       /* a fixture directory's size stands in for the count */
	assert_int_equal(io.ifaces[0].rx_bytes.v, 1000000);
}

static void kept_while_the_fds_hold(void **state)
{
	(void)state;
	struct vm_io before = read_v2disk(NULL);
	long fds = before.ifaces_fds;
	snprintf(before.ifaces[0].name, sizeof(before.ifaces[0].name), "old0");
	before.nifaces = 1;
	struct vm_io io = read_v2disk(&before);
	names_are(&io, "old0", NULL); /* as many fds as then: the list stands, nothing scanned */
	before.ifaces_fds = fds + 1;
	io = read_v2disk(&before);
	names_are(&io, "vnet0", "macvtap0"); /* the count moved: looked for again */
	before.ifaces_fds = 0;
	io = read_v2disk(&before);
	names_are(&io, "vnet0", "macvtap0"); /* no count from the kernel then: every reading looks */
	before.ifaces_fds = fds;
	before.ifaces_known = false;
	io = read_v2disk(&before);
	names_are(&io, "vnet0", "macvtap0");
}

static int count_fd(void *ctx, const char *fd, const char *target)
{
	(void)fd;
	(void)target;
	++*(long *)ctx;
	return 0;
}

static void live_fd_count(void **state)
{
	(void)state;
	struct io_root host = {.proc = "/proc"};
	long said = io_proc_fd_count(&host, getpid());
	if (said == 0) { /* a kernel before 6.2 does not count them */
		skip();
		return;
	}
	int extra = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(extra >= 0);
	long listed = 0;
	assert_int_equal(io_proc_fds_each(&host, getpid(), count_fd, &listed), 0);
	long now = io_proc_fd_count(&host, getpid());
	assert_int_equal(now, said + 1);
	assert_int_equal(listed, now + 1); /* the listing's own directory fd is one more */
	close(extra);
	assert_int_equal(io_proc_fd_count(&host, getpid()), said);
	assert_int_equal(io_proc_fd_count(&host, 0x7ffffff0), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(taps_from_the_fds),
		cmocka_unit_test(kept_while_the_fds_hold),
		cmocka_unit_test(live_fd_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
