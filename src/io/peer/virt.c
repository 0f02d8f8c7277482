/* libvirt through its C API, loaded on first use, every call on a worker under a deadline: see
 * virt.h. */
#include "io/peer/virt.h"

#include <errno.h>
#include <fcntl.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/clock.h"
#include "io/dynlib.h"

#ifndef VMHOST_LIBVIRT_SONAME
#error "VMHOST_LIBVIRT_SONAME: the build names libvirt's soname (cmake/libvirt_source.cmake)"
#endif

#define VIRT_CALLS(X)                                                                                  \
	X(Initialize)                                                                                  \
	X(SetErrorFunc)                                                                                \
	X(GetLastErrorMessage)                                                                         \
	X(ConnectOpenReadOnly)                                                                         \
	X(ConnectClose)                                                                                \
	X(ConnectGetAllDomainStats)                                                                    \
	X(ConnectGetVersion)                                                                           \
	X(DomainStatsRecordListFree)                                                                   \
	X(DomainGetUUIDString)                                                                         \
	X(DomainGetName)

static struct {
#define VIRT_CALL_POINTER(name) __typeof__(vir##name) *name;
	VIRT_CALLS(VIRT_CALL_POINTER)
#undef VIRT_CALL_POINTER
} lv;

static const char *const names[] = {
#define VIRT_CALL_NAME(name) "vir" #name,
	VIRT_CALLS(VIRT_CALL_NAME)
#undef VIRT_CALL_NAME
};
_Static_assert(sizeof(lv) == sizeof(names) / sizeof(*names) * sizeof(void *), "a pointer for each name");
_Static_assert((int)VIRT_STATS_VM == (int)VIR_DOMAIN_STATS_VM && (int)VIRT_STATS_VCPU == (int)VIR_DOMAIN_STATS_VCPU &&
		       (int)VIRT_STATS_BLOCK == (int)VIR_DOMAIN_STATS_BLOCK &&
		       (int)VIRT_STATS_BALLOON == (int)VIR_DOMAIN_STATS_BALLOON,
	       "the groups are libvirt's");

static struct dynlib lib = {.soname = VMHOST_LIBVIRT_SONAME, .install_hint = "Debian: apt install libvirt0",
			    .names = names, .calls = &lv, .n = sizeof(names) / sizeof(*names)};

struct virt {
	char uri[256];
	int deadline_ms;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	int refs;            /* the owner's, and a pending call's */
	bool pending;        /* a call runs on the worker */
	bool abandoned;      /* its caller stopped waiting: the worker drops the answer */
	double pending_since;
	virConnectPtr conn;  /* used by one worker at a time */
	unsigned long version; /* the hypervisor's version; 0 not asked yet (or unknown) */
	unsigned groups;     /* the pending call's question and answer */
	int result;
	struct virt_domains out;
	char why[256];
};

