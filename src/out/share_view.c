/* vmhost share's and share plan's output (out/share_view.h). */
#include "out/share_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "out/fmt.h"
#include "out/json.h"
#include "out/table.h"
#include "out/text.h"
#include "parse/sketch_file.h"

/* ---- share: the map of this host's VMs ---- */

enum { M_PID, M_NAME, M_PAGES, M_RAM, M_ZERO, M_ZERO_MAPPED, M_KSM_ZERO, M_SELF, M_UNIQUE, M_SHARED_WITH, M_SAMPLE,
       M_HASHES, M_SKETCH_BYTES, M_ERROR, M_PARTIAL, M_REASON, M_CPU, M_WALL, M_NCOLS };

/* A VM's row of the map, for its shared_with cell. */
struct map_row {
	const struct share_view *v;
	size_t i;
};

/* "shared_with": the other VMs holding the content of its pages, and how many pages. */
static void shared_with_json(struct json *j, const char *key, const void *value)
{
	const struct map_row *row = value;
	const struct sketch *s = row->v->sketches;
	const struct share_vm *vm = &row->v->map->vms[row->i];
	json_array_begin(j, key);
	for (size_t k = 0; k < row->v->n; k++) {
		if (k == row->i || !vm->shared_with[k])
			continue;
		json_object_begin(j, NULL);
		json_int(j, "pid", s[k].pid);
		json_string(j, "name", s[k].name[0] ? s[k].name : NULL);
		json_int(j, "pages", vm->shared_with[k]);
		json_object_end(j);
	}
	json_array_end(j);
}

static const struct col map_cols[M_NCOLS] = {
	[M_PID] = {"pid", "PID", COL_INT, 0, 0, NULL},
	[M_NAME] = {"name", "NAME", COL_STR, 0, 0, NULL},
	[M_PAGES] = {"pages", "PAGES", COL_INT, 0, 0, NULL},
	[M_RAM] = {"ram_pages", "RAM PAGES", COL_INT, 0, 0, NULL},
	[M_ZERO] = {"zero_pages", "ZERO", COL_INT, 0, 0, NULL},
	[M_ZERO_MAPPED] = {"zero_mapped_pages", "ZERO MAPPED", COL_INT, 0, 0, NULL},
	[M_KSM_ZERO] = {"ksm_zero_pages", "KSM ZERO", COL_INT, 0, 0, NULL},
	[M_SELF] = {"self_shared_pages", "SELF", COL_INT, 0, 0, NULL},
	[M_UNIQUE] = {"unique_pages", "UNIQUE", COL_INT, 0, 0, NULL},
	[M_SHARED_WITH] = {"shared_with", "SHARED WITH", COL_STR, 0, 0, shared_with_json},
	[M_SAMPLE] = {"sample", "SAMPLE", COL_INT, 0, 0, NULL},
	[M_HASHES] = {"sketch_hashes", "HASHES", COL_INT, 0, 0, NULL},
	[M_SKETCH_BYTES] = {"sketch_bytes", "SKETCH", COL_BYTES, 0, 0, NULL},
	[M_ERROR] = {"error_bound_pages", "+-", COL_INT, 0, 0, NULL},
	[M_PARTIAL] = {"partial", "PARTIAL", COL_BOOL, 0, 0, NULL},
	[M_REASON] = {"partial_reason", "WHY", COL_STR, 0, 0, NULL},
	[M_CPU] = {"cpu_seconds", "CPU", COL_SECONDS, 0, 0, NULL},
	[M_WALL] = {"wall_seconds", "WALL", COL_SECONDS, 0, 0, NULL},
};

/* The map's table, a row per VM (rows: their shared_with cells, to outlive the table). NULL: -ENOMEM. */
static struct table *map_table(const struct share_view *v, struct map_row *rows)
{
	struct table *t = table_new(map_cols, M_NCOLS);
	for (size_t i = 0; t && i < v->n; i++) {
		const struct sketch *s = &v->sketches[i];
		const struct share_vm *vm = &v->map->vms[i];
		rows[i] = (struct map_row){v, i};
		table_add_row(t);
		table_set_int(t, M_PID, s->pid);
		table_set_str(t, M_NAME, s->name[0] ? s->name : NULL);
		table_set_int(t, M_PAGES, s->pages);
		table_set_int(t, M_RAM, s->ram_pages);
		table_set_int(t, M_ZERO, s->zero_pages);
		table_set_int(t, M_ZERO_MAPPED, s->zero_mapped_pages);
		table_set_int(t, M_KSM_ZERO, s->ksm_zero_pages);
		table_set_int(t, M_SELF, vm->self_shared_pages);
		table_set_int(t, M_UNIQUE, vm->unique_pages);
		table_set_value(t, M_SHARED_WITH, &rows[i]);
		table_set_int(t, M_SAMPLE, (int64_t)s->sample_n);
		table_set_int(t, M_HASHES, (int64_t)s->nhashes);
		table_set_int(t, M_SKETCH_BYTES, (int64_t)sketch_bytes(s));
		table_set_int(t, M_ERROR, vm->error_bound_pages);
		table_set_bool(t, M_PARTIAL, s->gap != SKETCH_COMPLETE);
		table_set_str(t, M_REASON, sketch_gap_name(s->gap));
		table_set_float(t, M_CPU, s->cpu_seconds);
		table_set_float(t, M_WALL, s->wall_seconds);
	}
	if (t && table_error(t) < 0) {
		table_free(t);
		return NULL;
	}
	return t;
}

