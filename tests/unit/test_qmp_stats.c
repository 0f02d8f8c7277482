/* parse/qmp_stats and core/qmp_stats: KVM stats from query-stats replies, kinds from the schema,
 * vCPUs by index; one visit through a real socket, closed after. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/kvm/kvm_qmp.h"
#include "fakeqmp.h"
#include "testutil.h"

struct reply {
	char *text;
	struct json_doc doc;
	const struct json_value *ret;
};

static void load(const char *name, struct reply *r)
{
	size_t len;
	r->text = fixture(name, &len);
	assert_int_equal(json_parse(r->text, len, &r->doc), 0);
	r->ret = json_get(&r->doc, json_root(&r->doc), "return");
	assert_non_null(r->ret);
}

static void unload(struct reply *r)
{
	json_free(&r->doc);
	free(r->text);
}

static const struct qmp_stat_desc *desc(const struct qmp_stats_schema *s, enum qmp_stats_target t, const char *name)
{
	int i = qmp_schema_index(s, t, name);
	assert_true(i >= 0);
	return &s->desc[t][i];
}

static void test_schema(void **state)
{
	(void)state;
	struct reply r;
	load("qmp/schemas-kvm-x86.json", &r);
	struct qmp_stats_schema s;
	assert_int_equal(qmp_parse_schemas(&r.doc, r.ret, &s), 0);
	assert_int_equal(s.n[QMP_STATS_VM], 15);
	assert_int_equal(s.n[QMP_STATS_VCPU], 45);
	const struct qmp_stat_desc *d = desc(&s, QMP_STATS_VCPU, "exits");
	assert_int_equal(d->type, QMP_STAT_CUMULATIVE);
	assert_int_equal(d->kind, KVM_STAT_EVENTS);
	assert_string_equal(d->unit, "");
	d = desc(&s, QMP_STATS_VCPU, "halt_wait_ns");
	assert_int_equal(d->kind, KVM_STAT_TIME_NS);
	assert_string_equal(d->unit, "seconds");
	assert_int_equal(d->base, 10);
	assert_int_equal(d->exponent, -9);
	assert_int_equal(d->to_ns, 1);
	d = desc(&s, QMP_STATS_VCPU, "halt_wait_hist");
	assert_int_equal(d->type, QMP_STAT_LOG2_HIST);
	assert_int_equal(d->kind, KVM_STAT_IGNORED);
	d = desc(&s, QMP_STATS_VCPU, "blocking");
	assert_int_equal(d->type, QMP_STAT_INSTANT);
	assert_int_equal(d->kind, KVM_STAT_GAUGE);
	assert_string_equal(d->unit, "boolean");
	assert_int_equal(desc(&s, QMP_STATS_VM, "max_mmu_rmap_size")->type, QMP_STAT_PEAK);
	assert_int_equal(desc(&s, QMP_STATS_VM, "max_mmu_rmap_size")->kind, KVM_STAT_GAUGE);
	assert_int_equal(desc(&s, QMP_STATS_VM, "pages_4k")->kind, KVM_STAT_GAUGE);
	assert_int_equal(qmp_schema_index(&s, QMP_STATS_VM, "exits"), -1);
	/* the same classification as the debugfs reader's, for every counter both sources have */
	for (int t = 0; t < QMP_STATS_NTARGETS; t++)
		for (size_t i = 0; i < s.n[t]; i++)
			assert_int_equal(s.desc[t][i].kind, kvm_stat_kind(s.desc[t][i].name));
	qmp_schema_free(&s);
	qmp_schema_free(&s);
	unload(&r);
}

static int parse_schema_text(const char *text, struct qmp_stats_schema *s)
{
	struct json_doc d;
	assert_int_equal(json_parse(text, strlen(text), &d), 0);
	int r = qmp_parse_schemas(&d, json_get(&d, json_root(&d), "return"), s);
	json_free(&d);
	return r;
}

