/* vmhost share plan: sketches of several hosts (files of `share --out`, or serve's /sketch) read
 * together: per VM the memory it would share on each host, its best target, and a greedy
 * consolidation plan for the fleet with the host memory it frees (docs/share.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "cmd/secret_file.h"
#include "core/share/fleet.h"
#include "io/file.h"
#include "io/peer/http_get.h"
#include "out/share_view.h"
#include "parse/http/http_url.h"

#define PLAN_MAX_HOSTS 64
/* A host's sketches, at most: 8 TiB of guest RAM at the default 1/32 (~32 KiB per GiB), more at
 * sparser rates. A file from a hostile server costs at most ~9 times its length once parsed
 * (parse/sketch_file.h), so this bounds what one --from can make share plan hold. */
#define SKETCH_MAX_BYTES (256u << 20)

struct plan_source {
	const char *arg;
	char *shown; /* a URL with its password as "***": in messages and output; NULL for a file */
	bool url;
};

static const char *shown(const struct plan_source *src) { return src->shown ? src->shown : src->arg; }

struct plan_opts {
	struct plan_source sources[PLAN_MAX_HOSTS];
	size_t nsources;
	const char *vm;
	const char *auth_file;
	struct io_http_get get; /* --timeout, --ca-file, --cert, --key; --auth-file's user and password */
};

static int add_source(struct ctx *ctx, void *opts, const char *arg, bool url)
{
	struct plan_opts *o = opts;
	if (o->nsources == PLAN_MAX_HOSTS)
		return usage_error(ctx, "at most %d hosts (--sketch and --from together)", PLAN_MAX_HOSTS);
	char *redacted = url ? malloc(strlen(arg) + 4) : NULL;
	if (url && !redacted)
		return fail(ctx, EXIT_FAIL, "--from", "%s", strerror(ENOMEM));
	if (url)
		http_url_redact(arg, redacted, strlen(arg) + 4);
	o->sources[o->nsources++] = (struct plan_source){arg, redacted, url};
	return EXIT_OK;
}
static int opt_sketch(struct ctx *ctx, void *opts, const char *arg) { return add_source(ctx, opts, arg, false); }
static int opt_from(struct ctx *ctx, void *opts, const char *arg) { return add_source(ctx, opts, arg, true); }

static const struct opt plan_opt_table[] = {
	{OPT("sketch", 's', OPT_CALL), .call = opt_sketch},
	{OPT("from", 'f', OPT_CALL), .call = opt_from},
	{OPT("vm", 'v', OPT_STRING), OPT_AT(struct plan_opts, vm)},
	{OPT("ca-file", 0, OPT_STRING), OPT_AT(struct plan_opts, get.ca_file)},
	{OPT("cert", 0, OPT_STRING), OPT_AT(struct plan_opts, get.cert_file)},
	{OPT("key", 0, OPT_STRING), OPT_AT(struct plan_opts, get.key_file)},
	{OPT("auth-file", 0, OPT_STRING), OPT_AT(struct plan_opts, auth_file)},
	{OPT("timeout", 't', OPT_SECONDS), OPT_AT(struct plan_opts, get.timeout_seconds), .lo = 1, .hi = 3600,
	 .error = "--timeout takes seconds from 1 to 3600, not '%s'"},
	{OPT("help", 'h', OPT_HELP)},
};

static void plan_help(void)
{
	printf("usage: vmhost share plan (--sketch FILE | --from URL)... [--vm NAME] [--timeout SEC]\n"
	       "                        [--auth-file FILE] [--ca-file FILE] [--cert FILE --key FILE] [--json|--csv]\n"
	       "\n"
	       "Reads the sketches of several hosts (one key, one sample rate) and says, per VM, the memory\n"
	       "it would share on each host (pages whose content a VM there holds, plus its zero pages),\n"
	       "the best target, and a greedy consolidation plan for the fleet: the VM whose move frees the\n"
	       "most first, each at most once, within each target's MemAvailable; and the memory it frees.\n"
	       "\n"
	       "  --sketch FILE   a host's sketches, written by 'vmhost share --out FILE' (repeatable)\n"
	       "  --from URL      a host's sketches from its 'vmhost serve' (repeatable):\n"
	       "                  https://[USER:PASS@]HOST[:PORT]/sketch, or http:// to a serve without TLS;\n"
	       "                  basic auth from the URL's user and password (others on this machine see\n"
	       "                  them in ps: prefer --auth-file). An https server's certificate must verify\n"
	       "                  against the system trust store (or --ca-file) and name HOST, else it is\n"
	       "                  refused (exit 77); there is no fall back to plain HTTP\n"
	       "  --auth-file FILE  basic auth's USER:PASS from the first line of FILE (mode 0600 or 0400,\n"
	       "                  else refused: exit 77), for each --from URL without a user of its own\n"
	       "                  (a URL's own user and password win); never shown\n"
	       "  --ca-file FILE  trust the CA certificates in this PEM file instead of the system's\n"
	       "                  (a self-signed server certificate is its own CA)\n"
	       "  --cert FILE     a client certificate (PEM) to show https servers, with --key FILE its key\n"
	       "  --vm NAME       only this VM (by name, or pid on its host)\n"
	       "  --timeout SEC   for each --from, the name's lookup, connecting, the TLS handshake and\n"
	       "                  reading together (default 120: the server sketches its VMs on request,\n"
	       "                  under its CPU budget)\n"
	       "  --json          everything as one JSON document; --csv: the plan's table, a row per move\n");
}

