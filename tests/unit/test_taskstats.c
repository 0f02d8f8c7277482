/* The kernel's delay accounting read over generic netlink (issue 45): the messages' bytes
 * (parse/netlink/genl.h: a request as the kernel takes it, a reply walked, an error told, a
 * message cut anywhere refused), struct taskstats read by its places for each version (v8 without
 * thrashing, v13 without IRQ, v14 and a longer v17, v15's layout refused), and, as root, a real
 * session asking for this process and a thread of it (io/peer/taskstats.h). */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/peer/taskstats.h"
#include "parse/netlink/genl.h"
#include "parse/netlink/taskstats.h"

/* A struct taskstats of len bytes and version v, each delay's count k + 1 and total 1000 (k + 1). */
static void fake_stats(uint8_t *buf, size_t len, uint16_t v)
{
	static const size_t at[] = {16, 32, 48, 312, 328, 352, 400, 416};
	memset(buf, 0, len);
	memcpy(buf, &v, sizeof(v));
	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
		uint64_t count = k + 1, ns = 1000 * (k + 1);
		if (at[k] + 16 <= len) {
			memcpy(buf + at[k], &count, 8);
			memcpy(buf + at[k] + 8, &ns, 8);
		}
	}
}

static void test_struct_versions(void **state)
{
	(void)state;
	uint8_t b[600];
	struct task_delays d;
	fake_stats(b, 432, 14);
	assert_int_equal(parse_taskstats_struct(b, 432, &d), 0);
	assert_int_equal(d.version, 14);
	assert_int_equal(d.known, (1u << TASK_DELAY_NKINDS) - 1);
	assert_int_equal(d.count[TASK_DELAY_WPCOPY], 7);
	assert_int_equal(d.ns[TASK_DELAY_WPCOPY], 7000);
	assert_int_equal(d.ns[TASK_DELAY_RECLAIM], 4000);
	assert_int_equal(d.ns[TASK_DELAY_IRQ], 8000);
	/* v13 (this build's header): no IRQ field */
	fake_stats(b, 416, 13);
	assert_int_equal(parse_taskstats_struct(b, 416, &d), 0);
	assert_false(d.known & 1u << TASK_DELAY_IRQ);
	assert_true(d.known & 1u << TASK_DELAY_WPCOPY);
	/* v8: reclaim, not thrashing; a v8 struct is shorter, and a long one does not make it newer */
	fake_stats(b, 600, 8);
	assert_int_equal(parse_taskstats_struct(b, 600, &d), 0);
	assert_true(d.known & 1u << TASK_DELAY_RECLAIM);
	assert_false(d.known & (1u << TASK_DELAY_THRASHING | 1u << TASK_DELAY_COMPACT | 1u << TASK_DELAY_WPCOPY));
	/* v17: longer, read the same */
	fake_stats(b, 600, 17);
	assert_int_equal(parse_taskstats_struct(b, 600, &d), 0);
	assert_int_equal(d.known, (1u << TASK_DELAY_NKINDS) - 1);
	assert_int_equal(d.count[TASK_DELAY_IRQ], 8);
	/* a struct cut before a field it should have: that field unknown */
	fake_stats(b, 410, 14);
	assert_int_equal(parse_taskstats_struct(b, 410, &d), 0);
	assert_false(d.known & (1u << TASK_DELAY_WPCOPY | 1u << TASK_DELAY_IRQ));
	assert_true(d.known & 1u << TASK_DELAY_COMPACT);
}

static void test_struct_refused(void **state)
{
	(void)state;
	uint8_t b[600];
	struct task_delays d = {.version = 99};
	fake_stats(b, 600, 15);
	assert_int_equal(parse_taskstats_struct(b, 600, &d), -EPROTO);
	fake_stats(b, 600, 0);
	assert_int_equal(parse_taskstats_struct(b, 600, &d), -EBADMSG);
	fake_stats(b, 600, 14);
	assert_int_equal(parse_taskstats_struct(b, 63, &d), -EBADMSG);
	assert_int_equal(d.version, 99); /* untouched */
}

/* Appends an attribute (header, payload, padding) at *at. */
static void put_attr(uint8_t *buf, size_t *at, uint16_t type, const void *data, size_t len)
{
	struct nlattr na = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type};
	memcpy(buf + *at, &na, sizeof(na));
	if (len)
		memcpy(buf + *at + NLA_HDRLEN, data, len);
	*at += NLA_ALIGN(NLA_HDRLEN + len);
}

/* A reply as the kernel sends it for a thread group: netlink and generic headers, then
 * AGGR_TGID { TGID, STATS }. Its length. */
static size_t fake_reply(uint8_t *msg, uint32_t seq, uint16_t version)
{
	uint8_t stats[432], nested[600];
	size_t n = 0, at = NLMSG_HDRLEN + GENL_HDRLEN;
	uint32_t tgid = 4242;
	fake_stats(stats, sizeof(stats), version);
	put_attr(nested, &n, TASKSTATS_TYPE_TGID, &tgid, sizeof(tgid));
	put_attr(nested, &n, TASKSTATS_TYPE_STATS, stats, sizeof(stats));
	memset(msg, 0, at);
	put_attr(msg, &at, TASKSTATS_TYPE_AGGR_TGID | NLA_F_NESTED, nested, n);
	struct nlmsghdr nh = {.nlmsg_len = (uint32_t)at, .nlmsg_type = 0x17, .nlmsg_seq = seq};
	memcpy(msg, &nh, sizeof(nh));
	return at;
}

