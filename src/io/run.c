/* Running a command to completion: see run.h. */
#include "io/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(char *const argv[], bool stdout_to_stderr, int go_fd, int err_fd)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (stdout_to_stderr)
		dup2(STDERR_FILENO, STDOUT_FILENO);
	char go;
	ssize_t g;
	do
		g = read(go_fd, &go, 1);
	while (g < 0 && errno == EINTR);
	if (g != 1) /* the parent gave up: run nothing */
		_exit(127);
	execvp(argv[0], argv);
	int e = errno;
	ssize_t w = write(err_fd, &e, sizeof(e));
	(void)w;
	_exit(127);
}

int io_run_start(char *const argv[], bool stdout_to_stderr, struct io_run *ret)
{
	int errpipe[2], gopipe[2];
	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(gopipe, O_CLOEXEC) < 0) {
		int e = -errno;
		close(errpipe[0]);
		close(errpipe[1]);
		return e;
	}
	pid_t pid = fork();
	if (pid == 0)
		child(argv, stdout_to_stderr, gopipe[0], errpipe[1]);
	int e = pid < 0 ? -errno : 0;
	close(errpipe[1]);
	close(gopipe[0]);
	if (e < 0) {
		close(errpipe[0]);
		close(gopipe[1]);
		return e;
	}
	*ret = (struct io_run){.pid = pid, .go_fd = gopipe[1], .err_fd = errpipe[0]};
	return 0;
}

int io_run_finish(struct io_run *run, bool go)
{
	ssize_t w = go ? write(run->go_fd, "g", 1) : 0;
	(void)w;
	close(run->go_fd); /* without the byte the child exits 127 */
	int exec_errno = 0;
	ssize_t n;
	do
		n = read(run->err_fd, &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	close(run->err_fd);
	int status;
	while (waitpid(run->pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (n == sizeof(exec_errno))
		return -exec_errno;
	if (!go)
		return -ECANCELED;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int io_run_wait(char *const argv[], bool stdout_to_stderr)
{
	struct io_run run;
	int r = io_run_start(argv, stdout_to_stderr, &run);
	return r < 0 ? r : io_run_finish(&run, true);
}
