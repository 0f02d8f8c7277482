/* What a /metrics document holds of each VM (serve --detail: full, basic, or nothing when cut to
 * fit its cap) and the document's own families: how many VMs and series it holds, its size, and
 * whether it was cut. docs/serve.md lists the basic set. */
#ifndef VMHOST_OUT_PROM_DETAIL_H
#define VMHOST_OUT_PROM_DETAIL_H

#include "out/prom/prom_metrics.h"

/* Room for the basic set's entries (prom_detail_keep's buf). */
#define PROM_DETAIL_KEEP_MAX 24

/* Sets p->keep for meta->detail (NULL at full), the entries in buf (PROM_DETAIL_KEEP_MAX). */
void prom_detail_keep(struct prom *p, const struct prom_meta *meta, struct prom_keep *buf);

/* The document's own families, written last: vmhost_scrape_vms, vmhost_scrape_cut,
 * vmhost_scrape_series and vmhost_scrape_bytes (the last sample of the document). */
void prom_scrape_families(struct prom *p, const struct snapshot *s, const struct prom_meta *meta);

#endif