static void test_reply(void **state)
{
	(void)state;
	uint8_t msg[1024];
	size_t len = fake_reply(msg, 7, 14);
	const uint8_t *attrs = NULL;
	size_t alen = 0;
	struct task_delays d;
	assert_int_equal(genl_reply(msg, len, 8, &attrs, &alen), -EAGAIN); /* another request's */
	assert_null(attrs);
	assert_int_equal(genl_reply(msg, len, 7, &attrs, &alen), 0);
	assert_int_equal(parse_taskstats_reply(attrs, alen, &d), 0);
	assert_int_equal(d.count[TASK_DELAY_SWAPIN], 3);
	/* cut at every byte: refused, never read past the end */
	for (size_t cut = 0; cut < len; cut++) {
		int r = genl_reply(msg, cut, 7, &attrs, &alen);
		assert_int_equal(r, -EBADMSG);
	}
	/* the attributes cut short: no statistics found */
	assert_int_equal(genl_reply(msg, len, 7, &attrs, &alen), 0);
	for (size_t cut = 0; cut < alen - 64; cut += 13)
		assert_int_equal(parse_taskstats_reply(attrs, cut, &d), -EBADMSG);
}

static void test_error_and_request(void **state)
{
	(void)state;
	uint8_t msg[64] = {0};
	struct nlmsghdr nh = {.nlmsg_len = NLMSG_HDRLEN + sizeof(struct nlmsgerr), .nlmsg_type = NLMSG_ERROR,
			      .nlmsg_seq = 3};
	struct nlmsgerr e = {.error = -ESRCH};
	memcpy(msg, &nh, sizeof(nh));
	memcpy(msg + NLMSG_HDRLEN, &e, sizeof(e));
	const uint8_t *attrs;
	size_t alen;
	assert_int_equal(genl_reply(msg, nh.nlmsg_len, 3, &attrs, &alen), -ESRCH);
	e.error = 0;
	memcpy(msg + NLMSG_HDRLEN, &e, sizeof(e));
	assert_int_equal(genl_reply(msg, nh.nlmsg_len, 3, &attrs, &alen), -ENODATA);

	uint8_t req[64];
	uint32_t pid = 99;
	ssize_t n = genl_request(req, sizeof(req), 0x17, TASKSTATS_CMD_GET, 1, 5, TASKSTATS_CMD_ATTR_PID, &pid, 4);
	assert_int_equal(n, NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN + 4);
	struct nlmsghdr got;
	memcpy(&got, req, sizeof(got));
	assert_int_equal(got.nlmsg_len, n);
	assert_int_equal(got.nlmsg_type, 0x17);
	assert_int_equal(got.nlmsg_flags, NLM_F_REQUEST);
	assert_int_equal(got.nlmsg_seq, 5);
	assert_int_equal(req[NLMSG_HDRLEN], TASKSTATS_CMD_GET);
	struct genl_attr a;
	assert_int_equal(genl_attr_find(req + NLMSG_HDRLEN + GENL_HDRLEN, (size_t)n - NLMSG_HDRLEN - GENL_HDRLEN,
					TASKSTATS_CMD_ATTR_PID, &a),
			 0);
	assert_int_equal(a.len, 4);
	assert_memory_equal(a.data, &pid, 4);
	assert_int_equal(genl_request(req, 20, 0x17, 1, 1, 1, 1, &pid, 4), -ENOSPC);
	/* the controller's answer: the id as 16 bits, nothing else */
	uint8_t ctrl[32];
	size_t at = 0;
	uint16_t id = 0x17;
	put_attr(ctrl, &at, CTRL_ATTR_FAMILY_ID, &id, sizeof(id));
	uint16_t back = 0;
	assert_int_equal(genl_family_id(ctrl, at, &back), 0);
	assert_int_equal(back, 0x17);
	at = 0;
	put_attr(ctrl, &at, CTRL_ATTR_FAMILY_ID, &pid, sizeof(pid));
	assert_int_equal(genl_family_id(ctrl, at, &back), -EBADMSG);
}

static void *idle(void *arg)
{
	pid_t *tid = arg;
	*tid = (pid_t)syscall(SYS_gettid);
	usleep(300000);
	return NULL;
}

/* The running kernel answers for this process and one of its threads; a pid that does not
 * exist is -ESRCH. Root's only (the kernel's GENL_ADMIN_PERM). */
static void test_live_session(void **state)
{
	(void)state;
	struct taskstats_session s;
	int r = taskstats_open(&s);
	if (r == -ENOENT || r == -EPERM || r == -EPROTONOSUPPORT || getuid() != 0) {
		taskstats_close(&s);
		skip();
	}
	assert_int_equal(r, 0);
	struct task_delays d;
	r = taskstats_get(&s, getpid(), true, &d);
	if (r == -EPERM) {
		taskstats_close(&s);
		skip();
	}
	assert_int_equal(r, 0);
	assert_true(d.version >= 1);
	assert_true(d.known & 1u << TASK_DELAY_SWAPIN);
	pthread_t t;
	pid_t tid = 0;
	assert_int_equal(pthread_create(&t, NULL, idle, &tid), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	assert_int_equal(taskstats_get(&s, tid, false, &d), 0);
	pthread_join(t, NULL);
	assert_int_equal(taskstats_get(&s, 0x3fffffff, true, &d), -ESRCH);
	taskstats_close(&s);
	taskstats_close(&s); /* closing twice is fine */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_struct_versions),
		cmocka_unit_test(test_struct_refused),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_error_and_request),
		cmocka_unit_test(test_live_session),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
