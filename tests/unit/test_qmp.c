/* io/qmp against a scripted peer on a real unix socket: every failure has its own errno and line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakeqmp.h"
#include "io/peer/qmp.h"

/* Runs one session against the steps: open, one call of query-status; returns the first error. */
static int session(const struct fake_step *steps, size_t n, int timeout_ms, struct fake_qmp *f, char *cls, char *desc)
{
	assert_int_equal(fake_qmp_start(f, steps, n), 0);
	struct qmp *q;
	int r = qmp_open(f->path, getpid(), timeout_ms, &q, NULL);
	if (r == 0) {
		struct json_doc d;
		const struct json_value *v;
		r = qmp_call(q, "query-status", NULL, &d, &v);
		if (r == 0) {
			assert_true(json_string_is(&d, json_get(&d, v, "status"), "running"));
			json_free(&d);
		}
		if (cls)
			snprintf(cls, 64, "%s", qmp_error_class(q));
		if (desc)
			snprintf(desc, 256, "%s", qmp_error_desc(q));
		qmp_close(q);
	}
	fake_qmp_stop(f);
	return r;
}

#define RUNNING "{\"return\": {\"status\": \"running\", \"singlestep\": false, \"running\": true}, \"id\": 2}\r\n"
#define EVENT "{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, \"event\": \"RTC_CHANGE\", \"data\": {\"offset\": 0}}\r\n"

static void test_good_session(void **state)
{
	(void)state;
	const struct fake_step steps[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', EVENT},
					  {'s', EVENT}, {'s', RUNNING}};
	struct fake_qmp f;
	assert_int_equal(fake_qmp_start(&f, steps, 7), 0);
	struct qmp *q;
	assert_int_equal(qmp_open(f.path, getpid(), 1000, &q, NULL), 0);
	assert_int_equal(qmp_qemu_version(q), 70222);
	struct json_doc d;
	const struct json_value *v;
	assert_int_equal(qmp_call(q, "query-status", NULL, &d, &v), 0);
	assert_true(json_string_is(&d, json_get(&d, v, "status"), "running"));
	assert_int_equal(qmp_events_skipped(q), 2);
	json_free(&d);
	qmp_close(q);
	fake_qmp_stop(&f);
	/* the peer read exactly two lines (capabilities, the command) and saw the client close */
	assert_int_equal(f.lines_read, 2);
}

static void test_pieces(void **state)
{
	(void)state;
	/* A reply in small pieces with a pause between: framed by its braces, not by one read. */
	const struct fake_step steps[] = {{'s', "{\"QMP\": {\"version\""}, {'w', "20"}, {'s', ": {}}}\r\n"}, {'r', 0},
					  {'s', FAKE_OK}, {'r', 0}, {'s', "{\"return\": {\"status\": \"run"}, {'w', "20"},
					  {'s', "ning\\u0000x\"}}\r\n"}};
	struct fake_qmp f;
	assert_int_equal(fake_qmp_start(&f, steps, 9), 0);
	struct qmp *q;
	assert_int_equal(qmp_open(f.path, getpid(), 1000, &q, NULL), 0);
	assert_int_equal(qmp_qemu_version(q), 0);
	struct json_doc d;
	const struct json_value *v;
	assert_int_equal(qmp_call(q, "query-status", NULL, &d, &v), 0);
	char s[32];
	assert_int_equal(json_as_string(&d, json_get(&d, v, "status"), s, sizeof(s)), 9);
	assert_memory_equal(s, "running\0x", 9);
	json_free(&d);
	qmp_close(q);
	fake_qmp_stop(&f);
}

