/* Sketch files (parse/sketch_file.h): a file encoded and parsed back is the same; every way a
 * file can be wrong (cut short, another version, wrong sizes, counts that contradict each other,
 * unsorted or unsampled hashes, trailing bytes) is -EINVAL with a reason and leaves the output
 * untouched. share plan's --from: URLs, basic auth, HTTP replies. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/http_url.h"
#include "parse/sketch_file.h"

static uint64_t hashes_a[] = {1, 5, 5, 900};
static uint64_t hashes_b[] = {7};

static struct sketch_file example(struct sketch_file_vm *vms)
{
	vms[0] = (struct sketch_file_vm){.pid = 100, .name = "db", .uuid = "6f1c7a1e-0000-4000-8000-000000000001",
					 .ram_pages = 1000, .pages = 900, .zero_pages = 90, .zero_mapped_pages = 10,
					 .ksm_zero_pages = 3, .hashes = hashes_a, .nhashes = 4};
	vms[1] = (struct sketch_file_vm){.pid = 200, .gap = 1, .ram_pages = 50, .pages = 20, .hashes = hashes_b, .nhashes = 1};
	return (struct sketch_file){.sample_n = 64, .key_fingerprint = 0x0123456789abcdefull,
				    .mem_total_bytes = 8ll << 30, .mem_available_bytes = 5ll << 30,
				    .use_zero_pages_known = true, .use_zero_pages = true, .host = "node1", .vms = vms, .nvms = 2};
}

/* The example, encoded into a fresh buffer. */
static char *encoded(size_t *len)
{
	struct sketch_file_vm vms[2];
	struct sketch_file f = example(vms);
	char *buf = NULL;
	assert_int_equal(sketch_file_encode(&f, &buf, len), 0);
	return buf;
}

static void round_trip(void **state)
{
	(void)state;
	struct sketch_file_vm vms[2];
	struct sketch_file f = example(vms), g;
	char *buf, why[128] = "";
	size_t len;
	assert_int_equal(sketch_file_encode(&f, &buf, &len), 0);
	assert_int_equal(len, 64 + 5 + 2 * 64 + 2 + 36 + 5 * 8);
	assert_int_equal(sketch_file_parse(buf, len, &g, why, sizeof(why)), 0);
	assert_true(g.sample_n == 64 && g.key_fingerprint == 0x0123456789abcdefull);
	assert_true(g.mem_total_bytes == 8ll << 30 && g.mem_available_bytes == 5ll << 30);
	assert_true(g.use_zero_pages_known && g.use_zero_pages);
	assert_string_equal(g.host, "node1");
	assert_int_equal(g.nvms, 2);
	assert_string_equal(g.vms[0].name, "db");
	assert_string_equal(g.vms[0].uuid, vms[0].uuid);
	assert_string_equal(g.vms[1].name, "");
	assert_true(g.vms[0].pid == 100 && g.vms[0].ram_pages == 1000 && g.vms[0].pages == 900 &&
		    g.vms[0].zero_pages == 90 && g.vms[0].zero_mapped_pages == 10 && g.vms[0].ksm_zero_pages == 3);
	assert_int_equal(g.vms[1].gap, 1);
	assert_int_equal(g.vms[0].nhashes, 4);
	assert_memory_equal(g.vms[0].hashes, hashes_a, sizeof(hashes_a));
	sketch_file_free(&g);
	/* Unknown memory, no VMs. */
	f.nvms = 0;
	f.mem_total_bytes = f.mem_available_bytes = -1;
	free(buf);
	assert_int_equal(sketch_file_encode(&f, &buf, &len), 0);
	assert_int_equal(sketch_file_parse(buf, len, &g, why, sizeof(why)), 0);
	assert_true(g.nvms == 0 && g.mem_total_bytes == -1 && g.mem_available_bytes == -1);
	sketch_file_free(&g);
	free(buf);
}

