#include "core/kvm/kvm_trace.h"
#include "parse/parse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/kvm_reasons.h"
#include "core/kvm/kvm_bpf.h"
#include "io/perf.h"
#include "parse/elements.h"
#include "parse/trace_format.h"

/* What guests of QEMU's pc and q35 machines touch most: PIC, PIT, keyboard, RTC, POST, A20, SMI,
 * COM1, debug port, fw_cfg, ACPI PM (q35 0x600, piix 0xb000), PCI configuration, reset. */
const uint16_t kvm_trace_default_ports[] = {
	0x20,  0x21,  0x40,  0x42,  0x43,  0x60,  0x61,  0x64,  0x70,  0x71,  0x80,
	0x92,  0xa0,  0xa1,  0xb2,  0x3f8, 0x3f9, 0x3fa, 0x3fb, 0x3fc, 0x3fd, 0x402,
	0x510, 0x511, 0x514, 0x604, 0x608, 0xb004, 0xb008, 0xcf8, 0xcf9, 0xcfc, 0xcfe,
};
const size_t kvm_trace_ndefault_ports = ELEMENTSOF(kvm_trace_default_ports);

_Static_assert(KVM_TRACE_EXIT == KVM_BPF_EXIT && KVM_TRACE_USERSPACE_EXIT == KVM_BPF_USERSPACE_EXIT &&
		       KVM_TRACE_PIO == KVM_BPF_PIO && KVM_TRACE_MMIO == KVM_BPF_MMIO,
	       "the eBPF program numbers the events as kvm_trace does");

static const char *const event_names[KVM_TRACE_NEVENTS] = {"kvm_exit", "kvm_userspace_exit", "kvm_pio", "kvm_mmio"};

/* Which records a counter takes, as its filter says, for the eBPF counter's keys (a, b): the
 * fields core/kvm/kvm_bpf.c reads (exit_reason; reason, errno; rw, port; type). */
enum match {
	MATCH_ALL,
	MATCH_A,        /* a == value */
	MATCH_A_OK,     /* a == value and b (errno) >= 0 */
	MATCH_B,        /* b == value */
	MATCH_B_ERROR,  /* b < 0 and b != -EINTR */
	MATCH_A_B,      /* a == value and b == value */
	MATCH_A_OTHER,  /* a == value and b in no MATCH_A_B counter of the event */
};

struct counter {
	enum kvm_trace_event event;
	char reason[48];
	char *filter; /* NULL: none */
	enum match match;
	uint32_t a, b;
};

struct thread_events {
	pid_t tid;
	int *fds; /* [ncounters] */
	bool seen;
};

struct kvm_trace {
	const struct io_root *root;
	pid_t pid;
	bool fixed_threads;
	bool inherit; /* one set of events on pid, inherited (kvm_trace_config.inherit) */
	unsigned ids[KVM_TRACE_NEVENTS];
	struct counter *counters;
	size_t ncounters, cap;
	struct thread_events *threads;
	size_t nthreads;
	uint64_t *gone;     /* [ncounters]: final counts of threads that exited */
	uint64_t *scratch;  /* [ncounters] */
	struct kvm_bpf *bpf; /* counted by eBPF (no perf events then): the reader's */
	pid_t *tids;         /* the config's threads, sorted, for bpf */
	size_t ntids;
	uint64_t *base;      /* [ncounters]: bpf's counts at open */
	struct kvm_exit_time *base_times; /* [ncounters]: bpf's times at open; NULL: nothing timed */
	pid_t *base_tids;    /* bpf's threads with counts at open, sorted */
	size_t nbase_tids;
	uint64_t *thread_base; /* [nbase_tids][ncounters]: their counts at open */
};

const char *kvm_trace_event_name(enum kvm_trace_event e)
{
	return e < KVM_TRACE_NEVENTS ? event_names[e] : "?";
}

