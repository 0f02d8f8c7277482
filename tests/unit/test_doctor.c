/* core/doctor's rules on evidence built by hand: the thresholds that fixture trees cannot reach
 * (rates over an interval, timed reads) just above and below, the order of findings, and the
 * small parsers it adds (CPU lists, severities). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/doctor/doctor.h"
#include "core/model/guest_view.h"

#define MiB (1024LL * 1024)
#define GiB (1024LL * MiB)

static void cpu_lists(void **state)
{
	(void)state;
	assert_int_equal(parse_cpu_list_count("0-3,6,8-9\n", 10), 7);
	assert_int_equal(parse_cpu_list_count("0\n", 2), 1);
	assert_int_equal(parse_cpu_list_count("0-127", 5), 128);
	assert_int_equal(parse_cpu_list_count("", 0), -EINVAL);
	assert_int_equal(parse_cpu_list_count("\n", 1), -EINVAL);
	assert_int_equal(parse_cpu_list_count("3-1\n", 4), -EINVAL);
	assert_int_equal(parse_cpu_list_count("a\n", 2), -EINVAL);
	assert_int_equal(parse_cpu_list_count("0-\n", 3), -EINVAL);
	assert_int_equal(parse_cpu_list_count("1234567890\n", 11), -EINVAL); /* more digits than a CPU has */
}

static void severities(void **state)
{
	(void)state;
	enum doctor_severity s = DOCTOR_INFO;
	assert_int_equal(doctor_severity_parse("critical", &s), 0);
	assert_int_equal(s, DOCTOR_CRITICAL);
	assert_int_equal(doctor_severity_parse("Warning", &s), -EINVAL);
	assert_int_equal(s, DOCTOR_CRITICAL); /* untouched on failure */
	assert_string_equal(doctor_severity_name(DOCTOR_WARNING), "warning");
	/* Every rule id once, kebab-case. */
	for (size_t i = 0; i < doctor_nrules; i++) {
		for (const char *p = doctor_rules[i].id; *p; p++)
			assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(doctor_rules[i].id, doctor_rules[k].id);
	}
}

/* A host with nothing wrong: KSM present and running, no VM. */
static struct doctor_evidence healthy(void)
{
	struct doctor_evidence e = {.host_cpus = 8, .numa_nodes = 1, .interval_seconds = 1};
	e.host.page_size_bytes = 4096;
	e.host.ksm.present = true;
	e.host.ksm.run = MAYBE(1);
	return e;
}

static size_t count(const struct doctor_findings *f, const char *id)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += !strcmp(f->v[i].id, id);
	return n;
}

/* ksmd at cpu percent with profit bytes, savings rising by rising bytes over 1 s. */
static size_t ksm_cpu_findings(double cpu, int64_t profit, int64_t rising)
{
	struct doctor_evidence e = healthy();
	e.ksm_rates_known = true;
	e.ksm_before.k = e.host.ksm;
	e.ksm_before.k.pages_sharing = MAYBE(1000);
	e.ksm_rates = (struct ksm_rates){.interval_seconds = 1, .ksmd_cpu_percent = cpu,
					 .saved_bytes = MAYBE(1000 * 4096 + rising), .general_profit = MAYBE(profit),
					 .pages_scanned_per_second = 50000};
	struct doctor_findings f;
	assert_int_equal(doctor_check(&e, &f), 0);
	size_t n = count(&f, "ksm-cpu-without-gain");
	doctor_findings_free(&f);
	return n;
}

static void ksm_cpu_thresholds(void **state)
{
	(void)state;
	/* 32 MiB of profit per percent of a CPU: 10% wants 320 MiB. */
	assert_int_equal(ksm_cpu_findings(10, 100 * MiB, 0), 1);
	assert_int_equal(ksm_cpu_findings(10, 319 * MiB, 0), 1);
	assert_int_equal(ksm_cpu_findings(10, 321 * MiB, 0), 0);
	assert_int_equal(ksm_cpu_findings(10, -4 * MiB, 0), 1);
	/* Below 5% ksmd is noise. */
	assert_int_equal(ksm_cpu_findings(4.9, 0, 0), 0);
	assert_int_equal(ksm_cpu_findings(5, 0, 0), 1);
	/* Still merging (1 MiB/s or more): no verdict yet. */
	assert_int_equal(ksm_cpu_findings(10, 0, 1 * MiB), 0);
	assert_int_equal(ksm_cpu_findings(10, 0, MiB / 2), 1);
	/* No rates (--interval 0, or ksmd unreadable): nothing said. */
	assert_int_equal(ksm_cpu_findings(NAN, 0, 0), 0);
}

