/* vmhost serve: Prometheus metrics on /metrics (docs/serve.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "net/serve_cache.h"
#include "net/serve_http.h"
#include "store/store.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9464"
#define SERVE_MAX_PIDS 256
#define SERVE_DB_KVM_SECONDS 60 /* --db: KVM counters at most this often (vmhost record's default) */

struct serve_opts {
	const char *listen;
	bool listen_given;
	double min_interval;
	pid_t pids[SERVE_MAX_PIDS];
	size_t npids;
	unsigned max_connections, timeout_seconds, threads;
	const char *db;
	double db_interval;
	bool no_kvm;
	regex_t kvm_events;
	bool have_kvm_events;
};

static void serve_help(void)
{
	printf("usage: vmhost serve [--listen ADDR:PORT] [--min-interval SEC] [--pid PID]... [--db FILE]\n"
	       "                    [--max-connections N] [--timeout SEC] [--threads N]\n"
	       "\n"
	       "Prometheus metrics on http://ADDR:PORT/metrics: host memory, KSM, ksmd CPU, and per-VM\n"
	       "memory (RSS by type, PSS, swap, KSM merged and profit, VMM overhead), and KVM's event and\n"
	       "time counters per VM where debugfs is readable. Text format 0.0.4;\n"
	       "OpenMetrics 1.0 when the Accept header asks for it. Metric names: docs/serve.md.\n"
	       "\n"
	       "  --listen ADDR:PORT   where to listen (default " SERVE_DEFAULT_LISTEN ", loopback only);\n"
	       "                       [::1]:PORT for IPv6, :PORT for every address. Under systemd socket\n"
	       "                       activation (LISTEN_FDS) the passed socket is used instead\n"
	       "  --min-interval SEC   gather at most once per SEC (default 1); scrapes inside it share\n"
	       "                       one snapshot; 0 gathers on every scrape\n"
	       "  --pid PID            also watch this process, VM or not (repeatable)\n"
	       "  --db FILE            also record into this SQLite database (as vmhost record does; one\n"
	       "                       writer per database), whether or not anyone scrapes\n"
	       "  --db-interval SEC    record at most this often (default 10)\n"
	       "  --kvm-events REGEX   export only the KVM counters whose kernel name matches (extended\n"
	       "                       regex, unanchored: 'exits|halt_wait_ns'); default all of them\n"
	       "  --no-kvm             do not read KVM's debugfs counters at all\n"
	       "  --max-connections N  open connections at most (default 64); more wait in the backlog\n"
	       "  --timeout SEC        close a connection idle this long (default 10, whole seconds)\n"
	       "  --threads N          worker threads (default 2)\n"
	       "\n"
	       "Only GET and HEAD are answered (405 otherwise). Stops on SIGINT or SIGTERM.\n");
}

