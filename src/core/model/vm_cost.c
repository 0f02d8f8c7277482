#include "core/model/vm_cost.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/rate.h"
#include "parse/elements.h"

const char *const pressure_kind_names[PRESSURE_NKINDS] = {"memory", "cpu", "io"};

void vm_cpu_free(struct vm_cpu *c)
{
	free(c->vcpus);
	free(c->named);
	c->vcpus = NULL;
	c->named = NULL;
	c->nvcpus = c->nnamed = 0;
}

static int cmp_vcpu(const void *a, const void *b)
{
	const struct vcpu *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

static bool named_before(const struct vm_cpu *before, pid_t tid)
{
	for (size_t i = 0; before && i < before->nnamed; i++)
		if (before->named[i] == tid)
			return true;
	return false;
}

/* Thread name into comm (newline cut); false when it cannot be read (the thread exited). */
static bool thread_name(const struct io_root *root, pid_t pid, pid_t tid, char *comm, size_t cap)
{
	if (io_read(root, IO_PROC, comm, cap, "%d/task/%d/comm", pid, tid) <= 0)
		return false;
	comm[strcspn(comm, "\n")] = '\0';
	return true;
}

/* Whether thread tid still names itself vCPU index: a vCPU remembered by its id may have exited
 * and its id gone to another thread of the process (another process's is not under its task/). */
static bool still_vcpu(const struct io_root *root, pid_t pid, pid_t tid, int index)
{
	char comm[64];
	int now;
	return thread_name(root, pid, tid, comm, sizeof(comm)) && parse_vcpu_thread_name(comm, &now) && now == index;
}

/* A vCPU thread's CPU and delay (and with sched_wait its wait_sum); false when the thread is gone. */
static bool vcpu_times(const struct io_root *root, pid_t pid, struct vcpu *c, bool sched_wait)
{
	char buf[4096];
	struct schedstat ss;
	ssize_t l = io_read(root, IO_PROC, buf, sizeof(buf), "%d/task/%d/schedstat", pid, c->tid);
	if (l > 0 && parse_schedstat(buf, (size_t)l, &ss) == 0) {
		c->cpu_seconds = (double)ss.run_ns / 1e9;
		c->delay_seconds = (double)ss.delay_ns / 1e9;
	}
	uint64_t wait_ns;
	ssize_t w = sched_wait && l > 0 ? io_read(root, IO_PROC, buf, sizeof(buf), "%d/task/%d/sched", pid, c->tid) : 0;
	if (w > 0 && parse_sched_wait_sum(buf, (size_t)w, &wait_ns) == 0)
		c->sched_wait_seconds = (double)wait_ns / 1e9;
	return !(l == -ENOENT || l == -ESRCH);
}

static void vcpus_done(struct vm_cpu *ret, struct vcpu *v, size_t nv, pid_t *named, size_t nnamed, long threads)
{
	if (nv > 1)
		qsort(v, nv, sizeof(*v), cmp_vcpu);
	double wait = nv ? 0 : NAN;
	for (size_t i = 0; i < nv; i++)
		wait += v[i].delay_seconds; /* NaN as soon as one is unknown */
	vm_cpu_free(ret);
	ret->vcpus = v;
	ret->nvcpus = nv;
	ret->named = named;
	ret->nnamed = nnamed;
	ret->threads = threads;
	ret->vcpus_known = true;
	ret->vcpu_delay_seconds = wait;
}

/* Every vCPU the VMM can have was found before: no thread can be a vCPU but those, so their
 * schedstat is all there is to read, without the thread list. -EAGAIN when one of them is gone
 * (the whole list is read then), -ENOMEM. */
static int vcpus_again(const struct io_root *root, pid_t pid, const struct vm_cpu *before, const struct vcpus_known *k,
		       struct vm_cpu *ret)
{
	bool same_threads = k->threads > 0 && before->threads == k->threads;
	struct vcpu *v = malloc(before->nvcpus * sizeof(*v));
	pid_t *named = malloc((before->nnamed ? before->nnamed : 1) * sizeof(*named));
	if (!v || !named) {
		free(v);
		free(named);
		return -ENOMEM;
	}
	for (size_t i = 0; i < before->nvcpus; i++) {
		v[i] = vcpu_unread(before->vcpus[i].index, before->vcpus[i].tid);
		if ((!same_threads && !still_vcpu(root, pid, v[i].tid, v[i].index)) ||
		    !vcpu_times(root, pid, &v[i], k->sched_wait)) {
			free(v);
			free(named);
			return -EAGAIN;
		}
	}
	if (before->nnamed)
		memcpy(named, before->named, before->nnamed * sizeof(*named));
	vcpus_done(ret, v, before->nvcpus, named, before->nnamed, k->threads);
	return 0;
}

int vcpus_read(const struct io_root *root, pid_t pid, const struct vcpus_known *known, struct vm_cpu *ret)
{
	const struct vm_cpu *before = known ? known->before : NULL;
	const char *main_name = known ? known->main_name : NULL;
	size_t max_vcpus = known ? known->max_vcpus : 0;
	if (before && max_vcpus && before->nvcpus == max_vcpus) {
		int r = vcpus_again(root, pid, before, known, ret);
		if (r != -EAGAIN)
			return r;
	}
	pid_t *tids;
	size_t n;
	int r = io_list_tasks(root, pid, &tids, &n);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	struct vcpu *v = NULL;
	size_t nv = 0;
	pid_t *named = malloc((n ? n : 1) * sizeof(*named));
	size_t nnamed = 0;
	char read_name[64];
	bool have_main = main_name && *main_name;
	if (!have_main) {
		have_main = thread_name(root, pid, pid, read_name, sizeof(read_name));
		main_name = read_name;
	}
	for (size_t i = 0; i < n && (!max_vcpus || nv < max_vcpus); i++) {
		char comm[64];
		int index;
		if (named && named_before(before, tids[i])) {
			named[nnamed++] = tids[i];
			continue;
		}
		/* Every other thread by its name now, vCPUs remembered by id included (see still_vcpu). */
		bool main_thread = tids[i] == pid;
		const char *name = main_thread ? main_name : comm;
		if (main_thread ? !have_main : !thread_name(root, pid, tids[i], comm, sizeof(comm)))
			continue; /* a thread that exits is no longer a vCPU */
		if (!parse_vcpu_thread_name(name, &index)) {
			if (named && !main_thread && have_main && strcmp(name, main_name))
				named[nnamed++] = tids[i];
			continue;
		}
		struct vcpu c = vcpu_unread(index, tids[i]);
		if (!vcpu_times(root, pid, &c, known && known->sched_wait))
			continue;
		if (!(nv & (nv - 1)) || nv == 0) { /* grow at 0, 1, 2, 4, 8, ... */
			struct vcpu *bigger = realloc(v, (nv ? 2 * nv : 1) * sizeof(*v));
			if (!bigger) {
				free(v);
				free(named);
				free(tids);
				return -ENOMEM;
			}
			v = bigger;
		}
		v[nv++] = c;
	}
	free(tids);
	vcpus_done(ret, v, nv, named, nnamed, (long)n);
	return 0;
}

void vm_cpu_rates(const struct vm_cpu *before, struct vm_cpu *after, double seconds)
{
	after->cpu_percent = counter_percent_seconds(before->cpu_seconds, after->cpu_seconds, seconds);
	double wait = after->nvcpus ? 0 : NAN;
	for (size_t i = 0; i < after->nvcpus; i++) {
		struct vcpu *a = &after->vcpus[i];
		const struct vcpu *b = NULL;
		for (size_t j = 0; j < before->nvcpus && !b; j++)
			if (before->vcpus[j].tid == a->tid)
				b = &before->vcpus[j];
		/* A vCPU thread that appeared inside the interval has no rate of its own. */
		a->cpu_percent = b ? counter_percent_seconds(b->cpu_seconds, a->cpu_seconds, seconds) : NAN;
		a->delay_percent = b ? counter_percent_seconds(b->delay_seconds, a->delay_seconds, seconds) : NAN;
		wait += a->delay_percent;
	}
	after->vcpu_delay_percent = wait;
}

struct vm_stalls vm_stalls_unknown(const char *why)
{
	struct vm_stalls s = {.all = stalls_unknown(), .stall_percent = NAN, .copy_stall_seconds = NAN,
			      .ksmd_cpu_seconds = NAN};
	snprintf(s.why, sizeof(s.why), "%s", why ? why : "");
	return s;
}

/* The vCPU of before with thread id tid, or NULL. */
static const struct vcpu *vcpu_by_tid(const struct vm_cpu *before, pid_t tid)
{
	for (size_t j = 0; before && j < before->nvcpus; j++)
		if (before->vcpus[j].tid == tid)
			return &before->vcpus[j];
	return NULL;
}

int vm_stalls_read(struct stall_reader *r, pid_t pid, const struct vm_stalls *before_stalls,
		   const struct vm_cpu *before_cpu, struct vm_cpu *cpu, struct vm_stalls *ret)
{
	if (!r || !r->open) {
		*ret = vm_stalls_unknown(r ? r->why : "not read");
		return 0;
	}
	*ret = vm_stalls_unknown(NULL);
	int e = stall_read(r, pid, true, &ret->all);
	if (e < 0) {
		*ret = vm_stalls_unknown(e == -ESRCH ? "the process is gone" : strerror(-e));
		return e == -ESRCH ? -ESRCH : 0;
	}
	double now = stalls_memory_seconds(&ret->all);
	/* Nothing stalled since the reading before: neither did any vCPU thread. */
	bool same = before_stalls && now == stalls_memory_seconds(&before_stalls->all);
	for (size_t i = 0; i < cpu->nvcpus; i++) {
		struct vcpu *v = &cpu->vcpus[i];
		const struct vcpu *was = same ? vcpu_by_tid(before_cpu, v->tid) : NULL;
		struct stalls t;
		if (was && isfinite(was->stall_seconds))
			v->stall_seconds = was->stall_seconds;
		else if (now == 0)
			v->stall_seconds = 0; /* none of the process's threads stalled */
		else if (now >= VM_STALLS_SPLIT_MIN_SECONDS && stall_read(r, v->tid, false, &t) == 0)
			v->stall_seconds = stalls_memory_seconds(&t);
	}
	return 0;
}

void vm_stalls_rates(const struct vm_stalls *before, struct vm_stalls *after, double seconds)
{
	double was = stalls_memory_seconds(&before->all), now = stalls_memory_seconds(&after->all);
	after->stall_percent = counter_percent_seconds(was, now, seconds);
	double copied = after->all.seconds[STALL_WPCOPY] - before->all.seconds[STALL_WPCOPY];
	after->copy_stall_seconds = copied >= 0 && seconds > 0 ? copied : NAN; /* NaN: unknown, or a reset */
}

/* One cgroup file of the scope into buf; the v2 tree is the unified mount or, on hybrid hosts,
 * its "unified" directory. */
static ssize_t cg_read(const struct io_root *root, const char *scope, int version, const char *file, char *buf,
		       size_t cap)
{
	if (version == 1)
		return io_read(root, IO_SYS, buf, cap, "fs/cgroup/memory%s/%s", scope, file);
	ssize_t n = io_read(root, IO_SYS, buf, cap, "fs/cgroup%s/%s", scope, file);
	if (n == -ENOENT)
		n = io_read(root, IO_SYS, buf, cap, "fs/cgroup/unified%s/%s", scope, file);
	return n;
}

static maybe_i64 cg_number(const struct io_root *root, const char *scope, int version, const char *file)
{
	char buf[64];
	ssize_t n = cg_read(root, scope, version, file, buf, sizeof(buf));
	int64_t v;
	return n > 0 && parse_i64(buf, &v) == 0 && v >= 0 ? MAYBE(v) : UNKNOWN;
}

maybe_i64 cgroup_memory_without_cache(const struct io_root *root, int version, const char *scope)
{
	maybe_i64 charged = cg_number(root, scope, version, version == 1 ? "memory.usage_in_bytes" : "memory.current");
	char buf[8192];
	ssize_t n = charged.known ? cg_read(root, scope, version, "memory.stat", buf, sizeof(buf)) : -ENOENT;
	maybe_i64 cache = UNKNOWN;
	if (n > 0)
		parse_keyed_u64(buf, (size_t)n, version == 1 ? "cache" : "file", &cache);
	return charged.known && cache.known ? MAYBE(charged.v > cache.v ? charged.v - cache.v : 0) : UNKNOWN;
}

maybe_i64 cgroup_hugetlb_bytes(const struct io_root *root, const char *v2_scope)
{
	static const char *const files[] = {"hugetlb.2MB.current", "hugetlb.1GB.current"};
	maybe_i64 sum = UNKNOWN;
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		maybe_i64 v = cg_number(root, v2_scope, 2, files[i]);
		if (v.known)
			sum = MAYBE((sum.known ? sum.v : 0) + v.v);
	}
	return sum;
}

