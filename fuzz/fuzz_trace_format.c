/* tracefs format files (parse_trace_format, parse_trace_symbols, src/parse/trace_format.c): the
 * event name and every field name stay in their buffers, at most TRACE_MAX_FIELDS fields, and
 * each is found again by its name; a __print_symbolic table has names inside their buffers and
 * values masked to the field's size, and a refused one leaves the outputs untouched. */
#include <errno.h>

#include "fuzz.h"
#include "parse/trace_format.h"

static void symbols(const char *buf, size_t len, unsigned which, unsigned field_size)
{
	struct trace_symbol *syms = (struct trace_symbol *)&syms;
	size_t n = 7;
	int r = parse_trace_symbols(buf, len, which, field_size, &syms, &n);
	if (r < 0) {
		FUZZ_CHECK(r == -ENOENT || r == -EINVAL || r == -ENOMEM);
		FUZZ_CHECK(syms == (struct trace_symbol *)&syms && n == 7);
		return;
	}
	FUZZ_CHECK(r == 0);
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(fuzz_terminated(syms[i].name, sizeof(syms[i].name)));
		FUZZ_CHECK(field_size >= 8 || syms[i].value < (1ull << (8 * field_size)));
	}
	free(syms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct trace_format f;
	if (parse_trace_format(buf, size, &f) == 0) {
		FUZZ_CHECK(fuzz_terminated(f.name, sizeof(f.name)));
		FUZZ_CHECK(f.nfields <= TRACE_MAX_FIELDS);
		for (size_t i = 0; i < f.nfields; i++) {
			FUZZ_CHECK(fuzz_terminated(f.fields[i].name, sizeof(f.fields[i].name)));
			const struct trace_field *found = trace_format_field(&f, f.fields[i].name);
			FUZZ_CHECK(found && !strcmp(found->name, f.fields[i].name));
		}
	}
	symbols(buf, size, 0, 4);
	symbols(buf, size, 1, 8);
	symbols(buf, size, 0, 1);
	return 0;
}
