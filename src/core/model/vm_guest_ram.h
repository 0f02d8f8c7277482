/* Where a VM's guest RAM lies in its VMM's address space: the mappings that hold its RAM blocks
 * (sizes from the command line, found among /proc/PID/maps' writable anonymous, memfd, shared or
 * hugetlbfs mappings), and what is resident outside them (/proc/PID/pagemap): the exact overhead
 * of --exact, and the ranges `vmhost share` sketches. Needs the process's maps and pagemap. */
#ifndef VMHOST_CORE_VM_GUEST_RAM_H
#define VMHOST_CORE_VM_GUEST_RAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/io.h"
#include "parse/parse.h"
#include "parse/cmdline/vmcmd.h"

/* The hugetlbfs mounts a process sees (its own mount namespace: libvirt gives QEMU its own /dev),
 * at most HUGETLBFS_MOUNTS_MAX into ret; 0 when there are none or mountinfo is unreadable. */
#define HUGETLBFS_MOUNTS_MAX 16
size_t proc_hugetlbfs_mounts(const struct io_root *root, pid_t pid, struct hugetlbfs_mount *ret);
/* A mapping of a file on one of those mounts, whatever its path, or an anonymous MAP_HUGETLB one
 * (huge pages: not in RSS). */
bool map_on_hugetlbfs(const struct map_entry *m, const struct hugetlbfs_mount *mounts, size_t n);

/* The address ranges of a process that hold the VM's guest RAM (its RAM blocks from the command
 * line, found among its mappings as the exact overhead finds them), into a malloc'd array.
 * -ENOENT when they cannot be told apart, -ESRCH when the process is gone. */
struct mem_range {
	uint64_t start, end;
};
int vm_guest_ram_ranges(const struct io_root *root, pid_t pid, const struct vm_config *cfg,
			struct mem_range **ret, size_t *ret_n);

/* Exact overhead: the bytes of resident pages of the process outside the mappings that hold guest
 * RAM. -ENOENT when guest RAM was not found, or the read's negative errno. */
int vm_overhead_exact(const struct io_root *root, pid_t pid, const struct vm_config *cfg, int64_t page_size,
		      int64_t *ret_bytes);

#endif