static size_t smaps_findings_over(double seconds, size_t n, double slow_seconds)
{
	struct doctor_evidence e = healthy();
	e.smaps_slow_seconds = slow_seconds;
	struct doctor_smaps s[4] = {{0}};
	for (size_t i = 0; i < n; i++)
		s[i] = (struct doctor_smaps){.pid = (pid_t)(100 + i), .seconds = seconds * (double)(i + 1) / (double)n};
	e.smaps = s;
	e.nsmaps = n;
	struct doctor_findings f;
	assert_int_equal(doctor_check(&e, &f), 0);
	size_t c = count(&f, "accounting-smaps-slow");
	if (c)
		assert_int_equal(f.v[0].ev[3].i.v, (int64_t)(100 + n - 1)); /* slowest_pid: the slowest read */
	doctor_findings_free(&f);
	return c;
}

/* Against the rule's own threshold (10 ms). */
static size_t smaps_findings(double seconds, size_t n) { return smaps_findings_over(seconds, n, 0); }

static void smaps_thresholds(void **state)
{
	(void)state;
	/* The slowest read against 10 ms, whatever the mean: reads of 7.5, 15, 22.5, 30 ms. */
	assert_int_equal(smaps_findings(0.030, 4), 1);
	assert_int_equal(smaps_findings(0.010, 1), 1);
	assert_int_equal(smaps_findings(0.0099, 1), 0);
	assert_int_equal(smaps_findings(0.015, 4), 1);   /* mean 9.4 ms, slowest 15 */
	assert_int_equal(smaps_findings(0.0099, 4), 0);  /* slowest 9.9 ms */
	assert_int_equal(smaps_findings(0, 0), 0);     /* nothing timed */
	/* doctor --smaps-slow SEC: the threshold as asked, either way. */
	assert_int_equal(smaps_findings_over(0.030, 4, 0.031), 0);
	assert_int_equal(smaps_findings_over(0.030, 4, 0.030), 1);
	assert_int_equal(smaps_findings_over(0.000002, 1, 0.000001), 1);
}

/* A healthy host but for THP set to never, with two QEMU guests of 1 GiB (pids 10 and 11). */
static struct doctor_evidence two_guests_thp_never(struct vm vms[2])
{
	struct doctor_evidence e = healthy();
	snprintf(e.thp_mode, sizeof(e.thp_mode), "never");
	memset(vms, 0, 2 * sizeof(*vms));
	for (int i = 0; i < 2; i++) {
		vms[i].pid = 10 + i;
		vms[i].cfg.vmm = VMM_QEMU;
		vms[i].cfg.guest_ram_bytes = MAYBE(1024 * MiB);
	}
	e.vms = (struct vm_list){.vms = vms, .n = 2};
	return e;
}

/* Critical first, then warnings, then info; within one severity the rules' and VMs' order. */
static void sorted_by_severity(void **state)
{
	(void)state;
	struct vm vms[2];
	struct doctor_evidence e = two_guests_thp_never(vms);
	vms[0].mem.swap = vms[1].mem.swap = MAYBE(100 * MiB);
	snprintf(vms[1].cfg.name, sizeof(vms[1].cfg.name), "b");
	vms[1].cg.oom_kills = MAYBE(1);
	struct doctor_findings f;
	assert_int_equal(doctor_check(&e, &f), 0);
	assert_int_equal(f.n, 4);
	const char *want[] = {"vm-oom-kills", "vm-swapping", "vm-swapping", "thp-never"};
	const pid_t pids[] = {11, 10, 11, 0};
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(f.v[i].id, want[i]);
		assert_int_equal(f.v[i].pid, pids[i]);
		assert_true(f.v[i].advice[0] != '\0');
	}
	assert_string_equal(f.v[0].vm, "b");
	assert_string_equal(f.v[1].vm, "");
	doctor_findings_free(&f);
}

