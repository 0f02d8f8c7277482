/* Sketch files (parse/sketch_file.h): a file encoded and parsed back is the same, its values
 * Rice-coded (none, one, the widest gap, repeats, a hundred thousand of a sample); every way a
 * file can be wrong (cut short, another version, wrong sizes, counts that contradict each other,
 * values outside the sample, another Rice parameter, bits or bytes left over) is -EINVAL with a
 * reason and leaves the output untouched. share plan's --from: URLs, basic auth, HTTP replies. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "parse/http/http_url.h"
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
	/* At 1/64 the values are below 2^34: 4 of them coded with k = 32 (33 bits each, 17 bytes),
	 * 1 with k = 34 (5 bytes). */
	assert_int_equal(len, 64 + 5 + 2 * 64 + 2 + 36 + 17 + 5);
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

/* Offsets in the example: header 0, host 64, VM 0 at 69 (name 133, uuid 135, values 171-187),
 * VM 1 at 188 (values 252-256). */
static void cut_header(unsigned char *b, size_t *len) { (void)b, *len = 40; }
static void cut_values(unsigned char *b, size_t *len) { (void)b, *len -= 3; }
static void cut_record(unsigned char *b, size_t *len) { (void)b, *len = 69 + 30; }
static void version_1(unsigned char *b, size_t *len) { (void)len, b[8] = 1; }
static void version_3(unsigned char *b, size_t *len) { (void)len, b[8] = 3; }
static void bad_magic(unsigned char *b, size_t *len) { (void)len, b[0] = 'X'; }
static void header_size(unsigned char *b, size_t *len) { (void)len, b[12] = 80; }
static void page_size(unsigned char *b, size_t *len) { (void)len, b[49] = 0x20; }
static void sample_zero(unsigned char *b, size_t *len) { (void)len, memset(b + 16, 0, 8); }
static void value_bits(unsigned char *b, size_t *len) { (void)len, b[59] = 32; }
/* The first value's quotient all ones: beyond 3, its value is past 2^34, the 1/64 sample's end. */
static void unsampled(unsigned char *b, size_t *len) { (void)len, b[171] = 0xff; }
static void rice_parameter(unsigned char *b, size_t *len) { (void)len, b[69 + 7] = 31; }
static void rice_out_of_range(unsigned char *b, size_t *len) { (void)len, b[69 + 7] = 200; }
static void coded_longer(unsigned char *b, size_t *len) { (void)len, b[69 + 56] = 18; }
static void coded_shorter(unsigned char *b, size_t *len) { (void)len, b[69 + 56] = 16; }
static void coded_none(unsigned char *b, size_t *len) { (void)len, b[188 + 56] = 0; }
static void trailing_bits(unsigned char *b, size_t *len) { (void)len, b[187] |= 0x80; } /* 132 bits: 4 spare */
static void too_many_hashes(unsigned char *b, size_t *len) { (void)len, b[69 + 49] = 0xff; }
static void pages_over_ram(unsigned char *b, size_t *len) { (void)len, b[69 + 17] = 0x10; }
static void bad_gap(unsigned char *b, size_t *len) { (void)len, b[69 + 4] = 9; }
static void many_vms(unsigned char *b, size_t *len) { (void)len, b[52] = 200; }
static void control_in_name(unsigned char *b, size_t *len) { (void)len, b[133] = '\n'; }
static void reserved(unsigned char *b, size_t *len) { (void)len, b[60] = 1; }
static void avail_over_total(unsigned char *b, size_t *len) { (void)len, b[40 + 5] = 0x7f; }
/* What no host has, which would make a hostile server's file cost memory out of proportion to its
 * length, or overflow the sums made of its counts (REVIEW S-L4). */
