/* vmhost serve: Prometheus metrics on /metrics, and with --key-file the host's sketches on
 * /sketch (docs/serve.md, docs/share.md). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "cmd/secret_file.h"
#include "core/kvm/kvm_host.h"
#include "core/kvm/kvm_pace.h"
#include "core/sample/sampler_feed.h"
#include "core/share/sketch.h"
#include "io/peer/socket.h"
#include "net/serve_cache.h"
#include "net/serve_http.h"
#include "store/store.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9464"
#define SERVE_MAX_PIDS 256
#define SERVE_MAX_CAPACITY_SIZES 16 /* --capacity-size: a few sizes, two series each */
#define SERVE_WAIT_SECONDS 5.0 /* at most, for the first gathering at start and the one in flight at stop */

struct serve_opts {
	const char *listen;
	bool listen_given;
	double min_interval;
	pid_t pids[SERVE_MAX_PIDS];
	size_t npids;
	unsigned max_connections, per_client, timeout_seconds, threads;
	double request_deadline;
	double scrape_timeout;
	const char *db;
	double db_interval;
	bool no_kvm;
	bool kvm_reasons;
	bool kvm_reasons_time;
	double kvm_interval; /* a QEMU 7.1-8.0's vCPU statistics at most this often */
	regex_t kvm_events;
	bool have_kvm_events;
	const char *web_config;
	bool insecure_listen;
	bool io;                 /* --io: each QEMU's disks with every sample */
	enum prom_detail detail; /* --detail: basic (default) or full */
	int64_t capacity_sizes[SERVE_MAX_CAPACITY_SIZES]; /* --capacity-size, each once */
	size_t ncapacity_sizes;
	const char *libvirt_uri; /* --libvirt-uri; NULL: qemu:///system */
	const char *key_file;   /* /sketch: the fleet's key */
	long sketch_sample;
	double sketch_cpu_budget;
};

static void serve_help(void)
{
	printf("usage: vmhost serve [--listen ADDR:PORT] [--web-config FILE] [--min-interval SEC] [--pid PID]...\n"
	       "                    [--detail basic|full] [--db FILE] [--io] [--max-connections N] [--timeout SEC]\n"
	       "                    [--threads N] [--capacity-size SIZE]...\n"
	       "                    [--kvm-interval SEC] [--libvirt-uri URI] [--scrape-timeout SEC]\n"
	       "\n"
	       "Prometheus metrics on http://ADDR:PORT/metrics: host memory, KSM, ksmd CPU, and per-VM\n"
	       "memory (RSS by type, PSS, swap, KSM merged and profit, VMM overhead), and KVM's event and\n"
	       "time counters per VM where debugfs is readable. Text format 0.0.4;\n"
	       "OpenMetrics 1.0 when the Accept header asks for it. Metric names: docs/serve.md.\n"
	       "\n"
	       "  --listen ADDR:PORT   where to listen (default " SERVE_DEFAULT_LISTEN ", loopback only);\n"
	       "                       [::1]:PORT for IPv6, :PORT for every address. Under systemd socket\n"
	       "                       activation (LISTEN_FDS) the passed socket is used instead\n"
	       "  --web-config FILE    HTTPS and basic auth from Prometheus' exporter-toolkit web config\n"
	       "                       (tls_server_config: cert_file, key_file, min_version TLS12|TLS13;\n"
	       "                       basic_auth_users: NAME: BCRYPT-HASH); docs/serve.md\n"
	       "  --insecure-listen    listen beyond loopback without --web-config (refused otherwise:\n"
	       "                       VM names and uuids would be readable by anyone who can connect)\n"
	       "  --key-file FILE      serve /sketch: this host's content sketches under the fleet's key,\n"
	       "                       for 'vmhost share plan --from'; only to clients --web-config\n"
	       "                       authenticates (403 otherwise, loopback too); made on request, one\n"
	       "                       run at a time (503 to the others), kept for a minute\n"
	       "  --sketch-sample 1/N  the sketches' sample (default 1/32, as vmhost share)\n"
	       "  --sketch-cpu-budget PCT  a sketching run's CPU, percent of one CPU (default 50)\n"
	       "  --detail LEVEL       what the document holds of each VM: basic (default) at most 10\n"
	       "                       series a VM (cost, RSS, PSS, KSM profit, CPU, vCPU delay, exits,\n"
	       "                       I/O bytes, its info), whatever its vCPUs, disks and taps; full:\n"
	       "                       every family (by vCPU, tap, NUMA node, KVM counter...). A document\n"
	       "                       over 64 MiB is cut to basic, then to the host's series\n"
	       "                       (vmhost_scrape_cut 1). docs/serve.md lists both\n"
	       "  --capacity-size SIZE how many more guests of SIZE (e.g. 4G) this host can take now\n"
	       "                       (vmhost_host_capacity_vms{size,when}: vmhost capacity's figure on\n"
	       "                       the cheap overhead estimate; after reclaim only where guests report,\n"
	       "                       and serve does not ask them: docs/serve.md); repeatable, at most\n"
	       "                       " OPT_TEXT(SERVE_MAX_CAPACITY_SIZES) " sizes\n"
	       "  --min-interval SEC   gather at most once per SEC (default %g); scrapes inside it share\n"
	       "                       one snapshot; 0 gathers on every scrape\n"
	       "  --scrape-timeout SEC a scrape is answered within SEC (default 10) however long a\n"
	       "                       gathering takes: with the last snapshot and its age in the header\n"
	       "                       X-Vmhost-Snapshot-Age when it is late, 503 before the first\n"
	       "  --pid PID            also watch this process, VM or not (repeatable)\n"
	       "  --db FILE            also record into this SQLite database (as vmhost record does; one\n"
	       "                       writer per database), whether or not anyone scrapes\n"
	       "  --db-interval SEC    record at most this often (default %g)\n"
	       "  --kvm-events REGEX   export only the KVM counters whose kernel name matches (extended\n"
	       "                       regex, unanchored: 'exits|halt_wait_ns'); default all of them\n"
	       "  --kvm-reasons        also count each VM's exits by reason from tracepoints\n"
	       "                       (vmhost_kvm_exit_reasons_total; needs tracefs): in the kernel by\n"
	       "                       eBPF, else by perf filters; the log says which\n"
	       "  --kvm-reasons-time   --kvm-reasons, and the time per exit reason (eBPF only;\n"
	       "                       vmhost_kvm_exit_reason_seconds_total, _timed_total): kvm_userspace_exit\n"
	       "                       to the thread's next KVM_RUN on any host; kvm_exit to its next\n"
	       "                       kvm_entry where the host fires both (not KVM nested on PVM).\n"
	       "                       Hooks every ioctl on the host (docs/exits.md for its cost)\n"
	       "  --kvm-interval SEC   read a QEMU 7.1-8.0's KVM counters at most this often (default %g;\n"
	       "                       0: every gathering), through QMP or libvirt, exporting its last\n"
	       "                       read in between: those QEMUs interrupt every vCPU to answer, at\n"
	       "                       most 0.03%% of a vCPU at one read a second (docs/exits.md); 8.1\n"
	       "                       and later, and debugfs, are read at every gathering\n"
	       "  --no-kvm             do not read KVM's debugfs counters at all\n"
	       "  --io                 also each QEMU's disks (vmhost_vm_disk_*{device}: bytes, operations\n"
	       "                       and their time by op): one short QMP visit per VM per snapshot\n"
	       "                       (query-blockstats, 0.3 s at most), or libvirt's block statistics\n"
	       "                       for the domains whose monitor libvirt holds (one call)\n"
	       "  --libvirt-uri URI    the libvirt whose QEMUs to read (KVM counters, --io's disks),\n"
	       "                       read-only (default qemu:///system); each call waits at most 0.75 s\n"
	       "  --max-connections N  open connections at most (default 64); a new one beyond it closes\n"
	       "                       the oldest that is not being answered, so scrapes get through\n"
	       "  --per-client N       connections from one client at most (default 16), likewise: an\n"
	       "                       IPv4 /24, an IPv6 /64; every loopback address is one client\n"
	       "  --request-deadline SEC  a new connection's first request must be in within SEC\n"
	       "                       (default 5; slowloris and idle connects are closed after it)\n"
	       "  --timeout SEC        close a connection idle this long (default 10, whole seconds)\n"
	       "  --threads N          worker threads (default 2)\n"
	       "\n"
	       "Only GET and HEAD are answered (405 otherwise). Stops on SIGINT or SIGTERM.\n",
	       SAMPLER_MIN_INTERVAL_SECONDS, SAMPLER_INTERVAL_SECONDS, KVM_PACE_INTERVAL_SECONDS);
}

