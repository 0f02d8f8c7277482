/* parse/cmdline/qemu_opts: QEMU's option syntax, the key=value list inside an option argument
 * (QemuOpts and its JSON form, dotted keys), its booleans, and the one walk over a command line's
 * options and their arguments. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "parse/cmdline/qemu_opts.h"
#include "parse/cmdline/vmcmd.h"

/* qemu_opt_get: QemuOpts with escaped commas and an implied key, and JSON as parse/json.c reads it. */
static void opt_get(void **state)
{
	(void)state;
	char v[64];
	assert_int_equal(qemu_opt_get("guest=a,,b,debug-threads=on", "guest", "guest", v, sizeof(v)), 3);
	assert_string_equal(v, "a,b");
	assert_int_equal(qemu_opt_get("web,debug-threads=on", "guest", "guest", v, sizeof(v)), 3);
	assert_string_equal(v, "web");
	assert_int_equal(qemu_opt_get("{\"a\":[1,{\"x\":2}],\"id\":\"pc.ram\",\"size\":42}", NULL, "size", v, sizeof(v)), 2);
	assert_string_equal(v, "42");
	assert_int_equal(qemu_opt_get("{\"id\":\"p\\\"q\"}", NULL, "id", v, sizeof(v)), 3);
	assert_string_equal(v, "p\"q");
	assert_int_equal(qemu_opt_get("{\"id\":", NULL, "id", v, sizeof(v)), -EINVAL);
	assert_int_equal(qemu_opt_get("{\"id\":\"x\"}", NULL, "size", v, sizeof(v)), -ENOENT);
	assert_int_equal(qemu_opt_get("a=1", NULL, "b", v, sizeof(v)), -ENOENT);
	/* JSON as parse/json.c reads it: escapes decoded (keys too), nothing malformed accepted. */
	assert_int_equal(qemu_opt_get("{\"guest\":\"caf\\u00e9\"}", NULL, "guest", v, sizeof(v)), 5);
	assert_string_equal(v, "caf\xc3\xa9");
	assert_int_equal(qemu_opt_get("{\"i\\u0064\":\"x\"}", NULL, "id", v, sizeof(v)), 1);
	assert_int_equal(qemu_opt_get("{\"id\":\"x\" \"size\":1}", NULL, "size", v, sizeof(v)), -EINVAL);
	assert_int_equal(qemu_opt_get("{\"id\":{\"a\":1}}", NULL, "id", v, sizeof(v)), -ENAMETOOLONG);
	assert_int_equal(qemu_opt_get("{\"id\":\"long\"}", NULL, "id", v, 3), -ENAMETOOLONG);
}

/* qemu_opt_bool and the dotted keys qemu_opt_get finds in JSON. */
static void opt_bool(void **state)
{
	(void)state;
	char v[32];
	assert_int_equal(qemu_opt_bool("a=on,b=off,c=yes,d=maybe", "a"), 1);
	assert_int_equal(qemu_opt_bool("a=on,b=off,c=yes,d=maybe", "b"), 0);
	assert_int_equal(qemu_opt_bool("a=on,b=off,c=yes,d=maybe", "c"), 1);
	assert_int_equal(qemu_opt_bool("a=on,b=off,c=yes,d=maybe", "d"), -EINVAL);
	assert_int_equal(qemu_opt_bool("a=on", "e"), -ENOENT);
	assert_int_equal(qemu_opt_bool("a=y,b=n,c,d=true,e=false,f=", "a"), 1); /* QEMU's y and n */
	assert_int_equal(qemu_opt_bool("a=y,b=n,c,d=true,e=false,f=", "b"), 0);
	assert_int_equal(qemu_opt_bool("a=y,b=n,c,d=true,e=false,f=", "c"), 1); /* a bare key */
	assert_int_equal(qemu_opt_bool("a=y,b=n,c,d=true,e=false,f=", "d"), 1);
	assert_int_equal(qemu_opt_bool("a=y,b=n,c,d=true,e=false,f=", "e"), 0);
	assert_int_equal(qemu_opt_bool("a=y,b=n,c,d=true,e=false,f=", "f"), -EINVAL);
	assert_int_equal(qemu_opt_bool("{\"cache\":{\"direct\":true,\"no-flush\":false}}", "cache.direct"), 1);
	assert_int_equal(qemu_opt_bool("{\"cache\":{\"direct\":true,\"no-flush\":false}}", "cache.no-flush"), 0);
	assert_int_equal(qemu_opt_get("{\"file\":{\"driver\":\"file\",\"aio\":\"native\"}}", NULL, "file.aio", v, sizeof(v)), 6);
	assert_string_equal(v, "native");
	assert_int_equal(qemu_opt_get("{\"file\":{\"aio\":\"native\"}}", NULL, "file.aio.x", v, sizeof(v)), -ENOENT);
	assert_int_equal(qemu_opt_get("{\"file\":\"n1\"}", NULL, "file.aio", v, sizeof(v)), -ENOENT);
}