static void map_json(FILE *f, const struct share_view *v, const struct table *t)
{
	const struct share_map *m = v->map;
	struct json j;
	json_init(&j, f, false);
	json_object_begin(&j, NULL);
	table_print_json(t, &j, "vms");
	json_object_begin(&j, "host");
	json_int(&j, "pages", m->pages);
	json_int(&j, "zero_pages", m->zero_pages);
	json_int(&j, "zero_mapped_pages", m->zero_mapped_pages);
	json_int(&j, "mergeable_savings_bytes", m->mergeable_pages * v->page_size_bytes);
	json_maybe(&j, "saved_bytes", v->saved_now_bytes);
	json_maybe(&j, "ksm_saved_bytes", v->ksm_saved_bytes);
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void bytes_of_pages(char *buf, size_t cap, int64_t pages, int64_t page_size)
{
	fmt_bytes(buf, cap, pages * page_size);
}

/* Names and host labels come from VMs' command lines and from other hosts' sketch files: shown
 * readable on a terminal, never obeyed (out/text.h), at most cols columns (0: all), "-" when empty. */
struct shown {
	char s[1024];
};
static const char *shown(struct shown *buf, const char *text, size_t cols)
{
	if (!text[0])
		return "-";
	text_for_terminal(buf->s, sizeof(buf->s), text, cols);
	return buf->s;
}

static void map_human(FILE *f, const struct share_view *v)
{
	const struct sketch *s = v->sketches;
	const struct share_map *m = v->map;
	int64_t ps = v->page_size_bytes;
	char a[32], b[32], c[32], d[32], e[32];
	fprintf(f, "%-7s %-16s %10s %10s %10s %10s %10s  %s\n", "PID", "NAME", "READ", "ZERO", "SELF", "UNIQUE", "+-",
		"SKETCH");
	for (size_t i = 0; i < v->n; i++) {
		const struct share_vm *vm = &m->vms[i];
		bytes_of_pages(a, sizeof(a), s[i].pages, ps);
		bytes_of_pages(b, sizeof(b), s[i].zero_pages, ps);
		bytes_of_pages(c, sizeof(c), vm->self_shared_pages, ps);
		bytes_of_pages(d, sizeof(d), vm->unique_pages, ps);
		bytes_of_pages(e, sizeof(e), vm->error_bound_pages, ps);
		struct shown n;
		fprintf(f, "%-7d %-16s %10s %10s %10s %10s %10s  %zu KiB, 1/%llu%s%s\n", (int)s[i].pid,
			shown(&n, s[i].name, 16), a, b, c, d, e, sketch_bytes(&s[i]) >> 10, (unsigned long long)s[i].sample_n,
			s[i].gap ? ", PARTIAL: " : "", s[i].gap ? sketch_gap_name(s[i].gap) : "");
	}
	fprintf(f, "\nshared between VMs (the first VM's pages whose content the second holds):\n");
	for (size_t i = 0; i < v->n; i++)
		for (size_t k = 0; k < v->n; k++)
			if (k != i && m->vms[i].shared_with[k]) {
				bytes_of_pages(a, sizeof(a), m->vms[i].shared_with[k], ps);
				struct shown n1, n2;
				fprintf(f, "  %-16s with %-16s %10s\n", shown(&n1, s[i].name, 16), shown(&n2, s[k].name, 16), a);
			}
	bytes_of_pages(a, sizeof(a), m->mergeable_pages, ps);
	bytes_of_pages(c, sizeof(c), m->zero_mapped_pages, ps);
	if (v->saved_now_bytes.known)
		fmt_bytes(b, sizeof(b), v->saved_now_bytes.v);
	fprintf(f, "\nhost: KSM could save %s with every VM merged; %s is saved now (%s of it empty pages already\n"
		   "      on the zero page)\n", a, v->saved_now_bytes.known ? b : "n/a", c);
}

int share_view_print(FILE *f, enum doc_form form, const struct share_view *v)
{
	if (form == DOC_HUMAN) {
		map_human(f, v);
		return 0;
	}
	struct map_row *rows = calloc(v->n ? v->n : 1, sizeof(*rows));
	struct table *t = rows ? map_table(v, rows) : NULL;
	if (t && form == DOC_JSON)
		map_json(f, v, t);
	else if (t)
		table_print_csv(t, f);
	table_free(t);
	free(rows);
	return t ? 0 : -ENOMEM;
}

/* ---- share plan: several hosts' sketches ---- */

static const struct sketch_file_vm *vm_of(const struct share_plan_view *v, const struct plan_vm *pv)
{
	return &v->hosts[pv->host].file->vms[pv->index];
}

/* --vm NAME: the VM of that name, or of that pid. */
static bool vm_wanted(const struct share_plan_view *v, const struct sketch_file_vm *f)
{
	if (!v->vm)
		return true;
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)f->pid);
	return !strcmp(v->vm, f->name) || !strcmp(v->vm, pid);
}

