/* Helpers for the serve and store unit tests: a scratch directory per test and a loopback
 * listener on a free port. */
#ifndef VMHOST_SERVE_TESTUTIL_H
#define VMHOST_SERVE_TESTUTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
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

#endif
