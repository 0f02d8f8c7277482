/* Benchmark, and the live tests' instrument: what `vmhost mem`'s PSS costs per VM against the exact
 * smaps_rollup read it stands in for, both timed as vmhost times them (the reading thread's CPU
 * time: a loaded machine's waits do not count) and in one process. Each round takes the survey as
 * mem does (with its memo of the VMs' costs in --memo DIR, and --budget seconds of refinement),
 * then reads each listed VM exactly as --exact does and times that too. One line a VM a round:
 *
 *   round pid name method rss_bytes pss_bytes bound_bytes cost_seconds exact_pss_bytes exact_seconds
 *
 * (name: the VM's, its blanks as '_'; '-' when it has none).
 * method is mem's pss_method; cost_seconds what mem spent on that VM's PSS (0 for an estimate).
 * --sample samples every VM that needs it instead, whatever an exact read costs (the sampler
 * alone). bench/pss_cost.sh prints the medians; tests/live/mem_pss_cost.sh and
 * mem_pss_sampled.sh check each line.
 *
 *   build/bench_pss_cost [--rounds N] [--budget SEC] [--memo DIR] [--sample] PID... */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/survey.h"

#define MAX_PIDS 256

struct bench {
	int rounds;
	double budget_seconds;
	const char *memo_dir;
	bool sample_only;
	pid_t pids[MAX_PIDS];
	size_t npids;
};

static int usage(void)
{
	fprintf(stderr, "usage: bench_pss_cost [--rounds N] [--budget SEC] [--memo DIR] [--sample] PID...\n");
	return 2;
}

static int parse_args(int argc, char **argv, struct bench *b)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--sample"))
			b->sample_only = true;
		else if (!strcmp(a, "--rounds") && next)
			b->rounds = atoi(argv[++i]);
		else if (!strcmp(a, "--budget") && next)
			b->budget_seconds = strtod(argv[++i], NULL);
		else if (!strcmp(a, "--memo") && next)
			b->memo_dir = argv[++i];
		else if (a[0] != '-' && atoi(a) > 0 && b->npids < MAX_PIDS)
			b->pids[b->npids++] = atoi(a);
		else
			return usage();
	}
	return b->rounds > 0 && b->npids ? 0 : usage();
}

static bool listed(const struct bench *b, pid_t pid)
{
	for (size_t i = 0; i < b->npids; i++)
		if (b->pids[i] == pid)
			return true;
	return false;
}

/* One round: the survey as mem takes it, then each listed VM read exactly, on a copy of its record. */
static int round_once(const struct io_root *root, const struct bench *b, int round)
{
	struct survey_opts o = {.pss_budget_seconds = b->sample_only ? 0 : b->budget_seconds, .memo_dir = b->memo_dir};
	struct host host;
	struct vm_list vms;
	enum survey_step step;
	int r = survey_take(root, &o, &host, &vms, &step);
	if (r < 0)
		return r;
	if (b->sample_only)
		pss_refine_sampled(root, &host, &vms, b->budget_seconds);
	for (size_t i = 0; i < vms.n; i++) {
		const struct vm *vm = &vms.vms[i];
		if (!listed(b, vm->pid) || !vm->pss_bytes.known || !vm->mem.rss.known)
			continue;
		struct vm exact = *vm; /* its fields are written, nothing it owns */
		unsigned denied = 0;
		if (vm_measure_pss_exact(root, &host, &exact, &denied, NULL) < 0)
			continue;
		char name[sizeof(vm->cfg.name)];
		snprintf(name, sizeof(name), "%s", vm->cfg.name[0] ? vm->cfg.name : "-");
		for (char *c = name; *c; c++)
			*c = *c == ' ' || *c == '\t' || *c == '\n' ? '_' : *c;
		printf("%d %d %s %s %lld %lld %lld %.9f %lld %.9f\n", round, (int)vm->pid, name, measure_method_name(vm->pss_method),
		       (long long)vm->mem.rss.v, (long long)vm->pss_bytes.v,
		       (long long)(vm->pss_bound_bytes.known ? vm->pss_bound_bytes.v : -1), vm->pss_cost.seconds,
		       (long long)exact.pss_bytes.v, exact.pss_cost.seconds);
	}
	vm_list_free(&vms);
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = {.rounds = 1, .budget_seconds = 2};
	if (parse_args(argc, argv, &b))
		return 2;
	const struct io_root root = {.proc = "/proc", .sys = "/sys"};
	for (int round = 1; round <= b.rounds; round++) {
		int r = round_once(&root, &b, round);
		if (r < 0) {
			fprintf(stderr, "bench_pss_cost: survey failed: %s\n", strerror(-r));
			return 1;
		}
		fflush(stdout);
	}
	return 0;
}
