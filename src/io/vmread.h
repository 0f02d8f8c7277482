/* Another process's memory, read and never written (process_vm_readv: root or CAP_SYS_PTRACE over
 * it). */
#ifndef VMHOST_IO_VMREAD_H
#define VMHOST_IO_VMREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads len bytes at addr in process pid into buf. Returns the bytes read (fewer when the
 * mapping ends or shrinks on the way), or -ESRCH (the process is gone), -EPERM (no permission),
 * -EFAULT (nothing mapped at addr any more), -ENOMEM. */
ssize_t io_process_read(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif
