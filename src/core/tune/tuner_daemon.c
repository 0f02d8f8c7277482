#include "core/tune/tuner_daemon.h"
#include "core/base/stop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "core/model/host.h"
#include "core/tune/ksm_guard.h"
#include "io/file.h"
#include "parse/parse.h"
#include "parse/smaps.h"

int tuner_instance_lock(const char *path) { return io_lock(path, 0); }

/* The shell's ksmtuned: its comm, or a script run by its interpreter ("/bin/bash
 * /usr/sbin/ksmtuned": the interpreter's first argument only). */
static bool is_ksmtuned(const char *comm, const char *cmdline, size_t len)
{
	if (!strcmp(comm, "ksmtuned\n"))
		return true;
	for (const char *arg = cmdline; arg < cmdline + len; arg += strlen(arg) + 1) {
		const char *base = strrchr(arg, '/');
		if (!strcmp(base ? base + 1 : arg, "ksmtuned"))
			return true;
		if (arg != cmdline)
			break;
	}
	return false;
}

/* "vmhost [options] ksm tune ...". */
static bool is_vmhost_tune(const char *cmdline, size_t len)
{
	const char *base = strrchr(cmdline, '/');
	if (!len || strcmp(base ? base + 1 : cmdline, "vmhost"))
		return false;
	const char *prev = "";
	for (const char *arg = cmdline; arg < cmdline + len; arg += strlen(arg) + 1) {
		if (!strcmp(prev, "ksm") && !strcmp(arg, "tune"))
			return true;
		prev = arg;
	}
	return false;
}

/* Whether pid runs as root (its real uid 0): a KSM tuner writes /sys/kernel/mm/ksm and must; a
 * process of another user that merely calls itself ksmtuned or `vmhost ksm tune` is none. */
static bool runs_as_root(const struct io_root *root, pid_t pid)
{
	char buf[4096];
	struct proc_status st;
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/status", pid);
	return n > 0 && parse_status(buf, (size_t)n, &st) >= 0 && st.uid.known && st.uid.v == 0;
}

int ksm_tuners_find(const struct io_root *root, pid_t *ret_ksmtuned, pid_t *ret_vmhost_tune)
{
	pid_t *pids;
	size_t n;
	int r = io_list_pids(root, &pids, &n);
	if (r < 0)
		return r;
	pid_t tuned = 0, tune = 0;
	for (size_t i = 0; i < n && (!tuned || (ret_vmhost_tune && !tune)); i++) {
		char comm[64], buf[512];
		ssize_t c = io_read(root, IO_PROC, comm, sizeof(comm), "%d/comm", pids[i]);
		ssize_t l = io_read(root, IO_PROC, buf, sizeof(buf), "%d/cmdline", pids[i]);
		if (c < 0)
			comm[0] = '\0';
		if (l < 0)
			l = 0;
		buf[l] = '\0';
		if (!tuned && is_ksmtuned(comm, buf, (size_t)l) && runs_as_root(root, pids[i]))
			tuned = pids[i];
		else if (ret_vmhost_tune && !tune && pids[i] != getpid() && is_vmhost_tune(buf, (size_t)l) &&
			 runs_as_root(root, pids[i]))
			tune = pids[i];
	}
	free(pids);
	*ret_ksmtuned = tuned;
	if (ret_vmhost_tune)
		*ret_vmhost_tune = tune;
	return 0;
}

pid_t ksmtuned_find(const struct io_root *root)
{
	pid_t tuned = 0;
	return ksm_tuners_find(root, &tuned, NULL) < 0 ? 0 : tuned;
}

/* The law's input from two consecutive samples (the /proc fields unknown: tuner_watch_sample). */
static void tuner_input_from(const struct ksm_sample *prev, const struct ksm_sample *now, const struct ksm_rates *rates,
			     struct tuner_input *ret)
{
	const struct ksm_sysfs *k = &now->k;
	/* The settings as read at the end of the interval: the previous decision was written right
	 * after the previous sample, so that sample still shows the one before. The /proc fields stay
	 * unknown (zero) for tuner_watch_sample. */
	*ret = (struct tuner_input){
		.interval_seconds = now->t - prev->t,
		.ksm = *k,
		.interval_pages_scanned = prev->k.pages_scanned.known && k->pages_scanned.known
						  ? MAYBE(k->pages_scanned.v - prev->k.pages_scanned.v)
						  : UNKNOWN,
		.ksmd_cpu_percent = rates->ksmd_cpu_percent,
		.mem_total_bytes = now->mem_total,
		.mem_available_bytes = now->mem_available,
	};
}

/* ---- the /proc watch ---- */

struct exact_read { /* the last smaps of one process */
	pid_t pid;
	char name[16];
	int64_t anon_pages, mergeable_pages;
};

/* A process as the last walk left it: whether it had mergeable memory, and since when it is known
 * (a young process may mark its memory mergeable a little after it started). */
struct seen_pid {
	pid_t pid;
	bool mergeable;
	double first_seen_t;
};

