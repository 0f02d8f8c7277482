/* How many more guests fit, for people and scripts: `vmhost capacity`'s document (human, CSV,
 * JSON from the same calls) and the one sentence the report's first screen shows ("room for 6
 * more 4 GiB guests now, 9 after reclaim"), from core/sample/capacity.h's figures. */
#ifndef VMHOST_OUT_CAPACITY_VIEW_H
#define VMHOST_OUT_CAPACITY_VIEW_H

#include <stddef.h>

#include "core/sample/capacity.h"
#include "out/doc.h"

/* The sentence into buf: "room for N more SIZE guests now, M after reclaim, K with sharing", the
 * parts unknown left out (all of them: "room for more SIZE guests: unknown (why)"). */
void capacity_sentence(char *buf, size_t cap, const struct capacity *c);

/* The whole document: the sentence, then what it rests on (MemAvailable, the reserve, the
 * overhead and how many VMs it was measured on, what the guests would give back, what a guest like
 * image would share; image NULL: none asked). */
void capacity_doc(struct doc *d, const struct capacity *c, double reserve_percent, const char *image);

#endif
