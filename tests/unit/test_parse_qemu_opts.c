/* parse/cmdline/qemu_opts: QEMU's option syntax, the key=value list inside an option argument (QemuOpts and
 * its JSON form, dotted keys) and its booleans. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "parse/cmdline/qemu_opts.h"

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
	assert_int_equal(qemu_opt_bool("{\"cache\":{\"direct\":true,\"no-flush\":false}}", "cache.direct"), 1);
	assert_int_equal(qemu_opt_bool("{\"cache\":{\"direct\":true,\"no-flush\":false}}", "cache.no-flush"), 0);
	assert_int_equal(qemu_opt_get("{\"file\":{\"driver\":\"file\",\"aio\":\"native\"}}", NULL, "file.aio", v, sizeof(v)), 6);
	assert_string_equal(v, "native");
	assert_int_equal(qemu_opt_get("{\"file\":{\"aio\":\"native\"}}", NULL, "file.aio.x", v, sizeof(v)), -ENOENT);
	assert_int_equal(qemu_opt_get("{\"file\":\"n1\"}", NULL, "file.aio", v, sizeof(v)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(opt_get), cmocka_unit_test(opt_bool)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
