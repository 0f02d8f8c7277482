/* Sketch files (`vmhost share --out`, serve's /sketch): a host's content sketches, versioned,
 * binary, little-endian (docs/share.md "Sketch files"):
 *
 *   header, 64 bytes: "VMHSKTCH", u32 version (2), u32 header bytes (64), u64 sample N,
 *     u64 key fingerprint, i64 MemTotal bytes, i64 MemAvailable bytes (-1 unknown),
 *     u32 page bytes (4096), u32 VMs, u16 host name bytes, u8 flags (bit 0 use_zero_pages
 *     known, bit 1 its value), u8 value bits (40), 4 bytes zero; then the host name.
 *   per VM, 64 bytes: i32 pid, u8 partial reason (0 complete), u8 name bytes, u8 uuid bytes,
 *     u8 Rice parameter k, i64 RAM pages, resident pages read, zero pages, zero-mapped pages,
 *     KSM zero pages, u64 kept values, u64 coded bytes; then the name, the uuid, and the coded
 *     values.
 *
 * A kept value is the top 40 bits of a kept hash (sketch_value): ascending, repeats kept, each
 * below sketch_value_end(N). They are coded as the gaps between them (the first from 0), each
 * gap g as g >> k one-bits, a zero bit, then the k low bits of g, least significant first; the
 * bit stream fills each byte from its least significant bit, and the last byte is padded with
 * zero bits. k is sketch_rice_bits(count, N): a function of the header, so a sketch has one
 * coding and a file encodes back to the very same bytes. Version 1 (8-byte hashes) is refused:
 * sketches are short-lived, sketch again.
 *
 * A pure encoder and a strict parser: anything else (truncated, trailing bytes or bits, another
 * version, wrong sizes, counts that contradict each other, values outside the sample, another
 * Rice parameter) is -EINVAL with a one-line reason, never a crash (fuzz/fuzz_sketch_file.c).
 * What no host can have is refused too, so that a file from a hostile server costs memory in
 * proportion to its length and its counts fit every sum made of them: values denser than 1/64 of
 * the sample's space (each then takes 7 bits at least: the values' memory is at most 9.2 times
 * their coded bytes), more than SKETCH_FILE_VMS_MAX VMs, page counts beyond
 * SKETCH_FILE_PAGES_MAX a VM or SKETCH_FILE_HOST_PAGES_MAX a host (in bytes, a host's fit an
 * int64 with 2^11 to spare), MemTotal beyond SKETCH_FILE_HOST_PAGES_MAX pages. */
#ifndef VMHOST_PARSE_SKETCH_FILE_H
#define VMHOST_PARSE_SKETCH_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SKETCH_FILE_MAGIC "VMHSKTCH"
#define SKETCH_FILE_VERSION 2u
#define SKETCH_FILE_HEADER_BYTES 64u
#define SKETCH_FILE_VM_BYTES 64u
#define SKETCH_FILE_PAGE_BYTES 4096u
#define SKETCH_FILE_SAMPLE_MAX (1u << 20)
#define SKETCH_FILE_GAP_MAX 5u /* the partial reasons (core/share/sketch.h enum sketch_gap) */
#define SKETCH_VALUE_BITS 40u  /* of each kept hash, the top bits kept (docs/share.md "Size") */
#define SKETCH_FILE_DENSITY 64u /* a VM's values fill 1/64 of the sample's space at most (64 TiB at 1/1) */
#define SKETCH_FILE_VMS_MAX 65536u
#define SKETCH_FILE_PAGES_MAX (1ll << 36)      /* of each count of a VM: 256 TiB */
#define SKETCH_FILE_HOST_PAGES_MAX (1ll << 40) /* of a host's VMs' RAM together, and its MemTotal: 4 PiB */

/* What a sketch keeps of a sampled 64-bit hash: its top 40 bits. The sample is decided on the
 * whole hash first (core/share/sketch.h sketch_keeps); every sketch, file and plan compares these. */
static inline uint64_t sketch_value(uint64_t hash) { return hash >> (64 - SKETCH_VALUE_BITS); }
/* One past the largest value of a hash in the lowest 1/n of the hash space. */
static inline uint64_t sketch_value_end(uint64_t n)
{
	return n <= 1 ? 1ull << SKETCH_VALUE_BITS : sketch_value(UINT64_MAX / n - 1) + 1;
}
/* The Rice parameter of count values below sketch_value_end(n): floor(log2(mean gap)), which
 * codes the geometric gaps of a uniform sample in ~k + 1.5 bits each; 0 for no value. */
unsigned sketch_rice_bits(size_t count, uint64_t n);
/* The bytes count sorted values below sketch_value_end(n) take coded (the per-VM record, name
 * and uuid aside): what a VM's sketch costs in a file, without writing it. */
uint64_t sketch_coded_bytes(const uint64_t *values, size_t count, uint64_t n);

struct sketch_file_vm {
	int32_t pid;
	uint8_t gap;      /* 0: complete; else why it is partial */
	char name[256];   /* "" unknown */
	char uuid[256];   /* "" unknown */
	int64_t ram_pages, pages, zero_pages, zero_mapped_pages, ksm_zero_pages;
	uint64_t *hashes; /* the kept values (sketch_value), sorted; owned by the file once parsed */
	size_t nhashes;
};

struct sketch_file {
	uint64_t sample_n;
	uint64_t key_fingerprint;
	int64_t mem_total_bytes, mem_available_bytes; /* -1: unknown */
	bool use_zero_pages_known, use_zero_pages;
	char host[256];
	struct sketch_file_vm *vms;
	size_t nvms;
};

/* Parses a whole file into *ret (fresh allocations). 0; -EINVAL with why[] saying what is wrong
 * (*ret untouched); -ENOMEM. */
int sketch_file_parse(const void *buf, size_t len, struct sketch_file *ret, char *why, size_t why_cap);
/* Frees what sketch_file_parse allocated (the hashes and the VMs). */
void sketch_file_free(struct sketch_file *f);

/* Encodes f (whose values may be borrowed) into a fresh buffer. 0, -EINVAL (a name over 255
 * bytes, a sample out of range, values unsorted or outside the sample), -ENOMEM. */
int sketch_file_encode(const struct sketch_file *f, char **ret, size_t *ret_len);

#endif
