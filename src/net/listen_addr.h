/* The --listen address of `vmhost serve`: pure functions of the text and the address, no
 * sockets opened (fuzz/fuzz_listen.c). */
#ifndef VMHOST_NET_LISTEN_ADDR_H
#define VMHOST_NET_LISTEN_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* "ADDR:PORT", "[V6ADDR]:PORT", "localhost:PORT", or ":PORT" (every address, v4 and v6) into a
 * socket address. Returns 0 or -EINVAL. */
int serve_parse_listen(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len);
/* True for 127.0.0.0/8 and ::1. */
bool serve_is_loopback(const struct sockaddr_storage *a);
/* "127.0.0.1:9464" / "[::1]:9464": the form serve_parse_listen reads back. */
void serve_format_addr(const struct sockaddr_storage *a, char *buf, size_t cap);

#endif