bool share_plan_view_finds_vm(const struct share_plan_view *v)
{
	bool found = !v->vm;
	for (size_t i = 0; i < v->plan->nvms && !found; i++)
		found = vm_wanted(v, vm_of(v, &v->plan->vms[i]));
	return found;
}

static int64_t page_bytes(int64_t pages) { return pages * SKETCH_FILE_PAGE_BYTES; }

enum { P_NAME, P_PID, P_FROM, P_TO, P_FREED, P_NEED, P_NCOLS };
static const struct col move_cols[P_NCOLS] = {
	[P_NAME] = {"name", "NAME", COL_STR, 0, 0, NULL},
	[P_PID] = {"pid", "PID", COL_INT, 0, 0, NULL},
	[P_FROM] = {"from", "FROM", COL_STR, 0, 0, NULL},
	[P_TO] = {"to", "TO", COL_STR, 0, 0, NULL},
	[P_FREED] = {"freed_bytes", "FREES", COL_BYTES, 0, 0, NULL},
	[P_NEED] = {"need_bytes", "TAKES", COL_BYTES, 0, 0, NULL},
};

/* The plan's moves (of --vm's VM only, with --vm) as a table; what they free together in *ret_freed.
 * NULL: -ENOMEM. */
static struct table *move_table(const struct share_plan_view *v, int64_t *ret_freed)
{
	struct table *t = table_new(move_cols, P_NCOLS);
	int64_t freed = 0;
	for (size_t m = 0; t && m < v->plan->nmoves; m++) {
		const struct plan_move *mv = &v->plan->moves[m];
		const struct sketch_file_vm *f = vm_of(v, &v->plan->vms[mv->vm]);
		if (!vm_wanted(v, f))
			continue;
		freed += mv->freed_pages;
		table_add_row(t);
		table_set_str(t, P_NAME, f->name[0] ? f->name : NULL);
		table_set_int(t, P_PID, f->pid);
		table_set_str(t, P_FROM, v->hosts[mv->from].label);
		table_set_str(t, P_TO, v->hosts[mv->to].label);
		table_set_int(t, P_FREED, page_bytes(mv->freed_pages));
		table_set_int(t, P_NEED, page_bytes(mv->need_pages));
	}
	if (t && table_error(t) < 0) {
		table_free(t);
		return NULL;
	}
	*ret_freed = freed;
	return t;
}

static void hosts_json(struct json *j, const struct share_plan_view *v)
{
	json_array_begin(j, "hosts");
	for (size_t h = 0; h < v->plan->nhosts; h++) {
		const struct sketch_file *f = v->hosts[h].file;
		char fp[20];
		snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)f->key_fingerprint);
		json_object_begin(j, NULL);
		json_string(j, "name", v->hosts[h].label);
		json_string(j, "source", v->sources[h]);
		json_int(j, "vms", (int64_t)f->nvms);
		json_int(j, "sample", (int64_t)f->sample_n);
		json_string(j, "key_fingerprint", fp);
		json_maybe(j, "mem_total_bytes", f->mem_total_bytes < 0 ? UNKNOWN : MAYBE(f->mem_total_bytes));
		json_maybe(j, "mem_available_bytes", f->mem_available_bytes < 0 ? UNKNOWN : MAYBE(f->mem_available_bytes));
		json_object_end(j);
	}
	json_array_end(j);
}

