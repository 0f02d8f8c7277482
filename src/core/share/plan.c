/* `share plan`: where each VM would share the most, and a greedy consolidation of the fleet.
 * A host's KSM savings are its pages less its distinct contents, so moving VM v from A to B saves
 * the fleet (v's distinct contents B holds) less (v's distinct contents another VM on A holds):
 * counted over the sample, scaled to the pages each VM hashed. Empty pages are free on any host
 * and decide nothing. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/share/fleet.h"
#include "core/share/share_map.h"

/* Each distinct content and the VMs holding it: holders[start[g] .. start[g + 1]). */
struct groups {
	size_t n;
	size_t *start, *holders;
};

static void groups_free(struct groups *g)
{
	free(g->start);
	free(g->holders);
}

static int groups_build(const struct sketch *s, size_t nvms, struct groups *ret)
{
	size_t total = 0;
	struct sketch_tag *t = sketch_tag_all(s, nvms, &total);
	struct groups g = {.start = malloc((total + 1) * sizeof(size_t)), .holders = malloc((total + 1) * sizeof(size_t))};
	if (!t || !g.start || !g.holders) {
		free(t);
		groups_free(&g);
		return -ENOMEM;
	}
	size_t w = 0;
	for (size_t i = 0; i < total; i++) {
		if (i == 0 || t[i].hash != t[i - 1].hash)
			g.start[g.n++] = w;
		if (w == g.start[g.n - 1] || g.holders[w - 1] != t[i].vm)
			g.holders[w++] = t[i].vm;
	}
	g.start[g.n] = w;
	free(t);
	*ret = g;
	return 0;
}

/* common[v * nhosts + h]: v's pages whose content another VM on host h holds (where[] places
 * them): its distinct kept contents there, times the pages it hashed per kept hash (per[v], the
 * ratio estimator of core/share/share_map.c). */
static void count_common(const struct groups *g, const size_t *where, size_t nvms, size_t nhosts, const double *per,
			 size_t *on_host, int64_t *common)
{
	memset(common, 0, nvms * nhosts * sizeof(*common));
	for (size_t k = 0; k < g->n; k++) {
		memset(on_host, 0, nhosts * sizeof(*on_host));
		for (size_t a = g->start[k]; a < g->start[k + 1]; a++)
			on_host[where[g->holders[a]]]++;
		for (size_t a = g->start[k]; a < g->start[k + 1]; a++) {
			size_t v = g->holders[a];
			for (size_t h = 0; h < nhosts; h++)
				if (on_host[h] > (where[v] == h))
					common[v * nhosts + h]++;
		}
	}
	for (size_t v = 0; v < nvms; v++)
		for (size_t h = 0; h < nhosts; h++)
			common[v * nhosts + h] = (int64_t)llround((double)common[v * nhosts + h] * per[v]);
}

