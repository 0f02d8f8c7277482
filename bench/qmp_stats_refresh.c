/* Benchmark: CPU time of one QMP refresh (query-stats for the VM and its vCPUs, query-cpus-fast)
 * over many VMs, measured in this process (the client's cost, what vmhost pays per refresh).
 *
 *   build/bench_qmp_stats [--vms 10] [--vcpus 4] [--refreshes 50] [--replay]
 *
 * With /dev/kvm: real QEMU firmware guests (-machine pc,accel=kvm -smp VCPUS), stopped by pid at
 * the end. Without it (or --replay): one replay server process per VM answering on a unix socket
 * with QEMU 7.2's replies for that many vCPUs (built from tests/fixtures/qmp), so the client does
 * the same work; the output says which. The debugfs reader's cost: build/bench_exits. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/kvm/kvm_qmp.h"
#include "io/peer/qmp.h"

#ifndef VMHOST_FIXTURES_DIR
#define VMHOST_FIXTURES_DIR "tests/fixtures"
#endif
#define MAX_VMS 64

static pid_t children[MAX_VMS];
static int nchildren;

static void stop_children(void)
{
	for (int i = 0; i < nchildren; i++)
		if (children[i] > 0)
			kill(children[i], SIGKILL);
	for (int i = 0; i < nchildren; i++)
		if (children[i] > 0)
			waitpid(children[i], NULL, 0);
	nchildren = 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_children();
	_exit(130);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static char *slurp(const char *rel)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", VMHOST_FIXTURES_DIR, rel);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strndup(buf, n);
}

/* The "return" value's text of a fixture reply. */
static char *return_of(const char *rel)
{
	char *text = slurp(rel);
	struct json_doc d;
	if (!text || json_parse(text, strlen(text), &d) < 0)
		return NULL;
	const struct json_value *v = json_get(&d, json_root(&d), "return");
	char *out = v ? strndup(d.text + v->offset, v->length) : NULL;
	json_free(&d);
	free(text);
	return out;
}

struct canned {
	char *schemas, *vm, *vcpu, *cpus;
};

/* query-stats vcpu and query-cpus-fast for n vCPUs, every stat of the fixture schema. */
static int build_vcpus(struct canned *c, int n)
{
	char *schemas = slurp("qmp/schemas-kvm-x86.json");
	struct json_doc d;
	if (!schemas || json_parse(schemas, strlen(schemas), &d) < 0)
		return -1;
	struct qmp_stats_schema s;
	if (qmp_parse_schemas(&d, json_get(&d, json_root(&d), "return"), &s) < 0)
		return -1;
	size_t cap = 1 << 20, len = 0;
	char *out = malloc(cap), *cpus = malloc(65536);
	size_t clen = 0;
	len += (size_t)snprintf(out + len, cap - len, "[");
	clen += (size_t)snprintf(cpus + clen, 65536 - clen, "[");
	for (int k = 0; k < n; k++) {
		len += (size_t)snprintf(out + len, cap - len, "%s{\"provider\": \"kvm\", \"qom-path\": \"/machine/unattached/device[%d]\", \"stats\": [",
					k ? ", " : "", k);
		for (size_t i = 0; i < s.n[QMP_STATS_VCPU]; i++) {
			const struct qmp_stat_desc *st = &s.desc[QMP_STATS_VCPU][i];
			len += (size_t)snprintf(out + len, cap - len, "%s{\"name\": \"%s\", \"value\": ", i ? ", " : "", st->name);
			if (st->kind == KVM_STAT_IGNORED) {
				for (int b = 0; b < 32; b++)
					len += (size_t)snprintf(out + len, cap - len, "%s%d", b ? ", " : "[", b * 7 % 13);
				len += (size_t)snprintf(out + len, cap - len, "]}");
			} else if (!strcmp(st->unit, "boolean")) {
				len += (size_t)snprintf(out + len, cap - len, "false}");
			} else {
				len += (size_t)snprintf(out + len, cap - len, "%zu}", 123456789 + i * 1000 + (size_t)k);
			}
		}
		len += (size_t)snprintf(out + len, cap - len, "]}");
		clen += (size_t)snprintf(cpus + clen, 65536 - clen,
					 "%s{\"thread-id\": %d, \"props\": {\"core-id\": %d, \"thread-id\": 0, \"socket-id\": 0}, "
					 "\"qom-path\": \"/machine/unattached/device[%d]\", \"cpu-index\": %d, \"target\": \"x86_64\"}",
					 k ? ", " : "", 4000 + k, k, k, k);
	}
	snprintf(out + len, cap - len, "]");
	snprintf(cpus + clen, 65536 - clen, "]");
	c->vcpu = out;
	c->cpus = cpus;
	qmp_schema_free(&s);
	json_free(&d);
	free(schemas);
	return 0;
}

static void reply(int fd, const char *value, const char *line)
{
	const char *id = strstr(line, "\"id\":");
	char msg[16]; /* an int */
	char *text = malloc(strlen(value) + 64);
	if (!text)
		return;
	snprintf(msg, sizeof(msg), "%d", id ? atoi(id + 5) : 0);
	int n = sprintf(text, "{\"return\": %s, \"id\": %s}\r\n", value, msg);
	for (int off = 0; off < n;) {
		ssize_t w = send(fd, text + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (w <= 0)
			break;
		off += (int)w;
	}
	free(text);
}

/* One replay server: serves clients one at a time, like QEMU's monitor. */
static void replay_server(int ls, const struct canned *c)
{
	static const char greeting[] = "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 22, \"minor\": 2, \"major\": 7}, "
				       "\"package\": \"replay\"}, \"capabilities\": [\"oob\"]}}\r\n";
	for (;;) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		send(fd, greeting, sizeof(greeting) - 1, MSG_NOSIGNAL);
		FILE *in = fdopen(fd, "r");
		char line[4096];
		while (in && fgets(line, sizeof(line), in)) {
			if (strstr(line, "qmp_capabilities"))
				reply(fd, "{}", line);
			else if (strstr(line, "query-stats-schemas"))
				reply(fd, c->schemas, line);
			else if (strstr(line, "\"target\":\"vm\""))
				reply(fd, c->vm, line);
			else if (strstr(line, "\"target\":\"vcpu\""))
				reply(fd, c->vcpu, line);
			else if (strstr(line, "query-cpus-fast"))
				reply(fd, c->cpus, line);
			else
				reply(fd, "{}", line);
		}
		if (in)
			fclose(in);
	}
}

