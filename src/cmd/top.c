/* vmhost top: the live view of every VM's cost (htop and kvm_stat's TUI in spirit); --batch
 * prints plain frames for scripts. The model is core/sample/top.c, the drawing out/top_view.c. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "core/base/stop.h"
#include "core/kvm/kvm_pace.h"
#include "core/sample/top.h"
#include "io/term.h"
#include "out/top_view.h"

#define FILTER_MAX 64

struct top_opts {
	double interval_seconds;
	enum top_col sort;
	bool reverse;
	char filter[FILTER_MAX];
	bool batch;
	long iterations; /* frames before stopping; 0 = until stopped */
	double kvm_interval; /* a QEMU 7.1-8.0's vCPU statistics at most this often */
	const char *libvirt_uri; /* NULL: qemu:///system */
};

static void top_help(void)
{
	printf("usage: vmhost top [--interval SEC] [--sort COLUMN] [--reverse] [--filter TEXT]\n"
	       "                  [--kvm-interval SEC] [--libvirt-uri URI] [--batch [--iterations N] [--json]]\n"
	       "\n"
	       "The live view of every VM's cost: a header with host memory, KSM's savings and ksmd's CPU,\n"
	       "then a row per VM, its helpers (swtpm, virtiofsd) right under it. Each refresh reads\n"
	       "counters only (PSS and OVERHEAD are the cheap estimates of 'vmhost mem'); e reads the\n"
	       "exact sources once. The columns that fit 80 columns come first, more as it widens.\n"
	       "\n"
	       "  NAME       the VM's name (pid N without one); a helper's process name, indented\n"
	       "  CPU%%       CPU of the VMM and its helpers since the last refresh (100 = one CPU)\n"
	       "  DELAY%%     vCPU run-queue delay: time its vCPUs were runnable but waited for a host\n"
	       "             CPU, summed over vCPUs (libvirt's vcpu.N.delay; was WAIT%%)\n"
	       "  RSS, PSS, KSM SAV, OVERHEAD   as in 'vmhost mem' (VMM and helpers together)\n"
	       "  EXITS/S    KVM exits per second (debugfs, or QMP query-stats), where readable\n"
	       "  CG MEM     the VM's cgroup scope's memory; MEM/CPU/IO PSI its pressure (some, avg10 %%)\n"
	       "  PID        the VMM's (a helper's own)\n"
	       "  COST       PSS plus the VM's huge pages (hugetlbfs): what its memory costs the host\n"
	       "  KSMD%%      ksmd's CPU spent on the VM: ksmd's CPU x its share of the pages ksmd tracks\n"
	       "  READ/S WRITE/S  storage bytes a second of the VMM and its helpers (/proc/PID/io)\n"
	       "  NET RX/S NET TX/S  bytes a second on the VM's taps as the host sees them (RX: the guest sent)\n"
	       "  POLL%%      host CPU KVM spent polling the VM's halted vCPUs for a wake-up (halt_poll_ns),\n"
	       "             100 = one CPU, where its KVM counters are readable\n"
	       "  STALL%%     time the VMM's threads stalled on memory (copy-on-write copies of KSM's\n"
	       "             merged pages, swap-in, reclaim, thrashing, compaction; delay accounting),\n"
	       "             100 = one thread throughout, where kernel.task_delayacct is 1\n"
	       "\n"
	       "keys: q quit; < > (or arrows) move the sort column, o the next one, r reverses; / filters\n"
	       "by name (Enter keeps it, Esc clears it); e an exact refresh now. Ctrl-C also quits.\n"
	       "The rows on the screen are read every refresh, the other VMs a tenth at a time (each at\n"
	       "least every 10 refreshes; docs/top.md). --batch reads every VM every refresh.\n"
	       "\n"
	       "  --interval SEC  seconds between refreshes (default 1)\n"
	       "  --sort COLUMN   name, cpu, delay, rss, pss, ksm, overhead, exits, cgroup, mempsi,\n"
	       "                  cpupsi, iopsi, cost, ksmd, read, write, netrx, nettx, poll, stall\n"
	       "                  or pid (default cpu; numbers largest first, names A-Z; wait: the old\n"
	       "                  name of delay)\n"
	       "  --reverse       the other way round\n"
	       "  --filter TEXT   only VMs whose name (or a helper's) contains TEXT (any case)\n"
	       "  --kvm-interval SEC  EXITS/S of a QEMU 7.1-8.0 (QMP or libvirt) read at most this often\n"
	       "                  (default %g; 0: every refresh), its last rate shown in between: those\n"
	       "                  QEMUs interrupt every vCPU to answer, at most 0.03%% of a vCPU at one\n"
	       "                  read a second (docs/exits.md); 8.1 and later, debugfs: every refresh\n"
	       "  --libvirt-uri URI  the libvirt whose QEMUs' EXITS/S to read, read-only (default\n"
	       "                  qemu:///system); each refresh waits at most 0.75 s for it\n"
	       "  --batch         plain frames on stdout, one per refresh, the first after one interval\n"
	       "                  (also what top prints when stdout is not a terminal)\n"
	       "  --iterations N  stop after N frames\n"
	       "  --json          with --batch: one JSON document per frame, one a line\n"
	       "\n"
	       "--batch frame: '# vmhost top time_unix=T interval_seconds=S seconds=S vms=N exact=no\n"
	       "skipped=N', '# host mem_total_bytes=B mem_available_bytes=B ksm_saved_bytes=B\n"
	       "ksmd_cpu_percent=P', a heading 'kind pid vm_pid name cpu delay rss pss ksm overhead exits\n"
	       "cgroup mempsi cpupsi iopsi cost ksmd read write netrx nettx poll', a line per VM (kind vm) and\n"
	       "helper (kind helper, vm_pid its VM's), then an empty line. Fields are separated by one tab;\n"
	       "bytes in bytes, percent and rates with one decimal, n/a unknown. --json adds\n"
	       "vcpu_wait_percent, the deprecated name of vcpu_delay_percent (for one release).\n"
	       "See docs/top.md.\n",
	       KVM_PACE_INTERVAL_SECONDS);
}

