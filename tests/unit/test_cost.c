/* What a VM costs besides memory: schedstat, vCPU thread names, cgroup paths, limits, PSI, keyed
 * files, per-vCPU rates, why KSM does not merge a VM, and its stalls (delay accounting): why they
 * are unknown, their rates, and the vCPUs' taken from the reading before when nothing stalled. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/base/stalls.h"
#include "core/model/account.h"
#include "core/model/vm_cost.h"
#include "parse/cpu_cgroup.h"
#include "testutil.h"

#define S(x) x, strlen(x)

static void schedstat(void **state)
{
	(void)state;
	struct schedstat s;
	assert_int_equal(parse_schedstat(S("1500000000 250000000 9000\n"), &s), 0);
	assert_true(s.run_ns == 1500000000u && s.delay_ns == 250000000u);
	assert_int_equal(parse_schedstat(S("1500000000 2500"), &s), -EINVAL); /* truncated */
	assert_int_equal(parse_schedstat(S(""), &s), -EINVAL);
	assert_int_equal(parse_schedstat(S("99999999999999999999999 1 1\n"), &s), -EINVAL);
}

/* Lines of a 6.x /proc/PID/task/TID/sched with schedstats on (trimmed), and a 5.10 one. */
static void sched_wait_sum(void **state)
{
	(void)state;
	uint64_t ns = 42;
	assert_int_equal(parse_sched_wait_sum(S("CPU 0/KVM (1010, #threads: 4)\n"
						"-------------------------------------------------------------------\n"
						"se.exec_start                                :      12345678.901234\n"
						"se.sum_exec_runtime                          :          1500.000000\n"
						"wait_start                                   :             0.000000\n"
						"wait_max                                     :             3.141592\n"
						"wait_sum                                     :           250.500001\n"
						"wait_count                                   :                  900\n"),
					 &ns),
			 0);
	assert_true(ns == 250500001u);
	assert_int_equal(parse_sched_wait_sum(S("se.statistics.wait_sum : 0.000001\n"), &ns), 0);
	assert_true(ns == 1u);
	/* schedstats off: no such line (wait_max and wait_count are not it) */
	ns = 42;
	assert_int_equal(parse_sched_wait_sum(S("se.sum_exec_runtime : 1.0\nwait_count : 5\nnr_switches : 3\n"), &ns), -ENOENT);
	assert_true(ns == 42);
	assert_int_equal(parse_sched_wait_sum(S("wait_sum : x\n"), &ns), -EINVAL);
	assert_int_equal(parse_sched_wait_sum(S("wait_sum : -1.0\n"), &ns), -EINVAL);
	assert_int_equal(parse_sched_wait_sum(S(""), &ns), -ENOENT);
	assert_int_equal(parse_sched_wait_sum("wait_sum:7\0`=", 14, &ns), -EINVAL); /* found by fuzz_vm_cost */
	assert_int_equal(parse_sched_wait_sum(S("wait_sum : 1e13\n"), &ns), -EINVAL); /* past 64-bit ns */
}

static void vcpu_names(void **state)
{
	(void)state;
	int i = -1;
	assert_true(parse_vcpu_thread_name("CPU 0/KVM", &i) && i == 0);
	assert_true(parse_vcpu_thread_name("CPU 12/TCG", &i) && i == 12);
	assert_true(parse_vcpu_thread_name("vcpu3", &i) && i == 3);
	assert_true(parse_vcpu_thread_name("fc_vcpu 1", &i) && i == 1);
	assert_true(parse_vcpu_thread_name("crosvm_vcpu7", &i) && i == 7);
	assert_false(parse_vcpu_thread_name("qemu-system-x86", &i));
	assert_false(parse_vcpu_thread_name("CPU 0", &i)); /* QEMU always names the accelerator */
	assert_false(parse_vcpu_thread_name("vcpu", &i));
	assert_false(parse_vcpu_thread_name("vcpu-helper", &i));
	assert_false(parse_vcpu_thread_name("worker", &i));
}

