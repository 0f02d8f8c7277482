#include "core/kvm/kvm_bpf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if VMHOST_BPF
#include "bpf/kvm_reasons.h"
#include "core/kvm/libbpf.h"
#include "io/perf.h"
#include "parse/trace_format.h"

extern const unsigned char kvm_reasons_object[];
extern const size_t kvm_reasons_object_size;

struct tally {
	struct kvm_bpf_key key;
	uint64_t count; /* summed over the CPUs */
};

struct kvm_bpf {
	struct bpf_object *obj;
	struct bpf_link *links[KVM_BPF_NEVENTS];
	size_t nlinks;
	int counts_fd, lost_fd;
	int ncpus;
	uint64_t *percpu; /* [ncpus]: one lookup's values */
	struct tally *keys; /* the last refresh, sorted by tgid */
	size_t nkeys, cap;
};

/* The record fields each event's program reads, in the order of KVM_BPF_*. */
static const struct {
	const char *event, *a, *b;
	int b_required;
} wanted[KVM_BPF_NEVENTS] = {
	{"kvm_exit", "exit_reason", "isa", 0},
	{"kvm_userspace_exit", "reason", "errno", 1},
	{"kvm_pio", "rw", "port", 1},
	{"kvm_mmio", "type", NULL, 0},
};

/* Where the program finds event e's fields: from its format file under tracefs. */
static int locate_fields(const struct io_root *root, const char *tracefs, unsigned e, struct kvm_bpf_fields *ret)
{
	char *format;
	size_t len;
	int r = io_read_alloc(root, IO_SYS, &format, &len, "%s/events/kvm/%s/format", tracefs, wanted[e].event);
	if (r < 0)
		return r == -ENOENT ? -ENODEV : r;
	struct trace_format f;
	r = parse_trace_format(format, len, &f);
	free(format);
	if (r < 0)
		return -EPROTO;
	const struct trace_field *a = trace_format_field(&f, wanted[e].a);
	const struct trace_field *b = wanted[e].b ? trace_format_field(&f, wanted[e].b) : NULL;
	if (!a || a->size != 4 || (wanted[e].b_required && !b) || (b && b->size != 4))
		return -EPROTO;
	*ret = (struct kvm_bpf_fields){.a_offset = a->offset, .a_size = 4,
				       .b_offset = b ? b->offset : 0, .b_size = b ? 4 : 0};
	return 0;
}

static int write_fields(const struct io_root *root, struct kvm_bpf *b)
{
	char tracefs[64];
	int r = io_tracefs_dir(root, tracefs, sizeof(tracefs));
	if (r < 0)
		return r;
	struct bpf_map *m = libbpf.bpf_object__find_map_by_name(b->obj, "fields");
	if (!m)
		return -EPROTO;
	for (unsigned e = 0; e < KVM_BPF_NEVENTS; e++) {
		struct kvm_bpf_fields f;
		if ((r = locate_fields(root, tracefs, e, &f)) < 0)
			return r;
		if (libbpf.bpf_map_update_elem(libbpf.bpf_map__fd(m), &e, &f, BPF_ANY) < 0)
			return -errno;
	}
	return 0;
}

static int map_fd(struct kvm_bpf *b, const char *name)
{
	struct bpf_map *m = libbpf.bpf_object__find_map_by_name(b->obj, name);
	return m ? libbpf.bpf_map__fd(m) : -EPROTO;
}

/* Opens, loads, locates the fields, attaches: the steps that can be refused. */
static int load(const struct io_root *root, struct kvm_bpf *b)
{
	b->obj = libbpf.bpf_object__open_mem(kvm_reasons_object, kvm_reasons_object_size, NULL);
	if (!b->obj)
		return errno ? -errno : -EINVAL;
	if (libbpf.bpf_object__load(b->obj) < 0)
		return errno ? -errno : -EPERM;
	b->counts_fd = map_fd(b, "counts");
	b->lost_fd = map_fd(b, "lost");
	if (b->counts_fd < 0 || b->lost_fd < 0)
		return -EPROTO;
	int r = write_fields(root, b);
	if (r < 0)
		return r;
	struct bpf_program *p = NULL;
	while ((p = libbpf.bpf_object__next_program(b->obj, p)) && b->nlinks < KVM_BPF_NEVENTS) {
		struct bpf_link *l = libbpf.bpf_program__attach(p);
		if (!l)
			return errno ? -errno : -EINVAL;
		b->links[b->nlinks++] = l;
	}
	return b->nlinks == KVM_BPF_NEVENTS ? 0 : -EPROTO;
}

static void explain(int err, const char *lib_err, char *why, size_t cap)
{
	switch (-err) {
	case ELIBACC: snprintf(why, cap, "eBPF not loaded: %s", lib_err); return;
	case EPERM:
	case EACCES:
		snprintf(why, cap, "eBPF not allowed (needs CAP_BPF and CAP_PERFMON, and kernel lockdown off)");
		return;
	case ENOENT: snprintf(why, cap, "eBPF: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)"); return;
	case ENODEV: snprintf(why, cap, "eBPF: no KVM tracepoints (the kvm module is not loaded)"); return;
	case EPROTO: snprintf(why, cap, "eBPF: the KVM tracepoints' records are not laid out as the counter reads them"); return;
	}
	snprintf(why, cap, "eBPF not loaded: %s", strerror(-err));
}

