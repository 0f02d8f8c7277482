/* Generic netlink as the kernel speaks it, pure: a request's bytes built into a buffer, and a
 * reply's bytes walked (its header checked, the kernel's error told, its attributes found).
 * io/peer/taskstats.c sends and receives them over the socket; nothing here touches one. One
 * message per request and per reply, as the kernel's taskstats and controller families answer. */
#ifndef VMHOST_PARSE_NETLINK_GENL_H
#define VMHOST_PARSE_NETLINK_GENL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The controller family, which names the others' ids (linux/genetlink.h's GENL_ID_CTRL). */
#define GENL_CTRL_FAMILY 0x10

/* An attribute found in a message: its type (flags masked off) and payload. */
struct genl_attr {
	uint16_t type;
	const uint8_t *data;
	size_t len;
};

/* One request: the netlink header (type family, NLM_F_REQUEST, seq, port 0), the generic header
 * (cmd, version) and one attribute of type attr holding len bytes of value. Written to buf: the
 * message's length, or -ENOSPC when it does not fit cap. */
ssize_t genl_request(void *buf, size_t cap, uint16_t family, uint8_t cmd, uint8_t version, uint32_t seq,
		     uint16_t attr, const void *value, size_t len);

/* The reply to request seq (len bytes received, one message): 0 with its attributes (after the
 * generic header) in *ret_attrs, *ret_len; the kernel's error as its negative errno
 * (NLMSG_ERROR); -EAGAIN for a message of another request (read on); -EBADMSG for anything
 * malformed (cut short, lengths that do not add up). ret_* are untouched unless 0. */
int genl_reply(const void *buf, size_t len, uint32_t seq, const uint8_t **ret_attrs, size_t *ret_len);

/* The first attribute of type in a run of attributes (a reply's, or a nested one's payload).
 * 0, -ENOENT when there is none, -EBADMSG when the run is malformed before it is found. */
int genl_attr_find(const uint8_t *attrs, size_t len, uint16_t type, struct genl_attr *ret);

/* The family id in the controller's answer to CTRL_CMD_GETFAMILY (its attributes, as
 * genl_reply gives them). 0, -ENOENT without one, -EBADMSG when it is not 16 bits. */
int genl_family_id(const uint8_t *attrs, size_t len, uint16_t *ret);

#endif