static void cgroup_controllers(void **state)
{
	(void)state;
	const char *hybrid = "12:memory:/machine/qemu-1-a.libvirt-qemu\n11:cpu,cpuacct:/machine/qemu-1-a.libvirt-qemu/emulator\n"
			     "1:name=systemd:/\n0::/\n";
	char p[256];
	assert_int_equal(parse_cgroup_controller(S(hybrid), "memory", p, sizeof(p)), 0);
	assert_string_equal(p, "/machine/qemu-1-a.libvirt-qemu");
	assert_int_equal(parse_cgroup_controller(S(hybrid), "cpuacct", p, sizeof(p)), 0);
	assert_string_equal(p, "/machine/qemu-1-a.libvirt-qemu/emulator");
	assert_int_equal(parse_cgroup_controller(S(hybrid), "pids", p, sizeof(p)), 0);
	assert_string_equal(p, ""); /* no such hierarchy */
	assert_int_equal(parse_cgroup_controller(S("0::/x\n"), "memory", p, sizeof(p)), 0);
	assert_string_equal(p, "");
	assert_int_equal(parse_cgroup_controller(S("4:memory:/cut"), "memory", p, sizeof(p)), -EINVAL);
	assert_int_equal(parse_cgroup_controller(S("garbage\n"), "memory", p, sizeof(p)), -EINVAL);
	assert_int_equal(parse_cgroup_controller(S(hybrid), "memory", p, 8), -ENAMETOOLONG);
}

static void limits(void **state)
{
	(void)state;
	maybe_i64 v;
	assert_int_equal(parse_cgroup_limit(S("max\n"), &v), 0);
	assert_false(v.known);
	assert_int_equal(parse_cgroup_limit(S("9223372036854771712\n"), &v), 0); /* v1 unlimited */
	assert_false(v.known);
	assert_int_equal(parse_cgroup_limit(S("4294967296\n"), &v), 0);
	assert_true(v.known && v.v == 4294967296);
	assert_int_equal(parse_cgroup_limit(S("lots\n"), &v), -EINVAL);
	assert_int_equal(parse_cgroup_limit(S(""), &v), -EINVAL);
}

static void pressure(void **state)
{
	(void)state;
	struct pressure p;
	assert_int_equal(parse_pressure(S("some avg10=1.50 avg60=0.75 avg300=0.20 total=2500000\n"
					  "full avg10=0.50 avg60=0.25 avg300=0.05 total=1000000\n"), &p), 0);
	assert_true(p.some_avg10 == 1.5 && p.full_avg10 == 0.5 && p.some_seconds == 2.5 && p.full_seconds == 1.0);
	/* cpu on older kernels: no full line */
	assert_int_equal(parse_pressure(S("some avg10=2.00 avg60=0.00 avg300=0.00 total=7\n"), &p), 0);
	assert_true(p.some_avg10 == 2.0 && isnan(p.full_avg10));
	assert_int_equal(parse_pressure(S("some avg10=1.00 avg60"), &p), -EINVAL);          /* truncated */
	assert_int_equal(parse_pressure(S("some avg10=x avg60=0 avg300=0 total=1\n"), &p), -EINVAL);
	assert_int_equal(parse_pressure(S("full avg10=1 avg60=0 avg300=0 total=1\n"), &p), -EINVAL); /* no some */
}

static void keyed(void **state)
{
	(void)state;
	maybe_i64 v;
	const char *events = "low 0\nhigh 0\nmax 3\noom 1\noom_kill 4\noom_group_kill 0\n";
	assert_int_equal(parse_keyed_u64(S(events), "oom_kill", &v), 0);
	assert_true(v.known && v.v == 4);
	assert_int_equal(parse_keyed_u64(S(events), "oom", &v), 0);
	assert_true(v.v == 1);
	assert_int_equal(parse_keyed_u64(S("oom_kill_disable 0\nunder_oom 0\n"), "oom_kill", &v), -ENOENT);
	assert_false(v.known);
	assert_int_equal(parse_keyed_u64(S("oom_kill x\n"), "oom_kill", &v), -EINVAL);
}

