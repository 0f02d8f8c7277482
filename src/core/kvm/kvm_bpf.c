#include "core/kvm/kvm_bpf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/kvm_reasons.h"

_Static_assert(KVM_TIME_BUCKETS == KVM_BPF_TIME_BUCKETS, "the program's histogram is the sample's");

struct tally {
	struct kvm_bpf_key key;
	uint64_t count; /* summed over the CPUs */
};

struct timing {
	struct kvm_bpf_key key;
	struct kvm_exit_time t; /* summed over the CPUs */
};

struct kvm_bpf {
	struct bpf_object *obj; /* NULL: replayed (kvm_bpf_replay), nothing to read */
	struct bpf_link *links[KVM_BPF_NFIELDS];
	size_t nlinks;
	int counts_fd, times_fd, lost_fd, followed_fd;
	bool following; /* followed_fork attached and its fields written */
	int ncpus;
	void *percpu; /* one lookup's values, [ncpus] of the largest */
	struct tally *keys; /* the last refresh, sorted by tgid */
	size_t nkeys, cap;
	struct timing *times; /* the same for the times */
	size_t ntimes, times_cap;
	unsigned timed; /* bit (1 << KVM_BPF_EXIT), (1 << KVM_BPF_USERSPACE_EXIT): timed exits */
};

/* ---- the snapshot: map contents summed over the CPUs, sorted by tgid (no libbpf here) ---- */

