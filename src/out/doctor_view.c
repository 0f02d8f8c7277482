#include "out/doctor_view.h"

#include <stdio.h>

#include "out/text.h"

static void evidence(struct doc *d, const struct doctor_item *it)
{
	char fmt[96];
	snprintf(fmt, sizeof(fmt), "    %-32s %s\n", it->key,
		 it->kind == DV_PERCENT ? "%s%%" : it->kind == DV_SECONDS ? "%s s" : "%s");
	switch (it->kind) {
	case DV_INT: doc_int(d, it->key, fmt, it->i); break;
	case DV_BYTES: doc_bytes(d, it->key, fmt, it->i); break;
	case DV_FLOAT: doc_float(d, it->key, fmt, it->f, 2); break;
	case DV_PERCENT: doc_float(d, it->key, fmt, it->f, 1); break;
	case DV_SECONDS: doc_float(d, it->key, fmt, it->f, 3); break;
	case DV_TIME: doc_time(d, it->key, fmt, it->f); break;
	case DV_STR: doc_str(d, it->key, fmt, it->s); break;
	}
}

static void finding(struct doc *d, const struct doctor_finding *f)
{
	doc_begin(d, NULL);
	doc_str(d, "severity", NULL, doctor_severity_name(f->severity));
	doc_text(d, "%-8s ", doctor_severity_name(f->severity));
	doc_str(d, "id", "%s  ", f->id);
	doc_str(d, "vm", NULL, f->vm[0] ? f->vm : NULL);
	doc_int(d, "pid", NULL, f->pid ? MAYBE(f->pid) : UNKNOWN);
	if (!f->pid)
		doc_text(d, "host");
	else if (f->vm[0]) {
		char vm[sizeof(f->vm)];
		text_for_terminal(vm, sizeof(vm), f->vm, 0);
		doc_text(d, "%s (pid %d)", vm, (int)f->pid);
	}
	else
		doc_text(d, "pid %d", (int)f->pid);
	doc_str(d, "summary", ": %s\n", f->summary);
	doc_begin(d, "evidence");
	for (size_t i = 0; i < f->nev; i++)
		evidence(d, &f->ev[i]);
	doc_end(d);
	doc_str(d, "advice", "    fix: %s\n", f->advice);
	doc_end(d);
}

void doctor_view(struct doc *d, const struct doctor_findings *f)
{
	struct json *j = doc_json(d);
	doc_begin(d, NULL);
	if (j)
		json_array_begin(j, "findings");
	for (size_t i = 0; i < f->n; i++)
		finding(d, &f->v[i]);
	if (j)
		json_array_end(j);
	if (!f->n)
		doc_text(d, "no findings\n");
	doc_end(d);
}

void doctor_view_rules(struct doc *d)
{
	struct json *j = doc_json(d);
	doc_begin(d, NULL);
	if (j)
		json_array_begin(j, "rules");
	for (size_t i = 0; i < doctor_nrules; i++) {
		const struct doctor_rule *r = &doctor_rules[i];
		doc_begin(d, NULL);
		doc_str(d, "id", NULL, r->id);
		doc_str(d, "severity", NULL, doctor_severity_name(r->severity));
		doc_text(d, "%-28s %-9s", r->id, doctor_severity_name(r->severity));
		doc_str(d, "what", "%s\n", r->what);
		doc_end(d);
	}
	if (j)
		json_array_end(j);
	doc_end(d);
}