/* Adds a counter; filter is a printf format (NULL: no filter), match the same for eBPF's keys. */
static int add_counter(struct kvm_trace *t, enum kvm_trace_event e, const char *reason, const char *filter,
		       enum match match, uint32_t a, uint32_t b)
{
	if (t->ncounters == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct counter *bigger = realloc(t->counters, cap * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		t->counters = bigger;
		t->cap = cap;
	}
	struct counter *c = &t->counters[t->ncounters];
	c->event = e;
	snprintf(c->reason, sizeof(c->reason), "%s", reason);
	c->filter = filter ? strdup(filter) : NULL;
	c->match = match;
	c->a = a;
	c->b = b;
	if (filter && !c->filter)
		return -ENOMEM;
	t->ncounters++;
	return 0;
}

/* One counter per entry of the format's which-th symbol table, filtered "<field> == value". */
static int add_symbol_counters(struct kvm_trace *t, enum kvm_trace_event e, const char *format, size_t len,
			       unsigned which, const char *field, const char *extra, const char *strip_prefix)
{
	struct trace_format f;
	if (parse_trace_format(format, len, &f) < 0)
		return -EPROTO;
	const struct trace_field *fl = trace_format_field(&f, field);
	if (!fl)
		return -EPROTO;
	struct trace_symbol *syms;
	size_t n;
	int r = parse_trace_symbols(format, len, which, fl->size, &syms, &n);
	if (r < 0)
		return r == -ENOMEM ? r : -EPROTO;
	size_t plen = strip_prefix ? strlen(strip_prefix) : 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		char filter[128];
		snprintf(filter, sizeof(filter), "%s%s == %llu", extra ? extra : "", field, (unsigned long long)syms[i].value);
		const char *name = syms[i].name;
		if (plen && !strncmp(name, strip_prefix, plen))
			name += plen;
		r = add_counter(t, e, name, filter, extra ? MATCH_A_OK : MATCH_A, (uint32_t)syms[i].value, 0);
	}
	free(syms);
	return r;
}

