/* QEMU's option syntax, the part every reader of a QEMU command line shares: the key=value list
 * inside one option argument (QemuOpts, and the JSON form libvirt writes), its booleans, and
 * whether a word is a given option. What the options mean is read elsewhere: the guest's
 * configuration in parse/cmdline/qemu_cmdline.c, its disks in parse/cmdline/qemu_disks.c. */
#ifndef VMHOST_PARSE_CMDLINE_QEMU_OPTS_H
#define VMHOST_PARSE_CMDLINE_QEMU_OPTS_H

#include <stdbool.h>
#include <stddef.h>

/* Looks up key in one option argument, QemuOpts ("a=1,b=2", ",," escapes a comma; the first
 * bare element is implied_key) or JSON ({"a":1,"b":"x"}; a dotted key "a.b" also finds the
 * nested {"a":{"b":..}}). Returns the value length or -ENOENT. */
int qemu_opt_get(const char *arg, const char *implied_key, const char *key, char *ret, size_t cap);

/* Whether arg is the option -name or --name. */
bool qemu_option_is(const char *arg, const char *name);

/* A boolean option (on/off, yes/no, true/false; JSON true/false): 1, 0, -ENOENT when absent,
 * -EINVAL for another value. A dotted key ("cache.direct") also finds a JSON argument's nested
 * member ({"cache":{"direct":true}}), as qemu_opt_get does. */
int qemu_opt_bool(const char *arg, const char *key);

#endif
