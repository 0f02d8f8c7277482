#include "core/model/pss_sample.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/stats.h"
#include "core/base/stop.h"
#include "core/model/vm.h"
#include "core/model/vm_guest_ram.h"
#include "core/model/vm_memo.h"
#include "parse/pagemap.h"

/* A kind is sampled enough once three standard errors of its mean weight, times the bytes it
 * weighs, fall below the target, after at least MIN_CLUSTERS reads that found pages of it; MAX_READS
 * caps a sample. */
/* The goal: every VM's PSS within 2% of its RSS. */
#define GOAL 0.02

enum { MIN_CLUSTERS = 32, CHUNK = 16, STRATUM_READS = 2048, MAX_READS = 20000, CACHE = 256 };

/* A VM's exact cost is timed again after this long (its huge pages split or collapse over time). */
enum { EXACT_FRESH_SECONDS = 600 };

/* Mapping counts of frames seen already: a guest's zero-filled pages all map the same few KSM
 * pages (chains of max_page_sharing), so a small cache saves most of their kpagecount reads. */
struct count_cache {
	uint64_t pfn[CACHE], count[CACHE];
};

static size_t cache_slot(uint64_t pfn) { return (size_t)((pfn * UINT64_C(0x9e3779b97f4a7c15)) >> 56) % CACHE; }

static bool cached(const struct count_cache *c, uint64_t pfn, uint64_t *ret)
{
	size_t slot = cache_slot(pfn);
	if (c->pfn[slot] != pfn + 1)
		return false;
	*ret = c->count[slot];
	return true;
}

static void cache_put(struct count_cache *c, uint64_t pfn, uint64_t count)
{
	size_t slot = cache_slot(pfn);
	c->pfn[slot] = pfn + 1;
	c->count[slot] = count;
}

/* The run of adjacent frames that starts at pfn[i] (pfn sorted, at most CHUNK of them): where it
 * ends (the index after it) and fd's words for its frames (kpagecount's or kpageflags', one word
 * a frame) in one read. A file's pages in a large folio, a huge page's, or pages allocated together
 * are mostly adjacent frames, so a cluster costs one or two reads, not one a page. How many words
 * were read, or the read's negative errno. */
static ssize_t read_run(int fd, const uint64_t *pfn, size_t n, size_t i, size_t *ret_end, uint64_t *words,
			size_t *reads)
{
	size_t j = i + 1;
	while (j < n && pfn[j] <= pfn[j - 1] + 1)
		j++;
	*ret_end = j;
	ssize_t got = io_pread(fd, words, (size_t)(pfn[j - 1] - pfn[i] + 1) * sizeof(words[0]),
			       (off_t)(pfn[i] * sizeof(words[0])));
	(*reads)++;
	return got < 0 ? got : got / (ssize_t)sizeof(words[0]);
}

/* Puts the mapping counts of frames pfn[0..n) (at most CHUNK) in the cache, a read per run. */
static int fetch_counts(int kc, struct count_cache *c, uint64_t *pfn, size_t n, size_t *reads)
{
	qsort(pfn, n, sizeof(pfn[0]), cmp_u64);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t counts[CHUNK];
		ssize_t got = read_run(kc, pfn, n, i, &j, counts, reads);
		if (got < 0)
			return (int)got;
		for (size_t k = 0; k < (size_t)got; k++)
			cache_put(c, pfn[i] + k, counts[k]);
	}
	return 0;
}

/* /proc/kpageflags' bit of a KSM page (the kernel's KPF_KSM). */
#define KPF_KSM 21

/* How many of the frames pfn[0..n) (at most CHUNK) are KSM pages, a kpageflags read per run. */
static int count_ksm_frames(int kf, uint64_t *pfn, size_t n, size_t *reads, size_t *ret)
{
	qsort(pfn, n, sizeof(pfn[0]), cmp_u64);
	size_t ksm = 0;
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t flags[CHUNK];
		ssize_t got = read_run(kf, pfn, n, i, &j, flags, reads);
		if (got < 0)
			return (int)got;
		for (size_t k = i; k < j; k++)
			ksm += pfn[k] - pfn[i] < (uint64_t)got && (flags[pfn[k] - pfn[i]] >> KPF_KSM & 1);
	}
	*ret = ksm;
	return 0;
}

