/* The taskstats family's socket: requests out, replies in (taskstats.h). */
#include "io/peer/taskstats.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "parse/netlink/genl.h"

/* A reply holds the group's and its id's attributes around a struct taskstats of a few hundred
 * bytes (its later versions a little more): room for any of them. */
#define REPLY_MAX 8192

/* Sends one request and reads messages until the reply to it; its attributes are copied into
 * reply (cap bytes) and their length returned, or a negative errno. */
static ssize_t ask(struct taskstats_session *s, uint16_t family, uint8_t cmd, uint16_t attr, const void *value,
		   size_t len, uint8_t *reply, size_t cap)
{
	uint8_t req[128];
	uint32_t seq = ++s->seq;
	ssize_t n = genl_request(req, sizeof(req), family, cmd, 1, seq, attr, value, len);
	if (n < 0)
		return n;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	if (sendto(s->fd, req, (size_t)n, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	uint8_t buf[REPLY_MAX];
	for (;;) {
		ssize_t got = recv(s->fd, buf, sizeof(buf), 0);
		if (got < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : errno == EINTR ? -EINTR : -errno;
		const uint8_t *attrs;
		size_t alen;
		int r = genl_reply(buf, (size_t)got, seq, &attrs, &alen);
		if (r == -EAGAIN)
			continue; /* the late answer to an earlier request that timed out */
		if (r < 0)
			return r;
		if (alen > cap)
			return -EMSGSIZE;
		memcpy(reply, attrs, alen);
		return (ssize_t)alen;
	}
}

int taskstats_open(struct taskstats_session *ret)
{
	*ret = (struct taskstats_session){.fd = -1};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	struct timeval limit = {.tv_sec = 1};
	struct sockaddr_nl self = {.nl_family = AF_NETLINK};
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit)) < 0 ||
	    bind(fd, (struct sockaddr *)&self, sizeof(self)) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	struct taskstats_session s = {.fd = fd};
	uint8_t reply[REPLY_MAX];
	ssize_t n = ask(&s, GENL_CTRL_FAMILY, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME,
			sizeof(TASKSTATS_GENL_NAME), reply, sizeof(reply));
	int r = n < 0 ? (int)n : genl_family_id(reply, (size_t)n, &s.family);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret = s;
	return 0;
}

int taskstats_get(struct taskstats_session *s, pid_t id, bool whole_group, struct task_delays *ret)
{
	uint32_t which = (uint32_t)id;
	uint8_t reply[REPLY_MAX];
	ssize_t n = ask(s, s->family, TASKSTATS_CMD_GET, whole_group ? TASKSTATS_CMD_ATTR_TGID : TASKSTATS_CMD_ATTR_PID,
			&which, sizeof(which), reply, sizeof(reply));
	if (n < 0)
		return (int)n;
	return parse_taskstats_reply(reply, (size_t)n, ret);
}

void taskstats_close(struct taskstats_session *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
