/* A QMP client for short visits: connect to QEMU's monitor socket, read the greeting, negotiate,
 * run a few commands, close. A QMP server serves one client at a time, so a session must never be
 * kept open between samples.
 *
 *   struct qmp *q;
 *   int r = qmp_open(path, 500, &q);           connect + greeting + qmp_capabilities
 *   struct json_doc reply; const struct json_value *ret;
 *   r = qmp_call(q, "query-stats", "{\"target\":\"vm\"}", &reply, &ret);
 *   ... json_free(&reply);
 *   qmp_close(q);
 *   on failure: qmp_strerror(r) is the one-line reason; for -EREMOTEIO, qmp_error_class/desc(q).
 */
#ifndef VMHOST_IO_PEER_QMP_H
#define VMHOST_IO_PEER_QMP_H

#include <stddef.h>

#include "parse/json.h"

#define QMP_MAX_REPLY (8u << 20) /* a reply longer than this is -EMSGSIZE */

struct qmp;

/* Connects and negotiates, all within timeout_ms. Errors (each has its qmp_strerror line):
 * -ENOENT no such socket, -ECONNREFUSED nothing listening (stale socket), -EACCES/-EPERM
 * permission denied, -ENOTSOCK not a socket, -ENAMETOOLONG path too long for a unix socket,
 * -EBUSY no greeting in time (QEMU serves another client), -EPROTO not a QMP greeting,
 * -ECONNRESET closed before or during the greeting, -EBADMSG malformed JSON. */
int qmp_open(const char *path, int timeout_ms, struct qmp **ret);

/* Runs one command (arguments_json: an object's JSON text, or NULL) and waits for its reply,
 * skipping asynchronous events, within the session's timeout. On success *ret_doc holds the reply
 * (free with json_free) and *ret_return its "return" value. Errors: -EREMOTEIO QEMU answered with
 * an error (see qmp_error_*), -ETIMEDOUT, -ECONNRESET closed mid-reply, -EBADMSG malformed JSON,
 * -EMSGSIZE reply too big, -EPROTO a reply that is neither return nor error, -EPIPE closed
 * before the command could be sent. After any error the session can only be closed. */
int qmp_call(struct qmp *q, const char *command, const char *arguments_json, struct json_doc *ret_doc,
	     const struct json_value **ret_return);

/* The last error reply's class ("CommandNotFound", "GenericError" ...) and description. */
const char *qmp_error_class(const struct qmp *q);
const char *qmp_error_desc(const struct qmp *q);

/* The QEMU version from the greeting (major*10000 + minor*100 + micro), 0 when unknown. */
unsigned qmp_qemu_version(const struct qmp *q);

/* Asynchronous events skipped so far in this session. */
unsigned qmp_events_skipped(const struct qmp *q);

/* Closes the socket at once; accepts NULL. */
void qmp_close(struct qmp *q);

/* A one-line reason for a negative errno from qmp_open or qmp_call. */
const char *qmp_strerror(int err);

#endif