static int grow(void **array, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t bigger = *cap ? *cap * 2 : 256;
	void *p = realloc(*array, bigger * size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = bigger;
	return 0;
}

static int add_count(struct kvm_bpf *b, const struct kvm_bpf_key *k, const uint64_t *percpu)
{
	if (grow((void **)&b->keys, &b->cap, b->nkeys, sizeof(*b->keys)) < 0)
		return -ENOMEM;
	uint64_t sum = 0;
	for (int c = 0; c < b->ncpus; c++)
		sum += percpu[c];
	b->keys[b->nkeys++] = (struct tally){.key = *k, .count = sum};
	return 0;
}

static int add_time(struct kvm_bpf *b, const struct kvm_bpf_key *k, const struct kvm_exit_time *percpu)
{
	if (grow((void **)&b->times, &b->times_cap, b->ntimes, sizeof(*b->times)) < 0)
		return -ENOMEM;
	struct timing *t = &b->times[b->ntimes++];
	*t = (struct timing){.key = *k};
	for (int c = 0; c < b->ncpus; c++)
		kvm_exit_time_add(&t->t, &percpu[c]);
	return 0;
}

/* Both begin with the key: one order for both. */
static int cmp_tgid(const void *x, const void *y)
{
	const struct kvm_bpf_key *a = x, *b = y;
	return (a->tgid > b->tgid) - (a->tgid < b->tgid);
}

static void sort_snapshot(struct kvm_bpf *b)
{
	if (b->nkeys > 1) /* keys is NULL before the first key */
		qsort(b->keys, b->nkeys, sizeof(*b->keys), cmp_tgid);
	if (b->ntimes > 1)
		qsort(b->times, b->ntimes, sizeof(*b->times), cmp_tgid);
}

static void free_snapshot(struct kvm_bpf *b)
{
	free(b->percpu);
	free(b->keys);
	free(b->times);
	free(b);
}

int kvm_bpf_replay(int ncpus, unsigned timed, struct kvm_bpf **ret)
{
	if (ncpus < 1)
		return -EINVAL;
	struct kvm_bpf *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->ncpus = ncpus;
	b->timed = timed;
	*ret = b;
	return 0;
}

int kvm_bpf_replay_set(struct kvm_bpf *b, const struct kvm_bpf_record *recs, size_t n)
{
	if (b->obj)
		return -EINVAL;
	b->nkeys = 0;
	b->ntimes = 0;
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = recs[i].times ? add_time(b, &recs[i].key, recs[i].times) : add_count(b, &recs[i].key, recs[i].counts);
	sort_snapshot(b);
	return r;
}

static int cmp_tid(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;
	return (a > b) - (a < b);
}

/* The first of tgid's entries in a sorted snapshot array (n when none); each begins with its key. */
static size_t first_key(const void *array, size_t n, size_t size, pid_t tgid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (((const struct kvm_bpf_key *)((const char *)array + mid * size))->tgid < (uint32_t)tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The counter (below n) an entry of tgid adds to, or -1: another process, a thread not wanted. */
static long counter_of(const struct kvm_bpf_key *k, const pid_t *tids, size_t ntids, kvm_bpf_classify_fn *classify,
		       const void *ctx, size_t n)
{
	pid_t tid = (pid_t)k->tid;
	if (ntids && !bsearch(&tid, tids, ntids, sizeof(*tids), cmp_tid))
		return -1;
	long c = classify(ctx, k->event, k->a, k->b);
	return c >= 0 && (size_t)c < n ? c : -1;
}

void kvm_bpf_tally(const struct kvm_bpf *b, pid_t tgid, const pid_t *tids, size_t ntids,
		   kvm_bpf_classify_fn *classify, const void *ctx, uint64_t *counts, size_t n)
{
	for (size_t i = first_key(b->keys, b->nkeys, sizeof(*b->keys), tgid);
	     i < b->nkeys && b->keys[i].key.tgid == (uint32_t)tgid; i++) {
		long c = counter_of(&b->keys[i].key, tids, ntids, classify, ctx, n);
		if (c >= 0)
			counts[c] += b->keys[i].count;
	}
}

void kvm_bpf_tally_times(const struct kvm_bpf *b, pid_t tgid, const pid_t *tids, size_t ntids,
			 kvm_bpf_classify_fn *classify, const void *ctx, struct kvm_exit_time *times, size_t n)
{
	for (size_t i = first_key(b->times, b->ntimes, sizeof(*b->times), tgid);
	     i < b->ntimes && b->times[i].key.tgid == (uint32_t)tgid; i++) {
		long c = counter_of(&b->times[i].key, tids, ntids, classify, ctx, n);
		if (c >= 0)
			kvm_exit_time_add(&times[c], &b->times[i].t);
	}
}

int kvm_bpf_threads(const struct kvm_bpf *b, pid_t tgid, pid_t **ret, size_t *ret_n)
{
	size_t first = first_key(b->keys, b->nkeys, sizeof(*b->keys), tgid), n = 0;
	pid_t *tids = malloc((b->nkeys - first ? b->nkeys - first : 1) * sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	for (size_t i = first; i < b->nkeys && b->keys[i].key.tgid == (uint32_t)tgid; i++)
		tids[n++] = (pid_t)b->keys[i].key.tid;
	if (n > 1)
		qsort(tids, n, sizeof(*tids), cmp_tid);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!w || tids[w - 1] != tids[i])
			tids[w++] = tids[i];
	*ret = tids;
	*ret_n = w;
	return 0;
}

bool kvm_bpf_timed(const struct kvm_bpf *b, unsigned event)
{
	return b && (b->timed & (1u << event));
}

#if VMHOST_BPF
#include "core/kvm/libbpf.h"
#include "io/perf.h"
#include "io/test_hook.h"
#include "parse/elements.h"
#include "parse/trace_format.h"

extern const unsigned char kvm_reasons_object[];
extern const size_t kvm_reasons_object_size;

/* The record fields each event's program reads, in the order of KVM_BPF_*. */
static const struct {
	const char *event, *a, *b;
	int b_required;
} wanted[KVM_BPF_NFIELDS] = {
	{"kvm/kvm_exit", "exit_reason", "isa", 0},
	{"kvm/kvm_userspace_exit", "reason", "errno", 1},
	{"kvm/kvm_pio", "rw", "port", 1},
	{"kvm/kvm_mmio", "type", NULL, 0},
	{"kvm/kvm_entry", "vcpu_id", NULL, 0},
	{"syscalls/sys_enter_ioctl", "cmd", NULL, 0},
	{"sched/sched_process_fork", "child_pid", NULL, 0},
};

/* The format file of event ("kvm/kvm_exit") under the root's tracefs: its id and fields. -ENODEV
 * when there is no such event, -EPROTO when it cannot be read. */
static int event_format(const struct io_root *root, const char *event, struct trace_format *ret)
{
	char tracefs[64], *format;
	size_t len;
	int r = io_tracefs_dir(root, tracefs, sizeof(tracefs));
	if (r < 0)
		return r;
	r = io_read_alloc(root, IO_SYS, &format, &len, "%s/events/%s/format", tracefs, event);
	if (r < 0)
		return r == -ENOENT ? -ENODEV : r;
	r = parse_trace_format(format, len, ret);
	free(format);
	return r < 0 ? -EPROTO : 0;
}

/* Where the program finds event e's fields: from its format file under tracefs. */
static int locate_fields(const struct io_root *root, unsigned e, struct kvm_bpf_fields *ret)
{
	struct trace_format f;
	int r = event_format(root, wanted[e].event, &f);
	if (r < 0)
		return r;
	const struct trace_field *a = trace_format_field(&f, wanted[e].a);
	const struct trace_field *b = wanted[e].b ? trace_format_field(&f, wanted[e].b) : NULL;
	/* a syscall's argument is a long: its low 32 bits are the first 4 bytes on little-endian */
	bool a_ok = a && (a->size == 4 || (e == KVM_BPF_RUN && a->size == 8 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__));
	if (!a_ok || (wanted[e].b_required && !b) || (b && b->size != 4))
		return -EPROTO;
	*ret = (struct kvm_bpf_fields){.a_offset = a->offset, .a_size = 4,
				       .b_offset = b ? b->offset : 0, .b_size = b ? 4 : 0};
	return 0;
}

/* Writes the fields of events first..last-1: from then on their programs count (or time). */
static int write_fields(const struct io_root *root, struct kvm_bpf *b, unsigned first, unsigned last)
{
	struct bpf_map *m = libbpf.bpf_object__find_map_by_name(b->obj, "fields");
	if (!m)
		return -EPROTO;
	for (unsigned e = first; e < last; e++) {
		struct kvm_bpf_fields f;
		int r = locate_fields(root, e, &f);
		if (r < 0)
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

/* A program attached to its tracepoint (its section is "tracepoint/<system>/<event>") through a
 * perf event on the id read under the root's tracefs: libbpf's own attach reads the id under
 * /sys/kernel/tracing, where a tracefs mounted for this run alone (io/mountns.h) is not. */
static int attach(const struct io_root *root, struct kvm_bpf *b, const char *program)
{
	static const char prefix[] = "tracepoint/";
	struct bpf_program *p = libbpf.bpf_object__find_program_by_name(b->obj, program);
	const char *section = p ? libbpf.bpf_program__section_name(p) : NULL;
	if (!section || strncmp(section, prefix, sizeof(prefix) - 1) != 0)
		return -EPROTO;
	struct trace_format f;
	int r = event_format(root, section + sizeof(prefix) - 1, &f);
	int fd = r < 0 ? r : io_perf_tracepoint_any(f.id);
	if (fd < 0)
		return fd;
	struct bpf_link *l = libbpf.bpf_program__attach_perf_event(p, fd);
	if (!l) {
		r = errno ? -errno : -EINVAL;
		io_close(fd); /* the link owns it once made */
		return r;
	}
	b->links[b->nlinks++] = l;
	return 0;
}

/* Opens, loads, locates the fields, attaches the counting programs: the steps that can be refused. */
static int load(const struct io_root *root, struct kvm_bpf *b)
{
	static const char *const counting[KVM_BPF_NEVENTS] = {"kvm_exit", "kvm_userspace_exit", "kvm_pio", "kvm_mmio"};
	b->obj = libbpf.bpf_object__open_mem(kvm_reasons_object, kvm_reasons_object_size, NULL);
	if (!b->obj)
		return errno ? -errno : -EINVAL;
	if (libbpf.bpf_object__load(b->obj) < 0)
		return errno ? -errno : -EPERM;
	b->counts_fd = map_fd(b, "counts");
	b->times_fd = map_fd(b, "times");
	b->lost_fd = map_fd(b, "lost");
	b->followed_fd = map_fd(b, "followed");
	if (b->counts_fd < 0 || b->times_fd < 0 || b->lost_fd < 0 || b->followed_fd < 0)
		return -EPROTO;
	int r = write_fields(root, b, 0, KVM_BPF_NEVENTS);
	for (unsigned e = 0; e < KVM_BPF_NEVENTS && r == 0; e++)
		r = attach(root, b, counting[e]);
	return r;
}

/* The ends of the timed exits: kvm_entry ends kvm_exit's, a KVM_RUN ioctl kvm_userspace_exit's.
 * Each attached before its fields are written (the writing starts the stamping). */
static void load_timing(const struct io_root *root, struct kvm_bpf *b, char *why, size_t cap)
{
	static const struct {
		const char *program;
		unsigned ender, timed;
	} ends[] = {{"kvm_entry", KVM_BPF_ENTRY, KVM_BPF_EXIT}, {"kvm_run_ioctl", KVM_BPF_RUN, KVM_BPF_USERSPACE_EXIT}};
	for (size_t i = 0; i < ELEMENTSOF(ends); i++) {
		int r = attach(root, b, ends[i].program);
		if (r == 0)
			r = write_fields(root, b, ends[i].ender, ends[i].ender + 1);
		if (r == 0)
			b->timed |= 1u << ends[i].timed;
		else if (!why[0])
			snprintf(why, cap, "%s: %s", wanted[ends[i].ender].event,
				 r == -ENODEV || r == -ENOENT ? "no such tracepoint" : strerror(-r));
	}
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

int kvm_bpf_open(const struct io_root *root, bool timed, struct kvm_bpf **ret, char *why, size_t cap)
{
	const char *force = io_test_hook("VMHOST_KVM_REASONS");
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
	if (r == 0 && !(b->percpu = calloc((size_t)b->ncpus, sizeof(struct kvm_exit_time))))
		r = -ENOMEM;
	if (r == 0)
		r = load(root, b);
	if (r < 0) {
		explain(r, lib_err, why, cap);
		kvm_bpf_close(b);
		return r;
	}
	why[0] = '\0';
	if (timed)
		load_timing(root, b, why, cap);
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
	free_snapshot(b);
}

int kvm_bpf_follow(const struct io_root *root, struct kvm_bpf *b, pid_t pid)
{
	if (!b->obj)
		return -EINVAL;
	uint32_t p = (uint32_t)pid;
	if (libbpf.bpf_map_update_elem(b->followed_fd, &p, &p, BPF_ANY) < 0)
		return -errno;
	int r = 0;
	if (!b->following && (r = attach(root, b, "followed_fork")) == 0 &&
	    (r = write_fields(root, b, KVM_BPF_FORK, KVM_BPF_FORK + 1)) == 0)
		b->following = true;
	return r;
}

typedef int add_fn(struct kvm_bpf *b, const struct kvm_bpf_key *k, const void *percpu);
static int add_count_any(struct kvm_bpf *b, const struct kvm_bpf_key *k, const void *v) { return add_count(b, k, v); }
static int add_time_any(struct kvm_bpf *b, const struct kvm_bpf_key *k, const void *v) { return add_time(b, k, v); }

/* Every key of a map and its values summed over the CPUs (one lookup per key). */
static int read_map(struct kvm_bpf *b, int fd, add_fn *add)
{
	struct kvm_bpf_key key, next;
	const void *prev = NULL;
	int r;
	while ((r = libbpf.bpf_map_get_next_key(fd, prev, &next)) == 0) {
		key = next;
		prev = &key;
		if (libbpf.bpf_map_lookup_elem(fd, &key, b->percpu) < 0) {
			if (errno == ENOENT)
				continue; /* deleted meanwhile */
			return -errno;
		}
		if (add(b, &key, b->percpu) < 0)
			return -ENOMEM;
	}
	return r < 0 && errno != ENOENT ? -errno : 0;
}

int kvm_bpf_refresh(struct kvm_bpf *b)
{
	if (!b->obj)
		return 0; /* replayed: the snapshot is all there is */
	b->nkeys = 0;
	b->ntimes = 0;
	int r = read_map(b, b->counts_fd, add_count_any);
	if (r == 0 && b->timed)
		r = read_map(b, b->times_fd, add_time_any);
	sort_snapshot(b);
	return r;
}

void kvm_bpf_forget(struct kvm_bpf *b, pid_t tgid)
{
	if (!b->obj)
		return;
	for (size_t i = first_key(b->keys, b->nkeys, sizeof(*b->keys), tgid);
	     i < b->nkeys && b->keys[i].key.tgid == (uint32_t)tgid; i++)
		libbpf.bpf_map_delete_elem(b->counts_fd, &b->keys[i].key);
	for (size_t i = first_key(b->times, b->ntimes, sizeof(*b->times), tgid);
	     i < b->ntimes && b->times[i].key.tgid == (uint32_t)tgid; i++)
		libbpf.bpf_map_delete_elem(b->times_fd, &b->times[i].key);
}

uint64_t kvm_bpf_lost(const struct kvm_bpf *b)
{
	uint32_t zero = 0;
	if (!b->obj || libbpf.bpf_map_lookup_elem(b->lost_fd, &zero, b->percpu) < 0)
		return 0;
	uint64_t s = 0;
	for (int c = 0; c < b->ncpus; c++)
		s += ((const uint64_t *)b->percpu)[c];
	return s;
}

#else /* built without eBPF: clang or libbpf-dev were missing (cmake/bpf.cmake) */

int kvm_bpf_open(const struct io_root *root, bool timed, struct kvm_bpf **ret, char *why, size_t cap)
{
	(void)root, (void)timed, (void)ret;
	snprintf(why, cap, "this vmhost was built without eBPF (clang or libbpf-dev missing at build time)");
	return -EOPNOTSUPP;
}

void kvm_bpf_close(struct kvm_bpf *b)
{
	if (b)
		free_snapshot(b);
}
int kvm_bpf_refresh(struct kvm_bpf *b) { (void)b; return 0; }
void kvm_bpf_forget(struct kvm_bpf *b, pid_t tgid) { (void)b, (void)tgid; }
int kvm_bpf_follow(const struct io_root *root, struct kvm_bpf *b, pid_t pid)
{
	(void)root, (void)b, (void)pid;
	return -EOPNOTSUPP;
}
uint64_t kvm_bpf_lost(const struct kvm_bpf *b) { (void)b; return 0; }
#endif
