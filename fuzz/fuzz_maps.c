/* /proc/PID/maps and smaps headers (parse_maps_next): every call moves forward and stays in
 * the buffer, a mapping ends where it starts or later, its path lies inside the input and
 * holds no newline; each entry printed as the kernel does parses to the same entry. */
#include "fuzz.h"
#include "parse/parse.h"

static bool same(const struct map_entry *a, const struct map_entry *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset && a->inode == b->inode &&
	       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       !memcmp(a->perms, b->perms, sizeof(a->perms)) && a->path_len == b->path_len &&
	       !memcmp(a->path, b->path, a->path_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	size_t pos = 0;
	struct map_entry m;
	for (;;) {
		size_t before = pos;
		int r = parse_maps_next(buf, size, &pos, &m);
		FUZZ_CHECK(r == 1 || r == 0 || r < 0);
		FUZZ_CHECK(pos <= size);
		if (r <= 0)
			break;
		FUZZ_CHECK(pos > before);
		FUZZ_CHECK(m.start <= m.end);
		FUZZ_CHECK(m.perms[4] == '\0');
		FUZZ_CHECK(m.path >= buf && m.path_len <= (size_t)(buf + size - m.path));
		FUZZ_CHECK(!memchr(m.path, '\n', m.path_len));

		static struct fuzz_text text;
		text.len = 0;
		fuzz_printf(&text, "%llx-%llx ", (unsigned long long)m.start, (unsigned long long)m.end);
		fuzz_put(&text, m.perms, 4);
		fuzz_printf(&text, " %08llx %02x:%02x %llu ", (unsigned long long)m.offset, m.dev_major, m.dev_minor,
			    (unsigned long long)m.inode);
		fuzz_put(&text, m.path, m.path_len);
		fuzz_puts(&text, "\n");
		size_t again_pos = 0;
		struct map_entry again;
		FUZZ_CHECK(parse_maps_next(text.buf, text.len, &again_pos, &again) == 1);
		FUZZ_CHECK(again_pos == text.len);
		FUZZ_CHECK(same(&m, &again));
	}
	return 0;
}
