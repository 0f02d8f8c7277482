/* A VM-like process for tests: run it with argv[0] "qemu-system-x86_64" (bash: exec -a) and
 * QEMU-style "-name NAME -m SIZE" so discovery takes it for a guest. Its own options:
 *   -fake-shared F -fake-zero F -fake-volatile F   page mix (fractions; rest unique)
 *   -fake-guest N -fake-seed S                      unique content index, image seed
 *   -fake-nothp -fake-nomerge                       no MADV_HUGEPAGE / MADV_MERGEABLE
 *   -fake-grow BYTES_PER_SECOND                     allocate extra memory steadily
 *   -fake-fill-seconds S                            mark RAM mergeable first, then fill it over S
 *                                                   seconds (a booting guest); else fill, then mark
 * Prints "ready" on stdout once its memory is filled; stops on SIGTERM. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/workload.h"
#include "parse/parse.h"

int main(int argc, char **argv)
{
	struct workload_spec s = {.guest_bytes = 64u << 20, .shared_fraction = 0.5, .zero_fraction = 0.1,
				  .image_seed = 1, .thp = true, .mergeable = true};
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "-fake-nothp")) {
			s.thp = false;
			continue;
		}
		if (!strcmp(o, "-fake-nomerge")) {
			s.mergeable = false;
			continue;
		}
		if (!v)
			break;
		if (!strcmp(o, "-m") && parse_qemu_size(v, strlen(v), 1u << 20, &s.guest_bytes) < 0) {
			fprintf(stderr, "fakeguest: bad -m %s\n", v);
			return 2;
		}
		if (!strcmp(o, "-fake-shared"))
			s.shared_fraction = atof(v);
		else if (!strcmp(o, "-fake-zero"))
			s.zero_fraction = atof(v);
		else if (!strcmp(o, "-fake-volatile"))
			s.volatile_fraction = atof(v);
		else if (!strcmp(o, "-fake-guest"))
			s.guest_index = (unsigned)atoi(v);
		else if (!strcmp(o, "-fake-seed"))
			s.image_seed = strtoull(v, NULL, 10);
		else if (!strcmp(o, "-fake-grow"))
			s.grow_bytes_per_second = strtoull(v, NULL, 10);
		else if (!strcmp(o, "-fake-fill-seconds"))
			s.fill_seconds = atof(v);
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	return workload_run(&s, STDOUT_FILENO);
}
