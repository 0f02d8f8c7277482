/* debugfs and tracefs for this run alone (io/mountns.h): the root's paths under kernel/debug and
 * kernel/tracing go to the mounts it holds and no others do; nothing is mounted on a fixture tree;
 * as root, each mount (the detached one, and the child's private namespace that older kernels
 * get) reads like the real file system, and /proc/self/mountinfo and PID 1's /proc/mounts are
 * byte for byte what they were before, while it is held and after. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/mountns.h"
#include "testutil.h"

static void path_is(const struct io_root *root, enum io_base base, const char *rel, const char *want)
{
	char buf[256];
	assert_int_equal(io_path(root, base, buf, sizeof(buf), "%s", rel), 0);
	assert_string_equal(buf, want);
}

static void test_paths_go_to_the_mounts(void **state)
{
	(void)state;
	struct io_root root = {.proc = "/p", .sys = "/s", .debugfs = "/proc/self/fd/7", .tracefs = "/proc/self/fd/8"};
	path_is(&root, IO_SYS, "kernel/debug/kvm/exits", "/proc/self/fd/7/kvm/exits");
	path_is(&root, IO_SYS, "kernel/debug", "/proc/self/fd/7");
	path_is(&root, IO_SYS, "kernel/tracing/events/kvm/kvm_pio/format", "/proc/self/fd/8/events/kvm/kvm_pio/format");
	path_is(&root, IO_SYS, "kernel/debugger/x", "/s/kernel/debugger/x"); /* a name that only begins alike */
	path_is(&root, IO_SYS, "kernel/mm/ksm/run", "/s/kernel/mm/ksm/run");
	path_is(&root, IO_PROC, "kernel/debug", "/p/kernel/debug");
	root.tracefs = NULL;
	path_is(&root, IO_SYS, "kernel/tracing/events", "/s/kernel/tracing/events");
	char small[24]; /* "/s/kernel/debug/kvm" fits, the mount's path does not */
	root.debugfs = "/a/much/longer/mount/path";
	assert_int_equal(io_path(&root, IO_SYS, small, sizeof(small), "kernel/debug/kvm"), -ENAMETOOLONG);
}

static void test_never_on_fixtures(void **state)
{
	(void)state;
	struct io_root root = {.proc = "/proc", .sys = "tests/fixtures/exits-nodebugfs/sys"};
	struct io_private_mounts m;
	assert_int_equal(io_mount_private(&root, IO_DEBUGFS | IO_TRACEFS, &m), 0);
	assert_null(root.debugfs);
	assert_null(root.tracefs);
	assert_int_equal(m.debugfs_fd, -1);
	assert_int_equal(m.tracefs_fd, -1);
	io_private_mounts_close(&m);
}

/* The mount tables the host's mounts are judged by. */
struct tables {
	char *self, *init;
};

static struct tables tables_read(void)
{
	struct io_root host = {.proc = "/proc"};
	struct tables t;
	size_t len;
	assert_int_equal(io_read_alloc(&host, IO_PROC, &t.self, &len, "self/mountinfo"), 0);
	assert_int_equal(io_read_alloc(&host, IO_PROC, &t.init, &len, "1/mounts"), 0);
	return t;
}

static void tables_unchanged(struct tables *before)
{
	struct tables now = tables_read();
	assert_string_equal(now.self, before->self);
	assert_string_equal(now.init, before->init);
	free(now.self);
	free(now.init);
}

static void test_mounted_privately(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	struct tables before = tables_read();
	struct io_root root = {.proc = "/proc", .sys = "/sys"};
	struct io_private_mounts m;
	unsigned done = io_mount_private(&root, IO_DEBUGFS | IO_TRACEFS, &m);
	print_message("mounted here: %s%s (the host's: the rest)\n", done & IO_DEBUGFS ? "debugfs " : "",
		      done & IO_TRACEFS ? "tracefs" : "");
	assert_true(!(done & IO_DEBUGFS) || (root.debugfs && m.debugfs_fd >= 0));
	assert_true(!(done & IO_TRACEFS) || (root.tracefs && m.tracefs_fd >= 0));
	/* mounted here or the host's, both read the same way */
	char **names;
	size_t n;
	assert_int_equal(io_list_dir(&root, IO_SYS, &names, &n, "kernel/debug"), 0);
	assert_true(n > 0);
	io_free_names(names, n);
	if (done & IO_TRACEFS)
		assert_true(io_exists(&root, IO_SYS, "kernel/tracing/events"));
	tables_unchanged(&before);
	io_private_mounts_close(&m);
	tables_unchanged(&before);
	free(before.self);
	free(before.init);
}

static void test_child_namespace(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	struct tables before = tables_read();
	int fd = io_mount_by_child("tracefs", "/sys/kernel/tracing");
	assert_true(fd >= 0);
	/* the child is gone with its namespace; the mount lives on in the fd */
	int events = openat(fd, "events", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(events >= 0);
	close(events);
	tables_unchanged(&before);
	close(fd);
	assert_int_equal(io_mount_by_child("no-such-fs", "/sys/kernel/tracing"), -ENODEV);
	tables_unchanged(&before);
	free(before.self);
	free(before.init);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_go_to_the_mounts),
		cmocka_unit_test(test_never_on_fixtures),
		cmocka_unit_test(test_mounted_privately),
		cmocka_unit_test(test_child_namespace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