/* The example encoded, changed by edit, must be refused with a reason containing want. */
static void refused_with(void (*edit)(unsigned char *buf, size_t *len), const char *want)
{
	struct sketch_file g;
	memset(&g, 0x5a, sizeof(g));
	char why[160] = "";
	size_t len;
	char *buf = encoded(&len);
	edit((unsigned char *)buf, &len);
	assert_int_equal(sketch_file_parse(buf, len, &g, why, sizeof(why)), -EINVAL);
	if (!strstr(why, want))
		fail_msg("reason '%s' lacks '%s'", why, want);
	assert_true(g.nvms == 0x5a5a5a5a5a5a5a5aull); /* untouched */
	free(buf);
}

/* Offsets in the example: header 0, host 64, VM 0 at 69 (name 133, uuid 135, hashes 171), VM 1 at 203. */
static void cut_header(unsigned char *b, size_t *len) { (void)b, *len = 40; }
static void cut_hashes(unsigned char *b, size_t *len) { (void)b, *len -= 3; }
static void cut_record(unsigned char *b, size_t *len) { (void)b, *len = 69 + 30; }
static void version_2(unsigned char *b, size_t *len) { (void)len, b[8] = 2; }
static void bad_magic(unsigned char *b, size_t *len) { (void)len, b[0] = 'X'; }
static void header_size(unsigned char *b, size_t *len) { (void)len, b[12] = 80; }
static void page_size(unsigned char *b, size_t *len) { (void)len, b[49] = 0x20; }
static void sample_zero(unsigned char *b, size_t *len) { (void)len, memset(b + 16, 0, 8); }
static void unsorted(unsigned char *b, size_t *len) { (void)len, b[171] = 9; } /* 1 becomes 9 > 5 */
static void unsampled(unsigned char *b, size_t *len) { (void)len, b[171 + 3 * 8 + 7] = 0xff; } /* 900 becomes huge */
static void too_many_hashes(unsigned char *b, size_t *len) { (void)len, b[69 + 49] = 0xff; }
static void pages_over_ram(unsigned char *b, size_t *len) { (void)len, b[69 + 17] = 0x10; }
static void bad_gap(unsigned char *b, size_t *len) { (void)len, b[69 + 4] = 9; }
static void many_vms(unsigned char *b, size_t *len) { (void)len, b[52] = 200; }
static void control_in_name(unsigned char *b, size_t *len) { (void)len, b[133] = '\n'; }
static void reserved(unsigned char *b, size_t *len) { (void)len, b[60] = 1; }
static void avail_over_total(unsigned char *b, size_t *len) { (void)len, b[40 + 5] = 0x7f; }

static void refusals(void **state)
{
	(void)state;
	refused_with(cut_header, "truncated");
	refused_with(cut_hashes, "truncated");
	refused_with(cut_record, "truncated");
	refused_with(version_2, "version 2");
	refused_with(bad_magic, "not a vmhost sketch file");
	refused_with(header_size, "header of 80 bytes");
	refused_with(page_size, "pages of");
	refused_with(sample_zero, "sample");
	refused_with(unsorted, "not sorted");
	refused_with(unsampled, "outside the 1/64 sample");
	refused_with(too_many_hashes, "hashes kept of");
	refused_with(pages_over_ram, "pages read of");
	refused_with(bad_gap, "partial reason 9");
	refused_with(many_vms, "200 VMs cannot fit");
	refused_with(control_in_name, "control character");
	refused_with(reserved, "reserved");
	refused_with(avail_over_total, "MemAvailable");
}

static void trailing_bytes(void **state)
{
	(void)state;
	struct sketch_file_vm vms[2];
	struct sketch_file f = example(vms), g;
	char why[128] = "";
	size_t len;
	char *buf = encoded(&len);
	char *longer = calloc(1, len + 8);
	memcpy(longer, buf, len);
	assert_int_equal(sketch_file_parse(longer, len + 8, &g, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "8 bytes after the last VM"));
	free(longer);
	free(buf);
	f.host[0] = '\0';
	memset(f.host, 'h', 256);
	f.host[255] = '\0';
	assert_int_equal(sketch_file_encode(&f, &buf, &len), 0); /* 255 bytes: the most there is room for */
	free(buf);
}

