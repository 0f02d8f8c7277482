/* Measuring the VMs found: each one's counters from /proc and its cgroup, its CPU and vCPUs, disks
 * and network, and from them its PSS and overhead (estimated, or exact with --exact), spread over
 * a few threads for many VMs. See vm.h. */
#include "core/model/vm.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/parallel.h"
#include "core/base/rate.h"
#include "core/model/host.h"
#include "core/model/proc.h"
#include "core/model/vm_guest_ram.h"
#include "io/clock.h"
#include "parse/io_stat.h"

const char *measure_method_name(enum measure_method m)
{
	return m == METHOD_EXACT ? "exact" : m == METHOD_SAMPLED ? "sampled" : m == METHOD_ESTIMATE ? "estimate" : NULL;
}

maybe_i64 vm_memory_cost(const struct vm *vm)
{
	return memory_cost(vm->pss_bytes, hugetlb_cost(vm->mem.hugetlb, vm->hugetlb_private_bytes,
							vm->hugetlb_shared_bytes, vm->hugetlb_shared_mappers));
}

/* What smaps_rollup of a VM's processes says, summed, before it is the VM's. */
struct exact_pss {
	int64_t pss;
	maybe_i64 thp_bytes, swap_pss_bytes, hugetlb_private_bytes, hugetlb_shared_bytes;
	unsigned hugetlb_shared_mappers;
	struct smaps_rollup vmm; /* the VMM's own, without its helpers */
};

/* Adds one process's huge pages (smaps_rollup) into the VM's exact split; unknown stays unknown. */
static void add_exact_hugetlb(struct exact_pss *e, const struct smaps_rollup *sr)
{
	if (!sr->private_hugetlb.known || !sr->shared_hugetlb.known || !e->hugetlb_private_bytes.known) {
		e->hugetlb_private_bytes = e->hugetlb_shared_bytes = UNKNOWN;
		return;
	}
	e->hugetlb_private_bytes.v += sr->private_hugetlb.v;
	e->hugetlb_shared_bytes.v += sr->shared_hugetlb.v;
	e->hugetlb_shared_mappers += sr->shared_hugetlb.v > 0;
}

/* The VMM's pid, then its helpers', into pids (room for 1 + VM_MAX_HELPERS); how many. */
static size_t vm_pids(const struct vm *vm, pid_t *pids)
{
	pids[0] = vm->pid;
	memcpy(pids + 1, vm->helpers, vm->nhelpers * sizeof(pid_t));
	return 1 + vm->nhelpers;
}

/* Disk and network counters of the VMM and its helpers, its scope and its taps. */
static void measure_io(const struct io_root *root, struct vm *vm, const struct vm *before)
{
	pid_t pids[1 + VM_MAX_HELPERS];
	size_t npids = vm_pids(vm, pids);
	struct vm_io was = vm->io; /* a memo's or discovery's: its interfaces when it has them */
	struct vm_io_source src = {pids, npids, vm->vm_scope ? vm->cgroup : NULL, vm->cgroup_version};
	vm_io_read(root, &src, before ? &before->io : &was, &vm->io);
}

/* CPU of the VMM (all threads) and its helpers, each vCPU, its stalls (stalls NULL: not read),
 * and the scope's cgroup figures. */