static void test_schema_variants(void **state)
{
	(void)state;
	struct qmp_stats_schema s;
	/* microseconds scale to ns; linear histograms keep their bucket size; another provider and
	 * an unknown target are skipped */
	assert_int_equal(parse_schema_text("{\"return\": [{\"provider\": \"kvm\", \"target\": \"vcpu\", \"stats\": ["
					   "{\"name\": \"run_us\", \"type\": \"cumulative\", \"unit\": \"seconds\", \"base\": 10, \"exponent\": -6},"
					   "{\"name\": \"sizes\", \"type\": \"linear-histogram\", \"unit\": \"bytes\", \"exponent\": 0, \"bucket-size\": 4096},"
					   "{\"name\": \"mem_bytes\", \"type\": \"instant\", \"unit\": \"bytes\", \"base\": 2, \"exponent\": 10}]},"
					   "{\"provider\": \"other\", \"target\": \"vm\", \"stats\": [1]},"
					   "{\"provider\": \"kvm\", \"target\": \"cryptodev\", \"stats\": []}]}", &s), 0);
	assert_int_equal(s.n[QMP_STATS_VM], 0);
	assert_int_equal(s.n[QMP_STATS_VCPU], 3);
	assert_int_equal(s.desc[QMP_STATS_VCPU][0].kind, KVM_STAT_TIME_NS);
	assert_int_equal(s.desc[QMP_STATS_VCPU][0].to_ns, 1000);
	assert_int_equal(s.desc[QMP_STATS_VCPU][1].bucket_size, 4096);
	assert_int_equal(s.desc[QMP_STATS_VCPU][2].base, 2);
	qmp_schema_free(&s);
	static const char *const bad[] = {
		"{\"return\": {}}",
		"{\"return\": [1]}",
		"{\"return\": [{\"provider\": \"kvm\", \"target\": \"vm\", \"stats\": {}}]}",
		"{\"return\": [{\"provider\": \"kvm\", \"target\": \"vm\", \"stats\": [{\"name\": \"x\", \"type\": \"sideways\", \"exponent\": 0}]}]}",
		"{\"return\": [{\"provider\": \"kvm\", \"target\": \"vm\", \"stats\": [{\"type\": \"peak\", \"exponent\": 0}]}]}",
		"{\"return\": [{\"provider\": \"kvm\", \"target\": \"vm\", \"stats\": [{\"name\": \"x\", \"type\": \"peak\", \"exponent\": \"0\"}]}]}",
		"{\"return\": [{\"provider\": \"kvm\", \"target\": \"vm\", \"stats\": []}, {\"provider\": \"kvm\", \"target\": \"vm\", \"stats\": []}]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_schema_text(bad[i], &s), -EINVAL);
}

static void test_values(void **state)
{
	(void)state;
	struct reply sc, vm, vc, cpus;
	load("qmp/schemas-kvm-x86.json", &sc);
	load("qmp/stats-vm.json", &vm);
	load("qmp/stats-vcpu.json", &vc);
	load("qmp/cpus.json", &cpus);
	struct qmp_stats_schema s;
	assert_int_equal(qmp_parse_schemas(&sc.doc, sc.ret, &s), 0);
	struct qmp_stat_value *v = calloc(s.n[QMP_STATS_VM], sizeof(*v));
	assert_int_equal(qmp_parse_vm_stats(&vm.doc, vm.ret, &s, v), 0);
	assert_int_equal(v[qmp_schema_index(&s, QMP_STATS_VM, "pages_4k")].value.v, 4096);
	assert_int_equal(v[qmp_schema_index(&s, QMP_STATS_VM, "remote_tlb_flush")].value.v, 12);
	for (size_t i = 0; i < s.n[QMP_STATS_VM]; i++)
		assert_true(v[i].value.known);
	qmp_values_free(v, s.n[QMP_STATS_VM]);

	struct qmp_vcpu_stats *c;
	size_t n;
	assert_int_equal(qmp_parse_vcpu_stats(&vc.doc, vc.ret, &s, &c, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(c[0].qom_path, "/machine/unattached/device[1]"); /* reply order until mapped */
	assert_int_equal(c[0].index, -1);
	assert_int_equal(qmp_parse_cpus(&cpus.doc, cpus.ret, c, n), 0);
	assert_int_equal(c[0].index, 0);
	assert_int_equal(c[0].thread, 4321);
	assert_int_equal(c[1].index, 1);
	assert_int_equal(c[1].thread, 4322);
	int exits = qmp_schema_index(&s, QMP_STATS_VCPU, "exits"), blocking = qmp_schema_index(&s, QMP_STATS_VCPU, "blocking");
	int hist = qmp_schema_index(&s, QMP_STATS_VCPU, "halt_wait_hist"), wait = qmp_schema_index(&s, QMP_STATS_VCPU, "halt_wait_ns");
	assert_int_equal(c[0].values[exits].value.v, 130345);
	assert_int_equal(c[1].values[exits].value.v, 131345);
	assert_int_equal(c[0].values[blocking].value.v, 0);
	assert_int_equal(c[1].values[blocking].value.v, 1);
	assert_int_equal(c[1].values[wait].value.v, 2500000001);
	assert_false(c[0].values[hist].value.known);
	assert_int_equal(c[0].values[hist].nbuckets, 32);
	assert_int_equal(c[0].values[hist].buckets[10], 5);
	assert_int_equal(c[1].values[hist].buckets[10], 6);
	qmp_vcpus_free(c, n, s.n[QMP_STATS_VCPU]);

	/* bad shapes, values out of range, stats the schema does not have */
	const char *odd = "{\"return\": [{\"provider\": \"kvm\", \"qom-path\": \"/x\", \"stats\": [{\"name\": \"exits\", \"value\": 18446744073709551615},"
			  "{\"name\": \"brand_new\", \"value\": 3}, {\"name\": \"halt_exits\", \"value\": 18446744073709551616}]}]}";
	struct json_doc d;
	assert_int_equal(json_parse(odd, strlen(odd), &d), 0);
	assert_int_equal(qmp_parse_vcpu_stats(&d, json_get(&d, json_root(&d), "return"), &s, &c, &n), 0);
	assert_false(c[0].values[exits].value.known); /* beyond int64: unknown, never wrapped */
	assert_false(c[0].values[qmp_schema_index(&s, QMP_STATS_VCPU, "halt_exits")].value.known);
	assert_int_equal(qmp_parse_cpus(&cpus.doc, cpus.ret, c, n), 0);
	assert_int_equal(c[0].index, -1); /* no such qom-path in query-cpus-fast */
	qmp_vcpus_free(c, n, s.n[QMP_STATS_VCPU]);
	json_free(&d);
	static const char *const bad[] = {
		"{\"return\": {}}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"exits\", \"value\": -1}]}]}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"exits\", \"value\": \"1\"}]}]}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"exits\"}]}]}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"halt_wait_hist\", \"value\": [1, -2]}]}]}",
		"{\"return\": [{\"provider\": \"kvm\"}]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(json_parse(bad[i], strlen(bad[i]), &d), 0);
		const struct json_value *ret = json_get(&d, json_root(&d), "return");
		print_message("bad %zu\n", i);
		/* the vCPU form needs a qom-path: add one by parsing as VM values instead */
		struct qmp_stat_value *vv = calloc(s.n[QMP_STATS_VCPU], sizeof(*vv));
		struct qmp_stats_schema swap = {.desc = {s.desc[QMP_STATS_VCPU], NULL}, .n = {s.n[QMP_STATS_VCPU], 0}};
		assert_int_equal(qmp_parse_vm_stats(&d, ret, &swap, vv), -EINVAL);
		qmp_values_free(vv, s.n[QMP_STATS_VCPU]);
		json_free(&d);
	}
	qmp_schema_free(&s);
	unload(&sc), unload(&vm), unload(&vc), unload(&cpus);
}

static char *text_of(const char *name)
{
	size_t len;
	return fixture(name, &len);
}

static void test_visit(void **state)
{
	(void)state;
	char *greet = text_of("qmp/greeting-7.2.json"), *schemas = text_of("qmp/schemas-kvm-x86.json");
	char *vm = text_of("qmp/stats-vm.json"), *vcpu = text_of("qmp/stats-vcpu.json"), *cpus = text_of("qmp/cpus.json");
	/* Two visits to one server: the second does not ask for the schema again (ids follow on). */
	char *vm2 = strdup(vm), *vcpu2 = strdup(vcpu), *cpus2 = strdup(cpus);
	memcpy(strstr(vm2, "\"id\": 3"), "\"id\": 2", 7);
	memcpy(strstr(vcpu2, "\"id\": 4"), "\"id\": 3", 7);
	memcpy(strstr(cpus2, "\"id\": 5"), "\"id\": 4", 7);
	const struct fake_step visits[] = {{'s', greet}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', schemas}, {'r', 0},
					   {'s', vm}, {'r', 0}, {'s', vcpu}, {'r', 0}, {'s', cpus}, {'a', 0},
					   {'s', greet}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', vm2}, {'r', 0},
					   {'s', vcpu2}, {'r', 0}, {'s', cpus2}};
	struct fake_qmp f;
	assert_int_equal(fake_qmp_start(&f, visits, sizeof(visits) / sizeof(visits[0])), 0);
	struct kvm_qmp_vm *src;
	assert_int_equal(kvm_qmp_vm_new(f.path, getpid(), 1000, &src), 0);
	struct kvm_qmp_sample a;
	assert_int_equal(kvm_qmp_vm_sample(src, &a), 0);
	const struct qmp_stats_schema *s = kvm_qmp_vm_schema(src);
	assert_int_equal(a.nvcpus, 2);
	assert_int_equal(a.vcpus[1].index, 1);
	assert_int_equal(a.vcpus[1].values[qmp_schema_index(s, QMP_STATS_VCPU, "io_exits")].value.v, 131000);
	assert_true(a.monotonic_seconds > 0);
	kvm_qmp_sample_free(&a, src);
	/* the server accepts the second visit only once the first one closed its socket */
	assert_int_equal(kvm_qmp_vm_sample(src, &a), 0);
	assert_int_equal(a.vcpus[0].values[qmp_schema_index(s, QMP_STATS_VCPU, "exits")].value.v, 130345);
	kvm_qmp_sample_free(&a, src);
	kvm_qmp_vm_free(src);
	fake_qmp_stop(&f);
	assert_int_equal(f.lines_read, 9); /* 5 lines, then 4: capabilities and the commands */

	/* TCG: QEMU answers, with no KVM statistics */
	char *empty = text_of("qmp/tcg-query-stats.json");
	const struct fake_step tcg[] = {{'s', greet}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', empty}};
	assert_int_equal(fake_qmp_start(&f, tcg, 5), 0);
	assert_int_equal(kvm_qmp_vm_new(f.path, getpid(), 1000, &src), 0);
	assert_int_equal(kvm_qmp_vm_sample(src, &a), -ENODATA);
	assert_string_equal(kvm_qmp_vm_reason(src), "QEMU reports no KVM statistics (not accel=kvm?)");
	fake_qmp_stop(&f);
	kvm_qmp_vm_free(src);
	/* QEMU before 7.1 */
	const struct fake_step old[] = {{'s', greet}, {'r', 0}, {'s', FAKE_OK}, {'r', 0},
		{'s', "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command query-stats-schemas has not been found\"}}\r\n"}};
	assert_int_equal(fake_qmp_start(&f, old, 5), 0);
	assert_int_equal(kvm_qmp_vm_new(f.path, getpid(), 1000, &src), 0);
	assert_int_equal(kvm_qmp_vm_sample(src, &a), -EOPNOTSUPP);
	assert_string_equal(kvm_qmp_vm_reason(src), "QEMU has no query-stats-schemas (QEMU 7.1 or later has it)");
	fake_qmp_stop(&f);
	kvm_qmp_vm_free(src);
	/* busy: the reason is the client's */
	const struct fake_step never[] = {{'x', 0}};
	assert_int_equal(fake_qmp_start(&f, never, 1), 0);
	assert_int_equal(kvm_qmp_vm_new(f.path, getpid(), 200, &src), 0);
	assert_int_equal(kvm_qmp_vm_sample(src, &a), -EBUSY);
	assert_non_null(strstr(kvm_qmp_vm_reason(src), "QMP busy"));
	fake_qmp_stop(&f);
	kvm_qmp_vm_free(src);
	free(greet), free(schemas), free(vm), free(vcpu), free(cpus), free(vm2), free(vcpu2), free(cpus2), free(empty);
}

/* core/kvm_qmp: a VM's counters laid out like its debugfs directory (VM stats as they are, vCPU
 * stats summed, histograms and unknown names left out), from one visit to a scripted QEMU. */
static void test_debugfs_layout(void **state)
{
	(void)state;
	char *greet = text_of("qmp/greeting-7.2.json"), *schemas = text_of("qmp/schemas-kvm-x86.json");
	char *vm = text_of("qmp/stats-vm.json"), *vcpu = text_of("qmp/stats-vcpu.json"), *cpus = text_of("qmp/cpus.json");
	const struct fake_step visit[] = {{'s', greet}, {'r', 0}, {'s', FAKE_OK}, {'r', 0}, {'s', schemas}, {'r', 0},
					  {'s', vm}, {'r', 0}, {'s', vcpu}, {'r', 0}, {'s', cpus}};
	struct fake_qmp f;
	assert_int_equal(fake_qmp_start(&f, visit, sizeof(visit) / sizeof(visit[0])), 0);
	struct kvm_qmp_vm *q;
	assert_int_equal(kvm_qmp_vm_new(f.path, getpid(), 1000, &q), 0);
	const char *names[] = {"exits", "io_exits", "halt_wait_ns", "remote_tlb_flush", "pages_4k", "halt_wait_hist", "no_such"};
	maybe_i64 v[7];
	int vcpus = 0;
	maybe_i64 *per;
	int *index;
	assert_int_equal(kvm_qmp_vm_read(q, names, 7, v, &vcpus, &per, &index), 0);
	assert_int_equal(vcpus, 2);
	assert_int_equal(index[0], 0);
	assert_int_equal(index[1], 1);
	assert_int_equal(per[0 * 7 + 0].v, 130345); /* vCPU 0's exits */
	assert_int_equal(per[1 * 7 + 0].v, 131345);
	assert_false(per[0 * 7 + 3].known);          /* a VM-level stat has no per-vCPU value */
	free(per);
	free(index);
	assert_int_equal(v[0].v, 130345 + 131345);         /* vCPU stats: summed over the vCPUs */
	assert_int_equal(v[1].v, 130000 + 131000);
	assert_int_equal(v[2].v, 2500000000 + 2500000001); /* times in ns */
	assert_int_equal(v[3].v, 12);                      /* VM stats: as they are */
	assert_int_equal(v[4].v, 4096);
	assert_false(v[5].known);                          /* a histogram is no counter */
	assert_false(v[6].known);                          /* nor is a name QEMU does not have */
	/* The set for a reader without debugfs: scalars only, each name once, kinds from the schema. */
	size_t n = kvm_qmp_vm_counters(q, 0, NULL, NULL);
	const char *all[256];
	enum kvm_stat_kind kinds[256];
	assert_true(n > 20 && n <= 256);
	assert_int_equal(kvm_qmp_vm_counters(q, n, all, kinds), n);
	int exits = -1, hist = -1, dup = 0;
	for (size_t i = 0; i < n; i++) {
		exits = !strcmp(all[i], "exits") ? (int)i : exits;
		hist = strstr(all[i], "_hist") ? (int)i : hist;
		for (size_t j = 0; j < i; j++)
			dup += !strcmp(all[i], all[j]);
	}
	assert_true(exits >= 0);
	assert_int_equal(kinds[exits], KVM_STAT_EVENTS);
	assert_int_equal(hist, -1);
	assert_int_equal(dup, 0);
	kvm_qmp_vm_free(q);
	fake_qmp_stop(&f);
	/* A socket nobody listens on: the reason names what failed. */
	assert_int_equal(kvm_qmp_vm_new("/nonexistent/qmp.sock", 0, 1000, &q), 0);
	assert_true(kvm_qmp_vm_read(q, names, 7, v, &vcpus, NULL, NULL) < 0);
	assert_true(strlen(kvm_qmp_vm_reason(q)) > 0);
	kvm_qmp_vm_free(q);
	free(greet), free(schemas), free(vm), free(vcpu), free(cpus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schema), cmocka_unit_test(test_schema_variants), cmocka_unit_test(test_values),
		cmocka_unit_test(test_visit), cmocka_unit_test(test_debugfs_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
