/* Sketches beyond one host: a host's sketches as a file (`share --out`, serve's /sketch; the
 * format is parse/sketch_file.h), read back, and `share plan`'s placement: per VM the memory it
 * would share on each host, its best target, and a greedy consolidation plan for the fleet
 * (docs/share.md). */
#ifndef VMHOST_CORE_FLEET_H
#define VMHOST_CORE_FLEET_H

#include "core/model/host.h"
#include "core/share/sketch.h"
#include "parse/sketch_file.h"

/* Sketches every VM of vms (pids: only these, else every VM that is not a bare --pid process)
 * into *ret (n of them, each freed with sketch_free). 0 or -ENOMEM. */
int sketch_vms(const struct io_root *root, const struct vm_list *vms, const pid_t *pids, size_t npids,
	       const struct sketch_opts *o, struct sketch **ret, size_t *ret_n);

/* A host's sketches, encoded: with its name, MemTotal and MemAvailable, and the key's
 * fingerprint. 0, -EINVAL, -ENOMEM. */
int sketch_file_of_host(const struct host *host, const struct sketch *s, size_t n, const struct siphash_key *key,
			char **ret, size_t *ret_len);

/* What a new guest like the VM image (its pid) would share on this host by KSM: the share plan's
 * own figure for it here (its pages whose content another VM of vms holds, and its empty pages:
 * what it would not take of its own once merged), from sketches of every VM of vms taken under o.
 * 0 with *ret_bytes; -ENOENT (image no VM of vms) or -EINVAL (its sketch partial, or a plan
 * refused) with why; -ENOMEM. */
int share_like_here(const struct io_root *root, const struct host *host, const struct vm_list *vms, pid_t image,
		    const struct sketch_opts *o, int64_t *ret_bytes, char *why, size_t cap);

/* What serve's /sketch answers: the host read, every VM sketched under o (its budget), encoded.
 * 0 or a negative errno. */
int sketch_file_take(const struct io_root *root, const struct sketch_opts *o, char **ret, size_t *ret_len);

/* One host of a plan: a parsed sketch file, and what to call it. */
struct plan_host {
	const char *label;
	const struct sketch_file *file;
};

struct plan_vm {
	size_t host, index;      /* where it runs: plan_host and its VM */
	int64_t zero_pages;      /* its empty pages, holding memory or already on the zero page: free
				    on any host */
	int64_t *common_pages;   /* [host]: its pages whose content another VM there holds */
	size_t best_host;        /* where it shares the most (its own on a tie) */
};

struct plan_move {
	size_t vm, from, to;
	int64_t freed_pages;     /* what the fleet saves more with it moved */
	int64_t need_pages;      /* what it takes on the target, its shared pages merged */
};

struct share_plan {
	size_t nhosts, nvms;
	struct plan_vm *vms;
	struct plan_move *moves;
	size_t nmoves;
	int64_t freed_pages;
	bool memory_checked;     /* every host's MemAvailable was known */
};

/* The plan for n hosts' sketches. 0; -EINVAL with why[] (sketches of different keys or
 * sample rates); -ENOMEM. */
int share_plan_build(const struct plan_host *hosts, size_t n, struct share_plan *ret, char *why, size_t why_cap);
void share_plan_free(struct share_plan *p);

#endif
