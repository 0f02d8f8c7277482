#include "parse/sketch_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over the input: every read checks the room left first. */
struct reader {
	const unsigned char *p;
	size_t len, off;
};

static uint64_t get_le(const unsigned char *p, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void put_le(unsigned char *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static int invalid(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int invalid(char *why, size_t cap, const char *fmt, ...)
{
	if (why && cap) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* A name of n bytes at the cursor into out (n < 256): no NUL, no control character. */
static int take_text(struct reader *r, size_t n, char *out, const char *what, char *why, size_t cap)
{
	if (r->len - r->off < n)
		return invalid(why, cap, "truncated: %s of %zu bytes at offset %zu, %zu left", what, n, r->off,
			       r->len - r->off);
	for (size_t i = 0; i < n; i++)
		if (r->p[r->off + i] < 0x20 || r->p[r->off + i] == 0x7f)
			return invalid(why, cap, "%s holds a control character at offset %zu", what, r->off + i);
	memcpy(out, r->p + r->off, n);
	out[n] = '\0';
	r->off += n;
	return 0;
}

static int parse_header(struct reader *r, struct sketch_file *f, uint32_t *ret_nvms, char *why, size_t cap)
{
	const unsigned char *h = r->p;
	if (r->len < SKETCH_FILE_HEADER_BYTES)
		return invalid(why, cap, "truncated: %zu bytes, the header alone is %u", r->len, SKETCH_FILE_HEADER_BYTES);
	if (memcmp(h, SKETCH_FILE_MAGIC, 8))
		return invalid(why, cap, "not a vmhost sketch file (no VMHSKTCH magic)");
	uint32_t version = (uint32_t)get_le(h + 8, 4), header = (uint32_t)get_le(h + 12, 4);
	if (version == 1)
		return invalid(why, cap, "sketch file version 1, written by an older vmhost: sketch again");
	if (version != SKETCH_FILE_VERSION)
		return invalid(why, cap, "sketch file version %u; this vmhost reads version %u", version, SKETCH_FILE_VERSION);
	if (header != SKETCH_FILE_HEADER_BYTES)
		return invalid(why, cap, "a header of %u bytes; version 2's is %u", header, SKETCH_FILE_HEADER_BYTES);
	f->sample_n = get_le(h + 16, 8);
	f->key_fingerprint = get_le(h + 24, 8);
	f->mem_total_bytes = (int64_t)get_le(h + 32, 8);
	f->mem_available_bytes = (int64_t)get_le(h + 40, 8);
	uint32_t page = (uint32_t)get_le(h + 48, 4);
	*ret_nvms = (uint32_t)get_le(h + 52, 4);
	size_t host_len = (size_t)get_le(h + 56, 2);
	unsigned flags = h[58];
	if (f->sample_n < 1 || f->sample_n > SKETCH_FILE_SAMPLE_MAX)
		return invalid(why, cap, "sample 1/%llu out of range (1 to 1/%u)", (unsigned long long)f->sample_n,
			       SKETCH_FILE_SAMPLE_MAX);
	if (page != SKETCH_FILE_PAGE_BYTES)
		return invalid(why, cap, "pages of %u bytes; sketches hash 4096-byte pages", page);
	if (f->mem_total_bytes < -1 || f->mem_available_bytes < -1 ||
	    (f->mem_total_bytes >= 0 && f->mem_available_bytes > f->mem_total_bytes))
		return invalid(why, cap, "host memory: MemAvailable %lld against MemTotal %lld",
			       (long long)f->mem_available_bytes, (long long)f->mem_total_bytes);
	if (f->mem_total_bytes / SKETCH_FILE_PAGE_BYTES > SKETCH_FILE_HOST_PAGES_MAX)
		return invalid(why, cap, "host memory: MemTotal %lld bytes, more than any host has",
			       (long long)f->mem_total_bytes);
	if (*ret_nvms > SKETCH_FILE_VMS_MAX)
		return invalid(why, cap, "%u VMs, more than any host runs (%u at most)", *ret_nvms, SKETCH_FILE_VMS_MAX);
	if ((flags & ~3u) || (flags == 2) || !all_zero(h + 60, 4))
		return invalid(why, cap, "reserved header bytes are not zero");
	if (h[59] != SKETCH_VALUE_BITS)
		return invalid(why, cap, "values of %u bits; version 2 keeps %u of each hash", h[59], SKETCH_VALUE_BITS);
	if (host_len > 255)
		return invalid(why, cap, "a host name of %zu bytes (255 at most)", host_len);
	f->use_zero_pages_known = flags & 1;
	f->use_zero_pages = flags & 2;
	r->off = SKETCH_FILE_HEADER_BYTES;
	return take_text(r, host_len, f->host, "the host name", why, cap);
}

/* The counts of one VM against each other: what a real sketch cannot have. */
static int check_counts(const struct sketch_file_vm *v, size_t i, char *why, size_t cap)
{
	if (v->pid <= 0)
		return invalid(why, cap, "VM %zu: pid %d", i, (int)v->pid);
	if (v->gap > SKETCH_FILE_GAP_MAX)
		return invalid(why, cap, "VM %zu: partial reason %u unknown", i, v->gap);
	const int64_t counts[] = {v->ram_pages, v->pages, v->zero_pages, v->zero_mapped_pages, v->ksm_zero_pages};
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
		if (counts[c] < 0 || counts[c] > SKETCH_FILE_PAGES_MAX)
			return invalid(why, cap, "VM %zu: a page count of %lld, out of range (0 to 2^36)", i,
				       (long long)counts[c]);
	if (v->pages > v->ram_pages)
		return invalid(why, cap, "VM %zu: %lld pages read of %lld", i, (long long)v->pages, (long long)v->ram_pages);
	if (v->zero_pages > v->pages - v->zero_mapped_pages || v->zero_mapped_pages > v->pages)
		return invalid(why, cap, "VM %zu: more zero pages than pages read", i);
	if (v->nhashes > (uint64_t)(v->pages - v->zero_pages - v->zero_mapped_pages))
		return invalid(why, cap, "VM %zu: %zu hashes kept of %lld non-zero pages", i, v->nhashes,
			       (long long)(v->pages - v->zero_pages - v->zero_mapped_pages));
	return 0;
}

unsigned sketch_rice_bits(size_t count, uint64_t n)
{
	uint64_t mean_gap = count ? sketch_value_end(n) / count : 0;
	unsigned k = 0;
	while (mean_gap >> (k + 1))
		k++;
	return k;
}

uint64_t sketch_coded_bytes(const uint64_t *values, size_t count, uint64_t n)
{
	unsigned k = sketch_rice_bits(count, n);
	uint64_t bits = 0, prev = 0;
	for (size_t i = 0; i < count; i++) {
		bits += ((values[i] - prev) >> k) + 1 + k;
		prev = values[i];
	}
	return (bits + 7) / 8;
}

/* A bit stream over bytes, each filled from its least significant bit. */
struct bits {
	unsigned char *out;      /* writing */
	const unsigned char *in; /* reading */
	uint64_t at, end;        /* bit positions */
};

static bool bit_get(struct bits *b, unsigned *ret)
{
	if (b->at >= b->end)
		return false;
	*ret = b->in[b->at / 8] >> (b->at % 8) & 1;
	b->at++;
	return true;
}

/* One value after prev: its gap's quotient in unary, then its k low bits. 0 with *ret below end;
 * 1 cut short; 2 outside the sample (the quotient is bounded by it, so is the loop). */
static int rice_get(struct bits *b, unsigned k, uint64_t prev, uint64_t end, uint64_t *ret)
{
	uint64_t q = 0, low = 0, most = (end - 1 - prev) >> k;
	unsigned bit;
	for (;;) {
		if (!bit_get(b, &bit))
			return 1;
		if (!bit)
			break;
		if (++q > most)
			return 2;
	}
	for (unsigned i = 0; i < k; i++) {
		if (!bit_get(b, &bit))
			return 1;
		low |= (uint64_t)bit << i;
	}
	uint64_t v = prev + (q << k) + low;
	if (v >= end)
		return 2;
	*ret = v;
	return 0;
}

static void rice_put(struct bits *b, unsigned k, uint64_t gap)
{
	for (uint64_t q = gap >> k; q; q--, b->at++)
		b->out[b->at / 8] |= (unsigned char)(1u << (b->at % 8));
	b->at++; /* the zero that ends the quotient */
	for (unsigned i = 0; i < k; i++, b->at++)
		if (gap >> i & 1)
			b->out[b->at / 8] |= (unsigned char)(1u << (b->at % 8));
}

/* The coded values at the cursor: coded bytes there, each value inside the 1/n sample, no bit
 * beyond the last value but the zero padding of its byte. */
static int take_values(struct reader *r, struct sketch_file_vm *v, unsigned k, uint64_t coded, uint64_t n, size_t i,
		       char *why, size_t cap)
{
	if (coded > r->len - r->off)
		return invalid(why, cap, "truncated: VM %zu's values need %llu bytes, %zu left", i, (unsigned long long)coded,
			       r->len - r->off);
	if (v->nhashes > coded * 8 / (k + 1)) /* each value takes k + 1 bits at least */
		return invalid(why, cap, "VM %zu: %zu values cannot be coded in %llu bytes", i, v->nhashes,
			       (unsigned long long)coded);
	v->hashes = malloc((v->nhashes ? v->nhashes : 1) * sizeof(uint64_t));
	if (!v->hashes)
		return -ENOMEM;
	struct bits b = {.in = r->p + r->off, .end = coded * 8};
	uint64_t prev = 0, end = sketch_value_end(n);
	for (size_t j = 0; j < v->nhashes; j++) {
		int e = rice_get(&b, k, prev, end, &v->hashes[j]);
		if (e)
			return e == 1 ? invalid(why, cap, "VM %zu: its %llu coded bytes end in value %zu of %zu", i,
						(unsigned long long)coded, j, v->nhashes)
				      : invalid(why, cap, "VM %zu: value %zu is outside the 1/%llu sample", i, j,
						(unsigned long long)n);
		prev = v->hashes[j];
	}
	if ((b.at + 7) / 8 != coded)
		return invalid(why, cap, "VM %zu: %llu coded bytes, its values take %llu", i, (unsigned long long)coded,
			       (unsigned long long)((b.at + 7) / 8));
	for (unsigned bit; bit_get(&b, &bit);)
		if (bit)
			return invalid(why, cap, "VM %zu: bits after its last value", i);
	r->off += coded;
	return 0;
}

static int parse_vm(struct reader *r, struct sketch_file_vm *v, uint64_t n, size_t i, char *why, size_t cap)
{
	if (r->len - r->off < SKETCH_FILE_VM_BYTES)
		return invalid(why, cap, "truncated: VM %zu's record at offset %zu, %zu bytes left", i, r->off,
			       r->len - r->off);
	const unsigned char *p = r->p + r->off;
	v->pid = (int32_t)(uint32_t)get_le(p, 4);
	v->gap = p[4];
	size_t name_len = p[5], uuid_len = p[6];
	unsigned k = p[7];
	int64_t *counts[] = {&v->ram_pages, &v->pages, &v->zero_pages, &v->zero_mapped_pages, &v->ksm_zero_pages};
	for (size_t c = 0; c < 5; c++)
		*counts[c] = (int64_t)get_le(p + 8 + 8 * c, 8);
	uint64_t nvalues = get_le(p + 48, 8), coded = get_le(p + 56, 8);
	if (nvalues > SIZE_MAX / 8)
		return invalid(why, cap, "VM %zu: %llu values", i, (unsigned long long)nvalues);
	v->nhashes = (size_t)nvalues;
	int e = check_counts(v, i, why, cap);
	if (e < 0)
		return e;
	if (v->nhashes > sketch_value_end(n) / SKETCH_FILE_DENSITY)
		return invalid(why, cap, "VM %zu: %zu values in the 1/%llu sample, denser than a sketch can be (1/%u of "
			       "its values at most)", i, v->nhashes, (unsigned long long)n, SKETCH_FILE_DENSITY);
	if (k != sketch_rice_bits(v->nhashes, n))
		return invalid(why, cap, "VM %zu: Rice parameter %u; %zu values at 1/%llu are coded with %u", i, k,
			       v->nhashes, (unsigned long long)n, sketch_rice_bits(v->nhashes, n));
	r->off += SKETCH_FILE_VM_BYTES;
	if ((e = take_text(r, name_len, v->name, "a VM name", why, cap)) < 0 ||
	    (e = take_text(r, uuid_len, v->uuid, "a VM uuid", why, cap)) < 0)
		return e;
	return take_values(r, v, k, coded, n, i, why, cap);
}

void sketch_file_free(struct sketch_file *f)
{
	for (size_t i = 0; f->vms && i < f->nvms; i++)
		free(f->vms[i].hashes);
	free(f->vms);
	f->vms = NULL;
	f->nvms = 0;
}

int sketch_file_parse(const void *buf, size_t len, struct sketch_file *ret, char *why, size_t why_cap)
{
	struct reader r = {.p = buf, .len = len};
	struct sketch_file f = {0};
	uint32_t nvms = 0;
	int e = parse_header(&r, &f, &nvms, why, why_cap);
	if (e < 0)
		return e;
	if (nvms > (len - r.off) / SKETCH_FILE_VM_BYTES)
		return invalid(why, why_cap, "truncated: %u VMs cannot fit in %zu bytes", nvms, len - r.off);
	f.vms = calloc(nvms ? nvms : 1, sizeof(*f.vms));
	if (!f.vms)
		return -ENOMEM;
	int64_t host_pages = 0; /* each VM's at most 2^36: no overflow before the check */
	for (; f.nvms < nvms; f.nvms++) {
		e = parse_vm(&r, &f.vms[f.nvms], f.sample_n, f.nvms, why, why_cap);
		if (e == 0 && (host_pages += f.vms[f.nvms].ram_pages) > SKETCH_FILE_HOST_PAGES_MAX)
			e = invalid(why, why_cap, "VMs of %lld RAM pages together, more than any host has", (long long)host_pages);
		if (e < 0) {
			f.nvms++; /* its hashes, if any, are freed too */
			sketch_file_free(&f);
			return e;
		}
	}
	if (r.off != len) {
		sketch_file_free(&f);
		return invalid(why, why_cap, "%zu bytes after the last VM", len - r.off);
	}
	*ret = f;
	return 0;
}

static size_t encoded_len(const struct sketch_file *f)
{
	size_t n = SKETCH_FILE_HEADER_BYTES + strlen(f->host);
	for (size_t i = 0; i < f->nvms; i++)
		n += SKETCH_FILE_VM_BYTES + strlen(f->vms[i].name) + strlen(f->vms[i].uuid) +
		     sketch_coded_bytes(f->vms[i].hashes, f->vms[i].nhashes, f->sample_n);
	return n;
}

static unsigned char *put_vm(unsigned char *p, const struct sketch_file_vm *v, uint64_t n)
{
	size_t name_len = strlen(v->name), uuid_len = strlen(v->uuid);
	unsigned k = sketch_rice_bits(v->nhashes, n);
	uint64_t coded = sketch_coded_bytes(v->hashes, v->nhashes, n);
	memset(p, 0, SKETCH_FILE_VM_BYTES);
	put_le(p, (uint32_t)v->pid, 4);
	p[4] = v->gap;
	p[5] = (unsigned char)name_len;
	p[6] = (unsigned char)uuid_len;
	p[7] = (unsigned char)k;
	const int64_t counts[] = {v->ram_pages, v->pages, v->zero_pages, v->zero_mapped_pages, v->ksm_zero_pages};
	for (size_t c = 0; c < 5; c++)
		put_le(p + 8 + 8 * c, (uint64_t)counts[c], 8);
	put_le(p + 48, v->nhashes, 8);
	put_le(p + 56, coded, 8);
	p += SKETCH_FILE_VM_BYTES;
	memcpy(p, v->name, name_len);
	p += name_len;
	memcpy(p, v->uuid, uuid_len);
	p += uuid_len;
	struct bits b = {.out = p};
	for (size_t j = 0; j < v->nhashes; j++)
		rice_put(&b, k, v->hashes[j] - (j ? v->hashes[j - 1] : 0));
	return p + coded;
}

/* What the encoder can write: names that fit their byte, values sorted inside the sample, no more
 * of them than the parser takes. */
static bool encodable(const struct sketch_file *f)
{
	if (f->sample_n < 1 || f->sample_n > SKETCH_FILE_SAMPLE_MAX || strlen(f->host) > 255 || f->nvms > SKETCH_FILE_VMS_MAX)
		return false;
	uint64_t end = sketch_value_end(f->sample_n);
	for (size_t i = 0; i < f->nvms; i++) {
		const struct sketch_file_vm *v = &f->vms[i];
		if (strlen(v->name) > 255 || strlen(v->uuid) > 255 || v->nhashes > end / SKETCH_FILE_DENSITY)
			return false;
		for (size_t j = 0; j < v->nhashes; j++)
			if (v->hashes[j] >= end || (j && v->hashes[j] < v->hashes[j - 1]))
				return false;
	}
	return true;
}

int sketch_file_encode(const struct sketch_file *f, char **ret, size_t *ret_len)
{
	if (!encodable(f))
		return -EINVAL;
	size_t len = encoded_len(f);
	unsigned char *buf = calloc(1, len), *p = buf;
	if (!buf)
		return -ENOMEM;
	memcpy(p, SKETCH_FILE_MAGIC, 8);
	put_le(p + 8, SKETCH_FILE_VERSION, 4);
	put_le(p + 12, SKETCH_FILE_HEADER_BYTES, 4);
	put_le(p + 16, f->sample_n, 8);
	put_le(p + 24, f->key_fingerprint, 8);
	put_le(p + 32, (uint64_t)f->mem_total_bytes, 8);
	put_le(p + 40, (uint64_t)f->mem_available_bytes, 8);
	put_le(p + 48, SKETCH_FILE_PAGE_BYTES, 4);
	put_le(p + 52, f->nvms, 4);
	put_le(p + 56, strlen(f->host), 2);
	p[58] = (unsigned char)((f->use_zero_pages_known ? 1 : 0) | (f->use_zero_pages_known && f->use_zero_pages ? 2 : 0));
	p[59] = SKETCH_VALUE_BITS;
	p += SKETCH_FILE_HEADER_BYTES;
	memcpy(p, f->host, strlen(f->host));
	p += strlen(f->host);
	for (size_t i = 0; i < f->nvms; i++)
		p = put_vm(p, &f->vms[i], f->sample_n);
	*ret = (char *)buf;
	*ret_len = len;
	return 0;
}
