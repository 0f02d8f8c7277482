/* Another process's memory, read and never written (process_vm_readv: root or CAP_SYS_PTRACE over
 * it), and the process held by a pidfd while it is read, so that what is read by its pid is known
 * to be its: a pid is reused once its process has exited and been reaped. */
#ifndef VMHOST_IO_VMREAD_H
#define VMHOST_IO_VMREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads len bytes at addr in process pid into buf. Returns the bytes read (fewer when the
 * mapping ends or shrinks on the way), or -ESRCH (the process is gone), -EPERM (no permission),
 * -EFAULT (nothing mapped at addr any more), -ENOMEM. */
ssize_t io_process_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* A process held by its pidfd. */
struct io_process {
	pid_t pid;
	int pidfd; /* -1: not held (no pidfd_open here: Linux before 5.3, or a filter refusing it) */
};

/* Holds the process that pid is now: 0, or -ESRCH when there is none. Without pidfd_open, 0 and
 * not held. Release with io_process_release. */
int io_process_hold(pid_t pid, struct io_process *ret);
void io_process_release(struct io_process *p);
/* Whether the held process has not exited (so its pid is still its own); true when not held. */
bool io_process_alive(const struct io_process *p);
/* io_process_read of the held process; -ESRCH too when it has exited by the end of the read (the
 * pid may have been another process's meanwhile: what was read is not the held one's). */
ssize_t io_process_read_held(const struct io_process *p, uint64_t addr, void *buf, size_t len);

#endif
