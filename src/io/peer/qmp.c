#include "io/peer/qmp.h"

#include "io/clock.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct qmp {
	int fd;
	int64_t deadline_ms; /* CLOCK_MONOTONIC; the visit's, for every read and write of it */
	char *buf;           /* received bytes; buf[0..consumed) is the last message handed out */
	size_t len, cap, consumed;
	size_t received;     /* bytes received in this visit: at most QMP_MAX_VISIT_BYTES */
	struct json_framer framer;
	unsigned next_id, version, events;
	char error_class[64];
	char error_desc[512];
};

static int64_t now_ms(void) { return (int64_t)(clock_monotonic_seconds() * 1000); }

/* Waits for fd to be ready until the deadline: 0, -ETIMEDOUT, or a negative errno. */
static int wait_fd(struct qmp *q, short events)
{
	for (;;) {
		int64_t left = q->deadline_ms - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = q->fd, .events = events};
		int n = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int send_all(struct qmp *q, const char *text, size_t len)
{
	while (len) {
		ssize_t n = send(q->fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				int r = wait_fd(q, POLLOUT);
				if (r < 0)
					return r;
				continue;
			}
			return errno == ECONNRESET || errno == EPIPE ? -EPIPE : -errno;
		}
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads the next top-level JSON value into *ret (text in q->buf, valid until the next read). */
static int read_message(struct qmp *q, struct json_doc *ret)
{
	if (q->consumed) {
		memmove(q->buf, q->buf + q->consumed, q->len - q->consumed);
		q->len -= q->consumed;
		q->consumed = 0;
		json_framer_reset(&q->framer);
	}
	for (;;) {
		/* Checked on every turn, not only when recv would block: a peer that never stops
		 * sending must not keep the visit going past its deadline. */
		if (now_ms() >= q->deadline_ms)
			return -ETIMEDOUT;
		ssize_t end = json_framer_feed(&q->framer, q->buf, q->len);
		if (end < 0)
			return -EBADMSG;
		if (end > 0) {
			q->consumed = (size_t)end;
			int r = json_parse(q->buf + q->framer.start, (size_t)end - q->framer.start, ret);
			return r == -ENOMEM ? r : r < 0 ? -EBADMSG : 0;
		}
		if (q->len >= QMP_MAX_REPLY)
			return -EMSGSIZE;
		if (q->len + 4096 > q->cap) {
			size_t cap = q->cap ? q->cap * 2 : 16384;
			if (cap > QMP_MAX_REPLY + 4096)
				cap = QMP_MAX_REPLY + 4096;
			char *bigger = realloc(q->buf, cap);
			if (!bigger)
				return -ENOMEM;
			q->buf = bigger;
			q->cap = cap;
		}
		if (q->received >= QMP_MAX_VISIT_BYTES)
			return -EMSGSIZE;
		size_t room = q->cap - q->len;
		if (room > QMP_MAX_VISIT_BYTES - q->received)
			room = QMP_MAX_VISIT_BYTES - q->received;
		ssize_t n = recv(q->fd, q->buf + q->len, room, MSG_DONTWAIT);
		if (n > 0) {
			q->len += (size_t)n;
			q->received += (size_t)n;
			continue;
		}
		if (n == 0)
			return q->framer.depth > 0 ? -ECONNRESET : -EPIPE;
		if (errno == EINTR)
			continue;
		if (errno == ECONNRESET)
			return -ECONNRESET;
		if (errno != EAGAIN)
			return -errno;
		int r = wait_fd(q, POLLIN);
		if (r < 0)
			return r;
	}
}

static int connect_unix(const char *path, int *ret_fd)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	size_t len = strlen(path);
	if (len == 0)
		return -ENOENT;
	if (len >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, len + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int r;
	do
		r = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		int e = errno;
		close(fd);
		/* A full listen backlog: the server is not accepting, like a held monitor. */
		return e == EAGAIN ? -EBUSY : -e;
	}
	*ret_fd = fd;
	return 0;
}

/* The process that listens on the connected socket (SO_PEERCRED: the one that called listen()),
 * 0 when the kernel cannot say. */
static pid_t listener_pid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred))
		return 0;
	return cred.pid;
}

static unsigned greeting_version(const struct json_doc *d)
{
	const struct json_value *qemu = json_get(d, json_get(d, json_get(d, json_root(d), "QMP"), "version"), "qemu");
	uint64_t major, minor, micro;
	if (json_as_u64(d, json_get(d, qemu, "major"), &major) < 0 || json_as_u64(d, json_get(d, qemu, "minor"), &minor) < 0 ||
	    json_as_u64(d, json_get(d, qemu, "micro"), &micro) < 0 || major > 1000 || minor > 99 || micro > 99)
		return 0;
	return (unsigned)(major * 10000 + minor * 100 + micro);
}

int qmp_open(const char *path, pid_t listener, int timeout_ms, struct qmp **ret, pid_t *ret_listener)
{
	if (ret_listener)
		*ret_listener = 0;
	struct qmp *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->fd = -1;
	q->deadline_ms = now_ms() + (timeout_ms > 0 ? timeout_ms : 1000);
	int r = connect_unix(path, &q->fd);
	if (r < 0)
		goto fail;
	/* Nothing is read from nor sent to a socket whose listener is not the process expected. */
	pid_t peer = listener_pid(q->fd);
	if (ret_listener)
		*ret_listener = peer;
	if (listener > 0 && peer != listener) {
		r = -EXDEV;
		goto fail;
	}
	struct json_doc greeting;
	r = read_message(q, &greeting);
	if (r == -ETIMEDOUT)
		r = -EBUSY; /* connected into the backlog: QEMU serves someone else */
	if (r < 0)
		goto fail;
	bool is_qmp = json_get(&greeting, json_root(&greeting), "QMP") != NULL;
	q->version = greeting_version(&greeting);
	json_free(&greeting);
	if (!is_qmp) {
		r = -EPROTO;
		goto fail;
	}
	struct json_doc reply;
	const struct json_value *value;
	r = qmp_call(q, "qmp_capabilities", NULL, &reply, &value);
	if (r < 0)
		goto fail;
	json_free(&reply);
	*ret = q;
	return 0;
fail:
	qmp_close(q);
	return r;
}

