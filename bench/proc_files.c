/* Benchmark: what each /proc file that `vmhost mem` reads for a VM costs on this host, the floor
 * under mem's time at scale (a first run, and a run whose memo knows the VM). For the VM processes given, opens, reads and closes each kind of file
 * as mem does (the same files; mem reads them in two threads), in rounds, and prints the median
 * cost of one file, beside a system call and the smaps_rollup that the exact PSS reads.
 *
 *   build/bench_proc_files [--rounds 9] PID...
 *
 * bench/mem_scale.sh runs it on its fake guests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

/* One VM process and the threads mem opens files of: those after the main thread up to its last
 * vCPU (mem reads their names to find the vCPUs), and the vCPUs (their schedstat). */
struct vm_process {
	int pid;
	int named[MAX_THREADS], nnamed;
	int vcpus[MAX_THREADS], nvcpus;
};

enum kind { CMDLINE, STAT, CGROUP, STATUS, KSM_STAT, TASK_LIST, THREAD_NAME, VCPU_SCHEDSTAT, FD_COUNT, FD_SCAN, SYSCALL,
	    SMAPS_ROLLUP, KINDS };

static const struct {
	const char *label;
	bool per_vm;   /* one of the files mem reads for every VM */
	bool memo;     /* still read when mem's memo knows the VM (core/model/vm_memo.h) */
} kinds[KINDS] = {
	[CMDLINE] = {"cmdline", true, false},
	[STAT] = {"stat", true, true},
	[CGROUP] = {"cgroup", true, true},
	[STATUS] = {"status", true, true},
	[KSM_STAT] = {"ksm_stat", true, true},
	[TASK_LIST] = {"task/ (the thread list)", true, false},
	[THREAD_NAME] = {"task/TID/comm", true, false},
	[VCPU_SCHEDSTAT] = {"task/TID/schedstat (vCPUs)", true, true},
	[FD_COUNT] = {"fd/ stat (taps: fd count)", true, true},
	[FD_SCAN] = {"fd/ + readlinkat each (taps)", true, false}, /* the memo has them while fd/'s count holds */
	[SYSCALL] = {"getppid() (a system call)", false},
	[SMAPS_ROLLUP] = {"smaps_rollup (--exact)", false},
};

static double seconds_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

static int load_process(int pid, struct vm_process *ret)
{
	char path[64], name[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int tids[MAX_THREADS], n = 0;
	for (struct dirent *e; (e = readdir(d)) && n < MAX_THREADS;)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	closedir(d);
	ret->pid = pid;
	ret->nnamed = ret->nvcpus = 0;
	int last_vcpu = -1;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tids[i]);
		if (tids[i] != pid && read_file(path, name, sizeof(name)) && !strncmp(name, "CPU ", 4)) {
			ret->vcpus[ret->nvcpus++] = tids[i];
			last_vcpu = i;
		}
	}
	for (int i = 0; i <= last_vcpu; i++)
		if (tids[i] != pid)
			ret->named[ret->nnamed++] = tids[i];
	return 0;
}

