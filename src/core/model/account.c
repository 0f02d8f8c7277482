#include "core/model/account.h"

#include <math.h>
#include <string.h>

static void add_maybe(maybe_i64 *a, maybe_i64 b)
{
	*a = maybe_add(*a, b);
}

void mem_counters_add(struct mem_counters *a, const struct mem_counters *b)
{
	add_maybe(&a->rss, b->rss);
	add_maybe(&a->rss_anon, b->rss_anon);
	add_maybe(&a->rss_file, b->rss_file);
	add_maybe(&a->rss_shmem, b->rss_shmem);
	add_maybe(&a->swap, b->swap);
	add_maybe(&a->ksm_rmap_items, b->ksm_rmap_items);
	add_maybe(&a->ksm_merging_pages, b->ksm_merging_pages);
	add_maybe(&a->ksm_zero_pages, b->ksm_zero_pages);
	add_maybe(&a->ksm_profit, b->ksm_profit);
	if (a->hugetlb.known && b->hugetlb.known && b->hugetlb.v > a->hugetlb.v)
		a->hugetlb = b->hugetlb;
}

double ksm_mean_weight(const struct ksm_sysfs *k)
{
	if (!k->pages_shared.known || !k->pages_sharing.known)
		return NAN;
	int64_t mappings = k->pages_shared.v + k->pages_sharing.v;
	return mappings > 0 ? (double)k->pages_shared.v / (double)mappings : NAN;
}

/* KSM-mapped bytes of the process; 0 when KSM is certainly not merging anything. */
static maybe_i64 ksm_mapped_bytes(const struct mem_counters *m, const struct ksm_sysfs *k, int64_t page_size)
{
	if (m->ksm_merging_pages.known)
		return MAYBE(m->ksm_merging_pages.v * page_size);
	bool nothing_merged = !k->present || (k->pages_shared.known && k->pages_shared.v == 0);
	return nothing_merged ? MAYBE(0) : UNKNOWN;
}

/* The PSS weight of one of the VM's KSM mappings: its own (calibrated), else the host's mean;
 * NaN when neither is known. */
static double ksm_weight(const struct ksm_sysfs *k, const struct pss_calibration *cal)
{
	return cal && cal->valid && !isnan(cal->ksm_weight) ? cal->ksm_weight : ksm_mean_weight(k);
}

maybe_i64 pss_estimate(const struct mem_counters *m, const struct ksm_sysfs *k, int64_t page_size,
		       const struct pss_calibration *cal)
{
	maybe_i64 ksm = ksm_mapped_bytes(m, k, page_size);
	double w = ksm_weight(k, cal);
	/* KSM mappings of an unknown weight: the PSS is unknown, not RSS. */
	if (!m->rss.known || !ksm.known || (ksm.v > 0 && isnan(w)))
		return UNKNOWN;
	double pss = (double)m->rss.v;
	if (ksm.v > 0)
		pss -= (double)ksm.v * (1.0 - w);
	if (cal && cal->valid && m->rss_file.known && m->rss_shmem.known)
		pss -= (double)(m->rss_file.v + m->rss_shmem.v) * (1.0 - cal->share_weight);
	return MAYBE(pss < 0 ? 0 : llround(pss));
}

maybe_i64 ksm_vm_saved(const struct mem_counters *m, const struct ksm_sysfs *k, int64_t page_size,
		       const struct pss_calibration *cal)
{
	maybe_i64 ksm = ksm_mapped_bytes(m, k, page_size);
	double w = ksm_weight(k, cal);
	if (!ksm.known || (ksm.v > 0 && isnan(w)))
		return UNKNOWN;
	double saved = ksm.v > 0 ? (double)ksm.v * (1.0 - w) : 0;
	if (m->ksm_zero_pages.known)
		saved += (double)(m->ksm_zero_pages.v * page_size);
	return MAYBE(llround(saved));
}

double ksm_vm_yield(const struct mem_counters *m)
{
	if (!m->ksm_rmap_items.known || m->ksm_rmap_items.v <= 0 || !m->ksm_merging_pages.known)
		return NAN;
	int64_t zero = m->ksm_zero_pages.known ? m->ksm_zero_pages.v : 0;
	return fmin(1.0, (double)(m->ksm_merging_pages.v + zero) / (double)m->ksm_rmap_items.v);
}

double ksmd_vm_cpu_share(const struct mem_counters *m, const struct ksm_sysfs *k)
{
	maybe_i64 all = ksm_rmap_items(k);
	if (!m->ksm_rmap_items.known || !all.known || all.v <= 0)
		return NAN;
	return fmin(1.0, (double)m->ksm_rmap_items.v / (double)all.v);
}

maybe_i64 pss_estimate_bound(const struct mem_counters *m, const struct ksm_sysfs *k, int64_t page_size)
{
	return pss_estimate_bound_with(m, k, page_size, ksm_mean_weight(k));
}

maybe_i64 pss_estimate_bound_with(const struct mem_counters *m, const struct ksm_sysfs *k, int64_t page_size, double w)
{
	maybe_i64 ksm = ksm_mapped_bytes(m, k, page_size);
	if (!ksm.known || !m->rss_file.known || !m->rss_shmem.known || (ksm.v > 0 && isnan(w)))
		return UNKNOWN;
	double wmin = k->max_page_sharing.known && k->max_page_sharing.v > 1 ? 1.0 / (double)k->max_page_sharing.v : 0;
	double ksm_err = ksm.v > 0 ? (double)ksm.v * fmax(w - wmin, 0.5 - w) : 0;
	return MAYBE(llround(ksm_err) + m->rss_file.v + m->rss_shmem.v);
}

