/* Drives the KVM source modules from shell tests and by hand (the commands integrate them later):
 *   kvmprobe qmp PATH COMMAND [ARGS_JSON] [--timeout MS]   the "return" value, or "error: REASON"
 *   kvmprobe hold PATH SECONDS                              a QMP session held open (a busy monitor)
 *   kvmprobe stats PATH [--vcpu]                            KVM stats through query-stats
 *   kvmprobe trace PID [--isa vmx|svm|unknown] [--seconds S] [--sys-root DIR] [--all] [--signal]
 *           counts kvm tracepoints of PID until it exits (or S seconds); --signal sends SIGUSR1
 *           to PID once the events are open (kvmguest --wait-signal)
 *   kvmprobe host [--sys-root DIR]                          the host's KVM module and parameters
 * Exit status: 0, 1 on failure (the reason on stderr, one line). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/kvm/kvm_host.h"
#include "core/kvm/kvm_trace.h"
#include "core/kvm/kvm_qmp.h"
#include "io/peer/qmp.h"

static int usage(void)
{
	fprintf(stderr, "usage: kvmprobe qmp|hold|stats|trace|host ...\n");
	return 2;
}

static const char *opt(int argc, char **argv, const char *name, const char *dflt)
{
	for (int i = 0; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return argv[i + 1];
	return dflt;
}

static int has(int argc, char **argv, const char *name)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

static int do_qmp(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	const char *args = argc > 4 && argv[4][0] == '{' ? argv[4] : NULL;
	struct qmp *q;
	int r = qmp_open(argv[2], 0, atoi(opt(argc, argv, "--timeout", "1000")), &q, NULL); /* a test tool: any listener */
	if (r < 0) {
		fprintf(stderr, "error: %s\n", qmp_strerror(r));
		return 1;
	}
	struct json_doc d;
	const struct json_value *v;
	r = qmp_call(q, argv[3], args, &d, &v);
	if (r == -EREMOTEIO)
		fprintf(stderr, "error: %s: %s: %s\n", qmp_strerror(r), qmp_error_class(q), qmp_error_desc(q));
	else if (r < 0)
		fprintf(stderr, "error: %s\n", qmp_strerror(r));
	else {
		printf("%.*s\n", (int)v->length + (v->type == JSON_STRING ? 2 : 0), d.text + v->offset - (v->type == JSON_STRING));
		json_free(&d);
	}
	qmp_close(q);
	return r < 0;
}

static int do_hold(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	struct qmp *q;
	int r = qmp_open(argv[2], 0, 2000, &q, NULL);
	if (r < 0) {
		fprintf(stderr, "error: %s\n", qmp_strerror(r));
		return 1;
	}
	printf("holding\n");
	fflush(stdout);
	sleep((unsigned)atoi(argv[3]));
	qmp_close(q);
	return 0;
}

static void print_value(const char *prefix, const struct qmp_stat_desc *d, const struct qmp_stat_value *v)
{
	if (v->buckets) {
		printf("%s%s %s [", prefix, d->name, qmp_stat_type_name(d->type));
		for (size_t i = 0; i < v->nbuckets; i++)
			printf("%s%llu", i ? "," : "", (unsigned long long)v->buckets[i]);
		printf("]\n");
	} else if (v->value.known) {
		printf("%s%s %s %lld\n", prefix, d->name, kvm_stat_kind_name(d->kind), (long long)v->value.v);
	} else {
		printf("%s%s %s null\n", prefix, d->name, kvm_stat_kind_name(d->kind));
	}
}

