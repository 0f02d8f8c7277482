/* Time per exit reason from the eBPF counter's maps, decoded on recorded map contents
 * (tests/fixtures/kvm-bpf-times/maps.txt: two refreshes of a host where kvm_exit and kvm_entry
 * fire, which this one never does): the per-CPU values summed, the keys sorted into the
 * reasons of the VM's process only, the time since the trace opened, and the JSON of a reason's
 * time (seconds, count, the log2 histogram's buckets that hold any). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/kvm/kvm_bpf.h"
#include "core/kvm/kvm_trace.h"
#include "out/json.h"
#include "out/kvm_view.h"
#include "testutil.h"

#define NCPUS 2
#define MAX_RECS 32

struct stored {
	struct kvm_bpf_key key;
	bool time;
	uint64_t counts[NCPUS];
	struct kvm_exit_time times[NCPUS];
};

struct section {
	struct stored s[MAX_RECS];
	struct kvm_bpf_record recs[MAX_RECS];
	size_t n;
};

/* The time record of key in sec, made on first sight. */
static struct stored *time_record(struct section *sec, const struct kvm_bpf_key *k)
{
	for (size_t i = 0; i < sec->n; i++)
		if (sec->s[i].time && !memcmp(&sec->s[i].key, k, sizeof(*k)))
			return &sec->s[i];
	assert_true(sec->n < MAX_RECS);
	struct stored *s = &sec->s[sec->n++];
	*s = (struct stored){.key = *k, .time = true};
	return s;
}

/* One line of maps.txt into sec. */
static void parse_line(struct section *sec, const char *line)
{
	struct kvm_bpf_key k;
	unsigned long long v0, v1, ns, count;
	int cpu, used;
	if (sscanf(line, "counts %u %u %u %u %u %llu %llu", &k.tgid, &k.tid, &k.event, &k.a, &k.b, &v0, &v1) == 7) {
		assert_true(sec->n < MAX_RECS);
		sec->s[sec->n++] = (struct stored){.key = k, .counts = {v0, v1}};
		return;
	}
	assert_int_equal(sscanf(line, "times %u %u %u %u %u %d %llu %llu%n", &k.tgid, &k.tid, &k.event, &k.a, &k.b, &cpu,
				&ns, &count, &used), 8);
	assert_true(cpu >= 0 && cpu < NCPUS);
	struct kvm_exit_time *t = &time_record(sec, &k)->times[cpu];
	t->ns = ns;
	t->count = count;
	unsigned bucket;
	unsigned long long n;
	int more;
	for (const char *p = line + used; sscanf(p, " %u:%llu%n", &bucket, &n, &more) == 2; p += more) {
		assert_true(bucket < KVM_TIME_BUCKETS);
		t->hist[bucket] = n;
	}
}

/* maps.txt's [before] and [after]. */
static void load_maps(struct section *before, struct section *after)
{
	size_t len;
	char *text = fixture("kvm-bpf-times/maps.txt", &len);
	struct section *sec = NULL;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		if (line[0] == '[') {
			sec = !strcmp(line, "[before]") ? before : after;
			continue;
		}
		assert_non_null(sec);
		parse_line(sec, line);
	}
	free(text);
	for (struct section *s = before; s; s = s == before ? after : NULL)
		for (size_t i = 0; i < s->n; i++)
			s->recs[i] = (struct kvm_bpf_record){.key = s->s[i].key, .counts = s->s[i].time ? NULL : s->s[i].counts,
							     .times = s->s[i].time ? s->s[i].times : NULL};
}

static long counter(const struct kvm_trace *t, enum kvm_trace_event e, const char *reason)
{
	for (size_t i = 0; i < kvm_trace_ncounters(t); i++)
		if (kvm_trace_counter_event(t, i) == e && !strcmp(kvm_trace_counter_reason(t, i), reason))
			return (long)i;
	fail_msg("no counter %s", reason);
	return -1;
}

static char *json_of(const struct kvm_exit_time *t)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	struct json j;
	json_init(&j, f, false);
	json_object_begin(&j, NULL);
	kvm_view_json_time(&j, t);
	json_object_end(&j);
	json_finish(&j);
	fclose(f);
	return text;
}

/* tracefs of this kernel's KVM events (trace-kvm), and a /proc where process 4242 is
 * (kvm-bpf-times): two scenarios' halves, where fixture_root takes one's both. */
static struct io_root times_root(char *sys, char *proc, size_t cap)
{
	snprintf(sys, cap, "%s/trace-kvm/sys", fixtures_dir());
	snprintf(proc, cap, "%s/kvm-bpf-times/proc", fixtures_dir());
	return (struct io_root){.proc = proc, .sys = sys};
}

