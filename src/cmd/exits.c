/* vmhost exits: KVM exit and event counters per VM (kvm_stat's debugfs mode, without the fuzz). */
#include <errno.h>
#include <getopt.h> /* optind: the command after -- */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "core/base/stop.h"
#include "core/kvm/kvm_delta.h"
#include "core/kvm/kvm_watch.h"
#include "core/kvm/kvm_pace.h"
#include "io/mountns.h"
#include "io/term.h"
#include "out/kvm_view.h"

#define MAX_FILTERS 64
#define LOG_HEADER_EVERY 20

enum exits_mode { MODE_LIVE, MODE_ONCE, MODE_LOG, MODE_COMMAND };

struct exits_opts {
	enum exits_mode mode;
	double interval_seconds;
	const char *vm_names[MAX_FILTERS];
	size_t nvm_names;
	pid_t pids[MAX_FILTERS];
	size_t npids;
	regex_t fields;
	bool have_fields;
	long count; /* refreshes before stopping (live, log); 0 = until interrupted */
	bool reasons; /* count exit reasons by tracepoints */
	bool reasons_time; /* and time them (eBPF) */
	bool vcpu;    /* and every counter per vCPU */
	pid_t qmp_pids[MAX_FILTERS]; /* --qmp-socket PID=PATH */
	const char *qmp_paths[MAX_FILTERS];
	size_t nqmp;
	const char *libvirt_uri; /* --libvirt-uri; NULL: qemu:///system */
	double kvm_interval;     /* --kvm-interval: a QEMU 7.1-8.0's vCPU statistics at most this often */
	char **command;
	bool once, log; /* as given; mode says which runs */
	struct kvm_watch watch; /* the above for the KVM reader */
};

/* ---- options ---- */

static void exits_help(void)
{
	printf("usage: vmhost exits [--once|--log] [--interval SEC] [--count N] [--vm NAME]... [--pid PID]...\n"
	       "                    [--fields REGEX] [--reasons] [--reasons-time] [--vcpu] [--qmp-socket PID=PATH]...\n"
	       "                    [--libvirt-uri URI] [--kvm-interval SEC] [--json|--csv] [-- CMD ARGS...]\n"
	       "\n"
	       "KVM exit and event counters, per VM and in total, from debugfs (<sys-root>/kernel/debug/kvm)\n"
	       "or, for QEMU VMs whose debugfs counters are closed or missing, from QMP query-stats, and\n"
	       "for those whose monitor libvirt holds, from libvirt's domain statistics (source libvirt).\n"
	       "Any process holding a KVM VM is a VM (vmm kvm when its VMM is not one vmhost knows).\n"
	       "Files stay open and are re-read with one pread each; VMs are named by pid (exact match).\n"
	       "Where the host has not mounted debugfs (nor, with --reasons, tracefs), vmhost as root\n"
	       "mounts it for this run alone: a mount no other process sees (a detached mount; before\n"
	       "Linux 5.2 a private mount namespace's), gone when vmhost exits, the host's mounts\n"
	       "unchanged; a line says so (JSON \"private_mounts\"). Without CAP_SYS_ADMIN it reads only\n"
	       "what the host mounted.\n"
	       "\n"
	       "  (default)        live view every --interval: full screen on a terminal, sorted by rate;\n"
	       "                   q or Ctrl-C quits\n"
	       "  --once           two reads --interval apart, then print (like kvm_stat -1)\n"
	       "  --log            one line per interval with the deltas, header repeated; --csv for CSV,\n"
	       "                   --json for one JSON document per line\n"
	       "  -- CMD ARGS...   run CMD, then print the deltas over its run, its wall time and exit\n"
	       "                   status; vmhost exits with CMD's status (under --json CMD's stdout goes\n"
	       "                   to stderr so stdout stays one JSON document)\n"
	       "  --interval SEC   seconds between reads (default 1)\n"
	       "  --count N        stop after N refreshes (live view, --log)\n"
	       "  --vm NAME        only this VM (exact name; repeatable)\n"
	       "  --pid PID        only the VM of this process (exact pid; repeatable)\n"
	       "  --fields REGEX   only counters whose name matches (extended regex, unanchored as in\n"
	       "                   kvm_stat -f: use ^exits$ for one)\n"
	       "  --reasons        also count exits by reason from tracepoints (kvm_exit, kvm_userspace_exit,\n"
	       "                   kvm_pio per port, kvm_mmio): rows kvm_pio/0x80 out ...; counted in the\n"
	       "                   kernel by eBPF (root, or CAP_BPF and CAP_PERFMON; needs tracefs), else by\n"
	       "                   perf filters (a third of an exit-bound guest's exits); a line says which\n"
	       "  --reasons-time   --reasons, and the time per exit reason (eBPF only): JSON seconds, count,\n"
	       "                   histogram per VM and reason, a MEAN TIME column. kvm_userspace_exit: from\n"
	       "                   the exit to the thread's next KVM_RUN (the VMM's handling and any wait for\n"
	       "                   a CPU), on any host. kvm_exit: to the thread's next kvm_entry, only on hosts\n"
	       "                   that fire both (bare metal, ordinary nested KVM; never KVM nested on PVM).\n"
	       "                   Hooks every ioctl on the host: about a tenth of an exit-bound guest's exits\n"
	       "  --vcpu           also every counter per vCPU (JSON \"vcpus\"; a line of exits/s per vCPU);\n"
	       "                   with --reasons counted by eBPF, each vCPU's reasons too (its thread: QEMU's\n"
	       "                   \"CPU N/KVM\" and the like by name, other VMMs' threads with exits in order\n"
	       "                   of thread id) and a line of each vCPU's busiest reason\n"
	       "  --qmp-socket PID=PATH  the QMP socket of that QEMU where its command line has none\n"
	       "  --libvirt-uri URI  libvirt to ask, read-only (default qemu:///system); each read waits\n"
	       "                   at most 0.75 s for it: a hung libvirtd costs that and a reason\n"
	       "  --kvm-interval SEC  live view and --log: read a QEMU 7.1-8.0 (QMP or libvirt) at most\n"
	       "                   this often (default %g; 0: every refresh), its last figures (rates\n"
	       "                   over the time between its reads) shown in between. Those QEMUs answer\n"
	       "                   vCPU query-stats by interrupting every vCPU; measured here, even ~100\n"
	       "                   reads a second cost a guest no vCPU time we could see (within 3%%):\n"
	       "                   at one a second at most 0.03%% (docs/exits.md). QEMU 8.1 and later\n"
	       "                   are never held\n"
	       "\n"
	       "Counters ending in _ns are times: shown as seconds and as percent of the interval\n"
	       "(of one CPU; vCPUs add up). Gauges (pages_4k, mmu_unsync, ...) show their value.\n"
	       "A counter that went down was reset (cleared, or KVM reloaded): shown as 'reset', never as\n"
	       "a negative rate. Needs root; see docs/exits.md.\n",
	       KVM_PACE_INTERVAL_SECONDS);
}