static int opt_listen(struct ctx *ctx, void *opts, const char *arg)
{
	(void)ctx, (void)arg;
	((struct serve_opts *)opts)->listen_given = true;
	return EXIT_OK;
}

static int opt_pid(struct ctx *ctx, void *opts, const char *arg)
{
	struct serve_opts *o = opts;
	return opt_pid_add(ctx, arg, o->pids, &o->npids, SERVE_MAX_PIDS,
			   "too many --pid options (at most " OPT_TEXT(SERVE_MAX_PIDS) ")");
}

static int opt_kvm_events(struct ctx *ctx, void *opts, const char *arg)
{
	struct serve_opts *o = opts;
	return opt_regex_once(ctx, "--kvm-events", arg, &o->kvm_events, &o->have_kvm_events);
}

static int opt_sketch_sample(struct ctx *ctx, void *opts, const char *arg)
{
	return opt_sample_rate(ctx, arg, &((struct serve_opts *)opts)->sketch_sample);
}

static int opt_detail(struct ctx *ctx, void *opts, const char *arg)
{
	struct serve_opts *o = opts;
	if (!strcmp(arg, "basic"))
		o->detail = PROM_DETAIL_BASIC;
	else if (!strcmp(arg, "full"))
		o->detail = PROM_DETAIL_FULL;
	else
		return usage_error(ctx, "--detail takes basic or full, not '%s'", arg);
	return EXIT_OK;
}

/* --capacity-size: a size given twice ("4G", "4096M") is one series, not two of the same labels. */
static int opt_capacity_size(struct ctx *ctx, void *opts, const char *arg)
{
	struct serve_opts *o = opts;
	uint64_t bytes;
	if (arg_size(arg, &bytes) < 0 || bytes == 0)
		return usage_error(ctx, "--capacity-size takes a guest's RAM as a size (e.g. 4G, 512M), not '%s'", arg);
	for (size_t i = 0; i < o->ncapacity_sizes; i++)
		if (o->capacity_sizes[i] == (int64_t)bytes)
			return EXIT_OK;
	if (o->ncapacity_sizes == SERVE_MAX_CAPACITY_SIZES)
		return usage_error(ctx, "too many --capacity-size options (at most " OPT_TEXT(SERVE_MAX_CAPACITY_SIZES) ")");
	o->capacity_sizes[o->ncapacity_sizes++] = (int64_t)bytes;
	return EXIT_OK;
}

static const struct opt serve_opt_table[] = {
	{OPT("listen", 'l', OPT_STRING), OPT_AT(struct serve_opts, listen), .call = opt_listen},
	{OPT("min-interval", 'i', OPT_NUMBER), OPT_AT(struct serve_opts, min_interval), .lo = 0, .hi = 86400,
	 .error = "--min-interval takes seconds from 0 to 86400, not '%s'"},
	{OPT("pid", 'p', OPT_CALL), .call = opt_pid},
	{OPT("db", 'd', OPT_STRING), OPT_AT(struct serve_opts, db)},
	{OPT("db-interval", 'D', OPT_SECONDS), OPT_AT(struct serve_opts, db_interval), .lo = 1, .hi = 86400,
	 .error = "--db-interval takes seconds from 1 to 86400, not '%s'"},
	{OPT("max-connections", 'c', OPT_COUNT), OPT_AT(struct serve_opts, max_connections), .lo = 1, .hi = 10000,
	 .error = "--max-connections takes a number from 1 to 10000, not '%s'"},
	{OPT("timeout", 't', OPT_COUNT), OPT_AT(struct serve_opts, timeout_seconds), .lo = 1, .hi = 3600,
	 .error = "--timeout takes whole seconds from 1 to 3600, not '%s'"},
	{OPT("threads", 'T', OPT_COUNT), OPT_AT(struct serve_opts, threads), .lo = 1, .hi = 64,
	 .error = "--threads takes a number from 1 to 64, not '%s'"},
	{OPT("per-client", 'P', OPT_COUNT), OPT_AT(struct serve_opts, per_client), .lo = 1, .hi = 10000,
	 .error = "--per-client takes a number from 1 to 10000, not '%s'"},
	{OPT("scrape-timeout", 0, OPT_SECONDS), OPT_AT(struct serve_opts, scrape_timeout), .lo = 1, .hi = 3600,
	 .error = "--scrape-timeout takes seconds from 1 to 3600, not '%s'"},
	{OPT("request-deadline", 'r', OPT_SECONDS), OPT_AT(struct serve_opts, request_deadline), .hi = 3600,
	 .error = "--request-deadline takes seconds up to 3600, not '%s'"},
	{OPT("kvm-events", 'k', OPT_CALL), .call = opt_kvm_events},
	{OPT("no-kvm", 'K', OPT_FLAG), OPT_AT(struct serve_opts, no_kvm)},
	{OPT("kvm-interval", 'V', OPT_SECONDS0), OPT_AT(struct serve_opts, kvm_interval),
	 .error = "--kvm-interval takes seconds (0: every gathering), not '%s'"},
	{OPT("kvm-reasons", 'R', OPT_FLAG), OPT_AT(struct serve_opts, kvm_reasons)},
	{OPT("kvm-reasons-time", 'E', OPT_FLAG), OPT_AT(struct serve_opts, kvm_reasons_time)},
	{OPT("web-config", 'w', OPT_STRING), OPT_AT(struct serve_opts, web_config)},
	{OPT("insecure-listen", 'I', OPT_FLAG), OPT_AT(struct serve_opts, insecure_listen)},
	{OPT("io", 0, OPT_FLAG), OPT_AT(struct serve_opts, io)},
	{OPT("detail", 0, OPT_CALL), .call = opt_detail},
	{OPT("capacity-size", 0, OPT_CALL), .call = opt_capacity_size},
	{OPT("libvirt-uri", 'U', OPT_STRING), OPT_AT(struct serve_opts, libvirt_uri)},
	{OPT("key-file", 0, OPT_STRING), OPT_AT(struct serve_opts, key_file)},
	{OPT("sketch-sample", 0, OPT_CALL), .call = opt_sketch_sample},
	{OPT("sketch-cpu-budget", 0, OPT_NUMBER), OPT_AT(struct serve_opts, sketch_cpu_budget), .lo = 0, .hi = 100,
	 .error = "--sketch-cpu-budget takes a percent of one CPU from 0 (no limit) to 100, not '%s'"},
	{OPT("help", 'h', OPT_HELP)},
};

/* The options together: --no-kvm against what reads KVM. */
static int serve_check(struct ctx *ctx, void *opts, int argc, char **argv)
{
	(void)argc, (void)argv;
	const struct serve_opts *o = opts;
	if (o->no_kvm && (o->kvm_reasons || o->kvm_reasons_time))
		return usage_error(ctx, "--kvm-reasons and --no-kvm contradict each other");
	if (o->no_kvm && o->have_kvm_events)
		return usage_error(ctx, "--kvm-events and --no-kvm contradict each other");
	return EXIT_OK;
}

/* Beyond loopback only with TLS or basic auth from --web-config, or with --insecure-listen. */
static int listen_allowed(struct ctx *ctx, const struct serve_opts *o, const struct web_files *web,
			  const struct sockaddr_storage *addr, const char *where)
{
	if (serve_is_loopback(addr))
		return EXIT_OK;
	if (web && web_files_protect(web)) {
		if (!web->config.tls)
			warn(ctx, "listening on %s without TLS: basic auth passwords cross the network in clear", where);
		return EXIT_OK;
	}
	if (!o->insecure_listen)
		return fail(ctx, EXIT_USAGE, "listening",
			    "refusing %s beyond loopback without TLS or basic auth (anyone who can connect would read VM "
			    "names and uuids): give --web-config FILE (docs/serve.md), listen on 127.0.0.1, or accept "
			    "it with --insecure-listen", where);
	warn(ctx, "listening on %s: reachable from other hosts, without TLS or authentication", where);
	return EXIT_OK;
}