static int refuse(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Sketches of one key and one rate only: others do not compare. */
static int check_comparable(const struct plan_host *hosts, size_t n, char *why, size_t cap)
{
	for (size_t i = 1; i < n; i++) {
		const struct sketch_file *a = hosts[0].file, *b = hosts[i].file;
		if (a->key_fingerprint != b->key_fingerprint)
			return refuse(why, cap, "%s and %s were sketched with different keys (fingerprints %016llx, %016llx): "
				      "copy one --key-file to every host", hosts[0].label, hosts[i].label,
				      (unsigned long long)a->key_fingerprint, (unsigned long long)b->key_fingerprint);
		if (a->sample_n != b->sample_n)
			return refuse(why, cap, "%s was sampled at 1/%llu and %s at 1/%llu: sketch every host at one rate",
				      hosts[0].label, (unsigned long long)a->sample_n, hosts[i].label,
				      (unsigned long long)b->sample_n);
	}
	return 0;
}

/* The pages a VM hashed (read, less its empty pages) per hash its sketch kept. */
static double vm_pages_per_hash(const struct sketch_file_vm *f)
{
	int64_t hashed = f->pages - f->zero_pages - f->zero_mapped_pages;
	return f->nhashes && hashed > 0 ? (double)hashed / (double)f->nhashes : 0;
}

/* The plan's working state: every VM as a sketch (borrowed hashes), where it runs now. */
struct work {
	size_t nhosts, nvms;
	struct sketch *s;
	size_t *where, *on_host;
	int64_t *common, *avail_pages; /* avail: -1 unknown */
	double *per;                   /* pages hashed per kept hash, per VM */
	bool *moved;
	struct groups g;
};

static void work_free(struct work *w)
{
	free(w->s);
	free(w->where);
	free(w->on_host);
	free(w->common);
	free(w->avail_pages);
	free(w->moved);
	free(w->per);
	groups_free(&w->g);
}

static int work_init(const struct plan_host *hosts, size_t n, struct share_plan *p, struct work *w)
{
	size_t nvms = 0;
	for (size_t h = 0; h < n; h++)
		nvms += hosts[h].file->nvms;
	size_t m = nvms ? nvms : 1;
	*w = (struct work){.nhosts = n, .nvms = nvms, .s = calloc(m, sizeof(*w->s)), .where = calloc(m, sizeof(size_t)),
			   .on_host = calloc(n ? n : 1, sizeof(size_t)), .common = calloc(m * (n ? n : 1), sizeof(int64_t)),
			   .avail_pages = calloc(n ? n : 1, sizeof(int64_t)), .moved = calloc(m, sizeof(bool)),
			   .per = calloc(m, sizeof(double))};
	p->vms = calloc(m, sizeof(*p->vms));
	p->moves = calloc(m, sizeof(*p->moves));
	if (!w->s || !w->where || !w->on_host || !w->common || !w->avail_pages || !w->moved || !w->per || !p->vms ||
	    !p->moves)
		return -ENOMEM;
	p->nhosts = n;
	p->memory_checked = true;
	for (size_t h = 0, v = 0; h < n; h++) {
		const struct sketch_file *f = hosts[h].file;
		w->avail_pages[h] = f->mem_available_bytes < 0 ? -1 : f->mem_available_bytes / SKETCH_FILE_PAGE_BYTES;
		p->memory_checked &= f->mem_available_bytes >= 0;
		for (size_t i = 0; i < f->nvms; i++, v++) {
			w->s[v] = (struct sketch){.sample_n = f->sample_n, .hashes = f->vms[i].hashes, .nhashes = f->vms[i].nhashes};
			w->where[v] = h;
			w->per[v] = vm_pages_per_hash(&f->vms[i]);
			p->vms[v] = (struct plan_vm){.host = h, .index = i, .best_host = h,
						     .zero_pages = f->vms[i].zero_pages + f->vms[i].zero_mapped_pages};
			if (!(p->vms[v].common_pages = calloc(n ? n : 1, sizeof(int64_t))))
				return -ENOMEM;
			p->nvms = v + 1;
		}
	}
	return groups_build(w->s, nvms, &w->g);
}

/* What v takes on host h once KSM merged what it shares there: resident less empty less shared. */
static int64_t need_on(const struct plan_host *hosts, const struct share_plan *p, const struct work *w, size_t v,
		       size_t h)
{
	const struct sketch_file_vm *f = &hosts[p->vms[v].host].file->vms[p->vms[v].index];
	int64_t need = f->pages - f->zero_mapped_pages - f->zero_pages - w->common[v * w->nhosts + h];
	return need > 0 ? need : 0;
}

/* The move that frees the most and fits its target, or false when none frees anything. A VM whose
 * sketch is partial never moves: what it would share is not known in full. */
static bool best_move(const struct plan_host *hosts, const struct share_plan *p, const struct work *w,
		      struct plan_move *ret)
{
	bool found = false;
	for (size_t v = 0; v < w->nvms; v++) {
		size_t from = w->where[v];
		bool partial = hosts[p->vms[v].host].file->vms[p->vms[v].index].gap != 0;
		for (size_t h = 0; h < w->nhosts && !w->moved[v] && !partial; h++) {
			int64_t gain = w->common[v * w->nhosts + h] - w->common[v * w->nhosts + from];
			int64_t need = need_on(hosts, p, w, v, h);
			if (h == from || gain <= 0 || (w->avail_pages[h] >= 0 && need > w->avail_pages[h]))
				continue;
			if (!found || gain > ret->freed_pages)
				*ret = (struct plan_move){.vm = v, .from = from, .to = h, .freed_pages = gain, .need_pages = need};
			found = true;
		}
	}
	return found;
}

static void plan_greedy(const struct plan_host *hosts, struct share_plan *p, struct work *w)
{
	struct plan_move m;
	while (count_common(&w->g, w->where, w->nvms, w->nhosts, w->per, w->on_host, w->common),
	       best_move(hosts, p, w, &m)) {
		if (w->avail_pages[m.to] >= 0)
			w->avail_pages[m.to] -= m.need_pages;
		if (w->avail_pages[m.from] >= 0)
			w->avail_pages[m.from] += need_on(hosts, p, w, m.vm, m.from);
		w->where[m.vm] = m.to;
		w->moved[m.vm] = true;
		p->moves[p->nmoves++] = m;
		p->freed_pages += m.freed_pages;
	}
}

int share_plan_build(const struct plan_host *hosts, size_t n, struct share_plan *ret, char *why, size_t why_cap)
{
	int r = check_comparable(hosts, n, why, why_cap);
	if (r < 0)
		return r;
	struct share_plan p = {0};
	struct work w;
	r = work_init(hosts, n, &p, &w);
	if (r < 0) {
		work_free(&w);
		share_plan_free(&p);
		return r;
	}
	count_common(&w.g, w.where, w.nvms, n, w.per, w.on_host, w.common);
	for (size_t v = 0; v < w.nvms; v++) {
		struct plan_vm *pv = &p.vms[v];
		memcpy(pv->common_pages, &w.common[v * n], n * sizeof(int64_t));
		for (size_t h = 0; h < n; h++)
			if (pv->common_pages[h] > pv->common_pages[pv->best_host])
				pv->best_host = h;
	}
	plan_greedy(hosts, &p, &w);
	work_free(&w);
	*ret = p;
	return 0;
}

void share_plan_free(struct share_plan *p)
{
	for (size_t v = 0; p->vms && v < p->nvms; v++)
		free(p->vms[v].common_pages);
	free(p->vms);
	free(p->moves);
	*p = (struct share_plan){0};
}
