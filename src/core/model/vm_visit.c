/* The short visits a VM's monitor or manager gets when asked: QMP for its disks and the guest's
 * own view (the balloon and the guest's memory stats), libvirt's block and balloon statistics for
 * the domains whose monitor libvirt holds; and from the guest's view and the host's counters,
 * what the host could take back from the VM (guest_view.h's struct reclaim). */
#include "core/model/vm_visit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/guest_view.h"
#include "core/model/host.h"
#include "core/model/proc.h"
#include "core/model/vm_guest_ram.h"
#include "core/model/vm_disks.h"
#include "io/clock.h"
#include "io/peer/qmp.h"
#include "io/peer/virt.h"
#include "parse/cmdline/qemu_disks.h"
#include "parse/cmdline/qemu_opts.h"
#include "parse/json.h"

/* ---- the guest's own view ---- */

static void unknown(struct guest_view *g)
{
	*g = (struct guest_view){.balloon_bytes = UNKNOWN, .available_bytes = UNKNOWN, .free_bytes = UNKNOWN,
				 .caches_bytes = UNKNOWN, .major_faults = UNKNOWN, .maximum_bytes = UNKNOWN,
				 .stats_age_seconds = NAN, .total_bytes = UNKNOWN, .polling_seconds = UNKNOWN};
	reclaim_unknown(&g->reclaim, NULL);
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
		g.total_bytes = stat_of(stats_doc, s, "stat-total-memory");
		g.caches_bytes = stat_of(stats_doc, s, "stat-disk-caches");
		g.major_faults = stat_of(stats_doc, s, "stat-major-faults");
		g.stats_age_seconds = now_wall - (double)v;
	}
	*ret = g;
}

/* Every figure unknown, and why: the VM has no QMP socket or no balloon device, else why (the
 * session could not be opened). */
static void guest_view_unread(const struct vm_config *cfg, const char *why, struct guest_view *ret)
{
	unknown(ret);
	if (cfg->qmp.kind != VM_QMP_UNIX)
		snprintf(ret->why, sizeof(ret->why), "%s", vm_qmp_hint(cfg->qmp.kind));
	else if (!cfg->has_balloon)
		snprintf(ret->why, sizeof(ret->why), "no virtio-balloon device on the command line");
	else
		snprintf(ret->why, sizeof(ret->why), "%s", why ? why : "not read");
	reclaim_unknown(&ret->reclaim, ret->why);
}

static maybe_i64 kib(const struct virt_domain *d, const char *field)
{
	const struct virt_param *p = virt_param_find(d, field);
	return p && p->i >= 0 ? MAYBE(p->i * 1024) : UNKNOWN;
}

/* The same from libvirt's statistics of the running domains (group VIRT_STATS_BALLOON), the VM's
 * found by the uuid on its command line (pure): balloon.current and .maximum (KiB), and once the
 * guest has reported (balloon.last-update), .usable (its MemAvailable), .unused, .disk_caches and
 * .major_fault. No such domain: why says so. */
static void guest_view_from_libvirt(const struct virt_domain *d, double now_wall, struct guest_view *ret)
{
	unknown(ret);
	if (!d) {
		snprintf(ret->why, sizeof(ret->why), VM_LIBVIRT_NO_DOMAIN);
		return;
	}
	ret->balloon_bytes = kib(d, "balloon.current");
	ret->maximum_bytes = kib(d, "balloon.maximum");
	const struct virt_param *last = virt_param_find(d, "balloon.last-update");
	if (last && last->i > 0) { /* the guest's balloon driver has reported */
		ret->available_bytes = kib(d, "balloon.usable");
		ret->free_bytes = kib(d, "balloon.unused");
		ret->total_bytes = kib(d, "balloon.available"); /* libvirt's name for the guest's MemTotal */
		ret->caches_bytes = kib(d, "balloon.disk_caches");
		const struct virt_param *f = virt_param_find(d, "balloon.major_fault");
		ret->major_faults = f && f->i >= 0 ? MAYBE(f->i) : UNKNOWN;
		ret->stats_age_seconds = now_wall - (double)last->i;
	}
	if (!ret->available_bytes.known)
		snprintf(ret->why, sizeof(ret->why), "libvirt: the guest reports no memory stats (no virtio balloon, its "
						     "driver, or the domain's memballoon stats period is 0)");
}

/* Reads the VM's guest view on an open QMP session (io/peer/qmp.h; the caller opens and closes it,
 * with its deadline). On any failure the figures stay unknown and why says why (no balloon device,
 * QEMU's error). poll_seconds > 0 first sets the device's guest-stats-polling-interval (QEMU keeps
 * it: only when the user asks). now_wall is the current Unix time (for the stats' age). After a
 * failed call the session can only be closed. */
static void guest_view_read(struct qmp *q, const struct vm_config *cfg, int poll_seconds, double now_wall,
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
	/* The device by its id, else the first anonymous one QEMU numbered. An id QEMU would have
	 * refused is not put into a command's JSON (it comes from a command line: anything). */
	char path[128], args[256];
	if (cfg->balloon_id[0] && !qemu_id_wellformed(cfg->balloon_id)) {
		snprintf(ret->why, sizeof(ret->why), "the balloon's id is not one QEMU accepts: not asked");
		return;
	}
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
	if (r >= 0 && (r = qmp_call(q, "qom-get", args, &doc, &v)) == 0) {
		maybe_i64 balloon = ret->balloon_bytes;
		guest_view_from_replies(NULL, NULL, &doc, v, now_wall, ret);
		ret->balloon_bytes = balloon;
		json_free(&doc);
	}
	/* Last: a QEMU without the property ends the session with its error. */
	snprintf(args, sizeof(args), "{\"path\":\"%s\",\"property\":\"guest-stats-polling-interval\"}", path);
	int64_t poll;
	if (poll_seconds > 0 && r >= 0) {
		ret->polling_seconds = MAYBE(poll_seconds);
	} else if (r >= 0 && qmp_call(q, "qom-get", args, &doc, &v) == 0) {
		if (json_as_i64(&doc, v, &poll) == 0 && poll >= 0)
			ret->polling_seconds = MAYBE(poll);
		json_free(&doc);
	}
	if (!ret->available_bytes.known)
		snprintf(ret->why, sizeof(ret->why),
			 "the guest reports no memory stats (its balloon driver, or guest-stats-polling-interval is 0)");
}

/* ---- what the host could take back (guest_view.h; docs/accounting.md "Reclaimable memory") ---- */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t or0(maybe_i64 m) { return m.known && m.v > 0 ? m.v : 0; }

void reclaim_unknown(struct reclaim *r, const char *why)
{
	*r = (struct reclaim){.by_balloon = UNKNOWN, .by_free_page_reporting = UNKNOWN, .by_drop_caches = UNKNOWN,
			      .guest_resident_bytes = UNKNOWN, .free_in_swap_bytes = UNKNOWN, .stats_age_seconds = NAN,
			      .stats_polling_seconds = UNKNOWN, .free_page_reporting = -1};
	snprintf(r->why, sizeof(r->why), "%s", why && why[0] ? why : "not read");
}

double reclaim_stale_seconds(maybe_i64 polling_seconds)
{
	return polling_seconds.known && polling_seconds.v > 0
		       ? 2.0 * (double)polling_seconds.v + RECLAIM_STALE_SLACK_SECONDS
		       : RECLAIM_STALE_SECONDS;
}

/* Why there is no figure, or NULL when there is one: the report's freshness, then the host side. */
static const char *no_figure(const struct reclaim_input *in, char *why, size_t cap)
{
	double age = in->stats_age_seconds;
	bool off = in->polling_seconds.known && in->polling_seconds.v == 0;
	double stale = reclaim_stale_seconds(in->polling_seconds);
	if (off && isfinite(age))
		snprintf(why, cap, "the balloon's statistics polling is off (guest-stats-polling-interval 0): the guest's "
				   "only report is %.0f s old; %s", age, RECLAIM_POLLING_HINT);
	else if (off || !isfinite(age) || !in->guest_free.known)
		snprintf(why, cap, "the guest never reported its memory (%s); %s",
			 off ? "statistics polling is off" : "its virtio_balloon driver, or statistics polling off",
			 RECLAIM_POLLING_HINT);
	else if (age > stale)
		snprintf(why, cap, "the guest's last report is %.0f s old, older than %.0f s: its balloon driver stopped "
				   "reporting, or %s; %s", age, stale,
			 in->polling_seconds.known ? "it is stuck" : "polling is off", RECLAIM_POLLING_HINT);
	else if (in->ram_hugetlb)
		snprintf(why, cap, "guest RAM is on huge pages (hugetlbfs): neither the balloon nor free page reporting "
				   "gives back part of a huge page");
	else if (!in->guest_resident.known || !in->guest_ram.known)
		snprintf(why, cap, "which guest pages are resident on the host is unknown: %s",
			 in->resident_why && in->resident_why[0] ? in->resident_why : "guest RAM not found");
	else
		return NULL;
	return why;
}

