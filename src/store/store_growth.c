#include "store/store_growth.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct growth_scan_opts growth_scan_defaults(void)
{
	return (struct growth_scan_opts){.db = "vmhost.db", .window_seconds = 6 * 3600.0, .params = growth_defaults};
}

void growth_scan_free(struct growth_scan *g)
{
	if (!g)
		return;
	free(g->vms);
	g->vms = NULL;
	g->n = 0;
}

/* What the VM wrote to storage between t0 and t1: its io_write counter's last minus its first
 * known value there; unknown without two, or when the counter went back (not one process). */
static maybe_i64 written_over(const struct history_vm_point *p, size_t n, double t0, double t1)
{
	const struct history_vm_point *first = NULL, *last = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!p[i].io_write.known || !(p[i].t >= t0 && p[i].t <= t1))
			continue;
		first = first ? first : &p[i];
		last = &p[i];
	}
	if (!first || first == last || last->io_write.v < first->io_write.v)
		return UNKNOWN;
	return MAYBE(last->io_write.v - first->io_write.v);
}

static int judge(struct store *s, const struct growth_scan *g, const struct growth_params *params,
		 struct growth_vm *v)
{
	struct history_vm_point *p;
	size_t n;
	int r = store_vm_points(s, v->vm.id, g->since, g->until, &p, &n);
	if (r < 0)
		return r;
	struct growth_point *gp = calloc(n ? n : 1, sizeof(*gp));
	if (!gp) {
		free(p);
		return -ENOMEM;
	}
	size_t m = 0;
	v->last_overhead = UNKNOWN;
	for (size_t i = 0; i < n; i++) {
		if (!p[i].overhead.known)
			continue;
		v->last_overhead = p[i].overhead;
		gp[m++] = (struct growth_point){.t = p[i].t, .overhead = (double)p[i].overhead.v,
						 .populated = p[i].populated};
	}
	r = growth_assess(gp, m, v->vm.started_seconds, params, &v->result);
	v->written_bytes = r == 0 ? written_over(p, n, v->result.first_t, v->result.last_t) : UNKNOWN;
	free(gp);
	free(p);
	return r;
}

int growth_scan_store(struct store *s, const struct growth_scan_opts *o, struct growth_scan *ret)
{
	memset(ret, 0, sizeof(*ret));
	double first, last;
	int r = store_time_range(s, &first, &last);
	if (r == -ENODATA) { /* nothing recorded yet: no VMs */
		ret->since = ret->until = NAN;
		return 0;
	}
	if (r < 0)
		return r;
	ret->until = last;
	ret->since = last - o->window_seconds;
	struct store_vm *vms;
	size_t n;
	r = store_vms(s, ret->since, ret->until, &vms, &n);
	if (r < 0)
		return r;
	ret->vms = calloc(n ? n : 1, sizeof(*ret->vms));
	if (!ret->vms) {
		free(vms);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		ret->vms[i].vm = vms[i];
		r = judge(s, ret, &o->params, &ret->vms[i]);
		if (r < 0)
			break;
	}
	ret->n = n;
	free(vms);
	if (r < 0)
		growth_scan_free(ret);
	return r;
}

int growth_scan_run(const struct growth_scan_opts *o, struct growth_scan *ret, const char **what)
{
	struct store *s;
	*what = "opening the database";
	int r = store_open_read(o->db, &s);
	if (r < 0)
		return r;
	*what = "reading the database";
	r = growth_scan_store(s, o, ret);
	store_close(s);
	return r;
}
