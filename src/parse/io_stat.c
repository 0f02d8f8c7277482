#include "parse/io_stat.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const struct kv_field proc_io_fields[] = {
	{"rchar", offsetof(struct proc_io, rchar), false},
	{"wchar", offsetof(struct proc_io, wchar), false},
	{"read_bytes", offsetof(struct proc_io, read_bytes), false},
	{"write_bytes", offsetof(struct proc_io, write_bytes), false},
};
const struct kv_table proc_io_keys = {proc_io_fields, sizeof(proc_io_fields) / sizeof(proc_io_fields[0])};

int parse_proc_io(const char *buf, size_t len, struct proc_io *ret)
{
	struct proc_io io = {0};
	int n = parse_kv(buf, len, proc_io_keys.fields, proc_io_keys.n, &io);
	if (!io.read_bytes.known && !io.write_bytes.known)
		return -EINVAL;
	*ret = io;
	return n;
}

/* "key=N" at word into *sum (when key matches): 1 taken, 0 another key, -EINVAL not a number. */
static int take_field(const char *word, size_t wl, const char *key, int64_t *sum)
{
	size_t kl = strlen(key);
	if (wl <= kl + 1 || memcmp(word, key, kl) || word[kl] != '=')
		return 0;
	char num[24];
	size_t nl = wl - kl - 1;
	if (nl >= sizeof(num))
		return -EINVAL;
	memcpy(num, word + kl + 1, nl);
	num[nl] = '\0';
	int64_t v;
	if (parse_i64(num, &v) < 0 || v < 0 || *sum > INT64_MAX - v)
		return -EINVAL;
	*sum += v;
	return 1;
}

int parse_cgroup_io_stat(const char *buf, size_t len, struct cgroup_io *ret)
{
	static const char *const keys[] = {"rbytes", "wbytes", "rios", "wios"};
	int64_t sums[4] = {0};
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return -EINVAL;
		const char *w = memchr(p, ' ', (size_t)(nl - p)); /* past "MAJ:MIN" */
		while (w && w < nl) {
			while (w < nl && *w == ' ')
				w++;
			const char *we = w;
			while (we < nl && *we != ' ')
				we++;
			for (size_t k = 0; k < 4; k++)
				if (take_field(w, (size_t)(we - w), keys[k], &sums[k]) < 0)
					return -EINVAL;
			w = we;
		}
		p = nl + 1;
	}
	*ret = (struct cgroup_io){MAYBE(sums[0]), MAYBE(sums[1]), MAYBE(sums[2]), MAYBE(sums[3])};
	return 0;
}

int parse_blkio(const char *buf, size_t len, int64_t *ret_read, int64_t *ret_write)
{
	int64_t rd = 0, wr = 0;
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return -EINVAL;
		char line[128], dev[32], op[16];
		long long v;
		size_t l = (size_t)(nl - p);
		if (l >= sizeof(line))
			return -EINVAL;
		memcpy(line, p, l);
		line[l] = '\0';
		p = nl + 1;
		if (!strncmp(line, "Total ", 6))
			continue;
		if (sscanf(line, "%31s %15s %lld", dev, op, &v) != 3 || v < 0)
			return -EINVAL;
		if (!strcmp(op, "Read") && __builtin_add_overflow(rd, v, &rd))
			return -ERANGE; /* a sum past int64: never a wrapped number */
		if (!strcmp(op, "Write") && __builtin_add_overflow(wr, v, &wr))
			return -ERANGE;
	}
	*ret_read = rd;
	*ret_write = wr;
	return 0;
}

int parse_fdinfo_iff(const char *buf, size_t len, char *name, size_t cap)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le - p > 4 && !memcmp(p, "iff:", 4)) {
			const char *v = p + 4;
			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			size_t l = (size_t)(le - v);
			if (!nl || l == 0 || l >= cap)
				return -EINVAL;
			for (size_t i = 0; i < l; i++) /* what the kernel allows in an interface's name */
				if (v[i] == '\0' || v[i] == '/' || v[i] == ' ' || v[i] == '\t' || v[i] == ':')
					return -EINVAL;
			memcpy(name, v, l);
			name[l] = '\0';
			return 0;
		}
		p = le + 1;
	}
	return -ENOENT;
}