static int measure_cost(const struct io_root *root, const struct host *host, struct vm *vm, const struct vm *before,
			struct stall_reader *stalls)
{
	uint64_t ticks = vm->cpu_ticks;
	for (size_t i = 0; i < vm->nhelpers; i++) {
		struct proc_stat st;
		if (proc_read_stat(root, vm->helpers[i], &st) == 0)
			ticks += st.utime_ticks + st.stime_ticks;
	}
	/* This VM's reading before (measured again), or what a memo remembers of it: */
	struct vm_cpu was = vm->cpu;
	/* An unreadable or truncated stat: the CPU time is unknown, not 0. */
	vm->cpu = (struct vm_cpu){.cpu_seconds = vm->stat_known ? ticks_to_seconds(ticks) : NAN,
				  .vcpu_delay_seconds = NAN, .cpu_percent = NAN, .vcpu_delay_percent = NAN};
	/* No thread list (a fixture tree, or the VMM exiting now): the vCPUs are unknown; the
	 * memory reads tell whether the VM is gone. */
	bool threads = !vm->mem.threads.known || vm->mem.threads.v > 1; /* one thread: no vCPU thread */
	if (vm->cfg.vmm != VMM_PROCESS && !threads)
		vm->cpu.vcpus_known = true;
	else if (vm->cfg.vmm != VMM_PROCESS) {
		struct vcpus_known k = {before ? &before->cpu : &was, vm->comm, vm->cfg.max_vcpus, host->schedstats,
					vm->mem.threads.known ? (long)vm->mem.threads.v : 0};
		if (vcpus_read(root, vm->pid, &k, &vm->cpu) == -ENOMEM) {
			vm_cpu_free(&was);
			return -ENOMEM;
		}
	}
	/* The VMM's stalls, and its vCPUs' when their threads were read (a memo's are not). */
	if (vm_stalls_read(stalls, vm->pid, before ? &before->stalls : NULL, before ? &before->cpu : NULL, &vm->cpu,
			   &vm->stalls) == -ESRCH) {
		vm_cpu_free(&was);
		return -ESRCH;
	}
	vm_cpu_free(&was);
	vm_vcpu_nodes_read(root, &host->numa, vm->pid, &vm->cpu, &vm->numa);
	vm_cgroup_read(root, vm->vm_scope && vm->cgroup_version == 2 ? vm->cgroup : NULL,
		       vm->cgroup_v1_memory, host->page_size_bytes, &vm->cg);
	/* The hugetlb controller's files, only for a VM that maps huge pages (read at every sample). */
	if (vm->vm_scope && vm->cgroup_version == 2 && vm->mem.hugetlb.known && vm->mem.hugetlb.v > 0)
		vm->cg.hugetlb_bytes = cgroup_hugetlb_bytes(root, vm->cgroup);
	measure_io(root, vm, before);
	return 0;
}

int vm_measure_pss_exact(const struct io_root *root, const struct host *host, struct vm *vm, unsigned *denied,
			 struct pss_calibration *ret_cal)
{
	double cpu0 = clock_thread_cpu_seconds();
	struct exact_pss e = {.hugetlb_private_bytes = MAYBE(0), .hugetlb_shared_bytes = MAYBE(0)};
	for (size_t i = 0; i <= vm->nhelpers; i++) { /* the VMM's PSS and each helper's, summed */
		struct smaps_rollup sr;
		int r = proc_read_smaps_rollup(root, i == 0 ? vm->pid : vm->helpers[i - 1], &sr);
		if (r < 0) {
			*denied += r == -EACCES || r == -EPERM;
			if (i == 0)
				return r;
			continue; /* a helper that exits is no longer counted */
		}
		if (i == 0)
			e.vmm = sr;
		e.pss += sr.pss.v;
		e.thp_bytes = i == 0 ? sr.anon_huge_pages : maybe_add(e.thp_bytes, sr.anon_huge_pages);
		e.swap_pss_bytes = i == 0 ? sr.swap_pss : maybe_add(e.swap_pss_bytes, sr.swap_pss);
		add_exact_hugetlb(&e, &sr);
	}
	vm->pss_bytes = MAYBE(e.pss);
	vm->pss_bound_bytes = MAYBE(0);
	vm->pss_method = METHOD_EXACT;
	vm->thp_bytes = e.thp_bytes;
	vm->swap_pss_bytes = e.swap_pss_bytes;
	vm->hugetlb_private_bytes = e.hugetlb_private_bytes;
	vm->hugetlb_shared_bytes = e.hugetlb_shared_bytes;
	vm->hugetlb_shared_mappers = e.hugetlb_shared_mappers;
	/* The exact read also tells what this VM's KSM mappings really weigh. */
	struct pss_calibration cal = {0};
	if (vm->nhelpers == 0 && (cal = pss_calibrate(&vm->mem, &e.vmm, host->page_size_bytes)).valid)
		vm->ksm_saved_bytes = ksm_vm_saved(&vm->mem, &host->ksm, host->page_size_bytes, &cal);
	if (ret_cal)
		*ret_cal = cal;
	double cpu = clock_thread_cpu_seconds() - cpu0;
	vm->pss_cost.exact_seconds = vm->pss_cost.seconds = cpu;
	vm->pss_cost.exact_at = clock_monotonic_seconds();
	vm->pss_cost.exact_merging = vm->mem.ksm_merging_pages.known ? vm->mem.ksm_merging_pages.v : 0;
	return 0;
}

