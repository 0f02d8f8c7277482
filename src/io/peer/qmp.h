/* A QMP client for short visits: connect to QEMU's monitor socket, read the greeting, negotiate,
 * run a few commands, close. A QMP server serves one client at a time, so a session must never be
 * kept open between samples.
 *
 *   struct qmp *q;
 *   int r = qmp_open(path, vm_pid, 500, &q, NULL);   connect + greeting + qmp_capabilities
 *   (500 ms for the whole visit: every call of the session shares that deadline)
 *   struct json_doc reply; const struct json_value *ret;
 *   r = qmp_call(q, "query-stats", "{\"target\":\"vm\"}", &reply, &ret);
 *   ... json_free(&reply);
 *   qmp_close(q);
 *   on failure: qmp_strerror(r) is the one-line reason; for -EREMOTEIO, qmp_error_class/desc(q).
 */
#ifndef VMHOST_IO_PEER_QMP_H
#define VMHOST_IO_PEER_QMP_H

#include <stddef.h>
#include <sys/types.h>

#include "parse/json.h"

#define QMP_MAX_REPLY (8u << 20)         /* a reply longer than this is -EMSGSIZE */
#define QMP_MAX_VISIT_BYTES (16u << 20)  /* what one visit reads at most (-EMSGSIZE past it) */
#define QMP_MAX_VISIT_EVENTS 1000u       /* asynchronous events one visit skips (-EMLINK past it) */

struct qmp;

/* Connects and negotiates: the start of a visit, which ends timeout_ms from now, every call of the
 * session included (a peer that answers each call just before a per-call deadline, or that sends
 * events without end, costs the visit's time at most). With listener > 0, the socket is used only
 * when that process is its listener (SO_PEERCRED: the process that called listen(), QEMU itself
 * for its own monitor): else -EXDEV before anything is read or sent. *ret_listener (may be NULL)
 * gets the listener's pid, 0 when unknown, on success and on -EXDEV. Errors (each has its
 * qmp_strerror line): -ENOENT no such socket, -ECONNREFUSED nothing listening (stale socket),
 * -EACCES/-EPERM permission denied, -ENOTSOCK not a socket, -ENAMETOOLONG path too long for a unix
 * socket, -EXDEV another listener, -EBUSY no greeting in time (QEMU serves another client),
 * -EPROTO not a QMP greeting, -ECONNRESET closed before or during the greeting, -EBADMSG malformed
 * JSON, -EMSGSIZE, -EMLINK as qmp_call. */
int qmp_open(const char *path, pid_t listener, int timeout_ms, struct qmp **ret, pid_t *ret_listener);

/* Runs one command (arguments_json: an object's JSON text, or NULL) and waits for its reply,
 * skipping asynchronous events, within what is left of the visit. On success *ret_doc holds the reply
 * (free with json_free) and *ret_return its "return" value. Errors: -EREMOTEIO QEMU answered with
 * an error (see qmp_error_*), -ETIMEDOUT the visit's time is up, -ECONNRESET closed mid-reply, -EBADMSG
 * malformed JSON, -EMSGSIZE reply too big or the visit read QMP_MAX_VISIT_BYTES, -EMLINK more than
 * QMP_MAX_VISIT_EVENTS events, -EPROTO a reply that is neither return nor error, -EPIPE closed
 * before the command could be sent. After any error the session can only be closed. */
int qmp_call(struct qmp *q, const char *command, const char *arguments_json, struct json_doc *ret_doc,
	     const struct json_value **ret_return);

/* The last error reply's class ("CommandNotFound", "GenericError" ...) and description. */
const char *qmp_error_class(const struct qmp *q);
const char *qmp_error_desc(const struct qmp *q);

/* The QEMU version from the greeting (major*10000 + minor*100 + micro), 0 when unknown. */
unsigned qmp_qemu_version(const struct qmp *q);

/* Starts a new visit on an open session (a benchmark that keeps its own QEMU's monitor open between
 * steps): the calls that follow have timeout_ms, QMP_MAX_VISIT_BYTES and QMP_MAX_VISIT_EVENTS anew. */
void qmp_new_visit(struct qmp *q, int timeout_ms);

/* Asynchronous events skipped so far in this visit. */
unsigned qmp_events_skipped(const struct qmp *q);

/* Closes the socket at once; accepts NULL. */
void qmp_close(struct qmp *q);

/* A one-line reason for a negative errno from qmp_open or qmp_call. */
const char *qmp_strerror(int err);
/* qmp_open's failure in one line into buf, naming the listener for -EXDEV ("the QMP socket's
 * listener is pid 4242, not the VM: nothing sent to it"). */
void qmp_open_why(int err, pid_t listener, char *buf, size_t cap);

#endif