/* [lo, hi] as the figure in the middle and its half-width, into *mid and *bound. */
static void middle(int64_t lo, int64_t hi, int64_t *mid, int64_t *bound)
{
	*mid = lo + (hi - lo) / 2;
	*bound = hi - *mid;
}

void reclaim_compute(const struct reclaim_input *in, struct reclaim *ret)
{
	char why[sizeof(ret->why)];
	if (no_figure(in, why, sizeof(why))) {
		reclaim_unknown(ret, why);
		ret->stats_age_seconds = in->stats_age_seconds;
		ret->stats_polling_seconds = in->polling_seconds;
		ret->free_page_reporting = in->free_page_reporting;
		return;
	}
	int64_t g = in->guest_ram.v, b = in->balloon.known ? min64(in->balloon.v, g) : g;
	int64_t m = or0(in->ksm_merged), z = or0(in->ksm_zero), s = or0(in->swap), f = max64(in->guest_free.v, 0);
	/* Private resident guest RAM: every page of it is free in the guest or used by it. */
	int64_t r = max64(0, min64(in->guest_resident.v, b) - m);
	int64_t used = max64(0, b - f);
	/* Free and resident: at least what is left of r once every used page is counted resident; at most
	 * r less the used pages the guest has surely touched (those within its MemTotal), less what of
	 * them may sit merged, on the zero page or in swap instead. */
	int64_t free_hi = min64(f, r), free_lo = min64(max64(0, r - used), free_hi);
	if (in->guest_total.known && in->guest_total.v <= b)
		free_hi = max64(free_lo, min64(free_hi, r - max64(0, in->guest_total.v - f - m - z - s)));
	int64_t free_mid, free_bound, cache_mid = 0, cache_bound = 0;
	middle(free_lo, free_hi, &free_mid, &free_bound);
	/* What an action surely reaches: the guest's kernel may hold as much as it reserved (b - t: its
	 * image, page structures) free in pageblocks of its own, freed at boot, which the balloon takes
	 * last and reporting never sees in pieces under 2 MiB. */
	int64_t kernel = in->guest_total.known && in->guest_total.v <= b ? b - in->guest_total.v : 0;
	int64_t reach = max64(0, free_lo - kernel);
	/* Droppable cache (MemAvailable less MemFree) was touched: resident, unless merged or swapped. */
	if (in->guest_available.known) {
		int64_t drop = max64(0, in->guest_available.v - f);
		int64_t cache_hi = min64(drop, max64(0, r - free_lo));
		int64_t cache_lo = min64(max64(0, drop - m - z - s), cache_hi);
		middle(cache_lo, cache_hi, &cache_mid, &cache_bound);
	}
	*ret = (struct reclaim){
		.known = true,
		.bytes = free_mid + cache_mid,
		.error_bound_bytes = free_bound + cache_bound,
		.by_balloon = MAYBE(reach),
		.by_free_page_reporting = in->free_page_reporting == 0   ? MAYBE(reach)
					  : in->free_page_reporting == 1 ? MAYBE(0)
									 : UNKNOWN,
		.by_drop_caches = in->guest_available.known ? MAYBE(cache_mid) : UNKNOWN,
		.guest_resident_bytes = MAYBE(r),
		.free_in_swap_bytes = in->swap.known ? MAYBE(min64(f, max64(0, in->swap.v))) : UNKNOWN,
		.stats_age_seconds = in->stats_age_seconds,
		.stats_polling_seconds = in->polling_seconds,
		.free_page_reporting = in->free_page_reporting,
	};
}

/* Why the guest RAM's residency is unknown, from its read's errno. */
static const char *residency_why(int r)
{
	if (r == -ENODATA)
		return "not read";
	if (r == -ENOENT)
		return "guest RAM not found among its mappings";
	if (r == -EACCES || r == -EPERM)
		return "its pagemap may not be read (root, or its own user)";
	return "its maps or pagemap could not be read";
}