/* The listening socket: systemd's when socket-activated, else our own on --listen. */
static int open_listener(struct ctx *ctx, const struct serve_opts *o, const struct web_files *web, int *ret_fd)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	int fd = -1, r = io_socket_activation(&fd);
	if (r == 0) {
		if (o->listen_given)
			warn(ctx, "socket-activated: --listen %s is ignored", o->listen);
		char where[128] = "the socket-activated socket";
		serve_socket_name(fd, where, sizeof(where));
		int rc = getsockname(fd, (struct sockaddr *)&addr, &len) < 0 ? EXIT_OK
										: listen_allowed(ctx, o, web, &addr, where);
		if (rc != EXIT_OK)
			close(fd);
		else
			*ret_fd = fd;
		return rc;
	}
	if (r != -ENOENT)
		return fail(ctx, EXIT_FAIL, "socket activation", "fd 3 is not a listening stream socket");
	if (serve_parse_listen(o->listen, &addr, &len) < 0)
		return usage_error(ctx, "--listen takes ADDR:PORT ([::1]:PORT for IPv6, :PORT for every address), not '%s'",
				   o->listen);
	int rc = listen_allowed(ctx, o, web, &addr, o->listen);
	if (rc != EXIT_OK)
		return rc;
	fd = io_listen(&addr, len);
	if (fd < 0)
		return fail(ctx, fd == -EACCES ? EXIT_NOPERM : EXIT_FAIL, "listening", "%s: %s", o->listen,
			    strerror(-fd));
	*ret_fd = fd;
	return EXIT_OK;
}

static int serve_run(struct ctx *ctx, struct serve_opts *o);

int cmd_serve(struct ctx *ctx, int argc, char **argv)
{
	struct serve_opts o = {.listen = SERVE_DEFAULT_LISTEN, .min_interval = SAMPLER_MIN_INTERVAL_SECONDS,
			       .max_connections = 64, .per_client = 16, .request_deadline = 5, .timeout_seconds = 10, .scrape_timeout = 10,
			       .threads = 2, .kvm_interval = KVM_PACE_INTERVAL_SECONDS, .sketch_sample = SKETCH_DEFAULT_SAMPLE, .sketch_cpu_budget = 50,
			       .db_interval = SAMPLER_INTERVAL_SECONDS, .detail = PROM_DETAIL_BASIC};
	static const struct opts_spec spec = OPTS_SPEC_CHECKED(serve_opt_table, 0, serve_help, serve_check);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc == OPTS_GO)
		rc = serve_run(ctx, &o);
	if (o.have_kvm_events)
		regfree(&o.kvm_events);
	return rc;
}

/* The server's parts: the store (--db), the sampler and its feed thread (the only code that
 * gathers and, with --db, records: docs/serve.md), the cache that renders the feed's samples,
 * and the HTTP workers that serve the cache's bodies. */
struct server {
	struct ctx *ctx;
	const struct serve_opts *o;
	struct store *store;
	struct sampler *sampler;
	struct sample_feed *feed;
	struct serve_cache *cache;
	struct serve_sketch *sketch; /* /sketch, with --key-file */
	struct serve_http *http;
	struct kvm_host kvm_host; /* the module and its parameters, read at start */
	struct web_files web;     /* --web-config */
};

static void sampler_warning(void *cls, const char *line) { warn(cls, "%s", line); }

/* On the feed's thread: a write error other than a full disk. */
static void recording_stopped(void *cls, int err)
{
	const struct server *sv = cls;
	warn(sv->ctx, "%s: %s: recording stopped (the samples before are kept); still serving", sv->o->db,
	     store_strerror(err));
}

/* The store, the sampler and the feed with its first sample, taken before listening: an
 * unreadable host fails here, not on every scrape. */