/* --exact: the PSS exactly (vm_measure_pss_exact), the nodes from numa_maps, and the overhead from
 * maps and pagemap. -ESRCH when the VMM vanished. */
static int measure_exact(const struct io_root *root, const struct host *host, struct vm *vm, unsigned *denied)
{
	int r = vm_measure_pss_exact(root, host, vm, denied, NULL);
	if (r == -ESRCH)
		return r;
	if (r < 0)
		vm->hugetlb_private_bytes = vm->hugetlb_shared_bytes = vm->thp_bytes = vm->swap_pss_bytes = UNKNOWN;
	pid_t pids[1 + VM_MAX_HELPERS];
	vm_numa_maps_read(root, pids, vm_pids(vm, pids), &vm->numa);
	int64_t overhead;
	if (vm->cfg.vmm != VMM_PROCESS &&
	    vm_overhead_exact(root, vm->pid, &vm->cfg, host->page_size_bytes, &overhead) == 0) {
		for (size_t i = 0; i < vm->nhelpers; i++) {
			struct mem_counters h;
			/* Helpers hold no guest RAM of their own; shared guest memory is the VM's. */
			if (proc_read_counters(root, vm->helpers[i], &h, denied) == 0 && h.rss_anon.known &&
			    h.rss_file.known)
				overhead += h.rss_anon.v + h.rss_file.v;
		}
		vm->overhead_bytes = MAYBE(overhead);
		vm->overhead_method = METHOD_EXACT;
	}
	return 0;
}

/* vm_measure with a stall reader of the caller's thread (NULL: stalls not read). */
static int measure_one(const struct io_root *root, const struct host *host, struct vm *vm, const struct vm *before,
		       unsigned flags, struct stall_reader *stalls)
{
	unsigned denied = 0;
	vm->denied_files = 0;
	vm->read_at = clock_monotonic_seconds();
	int r = proc_read_counters(root, vm->pid, &vm->mem, &denied);
	if (r < 0)
		return proc_gone(r) ? -ESRCH : r;
	struct mem_counters helpers_mem = {0};
	bool have_helpers = false;
	for (size_t i = 0; i < vm->nhelpers; i++) {
		struct mem_counters h;
		if (proc_read_counters(root, vm->helpers[i], &h, &denied) < 0)
			continue; /* a helper that exits is simply no longer counted */
		if (!have_helpers)
			helpers_mem = h;
		else
			mem_counters_add(&helpers_mem, &h);
		have_helpers = true;
	}
	if (have_helpers)
		mem_counters_add(&vm->mem, &helpers_mem);
	if ((r = measure_cost(root, host, vm, before, stalls)) < 0)
		return r;

	vm->pss_method = METHOD_ESTIMATE;
	vm->pss_bytes = pss_estimate(&vm->mem, &host->ksm, host->page_size_bytes, NULL);
	vm->pss_bound_bytes = vm->pss_bytes.known ? pss_estimate_bound(&vm->mem, &host->ksm, host->page_size_bytes)
						  : UNKNOWN;
	vm->ksm_saved_bytes = ksm_vm_saved(&vm->mem, &host->ksm, host->page_size_bytes, NULL);
	vm->overhead_method = METHOD_ESTIMATE;
	vm->overhead_bytes = vm->cfg.vmm == VMM_PROCESS ? UNKNOWN
				: overhead_estimate(&vm->mem, &vm->cfg, host->page_size_bytes);
	vm->hugetlb_private_bytes = vm->hugetlb_shared_bytes = UNKNOWN;
	vm->hugetlb_shared_mappers = 0;
	vm->pss_cost = (struct pss_cost){0};
	vm->thp_bytes = vm->cg.thp_bytes;
	vm->swap_pss_bytes = UNKNOWN;
	vm->numa.maps_known = false;
	vm->numa.maps_why[0] = '\0';
	if ((flags & VM_MEASURE_EXACT) && (r = measure_exact(root, host, vm, &denied)) < 0)
		return r;
	vm->denied_files = denied;
	return 0;
}