/* Reads every file of KIND of every process once; returns the files read. */
static long read_kind(enum kind kind, const struct vm_process *vms, int nvms)
{
	static const char *const names[KINDS] = {
		[CMDLINE] = "cmdline", [STAT] = "stat",	  [CGROUP] = "cgroup",
		[STATUS] = "status",   [KSM_STAT] = "ksm_stat", [SMAPS_ROLLUP] = "smaps_rollup",
	};
	char path[96], buf[16384];
	long files = 0;
	for (int v = 0; v < nvms; v++) {
		const struct vm_process *vm = &vms[v];
		switch (kind) {
		case SYSCALL:
			syscall(SYS_getppid);
			files++;
			break;
		case TASK_LIST: {
			snprintf(path, sizeof(path), "/proc/%d/task", vm->pid);
			int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				break;
			while (syscall(SYS_getdents64, fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
			files++;
			break;
		}
		case FD_COUNT: {
			struct stat st;
			snprintf(path, sizeof(path), "/proc/%d/fd", vm->pid);
			files += stat(path, &st) == 0;
			break;
		}
		case FD_SCAN: { /* as core/model/vm_io.c looks for taps: the listing, a readlinkat per fd */
			snprintf(path, sizeof(path), "/proc/%d/fd", vm->pid);
			DIR *d = opendir(path);
			if (!d)
				break;
			for (struct dirent *e; (e = readdir(d));)
				if (e->d_name[0] != '.' && readlinkat(dirfd(d), e->d_name, buf, sizeof(buf)) < 0)
					continue; /* closed meanwhile: the cost was paid all the same */
			closedir(d);
			files++;
			break;
		}
		case THREAD_NAME:
		case VCPU_SCHEDSTAT: {
			bool names_read = kind == THREAD_NAME;
			const int *tids = names_read ? vm->named : vm->vcpus;
			int n = names_read ? vm->nnamed : vm->nvcpus;
			for (int i = 0; i < n; i++) {
				snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", vm->pid, tids[i],
					 names_read ? "comm" : "schedstat");
				files += read_file(path, buf, sizeof(buf));
			}
			break;
		}
		default:
			snprintf(path, sizeof(path), "/proc/%d/%s", vm->pid, names[kind]);
			files += read_file(path, buf, sizeof(buf));
		}
	}
	return files;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = 9, first = 1;
	if (argc > 2 && !strcmp(argv[1], "--rounds")) {
		rounds = atoi(argv[2]);
		first = 3;
	}
	if (first >= argc || rounds < 1) {
		fprintf(stderr, "usage: bench_proc_files [--rounds N] PID...\n");
		return 2;
	}
	int nvms = 0;
	struct vm_process *vms = calloc((size_t)(argc - first), sizeof(*vms));
	double *per_file = calloc((size_t)rounds * KINDS, sizeof(*per_file));
	if (!vms || !per_file) {
		fprintf(stderr, "bench_proc_files: out of memory\n");
		return 1;
	}
	for (int i = first; i < argc; i++)
		if (load_process(atoi(argv[i]), &vms[nvms]) == 0)
			nvms++;
	if (!nvms) {
		fprintf(stderr, "bench_proc_files: none of the processes given exists\n");
		return 1;
	}
	long files_per_kind[KINDS] = {0};
	/* Kinds interleaved within a round, so that every median saw the same moments of noise. */
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < KINDS; k++) {
			double t0 = seconds_now();
			long files = read_kind((enum kind)k, vms, nvms);
			double t = seconds_now() - t0;
			files_per_kind[k] = files;
			per_file[k * rounds + r] = files ? t / (double)files : 0;
		}
	printf("%d VM processes, median of %d rounds, one thread\n", nvms, rounds);
	printf("%-28s %12s %12s %12s\n", "file", "us per file", "files per VM", "us per VM");
	double vm_us = 0, vm_files = 0, memo_us = 0, memo_files = 0;
	for (int k = 0; k < KINDS; k++) {
		qsort(&per_file[k * rounds], (size_t)rounds, sizeof(double), cmp_double);
		double us = per_file[k * rounds + rounds / 2] * 1e6;
		double per_vm = (double)files_per_kind[k] / nvms;
		if (!files_per_kind[k]) {
			printf("%-28s %12s %12.2f %12s\n", kinds[k].label, "n/a", 0.0, "n/a");
		} else if (kinds[k].per_vm) {
			vm_us += us * per_vm;
			vm_files += per_vm;
			if (kinds[k].memo) {
				memo_us += us * per_vm;
				memo_files += per_vm;
			}
			printf("%-28s %12.2f %12.2f %12.1f\n", kinds[k].label, us, per_vm, us * per_vm);
		} else {
			printf("%-28s %12.2f %12s %12s\n", kinds[k].label, us, "-", "-");
		}
	}
	printf("%-28s %12s %12.2f %12.1f\n", "one VM, a first run", "", vm_files, vm_us);
	printf("%-28s %12s %12.2f %12.1f\n", "one VM its memo knows", "", memo_files, memo_us);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpus = cpus > 0 ? cpus : 1;
	printf("%d VMs' files: %.1f ms on one CPU, %.1f ms on %ld if they shared perfectly; with the memo %.1f and %.1f\n",
	       nvms, vm_us * nvms / 1e3, vm_us * nvms / 1e3 / (double)cpus, cpus, memo_us * nvms / 1e3,
	       memo_us * nvms / 1e3 / (double)cpus);
	free(vms);
	free(per_file);
	return 0;
}
