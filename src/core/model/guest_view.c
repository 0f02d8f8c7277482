#include "core/model/guest_view.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "io/peer/virt.h"
#include "io/peer/qmp.h"
#include "parse/json.h"

static void unknown(struct guest_view *g)
{
	*g = (struct guest_view){.balloon_bytes = UNKNOWN, .available_bytes = UNKNOWN, .free_bytes = UNKNOWN,
				 .caches_bytes = UNKNOWN, .major_faults = UNKNOWN, .maximum_bytes = UNKNOWN,
				 .stats_age_seconds = NAN};
}

/* A guest stat: QEMU reports a stat the driver does not give as -1 (all ones). */
static maybe_i64 stat_of(const struct json_doc *doc, const struct json_value *stats, const char *key)
{
	int64_t v;
	const struct json_value *e = stats ? json_get(doc, stats, key) : NULL;
	return e && json_as_i64(doc, e, &v) == 0 && v >= 0 ? MAYBE(v) : UNKNOWN;
}

/* The view from replies already read (pure): query-balloon's return and qom-get guest-stats'
 * return (either NULL). */
static void guest_view_from_replies(const struct json_doc *balloon_doc, const struct json_value *balloon,
				    const struct json_doc *stats_doc, const struct json_value *stats, double now_wall,
				    struct guest_view *ret)
{
	struct guest_view g;
	unknown(&g);
	int64_t v;
	const struct json_value *actual = balloon ? json_get(balloon_doc, balloon, "actual") : NULL;
	if (actual && json_as_i64(balloon_doc, actual, &v) == 0 && v >= 0)
		g.balloon_bytes = MAYBE(v);
	const struct json_value *s = stats ? json_get(stats_doc, stats, "stats") : NULL;
	const struct json_value *last = stats ? json_get(stats_doc, stats, "last-update") : NULL;
	/* last-update 0: the guest never reported (guest-stats-polling-interval is 0, or no driver). */
	if (s && last && json_as_i64(stats_doc, last, &v) == 0 && v > 0) {
		g.available_bytes = stat_of(stats_doc, s, "stat-available-memory");
		g.free_bytes = stat_of(stats_doc, s, "stat-free-memory");
		g.caches_bytes = stat_of(stats_doc, s, "stat-disk-caches");
		g.major_faults = stat_of(stats_doc, s, "stat-major-faults");
		g.stats_age_seconds = now_wall - (double)v;
	}
	*ret = g;
}

void guest_view_unread(const struct vm_config *cfg, const char *why, struct guest_view *ret)
{
	unknown(ret);
	if (cfg->qmp.kind != VM_QMP_UNIX)
		snprintf(ret->why, sizeof(ret->why), "%s", vm_qmp_hint(cfg->qmp.kind));
	else if (!cfg->has_balloon)
		snprintf(ret->why, sizeof(ret->why), "no virtio-balloon device on the command line");
	else
		snprintf(ret->why, sizeof(ret->why), "%s", why ? why : "not read");
}

static maybe_i64 kib(const struct virt_domain *d, const char *field)
{
	const struct virt_param *p = virt_param_find(d, field);
	return p && p->i >= 0 ? MAYBE(p->i * 1024) : UNKNOWN;
}

void guest_view_from_libvirt(const struct virt_domains *doms, const struct vm_config *cfg, double now_wall,
			     struct guest_view *ret)
{
	unknown(ret);
	const struct virt_domain *d = virt_domain_find(doms, cfg->uuid);
	if (!d) {
		snprintf(ret->why, sizeof(ret->why), "libvirt holds its monitor and has no running domain with its uuid (%.40s)",
			 cfg->uuid[0] ? cfg->uuid : "none on its command line");
		return;
	}
	ret->balloon_bytes = kib(d, "balloon.current");
	ret->maximum_bytes = kib(d, "balloon.maximum");
	const struct virt_param *last = virt_param_find(d, "balloon.last-update");
	if (last && last->i > 0) { /* the guest's balloon driver has reported */
		ret->available_bytes = kib(d, "balloon.usable");
		ret->free_bytes = kib(d, "balloon.unused");
		ret->caches_bytes = kib(d, "balloon.disk_caches");
		const struct virt_param *f = virt_param_find(d, "balloon.major_fault");
		ret->major_faults = f && f->i >= 0 ? MAYBE(f->i) : UNKNOWN;
		ret->stats_age_seconds = now_wall - (double)last->i;
	}
	if (!ret->available_bytes.known)
		snprintf(ret->why, sizeof(ret->why), "libvirt: the guest reports no memory stats (no virtio balloon, its "
						     "driver, or the domain's memballoon stats period is 0)");
}

void guest_view_read(struct qmp *q, const struct vm_config *cfg, int poll_seconds, double now_wall,
		     struct guest_view *ret)
{
	unknown(ret);
	/* A reply points into the session's buffer, which the next call reuses: each is read at once. */
	struct json_doc doc = {0};
	const struct json_value *v;
	int r;
	if ((r = qmp_call(q, "query-balloon", NULL, &doc, &v)) < 0) {
		snprintf(ret->why, sizeof(ret->why), "query-balloon: %s", r == -EREMOTEIO ? qmp_error_desc(q) : qmp_strerror(r));
		return;
	}
	guest_view_from_replies(&doc, v, NULL, NULL, now_wall, ret);
	json_free(&doc);
	/* The device by its id, else the first anonymous one QEMU numbered. */
	char path[128], args[256];
	if (cfg->balloon_id[0])
		snprintf(path, sizeof(path), "/machine/peripheral/%s", cfg->balloon_id);
	else
		snprintf(path, sizeof(path), "/machine/peripheral-anon/device[0]");
	if (poll_seconds > 0) {
		snprintf(args, sizeof(args), "{\"path\":\"%s\",\"property\":\"guest-stats-polling-interval\",\"value\":%d}",
			 path, poll_seconds);
		r = qmp_call(q, "qom-set", args, &doc, &v);
		json_free(&doc);
	}
	/* After a failed call the session is done: the balloon's size alone, then. */
	snprintf(args, sizeof(args), "{\"path\":\"%s\",\"property\":\"guest-stats\"}", path);
	if (r >= 0 && qmp_call(q, "qom-get", args, &doc, &v) == 0) {
		maybe_i64 balloon = ret->balloon_bytes;
		guest_view_from_replies(NULL, NULL, &doc, v, now_wall, ret);
		ret->balloon_bytes = balloon;
		json_free(&doc);
	}
	if (!ret->available_bytes.known)
		snprintf(ret->why, sizeof(ret->why),
			 "the guest reports no memory stats (its balloon driver, or guest-stats-polling-interval is 0)");
}
