#include "net/web_files.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

/* A file named by the user, read through io with a root that resolves the path as given. */
static int read_file(const char *path, char **ret, size_t *ret_len)
{
	struct io_root here = {.proc = path[0] == '/' ? "" : "."};
	return io_read_alloc(&here, IO_PROC, ret, ret_len, "%s", path);
}

/* The certificate or key path as exporter-toolkit reads it: relative to the config's directory. */
static int beside(const char *config_path, const char *file, char *buf, size_t cap)
{
	const char *slash = strrchr(config_path, '/');
	int n;
	if (file[0] == '/' || !slash)
		n = snprintf(buf, cap, "%s", file);
	else
		n = snprintf(buf, cap, "%.*s/%s", (int)(slash - config_path), config_path, file);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static int read_pem(const char *config_path, const char *what, const char *file, char **ret, size_t *ret_len,
		    char *err, size_t errcap)
{
	char path[PATH_MAX];
	int r = beside(config_path, file, path, sizeof(path));
	if (r == 0)
		r = read_file(path, ret, ret_len);
	if (r < 0) {
		snprintf(err, errcap, "%s: %s %s: %s", config_path, what, path, strerror(-r));
		return r;
	}
	if (!strstr(*ret, "-----BEGIN ")) {
		snprintf(err, errcap, "%s: %s %s: not PEM (no '-----BEGIN' line)", config_path, what, path);
		free(*ret);
		*ret = NULL;
		return -EINVAL;
	}
	return 0;
}

/* The certificate and key, when the config asks for TLS. */
static int read_files(const char *path, struct web_files *w, char *err, size_t errcap)
{
	const struct web_config *c = &w->config;
	if (!c->tls)
		return 0;
	size_t len;
	int r = read_pem(path, "cert_file", c->cert_file, &w->cert_pem, &len, err, errcap);
	if (r == 0 && c->client_ca_file)
		r = read_pem(path, "client_ca_file", c->client_ca_file, &w->client_ca_pem, &len, err, errcap);
	return r < 0 ? r : read_pem(path, "key_file", c->key_file, &w->key_pem, &w->key_len, err, errcap);
}

int web_files_load(const char *path, struct web_files *ret, char *err, size_t errcap)
{
	char *text, why[256];
	size_t len;
	int r = read_file(path, &text, &len);
	if (r < 0) {
		snprintf(err, errcap, "%s: %s", path, strerror(-r));
		return r;
	}
	struct web_files w = {0};
	int line = 0;
	r = web_config_parse(text, len, &w.config, &line, why, sizeof(why));
	free(text);
	if (r < 0) {
		snprintf(err, errcap, "%s line %d: %s", path, line, why);
		return r;
	}
	r = read_files(path, &w, err, errcap);
	if (r < 0) {
		web_files_free(&w);
		return r;
	}
	*ret = w;
	return 0;
}

void web_files_free(struct web_files *w)
{
	if (w->key_pem)
		explicit_bzero(w->key_pem, w->key_len);
	free(w->key_pem);
	free(w->cert_pem);
	free(w->client_ca_pem);
	web_config_free(&w->config);
	memset(w, 0, sizeof(*w));
}

bool web_files_protect(const struct web_files *w) { return w->config.tls || w->config.nusers > 0; }