struct pss_calibration pss_calibrate(const struct mem_counters *m, const struct smaps_rollup *exact,
				     int64_t page_size)
{
	struct pss_calibration cal = {0};
	if (!exact->pss.known || !m->rss_anon.known || !m->rss_file.known || !m->rss_shmem.known ||
	    !m->ksm_merging_pages.known)
		return cal;
	double ksm = (double)(m->ksm_merging_pages.v * page_size);
	double shared = (double)(m->rss_file.v + m->rss_shmem.v);
	/* Pss_Anon covers private anon (weight 1) plus KSM mappings; Pss_File + Pss_Shmem the rest. */
	double pss_anon = exact->pss_anon.known ? (double)exact->pss_anon.v : NAN;
	double pss_shared = exact->pss_file.known && exact->pss_shmem.known
				    ? (double)(exact->pss_file.v + exact->pss_shmem.v) : NAN;
	if (isnan(pss_anon) || isnan(pss_shared))
		return cal;
	double private_anon = (double)m->rss_anon.v - ksm;
	/* A weight learnt from a handful of pages is noise: below 1 MiB of KSM mappings, keep none. */
	cal.ksm_weight = ksm >= 1048576 ? fmin(1, fmax(0, (pss_anon - private_anon) / ksm)) : NAN;
	cal.share_weight = shared > 0 ? fmin(1, fmax(0, pss_shared / shared)) : 1;
	cal.valid = true;
	return cal;
}

maybe_i64 overhead_estimate(const struct mem_counters *m, const struct vm_config *cfg, int64_t page_size)
{
	if (!cfg->guest_ram_bytes.known || !m->rss_anon.known || !m->rss_file.known || !m->rss_shmem.known)
		return UNKNOWN;
	int64_t ram = cfg->guest_ram_bytes.v;
	int64_t anon = m->rss_anon.v, file = m->rss_file.v, shmem = m->rss_shmem.v;
	/* hugetlbfs pages are not in RSS at all: only the rest of guest RAM can be. */
	bool huge_known = m->hugetlb.known && m->hugetlb.v > 0;
	if (huge_known)
		ram = m->hugetlb.v >= ram ? 0 : ram - m->hugetlb.v;
	if ((cfg->ram_hugetlb && !huge_known) || ram == 0)
		return MAYBE(anon + file + shmem);
	if (cfg->ram_shared) {
		int64_t beyond = shmem - ram;
		return MAYBE(anon + file + (beyond > 0 ? beyond : 0));
	}
	/* Guest pages that left RSS while still populated: swapped, or merged into the zero page. */
	int64_t gone = (m->swap.known ? m->swap.v : 0) +
		       (m->ksm_zero_pages.known ? m->ksm_zero_pages.v * page_size : 0);
	int64_t beyond = anon + gone - ram;
	if (beyond > anon)
		beyond = anon;
	return MAYBE(file + shmem + (beyond > 0 ? beyond : 0));
}

bool ram_on_hugetlb(const struct vm_config *cfg, const struct mem_counters *m)
{
	return cfg->ram_hugetlb || (m->hugetlb.known && m->hugetlb.v > 0);
}

maybe_i64 ksm_process_mergeable(const struct mem_counters *m)
{
	if ((m->ksm_mergeable.known && m->ksm_mergeable.v) || (m->ksm_merge_any.known && m->ksm_merge_any.v))
		return MAYBE(1);
	return m->ksm_mergeable.known ? MAYBE(0) : UNKNOWN;
}

const char *ksm_unmergeable_reason(const struct vm_config *cfg, const struct mem_counters *m,
				   const struct ksm_sysfs *k)
{
	/* What the VM asked for first: it explains a "no" from the kernel. */
	if (cfg->mem_merge_off)
		return "mem-merge-off";
	if (ram_on_hugetlb(cfg, m))
		return "hugetlbfs";
	if (cfg->ram_shared)
		return "shared-memory";
	maybe_i64 mergeable = ksm_process_mergeable(m);
	if (mergeable.known && !mergeable.v)
		return "not-marked";
	if (ksm_is_off(k))
		return "ksm-stopped";
	return NULL;
}

maybe_i64 ksm_vm_mergeable(const struct vm_config *cfg, const struct mem_counters *m, const struct ksm_sysfs *k)
{
	const char *why = ksm_unmergeable_reason(cfg, m, k);
	if (why && strcmp(why, "ksm-stopped"))
		return MAYBE(0);
	return ksm_process_mergeable(m);
}

maybe_i64 hugetlb_cost(maybe_i64 hugetlb_bytes, maybe_i64 private_bytes, maybe_i64 shared_bytes, unsigned shared_mappers)
{
	if (private_bytes.known && shared_bytes.known && (shared_mappers > 0 || shared_bytes.v == 0))
		return MAYBE(private_bytes.v + (shared_mappers ? shared_bytes.v / shared_mappers : 0));
	return hugetlb_bytes;
}

maybe_i64 memory_cost(maybe_i64 pss_bytes, maybe_i64 hugetlb_cost_bytes)
{
	if (!pss_bytes.known || !hugetlb_cost_bytes.known)
		return UNKNOWN;
	return MAYBE(pss_bytes.v + hugetlb_cost_bytes.v);
}
