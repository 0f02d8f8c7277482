/* Helpers for unit tests, in one place: fixture files and trees (tests/fixtures), temporary trees
 * made and removed without a shell, files written into them, a child on a pipe, stderr caught.
 * What fails here aborts the test program, with a message naming the path. */
#ifndef VMHOST_TESTUTIL_H
#define VMHOST_TESTUTIL_H

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"

/* $VMHOST_FIXTURES, the fixture scenarios' folder (ctest sets it), else tests/fixtures. */
static inline const char *fixtures_dir(void)
{
	const char *dir = getenv("VMHOST_FIXTURES");
	return dir ? dir : "tests/fixtures";
}

/* The roots of fixture scenario NAME: NAME/proc and NAME/sys under fixtures_dir(), formatted into
 * proc and sys (cap bytes each). The scenario need not exist. */
static inline struct io_root fixture_root(const char *scenario, char *proc, char *sys, size_t cap)
{
	snprintf(proc, cap, "%s/%s/proc", fixtures_dir(), scenario);
	snprintf(sys, cap, "%s/%s/sys", fixtures_dir(), scenario);
	return (struct io_root){.proc = proc, .sys = sys};
}

/* Reads $VMHOST_FIXTURES/<rel> whole; aborts the test program when missing. */
static inline char *fixture(const char *rel, size_t *len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", fixtures_dir(), rel);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "missing fixture %s\n", path);
		abort();
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 == cap) {
			char *b = realloc(buf, cap *= 2);
			if (!b)
				abort();
			buf = b;
		}
	}
	fclose(f);
	if (!buf)
		abort();
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* A NUL-separated command line, as /proc/PID/cmdline holds it, from its arguments (NULL-terminated)
 * into buf; returns its length. Aborts the test program when it does not fit. */
static inline size_t cmdline_join(char *buf, size_t cap, const char *const *args)
{
	size_t n = 0;
	for (; *args; args++) {
		size_t l = strlen(*args) + 1;
		if (n + l > cap)
			abort();
		memcpy(buf + n, *args, l);
		n += l;
	}
	return n;
}

/* A QEMU command line from a fixture file (a NAME.args of tests/fixtures/cmdlines): its lines but
 * the "# " headers, each ending in a NUL as in /proc/PID/cmdline; *ret_len counts the NULs. The
 * loader test_vmcmd.c and test_vmcmd_qmp.c each wrote. malloc'd. */
static inline char *fixture_cmdline(const char *rel, size_t *ret_len)
{
	size_t len, n = 0;
	char *text = fixture(rel, &len), *save = NULL;
	char *cmd = malloc(len + 1);
	if (!cmd)
		abort();
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' && line[1] == ' ')
			continue;
		size_t l = strlen(line);
		memcpy(cmd + n, line, l + 1);
		n += l + 1;
	}
	free(text);
	*ret_len = n;
	return cmd;
}

/* nftw's callback for tmp_tree_remove: one entry, after what is under it (FTW_DEPTH). */
static inline int tmp_tree_remove_one(const char *path, const struct stat *st, int type, struct FTW *at)
{
	(void)st;
	(void)type;
	(void)at;
	return remove(path);
}

/* Removes dir and everything under it, symbolic links not followed (rm -rf, without a shell);
 * 0, or -1 with errno. A dir that is not there is 0. */
static inline int tmp_tree_remove(const char *dir)
{
	if (nftw(dir, tmp_tree_remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0)
		return 0;
	return errno == ENOENT ? 0 : -1;
}

/* dir (cap bytes) becomes a new directory /tmp/vmhost-test-NAME.XXXXXX; 0, or -1 with errno. */
static inline int tmp_tree_make(char *dir, size_t cap, const char *name)
{
	int n = snprintf(dir, cap, "/tmp/vmhost-test-%s.XXXXXX", name);
	if (n < 0 || (size_t)n >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(dir) ? 0 : -1;
}

/* A new temporary tree /tmp/vmhost-test-NAME.XXXXXX, its path malloc'd; aborts on failure. */
static inline char *tmp_tree_new(const char *name)
{
	char dir[PATH_MAX];
	if (tmp_tree_make(dir, sizeof(dir), name) < 0) {
		fprintf(stderr, "cannot make %s: %s\n", dir, strerror(errno));
		abort();
	}
	char *copy = strdup(dir);
	if (!copy)
		abort();
	return copy;
}

/* Removes a tree of tmp_tree_new and frees its path (NULL: nothing); aborts when it cannot. */
static inline void tmp_tree_free(char *dir)
{
	if (!dir)
		return;
	if (tmp_tree_remove(dir) < 0) {
		fprintf(stderr, "cannot remove %s: %s\n", dir, strerror(errno));
		abort();
	}
	free(dir);
}

/* Writes text to path (made or emptied first); aborts on failure. */
static inline void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) == EOF || fclose(f) != 0) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
}

/* put to the path formatted from fmt and what follows. */
static inline void putf(const char *text, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void putf(const char *text, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	put(path, text);
}

/* Makes the directory formatted from fmt and what follows, and its parents (mkdir -p, mode
 * 0755); aborts on failure. */
static inline void mkdirf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void mkdirf(const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	for (char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
		if (slash)
			*slash = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "cannot make %s: %s\n", path, strerror(errno));
			abort();
		}
		if (!slash)
			return;
		*slash = '/';
	}
}

/* fork() with a pipe from the child to the parent: 0 in the child, *fd its write end; the child's
 * pid in the parent, *fd the read end. Aborts the test program when either call fails. */
static inline pid_t fork_piped(int *fd)
{
	int p[2];
	if (pipe(p) < 0)
		abort();
	pid_t pid = fork();
	if (pid < 0)
		abort();
	close(p[pid == 0 ? 0 : 1]);
	*fd = p[pid == 0 ? 1 : 0];
	return pid;
}

/* stderr into a temporary file until stderr_back, which leaves what was written in buf. */
static inline FILE *stderr_away(int *ret_saved)
{
	fflush(stderr);
	*ret_saved = dup(STDERR_FILENO);
	FILE *f = tmpfile();
	if (!f || *ret_saved < 0)
		abort();
	dup2(fileno(f), STDERR_FILENO);
	return f;
}

static inline void stderr_back(int saved, FILE *f, char *buf, size_t cap)
{
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	size_t n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
}

#endif