static int opt_vm(struct ctx *ctx, void *opts, const char *arg)
{
	struct exits_opts *o = opts;
	if (o->nvm_names == MAX_FILTERS)
		return usage_error(ctx, "too many --vm options");
	o->vm_names[o->nvm_names++] = arg;
	return EXIT_OK;
}

static int opt_pid(struct ctx *ctx, void *opts, const char *arg)
{
	struct exits_opts *o = opts;
	return opt_pid_add(ctx, arg, o->pids, &o->npids, MAX_FILTERS, "too many --pid options");
}

static int opt_fields(struct ctx *ctx, void *opts, const char *arg)
{
	struct exits_opts *o = opts;
	return opt_regex_once(ctx, "--fields", arg, &o->fields, &o->have_fields);
}

static int opt_qmp_socket(struct ctx *ctx, void *opts, const char *arg)
{
	struct exits_opts *o = opts;
	if (o->nqmp == MAX_FILTERS || arg_pid_path(arg, &o->qmp_pids[o->nqmp], &o->qmp_paths[o->nqmp]) < 0)
		return usage_error(ctx, "--qmp-socket takes PID=PATH (at most %d), not '%s'", MAX_FILTERS, arg);
	o->nqmp++;
	return EXIT_OK;
}

static const struct opt exits_opt_table[] = {
	{OPT("once", '1', OPT_FLAG), OPT_AT(struct exits_opts, once)},
	{OPT("log", 'l', OPT_FLAG), OPT_AT(struct exits_opts, log)},
	{OPT("interval", 'i', OPT_SECONDS), OPT_AT(struct exits_opts, interval_seconds),
	 .error = "--interval takes seconds (e.g. 1, 0.5), not '%s'"},
	{OPT("count", 'n', OPT_COUNT), OPT_AT(struct exits_opts, count), .error = "--count takes a positive number, not '%s'"},
	{OPT("vm", 'g', OPT_CALL), .call = opt_vm},
	{OPT("pid", 'p', OPT_CALL), .call = opt_pid},
	{OPT("fields", 'f', OPT_CALL), .call = opt_fields},
	{OPT("reasons", 'r', OPT_FLAG), OPT_AT(struct exits_opts, reasons)},
	{OPT("reasons-time", 'T', OPT_FLAG), OPT_AT(struct exits_opts, reasons_time)},
	{OPT("vcpu", 'V', OPT_FLAG), OPT_AT(struct exits_opts, vcpu)},
	{OPT("qmp-socket", 'Q', OPT_CALL), .call = opt_qmp_socket},
	{OPT("libvirt-uri", 'U', OPT_STRING), OPT_AT(struct exits_opts, libvirt_uri)},
	{OPT("kvm-interval", 'K', OPT_SECONDS0), OPT_AT(struct exits_opts, kvm_interval),
	 .error = "--kvm-interval takes seconds (0: every refresh), not '%s'"},
	{OPT("help", 'h', OPT_HELP)},
};

