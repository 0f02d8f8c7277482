/* /proc/PID/cgroup (parse_cgroup): the path stays in its buffer with no newline; a smaller
 * buffer gives the same path or -ENAMETOOLONG, never a cut path; "0::PATH" printed from the
 * result parses to the same path. The path's per-VM scope (parse_cgroup_vm_scope), when it has
 * one, is a beginning of it that ends a scope's name. */
#include <errno.h>

#include "fuzz.h"
#include "parse/cpu_cgroup.h"
#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char path[4096];
	int r = parse_cgroup(buf, size, path, sizeof(path));
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENAMETOOLONG);
	char small[16];
	int rs = parse_cgroup(buf, size, small, sizeof(small));
	if (r == 0) {
		FUZZ_CHECK(fuzz_terminated(path, sizeof(path)));
		FUZZ_CHECK(!strchr(path, '\n'));
		size_t l = strlen(path);
		/* A path with a NUL inside reads as its first part: the length is from the file. */
		FUZZ_CHECK(rs == 0 ? !strcmp(small, path) : rs == -ENAMETOOLONG);
		FUZZ_CHECK(rs == -ENAMETOOLONG || l < sizeof(small));

		static struct fuzz_text text;
		text.len = 0;
		fuzz_printf(&text, "0::%s\n", path);
		char again[4096];
		FUZZ_CHECK(parse_cgroup(text.buf, text.len, again, sizeof(again)) == 0);
		FUZZ_CHECK(!strcmp(path, again));

		char scope[4096];
		if (parse_cgroup_vm_scope(path, scope, sizeof(scope))) {
			size_t sl = strlen(scope);
			FUZZ_CHECK(sl <= l && !strncmp(scope, path, sl) && (path[sl] == '\0' || path[sl] == '/'));
			FUZZ_CHECK((sl >= 6 && !strcmp(scope + sl - 6, ".scope")) ||
				   (sl >= 13 && !strcmp(scope + sl - 13, ".libvirt-qemu")));
		}
	} else {
		FUZZ_CHECK(rs == r);
	}
	return 0;
}