static void plan_vm_json(struct json *j, const struct share_plan_view *v, const struct plan_vm *pv)
{
	const struct sketch_file_vm *f = vm_of(v, pv);
	json_object_begin(j, NULL);
	json_string(j, "name", f->name[0] ? f->name : NULL);
	json_int(j, "pid", f->pid);
	json_string(j, "uuid", f->uuid[0] ? f->uuid : NULL);
	json_string(j, "host", v->hosts[pv->host].label);
	json_int(j, "bytes", page_bytes(f->pages));
	json_int(j, "zero_bytes", page_bytes(pv->zero_pages));
	json_bool(j, "partial", f->gap != 0);
	json_string(j, "partial_reason", sketch_gap_name((enum sketch_gap)f->gap));
	json_array_begin(j, "shares");
	for (size_t h = 0; h < v->plan->nhosts; h++) {
		json_object_begin(j, NULL);
		json_string(j, "host", v->hosts[h].label);
		json_int(j, "common_bytes", page_bytes(pv->common_pages[h]));
		json_int(j, "shared_bytes", page_bytes(pv->common_pages[h] + pv->zero_pages));
		json_object_end(j);
	}
	json_array_end(j);
	json_string(j, "best_host", v->hosts[pv->best_host].label);
	json_int(j, "best_gain_bytes", page_bytes(pv->common_pages[pv->best_host] - pv->common_pages[pv->host]));
	json_object_end(j);
}

static void plan_json(FILE *f, const struct share_plan_view *v, const struct table *moves, int64_t freed)
{
	struct json j;
	json_init(&j, f, false);
	json_object_begin(&j, NULL);
	hosts_json(&j, v);
	json_array_begin(&j, "vms");
	for (size_t i = 0; i < v->plan->nvms; i++)
		if (vm_wanted(v, vm_of(v, &v->plan->vms[i])))
			plan_vm_json(&j, v, &v->plan->vms[i]);
	json_array_end(&j);
	json_object_begin(&j, "plan");
	table_print_json(moves, &j, "moves");
	json_int(&j, "freed_bytes", page_bytes(freed));
	json_bool(&j, "memory_checked", v->plan->memory_checked);
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void plan_vm_human(FILE *out, const struct share_plan_view *v, const struct plan_vm *pv)
{
	const struct sketch_file_vm *f = vm_of(v, pv);
	char a[32], b[32];
	fmt_bytes(a, sizeof(a), page_bytes(pv->common_pages[pv->best_host] - pv->common_pages[pv->host]));
	struct shown n, h1, h2;
	fprintf(out, "%s (pid %d) on %s%s%s: best on %s", shown(&n, f->name, 0), (int)f->pid,
		shown(&h1, v->hosts[pv->host].label, 0), f->gap ? ", PARTIAL: " : "",
		f->gap ? sketch_gap_name((enum sketch_gap)f->gap) : "", shown(&h2, v->hosts[pv->best_host].label, 0));
	if (pv->best_host != pv->host)
		fprintf(out, " (+%s)", a);
	fprintf(out, "\n");
	for (size_t h = 0; h < v->plan->nhosts; h++) {
		fmt_bytes(a, sizeof(a), page_bytes(pv->common_pages[h] + pv->zero_pages));
		fmt_bytes(b, sizeof(b), page_bytes(pv->common_pages[h]));
		fprintf(out, "  %-24s %10s shared (%s with its VMs)\n", shown(&h1, v->hosts[h].label, 24), a, b);
	}
}

static void plan_human(FILE *f, const struct share_plan_view *v, int64_t freed)
{
	for (size_t i = 0; i < v->plan->nvms; i++)
		if (vm_wanted(v, vm_of(v, &v->plan->vms[i])))
			plan_vm_human(f, v, &v->plan->vms[i]);
	fprintf(f, "\nplan:\n");
	char a[32], b[32];
	for (size_t m = 0; m < v->plan->nmoves; m++) {
		const struct plan_move *mv = &v->plan->moves[m];
		const struct sketch_file_vm *vm = vm_of(v, &v->plan->vms[mv->vm]);
		if (!vm_wanted(v, vm))
			continue;
		fmt_bytes(a, sizeof(a), page_bytes(mv->freed_pages));
		fmt_bytes(b, sizeof(b), page_bytes(mv->need_pages));
		struct shown n, h1, h2;
		fprintf(f, "  move %s (pid %d) from %s to %s: frees %s (takes %s there)\n", shown(&n, vm->name, 0),
			(int)vm->pid, shown(&h1, v->hosts[mv->from].label, 0), shown(&h2, v->hosts[mv->to].label, 0), a, b);
	}
	fmt_bytes(a, sizeof(a), page_bytes(freed));
	if (freed)
		fprintf(f, "  the plan frees %s of host memory once KSM has merged%s\n", a,
			v->plan->memory_checked ? "" : " (not checked against host memory: a sketch lacks MemAvailable)");
	else
		fprintf(f, "  no move frees memory\n");
}

int share_plan_view_print(FILE *f, enum doc_form form, const struct share_plan_view *v)
{
	int64_t freed = 0;
	struct table *moves = move_table(v, &freed);
	if (!moves)
		return -ENOMEM;
	if (form == DOC_JSON)
		plan_json(f, v, moves, freed);
	else if (form == DOC_CSV)
		table_print_csv(moves, f);
	else
		plan_human(f, v, freed);
	table_free(moves);
	return 0;
}
