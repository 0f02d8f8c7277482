#include "out/top_view.h"

#include <math.h>
#include <string.h>

#include "out/fmt.h"
#include "out/json.h"
#include "out/screen.h"
#include "out/text.h"

enum cell { CELL_TEXT, CELL_PERCENT, CELL_BYTES, CELL_RATE, CELL_INT };

static const struct {
	const char *title;
	unsigned width;
	enum cell kind;
	const char *json; /* the batch JSON key */
} cols[TOP_NCOLS] = {
	[TOP_NAME] = {"NAME", 15, CELL_TEXT, "name"},
	[TOP_PID] = {"PID", 7, CELL_INT, "pid"},
	[TOP_CPU] = {"CPU%", 6, CELL_PERCENT, "cpu_percent"},
	[TOP_DELAY] = {"DELAY%", 6, CELL_PERCENT, "vcpu_delay_percent"},
	[TOP_RSS] = {"RSS", 9, CELL_BYTES, "rss_bytes"},
	[TOP_PSS] = {"PSS", 9, CELL_BYTES, "pss_bytes"},
	[TOP_KSM_SAVED] = {"KSM SAV", 9, CELL_BYTES, "ksm_saved_bytes"},
	[TOP_OVERHEAD] = {"OVERHEAD", 9, CELL_BYTES, "overhead_bytes"},
	[TOP_EXITS] = {"EXITS/S", 9, CELL_RATE, "exits_per_second"},
	[TOP_CG_MEM] = {"CG MEM", 9, CELL_BYTES, "cgroup_memory_bytes"},
	[TOP_MEM_PSI] = {"MEM PSI", 8, CELL_PERCENT, "memory_pressure_some_avg10"},
	[TOP_CPU_PSI] = {"CPU PSI", 8, CELL_PERCENT, "cpu_pressure_some_avg10"},
	[TOP_IO_PSI] = {"IO PSI", 8, CELL_PERCENT, "io_pressure_some_avg10"},
	[TOP_COST] = {"COST", 9, CELL_BYTES, "memory_cost_bytes"},
	[TOP_KSMD] = {"KSMD%", 6, CELL_PERCENT, "ksmd_cpu_percent"}, /* of one CPU: ksmd's, by the VM's share */
	[TOP_DISK_READ] = {"READ/S", 9, CELL_BYTES, "read_bytes_per_second"},
	[TOP_DISK_WRITE] = {"WRITE/S", 9, CELL_BYTES, "write_bytes_per_second"},
	[TOP_NET_RX] = {"NET RX/S", 9, CELL_BYTES, "net_rx_bytes_per_second"},
	[TOP_NET_TX] = {"NET TX/S", 9, CELL_BYTES, "net_tx_bytes_per_second"},
	[TOP_POLL] = {"POLL%", 6, CELL_PERCENT, "halt_poll_percent"}, /* of one CPU: KVM polling halted vCPUs */
	[TOP_STALL] = {"STALL%", 6, CELL_PERCENT, "stall_percent"}, /* of one thread: stalled on memory */
};

/* Left to right on screen; which of them fit goes by enum order (the first ones matter most). */
static const enum top_col shown_order[TOP_NCOLS] = {
	TOP_PID, TOP_NAME, TOP_CPU, TOP_DELAY, TOP_RSS, TOP_PSS, TOP_KSM_SAVED, TOP_KSMD, TOP_OVERHEAD, TOP_COST,
	TOP_DISK_READ, TOP_DISK_WRITE, TOP_NET_RX, TOP_NET_TX, TOP_CG_MEM, TOP_MEM_PSI, TOP_STALL, TOP_CPU_PSI, TOP_IO_PSI,
	TOP_EXITS, TOP_POLL,
};

/* The widest a name gets once every column fits. */
#define NAME_WIDTH_MAX 32

/* The columns that fit width, by enum order, into on[]; returns the width they take. */
static size_t fitting(size_t width, bool *on)
{
	size_t widths[TOP_NCOLS], used = 0;
	for (int c = 0; c < TOP_NCOLS; c++)
		widths[c] = cols[c].width + (c ? 1 : 0); /* a blank before each but the first */
	size_t n = screen_fit(width, 0, widths, TOP_NCOLS);
	for (size_t c = 0; c < TOP_NCOLS; c++) {
		on[c] = c < n;
		used += on[c] ? widths[c] : 0;
	}
	return used;
}