/* A device node's name under /dev as readlink of a process's fd gives it: "/dev/NAME", or "/NAME"
 * for an fd opened in a mount namespace that is gone, whose detached /dev's root is where the path
 * stops. NULL for any other path. */
static const char *dev_name(const char *target)
{
	if (!strncmp(target, "/dev/", 5))
		return target + 5;
	return target[0] == '/' ? target + 1 : NULL;
}

bool parse_dev_tun(const char *target)
{
	const char *name = dev_name(target);
	return name && !strcmp(name, "net/tun");
}

int parse_dev_tap(const char *target, int *ret_ifindex)
{
	const char *name = dev_name(target);
	if (!name || strncmp(name, "tap", 3) || !name[3])
		return -EINVAL;
	int v = 0;
	for (const char *p = name + 3; *p; p++) {
		if (*p < '0' || *p > '9' || v > (INT32_MAX - (*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	if (v <= 0) /* ifindex 0 is no interface */
		return -EINVAL;
	*ret_ifindex = v;
	return 0;
}

/* "  name: rx_bytes rx_packets errs drop fifo frame compressed multicast tx_bytes tx_packets errs
 * drop fifo colls carrier compressed" */
static int net_dev_line(const char *p, const char *nl, struct net_dev_stats *ret)
{
	int64_t f[16];
	for (size_t i = 0; i < 16; i++) {
		while (p < nl && *p == ' ')
			p++;
		int64_t v = 0;
		if (p == nl || *p < '0' || *p > '9')
			return -EINVAL;
		while (p < nl && *p >= '0' && *p <= '9') {
			if (v > (INT64_MAX - (*p - '0')) / 10)
				return -EINVAL;
			v = v * 10 + (*p++ - '0');
		}
		f[i] = v;
	}
	*ret = (struct net_dev_stats){.rx_bytes = f[0], .rx_packets = f[1], .rx_errors = f[2], .rx_dropped = f[3],
				      .tx_bytes = f[8], .tx_packets = f[9], .tx_errors = f[10], .tx_dropped = f[11]};
	return 0;
}

int parse_net_dev(const char *buf, size_t len, const char *name, struct net_dev_stats *ret)
{
	size_t nlen = strlen(name);
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break; /* a cut line is no figure */
		const char *s = p;
		while (s < nl && *s == ' ')
			s++;
		if ((size_t)(nl - s) > nlen && !memcmp(s, name, nlen) && s[nlen] == ':')
			return net_dev_line(s + nlen + 1, nl, ret);
		p = nl + 1;
	}
	return -ENOENT;
}

/* One line of /proc/net/unix: "Num: RefCount Protocol Flags Type St Inode Path"; its inode when it
 * is a listening socket bound at path, else 0. */
static uint64_t unix_listener(const char *p, const char *nl, const char *path)
{
	unsigned long long refs, proto, flags, type, st, inode;
	char num[32];
	int used = 0;
	/* The line is copied so that sscanf stops at its end (lines carry no NUL of their own). */
	char line[4352];
	size_t l = (size_t)(nl - p);
	if (l >= sizeof(line))
		return 0;
	memcpy(line, p, l);
	line[l] = '\0';
	if (sscanf(line, "%31s %llx %llx %llx %llx %llx %llu %n", num, &refs, &proto, &flags, &type, &st, &inode,
		   &used) != 7 || !used)
		return 0;
	const char *bound = line + used;
	return (flags & 0x10000) && inode && !strcmp(bound, path) ? (uint64_t)inode : 0;
}

size_t parse_unix_listeners(const char *buf, size_t len, const char *path, uint64_t *ret, size_t max)
{
	size_t n = 0;
	const char *p = buf, *end = buf + len;
	if (!path[0])
		return 0;
	while (p < end && n < max) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break; /* a cut line names no socket */
		uint64_t inode = unix_listener(p, nl, path);
		if (inode)
			ret[n++] = inode;
		p = nl + 1;
	}
	return n;
}