static int do_stats(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	struct kvm_qmp_vm *src;
	if (kvm_qmp_vm_new(argv[2], 0, 1000, &src) < 0)
		return 1;
	struct kvm_qmp_sample s;
	int r = kvm_qmp_vm_sample(src, &s);
	if (r < 0) {
		fprintf(stderr, "error: %s\n", kvm_qmp_vm_reason(src));
		kvm_qmp_vm_free(src);
		return 1;
	}
	const struct qmp_stats_schema *sc = kvm_qmp_vm_schema(src);
	for (size_t i = 0; i < sc->n[QMP_STATS_VM]; i++)
		print_value("vm ", &sc->desc[QMP_STATS_VM][i], &s.vm[i]);
	for (size_t c = 0; c < s.nvcpus; c++) {
		char prefix[64];
		snprintf(prefix, sizeof(prefix), "vcpu%d tid=%d ", s.vcpus[c].index, (int)s.vcpus[c].thread);
		for (size_t i = 0; i < sc->n[QMP_STATS_VCPU]; i++)
			if (has(argc, argv, "--vcpu") || !strcmp(sc->desc[QMP_STATS_VCPU][i].name, "exits"))
				print_value(prefix, &sc->desc[QMP_STATS_VCPU][i], &s.vcpus[c].values[i]);
	}
	kvm_qmp_sample_free(&s, src);
	kvm_qmp_vm_free(src);
	return 0;
}

static int do_trace(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	struct io_root root = {.proc = opt(argc, argv, "--proc-root", NULL), .sys = opt(argc, argv, "--sys-root", NULL)};
	const char *isa = opt(argc, argv, "--isa", "vmx");
	struct kvm_trace_config c = {
		.pid = atoi(argv[2]),
		.isa = !strcmp(isa, "vmx") ? KVM_TRACE_VMX : !strcmp(isa, "svm") ? KVM_TRACE_SVM : KVM_TRACE_ISA_UNKNOWN};
	/* One fd per thread and reason: raise the soft limit as the commands will. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct kvm_trace *t;
	int r = kvm_trace_open(&root, &c, &t);
	if (r < 0) {
		char why[256];
		kvm_trace_explain(&root, r, why, sizeof(why));
		fprintf(stderr, "error: %s\n", why);
		return 1;
	}
	size_t n = kvm_trace_ncounters(t);
	printf("counters %zu threads %zu\n", n, kvm_trace_nthreads(t));
	fflush(stdout);
	if (has(argc, argv, "--signal"))
		kill(c.pid, SIGUSR1);
	maybe_i64 *v = calloc(n, sizeof(*v));
	double seconds = atof(opt(argc, argv, "--seconds", "0"));
	for (double waited = 0; !v || seconds <= 0 || waited < seconds; waited += 0.05) {
		if (!v || kill(c.pid, 0) < 0 || kvm_trace_sample(t, v) == -ESRCH)
			break;
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	r = v ? kvm_trace_sample(t, v) : -ENOMEM;
	for (size_t i = 0; v && i < n; i++)
		if (v[i].known && (v[i].v || has(argc, argv, "--all")))
			printf("%s %s %lld\n", kvm_trace_event_name(kvm_trace_counter_event(t, i)), kvm_trace_counter_reason(t, i),
			       (long long)v[i].v);
	if (has(argc, argv, "--filters"))
		for (size_t i = 0; i < n; i++)
			printf("filter %s %s: %s\n", kvm_trace_event_name(kvm_trace_counter_event(t, i)),
			       kvm_trace_counter_reason(t, i), kvm_trace_counter_filter(t, i));
	free(v);
	kvm_trace_close(t);
	return r < 0 && r != -ESRCH;
}

static int do_host(int argc, char **argv)
{
	struct io_root root = {.sys = opt(argc, argv, "--sys-root", NULL)};
	struct kvm_host h;
	if (kvm_host_read(&root, &h) < 0)
		return 1;
	if (!h.loaded) {
		printf("kvm not loaded\n");
		return 0;
	}
	printf("module %s vendor %s device %s\n", h.module, kvm_vendor_name(h.vendor), h.device ? "yes" : "no");
	for (size_t i = 0; i < h.nmodule_params; i++)
		printf("%s.%s=%s\n", h.module, h.module_params[i].name, h.module_params[i].value);
	for (size_t i = 0; i < h.nkvm_params; i++)
		printf("kvm.%s=%s\n", h.kvm_params[i].name, h.kvm_params[i].value);
	kvm_host_free(&h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "qmp"))
		return do_qmp(argc, argv);
	if (!strcmp(argv[1], "hold"))
		return do_hold(argc, argv);
	if (!strcmp(argv[1], "stats"))
		return do_stats(argc, argv);
	if (!strcmp(argv[1], "trace"))
		return do_trace(argc, argv);
	if (!strcmp(argv[1], "host"))
		return do_host(argc, argv);
	return usage();
}