static int opt_sort(struct ctx *ctx, void *opts, const char *arg)
{
	if (top_col_parse(arg, &((struct top_opts *)opts)->sort) < 0)
		return usage_error(ctx, "--sort takes a column (name, cpu, delay, rss, pss, ksm, overhead, exits,"
					" cgroup, mempsi, cpupsi, iopsi, cost, ksmd,"
					" read, write, netrx, nettx, poll, pid), not '%s'", arg);
	return EXIT_OK;
}

static int opt_filter(struct ctx *ctx, void *opts, const char *arg)
{
	struct top_opts *o = opts;
	if (strlen(arg) >= sizeof(o->filter))
		return usage_error(ctx, "--filter takes at most %d characters", FILTER_MAX - 1);
	snprintf(o->filter, sizeof(o->filter), "%s", arg);
	return EXIT_OK;
}

static const struct opt top_opt_table[] = {
	{OPT("interval", 'i', OPT_SECONDS), OPT_AT(struct top_opts, interval_seconds),
	 .error = "--interval takes seconds (e.g. 1, 0.5), not '%s'"},
	{OPT("sort", 's', OPT_CALL), .call = opt_sort},
	{OPT("reverse", 'r', OPT_FLAG), OPT_AT(struct top_opts, reverse)},
	{OPT("filter", 'f', OPT_CALL), .call = opt_filter},
	{OPT("batch", 'b', OPT_FLAG), OPT_AT(struct top_opts, batch)},
	{OPT("libvirt-uri", 'U', OPT_STRING), OPT_AT(struct top_opts, libvirt_uri)},
	{OPT("kvm-interval", 'K', OPT_SECONDS0), OPT_AT(struct top_opts, kvm_interval),
	 .error = "--kvm-interval takes seconds (0: every refresh), not '%s'"},
	{OPT("iterations", 'n', OPT_COUNT), OPT_AT(struct top_opts, iterations),
	 .error = "--iterations takes a positive number, not '%s'"},
	{OPT("help", 'h', OPT_HELP)},
};

/* The options together. */
static int top_check(struct ctx *ctx, void *opts, int argc, char **argv)
{
	(void)argc, (void)argv;
	struct top_opts *o = opts;
	if (ctx->format == OUT_CSV)
		return usage_error(ctx, "--csv is not a form of top: --batch prints tab-separated frames");
	if (ctx->format == OUT_JSON && !o->batch)
		return usage_error(ctx, "--json goes with --batch (one JSON document per frame)");
	return EXIT_OK;
}

static const struct opts_spec top_spec = OPTS_SPEC_CHECKED(top_opt_table, OPTS_HELP_ANYWAY, top_help, top_check);

static int reading_failed(const struct ctx *ctx, int r, enum survey_step step)
{
	if (step == SURVEY_HOST)
		return fail(ctx, EXIT_FAIL, "reading host memory", "%s/meminfo: %s", ctx->root.proc, strerror(-r));
	return fail(ctx, EXIT_FAIL, "listing processes", "%s: %s", ctx->root.proc, strerror(-r));
}

