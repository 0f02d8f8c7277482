/* Entries of /proc/PID/pagemap (the kernel's Documentation/admin-guide/mm/pagemap.rst): one 64-bit
 * word per virtual page of the process, read at offset page number x 8. The one place that decodes
 * them: bit 63 present in RAM, 61 a file page or shared anonymous, 56 mapped exclusively, bits
 * 0-54 the page frame number (0 without CAP_SYS_ADMIN). */
#ifndef VMHOST_PARSE_PAGEMAP_H
#define VMHOST_PARSE_PAGEMAP_H

#include <stdbool.h>
#include <stdint.h>

#define PAGEMAP_ENTRY_BYTES 8
#define PAGEMAP_PRESENT (UINT64_C(1) << 63)
#define PAGEMAP_FILE (UINT64_C(1) << 61) /* file page or shared anonymous */
#define PAGEMAP_EXCLUSIVE (UINT64_C(1) << 56)
#define PAGEMAP_PFN_MASK ((UINT64_C(1) << 55) - 1)

/* The page is in RAM (not swapped out, not never touched). */
static inline bool pagemap_present(uint64_t entry) { return (entry & PAGEMAP_PRESENT) != 0; }
/* A file page or a shared anonymous one. */
static inline bool pagemap_file(uint64_t entry) { return (entry & PAGEMAP_FILE) != 0; }
/* Mapped by this process alone. */
static inline bool pagemap_exclusive(uint64_t entry) { return (entry & PAGEMAP_EXCLUSIVE) != 0; }
/* The page frame number; 0 when the kernel hides it (no CAP_SYS_ADMIN) or the page is absent. */
static inline uint64_t pagemap_pfn(uint64_t entry) { return entry & PAGEMAP_PFN_MASK; }

#endif
