/* libFuzzer target for parse/json and the QMP reply parsers on top of it (parse/qmp_stats): any
 * input is parsed, walked and decoded; the same bytes are also fed to the stream framer.
 * Build and run: fuzz/README.md (tests/cli/fuzz_smoke.sh runs it in make check). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/json.h"
#include "parse/qmp_stats.h"

/* Decodes every value, depth first. */
static void walk(const struct json_doc *d, const struct json_value *v)
{
	char buf[64];
	uint64_t u;
	int64_t i;
	double x;
	bool b;
	json_as_string(d, v, buf, sizeof(buf));
	json_string_is(d, v, "return");
	json_as_u64(d, v, &u);
	json_as_i64(d, v, &i);
	json_as_double(d, v, &x);
	json_as_bool(v, &b);
	for (const struct json_value *c = json_first(d, v); c; c = json_next(d, v, c)) {
		if (v->type == JSON_OBJECT)
			json_as_string(d, json_key(d, c), buf, sizeof(buf));
		walk(d, c);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy so overreads show */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct json_framer f;
	json_framer_reset(&f);
	for (size_t k = 1; k <= size && k <= 64; k++)
		if (json_framer_feed(&f, buf, k) != 0)
			break;
	json_framer_feed(&f, buf, size);
	struct json_doc d;
	if (json_parse(buf, size, &d) == 0) {
		walk(&d, json_root(&d));
		const struct json_value *ret = json_get(&d, json_root(&d), "return");
		struct qmp_stats_schema s;
		if (qmp_parse_schemas(&d, ret, &s) == 0) {
			struct qmp_stat_value *v = calloc(s.n[QMP_STATS_VM] + 1, sizeof(*v));
			if (v && qmp_parse_vm_stats(&d, ret, &s, v) == 0) {
				for (size_t i = 0; i < s.n[QMP_STATS_VM]; i++)
					free(v[i].buckets);
			}
			free(v);
			struct qmp_vcpu_stats *c;
			size_t n;
			if (qmp_parse_vcpu_stats(&d, ret, &s, &c, &n) == 0) {
				qmp_parse_cpus(&d, ret, c, n);
				qmp_vcpus_free(c, n, s.n[QMP_STATS_VCPU]);
			}
			qmp_schema_free(&s);
		}
		json_free(&d);
	}
	free(buf);
	return 0;
}
