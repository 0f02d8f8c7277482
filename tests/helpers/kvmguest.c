/* A KVM guest with known exits, driving /dev/kvm itself: one vCPU in real mode runs
 *   test ecx,ecx; jz 1f; 0: out dx,al; dec ecx; jnz 0b; 1:
 *   test esi,esi; jz 3f; 2: mov [bx],al; dec esi; jnz 2b; 3: hlt
 * with ecx = N port writes to port dx, esi = M byte writes to ds:bx, an address outside the only
 * memory slot (so each is an MMIO exit), then hlt (no in-kernel irqchip: a KVM_EXIT_HLT).
 *
 *   kvmguest [--io N] [--mmio M] [--port P] [--io-sleep SEC] [--sleep-before SEC] [--sleep-after SEC]
 *            [--wait-signal]
 *
 * --io-sleep: each port write's exit is handled that long (a nanosleep before the next KVM_RUN),
 * a VMM's handling time known in advance.
 * Prints "ready pid=PID" once the vCPU exists, waits (--sleep-before, or until SIGUSR1 with
 * --wait-signal), runs, then prints the exits it handled itself:
 *   io_exits=N mmio_exits=M hlt_exits=1 intr_exits=0 other_exits=0 kvm_runs=K
 * Exit status: 0 when the counts are N, M and 1; 1 otherwise; 77 when /dev/kvm is missing. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MEM_BYTES 0x10000u  /* guest physical 0..64 KiB */
#define CODE_AT 0x1000u
#define MMIO_SEGMENT 0x1000u /* ds base 0x10000: just past the slot */

static const uint8_t code[] = {
	0x66, 0x85, 0xC9, /* 00 test ecx, ecx */
	0x74, 0x05,       /* 03 jz 0x0a */
	0xEE,             /* 05 out dx, al */
	0x66, 0x49,       /* 06 dec ecx */
	0x75, 0xFB,       /* 08 jnz 0x05 */
	0x66, 0x85, 0xF6, /* 0a test esi, esi */
	0x74, 0x06,       /* 0d jz 0x15 */
	0x88, 0x07,       /* 0f mov [bx], al */
	0x66, 0x4E,       /* 11 dec esi */
	0x75, 0xFA,       /* 13 jnz 0x0f */
	0xF4,             /* 15 hlt */
};

static volatile sig_atomic_t go;
static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void sleep_seconds(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int fail(const char *what)
{
	fprintf(stderr, "kvmguest: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long n_io = 1000, n_mmio = 0, port = 0x80;
	double before = 0, after = 0, io_sleep = 0;
	int wait_signal = 0;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--wait-signal")) {
			wait_signal = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "kvmguest: %s needs a value\n", o);
			return 2;
		}
		i++;
		if (!strcmp(o, "--io"))
			n_io = strtoul(v, NULL, 0);
		else if (!strcmp(o, "--mmio"))
			n_mmio = strtoul(v, NULL, 0);
		else if (!strcmp(o, "--port"))
			port = strtoul(v, NULL, 0);
		else if (!strcmp(o, "--io-sleep"))
			io_sleep = atof(v);
		else if (!strcmp(o, "--sleep-before"))
			before = atof(v);
		else if (!strcmp(o, "--sleep-after"))
			after = atof(v);
		else {
			fprintf(stderr, "kvmguest: unknown option %s\n", o);
			return 2;
		}
	}
	if (port > 0xffff || n_io > 0xffffffffUL || n_mmio > 0xffffffffUL) {
		fprintf(stderr, "kvmguest: --port is 0..0xffff, --io and --mmio fit 32 bits\n");
		return 2;
	}
	/* SIGUSR1 held back until sigsuspend: one sent before the wait is not lost. */
	sigset_t usr1, before_wait;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &before_wait);
	signal(SIGUSR1, on_usr1);
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		fprintf(stderr, "kvmguest: /dev/kvm: %s\n", strerror(errno));
		return errno == ENOENT || errno == ENXIO || errno == ENODEV ? 77 : 1;
	}
	if (ioctl(kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
		return fail("KVM_GET_API_VERSION");
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return fail("KVM_CREATE_VM");
	uint8_t *mem = mmap(NULL, MEM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return fail("mmap");
	memcpy(mem + CODE_AT, code, sizeof(code));
	struct kvm_userspace_memory_region region = {
		.slot = 0, .guest_phys_addr = 0, .memory_size = MEM_BYTES, .userspace_addr = (uintptr_t)mem};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return fail("KVM_SET_USER_MEMORY_REGION");
	int vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return fail("KVM_CREATE_VCPU");
	int run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < (int)sizeof(struct kvm_run))
		return fail("KVM_GET_VCPU_MMAP_SIZE");
	struct kvm_run *run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		return fail("mmap kvm_run");
	struct kvm_sregs sregs;
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return fail("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	sregs.ds.base = (uint64_t)MMIO_SEGMENT << 4;
	sregs.ds.selector = MMIO_SEGMENT;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		return fail("KVM_SET_SREGS");
	struct kvm_regs regs = {.rip = CODE_AT, .rflags = 0x2, .rax = 0x42, .rcx = n_io, .rdx = port, .rsi = n_mmio};
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		return fail("KVM_SET_REGS");

	printf("ready pid=%d\n", (int)getpid());
	fflush(stdout);
	sleep_seconds(before);
	while (wait_signal && !go)
		sigsuspend(&before_wait);
	sigprocmask(SIG_SETMASK, &before_wait, NULL);

	unsigned long io = 0, mmio = 0, hlt = 0, intr = 0, other = 0, runs = 0;
	while (!hlt) {
		runs++;
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				intr++;
				continue;
			}
			return fail("KVM_RUN");
		}
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			if (run->io.direction == KVM_EXIT_IO_OUT && run->io.port == port && run->io.size == 1) {
				io += run->io.count;
				sleep_seconds(io_sleep);
			} else
				other++;
			break;
		case KVM_EXIT_MMIO:
			if (run->mmio.is_write && run->mmio.len == 1 && run->mmio.phys_addr == (uint64_t)MMIO_SEGMENT << 4)
				mmio++;
			else
				other++;
			break;
		case KVM_EXIT_HLT: hlt++; break;
		case KVM_EXIT_INTR: intr++; break;
		default:
			fprintf(stderr, "kvmguest: unexpected exit reason %u\n", run->exit_reason);
			return 1;
		}
	}
	printf("io_exits=%lu mmio_exits=%lu hlt_exits=%lu intr_exits=%lu other_exits=%lu kvm_runs=%lu\n", io, mmio, hlt,
	       intr, other, runs);
	fflush(stdout);
	sleep_seconds(after);
	return io == n_io && mmio == n_mmio && hlt == 1 && other == 0 ? 0 : 1;
}
