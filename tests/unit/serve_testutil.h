/* Helpers for the serve and store unit tests: a scratch directory per test, a loopback listener
 * on a free port, and a file of a fixture tree made to block whoever opens it (a gathering or a
 * sketching run that does not end, with no test hook in the code under test). */
#ifndef VMHOST_SERVE_TESTUTIL_H
#define VMHOST_SERVE_TESTUTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/peer/socket.h"
#include "net/serve_http.h"
#include "testutil.h"

/* A fresh /tmp/vmhost-test-NAME.XXXXXX in dir (64 bytes at least) and dir/t.db in db (128). */
static inline int scratch_make(char *dir, char *db, const char *name)
{
	if (tmp_tree_make(dir, 64, name) < 0)
		return -1;
	snprintf(db, 128, "%s/t.db", dir);
	return 0;
}

/* Removes a scratch_make directory and what is in it; 0 or -1. */
static inline int scratch_remove(const char *dir)
{
	return tmp_tree_remove(dir);
}

/* A writable copy of fixture name in dir (dir/host), with the serve fixture's meminfo where it has
 * none; its root (proc and sys, cap bytes each). Aborts the test when it cannot be made. */
static inline struct io_root scratch_fixture(const char *dir, const char *name, char *proc, char *sys, size_t cap)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "cp -a '%s/%s' '%s/host' && cp -n '%s/serve/proc/meminfo' '%s/host/proc/'",
		 fixtures_dir(), name, dir, fixtures_dir(), dir);
	assert_int_equal(system(cmd), 0);
	snprintf(proc, cap, "%s/host/proc", dir);
	snprintf(sys, cap, "%s/host/sys", dir);
	return (struct io_root){.proc = proc, .sys = sys};
}

/* A listening socket on 127.0.0.1 with a port of the kernel's choice; -1 on failure. */
static inline int loopback_listener(int *ret_port)
{
	struct sockaddr_storage a;
	socklen_t len;
	if (serve_parse_listen("127.0.0.1:0", &a, &len) < 0)
		return -1;
	int fd = io_listen(&a, len);
	struct sockaddr_in bound;
	socklen_t bl = sizeof(bound);
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&bound, &bl) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*ret_port = ntohs(bound.sin_port);
	return fd;
}

/* dir/name becomes a FIFO nobody writes (the file kept as name.real): opening it blocks until
 * fifo_unblock. Aborts on failure. */
static inline void fifo_block(const char *dir, const char *name)
{
	char from[PATH_MAX], to[PATH_MAX];
	snprintf(from, sizeof(from), "%s/%s", dir, name);
	snprintf(to, sizeof(to), "%s/%s.real", dir, name);
	if (rename(from, to) < 0 || mkfifo(from, 0600) < 0) {
		fprintf(stderr, "cannot make %s a FIFO: %s\n", from, strerror(errno));
		abort();
	}
}

/* The opener blocked on the FIFO gets the file through it, or from the file put back (a FIFO
 * refuses pread, so a reader may open the path again: io/io.c); the file is back for the next
 * ones. A writer without a reader left (it read the file) is no error: SIGPIPE must be ignored. */
static inline void fifo_unblock(const char *dir, const char *name)
{
	char fifo[PATH_MAX], real[PATH_MAX], buf[8192];
	snprintf(fifo, sizeof(fifo), "%s/%s", dir, name);
	snprintf(real, sizeof(real), "%s/%s.real", dir, name);
	int in = open(real, O_RDONLY), out = open(fifo, O_WRONLY); /* the opener is waiting */
	ssize_t n = in >= 0 && out >= 0 && rename(real, fifo) == 0 ? read(in, buf, sizeof(buf)) : -1;
	if (n <= 0 || (write(out, buf, (size_t)n) != n && errno != EPIPE)) {
		fprintf(stderr, "cannot feed %s: %s\n", fifo, strerror(errno));
		abort();
	}
	close(in);
	close(out);
}

#endif