/* What a --from GET that failed says, and its exit code: an untrusted server or a refused password
 * is 77, a URL that is none a usage error. */
static int from_failed(struct ctx *ctx, const struct plan_opts *o, const char *url, int r,
		       const struct io_http_failure *f)
{
	const char *file_opt = f->step == IO_HTTP_CA_FILE ? "--ca-file" : f->step == IO_HTTP_CERT_FILE ? "--cert" : "--key";
	const char *file = f->step == IO_HTTP_CA_FILE ? o->get.ca_file : f->step == IO_HTTP_CERT_FILE ? o->get.cert_file
												 : o->get.key_file;
	switch (f->step) {
	case IO_HTTP_URL:
		return fail(ctx, EXIT_USAGE, "--from", "%s: %s", url,
			    r == -ENOTSUP ? "only https:// and http:// URLs are fetched"
					  : "not an http[s]://[USER:PASS@]HOST[:PORT]/PATH URL");
	case IO_HTTP_CA_FILE:
	case IO_HTTP_CERT_FILE:
	case IO_HTTP_KEY_FILE: return fail(ctx, exit_code_for(r), file_opt, "%s: %s", file, strerror(-r));
	case IO_HTTP_REQUEST: return fail(ctx, EXIT_USAGE, "--from", "%s: user and password too long", url);
	case IO_HTTP_STATUS:
		return fail(ctx, r == -EACCES ? EXIT_NOPERM : EXIT_FAIL, "--from", "%s: HTTP %d: %s", url, f->status, f->why);
	case IO_HTTP_TLS:
	case IO_HTTP_REPLY: return fail(ctx, EXIT_FAIL, "--from", "%s: %s", url, f->why);
	case IO_HTTP_EXCHANGE: break;
	}
	if (r == -ETIMEDOUT)
		return fail(ctx, EXIT_FAIL, "--from", "%s: no answer within --timeout %g s (the name's lookup, "
			    "connecting, TLS and the reply together)", url, o->get.timeout_seconds);
	if (r == -EFBIG)
		return fail(ctx, EXIT_FAIL, "--from", "%s: a reply over %u MiB, more than a host's sketches (read no "
			    "further)", url, SKETCH_MAX_BYTES >> 20);
	if (r == -EHOSTUNREACH)
		return fail(ctx, EXIT_FAIL, "--from", "%s: the host name does not resolve", url);
	return fail(ctx, r == -EKEYREJECTED ? EXIT_NOPERM : r == -EINVAL && f->why[0] ? EXIT_USAGE : EXIT_FAIL,
		    "--from", "%s: %s", url, f->why[0] ? f->why : strerror(-r));
}

/* --auth-file's user and password, for the URLs without their own. */
static int read_auth_file(struct ctx *ctx, struct plan_opts *o)
{
	int e = io_http_get_auth_file(&o->get, o->auth_file);
	if (e == -EBADMSG)
		return fail(ctx, EXIT_USAGE, "--auth-file", "%s: its first line must be USER:PASS (a user, no control "
			    "characters, each under 128 bytes)", o->auth_file);
	return e < 0 ? secret_file_failed(ctx, "--auth-file", o->auth_file, e) : EXIT_OK;
}