static int mapcount(int kc, struct count_cache *c, uint64_t pfn, uint64_t *ret, size_t *reads)
{
	if (cached(c, pfn, ret))
		return 0;
	int r = fetch_counts(kc, c, &pfn, 1, reads);
	if (r < 0)
		return r;
	return cached(c, pfn, ret) ? 0 : -EIO;
}

/* Whether a pagemap entry's frame is weighed by its mapping count in a cluster of this kind:
 * present, of the kind, and not exclusive (those weigh 1). */
static bool counted(uint64_t e, bool want_ksm)
{
	return pagemap_present(e) && pagemap_file(e) == !want_ksm && !pagemap_exclusive(e);
}

static uint64_t next_random(uint64_t *s)
{
	/* xorshift64*: deterministic per process, so a rerun on a still host gives the same figure */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

struct range {
	uint64_t start_page, pages, before; /* before: pages in the ranges before this one */
};

/* Mappings of one kind, sampled apart: anonymous ones hold the KSM pages, file and shared
 * memory ones the file and shmem pages (a stratified sample: each kind gets its own pages). */
struct stratum {
	struct range *r;
	size_t n, cap;
	uint64_t pages;
};

static int stratum_add(struct stratum *s, uint64_t start_page, uint64_t pages)
{
	if (s->n == s->cap) {
		struct range *bigger = realloc(s->r, (s->cap = s->cap ? 2 * s->cap : 64) * sizeof(*s->r));
		if (!bigger)
			return -ENOMEM;
		s->r = bigger;
	}
	s->r[s->n++] = (struct range){.start_page = start_page, .pages = pages, .before = s->pages};
	s->pages += pages;
	return 0;
}

/* The mappings that may hold resident pages (not guard areas), by kind. Mappings on hugetlbfs are
 * left out when huge (the process maps huge pages): their pages are in neither RSS nor PSS, and
 * among the file pages they would weigh the file kind's mean towards theirs. */
static int read_strata(const struct io_root *root, pid_t pid, int64_t page, bool huge, struct stratum *anon,
		       struct stratum *file)
{
	struct hugetlbfs_mount mounts[HUGETLBFS_MOUNTS_MAX];
	size_t nmounts = huge ? proc_hugetlbfs_mounts(root, pid, mounts) : 0;
	char *text;
	size_t len;
	int r = io_read_alloc(root, IO_PROC, &text, &len, "%d/maps", pid);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	size_t pos = 0;
	struct map_entry e;
	while ((r = parse_maps_next(text, len, &pos, &e)) > 0) {
		if (!strncmp(e.perms, "---", 3) || (e.path_len == 10 && !memcmp(e.path, "[vsyscall]", 10)) ||
		    map_on_hugetlbfs(&e, mounts, nmounts))
			continue;
		bool is_anon = e.path_len == 0 || e.path[0] == '['; /* [heap], [stack] */
		uint64_t pages = (e.end - e.start) / (uint64_t)page;
		if ((r = stratum_add(is_anon ? anon : file, e.start / (uint64_t)page, pages)) < 0)
			break;
	}
	free(text);
	if (r == 0 && !anon->pages && !file->pages)
		r = -ESRCH;
	return r;
}

/* A random page of a stratum: its virtual page and how many pages its mapping has from there. */
static uint64_t pick(const struct stratum *s, uint64_t *seed, uint64_t *ret_left)
{
	uint64_t at = next_random(seed) % s->pages;
	size_t lo = 0, hi = s->n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (s->r[mid].before <= at)
			lo = mid;
		else
			hi = mid;
	}
	const struct range *g = &s->r[lo];
	*ret_left = g->pages - (at - g->before);
	return g->start_page + (at - g->before);
}

/* Running sums of one kind's weights. Pages found by one pagemap read are neighbours and alike
 * (a file's pages, a zero-filled region), so each read is one cluster of the sample, and the
 * mean's error is the ratio estimator's over clusters, not over pages. */
struct kind {
	size_t n, k;            /* pages, clusters */
	double sum, s2, sn, n2; /* sums of: weights; cluster sums squared; cluster sum x size; sizes squared */
};

static void add_cluster(struct kind *k, double sum, size_t n)
{
	if (!n)
		return;
	k->n += n;
	k->k++;
	k->sum += sum;
	k->s2 += sum * sum;
	k->sn += sum * (double)n;
	k->n2 += (double)n * (double)n;
}