size_t top_view_columns(size_t width, enum top_col *ret)
{
	bool on[TOP_NCOLS];
	fitting(width, on);
	size_t n = 0;
	for (int i = 0; i < TOP_NCOLS; i++)
		if (on[shown_order[i]])
			ret[n++] = shown_order[i];
	return n;
}

static void fmt_value(char *buf, size_t cap, enum top_col c, double v)
{
	if (isnan(v)) {
		snprintf(buf, cap, "n/a");
		return;
	}
	switch (cols[c].kind) {
	case CELL_PERCENT: snprintf(buf, cap, "%.1f", v); break;
	case CELL_BYTES: fmt_bytes(buf, cap, (int64_t)v); break;
	case CELL_INT: snprintf(buf, cap, "%.0f", v); break;
	case CELL_RATE: fmt_rate(buf, cap, v); break;
	case CELL_TEXT: snprintf(buf, cap, "%s", ""); break;
	}
}

static void header(const struct screen *sc, const struct top_view *v, const struct top_frame *fr)
{
	char line[512], a[32], b[32];
	screen_title(sc, "top", fr->now_unix, fr->interval_seconds, v->nvms, "%s%s",
		     v->exact ? "  exact PSS (this refresh)" : "", v->seconds > 0 ? "" : "  (rates from the next refresh)");
	fmt_value(a, sizeof(a), TOP_RSS, v->mem_total_bytes);
	fmt_value(b, sizeof(b), TOP_RSS, v->mem_available_bytes);
	int n = snprintf(line, sizeof(line), "mem %s, avail %s", a, b);
	fmt_value(a, sizeof(a), TOP_RSS, v->ksm_saved_bytes);
	fmt_value(b, sizeof(b), TOP_CPU, v->ksmd_cpu_percent);
	if (isnan(v->ksm_saved_bytes))
		snprintf(line + n, sizeof(line) - (size_t)n, "  ksm n/a");
	else
		snprintf(line + n, sizeof(line) - (size_t)n, "  ksm %s, saves %s, ksmd %s%s CPU",
			 ksm_run_word(v->ksm_run), a, b, isnan(v->ksmd_cpu_percent) ? "" : "%");
	screen_line(sc, line);
	const char *dir = fr->sort == TOP_NAME ? (fr->reverse ? "Z-A" : "A-Z")
					       : (fr->reverse ? "smallest first" : "largest first");
	snprintf(line, sizeof(line), "sorted by %s (%s)%s%s", cols[fr->sort].title, dir,
		 fr->filter[0] && !fr->editing ? "   filter: " : "", fr->editing ? "" : fr->filter);
	screen_line(sc, line);
	screen_line(sc, fr->keys ? "keys: q quit  < > o sort  r reverse  / filter  e exact" : "");
}

static void table_heading(const struct screen *sc, const enum top_col *shown, size_t ns, size_t name_w,
			  const struct top_frame *fr)
{
	FILE *f = sc->f;
	if (fr->colour)
		fputs("\033[1m", f);
	for (size_t i = 0; i < ns; i++) {
		enum top_col c = shown[i];
		bool sorted = c == fr->sort;
		char title[24];
		/* Readable without colour: the sort column's title carries a star. */
		snprintf(title, sizeof(title), "%s%s", sorted && !fr->colour ? "*" : "", cols[c].title);
		int w = (int)(c == TOP_NAME ? name_w : cols[c].width);
		if (i)
			fputc(' ', f);
		if (sorted && fr->colour)
			fputs("\033[7m", f);
		if (c == TOP_NAME)
			fprintf(f, "%-*s", w, title);
		else
			fprintf(f, "%*s", w, title);
		if (sorted && fr->colour)
			fputs("\033[27m", f);
	}
	if (fr->colour)
		fputs("\033[0m", f);
	screen_newline(sc);
}

static void table_row(const struct screen *sc, const struct top_row *r, const enum top_col *shown, size_t ns,
		      size_t name_w)
{
	FILE *f = sc->f;
	for (size_t i = 0; i < ns; i++) {
		enum top_col c = shown[i];
		char cell[sizeof(r->name) + 8];
		if (i)
			fputc(' ', f);
		if (c == TOP_NAME) {
			char text[sizeof(cell)];
			snprintf(cell, sizeof(cell), "%s%s", r->helper ? "  - " : "", r->name);
			text_pad(f, text, text_for_terminal(text, sizeof(text), cell, name_w), name_w, true);
			continue;
		}
		/* A helper's figures are in its VM's: only its own RSS, CPU and pid are shown. */
		if (r->helper && isnan(r->v[c]))
			cell[0] = '\0';
		else
			fmt_value(cell, sizeof(cell), c, r->v[c]);
		fprintf(f, "%*s", (int)cols[c].width, cell);
	}
	screen_newline(sc);
}