static void urls(void **state)
{
	(void)state;
	struct http_url u;
	assert_int_equal(http_url_parse("http://127.0.0.1:9464/sketch", &u), 0);
	assert_string_equal(u.host, "127.0.0.1");
	assert_string_equal(u.port, "9464");
	assert_string_equal(u.path, "/sketch");
	assert_string_equal(u.user, "");
	assert_int_equal(http_url_parse("http://ops:s%3Acret@node1/sketch", &u), 0);
	assert_string_equal(u.user, "ops");
	assert_string_equal(u.password, "s:cret");
	assert_string_equal(u.host, "node1");
	assert_string_equal(u.port, "80");
	assert_int_equal(http_url_parse("http://[::1]:8080", &u), 0);
	assert_string_equal(u.host, "::1");
	assert_string_equal(u.port, "8080");
	assert_string_equal(u.path, "/");
	assert_false(u.tls);
	assert_int_equal(http_url_parse("https://ops:pw@node1/sketch", &u), 0);
	assert_true(u.tls);
	assert_string_equal(u.port, "443");
	assert_string_equal(u.user, "ops");
	assert_int_equal(http_url_parse("HTTPS://node1:9464", &u), 0);
	assert_string_equal(u.port, "9464");
	assert_int_equal(http_url_parse("ftp://node1/sketch", &u), -ENOTSUP);
	const char *bad[] = {"https://", "https//node1/", "node1:9464/sketch", "http://", "http://:80/", "http://h:0/", "http://h:65536/",
			     "http://h:x/", "http://[::1/", "http://h/a b", "http://u%zz@h/", "http://@h/", "http://[g]/"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (http_url_parse(bad[i], &u) != -EINVAL)
			fail_msg("accepted %s", bad[i]);
	char shown[64];
	http_url_redact("https://ops:s%3Acret@node1:9464/sketch?a=b@c", shown, sizeof(shown));
	assert_string_equal(shown, "https://ops:***@node1:9464/sketch?a=b@c");
	http_url_redact("http://ops@node1/sketch", shown, sizeof(shown));
	assert_string_equal(shown, "http://ops@node1/sketch");
	http_url_redact("http://node1/a:b@c", shown, sizeof(shown));
	assert_string_equal(shown, "http://node1/a:b@c");
	char auth[64];
	assert_int_equal(http_basic_auth("Aladdin", "open sesame", auth, sizeof(auth)), 0);
	assert_string_equal(auth, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="); /* RFC 7617's example */
	assert_int_equal(http_basic_auth("a", "b", auth, 8), -ENAMETOOLONG);
}

static void replies(void **state)
{
	(void)state;
	int status;
	size_t off, len;
	const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: x\r\ncontent-length: 4\r\n\r\nbody";
	assert_int_equal(http_reply_parse(ok, strlen(ok), &status, &off, &len), 0);
	assert_int_equal(status, 200);
	assert_int_equal(len, 4);
	assert_memory_equal(ok + off, "body", 4);
	const char no_length[] = "HTTP/1.0 403 Forbidden\n\nrefused here\n";
	assert_int_equal(http_reply_parse(no_length, strlen(no_length), &status, &off, &len), 0);
	assert_int_equal(status, 403);
	assert_int_equal(len, 13);
	const char *bad[] = {"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nbody", /* cut short */
			     "HTTP/1.1 200 OK\r\nContent-Type: x\r\n",            /* no end of headers */
			     "HTTP/2 200\r\n\r\n", "HTTP/1.1 20x OK\r\n\r\n", "SSH-2.0-OpenSSH\r\n\r\n",
			     "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (http_reply_parse(bad[i], strlen(bad[i]), &status, &off, &len) != -EINVAL)
			fail_msg("accepted %s", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip), cmocka_unit_test(refusals), cmocka_unit_test(trailing_bytes),
		cmocka_unit_test(urls), cmocka_unit_test(replies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
