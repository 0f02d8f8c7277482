/* Generic netlink messages, built and walked over buffers (genl.h). */
#include "parse/netlink/genl.h"

#include <errno.h>
#include <limits.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <string.h>

ssize_t genl_request(void *buf, size_t cap, uint16_t family, uint8_t cmd, uint8_t version, uint32_t seq,
		     uint16_t attr, const void *value, size_t len)
{
	size_t attr_len = NLA_HDRLEN + len;
	size_t total = NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(attr_len);
	if (len > UINT16_MAX - NLA_HDRLEN || total > cap)
		return -ENOSPC;
	memset(buf, 0, total);
	uint8_t *p = buf;
	struct nlmsghdr nh = {.nlmsg_len = (uint32_t)total, .nlmsg_type = family, .nlmsg_flags = NLM_F_REQUEST,
			      .nlmsg_seq = seq};
	struct genlmsghdr gh = {.cmd = cmd, .version = version};
	struct nlattr na = {.nla_len = (uint16_t)attr_len, .nla_type = attr};
	memcpy(p, &nh, sizeof(nh));
	memcpy(p + NLMSG_HDRLEN, &gh, sizeof(gh));
	memcpy(p + NLMSG_HDRLEN + GENL_HDRLEN, &na, sizeof(na));
	if (len)
		memcpy(p + NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN, value, len);
	return (ssize_t)total;
}

int genl_reply(const void *buf, size_t len, uint32_t seq, const uint8_t **ret_attrs, size_t *ret_len)
{
	struct nlmsghdr nh;
	if (len < NLMSG_HDRLEN)
		return -EBADMSG;
	memcpy(&nh, buf, sizeof(nh));
	if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > len)
		return -EBADMSG;
	const uint8_t *body = (const uint8_t *)buf + NLMSG_HDRLEN;
	size_t body_len = nh.nlmsg_len - NLMSG_HDRLEN;
	if (nh.nlmsg_seq != seq)
		return -EAGAIN;
	if (nh.nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr e;
		if (body_len < sizeof(e.error))
			return -EBADMSG;
		memcpy(&e.error, body, sizeof(e.error));
		/* An acknowledgement (0) is no answer to a GET: there was none to give. */
		return e.error < 0 && e.error > -4096 ? e.error : e.error == 0 ? -ENODATA : -EBADMSG;
	}
	if (nh.nlmsg_type < NLMSG_MIN_TYPE || body_len < GENL_HDRLEN)
		return -EBADMSG;
	*ret_attrs = body + GENL_HDRLEN;
	*ret_len = body_len - GENL_HDRLEN;
	return 0;
}

int genl_attr_find(const uint8_t *attrs, size_t len, uint16_t type, struct genl_attr *ret)
{
	size_t at = 0;
	while (at + NLA_HDRLEN <= len) {
		struct nlattr na;
		memcpy(&na, attrs + at, sizeof(na));
		if (na.nla_len < NLA_HDRLEN || na.nla_len > len - at)
			return -EBADMSG;
		if ((na.nla_type & NLA_TYPE_MASK) == type) {
			*ret = (struct genl_attr){type, attrs + at + NLA_HDRLEN, (size_t)na.nla_len - NLA_HDRLEN};
			return 0;
		}
		at += NLA_ALIGN(na.nla_len);
	}
	return -ENOENT; /* what is left is shorter than a header: padding */
}

int genl_family_id(const uint8_t *attrs, size_t len, uint16_t *ret)
{
	struct genl_attr a;
	int r = genl_attr_find(attrs, len, CTRL_ATTR_FAMILY_ID, &a);
	if (r < 0)
		return r;
	if (a.len != sizeof(uint16_t))
		return -EBADMSG;
	memcpy(ret, a.data, sizeof(*ret));
	return 0;
}