int vm_measure(const struct io_root *root, const struct host *host, struct vm *vm, const struct vm *before,
	       unsigned flags)
{
	struct stall_reader stalls;
	stall_reader_open(root, host->delayacct, &stalls); /* closed: each VM says why */
	int r = measure_one(root, host, vm, before, flags, &stalls);
	stall_reader_close(&stalls);
	return r;
}

/* The stall readers of a round of measure_some: parallel() hands out many shares to at most
 * PARALLEL_MAX threads at once, so a share borrows a reader no running share holds (a netlink
 * session matches replies to one asker's requests) and the round opens at most that many. */
struct reader_pool {
	const struct io_root *root;
	int delayacct;
	struct stall_reader r[PARALLEL_MAX];
	bool opened[PARALLEL_MAX];   /* written only by the share holding the slot */
	atomic_bool busy[PARALLEL_MAX];
};

/* A reader for this share, opened on its first use; *ret_slot to give it back. */
static struct stall_reader *reader_take(struct reader_pool *p, size_t *ret_slot)
{
	for (size_t i = 0; i < PARALLEL_MAX; i++) {
		bool idle = false;
		if (!atomic_compare_exchange_strong(&p->busy[i], &idle, true))
			continue;
		if (!p->opened[i])
			stall_reader_open(p->root, p->delayacct, &p->r[i]); /* closed: each VM says why */
		p->opened[i] = true;
		*ret_slot = i;
		return &p->r[i];
	}
	return NULL; /* more shares at once than threads: cannot happen; stalls then unread */
}

struct measure_job {
	const struct io_root *root;
	const struct host *host;
	struct vm_list *l;
	const struct vm_list *before;
	unsigned flags;
	int *results;
	struct reader_pool *stalls;
};

static void measure_some(void *arg, size_t t, size_t n)
{
	struct measure_job *j = arg;
	if (t >= j->l->n)
		return;
	size_t slot = 0;
	struct stall_reader *stalls = reader_take(j->stalls, &slot);
	for (size_t i = t; i < j->l->n; i += n)
		j->results[i] = j->l->vms[i].carried ? 0 /* as the reading before had it */
			: measure_one(j->root, j->host, &j->l->vms[i], vm_list_find(j->before, &j->l->vms[i]),
				      j->flags, stalls);
	if (stalls)
		atomic_store(&j->stalls->busy[slot], false);
}

/* Measuring is reading many small files: VMs are spread over a few threads (two per CPU, at
 * most 4) when there are enough of them to pay for the threads. */
enum { MEASURE_VMS_PER_THREAD_MIN = 16 };
int vm_measure_all(const struct io_root *root, const struct host *host, struct vm_list *l,
		   const struct vm_list *before, unsigned flags)
{
	int *results = calloc(l->n ? l->n : 1, sizeof(*results));
	if (!results)
		return -ENOMEM;
	struct reader_pool pool = {.root = root, .delayacct = host->delayacct};
	for (size_t i = 0; i < PARALLEL_MAX; i++)
		atomic_init(&pool.busy[i], false);
	struct measure_job j = {root, host, l, before, flags, results, &pool};
	parallel(parallel_threads(l->n, MEASURE_VMS_PER_THREAD_MIN), measure_some, &j);
	for (size_t i = 0; i < PARALLEL_MAX; i++)
		if (pool.opened[i])
			stall_reader_close(&pool.r[i]);
	size_t w = 0;
	for (size_t i = 0; i < l->n; i++) {
		int r = results[i];
		if (r < 0) {
			vm_free(&l->vms[i]);
			l->skipped++;
			continue;
		}
		if (l->vms[i].denied_files)
			l->denied++;
		l->vms[w++] = l->vms[i];
	}
	l->n = w;
	free(results);
	return 0;
}
