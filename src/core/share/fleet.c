/* A host's sketches as a file, and sketching every VM of the host (share, serve's /sketch). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/model/survey.h"
#include "core/share/fleet.h"

/* A file's partial reason is the enum's value. */
_Static_assert(SKETCH_STOPPED == SKETCH_FILE_GAP_MAX, "sketch_file.h's partial reasons follow enum sketch_gap");

/* A hash of the key that says whether two sketches were made with the same one, and nothing of
 * the key itself (a keyed hash of a fixed message). */
static uint64_t sketch_key_fingerprint(const struct siphash_key *key)
{
	static const char message[] = "vmhost sketch key fingerprint, version 1";
	return siphash13(key, message, sizeof(message) - 1);
}

static bool wanted(const pid_t *pids, size_t npids, const struct vm *vm)
{
	if (!npids)
		return vm->cfg.vmm != VMM_PROCESS;
	for (size_t i = 0; i < npids; i++)
		if (pids[i] == vm->pid)
			return true;
	return false;
}

int sketch_vms(const struct io_root *root, const struct vm_list *vms, const pid_t *pids, size_t npids,
	       const struct sketch_opts *o, struct sketch **ret, size_t *ret_n)
{
	struct sketch *s = calloc(vms->n ? vms->n : 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < vms->n; i++) {
		if (!wanted(pids, npids, &vms->vms[i]))
			continue;
		int r = sketch_take(root, &vms->vms[i], o, &s[n]);
		if (r < 0) {
			for (size_t k = 0; k < n; k++)
				sketch_free(&s[k]);
			free(s);
			return r;
		}
		snprintf(s[n].uuid, sizeof(s[n].uuid), "%s", vms->vms[i].cfg.uuid);
		n++;
	}
	*ret = s;
	*ret_n = n;
	return 0;
}

static int64_t known_or(maybe_i64 v, int64_t unknown) { return v.known ? v.v : unknown; }

/* The host's sketches as a file holds them, the hashes borrowed from s: f.vms is the caller's to
 * free. 0 or -ENOMEM. */
static int host_file_view(const struct host *host, const struct sketch *s, size_t n, const struct siphash_key *key,
			  struct sketch_file *ret)
{
	struct sketch_file f = {
		.sample_n = n ? s[0].sample_n : 1, .key_fingerprint = sketch_key_fingerprint(key),
		.mem_total_bytes = host->mem_known ? known_or(host->mem.mem_total, -1) : -1,
		.mem_available_bytes = host->mem_known ? known_or(host->mem.mem_available, -1) : -1,
		.use_zero_pages_known = host->ksm.use_zero_pages.known,
		.use_zero_pages = host->ksm.use_zero_pages.known && host->ksm.use_zero_pages.v == 1,
		.vms = calloc(n ? n : 1, sizeof(*f.vms)), .nvms = n};
	if (!f.vms)
		return -ENOMEM;
	if (gethostname(f.host, sizeof(f.host) - 1) < 0)
		f.host[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		struct sketch_file_vm *v = &f.vms[i];
		*v = (struct sketch_file_vm){.pid = s[i].pid, .gap = (uint8_t)s[i].gap, .ram_pages = s[i].ram_pages,
					     .pages = s[i].pages, .zero_pages = s[i].zero_pages,
					     .zero_mapped_pages = s[i].zero_mapped_pages,
					     .ksm_zero_pages = s[i].ksm_zero_pages, .hashes = s[i].hashes,
					     .nhashes = s[i].nhashes};
		snprintf(v->name, sizeof(v->name), "%.255s", s[i].name);
		snprintf(v->uuid, sizeof(v->uuid), "%.255s", s[i].uuid);
	}
	*ret = f;
	return 0;
}

int sketch_file_of_host(const struct host *host, const struct sketch *s, size_t n, const struct siphash_key *key,
			char **ret, size_t *ret_len)
{
	struct sketch_file f = {0};
	int r = host_file_view(host, s, n, key, &f);
	if (r == 0)
		r = sketch_file_encode(&f, ret, ret_len);
	free(f.vms); /* the hashes were borrowed */
	return r;
}

/* The plan of this one host's sketches, and the figure of sketch k in it (see share_like_here). */
static int shared_in_plan(const struct host *host, const struct sketch *s, size_t n, size_t k,
			  const struct siphash_key *key, int64_t *ret_bytes, char *why, size_t cap)
{
	struct sketch_file f = {0};
	int r = host_file_view(host, s, n, key, &f);
	struct plan_host here = {.label = "this host", .file = &f};
	struct share_plan p = {0};
	if (r == 0)
		r = share_plan_build(&here, 1, &p, why, cap);
	if (r == 0)
		*ret_bytes = (p.vms[k].common_pages[0] + p.vms[k].zero_pages) * SKETCH_PAGE_BYTES;
	share_plan_free(&p);
	free(f.vms);
	return r;
}

int share_like_here(const struct io_root *root, const struct host *host, const struct vm_list *vms, pid_t image,
		    const struct sketch_opts *o, int64_t *ret_bytes, char *why, size_t cap)
{
	struct sketch *s = NULL;
	size_t n = 0, k = 0;
	int r = sketch_vms(root, vms, NULL, 0, o, &s, &n);
	while (r == 0 && k < n && s[k].pid != image)
		k++;
	if (r == 0 && k == n) {
		snprintf(why, cap, "pid %d is no VM of this host", (int)image);
		r = -ENOENT;
	} else if (r == 0 && s[k].gap != SKETCH_COMPLETE) {
		snprintf(why, cap, "its RAM could not be read whole (%s): what it shares is not known",
			 sketch_gap_name(s[k].gap));
		r = -EINVAL;
	}
	if (r == 0)
		r = shared_in_plan(host, s, n, k, &o->key, ret_bytes, why, cap);
	for (size_t i = 0; i < n; i++)
		sketch_free(&s[i]);
	free(s);
	return r;
}

int sketch_file_take(const struct io_root *root, const struct sketch_opts *o, char **ret, size_t *ret_len)
{
	struct host host;
	struct vm_list vms;
	enum survey_step step;
	struct survey_opts so = {0};
	int r = survey_take(root, &so, &host, &vms, &step);
	if (r < 0)
		return r;
	struct sketch *s = NULL;
	size_t n = 0;
	r = sketch_vms(root, &vms, NULL, 0, o, &s, &n);
	if (r == 0)
		r = sketch_file_of_host(&host, s, n, &o->key, ret, ret_len);
	for (size_t i = 0; i < n; i++)
		sketch_free(&s[i]);
	free(s);
	vm_list_free(&vms);
	return r;
}