static void test_decode(void **state)
{
	(void)state;
	static struct section before, after;
	load_maps(&before, &after);
	char sys[512], proc[512];
	struct io_root root = times_root(sys, proc, sizeof(sys));
	struct kvm_bpf *b;
	assert_int_equal(kvm_bpf_replay(NCPUS, 1u << KVM_BPF_EXIT | 1u << KVM_BPF_USERSPACE_EXIT, &b), 0);
	assert_int_equal(kvm_bpf_replay_set(b, before.recs, before.n), 0);
	struct kvm_trace *t;
	struct kvm_trace_config c = {.pid = 4242, .isa = KVM_TRACE_VMX, .bpf = b};
	assert_int_equal(kvm_trace_open(&root, &c, &t), 0);
	assert_true(kvm_trace_timed(t, KVM_TRACE_EXIT));
	assert_true(kvm_trace_timed(t, KVM_TRACE_USERSPACE_EXIT));
	assert_int_equal(kvm_bpf_replay_set(b, after.recs, after.n), 0); /* the next refresh */

	size_t n = kvm_trace_ncounters(t);
	maybe_i64 *counts = calloc(n, sizeof(*counts));
	struct kvm_exit_time *times = calloc(n, sizeof(*times));
	assert_non_null(counts);
	assert_non_null(times);
	assert_int_equal(kvm_trace_sample(t, counts), 0);
	assert_int_equal(kvm_trace_times(t, times), 0);

	long hlt = counter(t, KVM_TRACE_EXIT, "HLT"), ept = counter(t, KVM_TRACE_EXIT, "EPT_VIOLATION"),
	     io = counter(t, KVM_TRACE_USERSPACE_EXIT, "IO"), pio = counter(t, KVM_TRACE_PIO, "0x80 out");
	/* since open: 1500 - 100 HLT exits on two threads, two CPUs; 5555's 7 are another VM's */
	assert_int_equal(counts[hlt].v, 1400);
	assert_int_equal(times[hlt].count, 1400);
	assert_int_equal(times[hlt].ns, 6000000);
	assert_int_equal(times[hlt].hist[11], 500);
	assert_int_equal(times[hlt].hist[12], 890);
	assert_int_equal(times[hlt].hist[20], 10);
	assert_int_equal(counts[ept].v, 200);
	assert_int_equal(times[ept].ns, 100000);
	assert_int_equal(counts[io].v, 300);
	assert_int_equal(times[io].count, 300);
	assert_int_equal(times[pio].count, 0); /* counted, never timed */

	char *text = json_of(&times[hlt]);
	assert_string_equal(text, "{\"seconds\":0.006,\"count\":1400,\"histogram\":["
				  "{\"from_ns\":2048,\"to_ns\":4096,\"count\":500},"
				  "{\"from_ns\":4096,\"to_ns\":8192,\"count\":890},"
				  "{\"from_ns\":1048576,\"to_ns\":2097152,\"count\":10}]}\n");
	free(text);
	text = json_of(&times[io]);
	assert_string_equal(text, "{\"seconds\":0.009,\"count\":300,\"histogram\":[{\"from_ns\":16384,\"to_ns\":32768,\"count\":300}]}\n");
	free(text);
	struct kvm_exit_time zero = {0};
	text = json_of(&zero);
	assert_string_equal(text, "{\"seconds\":0,\"count\":0,\"histogram\":[]}\n");
	free(text);
	free(counts);
	free(times);
	kvm_trace_close(t);
	kvm_bpf_close(b);
}

/* A counter that does not time: the trace says so, never zeros as times, whatever the map holds. */
static void test_untimed(void **state)
{
	(void)state;
	char sys[512], proc[512];
	struct io_root root = times_root(sys, proc, sizeof(sys));
	struct kvm_bpf *b;
	assert_int_equal(kvm_bpf_replay(NCPUS, 0, &b), 0);
	static struct section before, after;
	load_maps(&before, &after);
	assert_int_equal(kvm_bpf_replay_set(b, after.recs, after.n), 0);
	struct kvm_trace *t;
	struct kvm_trace_config c = {.pid = 4242, .isa = KVM_TRACE_VMX, .bpf = b};
	assert_int_equal(kvm_trace_open(&root, &c, &t), 0);
	assert_false(kvm_trace_timed(t, KVM_TRACE_USERSPACE_EXIT));
	struct kvm_exit_time *times = calloc(kvm_trace_ncounters(t), sizeof(*times));
	assert_int_equal(kvm_trace_times(t, times), -ENODATA);
	free(times);
	kvm_trace_close(t);
	kvm_bpf_close(b);
	assert_int_equal(kvm_bpf_replay(0, 0, &b), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_decode), cmocka_unit_test(test_untimed)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