/* Where the scope's memory sits: THP (memory.stat) and the nodes (memory.numa_stat). */
static void cgroup_placement(const struct io_root *root, const char *scope, int version, int64_t page_size,
			     struct vm_cgroup *ret)
{
	char buf[8192];
	ssize_t n = cg_read(root, scope, version, "memory.stat", buf, sizeof(buf));
	if (n > 0)
		parse_keyed_u64(buf, (size_t)n, version == 2 ? "anon_thp" : "total_rss_huge", &ret->thp_bytes);
	if ((n = cg_read(root, scope, version, "memory.numa_stat", buf, sizeof(buf))) <= 0)
		return;
	int64_t nodes[NUMA_NODES_MAX] = {0};
	size_t nn = 0;
	int r = parse_numa_stat(buf, (size_t)n, version == 2 ? "anon" : "hierarchical_anon", nodes, &nn);
	if (r == -ENOENT && version == 1)
		r = parse_numa_stat(buf, (size_t)n, "anon", nodes, &nn);
	if (r < 0 || (version == 2 && parse_numa_stat(buf, (size_t)n, "shmem", nodes, &nn) == -EINVAL))
		return;
	for (size_t i = 0; i < nn; i++)
		ret->numa_bytes[i] = version == 1 ? nodes[i] * page_size : nodes[i];
	ret->numa_nodes = nn;
	ret->numa_known = true;
}