void top_view_frame(FILE *f, const struct top_view *v, const size_t *order, size_t n, const struct top_frame *fr)
{
	const struct screen screen = {f, fr->cols, fr->rows, fr->full_screen}, *sc = &screen;
	screen_begin(sc);
	bool on[TOP_NCOLS];
	size_t used = fitting(fr->cols, on);
	enum top_col shown[TOP_NCOLS];
	size_t ns = top_view_columns(fr->cols, shown);
	size_t name_w = cols[TOP_NAME].width;
	if (ns == TOP_NCOLS) /* every column fits: the names get the room left */
		for (size_t i = 0; i < n && name_w < NAME_WIDTH_MAX; i++) {
			char text[sizeof(v->rows[0].name)];
			size_t l = text_for_terminal(text, sizeof(text), v->rows[order[i]].name, 0) +
				   (v->rows[order[i]].helper ? 4 : 0);
			while (name_w < l && name_w < NAME_WIDTH_MAX && (!fr->cols || used + 1 < fr->cols)) {
				name_w++;
				used++;
			}
		}
	header(sc, v, fr);
	table_heading(sc, shown, ns, name_w, fr);
	/* Room for the rows: the terminal less the 5 lines above and up to 3 below. */
	size_t room = fr->rows > 9 ? fr->rows - 8 : fr->rows ? 1 : n;
	size_t shown_rows = n < room ? n : room;
	for (size_t i = 0; i < shown_rows; i++)
		table_row(sc, &v->rows[order[i]], shown, ns, name_w);
	char line[512];
	if (shown_rows < n) {
		snprintf(line, sizeof(line), "(%zu more row%s: a taller terminal, or / to filter)", n - shown_rows,
			 n - shown_rows == 1 ? "" : "s");
		screen_line(sc, line);
	}
	if (!n) {
		snprintf(line, sizeof(line), "%s", v->nvms ? "no VM matches the filter"
							    : "no VMs found (QEMU, cloud-hypervisor, firecracker, crosvm)");
		screen_line(sc, line);
	}
	if (on[TOP_EXITS] && fr->exits_why[0]) {
		snprintf(line, sizeof(line), "EXITS/S n/a: %s", fr->exits_why);
		screen_line(sc, line);
	}
	if (on[TOP_EXITS] && fr->exits_note && fr->exits_note[0]) {
		snprintf(line, sizeof(line), "EXITS/S: %s", fr->exits_note);
		screen_line(sc, line);
	}
	if (fr->editing) {
		snprintf(line, sizeof(line), "filter: %s_   (Enter keeps it, Esc clears it)", fr->filter);
		screen_line(sc, line);
	}
	screen_end(sc);
}

/* ---- --batch ---- */

/* The batch columns after kind, pid, vm_pid and name. */
static const enum top_col batch_cols[] = {TOP_CPU, TOP_DELAY, TOP_RSS, TOP_PSS, TOP_KSM_SAVED, TOP_OVERHEAD,
					  TOP_EXITS, TOP_CG_MEM, TOP_MEM_PSI, TOP_CPU_PSI, TOP_IO_PSI, TOP_COST, TOP_KSMD,
					  TOP_DISK_READ, TOP_DISK_WRITE, TOP_NET_RX, TOP_NET_TX, TOP_POLL, TOP_STALL};
#define NBATCH (sizeof(batch_cols) / sizeof(batch_cols[0]))

static void batch_value(FILE *f, enum top_col c, double v)
{
	if (isnan(v))
		fputs("\tn/a", f);
	else if (cols[c].kind == CELL_BYTES)
		fprintf(f, "\t%.0f", v);
	else
		fprintf(f, "\t%.1f", v);
}

static pid_t vm_pid_of(const struct top_view *v, const struct top_row *r) { return r->helper ? v->rows[r->vm].pid : r->pid; }

