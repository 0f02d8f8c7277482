/* vmhost's metric families: one snapshot written with the Prometheus writer (docs/serve.md
 * lists every family). */
#ifndef VMHOST_OUT_PROM_METRICS_H
#define VMHOST_OUT_PROM_METRICS_H

#include <stdint.h>

#include "core/snapshot.h"
#include "out/prom.h"

struct prom_meta {
	uint64_t snapshots_total; /* snapshots gathered since the server started, this one included */
	const char *version;
};

/* Writes every family of the snapshot into p (p is not finished). */
void prom_write_snapshot(struct prom *p, const struct snapshot *s, const struct prom_meta *meta);

#endif
