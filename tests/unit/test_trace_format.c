/* parse/trace_format on this kernel's own format files (tests/fixtures/trace-kvm), and where
 * io/perf finds tracefs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <unistd.h>

#include "core/kvm/kvm_trace.h"
#include "io/perf.h"
#include "parse/trace_format.h"
#include "testutil.h"

#define EVENTS "trace-kvm/sys/kernel/tracing/events/kvm/"

static const char *name_of(const struct trace_symbol *s, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].value == v)
			return s[i].name;
	return NULL;
}

static void test_kvm_exit(void **state)
{
	(void)state;
	size_t len;
	char *text = fixture(EVENTS "kvm_exit/format", &len);
	struct trace_format f;
	assert_int_equal(parse_trace_format(text, len, &f), 0);
	assert_string_equal(f.name, "kvm_exit");
	assert_int_equal(f.id, 103);
	const struct trace_field *r = trace_format_field(&f, "exit_reason");
	assert_non_null(r);
	assert_int_equal(r->offset, 8);
	assert_int_equal(r->size, 4);
	assert_false(r->is_signed);
	assert_non_null(trace_format_field(&f, "isa"));
	assert_null(trace_format_field(&f, "common_pid"));
	struct trace_symbol *vmx, *svm, *none;
	size_t nv, ns, nn;
	assert_int_equal(parse_trace_symbols(text, len, 0, 4, &vmx, &nv), 0);
	assert_int_equal(nv, 65);
	assert_string_equal(vmx[0].name, "EXCEPTION_NMI");
	assert_string_equal(name_of(vmx, nv, 12), "HLT");
	assert_string_equal(name_of(vmx, nv, 30), "IO_INSTRUCTION");
	assert_string_equal(name_of(vmx, nv, 48), "EPT_VIOLATION");
	assert_int_equal(parse_trace_symbols(text, len, 1, 4, &svm, &ns), 0);
	assert_string_equal(name_of(svm, ns, 0x078), "hlt");
	assert_string_equal(name_of(svm, ns, 0x07b), "io");
	assert_string_equal(name_of(svm, ns, 0x040 + 14), "PF excp"); /* "0x040 + 14" */
	assert_string_equal(name_of(svm, ns, 0xffffffff), "invalid_guest_state"); /* -1 in 4 bytes */
	assert_string_equal(name_of(svm, ns, 0x80000001), "vmgexit_mmio_read");
	assert_string_equal(name_of(svm, ns, 0x400), "npf");
	/* the third table is __print_flags', not __print_symbolic: there is none */
	assert_int_equal(parse_trace_symbols(text, len, 2, 4, &none, &nn), -ENOENT);
	free(vmx);
	free(svm);
	free(text);
}

