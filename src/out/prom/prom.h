/* The Prometheus text format (0.0.4) and OpenMetrics 1.0 writer: HELP and TYPE per family,
 * escaped label values, C-locale numbers. Writes into a growing buffer, never to a socket. */
#ifndef VMHOST_OUT_PROM_H
#define VMHOST_OUT_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/maybe.h"

enum prom_format { PROM_TEXT, PROM_OPENMETRICS };

/* Counters are named with their "_total" sample name, info families with "_info": the writer
 * drops the suffix where OpenMetrics wants the bare family name. */
enum prom_type { PROM_GAUGE, PROM_COUNTER, PROM_INFO };

struct prom_label {
	const char *name;
	const char *value; /* NULL is written as "" (absent, for Prometheus) */
};

/* A per-VM family a document keeps when it keeps only some (serve --detail basic): the whole
 * family, or (label set) only its samples whose label `label` is `value`. */
struct prom_keep {
	const char *family;
	const char *label, *value;
};

struct prom {
	enum prom_format format;
	char *buf;
	size_t len, cap;
	size_t max_bytes; /* 0: unbounded; else writing more fails the document */
	int error;        /* -ENOMEM or -EFBIG (over max_bytes): prom_finish reports it */
	/* The current family: its HELP/TYPE go out before its first sample. */
	const char *name, *help;
	size_t name_len;
	enum prom_type type;
	bool family_open;
	/* Which per-VM samples (those whose first label is "vm") are written: keep NULL writes
	 * every one; else only those of the nkeep families listed (none when nkeep is 0). Host-wide
	 * samples are always written. */
	const struct prom_keep *keep;
	size_t nkeep;
	const struct prom_keep *family_keep; /* the current family's entry; NULL: not listed */
	size_t series;                       /* samples written so far */
};

void prom_init(struct prom *p, enum prom_format format);

/* Starts a family. Nothing is written until its first sample, so a family whose values are
 * all unknown does not appear at all. Returns false when p->keep leaves out every per-VM sample
 * of it (a caller may then skip its VMs; host-wide samples would still be written). */
bool prom_family(struct prom *p, const char *name, enum prom_type type, const char *help);

/* One sample of the current family. */
void prom_int(struct prom *p, const struct prom_label *labels, size_t nlabels, int64_t v);
void prom_double(struct prom *p, const struct prom_label *labels, size_t nlabels, double v);
/* Unknown values are left out: a missing series, never a made-up 0. */
void prom_maybe(struct prom *p, const struct prom_label *labels, size_t nlabels, maybe_i64 v);

/* The document's own size as the last sample of the current family: the bytes of the whole
 * document, this line and the end ("# EOF" for OpenMetrics) included. Write nothing after it but
 * prom_finish. */
void prom_size_sample(struct prom *p);

/* Ends the document ("# EOF" for OpenMetrics) and hands the buffer over (NUL-terminated; free()
 * it). Returns 0, or -ENOMEM / -EFBIG when writing failed (nothing is handed over). */
int prom_finish(struct prom *p, char **ret, size_t *ret_len);
void prom_free(struct prom *p);

const char *prom_content_type(enum prom_format format);

/* Formats a double as Prometheus reads it, in the C locale whatever the process's locale:
 * shortest round-trip form, "NaN", "+Inf", "-Inf". Returns the length. */
size_t prom_format_double(char *buf, size_t cap, double v);

#endif
