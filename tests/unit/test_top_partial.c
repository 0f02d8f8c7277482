/* core/sample/top: the live view's readings once it said which VMs it shows (top_source_visible):
 * those read afresh at every reading, every other VM carried over and read afresh once every
 * TOP_SLICES readings, a process new to the view at once, one gone at once. On a writable copy of
 * the serve fixture (VMs 10001 and 10002, 10001's helper 10101), its files changed between readings. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/sample/top.h"
#include "testutil.h"

struct scratch {
	char *dir;
	char proc[PATH_MAX], sys[PATH_MAX];
	struct io_root root;
};

static int setup(void **state)
{
	struct scratch *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->dir = tmp_tree_new("top-partial");
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof(cmd), "cp -a '%s/serve' '%s/host'", fixtures_dir(), s->dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(s->proc, sizeof(s->proc), "%s/host/proc", s->dir);
	snprintf(s->sys, sizeof(s->sys), "%s/host/sys", s->dir);
	s->root = (struct io_root){.proc = s->proc, .sys = s->sys};
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct scratch *s = *state;
	tmp_tree_free(s->dir);
	free(s);
	return 0;
}

/* Process pid's VmRSS in the copy grows by kib, written into the same file (top keeps it open). */
static void grow_rss(const struct scratch *s, pid_t pid, long kib)
{
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/%d' && awk '/^VmRSS:/ { $0 = sprintf(\"VmRSS:\\t %%d kB\", $2 + %ld) } 1' status >status.new && "
		 "cat status.new >status && rm status.new",
		 s->proc, (int)pid, kib);
	assert_int_equal(system(cmd), 0);
}

static void run(const struct scratch *s, const char *fmt, int pid)
{
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof(cmd), "cd '%s' && ", s->proc);
	size_t n = strlen(cmd);
	snprintf(cmd + n, sizeof(cmd) - n, fmt, pid, pid);
	assert_int_equal(system(cmd), 0);
}

static const struct vm *find(const struct top_reading *r, pid_t pid)
{
	for (size_t i = 0; i < r->vms.n; i++)
		if (r->vms.vms[i].pid == pid)
			return &r->vms.vms[i];
	return NULL;
}

/* The next reading after *r, which it replaces. */
static void next(struct top_source *src, struct top_reading *r)
{
	struct top_reading now;
	enum survey_step step;
	assert_int_equal(top_reading_take(src, r, false, &now, &step), 0);
	top_reading_free(r);
	*r = now;
}

/* A source on the copy and its first reading, which has both VMs. */
static struct top_source *opened(const struct scratch *s, struct top_reading *r)
{
	struct top_source *src;
	enum survey_step step;
	assert_int_equal(top_source_open(&s->root, &src), 0);
	assert_int_equal(top_reading_take(src, NULL, false, r, &step), 0);
	assert_non_null(find(r, 10001));
	assert_non_null(find(r, 10002));
	return src;
}

static void test_visible_every_time_the_rest_a_slice(void **state)
{
	struct scratch *s = *state;
	struct top_reading r;
	struct top_source *src = opened(s, &r);
	int64_t shown_was = find(&r, 10001)->mem.rss.v, other_was = find(&r, 10002)->mem.rss.v;
	char name[sizeof(find(&r, 10002)->cfg.name)];
	memcpy(name, find(&r, 10002)->cfg.name, sizeof(name));
	assert_true(name[0]);
	assert_int_equal(top_source_visible(src, (pid_t[]){10001}, 1), 0);
	next(src, &r); /* every VM of the first reading is read again, for its first rates */
	assert_false(find(&r, 10002)->carried);

	/* Both grow by 1 MiB; the one shown is seen at once every time, the other exactly once in
	 * TOP_SLICES readings, carried over as it was before that and after. */
	grow_rss(s, 10001, 1024);
	grow_rss(s, 10002, 1024);
	int fresh = 0;
	for (int k = 0; k < TOP_SLICES; k++) {
		next(src, &r);
		const struct vm *shown = find(&r, 10001), *other = find(&r, 10002);
		assert_non_null(shown);
		assert_non_null(other);
		assert_false(shown->carried);
		assert_int_equal(shown->mem.rss.v, shown_was + (1 << 20));
		assert_int_equal(shown->nhelpers, 1); /* its swtpm, found again */
		if (!other->carried)
			fresh++;
		assert_int_equal(other->mem.rss.v, fresh ? other_was + (1 << 20) : other_was);
		assert_string_equal(other->cfg.name, name); /* its record whole */
	}
	assert_int_equal(fresh, 1);

	/* A VM new to the view is read at once, and at the next reading for its first rates; one gone
	 * from /proc is gone at once, shown or not. */
	run(s, "cp -a 10002 10003 && sed -i 's/^10002 /10003 /' 10003/stat", 0);
	for (int k = 0; k < 2; k++) {
		next(src, &r);
		assert_non_null(find(&r, 10003));
		assert_false(find(&r, 10003)->carried);
	}
	run(s, "rm -r %d", 10002);
	next(src, &r);
	assert_null(find(&r, 10002));
	assert_non_null(find(&r, 10003));
	run(s, "rm -r %d", 10001);
	next(src, &r);
	assert_null(find(&r, 10001));
	top_reading_free(&r);
	top_source_close(src);
}

/* Without top_source_visible (--batch) and for the exact sources, every VM is read every time. */
static void test_batch_and_exact_read_everything(void **state)
{
	struct scratch *s = *state;
	struct top_reading r;
	struct top_source *src = opened(s, &r);
	int64_t was = find(&r, 10002)->mem.rss.v;
	for (int k = 1; k <= 3; k++) {
		grow_rss(s, 10002, 1024);
		next(src, &r);
		assert_false(find(&r, 10002)->carried);
		assert_int_equal(find(&r, 10002)->mem.rss.v, was + k * (1 << 20));
	}
	/* the exact reading's PSS from a smaps_rollup each (the fixture has none) */
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof(cmd), "for p in 10001 10002 10101; do cp '%s/host-mixed/proc/1001/smaps_rollup' '%s'/$p/; done",
		 fixtures_dir(), s->proc);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(top_source_visible(src, (pid_t[]){10001}, 1), 0);
	for (int k = 4; k <= 2 + TOP_SLICES; k++) {
		struct top_reading now;
		enum survey_step step;
		grow_rss(s, 10002, 1024);
		assert_int_equal(top_reading_take(src, &r, true, &now, &step), 0);
		top_reading_free(&r);
		r = now;
		assert_non_null(find(&r, 10002));
		assert_false(find(&r, 10002)->carried);
		assert_int_equal(find(&r, 10002)->mem.rss.v, was + k * (1 << 20));
	}
	top_reading_free(&r);
	top_source_close(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_visible_every_time_the_rest_a_slice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_and_exact_read_everything, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