static void vcpu_rates(void **state)
{
	(void)state;
	struct vcpu b[2] = {{.index = 0, .tid = 10, .cpu_seconds = 1.0, .delay_seconds = 0.5},
			    {.index = 1, .tid = 11, .cpu_seconds = 2.0, .delay_seconds = 0.0}};
	struct vcpu a[2] = {{.index = 0, .tid = 10, .cpu_seconds = 2.0, .delay_seconds = 0.7},
			    {.index = 1, .tid = 12, .cpu_seconds = 0.1, .delay_seconds = 0.0}}; /* a new thread */
	struct vm_cpu before = {.cpu_seconds = 3.0, .vcpus = b, .nvcpus = 2, .vcpus_known = true};
	struct vm_cpu after = {.cpu_seconds = 5.0, .vcpus = a, .nvcpus = 2, .vcpus_known = true};
	vm_cpu_rates(&before, &after, 2.0);
	assert_true(fabs(after.cpu_percent - 100.0) < 1e-9);
	assert_true(fabs(a[0].cpu_percent - 50.0) < 1e-9 && fabs(a[0].delay_percent - 10.0) < 1e-9);
	assert_true(isnan(a[1].cpu_percent)); /* appeared inside the interval: no rate, not a guess */
	assert_true(isnan(after.vcpu_delay_percent)); /* so the VM's sum is unknown too */
	/* A counter that went down (a restarted process under the same pid) gives no rate. */
	before.cpu_seconds = 9.0;
	vm_cpu_rates(&before, &after, 2.0);
	assert_true(isnan(after.cpu_percent));
}

static void unmergeable(void **state)
{
	(void)state;
	struct vm_config cfg = {.vmm = VMM_QEMU};
	struct mem_counters m = {.ksm_mergeable = MAYBE(1), .ksm_merge_any = MAYBE(0)};
	struct ksm_sysfs k = {.present = true, .run = MAYBE(1)};
	assert_null(ksm_unmergeable_reason(&cfg, &m, &k));
	k.run = MAYBE(0);
	assert_string_equal(ksm_unmergeable_reason(&cfg, &m, &k), "ksm-stopped");
	m.ksm_mergeable = MAYBE(0);
	assert_string_equal(ksm_unmergeable_reason(&cfg, &m, &k), "not-marked");
	m.ksm_merge_any = MAYBE(1); /* prctl(PR_SET_MEMORY_MERGE) marks everything */
	assert_string_equal(ksm_unmergeable_reason(&cfg, &m, &k), "ksm-stopped");
	cfg.ram_shared = true;
	assert_string_equal(ksm_unmergeable_reason(&cfg, &m, &k), "shared-memory");
	cfg.ram_hugetlb = true;
	assert_string_equal(ksm_unmergeable_reason(&cfg, &m, &k), "hugetlbfs");
	cfg.mem_merge_off = true;
	assert_string_equal(ksm_unmergeable_reason(&cfg, &m, &k), "mem-merge-off");
	/* A kernel that does not say: no reason invented. */
	struct vm_config plain = {.vmm = VMM_QEMU};
	struct mem_counters old = {0};
	k.run = MAYBE(1);
	assert_null(ksm_unmergeable_reason(&plain, &old, &k));
	assert_false(ksm_process_mergeable(&old).known);
}