void top_view_batch(FILE *f, const struct top_view *v, const size_t *order, size_t n, double now_unix,
		    double interval_seconds)
{
	fprintf(f, "# vmhost top time_unix=%.3f interval_seconds=%.3f seconds=%.3f vms=%zu exact=%s skipped=%u\n", now_unix,
		interval_seconds, v->seconds, v->nvms, v->exact ? "yes" : "no", v->skipped);
	fprintf(f, "# host");
	static const struct {
		const char *key;
		enum top_col kind;
	} host[] = {{"mem_total_bytes", TOP_RSS}, {"mem_available_bytes", TOP_RSS}, {"ksm_saved_bytes", TOP_RSS},
		    {"ksmd_cpu_percent", TOP_CPU}};
	const double hv[] = {v->mem_total_bytes, v->mem_available_bytes, v->ksm_saved_bytes, v->ksmd_cpu_percent};
	for (size_t i = 0; i < sizeof(hv) / sizeof(hv[0]); i++) {
		fprintf(f, " %s=", host[i].key);
		if (isnan(hv[i]))
			fputs("n/a", f);
		else
			fprintf(f, host[i].kind == TOP_RSS ? "%.0f" : "%.1f", hv[i]);
	}
	fputc('\n', f);
	fputs("kind\tpid\tvm_pid\tname", f);
	for (size_t i = 0; i < NBATCH; i++)
		fprintf(f, "\t%s", top_col_key(batch_cols[i]));
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct top_row *r = &v->rows[order[i]];
		char name[sizeof(r->name)];
		text_for_terminal(name, sizeof(name), r->name, 0); /* a name never splits a field or a line */
		fprintf(f, "%s\t%d\t%d\t%s", r->helper ? "helper" : "vm", (int)r->pid, (int)vm_pid_of(v, r), name);
		for (size_t k = 0; k < NBATCH; k++)
			batch_value(f, batch_cols[k], r->v[batch_cols[k]]);
		fputc('\n', f);
	}
	fputc('\n', f);
	fflush(f);
}

/* Bytes as whole numbers (%.6g would round them), other figures as doubles; NaN as null. */
static void json_value(struct json *j, const char *key, bool bytes, double v)
{
	if (bytes)
		json_maybe(j, key, isnan(v) ? UNKNOWN : MAYBE((int64_t)v));
	else
		json_double(j, key, v);
}

static void json_row(struct json *j, const struct top_row *r, bool helper)
{
	json_object_begin(j, NULL);
	json_int(j, "pid", r->pid);
	json_string(j, "name", r->name);
	for (size_t k = 0; k < NBATCH; k++)
		if (!helper || batch_cols[k] == TOP_CPU || batch_cols[k] == TOP_RSS)
			json_value(j, cols[batch_cols[k]].json, cols[batch_cols[k]].kind == CELL_BYTES, r->v[batch_cols[k]]);
	if (!helper) {
		json_value(j, "vcpu_wait_percent", false, r->v[TOP_DELAY]); /* deprecated alias, for one release */
		json_string(j, "pss_method", isnan(r->v[TOP_PSS]) ? NULL : measure_method_name(r->pss_method));
	}
}

void top_view_batch_json(FILE *f, const struct top_view *v, const size_t *order, size_t n, double now_unix,
			 double interval_seconds)
{
	struct json j;
	json_init(&j, f, false);
	json_object_begin(&j, NULL);
	json_fixed(&j, "time_unix", now_unix, 3);
	json_double(&j, "interval_seconds", interval_seconds);
	json_double(&j, "seconds", v->seconds);
	json_bool(&j, "exact", v->exact);
	json_int(&j, "skipped", v->skipped);
	json_object_begin(&j, "host");
	json_value(&j, "mem_total_bytes", true, v->mem_total_bytes);
	json_value(&j, "mem_available_bytes", true, v->mem_available_bytes);
	json_value(&j, "ksm_saved_bytes", true, v->ksm_saved_bytes);
	json_double(&j, "ksmd_cpu_percent", v->ksmd_cpu_percent);
	json_object_end(&j);
	json_array_begin(&j, "vms");
	for (size_t i = 0; i < n; i++) {
		const struct top_row *r = &v->rows[order[i]];
		if (r->helper)
			continue;
		json_row(&j, r, false);
		json_array_begin(&j, "helpers");
		for (size_t k = i + 1; k < n && v->rows[order[k]].helper; k++) {
			json_row(&j, &v->rows[order[k]], true);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
	fflush(f);
}
