/* Sketch files (sketch_file_parse, src/parse/sketch_file.c) and share plan --from's URL and HTTP
 * reply parsers (src/parse/http/http_url.c). A refused sketch file is -EINVAL with a one-line reason
 * in its buffer and the output untouched; an accepted one has sorted values inside its sample,
 * counts that agree, and encodes back to the very same bytes (a sketch has one Rice coding).
 * The first byte picks the parser: even the sketch file (the rest of the input), odd a URL or
 * an HTTP reply. */
#include <errno.h>

#include "fuzz.h"
#include "parse/http/http_url.h"
#include "parse/sketch_file.h"

static void sketch_file(const uint8_t *data, size_t size)
{
	struct sketch_file f;
	memset(&f, 0x5a, sizeof(f));
	char why[160];
	memset(why, 0x5a, sizeof(why));
	int r = sketch_file_parse(data, size, &f, why, sizeof(why));
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL || r == -ENOMEM);
		FUZZ_CHECK(r == -ENOMEM || (fuzz_terminated(why, sizeof(why)) && why[0] && !strchr(why, '\n')));
		FUZZ_CHECK(f.nvms == 0x5a5a5a5a5a5a5a5aull);
		return;
	}
	FUZZ_CHECK(f.sample_n >= 1 && f.sample_n <= SKETCH_FILE_SAMPLE_MAX && fuzz_terminated(f.host, sizeof(f.host)));
	for (size_t i = 0; i < f.nvms; i++) {
		const struct sketch_file_vm *v = &f.vms[i];
		FUZZ_CHECK(v->pid > 0 && v->gap <= SKETCH_FILE_GAP_MAX && v->pages <= v->ram_pages);
		FUZZ_CHECK(v->zero_pages + v->zero_mapped_pages <= v->pages);
		FUZZ_CHECK((int64_t)v->nhashes <= v->pages - v->zero_pages - v->zero_mapped_pages);
		for (size_t k = 0; k < v->nhashes; k++)
			FUZZ_CHECK((!k || v->hashes[k - 1] <= v->hashes[k]) && v->hashes[k] < sketch_value_end(f.sample_n));
	}
	char *again;
	size_t len;
	FUZZ_CHECK(sketch_file_encode(&f, &again, &len) == 0);
	FUZZ_CHECK(len == size && !memcmp(again, data, size));
	free(again);
	sketch_file_free(&f);
}

static void url_or_reply(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	struct http_url u;
	memset(&u, 0x5a, sizeof(u));
	int r = http_url_parse(s, &u);
	if (r == 0) {
		FUZZ_CHECK(fuzz_terminated(u.host, sizeof(u.host)) && u.host[0]);
		FUZZ_CHECK(fuzz_terminated(u.path, sizeof(u.path)) && u.path[0] == '/');
		FUZZ_CHECK(atoi(u.port) >= 1 && atoi(u.port) <= 65535);
		char auth[512];
		if (u.user[0])
			FUZZ_CHECK(http_basic_auth(u.user, u.password, auth, sizeof(auth)) == 0 &&
				   !strncmp(auth, "Basic ", 6));
	} else {
		FUZZ_CHECK(r == -EINVAL || r == -ENOTSUP);
		FUZZ_CHECK(u.host[0] == 0x5a);
	}
	free(s);
	int status;
	size_t off, len;
	if (http_reply_parse((const char *)data, size, &status, &off, &len) == 0)
		FUZZ_CHECK(status >= 100 && status <= 599 && off <= size && off + len == size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] % 2 == 0)
		sketch_file(data + 1, size - 1);
	else
		url_or_reply(data + 1, size - 1);
	return 0;
}