struct tuner_watch {
	struct io_root root;
	int64_t page_size;
	struct tuner_news news;
	struct tuner_proc *procs; /* the latest walk */
	size_t nprocs;
	struct seen_pid *seen; /* every pid of the latest walk, sorted */
	size_t nseen;
	bool denied, unsupported, have_walk, walk_again;
	double last_walk_t, last_full_walk_t;
	int64_t anon_low_pages; /* lowest AnonPages since the last walk */
	struct exact_read *exact;
	size_t nexact;
	struct tuner_watch_cost cost;
};

int tuner_watch_new(const struct io_root *root, int64_t page_size, struct tuner_watch **ret)
{
	struct tuner_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->root = *root;
	w->page_size = page_size > 0 ? page_size : host_page_size();
	tuner_news_init(&w->news);
	*ret = w;
	return 0;
}

void tuner_watch_free(struct tuner_watch *w)
{
	if (!w)
		return;
	tuner_news_free(&w->news);
	free(w->seen);
	free(w->procs);
	free(w->exact);
	free(w);
}

void tuner_watch_cost(const struct tuner_watch *w, struct tuner_watch_cost *ret) { *ret = w->cost; }

/* Resident pages in the process's mergeable areas: RssAnon with PR_SET_MEMORY_MERGE (all of its
 * anonymous memory is mergeable), else its smaps figure plus what RssAnon moved since that read
 * (an upper bound within wake_pages / 2), re-read when RssAnon moved more. */
static int64_t mergeable_pages(struct tuner_watch *w, const struct tuner_config *c, pid_t pid, const char *name,
			       int64_t anon, bool merge_any, struct exact_read *prev_exact, size_t nprev,
			       struct exact_read *keep)
{
	if (merge_any)
		return anon;
	for (size_t i = 0; i < nprev; i++) {
		struct exact_read *x = &prev_exact[i];
		if (x->pid != pid || strcmp(x->name, name) || llabs(anon - x->anon_pages) * 2 >= c->wake_pages)
			continue;
		*keep = *x;
		int64_t m = x->mergeable_pages + anon - x->anon_pages;
		return m < 0 ? 0 : m > anon ? anon : m;
	}
	char *buf;
	size_t len;
	struct smaps_mergeable sm;
	w->cost.smaps_reads++;
	if (io_read_alloc(&w->root, IO_PROC, &buf, &len, "%d/smaps", (int)pid) < 0)
		return anon; /* not readable: all of RssAnon, the upper bound */
	int r = parse_smaps_mergeable(buf, len, &sm);
	free(buf);
	if (r < 0)
		return anon;
	*keep = (struct exact_read){.pid = pid, .anon_pages = anon, .mergeable_pages = sm.mergeable_anon_bytes / w->page_size};
	snprintf(keep->name, sizeof(keep->name), "%s", name);
	return keep->mergeable_pages;
}

static int cmp_seen(const void *a, const void *b)
{
	pid_t x = ((const struct seen_pid *)a)->pid, y = ((const struct seen_pid *)b)->pid;
	return (x > y) - (x < y);
}

/* Reads ksm_stat, and status (and maybe smaps) of those with mergeable memory: of every process
 * on a full walk; else only of processes known to have mergeable memory, new ones, and young
 * ones (TUNER_YOUNG_SECONDS), so that an old process without mergeable memory costs nothing. */
static int walk(struct tuner_watch *w, const struct tuner_config *c, double now_t, bool full)
{
	pid_t *pids;
	size_t n;
	int r = io_list_pids(&w->root, &pids, &n);
	if (r < 0)
		return r;
	struct tuner_proc *procs = calloc(n ? n : 1, sizeof(*procs));
	struct exact_read *exact = calloc(n ? n : 1, sizeof(*exact));
	struct seen_pid *seen = calloc(n ? n : 1, sizeof(*seen));
	if (!procs || !exact || !seen) {
		free(pids);
		free(procs);
		free(exact);
		free(seen);
		return -ENOMEM;
	}
	size_t np = 0, nx = 0, stat_ok = 0;
	bool denied = false, no_mergeable_line = false;
	for (size_t i = 0; i < n; i++) {
		struct seen_pid key = {.pid = pids[i]}, *old = w->seen ? bsearch(&key, w->seen, w->nseen, sizeof(key), cmp_seen) : NULL;
		/* What the first walk finds was there before the tuner: not young. */
		double first = old ? old->first_seen_t : w->have_walk ? now_t : now_t - TUNER_YOUNG_SECONDS;
		seen[i] = (struct seen_pid){.pid = pids[i], .first_seen_t = first};
		if (!full && old && !old->mergeable && now_t - old->first_seen_t >= TUNER_YOUNG_SECONDS)
			continue;
		char buf[4096];
		w->cost.ksm_stat_reads++;
		ssize_t l = io_read(&w->root, IO_PROC, buf, sizeof(buf), "%d/ksm_stat", (int)pids[i]);
		struct ksm_stat ks;
		if (l == -EACCES || l == -EPERM)
			denied = true;
		if (l <= 0 || parse_ksm_stat(buf, (size_t)l, &ks) < 0)
			continue;
		stat_ok++;
		if (!ks.mergeable.known) {
			no_mergeable_line = true;
			continue;
		}
		if (!ks.mergeable.v || !ks.rmap_items.known)
			continue;
		w->cost.status_reads++;
		l = io_read(&w->root, IO_PROC, buf, sizeof(buf), "%d/status", (int)pids[i]);
		struct proc_status st;
		if (l <= 0 || parse_status(buf, (size_t)l, &st) < 0 || !st.rss_anon.known)
			continue; /* exited in between */
		seen[i].mergeable = true;
		struct tuner_proc *p = &procs[np++];
		p->pid = pids[i];
		snprintf(p->name, sizeof(p->name), "%.15s", st.name);
		p->rmap_items = ks.rmap_items.v;
		struct exact_read keep = {0};
		p->mergeable_pages = mergeable_pages(w, c, p->pid, p->name, st.rss_anon.v / w->page_size,
						     ks.merge_any.known && ks.merge_any.v, w->exact, w->nexact, &keep);
		if (keep.pid)
			exact[nx++] = keep;
	}
	free(pids);
	free(w->procs);
	free(w->exact);
	free(w->seen);
	w->procs = procs;
	w->nprocs = np;
	w->exact = exact;
	w->nexact = nx;
	w->seen = seen;
	w->nseen = n;
	if (full) {
		w->denied = denied;
		/* A kernel whose ksm_stat lacks ksm_mergeable (or has no ksm_stat) cannot tell. */
		w->unsupported = !stat_ok || no_mergeable_line;
		w->last_full_walk_t = now_t;
	} else {
		w->denied = w->denied || denied;
	}
	w->cost.walks++;
	return 0;
}

