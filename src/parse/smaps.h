/* /proc/PID/smaps, mapping by mapping: what the KSM tuner needs of it. */
#ifndef VMHOST_PARSE_SMAPS_H
#define VMHOST_PARSE_SMAPS_H

#include <stddef.h>
#include <stdint.h>

/* Resident anonymous bytes ("Anonymous:") in mappings marked mergeable ("mg" in VmFlags), and
 * in all mappings. 0, -EINVAL when the text has no mapping with a VmFlags line or a size without
 * digits, -ERANGE when a size or a sum does not fit in int64_t bytes (ret untouched on failure). */
struct smaps_mergeable {
	int64_t mergeable_anon_bytes, anon_bytes;
};
int parse_smaps_mergeable(const char *buf, size_t len, struct smaps_mergeable *ret);

#endif