static int load(struct ctx *ctx, struct plan_opts *o, const struct plan_source *src, struct sketch_file *ret)
{
	char *buf = NULL, why[256] = "";
	size_t len = 0;
	if (src->url) {
		struct io_http_failure f;
		int e = io_http_get(&o->get, src->arg, &buf, &len, &f);
		if (e < 0)
			return from_failed(ctx, o, shown(src), e, &f);
	} else {
		int e = io_read_path(src->arg, SKETCH_MAX_BYTES, &buf, &len);
		if (e < 0)
			return fail(ctx, exit_code_for(e), "--sketch", "%s: %s", src->arg, strerror(-e));
	}
	int r = sketch_file_parse(buf, len, ret, why, sizeof(why));
	free(buf);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, src->url ? "--from" : "--sketch", "%s: %s", shown(src),
			    r == -EINVAL ? why : strerror(-r));
	return EXIT_OK;
}

/* Hosts are called by the name in their sketches, or by where they came from when two share a
 * name (or one has none). */
static void label_hosts(const struct plan_opts *o, const struct sketch_file *files, struct plan_host *hosts)
{
	for (size_t h = 0; h < o->nsources; h++) {
		bool clash = !files[h].host[0];
		for (size_t k = 0; k < o->nsources && !clash; k++)
			clash = k != h && !strcmp(files[k].host, files[h].host);
		hosts[h] = (struct plan_host){.label = clash ? shown(&o->sources[h]) : files[h].host, .file = &files[h]};
	}
}

static int plan_and_print(struct ctx *ctx, const struct plan_opts *o, const struct sketch_file *files,
			  struct plan_host *hosts, struct share_plan *p)
{
	char why[512];
	label_hosts(o, files, hosts);
	int r = share_plan_build(hosts, o->nsources, p, why, sizeof(why));
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "comparing sketches", "%s", r == -EINVAL ? why : strerror(-r));
	const char *sources[PLAN_MAX_HOSTS];
	for (size_t h = 0; h < o->nsources; h++)
		sources[h] = shown(&o->sources[h]);
	struct share_plan_view v = {.hosts = hosts, .sources = sources, .plan = p, .vm = o->vm};
	if (!share_plan_view_finds_vm(&v))
		return fail(ctx, EXIT_USAGE, "--vm", "no VM named %s in the sketches", o->vm);
	if ((r = share_plan_view_print(stdout, (enum doc_form)ctx->format, &v)) < 0)
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(-r));
	return EXIT_OK;
}

static int plan_run(struct ctx *ctx, struct plan_opts *o)
{
	if (!o->nsources)
		return usage_error(ctx, "share plan needs at least one --sketch FILE or --from URL");
	if (!o->get.cert_file != !o->get.key_file)
		return usage_error(ctx, "--cert and --key go together");
	bool https = false, url = false;
	for (size_t i = 0; i < o->nsources; i++) {
		url |= o->sources[i].url;
		https |= o->sources[i].url && !strncasecmp(o->sources[i].arg, "https://", 8);
	}
	if ((o->get.ca_file || o->get.cert_file) && !https)
		return usage_error(ctx, "--ca-file, --cert and --key are for https:// URLs");
	if (o->auth_file && !url)
		return usage_error(ctx, "--auth-file is for --from URLs");
	int rc = o->auth_file ? read_auth_file(ctx, o) : EXIT_OK;
	if (rc != EXIT_OK)
		return rc;
	struct sketch_file files[PLAN_MAX_HOSTS];
	struct plan_host hosts[PLAN_MAX_HOSTS];
	size_t loaded = 0;
	for (; loaded < o->nsources && rc == EXIT_OK; loaded++)
		if ((rc = load(ctx, o, &o->sources[loaded], &files[loaded])) != EXIT_OK)
			break;
	struct share_plan p = {0};
	if (rc == EXIT_OK)
		rc = plan_and_print(ctx, o, files, hosts, &p);
	share_plan_free(&p);
	for (size_t h = 0; h < loaded; h++)
		sketch_file_free(&files[h]);
	return rc;
}

int cmd_share_plan(struct ctx *ctx, int argc, char **argv)
{
	struct plan_opts o = {.get = {.timeout_seconds = 120, .max_bytes = SKETCH_MAX_BYTES}};
	static const struct opts_spec spec = OPTS_SPEC(plan_opt_table, 0, plan_help);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc == OPTS_GO)
		rc = plan_run(ctx, &o);
	io_http_get_done(&o.get);
	for (size_t i = 0; i < o.nsources; i++)
		free(o.sources[i].shown);
	return rc;
}
