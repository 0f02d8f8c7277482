/* QEMU's own output (its stderr, kept in a log): what it said when it failed to start. */
#ifndef VMHOST_PARSE_QEMU_LOG_H
#define VMHOST_PARSE_QEMU_LOG_H

#include <stddef.h>

/* The first line of text that is not empty and not a warning ("qemu-system-x86_64: -m 1T:
 * cannot set up guest memory ..."), at most cap - 1 bytes of it, into buf. Returns its length
 * (before cutting), or -ENOENT when there is none (buf is then ""). */
int parse_qemu_log_error(const char *text, size_t len, char *buf, size_t cap);

#endif
