/* libvirt, loaded when a command first reads it (libvirt.so.0, rather than linked), through one
 * read-only connection whose every call has a deadline: libvirt's calls block (a hung libvirtd
 * holds them forever), so each runs on a worker thread that the caller waits for at most the
 * deadline. Half way, a call still out has libvirtd asked the same with NOWAIT (answered without
 * waiting for any domain's job), so that a late call says in one line which it is: a busy domain
 * (one starting, migrating, or whose QEMU does not answer libvirt's monitor: libvirt waits for
 * it) or a libvirtd that does not answer. A call not answered by then is left to finish on its
 * own and the caller gets -ETIMEDOUT and that line; while it is still pending, later calls fail
 * at once the same way, without a second thread or connection. A failed call drops the
 * connection: the next one connects again (libvirtd restarted). Domain statistics are copied out
 * of libvirt's structures on the worker: the caller never holds libvirt memory. The hypervisor's
 * version is asked once, after the first answer with the vcpu group is handed over, out of any
 * deadline: a libvirtd without QEMU's capabilities cached probes QEMU for seconds to give it.
 *
 *   struct virt *v;  virt_new("qemu:///system", 750, &v);
 *   struct virt_domains d;  char why[256];
 *   if (virt_domain_stats(v, VIRT_STATS_VM | VIRT_STATS_VCPU, &d, why, sizeof(why)) == 0) ... virt_domains_free(&d);
 *   virt_free(v); */
#ifndef VMHOST_IO_PEER_VIRT_H
#define VMHOST_IO_PEER_VIRT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The stats groups asked for (virConnectGetAllDomainStats' VIR_DOMAIN_STATS_*). */
enum {
	VIRT_STATS_CPU_TOTAL = 1 << 1,
	VIRT_STATS_BALLOON = 1 << 2,
	VIRT_STATS_VCPU = 1 << 3,
	VIRT_STATS_BLOCK = 1 << 5,
	VIRT_STATS_VM = 1 << 10,
};

/* One typed parameter, numbers as doubles and integers, strings copied (booleans are left out). */
struct virt_param {
	char field[80]; /* "vcpu.0.exits.sum" */
	int64_t i;      /* integer types; for doubles the value truncated */
	double d;
	char *s;        /* a string's copy ("block.0.path"), owned by the list; NULL for a number */
};

struct virt_domain {
	char uuid[37];
	char name[256];
	/* The domain's QEMU, from libvirt's own pid file (/run/libvirt/qemu/NAME.pid, root's, for
	 * qemu:///system): what ties a domain to a process, which a uuid on a command line does not
	 * (any process can name one). 0 when unknown. */
	pid_t pid;
	struct virt_param *params;
	size_t nparams;
};

struct virt_domains {
	struct virt_domain *v;
	size_t n;
	unsigned long hypervisor_version; /* virConnectGetVersion's: major*1000000 + minor*1000 + micro
	                                   * (QEMU's for qemu:///system); 0 unknown (not in yet: the
	                                   * first answer never carries it) */
};
void virt_domains_free(struct virt_domains *d);
/* The domain with that uuid (any case), or NULL. */
/* The domain whose QEMU is pid (libvirt's pid file), NULL when none. */
const struct virt_domain *virt_domain_of_pid(const struct virt_domains *d, pid_t pid);
const struct virt_domain *virt_domain_find(const struct virt_domains *d, const char *uuid);
/* The domain's parameter with that field name ("balloon.current"), or NULL. */
const struct virt_param *virt_param_find(const struct virt_domain *d, const char *field);

struct virt;

/* A connection to uri (NULL: qemu:///system), opened on the first call. 0 or -ENOMEM. */
int virt_new(const char *uri, int deadline_ms, struct virt **ret);
/* Frees it; a call still pending keeps what it needs and frees it when it returns. NULL: nothing. */
void virt_free(struct virt *v);

/* Every running domain's statistics of the groups asked for. 0, or a negative errno with why in
 * one line: -ELIBACC libvirt cannot be loaded, -ECONNREFUSED no connection (libvirtd stopped),
 * -ETIMEDOUT no answer within the deadline (a busy domain, or libvirtd hung: why says which),
 * -EIO the call failed. */
int virt_domain_stats(struct virt *v, unsigned groups, struct virt_domains *ret, char *why, size_t cap);

#endif