/* libvirt prints every error on stderr unless told otherwise: vmhost says why in its own words. */
static void quiet(void *data, virErrorPtr err)
{
	(void)data;
	(void)err;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init(void)
{
	lv.Initialize();
	lv.SetErrorFunc(NULL, quiet);
}

void virt_domains_free(struct virt_domains *d)
{
	for (size_t i = 0; d->v && i < d->n; i++) {
		for (size_t k = 0; k < d->v[i].nparams; k++)
			free(d->v[i].params[k].s);
		free(d->v[i].params);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
	d->hypervisor_version = 0;
}

const struct virt_domain *virt_domain_of_pid(const struct virt_domains *d, pid_t pid)
{
	for (size_t i = 0; pid > 0 && i < d->n; i++)
		if (d->v[i].pid == pid)
			return &d->v[i];
	return NULL;
}

const struct virt_domain *virt_domain_find(const struct virt_domains *d, const char *uuid)
{
	for (size_t i = 0; uuid && uuid[0] && i < d->n; i++)
		if (!strcasecmp(d->v[i].uuid, uuid))
			return &d->v[i];
	return NULL;
}

const struct virt_param *virt_param_find(const struct virt_domain *d, const char *field)
{
	for (size_t p = 0; d && p < d->nparams; p++)
		if (!strcmp(d->params[p].field, field))
			return &d->params[p];
	return NULL;
}

static int copy_param(const virTypedParameter *p, struct virt_param *ret)
{
	switch (p->type) {
	case VIR_TYPED_PARAM_INT: ret->i = p->value.i; break;
	case VIR_TYPED_PARAM_UINT: ret->i = p->value.ui; break;
	case VIR_TYPED_PARAM_LLONG: ret->i = p->value.l; break;
	case VIR_TYPED_PARAM_ULLONG: ret->i = (int64_t)p->value.ul; break;
	case VIR_TYPED_PARAM_DOUBLE: ret->i = (int64_t)p->value.d; break;
	case VIR_TYPED_PARAM_STRING:
		if (!p->value.s || !(ret->s = strdup(p->value.s)))
			return -ENOMEM;
		break;
	default: return -EINVAL; /* booleans */
	}
	ret->d = p->type == VIR_TYPED_PARAM_DOUBLE ? p->value.d : (double)ret->i;
	snprintf(ret->field, sizeof(ret->field), "%s", p->field);
	return 0;
}

/* libvirt's pid file of a qemu:///system domain: a regular file of root's that no one else may
 * write, in libvirt's own state directory, holding the pid; 0 when there is none such. */
static pid_t domain_pid(const char *uri, const char *name)
{
	if (strcmp(uri, "qemu:///system") || !name[0] || strchr(name, '/'))
		return 0;
	char path[320], buf[32];
	snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 022)
			    ? read(fd, buf, sizeof(buf) - 1)
			    : -1;
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *end;
	long v = strtol(buf, &end, 10);
	return v > 0 && v <= INT32_MAX && (*end == '\0' || *end == '\n') ? (pid_t)v : 0;
}

static int copy_out(virDomainStatsRecordPtr *recs, int n, const char *uri, struct virt_domains *ret)
{
	struct virt_domains d = {.v = calloc(n > 0 ? (size_t)n : 1, sizeof(*d.v))};
	if (!d.v)
		return -ENOMEM;
	for (int i = 0; i < n; i++, d.n++) {
		struct virt_domain *dom = &d.v[i];
		if (lv.DomainGetUUIDString(recs[i]->dom, dom->uuid) < 0)
			dom->uuid[0] = '\0';
		const char *name = lv.DomainGetName(recs[i]->dom);
		snprintf(dom->name, sizeof(dom->name), "%s", name ? name : "");
		dom->pid = domain_pid(uri, dom->name);
		dom->params = calloc(recs[i]->nparams > 0 ? (size_t)recs[i]->nparams : 1, sizeof(*dom->params));
		if (!dom->params) {
			virt_domains_free(&d);
			return -ENOMEM;
		}
		for (int k = 0; k < recs[i]->nparams; k++)
			dom->nparams += copy_param(&recs[i]->params[k], &dom->params[dom->nparams]) == 0;
	}
	*ret = d;
	return 0;
}

/* The call itself, on the worker. */
static int fetch(struct virt *v, unsigned groups, struct virt_domains *ret, char *why, size_t cap)
{
	if (!v->conn && !(v->conn = lv.ConnectOpenReadOnly(v->uri))) {
		snprintf(why, cap, "libvirt %.100s: cannot connect: %.120s", v->uri, lv.GetLastErrorMessage());
		return -ECONNREFUSED;
	}
	virDomainStatsRecordPtr *recs = NULL;
	int n = lv.ConnectGetAllDomainStats(v->conn, groups, &recs, VIR_CONNECT_GET_ALL_DOMAINS_STATS_ACTIVE);
	if (n < 0) { /* the connection may be dead (libvirtd restarted): the next call connects again */
		snprintf(why, cap, "libvirt %.100s: domain statistics: %.120s", v->uri, lv.GetLastErrorMessage());
		lv.ConnectClose(v->conn);
		v->conn = NULL;
		return -EIO;
	}
	int r = copy_out(recs, n, v->uri, ret);
	lv.DomainStatsRecordListFree(recs);
	/* The hypervisor's version (QEMU's for the qemu driver), asked once and only with the vcpu
	 * group, whose reads it decides the pace of: a libvirtd just restarted can take seconds to
	 * answer it (its QEMU capabilities), longer than a call's deadline. */
	if (r == 0 && (groups & VIRT_STATS_VCPU) && !v->version && lv.ConnectGetVersion(v->conn, &v->version) < 0)
		v->version = 0;
	ret->hypervisor_version = v->version;
	return r;
}

/* A write to a libvirtd that went away raises SIGPIPE in the writing thread, which would end the
 * program: blocked on the threads that talk to libvirt, the write fails with EPIPE instead. */
static void block_sigpipe(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

static void *closer(void *p)
{
	block_sigpipe();
	lv.ConnectClose(p);
	return NULL;
}

/* The last reference gone: its connection closed on a thread of its own (closing talks to
 * libvirtd, which may be hung). */
static void destroy(struct virt *v)
{
	pthread_t t;
	pthread_attr_t a;
	if (v->conn && (pthread_attr_init(&a) != 0 || pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) != 0 ||
			pthread_create(&t, &a, closer, v->conn) != 0))
		lv.ConnectClose(v->conn);
	if (v->conn)
		pthread_attr_destroy(&a);
	virt_domains_free(&v->out);
	pthread_cond_destroy(&v->cond);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

static void *worker(void *p)
{
	struct virt *v = p;
	struct virt_domains out = {0};
	char why[256] = "";
	block_sigpipe();
	int r = fetch(v, v->groups, &out, why, sizeof(why));
	pthread_mutex_lock(&v->lock);
	v->pending = false;
	if (v->abandoned)
		virt_domains_free(&out);
	else {
		v->result = r;
		v->out = out;
		snprintf(v->why, sizeof(v->why), "%s", why);
	}
	bool last = --v->refs == 0;
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
	if (last)
		destroy(v);
	return NULL;
}

int virt_new(const char *uri, int deadline_ms, struct virt **ret)
{
	struct virt *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	snprintf(v->uri, sizeof(v->uri), "%s", uri ? uri : "qemu:///system");
	v->deadline_ms = deadline_ms;
	v->refs = 1;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&v->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&v->lock, NULL);
	*ret = v;
	return 0;
}

void virt_free(struct virt *v)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->lock);
	v->abandoned = true;
	bool last = --v->refs == 0;
	pthread_mutex_unlock(&v->lock);
	if (last)
		destroy(v);
}