/* The evidence key of finding id, which must be there. */
static maybe_i64 evidence(const struct doctor_findings *f, const char *id, const char *key)
{
	for (size_t i = 0; i < f->n; i++)
		for (size_t k = 0; !strcmp(f->v[i].id, id) && k < f->v[i].nev; k++)
			if (!strcmp(f->v[i].ev[k].key, key))
				return f->v[i].ev[k].i;
	fail_msg("no %s in a %s finding", key, id);
	return UNKNOWN;
}

/* Guest RAM summed over VMs (thp-never, ksm-stopped-with-guests): unknown when one VM's is, not
 * the sum of the others. */
static void guest_ram_sum_with_an_unknown_part(void **state)
{
	(void)state;
	struct vm vms[2];
	struct doctor_evidence e = two_guests_thp_never(vms);
	e.host.ksm.run = MAYBE(0);
	struct doctor_findings f;
	assert_int_equal(doctor_check(&e, &f), 0);
	assert_int_equal(evidence(&f, "thp-never", "guest_ram_bytes").v, 2048 * MiB);
	assert_int_equal(evidence(&f, "ksm-stopped-with-guests", "guest_ram_bytes").v, 2048 * MiB);
	doctor_findings_free(&f);
	vms[1].cfg.guest_ram_bytes = UNKNOWN;
	assert_int_equal(doctor_check(&e, &f), 0);
	assert_false(evidence(&f, "thp-never", "guest_ram_bytes").known);
	assert_false(evidence(&f, "ksm-stopped-with-guests", "guest_ram_bytes").known);
	doctor_findings_free(&f);
}

/* The summary of a VM that grew growth bytes while it wrote written: the write wording from writes
 * of at least the growth, the plain one below or unknown. */
static void growth_summary(int64_t growth, maybe_i64 written, char *ret, size_t cap)
{
	struct doctor_evidence e = healthy();
	struct doctor_growth g = {.pid = 7, .bytes_per_hour = 3600.0 * (double)growth / 600, .growth_bytes = (double)growth,
				  .first_seconds = 1e9, .samples = 20, .overhead_bytes = MAYBE(growth), .written_bytes = written};
	e.growth = &g;
	e.ngrowth = 1;
	e.growth_known = true;
	struct doctor_findings f;
	assert_int_equal(doctor_check(&e, &f), 0);
	assert_int_equal(count(&f, "vm-overhead-growing"), 1);
	snprintf(ret, cap, "%s | %s", f.v[0].summary, f.v[0].advice);
	doctor_findings_free(&f);
}

static void growth_with_writes(void **state)
{
	(void)state;
	char s[1024];
	growth_summary(600 * MiB, MAYBE(10240 * MiB), s, sizeof(s));
	assert_non_null(strstr(s, "grew 600 MiB while it wrote 10.0 GiB"));
	assert_non_null(strstr(s, "cache=none"));
	growth_summary(600 * MiB, MAYBE(600 * MiB), s, sizeof(s));
	assert_non_null(strstr(s, "grew 600 MiB while it wrote 600 MiB"));
	growth_summary(600 * MiB, MAYBE(599 * MiB), s, sizeof(s)); /* wrote less than it grew: not a cache */
	assert_null(strstr(s, "wrote"));
	assert_non_null(strstr(s, "grows 3600.0 MiB per hour"));
	growth_summary(600 * MiB, UNKNOWN, s, sizeof(s));
	assert_null(strstr(s, "wrote"));
	assert_null(strstr(s, "write cache"));
}

/* One QEMU guest of ram bytes, anon populated, thp on THP (unknown: < 0), merged KSM pages, with
 * THP in mode. */
static size_t small_pages_findings(const char *mode, int64_t ram, int64_t anon, int64_t thp, int64_t merged)
{
	struct vm vm;
	memset(&vm, 0, sizeof(vm));
	vm.pid = 10;
	vm.cfg.vmm = VMM_QEMU;
	vm.cfg.guest_ram_bytes = MAYBE(ram);
	vm.mem.rss_anon = MAYBE(anon);
	vm.mem.ksm_merging_pages = MAYBE(merged);
	vm.thp_bytes = thp < 0 ? UNKNOWN : MAYBE(thp);
	struct doctor_evidence e = healthy();
	snprintf(e.thp_mode, sizeof(e.thp_mode), "%s", mode);
	e.vms = (struct vm_list){.vms = &vm, .n = 1};
	struct doctor_findings f;
	assert_int_equal(doctor_check(&e, &f), 0);
	size_t n = count(&f, "vm-ram-small-pages");
	doctor_findings_free(&f);
	return n;
}