static void test_failures(void **state)
{
	(void)state;
	struct fake_qmp f;
	char cls[64], desc[256];
	/* busy: connected into the backlog, never greeted */
	const struct fake_step never[] = {{'x', 0}};
	assert_int_equal(session(never, 1, 200, &f, NULL, NULL), -EBUSY);
	/* accepted but silent: the same */
	const struct fake_step silent[] = {{'w', "500"}};
	assert_int_equal(session(silent, 1, 200, &f, NULL, NULL), -EBUSY);
	/* error reply */
	const struct fake_step error[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0},
		{'s', "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command query-status has not been found\"}, \"id\": 2}\r\n"}};
	assert_int_equal(session(error, 5, 1000, &f, cls, desc), -EREMOTEIO);
	assert_string_equal(cls, "CommandNotFound");
	assert_string_equal(desc, "The command query-status has not been found");
	/* malformed JSON */
	const struct fake_step bad[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', "{\"return\": [1,,2]}\r\n"}};
	assert_int_equal(session(bad, 5, 1000, &f, NULL, NULL), -EBADMSG);
	const struct fake_step bad_greeting[] = {{'s', "hello\r\n"}};
	assert_int_equal(session(bad_greeting, 1, 1000, &f, NULL, NULL), -EBADMSG);
	/* cut short and closed: mid-reply */
	const struct fake_step cut[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', "{\"return\": [1, 2"}, {'c', 0}};
	assert_int_equal(session(cut, 6, 1000, &f, NULL, NULL), -ECONNRESET);
	/* cut short, left open: a timeout */
	const struct fake_step stuck[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', "{\"return\": [1, 2"}, {'w', "1000"}};
	assert_int_equal(session(stuck, 6, 200, &f, NULL, NULL), -ETIMEDOUT);
	/* closed before replying */
	const struct fake_step closed[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'c', 0}};
	assert_int_equal(session(closed, 5, 1000, &f, NULL, NULL), -EPIPE);
	/* not a QMP greeting; a reply of neither kind; a reply to another id */
	const struct fake_step notqmp[] = {{'s', "{\"hello\": 1}\r\n"}};
	assert_int_equal(session(notqmp, 1, 1000, &f, NULL, NULL), -EPROTO);
	const struct fake_step odd[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', "{\"answer\": 42}\r\n"}};
	assert_int_equal(session(odd, 5, 1000, &f, NULL, NULL), -EPROTO);
	const struct fake_step other_id[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', "{\"return\": {}, \"id\": 7}\r\n"}};
	assert_int_equal(session(other_id, 5, 1000, &f, NULL, NULL), -EPROTO);
	/* every reason is its own line */
	static const int errs[] = {ENOENT, ECONNREFUSED, EACCES, EBUSY, EPROTO, ECONNRESET, EPIPE, EBADMSG, ETIMEDOUT, EMSGSIZE, EREMOTEIO};
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		for (size_t j = 0; j < i; j++)
			if (!((errs[i] == EACCES) && (errs[j] == EPERM)))
				assert_string_not_equal(qmp_strerror(-errs[i]), qmp_strerror(-errs[j]));
}

static void test_too_big(void **state)
{
	(void)state;
	size_t n = QMP_MAX_REPLY + 1024;
	char *big = malloc(n + 1);
	assert_non_null(big);
	memcpy(big, "{\"return\": [", 12);
	for (size_t i = 12; i < n; i += 2)
		memcpy(big + i, "1,", 2);
	big[n] = '\0';
	const struct fake_step steps[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', big}};
	struct fake_qmp f;
	assert_int_equal(session(steps, 5, 5000, &f, NULL, NULL), -EMSGSIZE);
	free(big);
}

static void test_sockets(void **state)
{
	(void)state;
	struct qmp *q = NULL;
	assert_int_equal(qmp_open("/nonexistent/vmhost/qmp.sock", 0, 200, &q, NULL), -ENOENT);
	assert_null(q);
	char longpath[200];
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(qmp_open(longpath, 0, 200, &q, NULL), -ENAMETOOLONG);
	/* a stale socket: bound, then its listener gone */
	char dir[] = "/tmp/vmhost-qmp.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/stale.sock", dir);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	close(s);
	assert_int_equal(qmp_open(path, 0, 200, &q, NULL), -ECONNREFUSED);
	/* permission denied, as an unprivileged user would see it */
	if (geteuid() == 0) {
		pid_t child = fork();
		if (child == 0) {
			chmod(dir, 0700);
			if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
				_exit(2);
			_exit(qmp_open(path, 0, 200, &q, NULL) == -EACCES ? 0 : 1);
		}
		int status;
		waitpid(child, &status, 0);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	unlink(path);
	rmdir(dir);
	/* bad command names and arguments never reach the socket */
	assert_int_equal(qmp_call(NULL, "query-status", NULL, NULL, NULL), -EINVAL);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	const struct fake_step steps[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}};
	struct fake_qmp f;
	assert_int_equal(fake_qmp_start(&f, steps, 3), 0);
	struct qmp *q;
	assert_int_equal(qmp_open(f.path, getpid(), 1000, &q, NULL), 0);
	struct json_doc d;
	const struct json_value *v;
	assert_int_equal(qmp_call(q, "query\"status", NULL, &d, &v), -EINVAL);
	assert_int_equal(qmp_call(q, "query-stats", "[1]", &d, &v), -EINVAL);
	assert_int_equal(qmp_call(q, "query-stats", "{\"target\":", &d, &v), -EINVAL);
	qmp_close(q);
	fake_qmp_stop(&f);
	assert_int_equal(f.lines_read, 1); /* only qmp_capabilities was sent */
}

/* The visit's time counts from qmp_open, not from each call: a peer that answers every call just
 * before a per-call deadline (here 60% of it, twice) runs the visit out. */
static void test_deadline_per_visit(void **state)
{
	(void)state;
	const struct fake_step steps[] = {{'s', FAKE_GREETING}, {'r', 0}, {'w', "180"}, {'s', FAKE_OK},
					  {'r', 0}, {'w', "180"}, {'s', RUNNING}};
	struct fake_qmp f;
	assert_int_equal(session(steps, 7, 300, &f, NULL, NULL), -ETIMEDOUT);
}

/* A peer that sends events without end: the call ends at the visit's deadline or its cap of events,
 * whichever comes first, never when the peer stops (it would go on for 20 s here). */
static void test_event_flood(void **state)
{
	(void)state;
	const struct fake_step steps[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'f', "20000"}};
	struct fake_qmp f;
	int r = session(steps, 5, 300, &f, NULL, NULL);
	assert_true(r == -EMLINK || r == -ETIMEDOUT);
	assert_true(strlen(qmp_strerror(-EMLINK)) > 0);
}

/* Nothing is read from nor written to a socket whose listener is another process: the peer (its
 * listener is this test's process) reads no line, and the listener's pid is said. */
static void test_other_listener(void **state)
{
	(void)state;
	const struct fake_step steps[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}};
	struct fake_qmp f;
	assert_int_equal(fake_qmp_start(&f, steps, 3), 0);
	struct qmp *q = NULL;
	pid_t listener = 0;
	assert_int_equal(qmp_open(f.path, getpid() + 1, 1000, &q, &listener), -EXDEV);
	assert_null(q);
	assert_int_equal(listener, getpid());
	fake_qmp_stop(&f);
	assert_int_equal(f.lines_read, 0);
	assert_non_null(strstr(qmp_strerror(-EXDEV), "not the VM"));
}

/* A new visit on an open session gets its time anew: a benchmark's own QEMU quits after its run. */
static void test_new_visit(void **state)
{
	(void)state;
	const struct fake_step steps[] = {{'s', FAKE_GREETING}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', RUNNING}};
	struct fake_qmp f;
	assert_int_equal(fake_qmp_start(&f, steps, 5), 0);
	struct qmp *q;
	assert_int_equal(qmp_open(f.path, getpid(), 200, &q, NULL), 0);
	usleep(300 * 1000); /* the first visit's time is up */
	qmp_new_visit(q, 1000);
	struct json_doc d;
	const struct json_value *v;
	assert_int_equal(qmp_call(q, "query-status", NULL, &d, &v), 0);
	json_free(&d);
	qmp_close(q);
	fake_qmp_stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_session), cmocka_unit_test(test_pieces), cmocka_unit_test(test_failures),
		cmocka_unit_test(test_too_big),      cmocka_unit_test(test_sockets), cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_deadline_per_visit), cmocka_unit_test(test_event_flood),
		cmocka_unit_test(test_other_listener),     cmocka_unit_test(test_new_visit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