/* Starts the call on a detached worker; the lock is held. */
static int start(struct virt *v, unsigned groups)
{
	pthread_attr_t a;
	pthread_t t;
	if (pthread_attr_init(&a) != 0)
		return -ENOMEM;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	v->pending = true;
	v->abandoned = false;
	v->groups = groups;
	v->pending_since = clock_monotonic_seconds();
	v->refs++;
	int e = pthread_create(&t, &a, worker, v);
	pthread_attr_destroy(&a);
	if (e != 0) {
		v->pending = false;
		v->refs--;
		return -e;
	}
	return 0;
}

int virt_domain_stats(struct virt *v, unsigned groups, struct virt_domains *ret, char *why, size_t cap)
{
#ifdef __SANITIZE_ADDRESS__
	/* ASan's XDR interceptors call glibc's XDR, gone since glibc 2.32: libvirt's (libtirpc's)
	 * first message then jumps to a null pointer (seen here in virNetMessageEncodeHeader). */
	(void)v;
	(void)groups;
	(void)ret;
	snprintf(why, cap, "libvirt: not used by an AddressSanitizer build (its XDR interceptors break libtirpc)");
	return -ELIBACC;
#endif
	char err[256];
	if (dynlib_get(&lib, err, sizeof(err)) < 0) {
		snprintf(why, cap, "libvirt: %s", err);
		return -ELIBACC;
	}
	pthread_once(&init_once, init);
	pthread_mutex_lock(&v->lock);
	if (v->pending) { /* an earlier call is still out: no second thread on a hung daemon */
		snprintf(why, cap, "libvirt %.100s: no answer to a call made %.1f s ago (libvirtd hung?)", v->uri,
			 clock_monotonic_seconds() - v->pending_since);
		pthread_mutex_unlock(&v->lock);
		return -ETIMEDOUT;
	}
	int r = start(v, groups);
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += v->deadline_ms / 1000;
	until.tv_nsec += (long)(v->deadline_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (r == 0 && v->pending && pthread_cond_timedwait(&v->cond, &v->lock, &until) != ETIMEDOUT)
		;
	if (r < 0)
		snprintf(why, cap, "libvirt: cannot start a thread: %s", strerror(-r));
	else if (v->pending) {
		v->abandoned = true;
		snprintf(why, cap, "libvirt %.100s: no answer within %.1f s (libvirtd hung or overloaded?)", v->uri,
			 v->deadline_ms / 1000.0);
		r = -ETIMEDOUT;
	} else {
		r = v->result;
		*ret = v->out;
		v->out = (struct virt_domains){0};
		if (r < 0)
			snprintf(why, cap, "%s", v->why);
	}
	pthread_mutex_unlock(&v->lock);
	return r;
}
