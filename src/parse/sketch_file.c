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
	if (version != SKETCH_FILE_VERSION)
		return invalid(why, cap, "sketch file version %u; this vmhost reads version %u", version, SKETCH_FILE_VERSION);
	if (header != SKETCH_FILE_HEADER_BYTES)
		return invalid(why, cap, "a header of %u bytes; version 1's is %u", header, SKETCH_FILE_HEADER_BYTES);
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
	if ((flags & ~3u) || (flags == 2) || !all_zero(h + 59, 5))
		return invalid(why, cap, "reserved header bytes are not zero");
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
	if (v->ram_pages < 0 || v->pages < 0 || v->zero_pages < 0 || v->zero_mapped_pages < 0 || v->ksm_zero_pages < 0)
		return invalid(why, cap, "VM %zu: a negative page count", i);
	if (v->pages > v->ram_pages)
		return invalid(why, cap, "VM %zu: %lld pages read of %lld", i, (long long)v->pages, (long long)v->ram_pages);
	if (v->zero_pages > v->pages - v->zero_mapped_pages || v->zero_mapped_pages > v->pages)
		return invalid(why, cap, "VM %zu: more zero pages than pages read", i);
	if (v->nhashes > (uint64_t)(v->pages - v->zero_pages - v->zero_mapped_pages))
		return invalid(why, cap, "VM %zu: %zu hashes kept of %lld non-zero pages", i, v->nhashes,
			       (long long)(v->pages - v->zero_pages - v->zero_mapped_pages));
	return 0;
}

/* The hashes at the cursor: there, ascending, each in the lowest 1/n of the space. */
static int take_hashes(struct reader *r, struct sketch_file_vm *v, uint64_t n, size_t i, char *why, size_t cap)
{
	if ((r->len - r->off) / 8 < v->nhashes)
		return invalid(why, cap, "truncated: VM %zu's %zu hashes need %zu bytes, %zu left", i, v->nhashes,
			       v->nhashes * 8, r->len - r->off);
	v->hashes = malloc((v->nhashes ? v->nhashes : 1) * sizeof(uint64_t));
	if (!v->hashes)
		return -ENOMEM;
	for (size_t k = 0; k < v->nhashes; k++, r->off += 8) {
		uint64_t h = get_le(r->p + r->off, 8);
		if (k && h < v->hashes[k - 1])
			return invalid(why, cap, "VM %zu: hashes not sorted (hash %zu)", i, k);
		if (n > 1 && h >= UINT64_MAX / n)
			return invalid(why, cap, "VM %zu: hash %zu is outside the 1/%llu sample", i, k, (unsigned long long)n);
		v->hashes[k] = h;
	}
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
	int64_t *counts[] = {&v->ram_pages, &v->pages, &v->zero_pages, &v->zero_mapped_pages, &v->ksm_zero_pages};
	for (size_t k = 0; k < 5; k++)
		*counts[k] = (int64_t)get_le(p + 8 + 8 * k, 8);
	uint64_t nhashes = get_le(p + 48, 8);
	if (p[7] || !all_zero(p + 56, 8))
		return invalid(why, cap, "VM %zu: reserved bytes are not zero", i);
	if (nhashes > SIZE_MAX / 8)
		return invalid(why, cap, "VM %zu: %llu hashes", i, (unsigned long long)nhashes);
	v->nhashes = (size_t)nhashes;
	int e = check_counts(v, i, why, cap);
	if (e < 0)
		return e;
	r->off += SKETCH_FILE_VM_BYTES;
	if ((e = take_text(r, name_len, v->name, "a VM name", why, cap)) < 0 ||
	    (e = take_text(r, uuid_len, v->uuid, "a VM uuid", why, cap)) < 0)
		return e;
	return take_hashes(r, v, n, i, why, cap);
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
	for (; f.nvms < nvms; f.nvms++)
		if ((e = parse_vm(&r, &f.vms[f.nvms], f.sample_n, f.nvms, why, why_cap)) < 0) {
			f.nvms++; /* its hashes, if any, are freed too */
			sketch_file_free(&f);
			return e;
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
		n += SKETCH_FILE_VM_BYTES + strlen(f->vms[i].name) + strlen(f->vms[i].uuid) + f->vms[i].nhashes * 8;
	return n;
}

static unsigned char *put_vm(unsigned char *p, const struct sketch_file_vm *v)
{
	size_t name_len = strlen(v->name), uuid_len = strlen(v->uuid);
	memset(p, 0, SKETCH_FILE_VM_BYTES);
	put_le(p, (uint32_t)v->pid, 4);
	p[4] = v->gap;
	p[5] = (unsigned char)name_len;
	p[6] = (unsigned char)uuid_len;
	const int64_t counts[] = {v->ram_pages, v->pages, v->zero_pages, v->zero_mapped_pages, v->ksm_zero_pages};
	for (size_t k = 0; k < 5; k++)
		put_le(p + 8 + 8 * k, (uint64_t)counts[k], 8);
	put_le(p + 48, v->nhashes, 8);
	p += SKETCH_FILE_VM_BYTES;
	memcpy(p, v->name, name_len);
	p += name_len;
	memcpy(p, v->uuid, uuid_len);
	p += uuid_len;
	for (size_t k = 0; k < v->nhashes; k++, p += 8)
		put_le(p, v->hashes[k], 8);
	return p;
}

int sketch_file_encode(const struct sketch_file *f, char **ret, size_t *ret_len)
{
	if (f->sample_n < 1 || f->sample_n > SKETCH_FILE_SAMPLE_MAX || strlen(f->host) > 255 || f->nvms > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < f->nvms; i++)
		if (strlen(f->vms[i].name) > 255 || strlen(f->vms[i].uuid) > 255)
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
	p += SKETCH_FILE_HEADER_BYTES;
	memcpy(p, f->host, strlen(f->host));
	p += strlen(f->host);
	for (size_t i = 0; i < f->nvms; i++)
		p = put_vm(p, &f->vms[i]);
	*ret = (char *)buf;
	*ret_len = len;
	return 0;
}
