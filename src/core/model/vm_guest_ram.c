/* Where a VM's guest RAM lies in its VMM's address space, and what is resident outside it: see
 * vm_guest_ram.h. */
#include "core/model/vm_guest_ram.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "parse/elements.h"
#include "parse/pagemap.h"
#include "parse/parse.h"

struct mapping {
	uint64_t start, end;
	bool candidate; /* writable, anonymous / memfd / shared file: may hold guest RAM */
	bool guest;
};

size_t proc_hugetlbfs_mounts(const struct io_root *root, pid_t pid, struct hugetlbfs_mount *ret)
{
	char *text;
	size_t len;
	if (io_read_alloc(root, IO_PROC, &text, &len, "%d/mountinfo", pid) < 0)
		return 0;
	int n = parse_mountinfo_hugetlbfs(text, len, ret, HUGETLBFS_MOUNTS_MAX);
	free(text);
	return n > 0 ? (size_t)n : 0;
}

bool map_on_hugetlbfs(const struct map_entry *m, const struct hugetlbfs_mount *mounts, size_t n)
{
	/* MAP_HUGETLB without a file: the kernel's own hugetlbfs mount, in no mountinfo. */
	if (m->path_len >= 14 && !memcmp(m->path, "/anon_hugepage", 14))
		return true;
	for (size_t i = 0; m->inode && i < n; i++)
		if (mounts[i].dev_major == m->dev_major && mounts[i].dev_minor == m->dev_minor)
			return true;
	return false;
}

static bool guest_candidate(const struct map_entry *m, const struct hugetlbfs_mount *mounts, size_t nmounts)
{
	if (m->perms[0] != 'r' || m->perms[1] != 'w')
		return false;
	if (m->path_len == 0 || map_on_hugetlbfs(m, mounts, nmounts))
		return true;
	static const char *const prefixes[] = {"/memfd:", "/dev/hugepages", "/dev/shm/", "/run/", "/hugepages"};
	for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
		if (m->path_len >= strlen(prefixes[i]) && !memcmp(m->path, prefixes[i], strlen(prefixes[i])))
			return true;
	return m->perms[3] == 's' || memmem(m->path, m->path_len, "huge", 4) != NULL;
}

/* Marks the mappings that hold each RAM block: an exact-size mapping first, else a run of
 * adjacent candidate mappings of exactly the block's size. */
static bool mark_guest(struct mapping *maps, size_t n, const struct vm_config *cfg)
{
	for (size_t b = 0; b < cfg->nblocks; b++) {
		uint64_t want = cfg->block_bytes[b];
		bool found = false;
		for (size_t i = 0; i < n && !found; i++) {
			if (maps[i].candidate && !maps[i].guest && maps[i].end - maps[i].start == want)
				maps[i].guest = found = true;
		}
		for (size_t i = 0; i < n && !found; i++) {
			uint64_t len = 0;
			size_t j = i;
			while (j < n && maps[j].candidate && !maps[j].guest && len < want &&
			       (j == i || maps[j].start == maps[j - 1].end))
				len += maps[j].end - maps[j].start, j++;
			if (len == want)
				for (size_t k = i; k < j; k++)
					maps[k].guest = found = true;
		}
		if (!found)
			return false;
	}
	return true;
}

static int count_present(int fd, uint64_t start, uint64_t end, int64_t page_size, int64_t *pages)
{
	uint64_t buf[4096];
	uint64_t first = start / (uint64_t)page_size, last = end / (uint64_t)page_size;
	while (first < last) {
		size_t want = last - first < 4096 ? (size_t)(last - first) : 4096;
		ssize_t n = io_pread(fd, buf, want * sizeof(uint64_t), (off_t)(first * sizeof(uint64_t)));
		if (n < 0)
			return (int)n;
		if (n == 0)
			break; /* beyond the user address space ([vsyscall]) */
		size_t got = (size_t)n / sizeof(uint64_t);
		for (size_t i = 0; i < got; i++)
			*pages += pagemap_present(buf[i]);
		first += got;
	}
	return 0;
}

/* The process's mappings, those that hold guest RAM marked. -ENOENT when the RAM blocks are not
 * known or not found among them. */
static int guest_maps(const struct io_root *root, pid_t pid, const struct vm_config *cfg, struct mapping **ret,
		      size_t *ret_n)
{
	if (!cfg->guest_ram_bytes.known || cfg->nblocks == 0)
		return -ENOENT;
	struct hugetlbfs_mount mounts[HUGETLBFS_MOUNTS_MAX];
	size_t nmounts = proc_hugetlbfs_mounts(root, pid, mounts);
	char *text;
	size_t len;
	int r = io_read_alloc(root, IO_PROC, &text, &len, "%d/maps", pid);
	if (r < 0)
		return r;
	size_t n = 0, cap = 256, pos = 0;
	struct mapping *maps = malloc(cap * sizeof(*maps));
	struct map_entry e;
	while (maps && (r = parse_maps_next(text, len, &pos, &e)) > 0) {
		if (n == cap) {
			struct mapping *m = realloc(maps, 2 * cap * sizeof(*maps));
			if (!m) {
				free(maps);
				maps = NULL;
				break;
			}
			maps = m;
			cap *= 2;
		}
		maps[n++] = (struct mapping){.start = e.start, .end = e.end, .candidate = guest_candidate(&e, mounts, nmounts)};
		/* Inaccessible reservations and guard pages hold nothing resident. */
		if (!strncmp(e.perms, "---", 3))
			maps[n - 1].end = maps[n - 1].start;
	}
	free(text);
	if (!maps)
		return -ENOMEM;
	if (r < 0 || !mark_guest(maps, n, cfg)) {
		free(maps);
		return r < 0 ? r : -ENOENT;
	}
	*ret = maps;
	*ret_n = n;
	return 0;
}

int vm_guest_ram_ranges(const struct io_root *root, pid_t pid, const struct vm_config *cfg,
			struct mem_range **ret, size_t *ret_n)
{
	struct mapping *maps;
	size_t n, w = 0;
	int r = guest_maps(root, pid, cfg, &maps, &n);
	if (r < 0)
		return r;
	struct mem_range *ranges = malloc((n ? n : 1) * sizeof(*ranges));
	if (!ranges) {
		free(maps);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (maps[i].guest)
			ranges[w++] = (struct mem_range){maps[i].start, maps[i].end};
	free(maps);
	*ret = ranges;
	*ret_n = w;
	return 0;
}

int vm_overhead_exact(const struct io_root *root, pid_t pid, const struct vm_config *cfg, int64_t page_size,
		      int64_t *ret_bytes)
{
	struct mapping *maps;
	size_t n;
	int r = guest_maps(root, pid, cfg, &maps, &n);
	if (r < 0)
		return r;
	int fd = io_open(root, IO_PROC, 0, "%d/pagemap", pid);
	if (fd < 0) {
		free(maps);
		return fd;
	}
	int64_t pages = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		if (!maps[i].guest && maps[i].end > maps[i].start)
			r = count_present(fd, maps[i].start, maps[i].end, page_size, &pages);
	io_close(fd);
	free(maps);
	if (r < 0)
		return r;
	*ret_bytes = pages * page_size;
	return 0;
}
