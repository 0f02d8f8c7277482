/* Sketch files (`vmhost share --out`, serve's /sketch): a host's content sketches, versioned,
 * binary, little-endian (docs/share.md "Sketch files"):
 *
 *   header, 64 bytes: "VMHSKTCH", u32 version (1), u32 header bytes (64), u64 sample N,
 *     u64 key fingerprint, i64 MemTotal bytes, i64 MemAvailable bytes (-1 unknown),
 *     u32 page bytes (4096), u32 VMs, u16 host name bytes, u8 flags (bit 0 use_zero_pages
 *     known, bit 1 its value), 5 bytes zero; then the host name.
 *   per VM, 64 bytes: i32 pid, u8 partial reason (0 complete), u8 name bytes, u8 uuid bytes,
 *     u8 zero, i64 RAM pages, resident pages read, zero pages, zero-mapped pages, KSM zero
 *     pages, u64 kept hashes, u64 zero; then the name, the uuid, and the hashes (u64 each,
 *     ascending, repeats kept, each in the lowest 1/N of the hash space).
 *
 * A pure encoder and a strict parser: anything else (truncated, trailing bytes, another version,
 * wrong sizes, counts that contradict each other, unsorted or unsampled hashes) is -EINVAL with a
 * one-line reason, never a crash (fuzz/fuzz_sketch_file.c). */
#ifndef VMHOST_PARSE_SKETCH_FILE_H
#define VMHOST_PARSE_SKETCH_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SKETCH_FILE_MAGIC "VMHSKTCH"
#define SKETCH_FILE_VERSION 1u
#define SKETCH_FILE_HEADER_BYTES 64u
#define SKETCH_FILE_VM_BYTES 64u
#define SKETCH_FILE_PAGE_BYTES 4096u
#define SKETCH_FILE_SAMPLE_MAX (1u << 20)
#define SKETCH_FILE_GAP_MAX 5u /* the partial reasons (core/share/sketch.h enum sketch_gap) */

struct sketch_file_vm {
	int32_t pid;
	uint8_t gap;      /* 0: complete; else why it is partial */
	char name[256];   /* "" unknown */
	char uuid[256];   /* "" unknown */
	int64_t ram_pages, pages, zero_pages, zero_mapped_pages, ksm_zero_pages;
	uint64_t *hashes; /* sorted; owned by the file once parsed */
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

/* Encodes f (whose hashes may be borrowed) into a fresh buffer. 0, -EINVAL (a name over 255
 * bytes, a sample out of range), -ENOMEM. */
int sketch_file_encode(const struct sketch_file *f, char **ret, size_t *ret_len);

#endif
