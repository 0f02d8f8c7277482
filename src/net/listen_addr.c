#include "net/listen_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "parse/http/http_url.h"

int serve_parse_listen(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	const char *colon = strrchr(s, ':');
	if (!colon || !colon[1])
		return -EINVAL;
	char host[256];
	size_t hl = (size_t)(colon - s);
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (hl == 2 && !memcmp(host, "[]", 2)) {
		return -EINVAL; /* no address is not every address: that is ":PORT" */
	} else if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	} else if (strchr(host, ':') || strchr(host, '[') || strchr(host, ']')) {
		return -EINVAL; /* a bare IPv6 address needs brackets */
	}
	unsigned port;
	if (http_port_parse(colon + 1, strlen(colon + 1), &port) < 0)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	if (!host[0]) {
		/* ":PORT": every address, IPv4 included through the dual-stack socket. */
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ret;
		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_any;
		a6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*a6);
		return 0;
	}
	/* Numeric addresses only (no name lookups while starting a daemon), and "localhost". */
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	struct sockaddr_in *a4 = (struct sockaddr_in *)ret;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ret;
	if (s[0] != '[' && inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*ret_len = sizeof(*a4);
	} else if (s[0] == '[' && inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*a6);
	} else {
		return -EINVAL;
	}
	return 0;
}

bool serve_is_loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	if (a->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr);
	return false;
}

void serve_format_addr(const struct sockaddr_storage *a, char *buf, size_t cap)
{
	char host[INET6_ADDRSTRLEN];
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;
		inet_ntop(AF_INET, &a4->sin_addr, host, sizeof(host));
		snprintf(buf, cap, "%s:%u", host, ntohs(a4->sin_port));
	} else if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
		inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof(host));
		snprintf(buf, cap, "[%s]:%u", host, ntohs(a6->sin6_port));
	} else {
		snprintf(buf, cap, "(socket family %d)", a->ss_family);
	}
}