static int start_sampling(struct server *sv)
{
	struct ctx *ctx = sv->ctx;
	const struct serve_opts *o = sv->o;
	struct sample_sink sink;
	if (o->db) {
		int r = store_open(o->db, &sv->store);
		if (r < 0)
			return fail(ctx, EXIT_FAIL, "opening the database", "%s: %s", o->db, store_strerror(r));
		sink = store_sink(sv->store, o->db);
	}
	struct sampler_config sc = {.root = ctx->root, .extra = o->pids, .nextra = o->npids, .kvm = !o->no_kvm,
				    .kvm_reasons = o->kvm_reasons || o->kvm_reasons_time, .kvm_reason_times = o->kvm_reasons_time,
				    .kvm_every_sample = true, .interval_seconds = o->db_interval,
				    .disks = o->io, .libvirt_uri = o->libvirt_uri,
				    .kvm_interval_seconds = SAMPLER_KVM_INTERVAL_SECONDS,
				    .kvm_pace_seconds = o->kvm_interval,
				    .sink = o->db ? &sink : NULL, .warn = sampler_warning, .warn_cls = ctx};
	if (sampler_new(&sc, &sv->sampler) < 0)
		return fail(ctx, EXIT_FAIL, "starting", "%s", strerror(ENOMEM));
	struct sample_feed_config fc = {.sampler = sv->sampler, .min_interval_seconds = o->min_interval,
					.record = o->db != NULL, .on_record_stopped = recording_stopped, .cls = sv,
					.wait_seconds = fmin(o->scrape_timeout, SERVE_WAIT_SECONDS)};
	int r = sample_feed_start(&fc, &sv->feed);
	if (r < 0)
		return fail(ctx, exit_code_for(r), "reading the host", "%s: %s", ctx->root.proc, strerror(-r));
	if (r == 1)
		warn(ctx, "the first gathering is taking over %g s: /metrics answers 503 until it is done", fc.wait_seconds);
	return EXIT_OK;
}

/* /sketch with --key-file: refused (403, with why) unless clients authenticate, loopback included:
 * page hashes say which pages a guest holds to whoever has the key or guesses pages, and any local
 * user can reach a loopback port. */
static int start_sketch(struct server *sv)
{
	const struct serve_opts *o = sv->o;
	if (!o->key_file)
		return EXIT_OK;
	struct serve_sketch_config c = {.root = sv->ctx->root, .sample_n = (uint64_t)o->sketch_sample,
					.cpu_percent = o->sketch_cpu_budget};
	int rc = fleet_key(sv->ctx, o->key_file, &c.key);
	if (rc != EXIT_OK)
		return rc;
	if (!(o->web_config && (sv->web.config.nusers || sv->web.config.client_cert_required)))
		c.refusal = "/sketch is served only to authenticated clients (--web-config basic_auth_users or "
			    "client certificates), loopback included: here anyone who can connect would read it";
	int r = serve_sketch_new(&c, &sv->sketch);
	explicit_bzero(&c.key, sizeof(c.key));
	return r < 0 ? fail(sv->ctx, EXIT_FAIL, "starting", "%s", strerror(-r)) : EXIT_OK;
}

