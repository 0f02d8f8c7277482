/* How numbers read in human output, one way for every command and writer: bytes in binary units,
 * durations, local times. */
#ifndef VMHOST_OUT_FMT_H
#define VMHOST_OUT_FMT_H

#include <stddef.h>
#include <stdint.h>

void fmt_bytes(char *buf, size_t cap, int64_t bytes); /* "1.50 GiB", "512 B" */
void fmt_seconds(char *buf, size_t cap, double seconds); /* "12us", "1.5ms", "1.23s", "4m05s", "2h03m" */
void fmt_time(char *buf, size_t cap, double unix_seconds); /* local "2026-01-01 00:00:00 UTC"; "n/a" */
/* Events per second, as live views show them: "0.5", "950", "12.3k", "4.1M"; NaN "n/a". */
void fmt_rate(char *buf, size_t cap, double per_second);

#endif