/* The mean weight and its standard error (NaN below two clusters). */
static void finish(const struct kind *k, double *mean, double *se)
{
	*mean = k->n ? k->sum / (double)k->n : NAN;
	*se = NAN;
	if (k->k < 2)
		return;
	double w = *mean, nbar = (double)k->n / (double)k->k;
	double ss = fmax(0, k->s2 - 2 * w * k->sn + w * w * k->n2);
	*se = sqrt(ss / ((double)k->k * (double)(k->k - 1))) / nbar;
}

/* The error of a kind's mean weight w over n pages in k clusters, as a fraction of a page: three
 * standard errors, plus what pages not seen yet could hide ("rule of three": up to 3/n of them,
 * off by up to half a page). File and shmem pages (by_cluster) are counted by clusters instead:
 * a process's own files weigh 1 and the libraries every process maps next to nothing, a cluster
 * alike, so a small sample can miss the libraries altogether and its standard error is then 0
 * (a lone QEMU: 33 of 300 seeds outside the pages' bound, 21 weighing every file page 1). Up to
 * 3/k of the clusters may be unseen, each off the mean by up to max(w, 1 - w). */
static double weight_error(size_t n, size_t k, double w, double se, bool by_cluster)
{
	double unseen = by_cluster && !isnan(w) ? 3 / (double)k * fmax(w, 1 - w) : 0.5 * 3 / (double)n;
	return 3 * (isnan(se) ? 0.5 : se) + unseen;
}

/* Whether a kind that weighs `bytes` is known well enough, after `reads` reads spent on it. A
 * kind whose pages are too rare to find quickly is left once it cannot matter much. */
static bool enough(const struct kind *k, bool by_cluster, double bytes, double target_bytes, size_t reads)
{
	if (bytes <= 0)
		return true;
	double mean, se;
	finish(k, &mean, &se);
	if (k->k >= MIN_CLUSTERS && weight_error(k->n, k->k, mean, se, by_cluster) * bytes <= target_bytes)
		return true;
	return reads >= STRATUM_READS && (k->k >= MIN_CLUSTERS || bytes / 2 <= target_bytes);
}

/* Where a sample reads: the process's pagemap, kpagecount, the counts known so far, and the
 * reads made. */
struct page_sampler {
	int pm, kc, kf; /* pagemap, kpagecount, kpageflags */
	struct count_cache *cache;
	size_t reads;
};

/* One cluster: the pagemap entries of want pages from vpage, each page of the kind sampled (KSM
 * or file/shmem) weighed by its frame's mapping count, added to k. A KSM page mapped here alone
 * (its other mappers gone: pagemap calls it exclusive) weighs a whole page, and is one of the
 * pages ksm_merging_pages counts: the exclusive anonymous pages' flags say which are KSM pages.
 * 0, -ESRCH when the process is gone, -EPERM when frame numbers are hidden from us, or the read's
 * negative errno. */
static int weigh_cluster(struct page_sampler *s, uint64_t vpage, size_t want, bool want_ksm, struct kind *k)
{
	uint64_t entries[CHUNK];
	ssize_t n = io_pread(s->pm, entries, want * sizeof(entries[0]), (off_t)(vpage * sizeof(entries[0])));
	s->reads++;
	if (n < 0)
		return n == -ESRCH || n == -ENOENT ? -ESRCH : (int)n;
	size_t nentries = (size_t)n / sizeof(entries[0]), nmissing = 0, nalone = 0, found = 0;
	double found_sum = 0;
	uint64_t missing[CHUNK], alone[CHUNK], count;
	for (size_t i = 0; i < nentries; i++) { /* the frames whose counts are not known yet */
		uint64_t e = entries[i], pfn = pagemap_pfn(e);
		if (want_ksm && pagemap_present(e) && !pagemap_file(e) && pagemap_exclusive(e) && pfn)
			alone[nalone++] = pfn;
		else if (counted(e, want_ksm) && pfn && !cached(s->cache, pfn, &count))
			missing[nmissing++] = pfn;
	}
	if (nmissing)
		fetch_counts(s->kc, s->cache, missing, nmissing, &s->reads); /* what it misses is asked below, alone */
	for (size_t i = 0; i < nentries; i++) {
		uint64_t e = entries[i];
		if (!pagemap_present(e))
			continue;
		bool is_file = pagemap_file(e);
		if (is_file != !want_ksm)
			continue; /* a private copy in a file mapping, shared memory in an anonymous one */
		if (pagemap_exclusive(e) && is_file) {
			found++;
			found_sum += 1;
			continue;
		}
		uint64_t pfn = pagemap_pfn(e);
		if (!pfn)
			return -EPERM;
		if (pagemap_exclusive(e))
			continue; /* anonymous: a KSM page counted below, else private and counted exactly already */
		if (mapcount(s->kc, s->cache, pfn, &count, &s->reads) < 0 || count == 0)
			continue; /* the zero page and other special frames are not in RSS */
		found++;
		found_sum += 1.0 / (double)count;
	}
	size_t ksm_alone = 0;
	int r = nalone ? count_ksm_frames(s->kf, alone, nalone, &s->reads, &ksm_alone) : 0;
	if (r < 0)
		return r;
	add_cluster(k, found_sum + (double)ksm_alone, found + ksm_alone);
	return 0;
}

