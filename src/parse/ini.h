/* INI files: "[section]", "key = value", comments with # or ;. A pure parser: buffer in,
 * one callback per key. */
#ifndef VMHOST_PARSE_INI_H
#define VMHOST_PARSE_INI_H

#include <stddef.h>

/* Called per key with trimmed strings; returns 0, or a negative errno with a message in err. */
typedef int (*ini_handler)(void *user, const char *section, const char *key, const char *value, char *err,
			   size_t errcap);

/* Parses buf. On error returns -EINVAL, *ret_line is the 1-based line and err says why. */
int ini_parse(const char *buf, size_t len, ini_handler fn, void *user, int *ret_line, char *err, size_t errcap);

#endif