/* The command after --, and the mode. */
static int exits_check(struct ctx *ctx, void *opts, int argc, char **argv)
{
	struct exits_opts *o = opts;
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0)
			return usage_error(ctx, "unexpected argument '%s' (a command to measure goes after --)", argv[optind]);
		o->command = argv + optind;
	} else if (optind > 1 && !strcmp(argv[optind - 1], "--")) {
		return usage_error(ctx, "-- must be followed by a command to run");
	}
	if (o->once + o->log + (o->command != NULL) > 1)
		return usage_error(ctx, "--once, --log and -- CMD are different modes: pick one");
	o->mode = o->command ? MODE_COMMAND : o->once ? MODE_ONCE : o->log ? MODE_LOG : MODE_LIVE;
	if (ctx->format == OUT_CSV && o->mode != MODE_LOG)
		return usage_error(ctx, "--csv goes with --log (one row per interval)");
	if (ctx->format == OUT_JSON && o->mode == MODE_LIVE)
		o->mode = MODE_ONCE; /* one JSON document: the --once reading */
	return EXIT_OK;
}

static const struct opts_spec exits_spec =
	OPTS_SPEC_CHECKED(exits_opt_table, OPTS_REST | OPTS_HELP_ANYWAY, exits_help, exits_check);

/* Sleeps until the deadline (CLOCK_MONOTONIC seconds) or a stop; returns 'q' when q was typed on
 * the live view's terminal (t NULL: no keys). */
static int wait_key_until(const struct term *t, double deadline)
{
	static const struct term none;
	while (!stop_requested()) {
		double left = deadline - clock_monotonic_seconds();
		if (left <= 0)
			return 0;
		int key = term_key(t ? t : &none, (int)(left * 1000) + 1);
		if (key == 'q' || key == 'Q')
			return 'q';
	}
	return 0;
}

/* ---- running things: the test hook and -- CMD ---- */

/* Test-only: VMHOST_EXITS_TEST_HOOK is a shell command run after read N (given as $1), so tests
 * can change counter files between reads without racing the interval. */
static void test_hook(unsigned read_no) { cmd_test_hook("VMHOST_EXITS_TEST_HOOK", read_no); }

/* ---- the modes ---- */

static int read_failed(const struct ctx *ctx, int r)
{
	if (r == -EACCES || r == -EPERM)
		return fail(ctx, EXIT_NOPERM, "reading KVM counters", "%s", kvm_avail_hint(KVM_DENIED));
	if (r == -ENOENT)
		return fail(ctx, EXIT_FAIL, "reading KVM counters", "%s/kernel/debug/kvm went away (KVM unloaded?)",
			    ctx->root.sys);
	return fail(ctx, EXIT_FAIL, "reading KVM counters", "%s", strerror(-r));
}