/* When a sample stops short: its wall-clock budget (the run's) is spent, or its CPU time passed
 * its cap (what an exact read would cost; the thread's CPU clock is a system call, so it is read
 * every CPU_CHECK clusters), or MAX_READS are spent. */
struct sample_limits {
	double wall_until, cpu_start, cpu_cap;
	size_t clusters;
};
enum { CPU_CHECK = 4 };

static bool time_up(struct sample_limits *l, size_t reads)
{
	if (reads >= MAX_READS || (reads && clock_monotonic_seconds() > l->wall_until))
		return true;
	return isfinite(l->cpu_cap) && ++l->clusters % CPU_CHECK == 0 && clock_thread_cpu_seconds() - l->cpu_start > l->cpu_cap;
}

/* Samples the process (whose counters are m) until each kind's share of the error bound is
 * below target_bytes, or budget_seconds is spent, or cpu_cap_seconds of CPU (INFINITY: none).
 * 0, -EPERM/-EACCES without the privilege, -ESRCH when the process is gone, -ENOMEM. */
static int pss_sample_take(const struct io_root *root, pid_t pid, const struct mem_counters *m, double target_bytes,
			   double budget_seconds, double cpu_cap_seconds, struct pss_sample *ret)
{
	double start = clock_monotonic_seconds();
	struct sample_limits limits = {start + budget_seconds, clock_thread_cpu_seconds(), cpu_cap_seconds, 0};
	int64_t page = host_page_size();
	struct stratum anon = {0}, file = {0};
	int r = read_strata(root, pid, page, m->hugetlb.known && m->hugetlb.v > 0, &anon, &file);
	struct page_sampler s = {.pm = -1, .kc = -1, .kf = -1};
	if (r < 0)
		goto out;
	s.pm = io_open(root, IO_PROC, O_RDONLY, "%d/pagemap", pid);
	s.kc = s.pm >= 0 ? io_open(root, IO_PROC, O_RDONLY, "kpagecount") : -1;
	s.kf = s.kc >= 0 ? io_open(root, IO_PROC, O_RDONLY, "kpageflags") : -1;
	if (s.pm < 0 || s.kc < 0 || s.kf < 0) {
		r = s.pm < 0 ? (s.pm == -ENOENT ? -ESRCH : s.pm) : s.kc < 0 ? s.kc : s.kf;
		goto out;
	}
	struct kind ksm = {0}, share = {0};
	if (!(s.cache = calloc(1, sizeof(*s.cache)))) {
		r = -ENOMEM;
		goto out;
	}
	uint64_t seed = UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)pid;
	double ksm_bytes = m->ksm_merging_pages.known ? (double)(m->ksm_merging_pages.v * page) : 0;
	double share_bytes = (m->rss_file.known ? (double)m->rss_file.v : 0) + (m->rss_shmem.known ? (double)m->rss_shmem.v : 0);
	size_t ksm_reads = 0, share_reads = 0;
	bool complete;
	for (;;) {
		bool want_ksm = anon.pages && !enough(&ksm, false, ksm_bytes, target_bytes, ksm_reads);
		bool want_share = file.pages && !enough(&share, true, share_bytes, target_bytes, share_reads);
		/* Every cluster: one costs up to 17 reads, and the clock (vDSO) a fraction of one. */
		if ((complete = !want_ksm && !want_share) || time_up(&limits, s.reads))
			break;
		uint64_t left, vpage = pick(want_ksm ? &anon : &file, &seed, &left);
		size_t reads_before = s.reads;
		r = weigh_cluster(&s, vpage, left < CHUNK ? (size_t)left : CHUNK, want_ksm, want_ksm ? &ksm : &share);
		if (r < 0)
			goto out;
		*(want_ksm ? &ksm_reads : &share_reads) += s.reads - reads_before;
	}
	*ret = (struct pss_sample){.ksm_pages = ksm.n, .share_pages = share.n, .ksm_clusters = ksm.k,
				   .share_clusters = share.k, .reads = s.reads, .seconds = clock_monotonic_seconds() - start,
				   .cpu_seconds = clock_thread_cpu_seconds() - limits.cpu_start, .complete = complete};
	finish(&ksm, &ret->ksm_weight, &ret->ksm_se);
	finish(&share, &ret->share_weight, &ret->share_se);
	r = 0;
