/* A scripted QMP peer on a real unix socket, for the failure paths real QEMU never shows
 * (malformed or cut replies, closing mid-reply). A child process accepts one client and plays
 * the steps: send text, read one line from the client, sleep, close. */
#ifndef VMHOST_FAKEQMP_H
#define VMHOST_FAKEQMP_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fake_step {
	char op; /* 's' send text, 'r' read a line, 'w' wait text-as-ms, 'c' close, 'x' never accept,
		  * 'a' wait for the client to close, then accept the next one, 'f' send an event again and
		  * again for text-as-ms (a hostile peer: as fast as the client takes them), then close */
	const char *text;
};

#define FAKE_GREETING "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 22, \"minor\": 2, \"major\": 7}, \"package\": \"Debian\"}, \"capabilities\": [\"oob\"]}}\r\n"
#define FAKE_OK "{\"return\": {}}\r\n"

struct fake_qmp {
	char dir[40], path[64];
	pid_t pid;
	int lines_read; /* set by fake_qmp_stop: the child's exit status = client lines it read */
};

static inline void fake_send(int fd, const char *text)
{
	size_t len = strlen(text);
	while (len) {
		ssize_t n = send(fd, text, len, MSG_NOSIGNAL);
		if (n <= 0)
			return;
		text += n;
		len -= (size_t)n;
	}
}

/* Sends QEMU's RTC_CHANGE event without pause for ms milliseconds, or until the client goes. */
static inline void fake_flood(int fd, int ms)
{
	static const char event[] = "{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, \"event\": \"RTC_CHANGE\", "
				    "\"data\": {\"offset\": 0}}\r\n";
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (send(fd, event, sizeof(event) - 1, MSG_NOSIGNAL) <= 0)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* Starts the peer; returns 0 or -1. */
static inline int fake_qmp_start(struct fake_qmp *f, const struct fake_step *steps, size_t n)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/vmhost-fakeqmp.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/qmp.sock", f->dir);
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", f->path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 1) < 0)
		return -1;
	f->pid = fork();
	if (f->pid < 0)
		return -1;
	if (f->pid > 0) {
		close(ls);
		return 0;
	}
	int lines = 0;
	if (n && steps[0].op == 'x') {
		pause();
		_exit(0);
	}
	int c = accept(ls, NULL, NULL);
	for (size_t i = 0; c >= 0 && i < n; i++) {
		switch (steps[i].op) {
		case 's': fake_send(c, steps[i].text); break;
		case 'w': usleep((useconds_t)atoi(steps[i].text) * 1000); break;
		case 'c': close(c); c = -1; break;
		case 'f': fake_flood(c, atoi(steps[i].text)); close(c); c = -1; break;
		case 'a': {
			char ch;
			while (read(c, &ch, 1) > 0)
				;
			close(c);
			c = accept(ls, NULL, NULL);
			break;
		}
		case 'r': {
			char ch = 0;
			while (read(c, &ch, 1) == 1 && ch != '\n')
				;
			lines += ch == '\n'; /* a whole line: the client closing sent none */
			break;
		}
		}
	}
	/* Wait for the client to go away: a read of 0 means it closed its end. */
	char ch;
	while (c >= 0 && read(c, &ch, 1) > 0)
		;
	_exit(lines);
}

static inline void fake_qmp_stop(struct fake_qmp *f)
{
	int status = 0;
	if (f->pid > 0) {
		/* give the child a moment to see the client close, then make sure it ends */
		for (int i = 0; i < 200 && waitpid(f->pid, &status, WNOHANG) == 0; i++)
			usleep(5000);
		if (kill(f->pid, 0) == 0) {
			kill(f->pid, SIGKILL);
			waitpid(f->pid, &status, 0);
			status = -1;
		}
	}
	f->lines_read = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	unlink(f->path);
	rmdir(f->dir);
}

#endif