/* What qemu_options_each gave, as "name=arg;" in order. */
struct walked {
	char text[512];
};

static void record(void *ctx, const char *name, const char *arg)
{
	struct walked *w = ctx;
	size_t n = strlen(w->text);
	snprintf(w->text + n, sizeof(w->text) - n, "%s=%s;", name, arg);
}

/* The walk over args (NULL-terminated, args[0] the program). */
static const char *walk(const char *const *args, struct walked *w)
{
	size_t argc = 0;
	while (args[argc])
		argc++;
	w->text[0] = '\0';
	qemu_options_each(args, argc, record, w);
	return w->text;
}

/* The one rule for what is an option's argument: QEMU's table says which options take one; those
 * take the next word even when it starts with '-', every other option is a flag. */
static void option_arguments(void **state)
{
	(void)state;
	struct walked w;
	const char *plain[] = {"qemu", "-m", "1G", "-enable-kvm", "-name", "x", NULL};
	assert_string_equal(walk(plain, &w), "m=1G;name=x;");
	/* Arguments that start with '-' are arguments all the same. */
	const char *dashed[] = {"qemu", "-append", "-m", "-name", "-uuid", "-m", "2G", NULL};
	assert_string_equal(walk(dashed, &w), "append=-m;name=-uuid;m=2G;");
	const char *drives[] = {"qemu", "-name", "-drive", "-drive", "file=/a.raw,id=d0", NULL};
	assert_string_equal(walk(drives, &w), "name=-drive;drive=file=/a.raw,id=d0;");
	/* Flags take nothing, QEMU's own and one it does not have; "--" names an option as '-' does. */
	const char *flags[] = {"qemu", "-nodefaults", "-S", "-m", "1G", "--no-user-config", "--name", "y",
			       "-some-future-flag", "-smp", "2", NULL};
	assert_string_equal(walk(flags, &w), "m=1G;name=y;smp=2;");
	/* A positional word (an image QEMU opens as -hda) is passed over; argv[0] is not read. */
	const char *positional[] = {"-m", "disk.img", "-m", "1G", NULL};
	assert_string_equal(walk(positional, &w), "m=1G;");
	/* An option whose argument is missing at the end is passed over. */
	const char *dangling[] = {"qemu", "-m", "1G", "-name", NULL};
	assert_string_equal(walk(dangling, &w), "m=1G;");
	/* A last argument cut short (no final NUL in /proc/PID/cmdline) is read as it stands. */
	const char cut[] = {'q', 'e', 'm', 'u', 0, '-', 'm', 0, '4', '0'};
	const char **argv;
	size_t argc;
	assert_int_equal(cmdline_split(cut, sizeof(cut), &argv, &argc), 0);
	w.text[0] = '\0';
	qemu_options_each(argv, argc, record, &w);
	cmdline_split_free(argv);
	assert_string_equal(w.text, "m=40;");
}

/* The ids QEMU accepts (id_wellformed): only such an id goes into a QMP command's JSON. */
static void test_id_wellformed(void **state)
{
	(void)state;
	assert_true(qemu_id_wellformed("balloon0"));
	assert_true(qemu_id_wellformed("a.b-c_d9"));
	assert_false(qemu_id_wellformed(""));
	assert_false(qemu_id_wellformed("0balloon"));
	assert_false(qemu_id_wellformed("b\",\"x\":\"y"));
	assert_false(qemu_id_wellformed("b\x1b[2J"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_id_wellformed), cmocka_unit_test(opt_get), cmocka_unit_test(opt_bool), cmocka_unit_test(option_arguments)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
