/* The one walk over a QEMU command line (qemu_options_each, src/parse/cmdline/qemu_opts.c) and
 * the two readers that go through it (qemu_cmdline_config, parse_qemu_disks). The input is a
 * NUL-separated command line, its first word the program. The walk gives each option with the word right after it as its argument, an option name that is
 * the word without its one or two dashes, options in order and never inside an argument it gave
 * before, at most one per two words after the program, and the same again on a second walk. The
 * readers: a configuration whose strings end inside their buffers and whose RAM blocks fit, disks
 * read from any non-empty line. */
#include <errno.h>

#include "fuzz.h"
#include "parse/cmdline/qemu_cmdline.h"
#include "parse/cmdline/qemu_disks.h"
#include "parse/cmdline/qemu_opts.h"
#include "parse/cmdline/vmcmd.h"

struct walk_check {
	const char *const *argv;
	size_t argc;
	size_t next;   /* the first word the next option may be */
	size_t calls;
	const char *seen[64]; /* the first arguments given, in order, for the second walk */
};

static void check_option(void *ctx, const char *name, const char *arg)
{
	struct walk_check *w = ctx;
	size_t j = w->next + 1;
	while (j < w->argc && w->argv[j] != arg)
		j++;
	FUZZ_CHECK(j < w->argc && j >= 2); /* a word after an option word, past the last argument */
	const char *opt = w->argv[j - 1];
	FUZZ_CHECK(opt[0] == '-' && name == opt + (opt[1] == '-' ? 2 : 1));
	if (w->calls < sizeof(w->seen) / sizeof(w->seen[0]))
		w->seen[w->calls] = arg;
	w->calls++;
	w->next = j + 1;
}

static void check_again(void *ctx, const char *name, const char *arg)
{
	(void)name;
	struct walk_check *w = ctx;
	if (w->calls < sizeof(w->seen) / sizeof(w->seen[0]))
		FUZZ_CHECK(w->seen[w->calls] == arg);
	w->calls++;
}

static void check_config(const char *const *argv, size_t argc)
{
	struct vm_config c = {.guest_ram_bytes = UNKNOWN};
	FUZZ_CHECK(qemu_cmdline_config(argv, argc, &c) == 0);
	FUZZ_CHECK(fuzz_terminated(c.name, sizeof(c.name)) && fuzz_terminated(c.uuid, sizeof(c.uuid)));
	FUZZ_CHECK(fuzz_terminated(c.vmid, sizeof(c.vmid)) && fuzz_terminated(c.qmp.path, sizeof(c.qmp.path)));
	FUZZ_CHECK(fuzz_terminated(c.balloon_id, sizeof(c.balloon_id)));
	FUZZ_CHECK(c.nblocks <= VM_MAX_RAM_BLOCKS && c.max_vcpus <= 4096);
	FUZZ_CHECK(!c.guest_ram_bytes.known || c.guest_ram_bytes.v >= 0);
	FUZZ_CHECK(c.qmp.kind == VM_QMP_UNIX || c.qmp.path[0] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	const char **argv;
	size_t argc;
	if (!size || cmdline_split(buf, size, &argv, &argc) < 0)
		return 0;
	struct walk_check w = {.argv = argv, .argc = argc};
	qemu_options_each(argv, argc, check_option, &w);
	FUZZ_CHECK(w.calls <= (argc ? argc - 1 : 0) / 2);
	size_t calls = w.calls;
	w.calls = 0;
	qemu_options_each(argv, argc, check_again, &w);
	FUZZ_CHECK(w.calls == calls);
	check_config(argv, argc);
	cmdline_split_free(argv);
	static struct qemu_disks d;
	FUZZ_CHECK(parse_qemu_disks(buf, size, &d) == 0 && d.n <= QEMU_DISKS_MAX);
	return 0;
}
