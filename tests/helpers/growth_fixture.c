/* Builds a vmhost.db with known VM series at fixed times, through the store's own writer, for
 * the golden tests of `vmhost growth` (tests/cli/growth_golden.sh):
 *
 *   steady-web  flat overhead (180 MiB, a little noise)        -> steady
 *   leaky-db    overhead +25 MiB per hour                      -> growing
 *   young       started 9 minutes before the end               -> warm-up
 *   short       5 samples in the window, then it stopped       -> too few samples
 *   gone-early  only before the 6-hour window                  -> not listed
 *
 * 7 hours at one sample a minute from 2026-01-01 00:00:00 UTC. Usage: growth_fixture FILE.db */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sample/snapshot.h"
#include "store/store.h"

#define MiB (1024LL * 1024)
#define GiB (1024 * MiB)
#define T0 1767225600.0          /* 2026-01-01 00:00:00 UTC */
#define BOOT (T0 - 2 * 86400.0)  /* the host booted two days earlier */
#define HZ 100
#define STEP 60.0
#define SAMPLES 421              /* 7 hours */

struct fixture_vm {
	const char *name, *uuid;
	pid_t pid;
	double started;           /* Unix seconds */
	double from, until;       /* sampled in [from, until] */
	int64_t guest_ram, overhead;
	double growth_per_hour;   /* bytes */
};

static const struct fixture_vm fixture_vms[] = {
	{"steady-web", "11111111-2222-3333-4444-555555555555", 2001, BOOT + 86400, T0, T0 + 7 * 3600, 2 * GiB,
	 180 * MiB, 0},
	{"leaky-db", NULL, 2002, BOOT + 86400, T0, T0 + 7 * 3600, 4 * GiB, 150 * MiB, 25.0 * MiB},
	{"young", NULL, 2003, T0 + 7 * 3600 - 540, T0 + 7 * 3600 - 540, T0 + 7 * 3600, 1 * GiB, 90 * MiB, 0},
	{"short", NULL, 2004, BOOT + 3600, T0 + 5400, T0 + 5400 + 4 * STEP, 1 * GiB, 120 * MiB, 0},
	{"gone-early", NULL, 2005, BOOT + 3600, T0, T0 + 1800, 1 * GiB, 100 * MiB, 0},
};
#define NVMS (sizeof(fixture_vms) / sizeof(fixture_vms[0]))

/* Deterministic noise in [-1 MiB, 1 MiB], the same on every machine (no libm). */
static int64_t noise(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return (int64_t)((*state >> 8) & 0xffff) * 2 * MiB / 0xffff - MiB;
}

static void fill_vm(struct vm *v, const struct fixture_vm *f, double t, unsigned *seed)
{
	memset(v, 0, sizeof(*v));
	v->pid = f->pid;
	v->start_ticks = (uint64_t)((f->started - BOOT) * HZ);
	v->cfg.vmm = VMM_QEMU;
	snprintf(v->cfg.name, sizeof(v->cfg.name), "%s", f->name);
	if (f->uuid)
		snprintf(v->cfg.uuid, sizeof(v->cfg.uuid), "%s", f->uuid);
	v->cfg.guest_ram_bytes = MAYBE(f->guest_ram);
	int64_t over = f->overhead + (int64_t)(f->growth_per_hour * (t - T0) / 3600) + noise(seed);
	int64_t merged_pages = f->guest_ram / 4 / 4096;
	v->mem.rss_anon = MAYBE(f->guest_ram + over);
	v->mem.rss_file = MAYBE(8 * MiB);
	v->mem.rss_shmem = MAYBE(0);
	v->mem.rss = MAYBE(f->guest_ram + over + 8 * MiB);
	v->mem.swap = MAYBE(0);
	v->mem.ksm_merging_pages = MAYBE(merged_pages);
	v->mem.ksm_zero_pages = MAYBE(0);
	v->mem.ksm_profit = MAYBE(merged_pages * 4096 / 2);
	v->ksm_saved_bytes = MAYBE(merged_pages * 4096 / 2);
	v->pss_bytes = v->mem.rss;
	v->pss_method = METHOD_ESTIMATE;
	v->overhead_bytes = MAYBE(over);
	v->overhead_method = METHOD_ESTIMATE;
}

static int fill_snapshot(struct snapshot *s, double t, unsigned *seed)
{
	memset(s, 0, sizeof(*s));
	s->wall_seconds = t;
	s->monotonic_seconds = t - BOOT;
	s->gather_seconds = 0.002;
	s->host.mem_known = true;
	s->host.mem.mem_total = MAYBE(24 * GiB);
	s->host.mem.mem_available = MAYBE(14 * GiB);
	s->host.mem.mem_free = MAYBE(10 * GiB);
	s->host.mem.swap_total = MAYBE(2 * GiB);
	s->host.mem.swap_free = MAYBE(2 * GiB);
	s->host.page_size_bytes = 4096;
	s->host.clock_ticks_per_second = HZ;
	s->host.ksm.present = true;
	s->host.ksm.run = MAYBE(1);
	s->host.ksm.pages_shared = MAYBE(20000);
	s->host.ksm.pages_sharing = MAYBE(400000);
	s->host.ksm.ksm_zero_pages = MAYBE(0);
	s->ksmd_cpu_ns = MAYBE((int64_t)((t - BOOT) * 2e7)); /* 2% of a CPU */
	s->vms.vms = calloc(NVMS, sizeof(struct vm));
	if (!s->vms.vms)
		return -1;
	for (size_t i = 0; i < NVMS; i++) {
		const struct fixture_vm *f = &fixture_vms[i];
		if (t >= f->from && t <= f->until)
			fill_vm(&s->vms.vms[s->vms.n++], f, t, seed);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: growth_fixture FILE.db\n");
		return 2;
	}
	struct store *s;
	int r = store_open(argv[1], &s);
	if (r < 0) {
		fprintf(stderr, "growth_fixture: %s: %s\n", argv[1], store_strerror(r));
		return 1;
	}
	unsigned seed = 7;
	for (int i = 0; i < SAMPLES && r == 0; i++) {
		struct snapshot snap;
		if (fill_snapshot(&snap, T0 + i * STEP, &seed) < 0) {
			r = -1;
			break;
		}
		r = store_write_sample(s, &snap, NULL);
		snapshot_free(&snap);
	}
	store_close(s);
	if (r < 0) {
		fprintf(stderr, "growth_fixture: writing %s: %s\n", argv[1], store_strerror(r));
		return 1;
	}
	return 0;
}
