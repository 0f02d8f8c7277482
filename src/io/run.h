/* Running a command to completion (`vmhost exits -- CMD`, test hooks). */
#ifndef VMHOST_IO_RUN_H
#define VMHOST_IO_RUN_H

#include <stdbool.h>
#include <sys/types.h>

/* Runs argv (searched in PATH) with the default signal dispositions and waits for it. Returns its
 * exit status (128 + signal when killed), or a negative errno: the exec's when it could not start,
 * or fork's. stdout_to_stderr sends its stdout to our stderr (our stdout stays one document). */
int io_run_wait(char *const argv[], bool stdout_to_stderr);

/* The same in two steps, for a caller that attaches to the command before it runs: io_run_start
 * forks a child held before its exec (pid is known, nothing of the command has run), and
 * io_run_finish lets it exec (go) or makes it exit unrun (!go: -ECANCELED) and waits for it,
 * returning what io_run_wait returns. Every started run must be finished. */
struct io_run {
	pid_t pid;
	int go_fd, err_fd;
};
int io_run_start(char *const argv[], bool stdout_to_stderr, struct io_run *ret);
int io_run_finish(struct io_run *run, bool go);

#endif