/* vm->guest->reclaim from the guest's view a visit just read and the VMM's own counters and guest
 * RAM residency, read now (its status, ksm_stat, maps and pagemap outside guest RAM: the exact
 * overhead's read). root NULL: residency unknown. */
static void vm_reclaim_read(const struct io_root *root, const struct host *host, struct vm *vm)
{
	const struct guest_view *gv = vm->guest;
	struct mem_counters c = {0};
	unsigned denied = 0;
	int64_t overhead = 0;
	char why[160] = "";
	/* Without a report there is nothing to weigh the residency against: it is not read. */
	bool reported = gv->free_bytes.known && isfinite(gv->stats_age_seconds);
	int r = !root || !reported ? -ENODATA : proc_read_counters(root, vm->pid, &c, &denied);
	if (r == 0)
		r = vm_overhead_exact(root, vm->pid, &vm->cfg, host->page_size_bytes, &overhead);
	if (r < 0 || !c.rss.known)
		snprintf(why, sizeof(why), "%s", residency_why(r));
	int64_t ps = host->page_size_bytes;
	struct reclaim_input in = {
		.guest_ram = vm->cfg.guest_ram_bytes,
		.balloon = gv->balloon_bytes,
		.guest_total = gv->total_bytes,
		.guest_free = gv->free_bytes,
		.guest_available = gv->available_bytes,
		.guest_resident = why[0] ? UNKNOWN : MAYBE(max64(0, c.rss.v - overhead)),
		.ksm_merged = c.ksm_merging_pages.known ? MAYBE(c.ksm_merging_pages.v * ps) : UNKNOWN,
		.ksm_zero = c.ksm_zero_pages.known ? MAYBE(c.ksm_zero_pages.v * ps) : UNKNOWN,
		.swap = c.swap,
		.stats_age_seconds = gv->stats_age_seconds,
		.polling_seconds = gv->polling_seconds,
		.free_page_reporting = vm->cfg.has_balloon ? vm->cfg.balloon_free_page_reporting : -1,
		.ram_hugetlb = ram_on_hugetlb(&vm->cfg, &vm->mem),
		.resident_why = why,
	};
	reclaim_compute(&in, &vm->guest->reclaim);
}

/* ---- the visits ---- */

/* What the host could take back, once the guest's view is read: worked out where the balloon
 * answered (the view says why not otherwise). */
static void guest_reclaim(struct vm *vm, const struct host *host, const struct vm_qmp_visit *v)
{
	if (vm->guest->balloon_bytes.known)
		vm_reclaim_read(v->root, host, vm);
	else
		reclaim_unknown(&vm->guest->reclaim, vm->guest->why);
}

/* The overhead estimate without the balloon's pages: the guest gave them back, only the rest of
 * its RAM can be resident. */
static void balloon_overhead(struct vm *vm, const struct host *host)
{
	maybe_i64 balloon = vm->guest->balloon_bytes;
	if (vm->overhead_method != METHOD_ESTIMATE || !balloon.known || !vm->cfg.guest_ram_bytes.known ||
	    balloon.v >= vm->cfg.guest_ram_bytes.v)
		return;
	struct vm_config ballooned = vm->cfg;
	ballooned.guest_ram_bytes = balloon;
	vm->overhead_bytes = overhead_estimate(&vm->mem, &ballooned, host->page_size_bytes);
}

/* The command line's disks, for their cache mode and AIO; NULL when it cannot be read. */
static struct qemu_disks *vm_cmdline_disks(const struct vm *vm)
{
	struct qemu_disks *d = malloc(sizeof(*d));
	if (d && (!vm->cmdline || parse_qemu_disks(vm->cmdline, vm->cmdline_len, d) < 0)) {
		free(d);
		d = NULL;
	}
	return d;
}

/* Whether the VM itself holds the listening socket its command line names, asked before connecting:
 * a socket served by another process is never even connected to on the VM's behalf (its listen
 * backlog is not filled for a forger's sake). Unknown (another user's fds): SO_PEERCRED decides. */
static bool vm_may_connect(const struct io_root *root, struct vm *vm, char *why, size_t cap)
{
	if (!root || proc_listens_on(root, vm->pid, vm->cfg.qmp.path) != 0)
		return true;
	vm->monitor.trusted = 0;
	snprintf(vm->monitor.why, sizeof(vm->monitor.why), VM_NOT_ITS_SOCKET);
	snprintf(why, cap, "%.150s: %s", vm->cfg.qmp.path, VM_NOT_ITS_SOCKET);
	return false;
}

