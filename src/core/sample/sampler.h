/* One sampler for `record` and `serve`: each sample is a snapshot of the host (core/snapshot),
 * exact PSS for a few VMs within a time budget (core/calibrate), KVM's debugfs counters
 * (core/kvm) with the host-wide KVM totals, and, when the caller records it, one write into the
 * history through a sink (store/store.h's store_sink), with the full-disk handling of
 * docs/record.md: a full disk drops samples until there is room again, warning once per episode.
 *
 *   sampler_new(&cfg, &s);
 *   for (;;) { sampler_take(s, &x); sampler_record(s, x); sample_unref(x); sleep }
 *   sampler_free(s);
 *
 * One thread drives a sampler (record's main thread, serve's core/sampler_feed thread); samples
 * are immutable and may be read from any thread. Nothing here prints: warnings go to cfg.warn. */
#ifndef VMHOST_CORE_SAMPLER_H
#define VMHOST_CORE_SAMPLER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/kvm/kvm.h"
#include "core/sample/snapshot.h"

/* The one set of sampling constants (record's and serve's defaults). */
#define SAMPLER_INTERVAL_SECONDS 10.0       /* record --interval, serve --db-interval */
#define SAMPLER_KVM_INTERVAL_SECONDS 60.0   /* record --kvm-interval; serve --db's KVM rows */
#define SAMPLER_MIN_INTERVAL_SECONDS 1.0    /* serve --min-interval: scrapes inside it share a sample */
#define SAMPLER_CALIBRATION_BUDGET_SECONDS 0.005 /* exact PSS reads per sample (docs/accounting.md) */
#define SAMPLER_QMP_TIMEOUT_MS 300          /* a VM's QMP visit for its disks, at most */

/* One sample; immutable once taken, shared by reference. */
struct sample {
	struct snapshot snap;
	bool kvm_ok;               /* KVM's counters were read with the snapshot */
	struct kvm_sample kvm;     /* valid when kvm_ok */
	/* [nkvm_host]: per counter, what happened host-wide since the sampler started (events; ns for
	 * times), summed from the per-VM changes so that a VM exiting is not a counter reset. */
	maybe_i64 *kvm_host;
	size_t nkvm_host;
	uint64_t seq;              /* this sampler's samples so far, this one included */
	atomic_int refs;
};

struct sample *sample_ref(struct sample *x);
void sample_unref(struct sample *x); /* NULL is fine */

/* The KVM rows of a recorded sample: each VM's counters, and the host-wide running totals. */
struct kvm_rows {
	const struct kvm_reader *kvm;
	const struct kvm_sample *ks;
	const maybe_i64 *host; /* [ks->ncounters] sample.kvm_host; NULL: the kernel's global files */
};

/* Where recorded samples go. write returns 0 or a negative errno (-ENOSPC, -EAGAIN: this sample
 * is dropped, a later one may fit), 1 when written into a file the sink had to create anew (the
 * old one was deleted); rows is NULL when the sample carries no KVM rows. */
struct sample_sink {
	int (*write)(void *cls, const struct snapshot *snap, const struct kvm_rows *rows);
	const char *(*strerror)(int err); /* the sink's words for its errors, in warnings */
	const char *name;                 /* the database's path, in warnings */
	void *cls;
};

struct sampler_config {
	struct io_root root;
	const pid_t *extra;         /* --pid processes (copied) */
	size_t nextra;
	bool kvm;                   /* read KVM's counters (debugfs, or QMP where it is closed) */
	bool kvm_reasons;           /* and the VMs' exit reasons by tracepoints (core/kvm/kvm_trace.h) */
	bool kvm_reason_times;      /* and their time (KVM_READ_REASON_TIMES) */
	bool kvm_every_sample;      /* with every snapshot (serve exports them); else only when a
	                             * recorded sample is due for KVM rows */
	bool disks;                 /* each QEMU's disks with every sample: a short QMP visit per VM
	                             * (SAMPLER_QMP_TIMEOUT_MS at most), libvirt's block stats for the
	                             * domains whose monitor it holds (one call, one connection kept) */
	const char *libvirt_uri;    /* the libvirt to read libvirt's QEMUs through (KVM counters, disks); NULL qemu:///system */
	double interval_seconds;    /* between recorded samples */
	double kvm_interval_seconds; /* KVM rows go with a recorded sample at most this often */
	double kvm_pace_seconds;    /* a QEMU 7.1-8.0's vCPU statistics at most this often (kvm_reader_pace); 0 every read */
	const struct sample_sink *sink; /* copied; NULL: sampler_record writes nothing */
	void (*warn)(void *cls, const char *line); /* NULL: warnings are dropped */
	void *warn_cls;
};

struct sampler;

int sampler_new(const struct sampler_config *cfg, struct sampler **ret);
void sampler_free(struct sampler *s); /* after the last sample using its KVM reader is gone */

/* Whether KVM's counters are read (cfg.kvm): from debugfs (*ret_why KVM_AVAILABLE), or, with
 * debugfs missing or closed (*ret_why says how), QEMU VMs through QMP (core/kvm/kvm.h). */
bool sampler_kvm(const struct sampler *s, enum kvm_avail *ret_why);
double sampler_interval(const struct sampler *s);

/* Takes a sample (one reference for the caller). Returns 0 or a negative errno (the host could
 * not be read). A failed KVM read leaves the sample without KVM and warns once per outage. */
int sampler_take(struct sampler *s, struct sample **ret);

/* Writes the sample through the sink (with KVM rows when they are due). Returns 0 (or the sink's
 * 1, with a warning), -ENOSPC or -EAGAIN (dropped: the first of an episode warns, the next
 * success says "recording again"; totals.stopped stays false), another
 * negative errno (writing stopped: every later call returns it), or -ENOTCONN without a sink. */
int sampler_record(struct sampler *s, const struct sample *x);

struct sampler_totals {
	unsigned long recorded, dropped; /* dropped: lost to a full disk */
	int error;    /* the error that stopped writing, else the last disk-full one; 0 none */
	bool stopped; /* writing stopped after an error other than a full disk */
};
struct sampler_totals sampler_totals(const struct sampler *s);

#endif
