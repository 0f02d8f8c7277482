/* The sharing map from the sketches: see share_map.h. */
#include "core/share/share_map.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static int cmp_tagged(const void *a, const void *b)
{
	const struct sketch_tag *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->vm < y->vm ? -1 : x->vm > y->vm;
}

struct sketch_tag *sketch_tag_all(const struct sketch *s, size_t n, size_t *ret_total)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += s[i].nhashes;
	struct sketch_tag *t = malloc((total ? total : 1) * sizeof(*t));
	if (!t)
		return NULL;
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < s[i].nhashes; k++)
			t[w++] = (struct sketch_tag){s[i].hashes[k], i};
	qsort(t, total, sizeof(*t), cmp_tagged);
	*ret_total = total;
	return t;
}

/* One content held count[v] times by VM v (members: the VMs holding it, in order), counted in
 * kept hashes: share_map_build scales them to pages. */
static void add_group(struct share_map *m, const size_t *members, const int64_t *count, size_t nmembers)
{
	int64_t total = 0;
	for (size_t a = 0; a < nmembers; a++)
		total += count[a];
	m->mergeable_pages += total - 1;
	for (size_t a = 0; a < nmembers; a++) {
		struct share_vm *v = &m->vms[members[a]];
		v->self_shared_pages += count[a] - 1;
		if (nmembers == 1 && count[a] == 1)
			v->unique_pages++;
		for (size_t b = 0; b < nmembers; b++)
			if (b != a)
				v->shared_with[members[b]] += count[a];
	}
}

/* The pages a sketch hashed: those read, less the empty ones (counted apart, exactly). */
static int64_t hashed_pages(const struct sketch *s)
{
	int64_t n = s->pages - s->zero_pages - s->zero_mapped_pages;
	return n > 0 ? n : 0;
}

static int64_t scaled(int64_t kept, double pages_per_hash)
{
	return (int64_t)llround((double)kept * pages_per_hash);
}

/* From kept hashes to pages, by the ratio estimator: a VM's figure is its share of the VM's kept
 * hashes times the pages it hashed (known exactly), not its kept hashes times N. Its figures then
 * add up to its pages, and the sample's size no longer adds its own error: for a fraction p of the
 * VM counted from k hashes the standard error is pages * sqrt(p (1 - p) (1 - 1/N) / k), against
 * pages * sqrt(p (1 - 1/N) / k) by counting. error_bound_pages: two of those at p = 1/2, the
 * largest, for any of its figures. */
static void scale_to_pages(const struct sketch *s, size_t n, struct share_map *m)
{
	int64_t all_pages = 0, all_kept = 0;
	for (size_t i = 0; i < n; i++) {
		struct share_vm *v = &m->vms[i];
		int64_t pages = hashed_pages(&s[i]), kept = (int64_t)s[i].nhashes;
		double per = kept ? (double)pages / (double)kept : 0;
		v->self_shared_pages = scaled(v->self_shared_pages, per);
		v->unique_pages = scaled(v->unique_pages, per);
		for (size_t b = 0; b < n; b++)
			v->shared_with[b] = scaled(v->shared_with[b], per);
		double rate = (double)s[i].sample_n;
		v->error_bound_pages = kept ? (int64_t)llround((double)pages * sqrt((1.0 - 1.0 / rate) / (double)kept))
					    : pages;
		all_pages += pages;
		all_kept += kept;
	}
	m->mergeable_pages = scaled(m->mergeable_pages, all_kept ? (double)all_pages / (double)all_kept : 0);
}

static int alloc_map(size_t n, struct share_map *m)
{
	*m = (struct share_map){.n = n, .vms = calloc(n ? n : 1, sizeof(*m->vms))};
	if (!m->vms)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(m->vms[i].shared_with = calloc(n, sizeof(int64_t)))) {
			share_map_free(m);
			return -ENOMEM;
		}
	return 0;
}

int share_map_build(const struct sketch *s, size_t n, bool zero_pages_free, struct share_map *ret)
{
	for (size_t i = 1; i < n; i++)
		if (s[i].sample_n != s[0].sample_n)
			return -EINVAL;
	struct share_map m;
	if (alloc_map(n, &m) < 0)
		return -ENOMEM;
	size_t total = 0;
	size_t *members = malloc((n ? n : 1) * sizeof(*members));
	int64_t *count = malloc((n ? n : 1) * sizeof(*count));
	struct sketch_tag *t = sketch_tag_all(s, n, &total);
	if (!members || !count || !t) {
		free(members);
		free(count);
		free(t);
		share_map_free(&m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < total;) {
		size_t nm = 0, j = i;
		for (; j < total && t[j].hash == t[i].hash; j++) {
			if (nm == 0 || members[nm - 1] != t[j].vm) {
				members[nm] = t[j].vm;
				count[nm++] = 0;
			}
			count[nm - 1]++;
		}
		add_group(&m, members, count, nm);
		i = j;
	}
	scale_to_pages(s, n, &m);
	for (size_t i = 0; i < n; i++) {
		m.pages += s[i].pages;
		m.zero_pages += s[i].zero_pages;
		m.zero_mapped_pages += s[i].zero_mapped_pages;
	}
	/* Every empty page ends on the zero page (use_zero_pages), else all but one in one KSM page;
	 * those already on it, by KSM or by a huge page's split, are savings made. */
	m.mergeable_pages += (zero_pages_free ? m.zero_pages : (m.zero_pages > 0 ? m.zero_pages - 1 : 0)) +
			     m.zero_mapped_pages;
	free(t);
	free(members);
	free(count);
	*ret = m;
	return 0;
}

void share_map_free(struct share_map *m)
{
	for (size_t i = 0; m->vms && i < m->n; i++)
		free(m->vms[i].shared_with);
	free(m->vms);
	m->vms = NULL;
	m->n = 0;
}
