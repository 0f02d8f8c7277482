/* One JSON writer for every command, so --json is never an afterthought. */
#ifndef VMHOST_OUT_JSON_H
#define VMHOST_OUT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "parse/maybe.h"

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	bool pretty;
	bool has_items[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f, bool pretty);
/* key is NULL inside arrays and for the top-level value. */
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_int(struct json *j, const char *key, int64_t v);
void json_maybe(struct json *j, const char *key, maybe_i64 v);
void json_double(struct json *j, const char *key, double v); /* NaN/inf print as null */
/* v with exactly decimals digits after the point (Unix times: 3); NaN/inf print as null. */
void json_fixed(struct json *j, const char *key, double v, int decimals);
void json_bool(struct json *j, const char *key, bool v);
void json_string(struct json *j, const char *key, const char *s); /* NULL prints null */
void json_null(struct json *j, const char *key);
/* Ends the document with a newline. */
void json_finish(struct json *j);

#endif
