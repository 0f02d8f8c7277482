/* Running a command to completion: see run.h. */
#include "io/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int io_run_wait(char *const argv[], bool stdout_to_stderr)
{
	int errpipe[2];
	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(errpipe[0]);
		close(errpipe[1]);
		return e;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (stdout_to_stderr)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w = write(errpipe[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(errpipe[1]);
	int exec_errno = 0;
	ssize_t n;
	do
		n = read(errpipe[0], &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	close(errpipe[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (n == sizeof(exec_errno))
		return -exec_errno;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
