/* Sockets vmhost listens on: its own, or the ones systemd passes (socket activation). QMP's
 * client socket is io/peer/qmp.c's. */
#ifndef VMHOST_IO_PEER_SOCKET_H
#define VMHOST_IO_PEER_SOCKET_H

#include <sys/socket.h>

/* A bound, listening, close-on-exec TCP socket for the address (SO_REUSEADDR; the IPv6 any
 * address takes IPv4 too). Returns the fd or a negative errno. */
int io_listen(const struct sockaddr_storage *a, socklen_t len);

/* systemd socket activation: the first passed socket (fd 3) when LISTEN_PID is this process and
 * LISTEN_FDS >= 1 (the variables are then removed). Every passed socket is made close-on-exec,
 * the ones after the first too, so that none leaks into a child. -ENOENT when not activated,
 * -EINVAL when fd 3 is not a listening stream socket. */
int io_socket_activation(int *ret_fd);

#endif