static int start_replay(const char *path, const struct canned *c)
{
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 1) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0)
		replay_server(ls, c);
	close(ls);
	if (pid < 0)
		return -1;
	children[nchildren++] = pid;
	return 0;
}

static int start_qemu(const char *path, const char *fw, int vcpus)
{
	char smp[16], qmp[200];
	snprintf(smp, sizeof(smp), "%d", vcpus);
	snprintf(qmp, sizeof(qmp), "unix:%s,server=on,wait=off", path);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
		execlp("qemu-system-x86_64", "qemu-system-x86_64", "-machine", "pc,accel=kvm", "-bios", fw, "-m", "16",
		       "-smp", smp, "-nographic", "-nodefaults", "-qmp", qmp, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	children[nchildren++] = pid;
	for (int i = 0; i < 100; i++) {
		struct stat st;
		if (stat(path, &st) == 0)
			return 0;
		usleep(100000);
	}
	return -1;
}

int main(int argc, char **argv)
{
	int vms = 10, vcpus = 4, refreshes = 50, replay = access("/dev/kvm", R_OK | W_OK) != 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--replay"))
			replay = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--vms"))
			vms = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--vcpus"))
			vcpus = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--refreshes"))
			refreshes = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_qmp_stats [--vms N] [--vcpus N] [--refreshes N] [--replay]\n");
			return 2;
		}
	}
	if (vms < 1 || vms > MAX_VMS || vcpus < 1 || vcpus > 64 || refreshes < 3)
		return 2;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	char dir[] = "/tmp/vmhost-bench-qmp.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	struct canned c = {.schemas = return_of("qmp/schemas-kvm-x86.json"), .vm = return_of("qmp/stats-vm.json")};
	char fw[128];
	snprintf(fw, sizeof(fw), "%s/fw.bin", dir);
	if (!replay) {
		/* the firmware: zeros and `out 0x80, al; jmp back` at the reset vector */
		FILE *f = fopen(fw, "wb");
		static unsigned char blob[65536];
		memcpy(blob + 0xfff0, "\xe6\x80\xeb\xfc", 4);
		if (!f || fwrite(blob, 1, sizeof(blob), f) != sizeof(blob) || fclose(f))
			return 1;
	} else if (!c.schemas || !c.vm || build_vcpus(&c, vcpus) < 0) {
		fprintf(stderr, "bench_qmp_stats: cannot read %s/qmp\n", VMHOST_FIXTURES_DIR);
		return 1;
	}
	struct kvm_qmp_vm *src[MAX_VMS];
	int failed = 0;
	for (int v = 0; v < vms && !failed; v++) {
		char path[96];
		snprintf(path, sizeof(path), "%s/vm%d.qmp", dir, v);
		failed = (replay ? start_replay(path, &c) : start_qemu(path, fw, vcpus)) < 0 ||
			 kvm_qmp_vm_new(path, 0, 2000, &src[v]) < 0;
	}
	double *cpu = calloc((size_t)refreshes, sizeof(double)), *wall = calloc((size_t)refreshes, sizeof(double));
	size_t nvcpus = 0;
	for (int r = 0; r < refreshes + 1 && !failed; r++) {
		double c0 = cpu_seconds(), w0 = wall_seconds();
		for (int v = 0; v < vms && !failed; v++) {
			struct kvm_qmp_sample s;
			if (kvm_qmp_vm_sample(src[v], &s) < 0) {
				fprintf(stderr, "bench_qmp_stats: vm%d: %s\n", v, kvm_qmp_vm_reason(src[v]));
				failed = 1;
				break;
			}
			nvcpus = s.nvcpus;
			kvm_qmp_sample_free(&s, src[v]);
		}
		if (r > 0) { /* the first refresh also reads the schemas */
			cpu[r - 1] = cpu_seconds() - c0;
			wall[r - 1] = wall_seconds() - w0;
		}
	}
	stop_children();
	for (int v = 0; v < vms; v++) {
		char path[96];
		snprintf(path, sizeof(path), "%s/vm%d.qmp", dir, v);
		unlink(path);
	}
	unlink(fw);
	rmdir(dir);
	if (failed)
		return 1;
	qsort(cpu, (size_t)refreshes, sizeof(double), cmp_double);
	qsort(wall, (size_t)refreshes, sizeof(double), cmp_double);
	printf("qmp query-stats refresh: %d VMs x %zu vCPUs (%s), %d refreshes\n", vms, nvcpus,
	       replay ? "replayed QEMU 7.2 replies: no /dev/kvm here" : "real QEMU guests under KVM", refreshes);
	printf("  cpu per refresh: median %.3f ms (%.1f us per VM), min %.3f ms, max %.3f ms\n", cpu[refreshes / 2] * 1e3,
	       cpu[refreshes / 2] * 1e6 / vms, cpu[0] * 1e3, cpu[refreshes - 1] * 1e3);
	printf("  wall per refresh: median %.3f ms\n", wall[refreshes / 2] * 1e3);
	free(cpu);
	free(wall);
	return 0;
}
