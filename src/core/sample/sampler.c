#include "core/sample/sampler.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kvm/kvm_delta.h"
#include "core/model/vm_visit.h"
#include "core/sample/calibrate.h"

struct sampler {
	struct sampler_config cfg;
	pid_t *extra;
	struct sample_sink sink;
	struct calib_cache *calib;
	pid_t ksmd_hint;
	struct sample *before; /* the last sample taken: its VMs spare reading thread names again */
	uint64_t seq;
	/* KVM: the reader, opened once; the last sample read with it (the "before" of the next);
	 * the host-wide sums; whether the reads are failing (warned once per outage). */
	struct kvm_reader *kvm;
	enum kvm_avail kvm_why;
	bool reasons_counter_said; /* the one line on which counter counts the exit reasons */
	bool pace_said;            /* the one line on a paced QEMU (kvm_reader_pace_why) */
	bool libvirt_said;         /* the one line while libvirt cannot be asked (kvm_reader_libvirt_why) */
	struct sample *kvm_before;
	maybe_i64 *kvm_host;
	size_t nkvm_host;
	bool kvm_failing;
	struct virt *libvirt; /* for the disks of libvirt's domains (cfg.disks), kept between samples */
	/* Recording: when KVM rows last went with a sample; in a disk-full episode. */
	double last_kvm_rows;
	bool full;
	struct sampler_totals totals;
};

struct sample *sample_ref(struct sample *x)
{
	atomic_fetch_add(&x->refs, 1);
	return x;
}

void sample_unref(struct sample *x)
{
	if (!x || atomic_fetch_sub(&x->refs, 1) != 1)
		return;
	snapshot_free(&x->snap);
	kvm_sample_free(&x->kvm);
	free(x->kvm_host);
	free(x);
}

