#include "core/share/sketch.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/stats.h"
#include "core/base/stop.h"
#include "core/model/vm_guest_ram.h"
#include "io/vmread.h"
#include "parse/elements.h"
#include "parse/pagemap.h"

#define CHUNK_PAGES 256                /* one read: 1 MiB */
#define PROGRESS_PAGES (16384 * 4)     /* 256 MiB between two progress calls */

const char *sketch_gap_name(enum sketch_gap g)
{
	static const char *const names[] = {
		[SKETCH_COMPLETE] = NULL, [SKETCH_VM_EXITED] = "vm-exited", [SKETCH_MAPPING_GONE] = "mapping-gone",
		[SKETCH_NO_PERMISSION] = "no-permission", [SKETCH_RAM_UNKNOWN] = "ram-unknown",
		[SKETCH_STOPPED] = "stopped"};
	return (size_t)g < ELEMENTSOF(names) ? names[g] : "unknown";
}

void sketch_budget_start(struct sketch_budget *b, double cpu_percent)
{
	*b = (struct sketch_budget){.cpu_percent = cpu_percent, .start_wall = clock_monotonic_seconds(),
				    .start_cpu = clock_thread_cpu_seconds()};
}

/* Sleeps off any CPU time beyond the budget's share of the time gone by, in slices of 0.1 s at
 * most so that a cancel from another thread ends it soon (a slow CPU owes seconds at 1%). */
static void budget_hold(const struct sketch_budget *b, const atomic_bool *cancel)
{
	if (!b || !(b->cpu_percent > 0) || b->cpu_percent >= 100)
		return;
	double cpu = clock_thread_cpu_seconds() - b->start_cpu;
	double until = b->start_wall + cpu * 100.0 / b->cpu_percent;
	for (double now = clock_monotonic_seconds(); until - now > 0.001 && !(cancel && atomic_load(cancel));
	     now = clock_monotonic_seconds())
		if (!sleep_for(until - now < 0.1 ? until - now : 0.1))
			break;
}

static bool all_zero(const unsigned char *p)
{
	const uint64_t *w = (const uint64_t *)p;
	uint64_t acc = 0;
	for (size_t i = 0; i < SKETCH_PAGE_BYTES / sizeof(uint64_t); i++)
		acc |= w[i];
	return acc == 0;
}