/* Proxmox's figure: the scope's charge without page cache, v2 and v1; unknown without memory.stat. */
static void cgroup_without_cache(void **state)
{
	(void)state;
	char *root = tmp_tree_new("cg"), v2[300], v1[300], sys[300], gone[320];
	snprintf(v2, sizeof(v2), "%s/sys/fs/cgroup/qemu.slice/100.scope", root);
	snprintf(v1, sizeof(v1), "%s/sys/fs/cgroup/memory/machine/qemu-1-web.libvirt-qemu", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	mkdirf("%s", v2);
	mkdirf("%s", v1);
	putf("1000000\n", "%s/memory.current", v2);
	putf("anon 650000\nfile 300000\nkernel 50000\n", "%s/memory.stat", v2);
	putf("2000000\n", "%s/memory.usage_in_bytes", v1);
	putf("cache 500000\nrss 1400000\ntotal_cache 900000\n", "%s/memory.stat", v1);
	struct io_root r = {.proc = "/proc", .sys = sys};
	maybe_i64 m = cgroup_memory_without_cache(&r, 2, "/qemu.slice/100.scope");
	assert_true(m.known);
	assert_int_equal(m.v, 700000);
	m = cgroup_memory_without_cache(&r, 1, "/machine/qemu-1-web.libvirt-qemu");
	assert_true(m.known);
	assert_int_equal(m.v, 1500000); /* cache, not total_cache: the scope's own */
	snprintf(gone, sizeof(gone), "%s/memory.stat", v2);
	assert_int_equal(unlink(gone), 0);
	assert_false(cgroup_memory_without_cache(&r, 2, "/qemu.slice/100.scope").known);
	assert_false(cgroup_memory_without_cache(&r, 2, "/no/such.scope").known);
	tmp_tree_free(root);
}

/* A cgroup path's per-VM scope: libvirt with systemd or without it, Proxmox; none elsewhere. */
static void cgroup_vm_scopes(void **state)
{
	(void)state;
	char scope[64];
	assert_true(parse_cgroup_vm_scope("/machine.slice/machine-qemu\\x2d1\\x2dvm1.scope/libvirt/emulator", scope,
					  sizeof(scope)));
	assert_string_equal(scope, "/machine.slice/machine-qemu\\x2d1\\x2dvm1.scope");
	assert_true(parse_cgroup_vm_scope("/machine.slice/machine-qemu-2-db.scope", scope, sizeof(scope)));
	assert_string_equal(scope, "/machine.slice/machine-qemu-2-db.scope");
	assert_true(parse_cgroup_vm_scope("/qemu.slice/100.scope/vcpu0", scope, sizeof(scope)));
	assert_string_equal(scope, "/qemu.slice/100.scope");
	assert_true(parse_cgroup_vm_scope("/machine/vm1.libvirt-qemu/emulator", scope, sizeof(scope)));
	assert_string_equal(scope, "/machine/vm1.libvirt-qemu");
	assert_false(parse_cgroup_vm_scope("/user.slice/user-1000.slice/session-1.scope", scope, sizeof(scope)));
	assert_false(parse_cgroup_vm_scope("/machine.slice/libvirtd.service", scope, sizeof(scope)));
	assert_false(parse_cgroup_vm_scope("/machine.slice/machine-qemu-3-x.scopeless", scope, sizeof(scope)));
	assert_false(parse_cgroup_vm_scope("/qemu.slice/", scope, sizeof(scope)));
	assert_false(parse_cgroup_vm_scope("/", scope, sizeof(scope)));
	/* a scope that does not fit is none, not a cut path */
	assert_false(parse_cgroup_vm_scope("/qemu.slice/100.scope", scope, 21));
	assert_true(parse_cgroup_vm_scope("/qemu.slice/100.scope", scope, 22));
}

/* A reader does not open where delay accounting cannot be read, and says why: a fixture tree, and
 * the switch off (with the command that turns it on). A closed reader's VM is unknown with that. */
static void stall_reasons(void **state)
{
	(void)state;
	struct stall_reader r;
	struct io_root fixture = {.proc = "/nonexistent/proc", .sys = "/nonexistent/sys"}, host = {0};
	assert_int_equal(stall_reader_open(&fixture, 1, &r), -EXDEV);
	assert_false(r.open);
	assert_non_null(strstr(r.why, "--proc-root"));
	assert_int_equal(stall_reader_open(&host, 0, &r), -ENODATA);
	assert_non_null(strstr(r.why, DELAYACCT_ON_COMMAND));
	struct vm_cpu cpu = {.nvcpus = 0};
	struct vm_stalls s;
	assert_int_equal(vm_stalls_read(&r, 1, NULL, NULL, &cpu, &s), 0);
	assert_false(s.all.known);
	assert_string_equal(s.why, r.why);
	assert_true(isnan(stalls_memory_seconds(&s.all)) && isnan(s.stall_percent));
	stall_reader_close(&r);
	assert_int_equal(delayacct_read(&fixture), -ENOENT);
}

/* Over an interval: memory stalls (not IRQ) as percent of it, copy stalls as seconds; a counter
 * that went down (another process) and an unknown reading give none. */
static void stall_rates(void **state)
{
	(void)state;
	struct vm_stalls a = vm_stalls_unknown(NULL), b = vm_stalls_unknown(NULL);
	a.all.known = b.all.known = true;
	for (int k = 0; k < STALL_NKINDS; k++)
		a.all.seconds[k] = b.all.seconds[k] = 1.0;
	b.all.seconds[STALL_WPCOPY] = 1.5;
	b.all.seconds[STALL_RECLAIM] = 1.25;
	b.all.seconds[STALL_IRQ] = 9.0; /* IRQs are not memory pressure */
	vm_stalls_rates(&a, &b, 2.0);
	assert_true(fabs(b.stall_percent - 37.5) < 1e-9);
	assert_true(fabs(b.copy_stall_seconds - 0.5) < 1e-9);
	assert_true(fabs(stalls_memory_seconds(&b.all) - 5.75) < 1e-9);
	a.all.seconds[STALL_WPCOPY] = 3.0;
	vm_stalls_rates(&a, &b, 2.0);
	assert_true(isnan(b.copy_stall_seconds) && isnan(b.stall_percent));
	b.all.seconds[STALL_IRQ] = NAN; /* a kernel without IRQ accounting still has the others */
	assert_true(fabs(stalls_memory_seconds(&b.all) - 5.75) < 1e-9);
	struct vm_stalls off = vm_stalls_unknown("off");
	vm_stalls_rates(&a, &off, 2.0);
	assert_true(isnan(off.stall_percent) && isnan(off.copy_stall_seconds));
}

/* Where the process stalled no more since the reading before, its vCPUs' figures are that
 * reading's, without asking (the closed reader here could not answer); a live reader asks. */
static void stall_vcpus_kept(void **state)
{
	(void)state;
	struct stall_reader r;
	struct io_root host = {0};
	/* The switch as unknown: root's session opens with accounting off too (every figure 0). */
	if (stall_reader_open(&host, -ENOENT, &r) < 0)
		skip(); /* not root */
	struct vcpu was[] = {{.index = 0, .tid = 111, .stall_seconds = 0.25}};
	struct vm_cpu before_cpu = {.vcpus = was, .nvcpus = 1};
	struct vm_stalls before;
	struct vm_cpu cpu = {.nvcpus = 0};
	assert_int_equal(vm_stalls_read(&r, getpid(), NULL, NULL, &cpu, &before), 0);
	assert_true(before.all.known);
	struct vcpu now[] = {vcpu_unread(0, 111)}; /* tid 111 is no thread of this process */
	cpu = (struct vm_cpu){.vcpus = now, .nvcpus = 1};
	assert_int_equal(vm_stalls_read(&r, getpid(), &before, &before_cpu, &cpu, &before), 0);
	assert_true(now[0].stall_seconds == 0.25); /* kept: asked, tid 111 would have been -ESRCH */
	assert_int_equal(vm_stalls_read(&r, 0x3fffffff, NULL, NULL, &cpu, &before), -ESRCH);
	stall_reader_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(schedstat), cmocka_unit_test(sched_wait_sum), cmocka_unit_test(vcpu_names), cmocka_unit_test(cgroup_controllers), cmocka_unit_test(cgroup_vm_scopes),
		cmocka_unit_test(limits), cmocka_unit_test(pressure), cmocka_unit_test(keyed),
		cmocka_unit_test(vcpu_rates), cmocka_unit_test(unmergeable), cmocka_unit_test(cgroup_without_cache),
		cmocka_unit_test(stall_reasons), cmocka_unit_test(stall_rates), cmocka_unit_test(stall_vcpus_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
