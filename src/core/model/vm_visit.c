/* The short visits a VM's monitor or manager gets when asked: QMP for its disks and the guest's
 * own view, libvirt's block statistics for the domains whose monitor libvirt holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/peer/virt.h"
#include "core/model/guest_view.h"
#include "core/model/vm.h"
#include "io/peer/qmp.h"
#include "parse/cmdline/qemu_disks.h"

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

void vm_read_qmp(struct vm *vm, const struct host *host, const struct vm_qmp_visit *v)
{
	bool guest = v->guest && (vm->guest || (vm->guest = malloc(sizeof(*vm->guest))));
	bool disks = v->disks && (vm->disks || (vm->disks = malloc(sizeof(*vm->disks))));
	if (!guest && !disks)
		return; /* out of memory (or nothing asked): left unread */
	struct qmp *q = NULL;
	char why[320] = "";
	int r;
	/* No visit for a guest view alone when there is no balloon to ask about. */
	if (vm->cfg.qmp.kind != VM_QMP_UNIX)
		snprintf(why, sizeof(why), "%s", vm_qmp_hint(vm->cfg.qmp.kind));
	else if (!disks && !vm->cfg.has_balloon)
		snprintf(why, sizeof(why), "no virtio-balloon device on the command line");
	else if ((r = qmp_open(vm->cfg.qmp.path, v->timeout_ms, &q)) < 0)
		snprintf(why, sizeof(why), "%s: %s", vm->cfg.qmp.path, qmp_strerror(r));
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


/* One libvirt domain's disks and guest view as asked (doms: libvirt's answer when r is 0, else
 * why it gave none). */
static void virt_vm(struct vm *vm, const struct host *host, const struct vm_qmp_visit *v,
		    const struct virt_domains *doms, int r, const char *why)
{
	const struct virt_domain *dom = r == 0 ? virt_domain_find(doms, vm->cfg.uuid) : NULL;
	if (v->disks && (vm->disks || (vm->disks = malloc(sizeof(*vm->disks))))) {
		struct qemu_disks *cmd = dom ? vm_cmdline_disks(vm) : NULL;
		if (dom)
			vm_disks_from_virt(dom, cmd, vm->disks);
		else
			vm_disks_unread(r == 0 ? "libvirt lists no running domain with its uuid" : why, vm->disks);
		free(cmd);
	}
	if (v->guest && (vm->guest || (vm->guest = malloc(sizeof(*vm->guest))))) {
		guest_view_from_libvirt(doms, &vm->cfg, v->now_wall, vm->guest);
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
	for (size_t i = 0; i < l->n; i++) {
		struct vm *vm = &l->vms[i];
		/* A monitor libvirt holds: the disks and the balloon from libvirt, by the domain's uuid. */
		if ((v->disks || v->guest) && !v->no_libvirt && vm->cfg.vmm == VMM_QEMU && vm->cfg.qmp.kind == VM_QMP_FD &&
		    vm->cfg.uuid[0] && libvirt) {
			libvirt[i] = any_libvirt = true;
			continue;
		}
		if (vm->cfg.vmm == VMM_QEMU) {
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