out:
	free(s.cache);
	io_close(s.kf);
	io_close(s.kc);
	io_close(s.pm);
	free(anon.r);
	free(file.r);
	return r;
}

/* The weights the sample taught, as a calibration for pss_estimate() and ksm_vm_saved(). */
static struct pss_calibration pss_sample_calibration(const struct pss_sample *s)
{
	return (struct pss_calibration){.valid = true, .ksm_weight = s->ksm_weight,
					.share_weight = isnan(s->share_weight) ? 1 : s->share_weight};
}

maybe_i64 pss_sample_bound(const struct mem_counters *m, const struct pss_sample *s, const struct ksm_sysfs *k,
			   int64_t page_size)
{
	if (!m->ksm_merging_pages.known || !m->rss_file.known || !m->rss_shmem.known)
		return UNKNOWN;
	double ksm = (double)(m->ksm_merging_pages.v * page_size), share = (double)(m->rss_file.v + m->rss_shmem.v);
	double err = 0;
	/* A kind sampled too thinly for a standard error keeps its worst case. */
	if (ksm > 0 && s->ksm_clusters >= MIN_CLUSTERS) {
		err += ksm * weight_error(s->ksm_pages, s->ksm_clusters, s->ksm_weight, s->ksm_se, false);
	} else if (ksm > 0) {
		struct mem_counters only_ksm = *m;
		only_ksm.rss_file = only_ksm.rss_shmem = MAYBE(0);
		maybe_i64 worst = pss_estimate_bound(&only_ksm, k, page_size);
		err += worst.known ? (double)worst.v : ksm / 2;
	}
	if (share > 0)
		err += s->share_clusters >= MIN_CLUSTERS
			       ? share * weight_error(s->share_pages, s->share_clusters, s->share_weight, s->share_se, true)
			       : share;
	return MAYBE(llround(err));
}

/* Every KSM page weighs one page in all, across its mappings: what the refined VMs (sampled or read
 * exactly) did not take is the rest's, so their mean weight is (pages_shared - refined PSS) /
 * (mappings - refined). */
static void share_the_rest(const struct host *host, struct vm_list *vms, double refined_pss, double refined_mappings)
{
	const struct ksm_sysfs *k = &host->ksm;
	if (!k->pages_shared.known || !k->pages_sharing.known)
		return;
	double mappings = (double)(k->pages_shared.v + k->pages_sharing.v) - refined_mappings;
	double w = ((double)k->pages_shared.v - refined_pss) / mappings;
	if (!(mappings > 0) || !(w > 0) || w > 1)
		return; /* the sample and the counters disagree (merging moved on): keep the estimates */
	struct pss_calibration cal = {.valid = true, .ksm_weight = w, .share_weight = 1};
	int64_t ps = host->page_size_bytes;
	for (size_t i = 0; i < vms->n; i++) {
		struct vm *vm = &vms->vms[i];
		if (vm->pss_method != METHOD_ESTIMATE || !vm->pss_bytes.known)
			continue;
		vm->pss_bytes = pss_estimate(&vm->mem, k, ps, &cal);
		vm->pss_bound_bytes = pss_estimate_bound_with(&vm->mem, k, ps, w);
		vm->ksm_saved_bytes = ksm_vm_saved(&vm->mem, k, ps, &cal);
	}
}