/* Why the visit did not happen, into why and, when it says who listens, the VM's monitor. */
static void qmp_open_failed(struct vm *vm, int r, pid_t listener, char *why, size_t cap)
{
	char line[sizeof(vm->monitor.why) - 16];
	qmp_open_why(r, listener, line, sizeof(line));
	snprintf(why, cap, "%.150s: %s", vm->cfg.qmp.path, line);
	if (r == -EXDEV) {
		vm->monitor.trusted = 0;
		snprintf(vm->monitor.why, sizeof(vm->monitor.why), "%s", line);
	} else if (listener == vm->pid) { /* its own monitor, which then failed */
		vm->monitor.trusted = 1;
		vm->monitor.why[0] = '\0';
	} else {
		snprintf(vm->monitor.why, sizeof(vm->monitor.why), "not checked: %s", line);
	}
}

void vm_read_qmp(struct vm *vm, const struct host *host, const struct vm_qmp_visit *v)
{
	bool guest = v->guest && (vm->guest || (vm->guest = malloc(sizeof(*vm->guest))));
	bool disks = v->disks && (vm->disks || (vm->disks = malloc(sizeof(*vm->disks))));
	if (!guest && !disks)
		return; /* out of memory (or nothing asked): left unread */
	struct qmp *q = NULL;
	char why[320] = "";
	pid_t listener = 0;
	int r;
	/* No visit for a guest view alone when there is no balloon to ask about. */
	if (vm->cfg.qmp.kind != VM_QMP_UNIX)
		snprintf(why, sizeof(why), "%s", vm_qmp_hint(vm->cfg.qmp.kind));
	else if (!disks && !vm->cfg.has_balloon)
		snprintf(why, sizeof(why), "no virtio-balloon device on the command line");
	else if (!vm_may_connect(v->root, vm, why, sizeof(why)))
		; /* why says why not */
	else if ((r = qmp_open(vm->cfg.qmp.path, vm->pid, v->timeout_ms, &q, &listener)) < 0)
		qmp_open_failed(vm, r, listener, why, sizeof(why));
	else
		vm->monitor = (struct vm_monitor){.source = VM_MONITOR_QMP, .trusted = 1};
	if (disks && q) {
		struct qemu_disks *cmd = vm_cmdline_disks(vm);
		vm_disks_query(q, cmd, vm->disks);
		free(cmd);
	} else if (disks) {
		vm_disks_unread(why, vm->disks);
	}
	/* A failed call ends the session: the guest's view then says why, unread. */
	if (guest && q && (!disks || vm->disks->known) && vm->cfg.has_balloon)
		guest_view_read(q, &vm->cfg, v->poll_seconds, v->now_wall, vm->guest);
	else if (guest)
		guest_view_unread(&vm->cfg, q ? vm->disks->why : why, vm->guest);
	qmp_close(q);
	if (guest) {
		balloon_overhead(vm, host);
		guest_reclaim(vm, host, v);
	}
}

/* A VM left unvisited because the pass's visits used their time: its disks and guest view unknown,
 * with that reason. */
static void visit_skipped(struct vm *vm, const struct vm_qmp_visit *v)
{
	char why[96];
	snprintf(why, sizeof(why), "not visited: this survey's visits to monitors used their %.0f s", VM_VISITS_BUDGET_S);
	if (v->disks && (vm->disks || (vm->disks = malloc(sizeof(*vm->disks)))))
		vm_disks_unread(why, vm->disks);
	if (v->guest && (vm->guest || (vm->guest = malloc(sizeof(*vm->guest)))))
		guest_view_unread(&vm->cfg, why, vm->guest);
}

/* One libvirt domain's disks and guest view as asked (doms: libvirt's answer when r is 0, else
 * why it gave none). */