static int parse_count(const char *s, unsigned lo, unsigned hi, unsigned *ret)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < (long)lo || v > (long)hi)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static int parse_serve_opts(struct ctx *ctx, int argc, char **argv, struct serve_opts *o, bool *help)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"min-interval", required_argument, NULL, 'i'},
		{"pid", required_argument, NULL, 'p'},
		{"db", required_argument, NULL, 'd'},
		{"db-interval", required_argument, NULL, 'D'},
		{"max-connections", required_argument, NULL, 'c'},
		{"timeout", required_argument, NULL, 't'},
		{"threads", required_argument, NULL, 'T'},
		{"kvm-events", required_argument, NULL, 'k'},
		{"no-kvm", no_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	args_reset();
	int c;
	while ((c = getopt_long(argc, argv, "+l:i:p:d:D:c:t:T:k:Kh", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o->listen = optarg;
			o->listen_given = true;
			break;
		case 'i': {
			char *end;
			errno = 0;
			double v = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(v) || v < 0 || v > 86400)
				return usage_error(ctx, "--min-interval takes seconds from 0 to 86400, not '%s'", optarg);
			o->min_interval = v;
			break;
		}
		case 'p': {
			int pid;
			if (arg_pid(optarg, &pid) < 0)
				return usage_error(ctx, "--pid takes a process id, not '%s'", optarg);
			if (o->npids == SERVE_MAX_PIDS)
				return usage_error(ctx, "too many --pid options (at most %d)", SERVE_MAX_PIDS);
			o->pids[o->npids++] = pid;
			break;
		}
		case 'd': o->db = optarg; break;
		case 'D':
			if (arg_seconds(optarg, &o->db_interval) < 0 || o->db_interval < 1 || o->db_interval > 86400)
				return usage_error(ctx, "--db-interval takes seconds from 1 to 86400, not '%s'", optarg);
			break;
		case 'c':
			if (parse_count(optarg, 1, 10000, &o->max_connections) < 0)
				return usage_error(ctx, "--max-connections takes a number from 1 to 10000, not '%s'", optarg);
			break;
		case 't':
			if (parse_count(optarg, 1, 3600, &o->timeout_seconds) < 0)
				return usage_error(ctx, "--timeout takes whole seconds from 1 to 3600, not '%s'", optarg);
			break;
		case 'T':
			if (parse_count(optarg, 1, 64, &o->threads) < 0)
				return usage_error(ctx, "--threads takes a number from 1 to 64, not '%s'", optarg);
			break;
		case 'k':
			if (o->have_kvm_events)
				return usage_error(ctx, "--kvm-events given twice (combine them: 'a|b')");
			if (regcomp(&o->kvm_events, optarg, REG_EXTENDED | REG_NOSUB) != 0)
				return usage_error(ctx, "--kvm-events: '%s' is not a valid extended regular expression",
						   optarg);
			o->have_kvm_events = true;
			break;
		case 'K': o->no_kvm = true; break;
		case 'h': *help = true; break;
		default:
			return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	return EXIT_OK;
}

/* The listening socket: systemd's when socket-activated, else our own on --listen. */
static int open_listener(struct ctx *ctx, const struct serve_opts *o, int *ret_fd)
{
	int fd = -1, r = serve_socket_activation(&fd);
	if (r == 0) {
		if (o->listen_given)
			warn(ctx, "socket-activated: --listen %s is ignored", o->listen);
		*ret_fd = fd;
		return EXIT_OK;
	}
	if (r != -ENOENT)
		return fail(ctx, EXIT_FAIL, "socket activation", "fd 3 is not a listening stream socket");
	struct sockaddr_storage addr;
	socklen_t len;
	if (serve_parse_listen(o->listen, &addr, &len) < 0)
		return usage_error(ctx, "--listen takes ADDR:PORT ([::1]:PORT for IPv6, :PORT for every address), not '%s'",
				   o->listen);
	fd = serve_bind(&addr, len);
	if (fd < 0)
		return fail(ctx, fd == -EACCES ? EXIT_NOPERM : EXIT_FAIL, "listening", "%s: %s", o->listen,
			    strerror(-fd));
	if (!serve_is_loopback(&addr))
		warn(ctx, "listening on %s: reachable from other hosts", o->listen);
	*ret_fd = fd;
	return EXIT_OK;
}

static int serve_run(struct ctx *ctx, struct serve_opts *o);

int cmd_serve(struct ctx *ctx, int argc, char **argv)
{
	struct serve_opts o = {.listen = SERVE_DEFAULT_LISTEN, .min_interval = 1, .max_connections = 64,
			       .timeout_seconds = 10, .threads = 2, .db_interval = 10};
	bool help = false;
	int rc = parse_serve_opts(ctx, argc, argv, &o, &help);
	if (rc == EXIT_OK && o.no_kvm && o.have_kvm_events)
		rc = usage_error(ctx, "--kvm-events and --no-kvm contradict each other");
	if (rc == EXIT_OK && help)
		serve_help();
	else if (rc == EXIT_OK)
		rc = serve_run(ctx, &o);
	if (o.have_kvm_events)
		regfree(&o.kvm_events);
	return rc;
}

/* --db: the cache's snapshots recorded at most once per --db-interval, from its hook (under the
 * cache's lock: a scrape that arrives during a write waits for it). The main thread wakes the
 * cache when no scrape did, so recording does not depend on scrapes. Errors as in vmhost record:
 * a full disk drops samples until there is room again; any other write error stops recording
 * (the server keeps serving); either makes the exit status 1. */
struct recorder {
	struct ctx *ctx;
	const char *path;
	struct store *store; /* NULL after a write error */
	double interval, min_interval;
	_Atomic double last;  /* monotonic seconds of the last recorded snapshot */
	atomic_bool recording; /* store is open (read by the main thread) */
	double last_kvm;
	unsigned long samples, dropped;
	bool full; /* in a disk-full episode */
	int error; /* the error that stopped recording, or the last disk-full one */
};

static void record_snapshot(void *cls, const struct snapshot *s, const struct kvm_reader *kvm,
			    const struct kvm_sample *ks)
{
	struct recorder *rec = cls;
	/* A snapshot taken up to min-interval before the wake-up is the one the wake-up gets. */
	if (!rec->store || s->monotonic_seconds - atomic_load(&rec->last) < rec->interval - rec->min_interval - 0.01)
		return;
	if (kvm && s->monotonic_seconds - rec->last_kvm >= SERVE_DB_KVM_SECONDS - rec->interval / 2)
		rec->last_kvm = s->monotonic_seconds;
	else
		kvm = NULL, ks = NULL;
	atomic_store(&rec->last, s->monotonic_seconds);
	int r = store_write_sample(rec->store, s, kvm, ks);
	if (r == -ENOSPC) {
		if (!rec->full)
			warn(rec->ctx, "%s: %s: samples are dropped until there is room again; the recorded ones are kept",
			     rec->path, store_strerror(r));
		rec->full = true;
		rec->dropped++;
		rec->error = r;
	} else if (r < 0) {
		warn(rec->ctx, "%s: %s: recording stopped (the samples before are kept); still serving", rec->path,
		     store_strerror(r));
		store_close(rec->store);
		rec->store = NULL;
		atomic_store(&rec->recording, false);
		rec->error = r;
	} else {
		if (rec->full)
			warn(rec->ctx, "%s: recording again", rec->path);
		rec->full = false;
		rec->samples++;
	}
}

/* Waits for SIGINT/SIGTERM; with a recorder, wakes the cache when a sample is due. */
static int wait_for_stop(const sigset_t *stop, struct serve_cache *cache, struct recorder *rec)
{
	for (;;) {
		if (!rec || !atomic_load(&rec->recording)) {
			int sig;
			if (sigwait(stop, &sig) == 0)
				return sig;
			continue;
		}
		double now = clock_monotonic_seconds(), due = atomic_load(&rec->last) + rec->interval;
		if (due <= now) {
			struct serve_body *b;
			if (serve_cache_get(cache, PROM_TEXT, &b) == 0)
				serve_body_unref(b);
			due = atomic_load(&rec->last) + rec->interval;
			if (due <= now) /* nothing recorded (the host could not be read): try again later */
				due = now + rec->interval;
		}
		double wait = due - now;
		struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
		int sig = sigtimedwait(stop, NULL, &ts);
		if (sig > 0)
			return sig;
	}
}

static int serve_serve(struct ctx *ctx, struct serve_opts *o, struct recorder *rec);

static int serve_run(struct ctx *ctx, struct serve_opts *o)
{
	struct recorder rec = {.ctx = ctx, .path = o->db, .interval = o->db_interval,
			       .min_interval = o->min_interval, .last = -INFINITY, .last_kvm = -INFINITY};
	if (o->db) {
		int r = store_open(o->db, &rec.store);
		if (r < 0)
			return fail(ctx, EXIT_FAIL, "opening the database", "%s: %s", o->db, store_strerror(r));
		atomic_init(&rec.recording, true);
	}
	int rc = serve_serve(ctx, o, o->db ? &rec : NULL);
	bool stopped = o->db && !rec.store;
	store_close(rec.store);
	if (rc == EXIT_OK && o->db && rec.error)
		rc = fail(ctx, EXIT_FAIL, "recording", "%s: %lu sample%s recorded, %lu dropped%s: %s", o->db, rec.samples,
			  rec.samples == 1 ? "" : "s", rec.dropped, stopped ? ", then stopped" : "",
			  store_strerror(rec.error));
	else if (rc == EXIT_OK && o->db)
		fprintf(stderr, "vmhost: serve: %lu sample%s recorded to %s\n", rec.samples, rec.samples == 1 ? "" : "s",
			o->db);
	return rc;
}

static int serve_serve(struct ctx *ctx, struct serve_opts *o, struct recorder *rec)
{

	struct serve_cache *cache;
	struct serve_cache_config cc = {.root = ctx->root, .extra = o->pids, .nextra = o->npids,
					.min_interval_seconds = o->min_interval, .max_body_bytes = 64u << 20,
					.version = VMHOST_VERSION, .kvm = !o->no_kvm,
					.kvm_events = o->have_kvm_events ? &o->kvm_events : NULL,
					.on_snapshot = rec ? record_snapshot : NULL, .on_snapshot_cls = rec};
	if (serve_cache_new(&cc, &cache) < 0)
		return fail(ctx, EXIT_FAIL, "starting", "%s", strerror(ENOMEM));
	/* Gather once before listening: an unreadable host fails here, not on every scrape. */
	struct serve_body *first;
	int r = serve_cache_get(cache, PROM_TEXT, &first);
	if (r < 0) {
		serve_cache_free(cache);
		return fail(ctx, EXIT_FAIL, "reading the host", "%s: %s", ctx->root.proc, strerror(-r));
	}
	serve_body_unref(first);

	int fd = -1;
	int rc = open_listener(ctx, o, &fd);
	if (rc != EXIT_OK) {
		serve_cache_free(cache);
		return rc;
	}
	char where[128];
	serve_socket_name(fd, where, sizeof(where));

	/* Worker threads inherit this mask: only this thread takes the stop signals. */
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct serve_http *http;
	struct serve_http_config hc = {.listen_fd = fd, .threads = o->threads, .max_connections = o->max_connections,
				       .timeout_seconds = o->timeout_seconds, .connection_memory = 16 * 1024,
				       .cache = cache};
	r = serve_http_start(&hc, &http);
	if (r < 0) {
		close(fd);
		serve_cache_free(cache);
		return fail(ctx, EXIT_FAIL, "starting the HTTP server", "%s", where);
	}
	enum kvm_avail why;
	if (!o->no_kvm && !serve_cache_kvm(cache, &why))
		fprintf(stderr, "vmhost: serve: no KVM counters (vmhost_kvm_available 0): %s\n", kvm_avail_hint(why));
	fprintf(stderr, "vmhost: serve: listening on http://%s/metrics\n", where);

	int sig = wait_for_stop(&stop, cache, rec);
	serve_http_stop(http);
	serve_cache_free(cache);
	fprintf(stderr, "vmhost: serve: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	return EXIT_OK;
}