int kvm_bpf_open(const struct io_root *root, struct kvm_bpf **ret, char *why, size_t cap)
{
	const char *force = getenv("VMHOST_KVM_REASONS");
	if (force && !strcmp(force, "perf")) {
		snprintf(why, cap, "VMHOST_KVM_REASONS=perf asks for the perf filters");
		return -ECANCELED;
	}
	char lib_err[256] = "";
	int r = libbpf_load(lib_err, sizeof(lib_err));
	if (r < 0) {
		explain(r, lib_err, why, cap);
		return r;
	}
	libbpf.libbpf_set_print(NULL); /* its warnings would go to stderr; the reason is ours */
	struct kvm_bpf *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->ncpus = libbpf.libbpf_num_possible_cpus();
	r = b->ncpus > 0 ? 0 : -EPROTO;
	if (r == 0 && !(b->percpu = calloc((size_t)b->ncpus, sizeof(*b->percpu))))
		r = -ENOMEM;
	if (r == 0)
		r = load(root, b);
	if (r < 0) {
		explain(r, lib_err, why, cap);
		kvm_bpf_close(b);
		return r;
	}
	*ret = b;
	return 0;
}

void kvm_bpf_close(struct kvm_bpf *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nlinks; i++)
		libbpf.bpf_link__destroy(b->links[i]);
	if (b->obj)
		libbpf.bpf_object__close(b->obj);
	free(b->percpu);
	free(b->keys);
	free(b);
}

static uint64_t sum_percpu(const struct kvm_bpf *b)
{
	uint64_t s = 0;
	for (int c = 0; c < b->ncpus; c++)
		s += b->percpu[c];
	return s;
}

static int cmp_tally(const void *x, const void *y)
{
	const struct tally *a = x, *b = y;
	return (a->key.tgid > b->key.tgid) - (a->key.tgid < b->key.tgid);
}

int kvm_bpf_refresh(struct kvm_bpf *b)
{
	struct kvm_bpf_key key, next;
	const void *prev = NULL;
	int r;
	b->nkeys = 0;
	while ((r = libbpf.bpf_map_get_next_key(b->counts_fd, prev, &next)) == 0) {
		key = next;
		prev = &key;
		if (libbpf.bpf_map_lookup_elem(b->counts_fd, &key, b->percpu) < 0) {
			if (errno == ENOENT)
				continue; /* deleted meanwhile */
			return -errno;
		}
		if (b->nkeys == b->cap) {
			size_t cap = b->cap ? b->cap * 2 : 256;
			struct tally *bigger = realloc(b->keys, cap * sizeof(*bigger));
			if (!bigger)
				return -ENOMEM;
			b->keys = bigger;
			b->cap = cap;
		}
		b->keys[b->nkeys++] = (struct tally){.key = key, .count = sum_percpu(b)};
	}
	if (r < 0 && errno != ENOENT)
		return -errno;
	if (b->nkeys > 1) /* keys is NULL before the first key */
		qsort(b->keys, b->nkeys, sizeof(*b->keys), cmp_tally);
	return 0;
}

static int cmp_tid(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;
	return (a > b) - (a < b);
}

/* The first of tgid's keys in the sorted snapshot (nkeys when none). */
static size_t first_key(const struct kvm_bpf *b, pid_t tgid)
{
	size_t lo = 0, hi = b->nkeys;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->keys[mid].key.tgid < (uint32_t)tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void kvm_bpf_tally(const struct kvm_bpf *b, pid_t tgid, const pid_t *tids, size_t ntids,
		   kvm_bpf_classify_fn *classify, const void *ctx, uint64_t *counts, size_t n)
{
	for (size_t i = first_key(b, tgid); i < b->nkeys && b->keys[i].key.tgid == (uint32_t)tgid; i++) {
		const struct kvm_bpf_key *k = &b->keys[i].key;
		pid_t tid = (pid_t)k->tid;
		if (ntids && !bsearch(&tid, tids, ntids, sizeof(*tids), cmp_tid))
			continue;
		long c = classify(ctx, k->event, k->a, k->b);
		if (c >= 0 && (size_t)c < n)
			counts[c] += b->keys[i].count;
	}
}

void kvm_bpf_forget(struct kvm_bpf *b, pid_t tgid)
{
	for (size_t i = first_key(b, tgid); i < b->nkeys && b->keys[i].key.tgid == (uint32_t)tgid; i++)
		libbpf.bpf_map_delete_elem(b->counts_fd, &b->keys[i].key);
}

uint64_t kvm_bpf_lost(const struct kvm_bpf *b)
{
	uint32_t zero = 0;
	if (libbpf.bpf_map_lookup_elem(b->lost_fd, &zero, b->percpu) < 0)
		return 0;
	return sum_percpu(b);
}

#else /* built without eBPF: clang or libbpf-dev were missing (cmake/bpf.cmake) */

int kvm_bpf_open(const struct io_root *root, struct kvm_bpf **ret, char *why, size_t cap)
{
	(void)root;
	(void)ret;
	snprintf(why, cap, "this vmhost was built without eBPF (clang or libbpf-dev missing at build time)");
	return -EOPNOTSUPP;
}

void kvm_bpf_close(struct kvm_bpf *b) { (void)b; }
int kvm_bpf_refresh(struct kvm_bpf *b) { (void)b; return -EOPNOTSUPP; }
void kvm_bpf_tally(const struct kvm_bpf *b, pid_t tgid, const pid_t *tids, size_t ntids,
		   kvm_bpf_classify_fn *classify, const void *ctx, uint64_t *counts, size_t n)
{
	(void)b, (void)tgid, (void)tids, (void)ntids, (void)classify, (void)ctx, (void)counts, (void)n;
}
void kvm_bpf_forget(struct kvm_bpf *b, pid_t tgid) { (void)b, (void)tgid; }
uint64_t kvm_bpf_lost(const struct kvm_bpf *b) { (void)b; return 0; }
#endif