static int add_pio_counters(struct kvm_trace *t, const uint16_t *ports, size_t nports)
{
	for (int rw = 1; rw >= 0; rw--) {
		const char *dir = rw ? "out" : "in";
		size_t cap = 32 + nports * 20;
		char *other = malloc(cap);
		if (!other)
			return -ENOMEM;
		size_t len = (size_t)snprintf(other, cap, "rw == %d", rw);
		int r = 0;
		for (size_t i = 0; i < nports && r == 0; i++) {
			char reason[32], filter[64];
			snprintf(reason, sizeof(reason), "0x%x %s", ports[i], dir);
			snprintf(filter, sizeof(filter), "rw == %d && port == %u", rw, ports[i]);
			r = add_counter(t, KVM_TRACE_PIO, reason, filter, MATCH_A_B, (uint32_t)rw, ports[i]);
			len += (size_t)snprintf(other + len, cap - len, " && port != %u", ports[i]);
		}
		char reason[32];
		snprintf(reason, sizeof(reason), "other %s", dir);
		if (r == 0)
			r = add_counter(t, KVM_TRACE_PIO, reason, other, MATCH_A_OTHER, (uint32_t)rw, 0);
		free(other);
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_event(struct kvm_trace *t, const struct kvm_trace_config *c, const char *tracefs, enum kvm_trace_event e)
{
	char *format;
	size_t len;
	int r = io_read_alloc(t->root, IO_SYS, &format, &len, "%s/events/kvm/%s/format", tracefs, event_names[e]);
	if (r < 0)
		return r == -ENOENT ? -ENODEV : r;
	struct trace_format f;
	if (parse_trace_format(format, len, &f) < 0) {
		free(format);
		return -EPROTO;
	}
	t->ids[e] = f.id;
	switch (e) {
	case KVM_TRACE_EXIT:
		if (c->isa == KVM_TRACE_ISA_UNKNOWN)
			r = add_counter(t, e, "all", NULL, MATCH_ALL, 0, 0);
		else
			r = add_symbol_counters(t, e, format, len, c->isa == KVM_TRACE_VMX ? 0 : 1, "exit_reason", NULL, NULL);
		break;
	case KVM_TRACE_USERSPACE_EXIT:
		/* errno < 0: KVM_RUN failed (-EINTR: "restart"), the reason field is then stale. */
		r = add_symbol_counters(t, e, format, len, 0, "reason", "errno >= 0 && ", "KVM_EXIT_");
		if (r == 0)
			r = add_counter(t, e, "restart", "errno == -4", MATCH_B, 0, (uint32_t)-EINTR);
		if (r == 0)
			r = add_counter(t, e, "error", "errno < 0 && errno != -4", MATCH_B_ERROR, 0, 0);
		break;
	case KVM_TRACE_PIO:
		r = trace_format_field(&f, "port") && trace_format_field(&f, "rw")
			    ? add_pio_counters(t, c->ports ? c->ports : kvm_trace_default_ports,
					       c->ports ? c->nports : kvm_trace_ndefault_ports)
			    : -EPROTO;
		break;
	case KVM_TRACE_MMIO:
		r = add_symbol_counters(t, e, format, len, 0, "type", NULL, NULL);
		break;
	case KVM_TRACE_NEVENTS: break;
	}
	free(format);
	return r;
}

static void close_thread(struct kvm_trace *t, struct thread_events *th)
{
	for (size_t i = 0; th->fds && i < t->ncounters; i++)
		io_close(th->fds[i]);
	free(th->fds);
	th->fds = NULL;
}

/* Opens every counter on one thread, one group per tracepoint. */
static int open_thread(struct kvm_trace *t, pid_t tid, struct thread_events *ret)
{
	struct thread_events th = {.tid = tid, .seen = true, .fds = malloc(t->ncounters * sizeof(int))};
	if (!th.fds)
		return -ENOMEM;
	for (size_t i = 0; i < t->ncounters; i++)
		th.fds[i] = -1;
	int leader = -1;
	for (size_t i = 0; i < t->ncounters; i++) {
		const struct counter *c = &t->counters[i];
		if (i == 0 || c->event != t->counters[i - 1].event)
			leader = -1;
		int fd = t->inherit ? io_perf_tracepoint_inherit(t->ids[c->event], tid, leader)
				    : io_perf_tracepoint(t->ids[c->event], tid, leader);
		if (fd < 0) {
			close_thread(t, &th);
			return fd;
		}
		th.fds[i] = fd;
		if (leader < 0)
			leader = fd;
		int r = c->filter ? io_perf_set_filter(fd, c->filter) : 0;
		if (r < 0) {
			close_thread(t, &th);
			return r == -EINVAL ? -EINVAL : r;
		}
	}
	for (size_t i = 0; i < t->ncounters; i++) {
		if (i > 0 && t->counters[i].event == t->counters[i - 1].event)
			continue;
		int r = io_perf_enable_group(th.fds[i]);
		if (r < 0) {
			close_thread(t, &th);
			return r;
		}
	}
	*ret = th;
	return 0;
}

/* Reads one thread's counters into t->scratch. */
static int read_thread(struct kvm_trace *t, const struct thread_events *th)
{
	for (size_t i = 0; i < t->ncounters;) {
		size_t j = i;
		while (j < t->ncounters && t->counters[j].event == t->counters[i].event)
			j++;
		ssize_t n = io_perf_read_group(th->fds[i], t->scratch + i, j - i);
		if (n < 0)
			return (int)n;
		if ((size_t)n != j - i)
			return -EIO;
		i = j;
	}
	return 0;
}

/* The threads to trace now, sorted. */
static int list_threads(struct kvm_trace *t, const struct kvm_trace_config *c, pid_t **ret, size_t *ret_n)
{
	if (c && c->tids) {
		pid_t *tids = malloc((c->ntids ? c->ntids : 1) * sizeof(*tids));
		if (!tids)
			return -ENOMEM;
		memcpy(tids, c->tids, c->ntids * sizeof(*tids));
		qsort(tids, c->ntids, sizeof(*tids), io_pid_cmp);
		*ret = tids;
		*ret_n = c->ntids;
		return 0;
	}
	char **names;
	size_t n;
	int r = io_list_dir(t->root, IO_PROC, &names, &n, "%d/task", (int)t->pid);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	pid_t *tids = malloc((n ? n : 1) * sizeof(*tids));
	if (!tids) {
		io_free_names(names, n);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t v;
		if (parse_i64(names[i], &v) == 0 && v > 0)
			tids[k++] = (pid_t)v;
	}
	io_free_names(names, n);
	qsort(tids, k, sizeof(*tids), io_pid_cmp);
	*ret = tids;
	*ret_n = k;
	return 0;
}

/* Opens events on threads that appeared, keeps the final counts of threads that went away. */
static int update_threads(struct kvm_trace *t, const pid_t *tids, size_t n)
{
	for (size_t i = 0; i < t->nthreads; i++)
		t->threads[i].seen = io_pid_in(tids, n, t->threads[i].tid);
	size_t k = 0;
	for (size_t i = 0; i < t->nthreads; i++) {
		struct thread_events *th = &t->threads[i];
		if (!th->seen) {
			if (read_thread(t, th) == 0)
				for (size_t c = 0; c < t->ncounters; c++)
					t->gone[c] += t->scratch[c];
			close_thread(t, th);
			continue;
		}
		t->threads[k++] = *th;
	}
	t->nthreads = k;
	struct thread_events *bigger = realloc(t->threads, (t->nthreads + n + 1) * sizeof(*bigger));
	if (!bigger)
		return -ENOMEM;
	t->threads = bigger;
	size_t before = t->nthreads;
	for (size_t i = 0; i < n; i++) {
		bool known = false;
		for (size_t j = 0; j < before && !known; j++)
			known = t->threads[j].tid == tids[i];
		if (known)
			continue;
		int r = open_thread(t, tids[i], &t->threads[t->nthreads]);
		if (r == -ESRCH)
			continue; /* exited meanwhile */
		if (r < 0)
			return r;
		t->nthreads++;
	}
	return 0;
}

/* Which counter takes an eBPF key (kvm_bpf_classify_fn): as the counters' filters would. */
static long classify(const void *ctx, unsigned event, uint32_t a, uint32_t b)
{
	const struct kvm_trace *t = ctx;
	long other = -1;
	for (size_t i = 0; i < t->ncounters; i++) {
		const struct counter *c = &t->counters[i];
		if ((unsigned)c->event != event)
			continue;
		bool hit = false;
		switch (c->match) {
		case MATCH_ALL: hit = true; break;
		case MATCH_A: hit = a == c->a; break;
		case MATCH_A_OK: hit = a == c->a && (int32_t)b >= 0; break;
		case MATCH_B: hit = b == c->b; break;
		case MATCH_B_ERROR: hit = (int32_t)b < 0 && b != (uint32_t)-EINTR; break;
		case MATCH_A_B: hit = a == c->a && b == c->b; break;
		case MATCH_A_OTHER:
			if (a == c->a)
				other = (long)i;
			break;
		}
		if (hit)
			return (long)i;
	}
	return other;
}

static int open_perf(struct kvm_trace *t, const struct kvm_trace_config *c)
{
	pid_t *tids = NULL;
	size_t n = 0;
	/* a followed command: its own thread, the events inherited by what it starts */
	int r = list_threads(t, c->inherit ? &(struct kvm_trace_config){.tids = &c->pid, .ntids = 1} : c, &tids, &n);
	if (r == 0)
		r = update_threads(t, tids, n);
	free(tids);
	return r == 0 && t->nthreads == 0 ? -ESRCH : r;
}

/* Counted by the reader's eBPF counter: the counts as of its last refresh are the start. */
static int open_bpf(struct kvm_trace *t, const struct kvm_trace_config *c)
{
	if (!io_exists(t->root, IO_PROC, "%d", (int)t->pid))
		return -ESRCH;
	int r = c->tids ? list_threads(t, c, &t->tids, &t->ntids) : 0;
	if (r < 0)
		return r;
	if (!(t->base = calloc(t->ncounters, sizeof(*t->base))))
		return -ENOMEM;
	t->bpf = c->bpf;
	kvm_bpf_tally(t->bpf, t->pid, t->tids, t->ntids, classify, t, t->base, t->ncounters);
	if ((r = kvm_bpf_threads(t->bpf, t->pid, &t->base_tids, &t->nbase_tids)) < 0)
		return r;
	if (!(t->thread_base = calloc((t->nbase_tids ? t->nbase_tids : 1) * t->ncounters, sizeof(*t->thread_base))))
		return -ENOMEM;
	for (size_t i = 0; i < t->nbase_tids; i++)
		kvm_bpf_tally(t->bpf, t->pid, &t->base_tids[i], 1, classify, t, t->thread_base + i * t->ncounters, t->ncounters);
	if (!kvm_bpf_timed(t->bpf, KVM_BPF_EXIT) && !kvm_bpf_timed(t->bpf, KVM_BPF_USERSPACE_EXIT))
		return 0;
	if (!(t->base_times = calloc(t->ncounters, sizeof(*t->base_times))))
		return -ENOMEM;
	kvm_bpf_tally_times(t->bpf, t->pid, t->tids, t->ntids, classify, t, t->base_times, t->ncounters);
	return 0;
}

int kvm_trace_threads(const struct kvm_trace *t, pid_t **ret, size_t *ret_n)
{
	return t->bpf ? kvm_bpf_threads(t->bpf, t->pid, ret, ret_n) : -ENODATA;
}

int kvm_trace_sample_thread(struct kvm_trace *t, pid_t tid, maybe_i64 *values)
{
	if (!t->bpf)
		return -ENODATA;
	memset(t->scratch, 0, t->ncounters * sizeof(*t->scratch));
	kvm_bpf_tally(t->bpf, t->pid, &tid, 1, classify, t, t->scratch, t->ncounters);
	const pid_t *at = bsearch(&tid, t->base_tids, t->nbase_tids, sizeof(tid), io_pid_cmp);
	const uint64_t *base = at ? t->thread_base + (size_t)(at - t->base_tids) * t->ncounters : NULL;
	for (size_t c = 0; c < t->ncounters; c++) {
		uint64_t b = base ? base[c] : 0;
		values[c] = MAYBE(t->scratch[c] > b ? (int64_t)(t->scratch[c] - b) : 0);
	}
	return 0;
}

int kvm_trace_times(const struct kvm_trace *t, struct kvm_exit_time *times)
{
	if (!t->base_times)
		return -ENODATA;
	memset(times, 0, t->ncounters * sizeof(*times));
	kvm_bpf_tally_times(t->bpf, t->pid, t->tids, t->ntids, classify, t, times, t->ncounters);
	for (size_t c = 0; c < t->ncounters; c++)
		kvm_exit_time_sub(&times[c], &t->base_times[c], &times[c]); /* false: the map lost them */
	return 0;
}

bool kvm_trace_timed(const struct kvm_trace *t, enum kvm_trace_event e)
{
	return t->base_times && kvm_bpf_timed(t->bpf, e);
}

static int sample_bpf(struct kvm_trace *t, maybe_i64 *values)
{
	memset(t->scratch, 0, t->ncounters * sizeof(*t->scratch));
	kvm_bpf_tally(t->bpf, t->pid, t->tids, t->ntids, classify, t, t->scratch, t->ncounters);
	for (size_t c = 0; c < t->ncounters; c++)
		values[c] = MAYBE(t->scratch[c] > t->base[c] ? (int64_t)(t->scratch[c] - t->base[c]) : 0);
	return io_exists(t->root, IO_PROC, "%d", (int)t->pid) ? 0 : -ESRCH;
}

bool kvm_trace_uses_bpf(const struct kvm_trace *t)
{
	return t->bpf != NULL;
}

int kvm_trace_open(const struct io_root *root, const struct kvm_trace_config *c, struct kvm_trace **ret)
{
	char tracefs[64];
	int r = io_tracefs_dir(root, tracefs, sizeof(tracefs));
	if (r < 0)
		return r;
	if (!io_exists(root, IO_SYS, "%s/events/kvm", tracefs))
		return -ENODEV;
	struct kvm_trace *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->root = root;
	t->pid = c->pid;
	t->inherit = c->inherit;
	t->fixed_threads = c->tids != NULL || c->inherit;
	for (int e = 0; e < KVM_TRACE_NEVENTS && r == 0; e++)
		if (!c->events || (c->events & (1u << e)))
			r = add_event(t, c, tracefs, (enum kvm_trace_event)e);
	if (r == 0 && t->ncounters == 0)
		r = -EINVAL;
	if (r == 0) {
		t->gone = calloc(t->ncounters, sizeof(*t->gone));
		t->scratch = calloc(t->ncounters, sizeof(*t->scratch));
		if (!t->gone || !t->scratch)
			r = -ENOMEM;
	}
	if (r == 0)
		r = c->bpf ? open_bpf(t, c) : open_perf(t, c);
	if (r < 0) {
		kvm_trace_close(t);
		return r;
	}
	*ret = t;
	return 0;
}

void kvm_trace_close(struct kvm_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nthreads; i++)
		close_thread(t, &t->threads[i]);
	free(t->threads);
	if (t->bpf)
		kvm_bpf_forget(t->bpf, t->pid);
	free(t->tids);
	free(t->base);
	free(t->base_times);
	free(t->base_tids);
	free(t->thread_base);
	for (size_t i = 0; i < t->ncounters; i++)
		free(t->counters[i].filter);
	free(t->counters);
	free(t->gone);
	free(t->scratch);
	free(t);
}

size_t kvm_trace_ncounters(const struct kvm_trace *t)
{
	return t->ncounters;
}

enum kvm_trace_event kvm_trace_counter_event(const struct kvm_trace *t, size_t i)
{
	return t->counters[i].event;
}

const char *kvm_trace_counter_reason(const struct kvm_trace *t, size_t i)
{
	return t->counters[i].reason;
}

const char *kvm_trace_counter_filter(const struct kvm_trace *t, size_t i)
{
	return t->counters[i].filter ? t->counters[i].filter : "";
}

size_t kvm_trace_nthreads(const struct kvm_trace *t)
{
	return t->nthreads;
}

int kvm_trace_sample(struct kvm_trace *t, maybe_i64 *values)
{
	if (t->bpf)
		return sample_bpf(t, values);
	int gone = 0;
	if (!t->fixed_threads) {
		pid_t *tids;
		size_t n;
		int r = list_threads(t, NULL, &tids, &n);
		if (r == -ESRCH) {
			gone = r;
			tids = NULL;
			n = 0;
		} else if (r < 0) {
			return r;
		}
		r = update_threads(t, tids, n);
		free(tids);
		if (r < 0)
			return r;
	}
	for (size_t c = 0; c < t->ncounters; c++)
		values[c] = MAYBE((int64_t)t->gone[c]);
	for (size_t i = 0; i < t->nthreads; i++) {
		if (read_thread(t, &t->threads[i]) < 0) {
			for (size_t c = 0; c < t->ncounters; c++)
				values[c] = UNKNOWN;
			return -EIO;
		}
		for (size_t c = 0; c < t->ncounters; c++)
			values[c].v += (int64_t)t->scratch[c];
	}
	return gone;
}

void kvm_trace_explain(const struct io_root *root, int err, char *buf, size_t cap)
{
	char paranoid[32] = "?";
	switch (-err) {
	case ENOENT:
		snprintf(buf, cap, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		return;
	case ENODEV:
		snprintf(buf, cap, "no KVM tracepoints in tracefs (the kvm module is not loaded)");
		return;
	case EACCES:
	case EPERM: {
		ssize_t n = io_read(root, IO_PROC, paranoid, sizeof(paranoid), "sys/kernel/perf_event_paranoid");
		if (n > 0 && paranoid[n - 1] == '\n')
			paranoid[n - 1] = '\0';
		snprintf(buf, cap, "perf events or tracefs not allowed (perf_event_paranoid is %s): run as root or with CAP_PERFMON",
			 n > 0 ? paranoid : "unreadable");
		return;
	}
	case ESRCH: snprintf(buf, cap, "no such process"); return;
	case EMFILE:
	case ENFILE:
		snprintf(buf, cap, "out of file descriptors (one per thread and reason): raise ulimit -n");
		return;
	case EINVAL: snprintf(buf, cap, "the kernel refused a tracepoint filter"); return;
	case EPROTO: snprintf(buf, cap, "unexpected tracepoint format (fields or reason tables missing)"); return;
	}
	snprintf(buf, cap, "%s", strerror(-err));
}
