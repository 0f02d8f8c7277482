/* `vmhost serve --listen` (serve_parse_listen, src/net/listen_addr.c): an accepted address is
 * IPv4 or IPv6 with the matching length, its port is the decimal digits after the last colon,
 * and the form serve prints it in ("127.0.0.1:9464", "[::1]:9464") parses to the same socket
 * address. A refused one leaves the outputs untouched. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

#include "fuzz.h"
#include "net/listen_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	struct sockaddr_storage a;
	memset(&a, 0x5a, sizeof(a));
	socklen_t len = 7;
	int r = serve_parse_listen(s, &a, &len);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL && len == 7);
		free(s);
		return 0;
	}
	FUZZ_CHECK(r == 0);
	unsigned port;
	if (a.ss_family == AF_INET) {
		FUZZ_CHECK(len == sizeof(struct sockaddr_in));
		port = ntohs(((const struct sockaddr_in *)&a)->sin_port);
	} else {
		FUZZ_CHECK(a.ss_family == AF_INET6 && len == sizeof(struct sockaddr_in6));
		port = ntohs(((const struct sockaddr_in6 *)&a)->sin6_port);
	}
	const char *digits = strrchr(s, ':') + 1;
	FUZZ_CHECK(*digits && strspn(digits, "0123456789") == strlen(digits));
	FUZZ_CHECK(strtoul(digits, NULL, 10) == port);

	char printed[INET6_ADDRSTRLEN + 16];
	serve_format_addr(&a, printed, sizeof(printed));
	struct sockaddr_storage again;
	memset(&again, 0x5a, sizeof(again));
	socklen_t again_len;
	FUZZ_CHECK(serve_parse_listen(printed, &again, &again_len) == 0);
	FUZZ_CHECK(again_len == len && !memcmp(&a, &again, len));
	FUZZ_CHECK(serve_is_loopback(&a) == serve_is_loopback(&again));
	free(s);
	return 0;
}
