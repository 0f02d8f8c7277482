/* Values as people write them, one way for the commands' options (cmd/opts.c) and the KSM tuner's
 * config file (core/tune/tuner.c): a number, a whole number, a yes or no. Each takes the whole
 * string (strtod's and strtoll's leading blanks and sign allowed, nothing after the number) and
 * returns 0 with *ret set, or -EINVAL with *ret untouched. */
#ifndef VMHOST_CORE_BASE_CONVERT_H
#define VMHOST_CORE_BASE_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

/* A finite number from lo to hi ("0.5", "1e3"). */
int convert_number(const char *s, double lo, double hi, double *ret);

/* A decimal whole number from lo to hi. */
int convert_whole(const char *s, int64_t lo, int64_t hi, int64_t *ret);

/* "yes", "true", "on", "1" or "no", "false", "off", "0". */
int convert_bool(const char *s, bool *ret);

#endif
