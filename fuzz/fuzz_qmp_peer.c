/* libFuzzer target for io/peer/qmp.c, the QMP client, against a fuzzed peer: what a forged QEMU's
 * monitor may send (REVIEW S-H1). The input is every byte the peer sends, written into one end of a
 * socketpair that stands for the connection (qmp.c's socket() and connect() are wrapped at link
 * time, fuzz/CMakeLists.txt), whose write side is then shut; a visit as vmhost makes one follows
 * (qmp_open, then the KVM reader's, --guest's and --io's calls until the first error), three times:
 * expecting no listener in particular, the right one (this process, which made the pair) and
 * another. Invariants:
 * a listener that is not the one expected is -EXDEV before the client receives or sends a byte;
 * expecting the right listener changes nothing against checking none; every result is 0 or one of
 * the errors qmp.h lists; *ret is untouched on failure; a reply has its "return"; an error reply's
 * class and description end inside their buffers; a visit skips at most QMP_MAX_VISIT_EVENTS
 * events (and one more to say so) and qmp_new_visit starts the count again; what the client sends
 * is whole QMP commands, one JSON object with "execute" a line.
 * Build and run: fuzz/README.md (tests/cli/fuzz_smoke.sh runs it in make check). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "fuzz.h"
#include "io/peer/qmp.h"
#include "parse/json.h"

/* The connection of a run: socketpair() makes it before qmp_open, whose socket() gets the client's
 * end (prepared), the peer's end staying here. */
static int prepared = -1, client = -1, peer = -1;
static size_t client_recvs, client_sends;

int __real_socket(int domain, int type, int protocol);
int __real_connect(int fd, const struct sockaddr *addr, socklen_t len);
ssize_t __real_recv(int fd, void *buf, size_t len, int flags);
ssize_t __real_send(int fd, const void *buf, size_t len, int flags);

int __wrap_socket(int domain, int type, int protocol)
{
	if (prepared < 0 || domain != AF_UNIX)
		return __real_socket(domain, type, protocol);
	client = prepared;
	prepared = -1;
	return client;
}

int __wrap_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	return fd == client ? 0 : __real_connect(fd, addr, len);
}

ssize_t __wrap_recv(int fd, void *buf, size_t len, int flags)
{
	client_recvs += fd == client;
	return __real_recv(fd, buf, len, flags);
}

ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
	client_sends += fd == client;
	return __real_send(fd, buf, len, flags);
}

/* The pair for the next qmp_open, and the peer's bytes in it (as many as its buffer takes), then
 * the end of them: the client reads those, then end of file. */
static void prepare(const uint8_t *data, size_t size)
{
	int sv[2];
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) == 0);
	prepared = sv[0];
	peer = sv[1];
	client = -1;
	client_recvs = client_sends = 0;
	while (size > 0) {
		ssize_t n = __real_send(peer, data, size, MSG_NOSIGNAL);
		if (n <= 0)
			break; /* the socket's buffer is full: the peer sent that much */
		data += n;
		size -= (size_t)n;
	}
	shutdown(peer, SHUT_WR);
}

/* What the client sent: whole lines, each one JSON object naming the command it executes. */
static void check_commands_sent(void)
{
	static char buf[1 << 16];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) && (n = __real_recv(peer, buf + len, sizeof(buf) - len, 0)) > 0)
		len += (size_t)n;
	FUZZ_CHECK(len < sizeof(buf));
	for (char *line = buf, *end; line < buf + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(buf + len - line));
		FUZZ_CHECK(end);
		struct json_doc d;
		FUZZ_CHECK(json_parse(line, (size_t)(end - line), &d) == 0);
		FUZZ_CHECK(json_root(&d)->type == JSON_OBJECT && json_get(&d, json_root(&d), "execute"));
		json_free(&d);
	}
}

/* The errors qmp.h lists for qmp_open and qmp_call against a peer (not those of a path). */
static bool listed_error(int r)
{
	switch (-r) {
	case EBUSY: case EPROTO: case ECONNRESET: case EPIPE: case EBADMSG: case ETIMEDOUT: case EMSGSIZE:
	case EMLINK: case EXDEV: case EREMOTEIO: case ENOMEM:
		return true;
	}
	return false;
}

static const char *const CALLS[][2] = {
	{"query-stats-schemas", "{\"provider\":\"kvm\"}"},
	{"query-stats", "{\"target\":\"vm\",\"providers\":[{\"provider\":\"kvm\"}]}"},
	{"query-stats", "{\"target\":\"vcpu\",\"providers\":[{\"provider\":\"kvm\"}]}"},
	{"query-cpus-fast", NULL},
	{"query-balloon", NULL},
	{"qom-get", "{\"path\":\"/machine/peripheral/balloon0\",\"property\":\"guest-stats\"}"},
	{"query-blockstats", NULL},
};

/* The visit's calls on an open session until the first error; the last result. */
static int visit(struct qmp *q)
{
	int r = 0;
	for (size_t i = 0; i < sizeof(CALLS) / sizeof(CALLS[0]) && r == 0; i++) {
		if (i == 4) { /* a new visit on the same session, as bench alloc's own QEMU has */
			qmp_new_visit(q, 1000);
			FUZZ_CHECK(qmp_events_skipped(q) == 0);
		}
		struct json_doc d;
		const struct json_value *ret = NULL;
		r = qmp_call(q, CALLS[i][0], CALLS[i][1], &d, &ret);
		FUZZ_CHECK(qmp_events_skipped(q) <= QMP_MAX_VISIT_EVENTS + 1);
		if (r == 0) {
			FUZZ_CHECK(ret);
			json_free(&d);
		} else {
			FUZZ_CHECK(listed_error(r) && r != -EXDEV && r != -EBUSY);
			FUZZ_CHECK(fuzz_terminated(qmp_error_class(q), 64) && fuzz_terminated(qmp_error_desc(q), 512));
		}
	}
	return r;
}

/* One visit to a peer that sends data, expecting listener: qmp_open's result; the calls' after it
 * in *ret_visit (0 when the open failed). */
static int run(const uint8_t *data, size_t size, pid_t listener, int *ret_visit)
{
	prepare(data, size);
	struct qmp *sentinel = (struct qmp *)&prepared, *q = sentinel;
	pid_t who = -1;
	int r = qmp_open("/nonexistent/qmp.sock", listener, 1000, &q, &who);
	FUZZ_CHECK(client >= 0 && prepared < 0); /* the pair was qmp.c's socket */
	FUZZ_CHECK(r == 0 || listed_error(r));
	FUZZ_CHECK(r == 0 ? q != sentinel : q == sentinel);
	FUZZ_CHECK(who == getpid()); /* the pair's maker: this process */
	if (r == -EXDEV)
		FUZZ_CHECK(client_recvs == 0 && client_sends == 0);
	*ret_visit = 0;
	if (r == 0) {
		*ret_visit = visit(q);
		qmp_close(q);
	}
	check_commands_sent();
	close(peer);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int visit_other, visit_any, visit_right;
	FUZZ_CHECK(run(data, size, getpid() + 1, &visit_other) == -EXDEV);
	int any = run(data, size, 0, &visit_any);
	int right = run(data, size, getpid(), &visit_right);
	/* The same peer, the same outcome, unless the clock ran out in one of them. */
	if (any != -ETIMEDOUT && right != -ETIMEDOUT && visit_any != -ETIMEDOUT && visit_right != -ETIMEDOUT)
		FUZZ_CHECK(any == right && visit_any == visit_right);
	return 0;
}