static int no_match(const struct ctx *ctx, const struct exits_opts *o, const struct kvm_sample *b)
{
	char want[512] = "", have[1024] = "";
	size_t n = 0;
	for (size_t i = 0; i < o->nvm_names && n < sizeof(want); i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%s--vm %s", n ? " " : "", o->vm_names[i]);
	for (size_t i = 0; i < o->npids && n < sizeof(want); i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%s--pid %d", n ? " " : "", (int)o->pids[i]);
	n = 0;
	for (size_t v = 0; v < b->nvms && n < sizeof(have); v++) {
		char label[64];
		kvm_vm_label(label, sizeof(label), &b->vms[v]);
		n += (size_t)snprintf(have + n, sizeof(have) - n, "%s%s", n ? ", " : "", label);
	}
	return fail(ctx, EXIT_FAIL, "no such VM", "nothing matches %s (VMs with KVM counters: %s)", want,
		    b->nvms ? have : "none");
}

static int one_reading(struct ctx *ctx, const struct exits_opts *o, struct kvm_reader *kr)
{
	struct kvm_sample a, b;
	int r = kvm_reader_sample(kr, &a);
	if (r < 0)
		return read_failed(ctx, r);
	test_hook(1);
	int rc = EXIT_OK, cmd_status = 0;
	double wall = 0;
	if (o->mode == MODE_COMMAND) {
		cmd_status = kvm_watch_command(kr, o->command, ctx->format == OUT_JSON, &wall);
		if (cmd_status < 0) {
			kvm_sample_free(&a);
			return fail(ctx, 127, "running the command", "%s: %s", o->command[0], strerror(-cmd_status));
		}
	} else {
		wait_key_until(NULL, a.monotonic_seconds + o->interval_seconds);
		if (stop_requested()) {
			kvm_sample_free(&a);
			return 128 + stop_requested();
		}
	}
	r = kvm_reader_sample(kr, &b);
	if (r < 0) {
		kvm_sample_free(&a);
		return read_failed(ctx, r);
	}
	struct kvm_delta rep;
	if (kvm_watch_delta(kr, &o->watch, &a, &b, &rep) < 0) {
		kvm_sample_free(&a);
		kvm_sample_free(&b);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	if (rep.filtered && !rep.nvms && !rep.ngone) {
		rc = no_match(ctx, o, &b);
		goto out;
	}
	struct kvm_command_run run = {o->command, cmd_status, wall}, *cmd = o->mode == MODE_COMMAND ? &run : NULL;
	if (ctx->format == OUT_JSON)
		kvm_view_once_json(stdout, kr, &rep, cmd);
	else
		kvm_view_once(stdout, kr, &rep, o->have_fields, cmd);
	if (o->mode == MODE_COMMAND)
		rc = cmd_status;
out:
	kvm_delta_free(&rep);
	kvm_sample_free(&a);
	kvm_sample_free(&b);
	return rc;
}

static int log_mode(struct ctx *ctx, const struct exits_opts *o, struct kvm_reader *kr)
{
	struct kvm_sample a, b;
	int r = kvm_reader_sample(kr, &a);
	if (r < 0)
		return read_failed(ctx, r);
	test_hook(1);
	bool csv = ctx->format == OUT_CSV, json = ctx->format == OUT_JSON;
	int rc = EXIT_OK;
	long lines = 0;
	for (unsigned read_no = 2; !stop_requested() && (!o->count || lines < o->count); read_no++) {
		wait_key_until(NULL, a.monotonic_seconds + o->interval_seconds);
		if (stop_requested())
			break;
		if ((r = kvm_reader_sample(kr, &b)) < 0) {
			rc = read_failed(ctx, r);
			break;
		}
		struct kvm_delta rep;
		struct kvm_log_cols cols = {0};
		if (kvm_watch_delta(kr, &o->watch, &a, &b, &rep) < 0 || kvm_log_columns(kr, &rep, o->have_fields, &cols) < 0) {
			kvm_sample_free(&b);
			rc = fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
			break;
		}
		if (json) {
			kvm_log_json(stdout, kr, &rep, clock_wall_seconds());
		} else {
			if (csv ? lines == 0 : lines % LOG_HEADER_EVERY == 0)
				kvm_log_header(stdout, kr, &rep, &cols, csv);
			kvm_log_line(stdout, kr, &rep, &cols, csv, clock_wall_seconds());
			if (!csv)
				kvm_view_notes(stderr, &rep, "");
		}
		lines++;
		free(cols.sel_pos);
		kvm_delta_free(&rep);
		kvm_sample_free(&a);
		a = b;
		test_hook(read_no);
	}
	kvm_sample_free(&a);
	return rc;
}

/* ---- the live view ---- */

static int live_mode(struct ctx *ctx, const struct exits_opts *o, struct kvm_reader *kr)
{
	struct kvm_sample a, b;
	int r = kvm_reader_sample(kr, &a);
	if (r < 0)
		return read_failed(ctx, r);
	test_hook(1);
	struct term term;
	term_enter(&term);
	int rc = EXIT_OK;
	long frames = 0;
	for (unsigned read_no = 2; !stop_requested() && (!o->count || frames < o->count); read_no++) {
		if (wait_key_until(&term, a.monotonic_seconds + o->interval_seconds) == 'q' || stop_requested())
			break;
		if ((r = kvm_reader_sample(kr, &b)) < 0) {
			term_leave(&term);
			kvm_sample_free(&a);
			return read_failed(ctx, r);
		}
		struct kvm_delta rep;
		if (kvm_watch_delta(kr, &o->watch, &a, &b, &rep) < 0) {
			kvm_sample_free(&b);
			rc = EXIT_FAIL;
			break;
		}
		size_t cols, rows;
		term_size(&term, &cols, &rows);
		struct kvm_frame fr = {clock_wall_seconds(), o->interval_seconds, cols, rows, term.tty_out, term.tty_in,
				       o->have_fields};
		kvm_view_frame(stdout, kr, &rep, &fr);
		frames++;
		kvm_delta_free(&rep);
		kvm_sample_free(&a);
		a = b;
		test_hook(read_no);
	}
	term_leave(&term);
	kvm_sample_free(&a);
	return rc;
}

/* The KVM reader for the options, on root, then the mode. */
static int watch_on(struct ctx *ctx, struct exits_opts *o, const struct io_root *root)
{
	struct kvm_reader *kr = NULL;
	enum kvm_avail why;
	char qmp_why[400] = "";
	o->watch = (struct kvm_watch){
		.vm_names = o->vm_names, .nvm_names = o->nvm_names, .pids = o->pids, .npids = o->npids,
		.fields = o->have_fields ? &o->fields : NULL,
		.read_flags = KVM_READ_QMP | (o->reasons ? KVM_READ_REASONS : 0) | (o->reasons_time ? KVM_READ_REASON_TIMES : 0) |
			      (o->vcpu ? KVM_READ_VCPUS : 0),
		.qmp_pids = o->qmp_pids, .qmp_paths = o->qmp_paths, .nqmp = o->nqmp, .libvirt_uri = o->libvirt_uri,
		.pace_seconds = o->mode == MODE_LIVE || o->mode == MODE_LOG ? o->kvm_interval : -1, /* two reads: never */
		/* -- CMD with --reasons counts the command by tracepoints, whatever debugfs and QMP give. */
		.probe = !(o->reasons && o->mode == MODE_COMMAND),
	};
	int r = kvm_watch_open(root, &o->watch, &kr, &why, qmp_why, sizeof(qmp_why)), rc = EXIT_OK;
	if (r < 0) {
		if (why == KVM_DENIED)
			return fail(ctx, EXIT_NOPERM, "reading KVM counters", "%s%s", kvm_avail_hint(why), qmp_why);
		if (r == -ENOENT)
			return fail(ctx, EXIT_FAIL, "no KVM counters",
				    "%s (looked in %s/kernel/debug/kvm), and no QEMU VM gave them through QMP or libvirt%s",
				    kvm_avail_hint(why), ctx->root.sys, qmp_why);
		return fail(ctx, EXIT_FAIL, "reading KVM counters", "%s", strerror(-r));
	}
	if (!kvm_reader_has_debugfs(kr))
		warn(ctx, "%s; reading the VMs through their QMP sockets", kvm_avail_hint(why));
	stop_clear();
	stop_catch(false);
	switch (o->mode) {
	case MODE_ONCE:
	case MODE_COMMAND: rc = one_reading(ctx, o, kr); break;
	case MODE_LOG: rc = log_mode(ctx, o, kr); break;
	case MODE_LIVE: rc = live_mode(ctx, o, kr); break;
	}
	kvm_reader_close(kr);
	return rc;
}

/* debugfs, and for --reasons tracefs, mounted for this run alone where the host has not mounted
 * them (as root; the host's mounts stay as they are), then the watch. */
static int watch(struct ctx *ctx, struct exits_opts *o)
{
	struct io_root root = ctx->root;
	struct io_private_mounts mounts;
	o->reasons |= o->reasons_time;
	io_mount_private(&root, IO_DEBUGFS | (o->reasons ? IO_TRACEFS : 0), &mounts);
	int rc = watch_on(ctx, o, &root);
	io_private_mounts_close(&mounts);
	return rc;
}

int cmd_exits(struct ctx *ctx, int argc, char **argv)
{
	struct exits_opts o = {.interval_seconds = 1.0, .kvm_interval = KVM_PACE_INTERVAL_SECONDS};
	int rc = opts_parse(ctx, &exits_spec, argc, argv, &o);
	if (rc == OPTS_GO)
		rc = watch(ctx, &o);
	if (o.have_fields)
		regfree(&o.fields);
	return rc;
}