/* vm-halt-polling over a 2 s interval: one VM with two vCPUs at cpu percent each, poll_ns of polling. */
static size_t halt_findings(double vcpu_percent, maybe_i64 poll_ns)
{
	struct doctor_evidence e = healthy();
	struct vm vm = {.pid = 42};
	struct vcpu vcpus[2] = {vcpu_unread(0, 43), vcpu_unread(1, 44)};
	vcpus[0].cpu_percent = vcpus[1].cpu_percent = vcpu_percent;
	vm.cpu.vcpus = vcpus;
	vm.cpu.nvcpus = 2;
	e.vms = (struct vm_list){.vms = &vm, .n = 1};
	struct doctor_exits x = {.pid = 42, .over_interval = true, .seconds = 2, .exits = MAYBE(10),
				 .halt_poll_ns = poll_ns, .halt_poll_fail_ns = MAYBE(0)};
	e.exits = &x;
	e.nexits = 1;
	struct doctor_findings f;
	assert_int_equal(doctor_check(&e, &f), 0);
	size_t n = count(&f, "vm-halt-polling");
	doctor_findings_free(&f);
	return n;
}

static void small_pages_thresholds(void **state)
{
	(void)state;
	int64_t G = 1024 * MiB;
	assert_int_equal(small_pages_findings("madvise", 8 * G, 8 * G, 0, 0), 1);
	assert_int_equal(small_pages_findings("always", 8 * G, 8 * G, 8 * G / 20, 0), 1);     /* 5%: still ~none */
	assert_int_equal(small_pages_findings("always", 8 * G, 8 * G, 8 * G / 20 + 1, 0), 0);
	assert_int_equal(small_pages_findings("never", 8 * G, 8 * G, 0, 0), 0);              /* thp-never's */
	assert_int_equal(small_pages_findings("", 8 * G, 8 * G, 0, 0), 0);                   /* mode unknown */
	assert_int_equal(small_pages_findings("madvise", 8 * G, 8 * G, -1, 0), 0);           /* THP unknown */
	assert_int_equal(small_pages_findings("madvise", 2 * G - 1, 2 * G, 0, 0), 0);        /* a small guest */
	assert_int_equal(small_pages_findings("madvise", 8 * G, 4 * G - 1, 0, 0), 0);        /* not populated yet */
	/* KSM merging 10% of it split the huge pages: its trade, not a finding. */
	assert_int_equal(small_pages_findings("madvise", 8 * G, 8 * G, 0, 8 * G / 4096 / 10 + 1), 0);
	assert_int_equal(small_pages_findings("madvise", 8 * G, 8 * G, 0, 8 * G / 4096 / 20), 1);
}

/* The findings of rule id on evidence e with vm as its only VM; the first one's summary into
 * summary (cap bytes; NULL: none) when there is one. */
static size_t one_vm_findings(struct doctor_evidence *e, struct vm *vm, const char *id, char *summary, size_t cap)
{
	e->vms = (struct vm_list){.vms = vm, .n = 1};
	struct doctor_findings f;
	assert_int_equal(doctor_check(e, &f), 0);
	size_t n = count(&f, id);
	if (n && summary)
		snprintf(summary, cap, "%s", f.v[0].summary);
	doctor_findings_free(&f);
	return n;
}

/* A guest of 8 GiB whose memory is node0/node1 bytes (scope's numa_stat), its vCPUs on the nodes of
 * vcpu_mask (0: unknown), on a host of nodes nodes. */
static size_t numa_findings(int nodes, int64_t node0, int64_t node1, uint64_t vcpu_mask, char *summary, size_t cap)
{
	struct vm vm;
	memset(&vm, 0, sizeof(vm));
	vm.pid = 10;
	vm.cfg.vmm = VMM_QEMU;
	vm.cfg.guest_ram_bytes = MAYBE(8192 * MiB);
	vm.cg.numa_known = true;
	vm.cg.numa_nodes = 2;
	vm.cg.numa_bytes[0] = node0;
	vm.cg.numa_bytes[1] = node1;
	vm.numa.vcpu_nodes_known = vcpu_mask != 0;
	vm.numa.vcpu_nodes = vcpu_mask;
	struct doctor_evidence e = healthy();
	e.numa_nodes = nodes;
	return one_vm_findings(&e, &vm, "vm-numa-remote-memory", summary, cap);
}