static int cmp_bound_desc(const void *a, const void *b)
{
	const struct vm *x = *(struct vm *const *)a, *y = *(struct vm *const *)b;
	int64_t bx = x->pss_bound_bytes.known ? x->pss_bound_bytes.v : -1;
	int64_t by = y->pss_bound_bytes.known ? y->pss_bound_bytes.v : -1;
	return (bx < by) - (bx > by);
}

/* Whether a and b are more than a third of the larger apart (one more than 1.5 times the other), or
 * one is known and the other not. A cost remembered that far off still keeps a sample, capped at
 * half of it, under the exact read. */
static bool moved_a_third(double a, double b)
{
	return (a > 0) != (b > 0) || fabs(a - b) > fmax(a, b) / 3;
}

static bool moved_an_eighth(int64_t was, int64_t now)
{
	return (now > was ? now - was : was - now) > was / 8;
}

enum pss_choice pss_choose(struct pss_cost *c, int64_t merging_now, double now, double sample_floor,
			   double *ret_sample_cap)
{
	bool fresh = c->exact_seconds > 0 && now >= c->exact_at && now - c->exact_at <= EXACT_FRESH_SECONDS &&
		     !moved_an_eighth(c->exact_merging, merging_now);
	*ret_sample_cap = c->exact_seconds / 2;
	if (!fresh) {
		c->sample_seconds = 0; /* to be learned again against the exact read's new cost */
		return PSS_EXACT_TIMED;
	}
	if (c->sample_seconds > 0)
		return c->sample_seconds >= *ret_sample_cap ? PSS_EXACT : PSS_SAMPLE;
	return *ret_sample_cap < sample_floor ? PSS_EXACT : PSS_SAMPLE; /* no sample could cost less */
}

bool pss_cost_news(const struct pss_cost *was, const struct pss_cost *now)
{
	if (!(now->exact_seconds > 0))
		return false;
	return !was || moved_a_third(was->exact_seconds, now->exact_seconds) ||
	       moved_a_third(was->sample_seconds, now->sample_seconds) ||
	       now->exact_at - was->exact_at >= EXACT_FRESH_SECONDS / 2 || moved_an_eighth(was->exact_merging, now->exact_merging);
}

/* The KSM mappings of the refined VMs and what they weigh, in pages, for share_the_rest. */
struct ksm_taken {
	double pss, mappings;
};

static void take_ksm(struct ksm_taken *t, const struct vm *vm, double weight)
{
	if (!vm->mem.ksm_merging_pages.known || isnan(weight))
		return;
	t->pss += weight * (double)vm->mem.ksm_merging_pages.v;
	t->mappings += (double)vm->mem.ksm_merging_pages.v;
}

/* Samples one VM (its sample capped at cap CPU seconds, and at left seconds of the budget) and
 * puts the sampled figures in its record, with c, the sample's cost learned, as its cost record. */
static int sample_one(const struct io_root *root, const struct host *host, struct vm *vm, struct pss_cost c,
		      double cap, double left, struct ksm_taken *t)
{
	struct pss_sample s;
	/* Each kind to half the goal, so the VM's PSS stays inside it. */
	int r = pss_sample_take(root, vm->pid, &vm->mem, GOAL / 2 * (double)vm->mem.rss.v, left, cap, &s);
	if (r < 0)
		return r;
	c.seconds = s.cpu_seconds;
	if (s.complete)
		c.sample_seconds = s.cpu_seconds;
	else if (s.cpu_seconds >= cap || s.reads >= MAX_READS)
		c.sample_seconds = fmax(s.cpu_seconds, cap); /* stopped at its cap: dearer than the exact read */
	vm->pss_cost = c;
	int64_t ps = host->page_size_bytes;
	struct pss_calibration cal = pss_sample_calibration(&s);
	vm->pss_bytes = pss_estimate(&vm->mem, &host->ksm, ps, &cal);
	vm->pss_bound_bytes = pss_sample_bound(&vm->mem, &s, &host->ksm, ps);
	vm->ksm_saved_bytes = ksm_vm_saved(&vm->mem, &host->ksm, ps, &cal);
	vm->pss_method = METHOD_SAMPLED;
	take_ksm(t, vm, s.ksm_weight);
	return 0;
}

/* Reads one VM's PSS the way that costs less (pss_choose): exactly, or sampled. 0, or a negative
 * errno (-EPERM/-EACCES: no privilege, and no other VM will do better). */