static int start_http(struct server *sv)
{
	struct ctx *ctx = sv->ctx;
	const struct serve_opts *o = sv->o;
	struct serve_cache_config cc = {.feed = sv->feed, .kvm_families = !o->no_kvm,
					.kvm_events = o->have_kvm_events ? &o->kvm_events : NULL,
					.max_body_bytes = 64u << 20, .detail = o->detail, .version = VMHOST_VERSION,
					.kvm_host = &sv->kvm_host, .capacity_sizes = o->capacity_sizes,
					.ncapacity_sizes = o->ncapacity_sizes};
	if (serve_cache_new(&cc, &sv->cache) < 0)
		return fail(ctx, EXIT_FAIL, "starting", "%s", strerror(ENOMEM));
	const struct web_files *web = o->web_config ? &sv->web : NULL;
	int fd = -1;
	int rc = open_listener(ctx, o, web, &fd);
	if (rc != EXIT_OK)
		return rc;
	if ((rc = start_sketch(sv)) != EXIT_OK) {
		close(fd);
		return rc;
	}
	char where[128], why_not[256];
	serve_socket_name(fd, where, sizeof(where));
	struct serve_http_config hc = {.listen_fd = fd, .threads = o->threads, .max_connections = o->max_connections,
				       .per_client = o->per_client, .request_deadline = o->request_deadline,
				       .timeout_seconds = o->timeout_seconds, .connection_memory = 16 * 1024,
				       .scrape_timeout = o->scrape_timeout,
				       .cache = sv->cache, .sketch = sv->sketch, .web = web, .error = why_not, .error_cap = sizeof(why_not)};
	if (serve_http_start(&hc, &sv->http) < 0) {
		close(fd);
		return fail(ctx, EXIT_FAIL, "starting the HTTP server", "%s%s%s", where, why_not[0] ? ": " : "", why_not);
	}
	if (sv->sketch)
		fprintf(stderr, "vmhost: serve: /sketch %s\n",
			serve_sketch_refusal(sv->sketch) ? "answers 403 here: no authentication in --web-config"
							 : "serves this host's sketches (made on request, kept for a minute)");
	enum kvm_avail why;
	if (!o->no_kvm && !sampler_kvm(sv->sampler, &why))
		fprintf(stderr, "vmhost: serve: no KVM counters (vmhost_kvm_available 0): %s\n", kvm_avail_hint(why));
	else if (!o->no_kvm && why != KVM_AVAILABLE)
		fprintf(stderr, "vmhost: serve: no debugfs KVM counters (%s); QEMU VMs are read through their QMP sockets\n",
			kvm_avail_hint(why));
	fprintf(stderr, "vmhost: serve: listening on %s://%s/metrics%s\n", web && web->config.tls ? "https" : "http",
		where, web && web->config.nusers ? " (basic auth)" : "");
	return EXIT_OK;
}

/* --db: a full disk or a stopped recording makes the exit status 1, with what was recorded. */
static int finish_recording(const struct server *sv, int rc)
{
	const struct serve_opts *o = sv->o;
	if (rc != EXIT_OK || !o->db)
		return rc;
	struct sampler_totals t = sampler_totals(sv->sampler);
	if (t.error)
		return fail(sv->ctx, EXIT_FAIL, "recording", "%s: %lu sample%s recorded, %lu dropped%s: %s", o->db,
			    t.recorded, t.recorded == 1 ? "" : "s", t.dropped, t.stopped ? ", then stopped" : "",
			    store_strerror(t.error));
	fprintf(stderr, "vmhost: serve: %lu sample%s recorded to %s\n", t.recorded, t.recorded == 1 ? "" : "s", o->db);
	return rc;
}

static int serve_run(struct ctx *ctx, struct serve_opts *o)
{
	/* Every thread started from here inherits this mask: only this one takes the stop signals. */
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct server sv = {.ctx = ctx, .o = o};
	char err[PATH_MAX + 512];
	if (o->web_config && web_files_load(o->web_config, &sv.web, err, sizeof(err)) < 0)
		return fail(ctx, EXIT_USAGE, "web config", "%s", err);
	kvm_host_read(&ctx->root, &sv.kvm_host);
	int rc = start_sampling(&sv);
	if (rc == EXIT_OK)
		rc = start_http(&sv);
	int sig = 0;
	while (rc == EXIT_OK && sigwait(&stop, &sig) != 0)
		;
	sample_feed_cancel(sv.feed);  /* scrapes waiting for a gathering are answered now (503) */
	serve_sketch_stop(sv.sketch); /* a sketching run in a worker ends now, not when it is done */
	serve_http_stop(sv.http);
	serve_cache_free(sv.cache);
	serve_sketch_free(sv.sketch);
	/* A sample in flight is finished (and recorded) first if it comes within the feed's wait; one
	 * that does not (a peer that never answers) is left to the exit, with the sampler. */
	bool stopped = sample_feed_stop(sv.feed);
	if (sig)
		fprintf(stderr, "vmhost: serve: stopped (%s)%s\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
			stopped ? "" : ", a gathering that did not end left behind");
	if (stopped) {
		rc = finish_recording(&sv, rc);
		sampler_free(sv.sampler);
		store_close(sv.store);
	}
	kvm_host_free(&sv.kvm_host);
	web_files_free(&sv.web);
	return rc;
}