static void numa_remote_thresholds(void **state)
{
	(void)state;
	char s[256] = "";
	assert_int_equal(numa_findings(2, 3114 * MiB, 5078 * MiB, 1, s, sizeof(s)), 1);
	assert_string_equal(s, "62% of its 8.0 GiB on node 1, its vCPUs on node 0");
	assert_int_equal(numa_findings(2, 5078 * MiB, 3114 * MiB, 2, s, sizeof(s)), 1);
	assert_string_equal(s, "62% of its 8.0 GiB on node 0, its vCPUs on node 1");
	assert_int_equal(numa_findings(2, 6144 * MiB, 2048 * MiB, 1, NULL, 0), 1);     /* 25% */
	assert_int_equal(numa_findings(2, 6145 * MiB, 2047 * MiB, 1, NULL, 0), 0);     /* under 25% */
	assert_int_equal(numa_findings(2, 3114 * MiB, 5078 * MiB, 3, NULL, 0), 0);     /* vCPUs on both */
	assert_int_equal(numa_findings(2, 3114 * MiB, 5078 * MiB, 0, NULL, 0), 0);     /* vCPUs' nodes unknown */
	assert_int_equal(numa_findings(1, 3114 * MiB, 5078 * MiB, 1, NULL, 0), 0);     /* one node online */
	assert_int_equal(numa_findings(2, 100 * MiB, 255 * MiB, 1, NULL, 0), 0);       /* under 256 MiB remote */
}

/* Polling against the vCPUs' CPU minus the polling (it runs in them), above 5% of a CPU. */
static void halt_poll_thresholds(void **state)
{
	(void)state;
	assert_int_equal(halt_findings(30, MAYBE(700000000)), 1); /* 0.7 s polled of 1.2 s: guest 0.5 s */
	assert_int_equal(halt_findings(30, MAYBE(500000000)), 0); /* 0.5 s of 1.2 s: the guest ran more */
	assert_int_equal(halt_findings(2, MAYBE(80000000)), 0);   /* 4% of a CPU: noise */
	assert_int_equal(halt_findings(30, UNKNOWN), 0);          /* no halt counters: no verdict */
	assert_int_equal(halt_findings(NAN, MAYBE(700000000)), 0); /* vCPU CPU unknown: no verdict */
}

/* A VM ksmd tracks, its copy stalls over a 2 s interval (NaN: not read) and what KSM saves it;
 * the summary into summary (cap bytes) when flagged. */
static size_t copy_stall_findings(double copy_seconds, int64_t saved, int64_t rmap_items, char *summary, size_t cap)
{
	struct vm vm = {.pid = 70, .cfg = {.vmm = VMM_QEMU, .name = "writer"}};
	vm.mem.ksm_rmap_items = MAYBE(rmap_items);
	vm.mem.ksm_merging_pages = MAYBE(0);
	vm.ksm_saved_bytes = MAYBE(saved);
	vm.stalls = vm_stalls_unknown(NULL);
	vm.stalls.copy_stall_seconds = copy_seconds;
	struct doctor_evidence e = healthy();
	e.interval_seconds = 2;
	return one_vm_findings(&e, &vm, "vm-ksm-copy-stalls", summary, cap);
}

/* 1% of a thread per GiB saved, and at least 0.5% of a thread. */
static void copy_stall_thresholds(void **state)
{
	(void)state;
	char s[256] = "";
	assert_int_equal(copy_stall_findings(0.06, 1 * GiB, 1000, s, sizeof(s)), 1); /* 3% for 1 GiB */
	assert_string_equal(s, "its guest stalled 3.0% of a thread on copies of pages KSM merged, while KSM saves it 1024 MiB");
	assert_int_equal(copy_stall_findings(0.06, 3 * GiB, 1000, NULL, 0), 0);      /* 3% for 3 GiB: worth it */
	assert_int_equal(copy_stall_findings(0.061, 3 * GiB, 1000, NULL, 0), 1);
	assert_int_equal(copy_stall_findings(0.0099, 0, 1000, NULL, 0), 0);          /* under 0.5%: noise */
	assert_int_equal(copy_stall_findings(0.01, 0, 1000, NULL, 0), 1);            /* nothing saved at all */
	assert_int_equal(copy_stall_findings(0.06, 0, 0, NULL, 0), 0);               /* KSM does not touch it */
	assert_int_equal(copy_stall_findings(NAN, 0, 1000, NULL, 0), 0);             /* stalls not read */
}