static void virt_vm(struct vm *vm, const struct host *host, const struct vm_qmp_visit *v,
		    const struct virt_domains *doms, int r, const char *why)
{
	/* The domain libvirt runs in this very process, never one a command line's uuid names. */
	const struct virt_domain *dom = r == 0 ? virt_domain_of_pid(doms, vm->pid) : NULL;
	if (r == 0) {
		vm->monitor.trusted = dom != NULL;
		snprintf(vm->monitor.why, sizeof(vm->monitor.why), "%s", dom ? "" : VM_LIBVIRT_NO_DOMAIN);
	}
	if (v->disks && (vm->disks || (vm->disks = malloc(sizeof(*vm->disks))))) {
		struct qemu_disks *cmd = dom ? vm_cmdline_disks(vm) : NULL;
		if (dom)
			vm_disks_from_virt(dom, cmd, vm->disks);
		else
			vm_disks_unread(r == 0 ? VM_LIBVIRT_NO_DOMAIN : why, vm->disks);
		free(cmd);
	}
	if (v->guest && (vm->guest || (vm->guest = malloc(sizeof(*vm->guest))))) {
		guest_view_from_libvirt(dom, v->now_wall, vm->guest);
		if (r < 0)
			snprintf(vm->guest->why, sizeof(vm->guest->why), "%s", why);
		balloon_overhead(vm, host);
		guest_reclaim(vm, host, v);
	}
}

/* The disks and guest views of every libvirt domain among l that needs them (want[i]), in one
 * call on *conn (made when NULL; conn NULL: a connection for this call alone). */
static void virt_visit(struct vm_list *l, const struct host *host, const struct vm_qmp_visit *v, const bool *want,
		       struct virt **conn, const char *uri)
{
	struct virt *own = NULL, **c = conn ? conn : &own;
	struct virt_domains doms = {0};
	char why[256] = "";
	unsigned groups = (v->disks ? VIRT_STATS_BLOCK : 0) | (v->guest ? VIRT_STATS_BALLOON : 0);
	int r = *c ? 0 : virt_new(uri, VM_LIBVIRT_TIMEOUT_MS, c);
	if (r < 0)
		snprintf(why, sizeof(why), "libvirt: out of memory");
	else
		r = virt_domain_stats(*c, groups, &doms, why, sizeof(why));
	for (size_t i = 0; i < l->n; i++)
		if (want[i])
			virt_vm(&l->vms[i], host, v, &doms, r, why);
	virt_domains_free(&doms);
	virt_free(own);
}

/* A VMM without QMP: its disks and the guest's view unknown, with that reason. */
static void not_qemu(struct vm *vm, const struct vm_qmp_visit *v)
{
	char why[96];
	snprintf(why, sizeof(why), "its VMM (%s) has no QMP: disks are read from QEMU", vmm_kind_name(vm->cfg.vmm));
	if (v->disks && (vm->disks || (vm->disks = malloc(sizeof(*vm->disks)))))
		vm_disks_unread(why, vm->disks);
	if (v->guest && (vm->guest || (vm->guest = malloc(sizeof(*vm->guest))))) {
		unknown(vm->guest);
		snprintf(vm->guest->why, sizeof(vm->guest->why), "its VMM (%s) has no QMP: the guest's view is QEMU's balloon's",
			 vmm_kind_name(vm->cfg.vmm));
		reclaim_unknown(&vm->guest->reclaim, vm->guest->why);
	}
}

void vm_list_read_qmp(struct vm_list *l, const struct host *host, const struct vm_qmp_visit *v, struct virt **conn,
		      const char *libvirt_uri)
{
	bool *libvirt = calloc(l->n ? l->n : 1, sizeof(*libvirt));
	bool any_libvirt = false;
	double deadline = clock_monotonic_seconds() + VM_VISITS_BUDGET_S;
	for (size_t i = 0; i < l->n; i++) {
		struct vm *vm = &l->vms[i];
		/* A monitor libvirt holds: the disks and the balloon from libvirt, by the domain's pid. */
		if ((v->disks || v->guest) && !v->no_libvirt && vm->cfg.vmm == VMM_QEMU && vm->cfg.qmp.kind == VM_QMP_FD &&
		    libvirt) {
			libvirt[i] = any_libvirt = true;
			continue;
		}
		if (vm->cfg.vmm == VMM_QEMU && clock_monotonic_seconds() >= deadline) {
			visit_skipped(vm, v);
		} else if (vm->cfg.vmm == VMM_QEMU) {
			vm_read_qmp(vm, host, v);
		} else {
			not_qemu(vm, v);
		}
	}
	if (any_libvirt)
		virt_visit(l, host, v, libvirt, conn, libvirt_uri);
	free(libvirt);
}
