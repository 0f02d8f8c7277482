/* `share plan --from URL`: an http:// or https:// URL with optional user:password, the user and
 * password of --auth-file, and the reply of a plain HTTP/1.0 GET; a TCP port, as serve's --listen
 * takes it too. Pure, as the other parsers: buffers in, structs out (fuzz/fuzz_sketch_file.c). */
#ifndef VMHOST_PARSE_HTTP_URL_H
#define VMHOST_PARSE_HTTP_URL_H

#include <stdbool.h>
#include <stddef.h>

struct http_url {
	bool tls;                      /* https:// */
	char user[128], password[128]; /* "" when the URL has none (percent-escapes decoded) */
	char host[256];                /* a name, an IPv4 address, or an IPv6 one without brackets */
	char port[8];                  /* "80" when none is given, "443" for https */
	char path[1024];               /* "/" when none is given */
};

/* A TCP port: n digits (1 to 5, no sign or blank), 0 to 65535 (a URL's port is at least 1; serve
 * --listen's 0 asks for any free port). 0 or -EINVAL. */
int http_port_parse(const char *s, size_t n, unsigned *ret);

/* "http[s]://[user[:password]@]host[:port][/path]". 0; -ENOTSUP for another scheme; -EINVAL for
 * anything malformed or too long. */
int http_url_parse(const char *url, struct http_url *ret);

/* The user and password of a credentials file (`share plan --auth-file`): "user:password" on its
 * first line, the line's end ("\n", "\r\n") not theirs; the user not empty, the password may hold
 * ':'; no control character, each under 128 bytes. Only ret's user and password are set. 0 or
 * -EINVAL (ret untouched). */
int http_credentials_parse(const char *buf, size_t len, struct http_url *ret);

/* url with its password (between "user:" and "@") as "***", for messages and output; a URL
 * without one as it is. Cut short to fit cap (cap >= strlen(url) + 4 always fits). */
void http_url_redact(const char *url, char *buf, size_t cap);

/* "Basic BASE64(user:password)" into buf. 0 or -ENAMETOOLONG. */
int http_basic_auth(const char *user, const char *password, char *buf, size_t cap);

/* A whole HTTP/1.x reply: its status, and where its body is. A Content-Length must match the body
 * that came (a reply cut short is -EINVAL); without one the body runs to the end. 0 or -EINVAL. */
int http_reply_parse(const char *buf, size_t len, int *ret_status, size_t *ret_body_offset, size_t *ret_body_len);

#endif
