/* The short visits a VM's monitor or manager gets when asked (`mem --guest`, `--io`, doctor, the
 * sampler): QEMU's QMP socket for its disks (core/model/vm_disks.h) and the guest's own view of its
 * memory (core/model/guest_view.h), libvirt's statistics for the QEMUs whose monitor libvirt holds.
 * What cannot be read stays unknown with its reason. */
#ifndef VMHOST_CORE_VM_VISIT_H
#define VMHOST_CORE_VM_VISIT_H

#include <stdbool.h>

#include "core/model/vm.h"

struct host;
struct virt;

/* What a visit asks, and within what time. */
struct vm_qmp_visit {
	bool guest, disks;
	int timeout_ms;   /* one QMP visit, everything within it */
	int poll_seconds; /* > 0: set the balloon's guest-stats-polling-interval first */
	double now_wall;
	bool no_libvirt;  /* a --proc-root tree's VMs are not libvirtd's: not asked */
	const struct io_root *root; /* where the VMs' /proc is: whether a VM listens on its socket */
};

/* A QMP socket the VM process does not listen on itself: never connected to on its behalf. */
#define VM_NOT_ITS_SOCKET "the VM process holds no listening socket bound there: not connected to, nothing sent"

/* All of one pass's visits (vm_list_read_qmp): the VMs left when it is spent are not visited, and
 * say so, so that a few slow or hostile monitors cannot hold up a survey by their number. */
#define VM_VISITS_BUDGET_S 2.0

/* A monitor libvirt holds, and libvirt runs no domain in this process (a uuid on a command line
 * ties nothing: any process can name one). */
#define VM_LIBVIRT_NO_DOMAIN "libvirt holds its monitor and runs no domain whose QEMU is this process (libvirt's pid file)"

/* One short visit to every QEMU of l (io/peer/qmp.h) for its disks (query-blockstats) and the
 * guest's view (query-balloon, the balloon's guest-stats) as asked; the other VMMs' disks are
 * unknown, with the reason. The QEMUs whose monitor libvirt holds get their disks and guest views
 * from libvirt's block and balloon statistics instead, in one call to libvirt_uri (NULL:
 * qemu:///system) within VM_LIBVIRT_TIMEOUT_MS, on *conn (a connection kept between calls: made
 * when *conn is NULL, freed by the caller with virt_free; conn NULL: one made for this call
 * alone). When the balloon holds back some of guest RAM, that is taken out of what the overhead
 * estimate assumes is populated. */
#define VM_LIBVIRT_TIMEOUT_MS 750
void vm_list_read_qmp(struct vm_list *l, const struct host *host, const struct vm_qmp_visit *v, struct virt **conn,
		      const char *libvirt_uri);

/* For tests: one QEMU's visit, as vm_list_read_qmp makes it. */

/* One QMP visit to the QEMU of vm for what v asks; the guest's view and disks unknown, with the
 * reason, when the visit cannot be made. */
void vm_read_qmp(struct vm *vm, const struct host *host, const struct vm_qmp_visit *v);

#endif