static void huge_ram(unsigned char *b, size_t *len) { (void)len, b[69 + 15] = 0x40; }
static void huge_mem_total(unsigned char *b, size_t *len) { (void)len, b[32 + 7] = 0x40; }
static void vms_past_max(unsigned char *b, size_t *len) { (void)len, b[52] = 0x70, b[53] = 0x11, b[54] = 0x01; }
/* VM 0 with 2^30 pages claims 2^28 + 1 values at 1/64: a mean gap under 64, 1 bit a value at the
 * densest, 64 times its coded bytes in memory. */
static void too_dense(unsigned char *b, size_t *len)
{
	(void)len;
	b[69 + 8 + 3] = b[69 + 16 + 3] = 0x40;
	b[69 + 48] = 1, b[69 + 48 + 3] = 0x10;
}

static void refusals(void **state)
{
	(void)state;
	refused_with(cut_header, "truncated");
	refused_with(cut_values, "truncated: VM 1's values need 5 bytes, 2 left");
	refused_with(cut_record, "truncated");
	refused_with(version_1, "written by an older vmhost: sketch again");
	refused_with(version_3, "version 3");
	refused_with(bad_magic, "not a vmhost sketch file");
	refused_with(header_size, "header of 80 bytes");
	refused_with(page_size, "pages of");
	refused_with(sample_zero, "sample");
	refused_with(value_bits, "values of 32 bits");
	refused_with(unsampled, "VM 0: value 0 is outside the 1/64 sample");
	refused_with(rice_parameter, "Rice parameter 31; 4 values at 1/64 are coded with 32");
	refused_with(rice_out_of_range, "Rice parameter 200");
	refused_with(coded_longer, "18 coded bytes, its values take 17");
	refused_with(coded_shorter, "VM 0: 4 values cannot be coded in 16 bytes"); /* 33 bits each at least */
	refused_with(coded_none, "VM 1: 1 values cannot be coded in 0 bytes");
	refused_with(trailing_bits, "VM 0: bits after its last value");
	refused_with(too_many_hashes, "hashes kept of");
	refused_with(pages_over_ram, "pages read of");
	refused_with(bad_gap, "partial reason 9");
	refused_with(many_vms, "200 VMs cannot fit");
	refused_with(control_in_name, "control character");
	refused_with(reserved, "reserved");
	refused_with(avail_over_total, "MemAvailable");
	refused_with(huge_ram, "VM 0: a page count of 4611686018427388904, out of range"); /* 2^62 + 1000 */
	refused_with(huge_mem_total, "more than any host has");
	refused_with(vms_past_max, "70000 VMs, more than any host runs");
	refused_with(too_dense, "VM 0: 268435457 values in the 1/64 sample, denser than a sketch can be");
}

/* VMs whose RAM together is more than any host's (each within its own bound): refused, as their
 * sum would be. The encoder writes what its VMs are. */
static void host_pages_bounded(void **state)
{
	(void)state;
	struct sketch_file_vm vms[17];
	for (size_t i = 0; i < 17; i++)
		vms[i] = (struct sketch_file_vm){.pid = (int32_t)i + 1, .ram_pages = SKETCH_FILE_PAGES_MAX};
	struct sketch_file f = {.sample_n = 32, .mem_total_bytes = -1, .mem_available_bytes = -1, .vms = vms, .nvms = 16}, g;
	char *buf, why[160] = "";
	size_t len;
	assert_int_equal(sketch_file_encode(&f, &buf, &len), 0);
	assert_int_equal(sketch_file_parse(buf, len, &g, why, sizeof(why)), 0); /* 2^40 pages: the bound */
	sketch_file_free(&g);
	free(buf);
	f.nvms = 17;
	assert_int_equal(sketch_file_encode(&f, &buf, &len), 0);
	assert_int_equal(sketch_file_parse(buf, len, &g, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "more than any host has"));
	free(buf);
	/* The encoder refuses values denser than the parser takes. */
	uint64_t dense[3] = {0, 1, 2};
	struct sketch_file_vm vm = {.pid = 1, .ram_pages = 3, .pages = 3, .hashes = dense, .nhashes = 3};
	f = (struct sketch_file){.sample_n = SKETCH_FILE_SAMPLE_MAX, .vms = &vm, .nvms = 1};
	assert_true(sketch_value_end(SKETCH_FILE_SAMPLE_MAX) / SKETCH_FILE_DENSITY < 3 * 10000);
	assert_int_equal(sketch_file_encode(&f, &buf, &len), 0); /* 3 values: sparse enough */
	free(buf);
}

