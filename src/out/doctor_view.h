/* vmhost doctor's findings in every form from one pass: the human list (one line per finding,
 * its evidence indented under it, the fix last; "no findings") and the JSON document
 * {"findings": [{"id", "severity", "vm", "pid", "summary", "evidence": {...}, "advice"}]}. */
#ifndef VMHOST_OUT_DOCTOR_VIEW_H
#define VMHOST_OUT_DOCTOR_VIEW_H

#include "core/doctor/doctor.h"
#include "out/doc.h"

/* Writes the whole document into d (begun, not finished). */
void doctor_view(struct doc *d, const struct doctor_findings *f);

/* `vmhost doctor --list`: every rule's id, severity and what it looks for. */
void doctor_view_rules(struct doc *d);

#endif