/* The next reading and the view it gives with the last one; the last becomes this one. */
static int refresh(struct top_source *src, bool exact, struct top_reading *last, struct top_view *view,
		   enum survey_step *step)
{
	struct top_reading now;
	int r = top_reading_take(src, last, exact, &now, step);
	if (r < 0)
		return r;
	struct top_view v;
	if ((r = top_view_build(last, &now, &v)) < 0) {
		top_reading_free(&now);
		*step = SURVEY_PROCESSES;
		return r;
	}
	top_reading_free(last);
	*last = now;
	top_view_free(view);
	*view = v;
	return 0;
}

static int batch_mode(struct ctx *ctx, const struct top_opts *o, struct top_source *src)
{
	struct top_reading last;
	struct top_view view = {0};
	enum survey_step step;
	int r = top_reading_take(src, NULL, false, &last, &step);
	if (r < 0)
		return reading_failed(ctx, r, step);
	int rc = EXIT_OK;
	bool libvirt_said = false; /* once while libvirt cannot be asked, not every frame */
	for (long frames = 0; !o->iterations || frames < o->iterations; frames++) {
		if (!sleep_until(last.monotonic_seconds + o->interval_seconds))
			break;
		if ((r = refresh(src, false, &last, &view, &step)) < 0) {
			rc = reading_failed(ctx, r, step);
			break;
		}
		const char *libvirt_why = top_source_libvirt_why(src);
		if (libvirt_why[0] && !libvirt_said)
			warn(ctx, "%s", libvirt_why);
		libvirt_said = libvirt_why[0];
		size_t *order = malloc((view.nrows ? view.nrows : 1) * sizeof(*order));
		if (!order) {
			rc = fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
			break;
		}
		size_t n = top_view_order(&view, o->sort, o->reverse, o->filter, order);
		if (ctx->format == OUT_JSON)
			top_view_batch_json(stdout, &view, order, n, clock_wall_seconds(), o->interval_seconds);
		else
			top_view_batch(stdout, &view, order, n, clock_wall_seconds(), o->interval_seconds);
		free(order);
	}
	top_view_free(&view);
	top_reading_free(&last);
	return rc;
}

/* ---- the live view ---- */

enum action { ACT_NONE, ACT_DRAW, ACT_EXACT, ACT_QUIT };

struct ui {
	struct top_opts *o;
	bool editing;
	const struct term *term;
	size_t cols;
};

/* Moves the sort column by step among the columns on screen. */
static void move_sort(struct ui *u, int step)
{
	enum top_col shown[TOP_NCOLS];
	size_t n = top_view_columns(u->cols, shown), at = 0;
	for (size_t i = 0; i < n; i++)
		if (shown[i] == u->o->sort)
			at = i;
	u->o->sort = shown[(at + n + (size_t)(step > 0 ? 1 : n - 1)) % n];
}

static enum action filter_key(struct ui *u, int key)
{
	size_t len = strlen(u->o->filter);
	if (key == '\r' || key == '\n') {
		u->editing = false;
	} else if (key == 27) {
		u->editing = false;
		u->o->filter[0] = '\0';
	} else if ((key == 127 || key == 8) && len) {
		u->o->filter[len - 1] = '\0';
	} else if (key >= ' ' && key < 127 && len + 1 < sizeof(u->o->filter)) {
		u->o->filter[len] = (char)key;
		u->o->filter[len + 1] = '\0';
	}
	return ACT_DRAW;
}

static enum action on_key(struct ui *u, int key)
{
	if (key == 27) { /* an arrow key (ESC [ C / D, or ESC O C / D in cursor-key mode), or Esc alone */
		int k1 = term_key(u->term, 20), k2 = k1 == '[' || k1 == 'O' ? term_key(u->term, 20) : 0;
		if ((k2 == 'C' || k2 == 'D') && !u->editing)
			key = k2 == 'C' ? '>' : '<';
		else if (!u->editing || k1 > 0)
			return ACT_NONE; /* a key sequence, or an arrow while typing a filter: nothing to type */
	}
	if (u->editing)
		return filter_key(u, key);
	switch (key) {
	case 'q': case 'Q': return ACT_QUIT;
	case '>': case 'o': move_sort(u, 1); return ACT_DRAW;
	case '<': move_sort(u, -1); return ACT_DRAW;
	case 'r': u->o->reverse = !u->o->reverse; return ACT_DRAW;
	case '/': u->editing = true; return ACT_DRAW;
	case 'e': return ACT_EXACT;
	default: return ACT_NONE;
	}
}

/* The VMs of the first rows of order (as many as the terminal has lines, 0: all) are what the
 * next readings read afresh every time (top_source_visible); the rest a slice at a time. */