/* One VM of these values at 1/n, encoded, parsed back: the same values; the file's length. */
static size_t values_round_trip(const uint64_t *values, size_t count, uint64_t n)
{
	struct sketch_file_vm vm = {.pid = 1, .ram_pages = (int64_t)count, .pages = (int64_t)count,
				    .hashes = (uint64_t *)values, .nhashes = count};
	struct sketch_file f = {.sample_n = n, .mem_total_bytes = -1, .mem_available_bytes = -1, .vms = &vm, .nvms = 1}, g;
	char *buf, why[160] = "";
	size_t len;
	assert_int_equal(sketch_file_encode(&f, &buf, &len), 0);
	assert_int_equal(len, 64 + 64 + sketch_coded_bytes(values, count, n));
	if (sketch_file_parse(buf, len, &g, why, sizeof(why)))
		fail_msg("%zu values at 1/%llu refused: %s", count, (unsigned long long)n, why);
	assert_int_equal(g.vms[0].nhashes, count);
	if (count)
		assert_memory_equal(g.vms[0].hashes, values, count * sizeof(uint64_t));
	sketch_file_free(&g);
	free(buf);
	return len;
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The edges of the coding: no value, one, the first and last of the sample (the widest gap),
 * one value repeated, every rate's end; and a uniform sample of 100000 values at 1/32 (a 12 GiB
 * guest's) in log2(mean gap) + 1.5 bits each, as the Rice code of geometric gaps costs: 3.2 times
 * fewer than 8 bytes. */
static void coded_values(void **state)
{
	(void)state;
	assert_int_equal(values_round_trip(NULL, 0, 32), 128);
	assert_int_equal(sketch_rice_bits(0, 32), 0);
	uint64_t end = sketch_value_end(32);
	assert_true(end == 1ull << 35);
	const uint64_t one[] = {end - 1}, edges[] = {0, end - 1}, same[] = {7, 7, 7, 7, 7, 7, 7, 7, 7};
	values_round_trip(one, 1, 32);
	values_round_trip(edges, 2, 32);
	values_round_trip(same, 9, 32);
	assert_true(sketch_value_end(1) == 1ull << 40);
	const uint64_t all[] = {0, (1ull << 40) - 1}, last[] = {(1ull << 40) - 1};
	values_round_trip(all, 2, 1);
	assert_int_equal(sketch_rice_bits(1, 1), 40); /* the widest parameter there is */
	values_round_trip(last, 1, 1);
	const uint64_t widest[] = {sketch_value_end(SKETCH_FILE_SAMPLE_MAX) - 1};
	values_round_trip(widest, 1, SKETCH_FILE_SAMPLE_MAX);
	size_t count = 100000;
	uint64_t *v = malloc(count * sizeof(*v)), seed = 33;
	assert_non_null(v);
	for (size_t i = 0; i < count; i++)
		v[i] = splitmix(&seed) % end;
	v[10] = v[11]; /* a repeat */
	qsort(v, count, sizeof(*v), cmp_u64);
	unsigned k = sketch_rice_bits(count, 32);
	assert_int_equal(k, 18); /* 2^35 / 100000 = 343597: 2^18.4 */
	double bits = (double)sketch_coded_bytes(v, count, 32) * 8 / (double)count, mean_gap_bits = log2((double)end / count);
	if (bits < mean_gap_bits + 1.4 || bits > mean_gap_bits + 1.6) /* 19.87 here */
		fail_msg("%.2f bits per value for gaps of 2^%.2f", bits, mean_gap_bits);
	values_round_trip(v, count, 32);
	/* 15 zeros and the sample's last value: k = 31, the last gap's quotient 15, 527 bits in 66
	 * bytes. Said to take 65, enough for 16 values of 32 bits: they end mid-code. */
	uint64_t far[16] = {0};
	far[15] = end - 1;
	struct sketch_file_vm vm = {.pid = 1, .ram_pages = 16, .pages = 16, .hashes = far, .nhashes = 16};
	struct sketch_file f = {.sample_n = 32, .vms = &vm, .nvms = 1}, g;
	char *buf, why[160] = "";
	size_t len;
	assert_int_equal(sketch_file_encode(&f, &buf, &len), 0);
	assert_int_equal(len, 128 + 66);
	buf[64 + 56] = 65;
	assert_int_equal(sketch_file_parse(buf, len, &g, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "VM 0: its 65 coded bytes end in value 15 of 16");
	free(buf);
	/* The encoder codes sorted values inside the sample only. */
	vm = (struct sketch_file_vm){.pid = 1, .ram_pages = 2, .pages = 2, .hashes = v, .nhashes = 2};
	v[0] = 5, v[1] = 4;
	assert_int_equal(sketch_file_encode(&f, &buf, &len), -EINVAL);
	v[0] = 5, v[1] = end;
	assert_int_equal(sketch_file_encode(&f, &buf, &len), -EINVAL);
	free(v);
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
	/* One port check for URLs and serve --listen: digits only, 1 to 5 of them, at most 65535. */
	unsigned port = 1;
	assert_int_equal(http_port_parse("0", 1, &port), 0);
	assert_int_equal(port, 0);
	assert_int_equal(http_port_parse("65535/x", 5, &port), 0);
	assert_int_equal(port, 65535);
	assert_int_equal(http_port_parse("00080", 5, &port), 0);
	assert_int_equal(port, 80);
	static const char *const bad_ports[] = {"", "65536", "123456", "+80", " 80", "8O", "-1"};
	for (size_t i = 0; i < sizeof(bad_ports) / sizeof(bad_ports[0]); i++)
		assert_int_equal(http_port_parse(bad_ports[i], strlen(bad_ports[i]), &port), -EINVAL);
	assert_int_equal(port, 80);
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

static void credentials(void **state)
{
	(void)state;
	struct http_url u = {.host = "node1"};
	const char file[] = "ops:open se:same\r\nsecond line: not read\n";
	assert_int_equal(http_credentials_parse(file, strlen(file), &u), 0);
	assert_string_equal(u.user, "ops");
	assert_string_equal(u.password, "open se:same"); /* the first ':' ends the user; spaces kept */
	assert_string_equal(u.host, "node1");             /* only the user and password set */
	assert_int_equal(http_credentials_parse("ops:", 4, &u), 0);
	assert_string_equal(u.password, "");
	assert_int_equal(http_credentials_parse("a:b", 3, &u), 0); /* no newline at all */
	assert_string_equal(u.password, "b");
	char long_password[200] = "ops:";
	memset(long_password + 4, 'p', 128);
	const char *bad[] = {"", "\n", "ops\n", ":pw\n", "ops:p\tw\n", "o\x01ps:pw", "ops:pw\x7f", long_password};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (http_credentials_parse(bad[i], strlen(bad[i]), &u) != -EINVAL)
			fail_msg("accepted %zu: %s", i, bad[i]);
	assert_string_equal(u.user, "a"); /* untouched by the refusals */
	assert_string_equal(u.password, "b");
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
		cmocka_unit_test(round_trip), cmocka_unit_test(refusals), cmocka_unit_test(host_pages_bounded),
		cmocka_unit_test(coded_values),
		cmocka_unit_test(trailing_bytes),
		cmocka_unit_test(urls), cmocka_unit_test(credentials), cmocka_unit_test(replies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