void vm_cgroup_read(const struct io_root *root, const char *v2_scope, const char *v1_memory_scope, int64_t page_size,
		    struct vm_cgroup *ret)
{
	*ret = (struct vm_cgroup){.memory_bytes = UNKNOWN, .limit_bytes = UNKNOWN, .swap_bytes = UNKNOWN,
				  .oom_kills = UNKNOWN, .hugetlb_bytes = UNKNOWN, .thp_bytes = UNKNOWN};
	char buf[512];
	ssize_t n;
	if (v2_scope) {
		ret->memory_bytes = cg_number(root, v2_scope, 2, "memory.current");
		if (ret->memory_bytes.known) {
			ret->version = 2;
			if ((n = cg_read(root, v2_scope, 2, "memory.max", buf, sizeof(buf))) > 0)
				parse_cgroup_limit(buf, (size_t)n, &ret->limit_bytes);
			ret->swap_bytes = cg_number(root, v2_scope, 2, "memory.swap.current");
			if ((n = cg_read(root, v2_scope, 2, "memory.events", buf, sizeof(buf))) > 0)
				parse_keyed_u64(buf, (size_t)n, "oom_kill", &ret->oom_kills);
		}
		for (int k = 0; k < PRESSURE_NKINDS; k++) {
			char file[32];
			snprintf(file, sizeof(file), "%s.pressure", pressure_kind_names[k]);
			if ((n = cg_read(root, v2_scope, 2, file, buf, sizeof(buf))) > 0)
				ret->have_pressure[k] = parse_pressure(buf, (size_t)n, &ret->pressure[k]) == 0;
		}
	}
	if (!ret->version && v1_memory_scope) {
		ret->memory_bytes = cg_number(root, v1_memory_scope, 1, "memory.usage_in_bytes");
		if (ret->memory_bytes.known)
			ret->version = 1;
		if ((n = cg_read(root, v1_memory_scope, 1, "memory.limit_in_bytes", buf, sizeof(buf))) > 0)
			parse_cgroup_limit(buf, (size_t)n, &ret->limit_bytes);
		if ((n = cg_read(root, v1_memory_scope, 1, "memory.oom_control", buf, sizeof(buf))) > 0)
			parse_keyed_u64(buf, (size_t)n, "oom_kill", &ret->oom_kills);
	}
	if (ret->version)
		cgroup_placement(root, ret->version == 2 ? v2_scope : v1_memory_scope, ret->version, page_size, ret);
}
