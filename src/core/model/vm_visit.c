/* The short visits a VM's monitor or manager gets when asked: QMP for its disks and the guest's
 * own view (the balloon and the guest's memory stats), libvirt's block and balloon statistics for
 * the domains whose monitor libvirt holds. */
#include "core/model/vm_visit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/guest_view.h"
#include "core/model/host.h"
#include "core/model/proc.h"
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

/* ---- the visits ---- */

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
	if (guest)
		balloon_overhead(vm, host);
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
		} else if (v->disks && (vm->disks || (vm->disks = malloc(sizeof(*vm->disks))))) {
			char why[96];
			snprintf(why, sizeof(why), "its VMM (%s) has no QMP: disks are read from QEMU", vmm_kind_name(vm->cfg.vmm));
			vm_disks_unread(why, vm->disks);
		}
	}
	if (any_libvirt)
		virt_visit(l, host, v, libvirt, conn, libvirt_uri);
	free(libvirt);
}
