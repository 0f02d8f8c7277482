/* Helpers for unit tests: fixture files read into memory. */
#ifndef VMHOST_TESTUTIL_H
#define VMHOST_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads $VMHOST_FIXTURES/<rel> whole; aborts the test program when missing. */
static inline char *fixture(const char *rel, size_t *len)
{
	const char *dir = getenv("VMHOST_FIXTURES");
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/fixtures", rel);
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

/* A command line from tests/fixtures/cmdlines/NAME.args (one argument a line after the "# key:
 * value" header lines) NUL-separated as in /proc/PID/cmdline; its length in *len. */
static inline char *fixture_cmdline(const char *rel, size_t *len)
{
	size_t text_len;
	char *text = fixture(rel, &text_len);
	char *cmd = malloc(text_len + 1);
	if (!cmd)
		abort();
	size_t n = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#' && line[1] == ' ')
			continue;
		size_t l = strlen(line);
		memcpy(cmd + n, line, l + 1);
		n += l + 1;
	}
	free(text);
	*len = n;
	return cmd;
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