static void sampler_warn(const struct sampler *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sampler_warn(const struct sampler *s, const char *fmt, ...)
{
	if (!s->cfg.warn)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->cfg.warn(s->cfg.warn_cls, line);
}

int sampler_new(const struct sampler_config *cfg, struct sampler **ret)
{
	struct sampler *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->cfg.root.cache = NULL; /* its own, below */
	s->extra = malloc((cfg->nextra ? cfg->nextra : 1) * sizeof(*s->extra));
	s->calib = calib_new();
	if (!s->extra || !s->calib) {
		sampler_free(s);
		return -ENOMEM;
	}
	if (cfg->nextra)
		memcpy(s->extra, cfg->extra, cfg->nextra * sizeof(*s->extra));
	s->cfg.extra = s->extra;
	if (cfg->sink)
		s->sink = *cfg->sink;
	s->cfg.sink = cfg->sink ? &s->sink : NULL;
	s->kvm_why = KVM_NO_KVM;
	unsigned kvm_flags = KVM_READ_QMP | (cfg->kvm_reasons ? KVM_READ_REASONS : 0) |
			     (cfg->kvm_reason_times ? KVM_READ_REASON_TIMES : 0);
	if (cfg->kvm && kvm_reader_open_with(&cfg->root, kvm_flags, &s->kvm, &s->kvm_why) < 0)
		s->kvm = NULL; /* remembered in kvm_why */
	if (s->kvm) {
		kvm_reader_pace(s->kvm, cfg->kvm_pace_seconds);
		kvm_reader_libvirt(s->kvm, cfg->libvirt_uri, 750);
	}
	/* every VM's same few files, read every sample by this one thread: kept open between samples
	 * (the KVM reader, opened above, keeps its own) */
	if (io_cache_new(&s->cfg.root.cache) < 0)
		s->cfg.root.cache = NULL;
	s->last_kvm_rows = -INFINITY;
	*ret = s;
	return 0;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	sample_unref(s->kvm_before);
	sample_unref(s->before);
	kvm_reader_close(s->kvm);
	virt_free(s->libvirt);
	io_cache_free(s->cfg.root.cache);
	calib_free(s->calib);
	free(s->kvm_host);
	free(s->extra);
	free(s);
}

bool sampler_kvm(const struct sampler *s, enum kvm_avail *ret_why)
{
	if (ret_why)
		*ret_why = s->kvm_why;
	return s->kvm != NULL;
}


double sampler_interval(const struct sampler *s) { return s->cfg.interval_seconds; }

struct sampler_totals sampler_totals(const struct sampler *s) { return s->totals; }

/* ---- host-wide KVM totals ---- */

/* Grows the sums to n counters, new ones from zero. */
static int kvm_host_grow(maybe_i64 **sums, size_t *nsums, size_t n)
{
	if (n <= *nsums)
		return 0;
	maybe_i64 *h = realloc(*sums, n * sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (size_t i = *nsums; i < n; i++)
		h[i] = MAYBE(0);
	*sums = h;
	*nsums = n;
	return 0;
}

/* Adds what happened between the reads a (NULL: none before) and b to the host-wide sums, by
 * core/kvm_delta's rule (its increase). */
static int kvm_host_accumulate(const struct kvm_reader *kvm, const struct kvm_sample *a, const struct kvm_sample *b,
			       maybe_i64 *sums)
{
	struct kvm_delta d;
	if (kvm_delta_build(kvm, a, b, NULL, &d) < 0)
		return -ENOMEM;
	for (size_t s = 0; s < d.nsel; s++)
		if (d.increase[s].known)
			sums[d.sel[s]].v += d.increase[s].v;
	kvm_delta_free(&d);
	return 0;
}

/* ---- taking a sample ---- */

static bool kvm_rows_due(const struct sampler *s, double t)
{
	return s->cfg.sink && t - s->last_kvm_rows >= s->cfg.kvm_interval_seconds - s->cfg.interval_seconds / 2;
}

/* Reads KVM's counters into x, adds them to the host-wide sums and gives x a copy of them. */
static int kvm_read(struct sampler *s, struct sample *x)
{
	struct kvm_sample b;
	int r = kvm_reader_sample_vms(s->kvm, &x->snap.vms, &b); /* no second /proc scan per sample */
	if (r < 0)
		return r;
	bool readable = kvm_reader_has_debugfs(s->kvm);
	for (size_t i = 0; i < b.nvms && !readable; i++)
		readable = b.vms[i].source != KVM_SOURCE_NONE;
	if (!readable) { /* no debugfs and no VM through QMP: nothing to export or record */
		kvm_sample_free(&b);
		return -ENODATA;
	}
	/* Everything that can fail before the sums change: a failed read adds nothing. */
	if (kvm_host_grow(&s->kvm_host, &s->nkvm_host, b.ncounters) < 0 ||
	    !(x->kvm_host = malloc((s->nkvm_host ? s->nkvm_host : 1) * sizeof(*x->kvm_host))) ||
	    kvm_host_accumulate(s->kvm, s->kvm_before ? &s->kvm_before->kvm : NULL, &b, s->kvm_host) < 0) {
		kvm_sample_free(&b);
		return -ENOMEM;
	}
	memcpy(x->kvm_host, s->kvm_host, s->nkvm_host * sizeof(*x->kvm_host));
	x->nkvm_host = s->nkvm_host;
	x->kvm = b;
	x->kvm_ok = true;
	return 0;
}

/* KVM's counters for the sample, when they are to be read; a failed read leaves it without. */
static void kvm_refresh(struct sampler *s, struct sample *x)
{
	if (!s->kvm || (!s->cfg.kvm_every_sample && !kvm_rows_due(s, x->snap.monotonic_seconds)))
		return;
	double start = clock_monotonic_seconds();
	int r = kvm_read(s, x);
	x->snap.gather_seconds += clock_monotonic_seconds() - start; /* part of the gathering */
	if (r < 0 && r != -ENODATA && !s->kvm_failing)
		sampler_warn(s, "KVM counters are no longer readable (%s); going on without them", strerror(-r));
	s->kvm_failing = r < 0;
	if (!s->reasons_counter_said && kvm_reader_reasons_counter(s->kvm)[0]) {
		s->reasons_counter_said = true;
		sampler_warn(s, "exit reasons counted by %s", kvm_reader_reasons_counter(s->kvm));
	}
	char libvirt_why[640];
	if (kvm_reader_libvirt_why(s->kvm, libvirt_why, sizeof(libvirt_why))[0] && !s->libvirt_said)
		sampler_warn(s, "%s", libvirt_why);
	s->libvirt_said = libvirt_why[0];
	if (!s->pace_said && kvm_reader_pace_why(s->kvm)[0]) {
		s->pace_said = true;
		sampler_warn(s, "%s (--kvm-interval); between reads its last figures are exported", kvm_reader_pace_why(s->kvm));
	}
	if (r == 0) {
		sample_unref(s->kvm_before);
		s->kvm_before = sample_ref(x);
	}
}

int sampler_take(struct sampler *s, struct sample **ret)
{
	struct sample *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	io_cache_sweep(s->cfg.root.cache, 0); /* the files of processes gone since the sample before */
	int r = snapshot_take(&s->cfg.root, s->extra, s->cfg.nextra, 0, s->ksmd_hint,
			      s->before ? &s->before->snap.vms : NULL, &x->snap);
	if (r < 0) {
		free(x);
		return r;
	}
	atomic_init(&x->refs, 1);
	calib_apply(s->calib, &s->cfg.root, &x->snap.host, &x->snap.vms, SAMPLER_CALIBRATION_BUDGET_SECONDS);
	if (s->cfg.disks) {
		struct vm_qmp_visit v = {.disks = true, .timeout_ms = SAMPLER_QMP_TIMEOUT_MS, .root = &s->cfg.root};
		vm_list_read_qmp(&x->snap.vms, &x->snap.host, &v, &s->libvirt, s->cfg.libvirt_uri);
	}
	s->ksmd_hint = x->snap.ksmd_pid;
	kvm_refresh(s, x);
	x->seq = ++s->seq;
	sample_unref(s->before);
	s->before = sample_ref(x);
	*ret = x;
	return 0;
}

/* ---- recording ---- */

static void note_write(struct sampler *s, int r)
{
	const char *name = s->sink.name;
	if (r == -ENOSPC || r == -EAGAIN) { /* a full disk, a lock held by another program: they pass */
		if (!s->full || r != s->totals.error)
			sampler_warn(s, "%s: %s: samples are dropped until %s; the recorded ones are kept", name,
				     s->sink.strerror(r), r == -ENOSPC ? "there is room again" : "it is released");
		s->full = true;
		s->totals.dropped++;
		s->totals.error = r;
	} else if (r < 0) {
		s->totals.stopped = true;
		s->totals.error = r;
	} else {
		if (r > 0) /* the sink recreated its file */
			sampler_warn(s, "%s: the database file was deleted; recording into a new one at that path (the"
				     " deleted file's samples are gone with it)", name);
		if (s->full)
			sampler_warn(s, "%s: recording again", name);
		s->full = false;
		s->totals.recorded++;
	}
}

int sampler_record(struct sampler *s, const struct sample *x)
{
	if (!s->cfg.sink)
		return -ENOTCONN;
	if (s->totals.stopped)
		return s->totals.error;
	struct kvm_rows rows = {s->kvm, &x->kvm, x->kvm_host};
	bool with_kvm = x->kvm_ok && kvm_rows_due(s, x->snap.monotonic_seconds);
	if (with_kvm)
		s->last_kvm_rows = x->snap.monotonic_seconds;
	int r = s->sink.write(s->sink.cls, &x->snap, with_kvm ? &rows : NULL);
	note_write(s, r);
	return r;
}
