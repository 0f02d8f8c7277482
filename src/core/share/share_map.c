#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "core/share/sketch.h"

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

/* One content held count[v] times by VM v (members: the VMs holding it, in order). */
static void add_group(struct share_map *m, const size_t *members, const int64_t *count, size_t nmembers,
		      int64_t rate)
{
	int64_t total = 0;
	for (size_t a = 0; a < nmembers; a++)
		total += count[a];
	m->mergeable_pages += (total - 1) * rate;
	for (size_t a = 0; a < nmembers; a++) {
		struct share_vm *v = &m->vms[members[a]];
		v->self_shared_pages += (count[a] - 1) * rate;
		if (nmembers == 1 && count[a] == 1)
			v->unique_pages += rate;
		for (size_t b = 0; b < nmembers; b++)
			if (b != a)
				v->shared_with[members[b]] += count[a] * rate;
	}
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
	int64_t rate = n ? (int64_t)s[0].sample_n : 1;
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
		add_group(&m, members, count, nm, rate);
		i = j;
	}
	for (size_t i = 0; i < n; i++) {
		m.pages += s[i].pages;
		/* Empty pages holding memory, and those KSM already mapped to the zero page. */
		m.zero_pages += s[i].zero_pages + s[i].ksm_zero_pages;
		m.vms[i].error_bound_pages = (int64_t)llround(2.0 * sqrt((double)s[i].nhashes * (double)rate * (double)(rate - 1)));
	}
	m.mergeable_pages += zero_pages_free ? m.zero_pages : (m.zero_pages > 0 ? m.zero_pages - 1 : 0);
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