/* A QEMU guest of 4 GiB (pid 80, "web1") with a balloon leaving it all, whose guest view and
 * reclaim are *g's. */
static struct vm balloon_vm(struct guest_view *g)
{
	struct vm vm = {.pid = 80, .cfg = {.vmm = VMM_QEMU, .name = "web1", .has_balloon = true}};
	vm.cfg.guest_ram_bytes = MAYBE(4 * GiB);
	vm.mem.swap = MAYBE(0);
	vm.guest = g;
	return vm;
}

/* A guest view that reported stats age seconds ago (NaN: never), polling every poll seconds (< 0:
 * unknown, as through libvirt); its reclaim unknown. */
static struct guest_view view_polled(double age, int64_t poll)
{
	struct guest_view g = {.balloon_bytes = MAYBE(4 * GiB), .stats_age_seconds = age,
			       .polling_seconds = poll < 0 ? UNKNOWN : MAYBE(poll)};
	g.available_bytes = g.free_bytes = g.total_bytes = isfinite(age) ? MAYBE(3 * GiB) : UNKNOWN;
	g.caches_bytes = g.major_faults = g.maximum_bytes = UNKNOWN;
	if (!isfinite(age))
		snprintf(g.why, sizeof(g.why), "the guest reports no memory stats");
	reclaim_unknown(&g.reclaim, "polling");
	return g;
}

static size_t balloon_stats_findings(double age, int64_t poll, char *summary, size_t cap)
{
	struct guest_view g = view_polled(age, poll);
	struct vm vm = balloon_vm(&g);
	struct doctor_evidence e = healthy();
	return one_vm_findings(&e, &vm, "vm-balloon-no-stats", summary, cap);
}

/* No stats, polling off (a report left from before), a stale report (older than 2 polls + 2 s, 60 s
 * when the interval is unknown); fresh stats are healthy. */
static void balloon_stats_polling(void **state)
{
	(void)state;
	char s[256] = "";
	assert_int_equal(balloon_stats_findings(NAN, 0, s, sizeof(s)), 1);
	assert_string_equal(s, "it has a balloon device but the guest reports no memory stats");
	assert_int_equal(balloon_stats_findings(3, 0, s, sizeof(s)), 1);
	assert_string_equal(s, "its balloon's statistics polling is off: the guest's memory stats are 3 s old");
	assert_int_equal(balloon_stats_findings(12, 5, NULL, 0), 0);  /* polling every 5 s: 12 s is not stale */
	assert_int_equal(balloon_stats_findings(13, 5, s, sizeof(s)), 1);
	assert_string_equal(s, "the guest's last memory stats are 13 s old, polled every 5 s: its balloon driver stopped "
			       "reporting");
	assert_int_equal(balloon_stats_findings(60, -1, NULL, 0), 0); /* libvirt: 60 s */
	assert_int_equal(balloon_stats_findings(61, -1, s, sizeof(s)), 1);
	assert_string_equal(s, "the guest's last memory stats are 61 s old: statistics polling is off, or its balloon "
			       "driver stopped reporting");
	assert_int_equal(balloon_stats_findings(1, 5, NULL, 0), 0);   /* healthy */
	/* No balloon device: libvirt's balloon.current alone is the domain's memory, not judged. */
	struct guest_view g = view_polled(NAN, 0);
	struct vm vm = balloon_vm(&g);
	vm.cfg.has_balloon = false;
	struct doctor_evidence e = healthy();
	assert_int_equal(one_vm_findings(&e, &vm, "vm-balloon-no-stats", NULL, 0), 0);
}

/* A guest that reported: bytes +- bound in all, by free page reporting fpr_bytes (reporting 0 off, 1
 * on, -1 unknown), free_in_swap (< 0 unknown). */
static struct guest_view view_reclaim(int64_t bytes, int64_t bound, int reporting, int64_t fpr_bytes,
				      int64_t free_in_swap)
{
	struct guest_view g = view_polled(2, 5);
	g.reclaim = (struct reclaim){.known = true, .bytes = bytes, .error_bound_bytes = bound,
				     .by_balloon = MAYBE(fpr_bytes), .by_drop_caches = MAYBE(0),
				     .by_free_page_reporting = reporting == 0   ? MAYBE(fpr_bytes)
							       : reporting == 1 ? MAYBE(0)
										: UNKNOWN,
				     .guest_resident_bytes = MAYBE(bytes), .stats_age_seconds = 2,
				     .stats_polling_seconds = MAYBE(5), .free_page_reporting = reporting,
				     .free_in_swap_bytes = free_in_swap < 0 ? UNKNOWN : MAYBE(free_in_swap)};
	return g;
}

