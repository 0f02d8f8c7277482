/* QEMU's option syntax, the part every reader of a QEMU command line shares: which words of the
 * command line are options and which their arguments (the one walk, qemu_options_each), and the
 * key=value list inside one argument (QemuOpts, and the JSON form libvirt writes) with its
 * booleans. What the options mean is read elsewhere: the guest's configuration and taps in
 * parse/cmdline/qemu_cmdline.c, its disks in parse/cmdline/qemu_disks.c. */
#ifndef VMHOST_PARSE_CMDLINE_QEMU_OPTS_H
#define VMHOST_PARSE_CMDLINE_QEMU_OPTS_H

#include <stdbool.h>
#include <stddef.h>

/* Looks up key in one option argument, QemuOpts ("a=1,b=2", ",," escapes a comma; the first
 * bare element is implied_key) or JSON ({"a":1,"b":"x"}; a dotted key "a.b" also finds the
 * nested {"a":{"b":..}}). Returns the value length or -ENOENT. */
int qemu_opt_get(const char *arg, const char *implied_key, const char *key, char *ret, size_t cap);

/* A boolean option as QEMU spells it (on/off, yes/no, true/false, y/n; JSON true/false; a bare
 * key is on): 1, 0, -ENOENT when absent, -EINVAL for another value. A dotted key ("cache.direct")
 * also finds a JSON argument's nested member ({"cache":{"direct":true}}), as qemu_opt_get does.
 * Every on/off value vmhost reads goes through it, so that all agree on what QEMU accepts. */
int qemu_opt_bool(const char *arg, const char *key);

/* The one walk over a QEMU command line's options, with QEMU's own rule for what is an option's
 * argument (qemu-options.hx: each option takes one or takes none), for every reader of it:
 *   - a word that starts with '-' is an option, named without its dash or two ("-m", "--m": "m");
 *   - an option in QEMU's table of those that take an argument takes the next word whatever it
 *     is, one that starts with '-' too ("-append -x", "-name -m");
 *   - any other option is a flag and takes nothing: QEMU's flags (-S, -nodefaults, -enable-kvm,
 *     ...) and an option QEMU does not have, so that no option is ever swallowed as an argument;
 *   - a word that is neither option nor argument (an image QEMU opens as -hda) is passed over;
 *   - an option that takes an argument but ends the line is passed over (QEMU refuses it); a
 *     last word cut short (a /proc/PID/cmdline read without its last NUL) is an argument as cut.
 * fn gets each option that has its argument, in order, with its name and argument; argv[0], the
 * program, is not read. */
typedef void qemu_option_fn(void *ctx, const char *name, const char *arg);
void qemu_options_each(const char *const *argv, size_t argc, qemu_option_fn *fn, void *ctx);

/* Whether id is one QEMU accepts for -device id= and -object id= (its id_wellformed: a letter,
 * then letters, digits, '-', '.' and '_'). */
bool qemu_id_wellformed(const char *id);

#endif