static void show_only(struct top_source *src, const struct top_view *v, const size_t *order, size_t n, size_t rows)
{
	pid_t *pids = malloc((n ? n : 1) * sizeof(*pids));
	size_t k = 0;
	for (size_t i = 0; pids && i < n && (!rows || i < rows); i++)
		if (!v->rows[order[i]].helper)
			pids[k++] = v->rows[order[i]].pid;
	if (pids)
		top_source_visible(src, pids, k);
	free(pids);
}

static int draw(const struct ctx *ctx, const struct ui *u, const struct top_view *v, struct top_source *src,
		size_t rows)
{
	size_t *order = malloc((v->nrows ? v->nrows : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	size_t n = top_view_order(v, u->o->sort, u->o->reverse, u->o->filter, order);
	show_only(src, v, order, n, rows);
	const char *no_color = getenv("NO_COLOR");
	struct top_frame fr = {
		.now_unix = clock_wall_seconds(), .interval_seconds = u->o->interval_seconds, .cols = u->cols, .rows = rows,
		.full_screen = u->term->tty_out, .colour = u->term->tty_out && !(no_color && *no_color),
		.keys = u->term->tty_in, .sort = u->o->sort, .reverse = u->o->reverse, .filter = u->o->filter,
		.editing = u->editing, .exits_why = top_source_exits_why(src), .exits_note = top_source_exits_note(src),
	};
	(void)ctx;
	top_view_frame(stdout, v, order, n, &fr);
	free(order);
	return 0;
}

/* SIGWINCH only has to wake the wait for a key (no SA_RESTART): the loop then redraws. */
static void on_resize(int sig) { (void)sig; }

static int live_mode(struct ctx *ctx, struct top_opts *o, struct top_source *src)
{
	struct top_reading last = {0};
	struct top_view view = {0};
	enum survey_step step;
	int r = top_reading_take(src, NULL, false, &last, &step);
	if (r < 0)
		return reading_failed(ctx, r, step);
	if ((r = top_view_build(NULL, &last, &view)) < 0) {
		top_reading_free(&last);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(-r));
	}
	struct sigaction sa = {.sa_handler = on_resize}, ign = {.sa_handler = SIG_IGN}, quit = {.sa_handler = stop_handler};
	sigemptyset(&sa.sa_mask);
	sigemptyset(&ign.sa_mask);
	sigemptyset(&quit.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGTSTP, &ign, NULL); /* a suspended view would leave the terminal raw */
	sigaction(SIGQUIT, &quit, NULL);
	struct term term;
	term_enter(&term);
	struct ui u = {.o = o, .term = &term};
	size_t rows;
	int rc = EXIT_OK;
	long frames = 0;
	double next = last.monotonic_seconds + o->interval_seconds;
	enum action act = ACT_DRAW;
	while (!stop_requested()) {
		if (act == ACT_EXACT || clock_monotonic_seconds() >= next) {
			if ((r = refresh(src, act == ACT_EXACT, &last, &view, &step)) < 0) {
				term_leave(&term);
				rc = reading_failed(ctx, r, step);
				goto out;
			}
			next = last.monotonic_seconds + o->interval_seconds;
			act = ACT_DRAW;
			frames++;
		}
		if (act == ACT_DRAW) {
			term_size(&term, &u.cols, &rows);
			if (draw(ctx, &u, &view, src, rows) < 0) {
				term_leave(&term);
				rc = fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
				goto out;
			}
			if (o->iterations && frames >= o->iterations)
				break;
		}
		double left = next - clock_monotonic_seconds();
		int key = term_key(&term, left > 0 ? (int)(left * 1000) + 1 : 0);
		act = key == -EINTR ? ACT_DRAW : key > 0 ? on_key(&u, key) : ACT_NONE;
		if (act == ACT_QUIT)
			break;
	}
	term_leave(&term);
out:
	top_view_free(&view);
	top_reading_free(&last);
	return rc;
}

int cmd_top(struct ctx *ctx, int argc, char **argv)
{
	struct top_opts o = {.interval_seconds = 1.0, .sort = TOP_CPU, .kvm_interval = KVM_PACE_INTERVAL_SECONDS};
	int rc = opts_parse(ctx, &top_spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	struct top_source *src;
	if (top_source_open(&ctx->root, &src) < 0)
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	top_source_pace(src, o.kvm_interval);
	top_source_libvirt(src, o.libvirt_uri);
	stop_clear();
	stop_catch(false);
	rc = o.batch || !isatty(STDOUT_FILENO) ? batch_mode(ctx, &o, src) : live_mode(ctx, &o, src);
	top_source_close(src);
	return rc;
}