static size_t reclaim_findings(const char *id, struct guest_view g, char *summary, size_t cap)
{
	struct vm vm = balloon_vm(&g);
	struct doctor_evidence e = healthy();
	return one_vm_findings(&e, &vm, id, summary, cap);
}

/* 1 GiB free and resident that reporting would return, reporting off; nothing when it is on,
 * unknown, or the guest does not report. */
static void free_page_reporting_off(void **state)
{
	(void)state;
	const char *id = "vm-free-page-reporting-off";
	char s[256] = "";
	assert_int_equal(reclaim_findings(id, view_reclaim(2 * GiB, 256 * MiB, 0, 1 * GiB, 0), s, sizeof(s)), 1);
	assert_string_equal(s, "its guest holds 1.0 GiB free that the host keeps resident: free page reporting is off");
	assert_int_equal(reclaim_findings(id, view_reclaim(2 * GiB, 256 * MiB, 0, 1 * GiB - 1, 0), NULL, 0), 0);
	assert_int_equal(reclaim_findings(id, view_reclaim(2 * GiB, 256 * MiB, 1, 1 * GiB, 0), NULL, 0), 0);
	assert_int_equal(reclaim_findings(id, view_reclaim(2 * GiB, 256 * MiB, -1, 1 * GiB, 0), NULL, 0), 0);
	struct guest_view unknown = view_reclaim(2 * GiB, 256 * MiB, 0, 1 * GiB, 0);
	reclaim_unknown(&unknown.reclaim, "the guest never reported");
	unknown.reclaim.free_page_reporting = 0;
	assert_int_equal(reclaim_findings(id, unknown, NULL, 0), 0);
	/* Through the formula: 3 GiB free of 4, all resident, reporting off. */
	struct reclaim_input in = {.guest_ram = MAYBE(4 * GiB), .balloon = MAYBE(4 * GiB),
				   .guest_total = MAYBE(4 * GiB - 64 * MiB), .guest_free = MAYBE(3 * GiB),
				   .guest_available = MAYBE(3 * GiB), .guest_resident = MAYBE(4 * GiB),
				   .ksm_merged = MAYBE(0), .ksm_zero = MAYBE(0), .swap = MAYBE(0),
				   .stats_age_seconds = 2, .polling_seconds = MAYBE(5), .free_page_reporting = 0};
	struct guest_view g = view_polled(2, 5);
	reclaim_compute(&in, &g.reclaim);
	assert_int_equal(reclaim_findings(id, g, NULL, 0), 1);
	in.free_page_reporting = 1;
	reclaim_compute(&in, &g.reclaim);
	assert_int_equal(reclaim_findings(id, g, NULL, 0), 0);
	in.free_page_reporting = 0;
	in.polling_seconds = MAYBE(0); /* polling off: no figure, no finding (vm-balloon-no-stats speaks) */
	reclaim_compute(&in, &g.reclaim);
	assert_int_equal(reclaim_findings(id, g, NULL, 0), 0);
}

/* min(guest free, swap) of 64 MiB or more; unknown says nothing. */
static void guest_free_in_swap(void **state)
{
	(void)state;
	const char *id = "vm-guest-free-in-swap";
	char s[256] = "";
	assert_int_equal(reclaim_findings(id, view_reclaim(GiB, 0, 1, 0, 64 * MiB), s, sizeof(s)), 1);
	assert_string_equal(s, "up to 64 MiB of what the host swapped out of it may be memory its guest holds free");
	assert_int_equal(reclaim_findings(id, view_reclaim(GiB, 0, 1, 0, 64 * MiB - 1), NULL, 0), 0);
	assert_int_equal(reclaim_findings(id, view_reclaim(GiB, 0, 1, 0, -1), NULL, 0), 0);
	assert_int_equal(reclaim_findings(id, view_reclaim(GiB, 0, 1, 0, 0), NULL, 0), 0);
}