int tuner_watch_sample(struct tuner_watch *w, const struct tuner_config *c, const struct ksm_sample *now,
		       struct tuner_input *in)
{
	double cpu0 = clock_thread_cpu_seconds();
	w->cost.samples++;
	int64_t anon = now->mem_anon.known ? now->mem_anon.v / w->page_size : -1;
	bool rose = anon < 0 || (anon - w->anon_low_pages) * 2 >= c->wake_pages;
	int r = 0;
	bool full = !w->have_walk || now->t - w->last_full_walk_t >= TUNER_WALK_SECONDS;
	if (full || rose || w->walk_again) {
		r = walk(w, c, now->t, full);
		if (r == 0) {
			/* A process still filling its memory may only mark it mergeable at the end: look
			 * once more after AnonPages rose. */
			w->walk_again = w->have_walk && rose;
			w->have_walk = true;
			w->last_walk_t = now->t;
			w->anon_low_pages = anon;
		}
	}
	if (anon >= 0 && anon < w->anon_low_pages)
		w->anon_low_pages = anon;
	if (r == 0 && w->have_walk && !w->unsupported)
		r = tuner_news_update(&w->news, w->procs, w->nprocs, w->denied, in);
	w->cost.cpu_seconds += clock_thread_cpu_seconds() - cpu0;
	return r == -ENOMEM ? r : 0;
}

void tuner_watch_decided(struct tuner_watch *w, const struct tuner_decision *d)
{
	if (w && d->mode == TUNER_FAST)
		tuner_news_rebase(&w->news);
}

int tuner_decide(const struct tuner_config *c, struct tuner_state *s, struct tuner_watch *w,
		 const struct ksm_sample *prev, const struct ksm_sample *now, const struct ksm_rates *rates,
		 struct tuner_decision *ret, struct tuner_input *ret_in)
{
	struct tuner_input in;
	tuner_input_from(prev, now, rates, &in);
	int r = w ? tuner_watch_sample(w, c, now, &in) : 0;
	tuner_step(c, s, &in, ret);
	tuner_watch_decided(w, ret);
	if (ret_in)
		*ret_in = in;
	return r;
}

int tuner_apply(const struct tuner_config *c, const struct tuner_decision *d, const struct ksm_sysfs *now,
		const volatile sig_atomic_t *stop)
{
	sigset_t prev;
	stop_block(&prev);
	int r = 0;
	if (stop && *stop) {
		stop_unblock(&prev);
		return 0;
	}
	if (now->advisor_mode[0] && strcmp(now->advisor_mode, "none"))
		r = ksm_guard_set("advisor_mode", "none");
	if (!r && c->smart_scan && now->smart_scan.known && now->smart_scan.v != 1)
		r = ksm_guard_set_int("smart_scan", 1);
	if (!r && (!now->pages_to_scan.known || now->pages_to_scan.v != d->pages_to_scan))
		r = ksm_guard_set_int("pages_to_scan", d->pages_to_scan);
	if (!r && (!now->sleep_millisecs.known || now->sleep_millisecs.v != d->sleep_millisecs))
		r = ksm_guard_set_int("sleep_millisecs", d->sleep_millisecs);
	if (!r && (!now->run.known || now->run.v != d->run))
		r = ksm_guard_set_int("run", d->run);
	stop_unblock(&prev);
	return r;
}