static int refine_one(const struct io_root *root, const struct host *host, struct vm *vm, const struct vm_memo *memo,
		      double sample_floor, bool sample_only, double left, struct ksm_taken *t)
{
	const struct pss_cost *was = vm_memo_pss_cost(memo, vm);
	struct pss_cost c = was ? *was : (struct pss_cost){0};
	double cap = INFINITY;
	enum pss_choice how = sample_only ? PSS_SAMPLE
					  : pss_choose(&c, vm->mem.ksm_merging_pages.known ? vm->mem.ksm_merging_pages.v : 0,
						       clock_monotonic_seconds(), sample_floor, &cap);
	if (how == PSS_SAMPLE)
		return sample_one(root, host, vm, c, cap, left, t);
	struct pss_calibration cal;
	unsigned denied = 0;
	vm->pss_cost = c; /* the sample's cost kept, or forgotten by pss_choose */
	int r = vm_measure_pss_exact(root, host, vm, &denied, &cal);
	if (r == 0 && how == PSS_EXACT) { /* read for being cheaper: its timing afresh stays due when it was */
		vm->pss_cost.exact_at = c.exact_at;
		vm->pss_cost.exact_merging = c.exact_merging;
	}
	if (r == 0 && cal.valid)
		take_ksm(t, vm, cal.ksm_weight);
	return r;
}

/* The least CPU time a sample can take here: it reads MIN_CLUSTERS clusters of each kind at least,
 * two reads each at the least (the pagemap entries, then their frames'), timed on FLOOR_READS reads
 * of kpagecount. Negative when frames cannot be weighed here (kpagecount and kpageflags are
 * root's). */
enum { FLOOR_READS = 8 };
static double sample_floor_seconds(const struct io_root *root)
{
	int kc = io_open(root, IO_PROC, O_RDONLY, "kpagecount");
	int kf = kc >= 0 ? io_open(root, IO_PROC, O_RDONLY, "kpageflags") : -1;
	double floor = -1;
	if (kf >= 0) {
		uint64_t counts[CHUNK];
		double cpu0 = clock_thread_cpu_seconds();
		for (int i = 0; i < FLOOR_READS; i++)
			io_pread(kc, counts, sizeof(counts), 0);
		floor = (clock_thread_cpu_seconds() - cpu0) / FLOOR_READS * 2 * 2 * MIN_CLUSTERS;
	}
	io_close(kf);
	io_close(kc);
	return floor;
}

/* Only an estimate that may be off by more than the goal gains from refining. */
static bool worth_refining(const struct vm *vm)
{
	return vm->pss_method == METHOD_ESTIMATE && vm->pss_bound_bytes.known && vm->mem.rss.known &&
	       (double)vm->pss_bound_bytes.v > GOAL * (double)vm->mem.rss.v;
}

static int refine_all(const struct io_root *root, const struct host *host, struct vm_list *vms, double budget_seconds,
		      const struct vm_memo *memo, bool sample_only)
{
	if (!(budget_seconds > 0) || !vms->n)
		return 0;
	struct vm **order = malloc(vms->n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < vms->n; i++)
		order[i] = &vms->vms[i];
	qsort(order, vms->n, sizeof(*order), cmp_bound_desc);
	double until = clock_monotonic_seconds() + budget_seconds;
	int refined = 0;
	double sample_floor = NAN; /* timed before the first VM refined */
	struct ksm_taken taken = {0};
	for (size_t i = 0; i < vms->n; i++) {
		double left = until - clock_monotonic_seconds();
		if (left <= 0 || !worth_refining(order[i]))
			continue;
		if (isnan(sample_floor) && (sample_floor = sample_floor_seconds(root)) < 0)
			break;
		int r = refine_one(root, host, order[i], memo, sample_floor, sample_only, left, &taken);
		if (r == -EPERM || r == -EACCES)
			break;
		refined += r == 0;
	}
	free(order);
	if (refined)
		share_the_rest(host, vms, taken.pss, taken.mappings);
	return refined;
}

int pss_refine(const struct io_root *root, const struct host *host, struct vm_list *vms, double budget_seconds,
	       const struct vm_memo *memo)
{
	return refine_all(root, host, vms, budget_seconds, memo, false);
}

int pss_refine_sampled(const struct io_root *root, const struct host *host, struct vm_list *vms, double budget_seconds)
{
	return refine_all(root, host, vms, budget_seconds, NULL, true);
}
