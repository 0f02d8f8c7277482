#include "core/share/share_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int share_run_alloc(size_t n, struct share_run *ret)
{
	struct share_run r = {.n = n, .ksm_saved_bytes = UNKNOWN};
	r.vms = calloc(n ? n : 1, sizeof(*r.vms));
	r.pairs = calloc(n ? n * n : 1, sizeof(*r.pairs));
	if (!r.vms || !r.pairs) {
		share_run_free(&r);
		return -ENOMEM;
	}
	*ret = r;
	return 0;
}

void share_run_free(struct share_run *r)
{
	free(r->vms);
	free(r->pairs);
	r->vms = NULL;
	r->pairs = NULL;
	r->n = 0;
}

int share_run_of(const struct sketch *s, size_t n, const struct share_map *m, double t, int64_t page_size,
		 maybe_i64 ksm_saved_bytes, struct share_run *ret)
{
	struct share_run r;
	if (share_run_alloc(n, &r) < 0)
		return -ENOMEM;
	r.t = t;
	r.sample_n = n ? (int64_t)s[0].sample_n : 1;
	r.page_size = page_size;
	r.host_pages = m->pages;
	r.zero_pages = m->zero_pages;
	r.mergeable_savings_bytes = m->mergeable_pages * page_size;
	r.ksm_saved_bytes = ksm_saved_bytes;
	for (size_t a = 0; a < n; a++) {
		const struct share_vm *v = &m->vms[a];
		const char *gap = sketch_gap_name(s[a].gap);
		r.vms[a] = (struct share_run_vm){.pid = s[a].pid, .pages = s[a].pages, .zero_pages = s[a].zero_pages,
						 .unique_pages = v->unique_pages,
						 .error_bound_pages = v->error_bound_pages,
						 .sketch_bytes = (int64_t)sketch_bytes(&s[a])};
		snprintf(r.vms[a].name, sizeof(r.vms[a].name), "%s", s[a].name);
		snprintf(r.vms[a].partial_reason, sizeof(r.vms[a].partial_reason), "%s", gap ? gap : "");
		for (size_t b = 0; b < n; b++)
			r.pairs[a * n + b] = a == b ? v->self_shared_pages : v->shared_with[b];
	}
	*ret = r;
	return 0;
}

/* ---- the order: single linkage, clusters kept as chains end to end ---- */

struct edge {
	int64_t pages; /* both ways */
	size_t a, b;
};

static int cmp_edge(const void *x, const void *y)
{
	const struct edge *p = x, *q = y;
	if (p->pages != q->pages)
		return p->pages > q->pages ? -1 : 1;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return (p->b > q->b) - (p->b < q->b);
}

struct chains {
	size_t *next, *prev, *head, *tail, *root, *size; /* SIZE_MAX: none */
};

static void chain_reverse(struct chains *c, size_t r)
{
	for (size_t i = c->head[r]; i != SIZE_MAX;) {
		size_t nx = c->next[i];
		c->next[i] = c->prev[i];
		c->prev[i] = nx;
		i = nx;
	}
	size_t h = c->head[r];
	c->head[r] = c->tail[r];
	c->tail[r] = h;
}

/* Joins b's chain after a's, turned so that a and b meet where they can. */
static void chain_join(struct chains *c, size_t a, size_t b)
{
	size_t ra = c->root[a], rb = c->root[b];
	if (c->tail[ra] != a && c->head[ra] == a)
		chain_reverse(c, ra);
	if (c->head[rb] != b && c->tail[rb] == b)
		chain_reverse(c, rb);
	c->next[c->tail[ra]] = c->head[rb];
	c->prev[c->head[rb]] = c->tail[ra];
	c->tail[ra] = c->tail[rb];
	c->size[ra] += c->size[rb];
	for (size_t i = c->head[rb]; i != SIZE_MAX; i = c->next[i])
		c->root[i] = ra;
}

/* The chains' roots by size, the largest first (then by their first VM). */
static int cmp_root(const void *x, const void *y, void *arg)
{
	const struct chains *c = arg;
	size_t p = *(const size_t *)x, q = *(const size_t *)y;
	if (c->size[p] != c->size[q])
		return c->size[p] > c->size[q] ? -1 : 1;
	return (p > q) - (p < q);
}

static struct edge *edges_of(const struct share_run *r, size_t *ret_n)
{
	size_t n = r->n, ne = 0;
	struct edge *e = malloc((n * n / 2 + 1) * sizeof(*e));
	if (!e)
		return NULL;
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			int64_t p = r->pairs[a * n + b] + r->pairs[b * n + a];
			if (p > 0)
				e[ne++] = (struct edge){p, a, b};
		}
	qsort(e, ne, sizeof(*e), cmp_edge);
	*ret_n = ne;
	return e;
}

int share_run_order(const struct share_run *r, size_t *ret_order)
{
	size_t n = r->n, ne = 0, nroots = 0;
	size_t *mem = malloc((n ? n : 1) * 7 * sizeof(size_t));
	struct edge *e = edges_of(r, &ne);
	if (!mem || !e) {
		free(mem);
		free(e);
		return -ENOMEM;
	}
	struct chains c = {mem, mem + n, mem + 2 * n, mem + 3 * n, mem + 4 * n, mem + 5 * n};
	size_t *roots = mem + 6 * n;
	for (size_t i = 0; i < n; i++) {
		c.next[i] = c.prev[i] = SIZE_MAX;
		c.head[i] = c.tail[i] = c.root[i] = i;
		c.size[i] = 1;
	}
	for (size_t k = 0; k < ne; k++)
		if (c.root[e[k].a] != c.root[e[k].b])
			chain_join(&c, e[k].a, e[k].b);
	for (size_t i = 0; i < n; i++)
		if (c.root[i] == i)
			roots[nroots++] = i;
	qsort_r(roots, nroots, sizeof(*roots), cmp_root, &c);
	size_t w = 0;
	for (size_t k = 0; k < nroots; k++)
		for (size_t i = c.head[roots[k]]; i != SIZE_MAX; i = c.next[i])
			ret_order[w++] = i;
	free(mem);
	free(e);
	return 0;
}