int sketch_add_page(struct sketch *s, const struct siphash_key *key, const void *page)
{
	s->pages++;
	if (all_zero(page)) {
		s->zero_pages++;
		return 0;
	}
	uint64_t h = siphash13(key, page, SKETCH_PAGE_BYTES);
	if (!sketch_keeps(h, s->sample_n))
		return 0;
	if (s->nhashes == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		uint64_t *p = realloc(s->hashes, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->hashes = p;
		s->cap = cap;
	}
	s->hashes[s->nhashes++] = sketch_value(h);
	return 0;
}

void sketch_finish(struct sketch *s)
{
	if (s->nhashes)
		qsort(s->hashes, s->nhashes, sizeof(*s->hashes), cmp_u64);
}

void sketch_free(struct sketch *s)
{
	free(s->hashes);
	s->hashes = NULL;
	s->nhashes = s->cap = 0;
}

static enum sketch_gap gap_of(ssize_t err)
{
	return err == -ESRCH ? SKETCH_VM_EXITED : err == -EPERM ? SKETCH_NO_PERMISSION : SKETCH_MAPPING_GONE;
}

/* Which pages of [addr, addr + npages) are resident (pagemap bit 63); all of them when pagemap
 * cannot be read (nothing is then skipped, and absent pages read as zero). */
static void resident(int pagemap, uint64_t addr, size_t npages, uint64_t *bits)
{
	ssize_t n = pagemap >= 0 ? io_pread(pagemap, bits, npages * PAGEMAP_ENTRY_BYTES,
					   (off_t)(addr / SKETCH_PAGE_BYTES * PAGEMAP_ENTRY_BYTES)) : -1;
	for (size_t i = n < 0 ? 0 : (size_t)n / PAGEMAP_ENTRY_BYTES; i < npages; i++)
		bits[i] = PAGEMAP_PRESENT;
}

/* Which page frames are the kernel's zero page (KPF_ZERO_PAGE in /proc/kpageflags, root): an
 * empty page mapped to it costs nothing, and KSM neither scans nor counts it. The zero page and
 * the huge zero page's frames are few: kept once found. */
#define ZERO_PFNS_MAX 1024
#define KPF_ZERO_PAGE 24
struct zero_frames {
	int kpageflags; /* -1: unreadable (every empty page then counts as holding memory) */
	uint64_t pfn[ZERO_PFNS_MAX];
	size_t n;
};

static bool kernel_zero_page(struct zero_frames *z, uint64_t pagemap_entry)
{
	uint64_t pfn = pagemap_pfn(pagemap_entry), flags;
	if (z->kpageflags < 0 || !pfn)
		return false;
	for (size_t i = 0; i < z->n; i++)
		if (z->pfn[i] == pfn)
			return true;
	if (io_pread(z->kpageflags, &flags, sizeof(flags), (off_t)(pfn * 8)) != (ssize_t)sizeof(flags) ||
	    !(flags >> KPF_ZERO_PAGE & 1))
		return false;
	if (z->n < ZERO_PFNS_MAX)
		z->pfn[z->n++] = pfn;
	return true;
}

/* The resident run of pages [first, end) of a chunk at addr, read and added. 0 or -ENOMEM; a read
 * that fails is no error of ours but a gap in the sketch: 0 with s->gap set. */
static int read_run(const struct io_process *vmp, uint64_t addr, size_t first, size_t end, const uint64_t *bits,
		    struct zero_frames *z, const struct sketch_opts *o, unsigned char *buf, struct sketch *s)
{
	size_t len = (end - first) * SKETCH_PAGE_BYTES;
	ssize_t got = io_process_read_held(vmp, addr + first * SKETCH_PAGE_BYTES, buf, len);
	if (got < 0 || (size_t)got < len) {
		s->gap = got < 0 ? gap_of(got) : SKETCH_MAPPING_GONE;
		return 0;
	}
	for (size_t i = 0; i < end - first; i++) {
		const unsigned char *page = buf + i * SKETCH_PAGE_BYTES;
		if (all_zero(page) && kernel_zero_page(z, bits[first + i])) {
			s->pages++;
			s->zero_mapped_pages++;
		} else if (sketch_add_page(s, &o->key, page) < 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* One mapping, chunk by chunk, reading only runs of resident pages: an absent page holds nothing
 * to merge, and reading it would fault it in (or swap it in). 0, or -ENOMEM; a read that fails
 * ends it with s->gap set. */
static int read_range(const struct io_process *vmp, int pagemap, struct zero_frames *z, const struct mem_range *r,
		      const struct sketch_opts *o, unsigned char *buf, struct sketch *s)
{
	uint64_t bits[CHUNK_PAGES];
	for (uint64_t addr = r->start; addr < r->end; addr += CHUNK_PAGES * SKETCH_PAGE_BYTES) {
		if ((o->stop && *o->stop) || (o->cancel && atomic_load(o->cancel))) {
			s->gap = SKETCH_STOPPED;
			return 0;
		}
		size_t npages = (size_t)((r->end - addr) / SKETCH_PAGE_BYTES);
		npages = npages < CHUNK_PAGES ? npages : CHUNK_PAGES;
		resident(pagemap, addr, npages, bits);
		for (size_t i = 0; i < npages;) {
			size_t j = i;
			while (j < npages && pagemap_present(bits[j]))
				j++;
			int err = j > i ? read_run(vmp, addr, i, j, bits, z, o, buf, s) : 0;
			if (err < 0 || s->gap != SKETCH_COMPLETE)
				return err;
			i = j > i ? j : i + 1;
		}
		budget_hold(o->budget, o->cancel);
		if (o->progress && (addr - r->start) / SKETCH_PAGE_BYTES % PROGRESS_PAGES == 0)
			o->progress(o->progress_arg, s);
	}
	return 0;
}

/* After the read: the RAM mappings must be those it started from. Pages of a mapping gone
 * mid-read read as absent in pagemap, so only this tells them from pages never touched. */
static enum sketch_gap still_mapped(const struct io_root *root, const struct vm *vm, const struct mem_range *was,
				    size_t nwas)
{
	struct mem_range *now;
	size_t n;
	int r = vm_guest_ram_ranges(root, vm->pid, &vm->cfg, &now, &n);
	if (r < 0) /* a process gone has no maps file either */
		return r == -ESRCH || io_exists(root, IO_PROC, "%d", (int)vm->pid) <= 0 ? SKETCH_VM_EXITED
											   : SKETCH_MAPPING_GONE;
	bool same = n == nwas;
	for (size_t i = 0; same && i < n; i++)
		same = now[i].start == was[i].start && now[i].end == was[i].end;
	free(now);
	return same ? SKETCH_COMPLETE : SKETCH_MAPPING_GONE;
}

/* Holds the VM's process (S-L8: a read of a recycled pid would hash another process's memory
 * under the VM's name): the process now at its pid, if it started when the VM did, held by a
 * pidfd that every read is checked against. SKETCH_COMPLETE, or SKETCH_VM_EXITED. */
static enum sketch_gap hold(const struct io_root *root, const struct vm *vm, struct io_process *ret)
{
	if (io_process_hold(vm->pid, ret) < 0)
		return SKETCH_VM_EXITED;
	char buf[1024];
	struct proc_stat st;
	ssize_t n = vm->stat_known ? io_read(root, IO_PROC, buf, sizeof(buf), "%d/stat", (int)vm->pid) : 0;
	bool same = !vm->stat_known || (n >= 0 && parse_stat(buf, (size_t)n, &st) == 0 && st.start_ticks == vm->start_ticks);
	if (same && io_process_alive(ret)) /* alive after the stat: the stat was its */
		return SKETCH_COMPLETE;
	io_process_release(ret);
	return SKETCH_VM_EXITED;
}

int sketch_take(const struct io_root *root, const struct vm *vm, const struct sketch_opts *o, struct sketch *ret)
{
	struct sketch s = {.pid = vm->pid, .sample_n = o->sample_n ? o->sample_n : 1};
	snprintf(s.name, sizeof(s.name), "%s", vm->cfg.name);
	double wall0 = clock_monotonic_seconds(), cpu0 = clock_thread_cpu_seconds();
	struct mem_range *ranges = NULL;
	size_t n = 0;
	int r = vm_guest_ram_ranges(root, vm->pid, &vm->cfg, &ranges, &n);
	struct io_process vmp;
	if (r < 0 || (s.gap = hold(root, vm, &vmp)) != SKETCH_COMPLETE) {
		if (r < 0)
			s.gap = r == -ESRCH ? SKETCH_VM_EXITED : r == -EPERM || r == -EACCES ? SKETCH_NO_PERMISSION
											 : SKETCH_RAM_UNKNOWN;
		free(ranges);
		*ret = s;
		return r == -ENOMEM ? r : 0;
	}
	unsigned char *buf = malloc(CHUNK_PAGES * SKETCH_PAGE_BYTES);
	struct zero_frames *z = malloc(sizeof(*z));
	if (!buf || !z) {
		free(buf);
		free(z);
		free(ranges);
		io_process_release(&vmp);
		return -ENOMEM;
	}
	z->n = 0;
	z->kpageflags = io_open(root, IO_PROC, 0, "kpageflags");
	s.ksm_zero_pages = vm->mem.ksm_zero_pages.known ? vm->mem.ksm_zero_pages.v : 0;
	int pagemap = io_open(root, IO_PROC, 0, "%d/pagemap", vm->pid);
	for (size_t i = 0; i < n; i++)
		s.ram_pages += (int64_t)((ranges[i].end - ranges[i].start) / SKETCH_PAGE_BYTES);
	for (size_t i = 0; i < n && r == 0 && s.gap == SKETCH_COMPLETE; i++)
		r = read_range(&vmp, pagemap, z, &ranges[i], o, buf, &s);
	if (pagemap >= 0)
		io_close(pagemap);
	if (z->kpageflags >= 0)
		io_close(z->kpageflags);
	free(z);
	if (r == 0 && s.gap == SKETCH_COMPLETE)
		s.gap = still_mapped(root, vm, ranges, n);
	if (r == 0 && s.gap == SKETCH_COMPLETE && !io_process_alive(&vmp))
		s.gap = SKETCH_VM_EXITED; /* the maps read again may be another process's */
	io_process_release(&vmp);
	free(buf);
	free(ranges);
	if (r < 0) {
		sketch_free(&s);
		return r;
	}
	sketch_finish(&s);
	s.cpu_seconds = clock_thread_cpu_seconds() - cpu0;
	s.wall_seconds = clock_monotonic_seconds() - wall0;
	*ret = s;
	return 0;
}