static void test_userspace_exit_and_pio(void **state)
{
	(void)state;
	size_t len;
	char *text = fixture(EVENTS "kvm_userspace_exit/format", &len);
	struct trace_format f;
	assert_int_equal(parse_trace_format(text, len, &f), 0);
	assert_int_equal(f.id, 42);
	assert_true(trace_format_field(&f, "errno")->is_signed);
	struct trace_symbol *s;
	size_t n;
	assert_int_equal(parse_trace_symbols(text, len, 0, 4, &s, &n), 0);
	assert_int_equal(n, 31);
	assert_string_equal(name_of(s, n, 2), "KVM_EXIT_IO"); /* "KVM_EXIT_" "IO" joined */
	assert_string_equal(name_of(s, n, 5), "KVM_EXIT_HLT");
	assert_string_equal(name_of(s, n, 6), "KVM_EXIT_MMIO");
	free(s);
	free(text);
	text = fixture(EVENTS "kvm_pio/format", &len);
	assert_int_equal(parse_trace_format(text, len, &f), 0);
	assert_int_equal(f.nfields, 5);
	assert_int_equal(trace_format_field(&f, "port")->offset, 12);
	assert_int_equal(trace_format_field(&f, "rw")->size, 4);
	assert_int_equal(parse_trace_symbols(text, len, 0, 4, &s, &n), -ENOENT);
	free(text);
	text = fixture(EVENTS "kvm_mmio/format", &len);
	assert_int_equal(parse_trace_symbols(text, len, 0, 4, &s, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(name_of(s, n, 2), "write");
	free(s);
	free(text);
}

static void test_bad_formats(void **state)
{
	(void)state;
	struct trace_format f;
	static const char *const bad[] = {
		"",
		"name: kvm_pio\nformat:\n\tfield:unsigned int rw;\toffset:8;\tsize:4;\tsigned:0;\n", /* no ID */
		"name: kvm_pio\nID: 0\nformat:\n\tfield:unsigned int rw;\toffset:8;\tsize:4;\tsigned:0;\n",
		"name: kvm_pio\nID: 12x\nformat:\n\tfield:unsigned int rw;\toffset:8;\tsize:4;\tsigned:0;\n",
		"name: kvm_pio\nID: 110\nformat:\n\tfield:unsigned int rw;\toffset:8;\n",       /* cut field */
		"name: kvm_pio\nID: 110\nformat:\n",                                             /* no field */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_trace_format(bad[i], strlen(bad[i]), &f), -EINVAL);
	struct trace_symbol *s;
	size_t n;
	static const char *const bad_tables[] = {
		"__print_symbolic(REC->x, { 0, \"a\" }, { 1, \"b\" }",    /* cut */
		"__print_symbolic(REC->x, { 0, \"a\" }, { one, \"b\" })", /* not a number */
		"__print_symbolic(REC->x, { 0, a })",                     /* not a string */
		"__print_symbolic(REC->x, { 0, \"a })",
		"__print_symbolic(REC->x)",
	};
	for (size_t i = 0; i < sizeof(bad_tables) / sizeof(bad_tables[0]); i++)
		assert_int_equal(parse_trace_symbols(bad_tables[i], strlen(bad_tables[i]), 0, 4, &s, &n), -EINVAL);
	const char *ok = "x __print_symbolic(f(REC->x, 1), { 0x10 + 2, \"a\" \"b\" }, { -1, \"neg\" })";
	assert_int_equal(parse_trace_symbols(ok, strlen(ok), 0, 1, &s, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].value, 0x12);
	assert_string_equal(s[0].name, "ab");
	assert_int_equal(s[1].value, 0xff);
	free(s);
}

static void test_tracefs_dirs(void **state)
{
	(void)state;
	const char *fx = getenv("VMHOST_FIXTURES");
	char sys[512], dir[64];
	snprintf(sys, sizeof(sys), "%s/trace-kvm/sys", fx ? fx : "tests/fixtures");
	struct io_root root = {.sys = sys};
	assert_int_equal(io_tracefs_dir(&root, dir, sizeof(dir)), 0);
	assert_string_equal(dir, "kernel/tracing");
	snprintf(sys, sizeof(sys), "%s/trace-debugfs/sys", fx ? fx : "tests/fixtures");
	assert_int_equal(io_tracefs_dir(&root, dir, sizeof(dir)), 0);
	assert_string_equal(dir, "kernel/debug/tracing");
	snprintf(sys, sizeof(sys), "%s/trace-none/sys", fx ? fx : "tests/fixtures");
	assert_int_equal(io_tracefs_dir(&root, dir, sizeof(dir)), -ENOENT);
	/* kvm_trace says what to do */
	struct kvm_trace *t;
	struct kvm_trace_config c = {.pid = getpid()};
	int r = kvm_trace_open(&root, &c, &t);
	assert_int_equal(r, -ENOENT);
	char why[256];
	kvm_trace_explain(&root, r, why, sizeof(why));
	assert_string_equal(why, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	/* tracefs without kvm events: the module is not loaded */
	snprintf(sys, sizeof(sys), "%s/trace-nokvm/sys", fx ? fx : "tests/fixtures");
	assert_int_equal(kvm_trace_open(&root, &c, &t), -ENODEV);
	kvm_trace_explain(&root, -EACCES, why, sizeof(why));
	assert_non_null(strstr(why, "perf events or tracefs not allowed (perf_event_paranoid is "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kvm_exit), cmocka_unit_test(test_userspace_exit_and_pio),
		cmocka_unit_test(test_bad_formats), cmocka_unit_test(test_tracefs_dirs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
