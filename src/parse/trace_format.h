/* A tracepoint's format file (tracefs events/<system>/<event>/format): its id, its fields, and
 * the value -> name tables of its print format (__print_symbolic), which name exit reasons.
 *
 *   struct trace_format f;
 *   parse_trace_format(text, len, &f);            f.id, trace_format_field(&f, "exit_reason")
 *   parse_trace_symbols(text, len, 0, &syms, &n);  the first table: VMX's names for kvm_exit
 */
#ifndef VMHOST_PARSE_TRACE_FORMAT_H
#define VMHOST_PARSE_TRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_MAX_FIELDS 32

struct trace_field {
	char name[32];
	unsigned offset, size;
	bool is_signed;
};

struct trace_format {
	char name[64];
	unsigned id;
	struct trace_field fields[TRACE_MAX_FIELDS]; /* the event's own, after the common_* ones */
	size_t nfields;
};

/* Returns 0, or -EINVAL when there is no "name:", "ID:" or field line. */
int parse_trace_format(const char *buf, size_t len, struct trace_format *ret);

/* The field by name, or NULL. */
const struct trace_field *trace_format_field(const struct trace_format *f, const char *name);

struct trace_symbol {
	uint64_t value; /* as the field holds it: -1 in a 4-byte field is 0xffffffff */
	char name[48];  /* adjacent literals joined: "KVM_EXIT_" "IO" gives "KVM_EXIT_IO" */
};

/* The which-th (0-based) __print_symbolic table of the print format, in the kernel's order;
 * values are masked to field_size bytes (1..8). Free *ret with free(). Returns 0, -ENOENT when
 * there is no such table, -EINVAL when it cannot be read, -ENOMEM. */
int parse_trace_symbols(const char *buf, size_t len, unsigned which, unsigned field_size,
			struct trace_symbol **ret, size_t *ret_n);

#endif