/* A 64 GiB host (reserve 6.4 GiB) with avail available and one 4 GiB guest, overhead 200 MiB,
 * giving back reclaim +- 1 GiB (< 0: its guest does not report). */
static size_t room_findings(int64_t avail, int64_t reclaim, struct doctor_findings *ret_f)
{
	struct guest_view g = reclaim < 0 ? view_polled(NAN, 0) : view_reclaim(reclaim, GiB, 1, 0, 0);
	struct vm vm = balloon_vm(&g);
	vm.overhead_bytes = MAYBE(200 * MiB);
	vm.overhead_method = METHOD_EXACT;
	struct doctor_evidence e = healthy();
	e.host.mem_known = avail >= 0;
	e.host.mem.mem_total = MAYBE(64 * GiB);
	e.host.mem.mem_available = MAYBE(avail);
	e.vms = (struct vm_list){.vms = &vm, .n = 1};
	struct doctor_findings f;
	assert_int_equal(doctor_check(&e, &f), 0);
	size_t n = count(&f, "host-reclaim-would-make-room");
	if (ret_f)
		*ret_f = f;
	else
		doctor_findings_free(&f);
	return n;
}

/* Under the reserve by 1.4 GiB: found when the lower side of what the guests give back covers it. */
static void reclaim_would_make_room(void **state)
{
	(void)state;
	struct doctor_findings f;
	assert_int_equal(room_findings(5 * GiB, 8 * GiB, &f), 1);
	assert_string_equal(f.v[0].summary, "MemAvailable is 1.4 GiB under the 10% reserve and the guests could give "
					    "back 7.0 GiB: room for 1 more 4.00 GiB guest after reclaim, 0 now");
	assert_null(f.v[0].vm[0] ? f.v[0].vm : NULL);
	assert_int_equal(evidence(&f, "host-reclaim-would-make-room", "reserve_bytes").v, 6871947674);
	assert_int_equal(evidence(&f, "host-reclaim-would-make-room", "under_reserve_bytes").v, 6871947674 - 5 * GiB);
	assert_int_equal(evidence(&f, "host-reclaim-would-make-room", "reclaimable_bytes").v, 7 * GiB);
	assert_int_equal(evidence(&f, "host-reclaim-would-make-room", "fit_after_reclaim").v, 1);
	assert_non_null(strstr(f.v[0].advice, "the most from web1 (pid 80): 7.0 GiB"));
	doctor_findings_free(&f);
	int64_t under = 6871947674 - 5 * GiB;
	assert_int_equal(room_findings(5 * GiB, under + GiB, NULL), 1);     /* just ends the pressure */
	assert_int_equal(room_findings(5 * GiB, under + GiB - 1, NULL), 0); /* reclaim alone would not */
	assert_int_equal(room_findings(6871947674, 8 * GiB, NULL), 0);      /* at the reserve: no pressure */
	assert_int_equal(room_findings(5 * GiB, -1, NULL), 0);             /* the guest does not report */
	assert_int_equal(room_findings(-1, 8 * GiB, NULL), 0);             /* meminfo unknown */
}

static void rule_ids_and_aliases(void **state)
{
	(void)state;
	bool old = true;
	const struct doctor_rule *r = doctor_rule_find("vcpu-delay-high", &old);
	assert_non_null(r);
	assert_false(old);
	assert_ptr_equal(doctor_rule_find("vcpu-wait-high", &old), r);
	assert_true(old);
	assert_null(doctor_rule_find("vcpu-wait", NULL));
	assert_non_null(doctor_rule_find("vm-halt-polling", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpu_lists), cmocka_unit_test(severities), cmocka_unit_test(ksm_cpu_thresholds),
		cmocka_unit_test(smaps_thresholds), cmocka_unit_test(sorted_by_severity),
		cmocka_unit_test(guest_ram_sum_with_an_unknown_part), cmocka_unit_test(growth_with_writes),
		cmocka_unit_test(small_pages_thresholds), cmocka_unit_test(numa_remote_thresholds),
		cmocka_unit_test(halt_poll_thresholds), cmocka_unit_test(rule_ids_and_aliases),
		cmocka_unit_test(copy_stall_thresholds), cmocka_unit_test(balloon_stats_polling),
		cmocka_unit_test(free_page_reporting_off), cmocka_unit_test(guest_free_in_swap),
		cmocka_unit_test(reclaim_would_make_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