static bool command_name_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

/* Checks that the arguments are one JSON object. */
static bool arguments_ok(const char *json)
{
	struct json_doc d;
	if (json_parse(json, strlen(json), &d) < 0)
		return false;
	bool ok = json_root(&d)->type == JSON_OBJECT;
	json_free(&d);
	return ok;
}

static void copy_string(const struct json_doc *d, const struct json_value *v, char *buf, size_t cap)
{
	if (json_as_string(d, v, buf, cap) == -EINVAL)
		snprintf(buf, cap, "?");
}

int qmp_call(struct qmp *q, const char *command, const char *arguments_json, struct json_doc *ret_doc,
	     const struct json_value **ret_return)
{
	if (!q || !command_name_ok(command) || (arguments_json && !arguments_ok(arguments_json)))
		return -EINVAL;
	unsigned id = ++q->next_id;
	size_t alen = arguments_json ? strlen(arguments_json) : 0;
	size_t cap = strlen(command) + alen + 64;
	char *text = malloc(cap);
	if (!text)
		return -ENOMEM;
	int n = arguments_json ? snprintf(text, cap, "{\"execute\":\"%s\",\"arguments\":%s,\"id\":%u}\n", command,
					  arguments_json, id)
			       : snprintf(text, cap, "{\"execute\":\"%s\",\"id\":%u}\n", command, id);
	int r = send_all(q, text, (size_t)n);
	free(text);
	if (r < 0)
		return r;
	for (;;) {
		struct json_doc d;
		if ((r = read_message(q, &d)) < 0)
			return r;
		const struct json_value *root = json_root(&d);
		if (root->type != JSON_OBJECT) {
			json_free(&d);
			return -EPROTO;
		}
		if (json_get(&d, root, "event")) {
			json_free(&d);
			if (++q->events > QMP_MAX_VISIT_EVENTS)
				return -EMLINK;
			continue;
		}
		const struct json_value *idv = json_get(&d, root, "id");
		uint64_t got;
		if (idv && (json_as_u64(&d, idv, &got) < 0 || got != id)) {
			json_free(&d);
			return -EPROTO;
		}
		const struct json_value *value = json_get(&d, root, "return");
		if (value) {
			*ret_doc = d;
			*ret_return = value;
			return 0;
		}
		const struct json_value *error = json_get(&d, root, "error");
		if (error) {
			copy_string(&d, json_get(&d, error, "class"), q->error_class, sizeof(q->error_class));
			copy_string(&d, json_get(&d, error, "desc"), q->error_desc, sizeof(q->error_desc));
			json_free(&d);
			return -EREMOTEIO;
		}
		json_free(&d);
		return -EPROTO;
	}
}

const char *qmp_error_class(const struct qmp *q)
{
	return q ? q->error_class : "";
}

const char *qmp_error_desc(const struct qmp *q)
{
	return q ? q->error_desc : "";
}

unsigned qmp_qemu_version(const struct qmp *q)
{
	return q ? q->version : 0;
}

void qmp_new_visit(struct qmp *q, int timeout_ms)
{
	q->deadline_ms = now_ms() + (timeout_ms > 0 ? timeout_ms : 1000);
	q->received = 0;
	q->events = 0;
}

unsigned qmp_events_skipped(const struct qmp *q)
{
	return q ? q->events : 0;
}

void qmp_close(struct qmp *q)
{
	if (!q)
		return;
	if (q->fd >= 0)
		close(q->fd);
	free(q->buf);
	free(q);
}

void qmp_open_why(int err, pid_t listener, char *buf, size_t cap)
{
	if (err == -EXDEV && listener > 0)
		snprintf(buf, cap, "the QMP socket's listener is pid %d, not the VM: nothing sent to it", (int)listener);
	else if (err == -EXDEV)
		snprintf(buf, cap, "the QMP socket's listener is not the VM (its pid unknown): nothing sent to it");
	else
		snprintf(buf, cap, "%s", qmp_strerror(err));
}

const char *qmp_strerror(int err)
{
	switch (-err) {
	case ENOENT: return "no such QMP socket";
	case ECONNREFUSED: return "nothing listens on the QMP socket (QEMU gone, stale socket file)";
	case EACCES:
	case EPERM: return "permission denied on the QMP socket";
	case ENOTSOCK: return "not a socket";
	case ENAMETOOLONG: return "QMP socket path too long for a unix socket";
	case EBUSY: return "QMP busy: no greeting in time (another client holds the monitor, or QEMU is stuck)";
	case EPROTO: return "not a QMP server (unexpected greeting or reply)";
	case ECONNRESET: return "QEMU closed the QMP connection mid-reply";
	case EPIPE: return "QEMU closed the QMP connection";
	case EBADMSG: return "malformed JSON from QMP";
	case ETIMEDOUT: return "QMP reply timed out";
	case EMSGSIZE: return "QMP reply too big (or more than a visit may read)";
	case EMLINK: return "QMP events without end: more asynchronous events than a visit skips";
	case EXDEV: return "the QMP socket's listener is not the VM process: nothing sent to it";
	case EREMOTEIO: return "QMP error reply";
	case EINVAL: return "bad QMP command or arguments";
	}
	return strerror(-err);
}
