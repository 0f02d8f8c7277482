/* QEMU's option syntax: QemuOpts key=value lists and their JSON form, booleans, and the one walk
 * over a command line's options and their arguments. */
#include "parse/cmdline/qemu_opts.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/types.h>

#include "parse/json.h"

/* The value of a dotted key among nested objects ("file.aio"), or NULL. */
static const struct json_value *json_dotted(const struct json_doc *doc, const char *key)
{
	const struct json_value *v = json_root(doc);
	while (v && *key) {
		char part[128];
		size_t l = strcspn(key, ".");
		if (l >= sizeof(part))
			return NULL;
		memcpy(part, key, l);
		part[l] = '\0';
		v = json_get(doc, v, part);
		key += l + (key[l] == '.');
	}
	return v;
}

/* A key of a JSON option argument ({"qom-type":"memory-backend-ram","id":"pc.ram",...}), read by
 * parse/json.c: a scalar's text, -ENAMETOOLONG for an object or array or what does not fit. */
static int json_option(const char *arg, const char *key, char *ret, size_t cap)
{
	struct json_doc doc;
	int r = json_parse(arg, strlen(arg), &doc);
	if (r < 0)
		return r == -ENOMEM ? r : -EINVAL;
	const struct json_value *v = json_get(&doc, json_root(&doc), key);
	if (!v) /* "cache.direct": {"cache":{"direct":true}}, as QEMU's JSON syntax nests it */
		v = json_dotted(&doc, key);
	ssize_t n = v ? json_as_text(&doc, v, ret, cap) : -ENOENT;
	json_free(&doc);
	if (n == -EINVAL || n == -ENOSPC)
		return -ENAMETOOLONG;
	return n < 0 ? (int)n : (n > INT_MAX ? -ENAMETOOLONG : (int)n);
}

int qemu_opt_get(const char *arg, const char *implied_key, const char *key, char *ret, size_t cap)
{
	if (!cap)
		return -EINVAL;
	if (arg[0] == '{')
		return json_option(arg, key, ret, cap);
	bool first = true;
	const char *p = arg;
	while (*p) {
		/* One element: up to an unescaped comma; ",," is a literal comma. */
		char elem[1024];
		size_t n = 0;
		for (; *p; p++) {
			if (*p == ',') {
				if (p[1] == ',') {
					p++;
				} else {
					break;
				}
			}
			if (n + 1 < sizeof(elem))
				elem[n++] = *p;
		}
		elem[n] = '\0';
		if (*p == ',')
			p++;
		const char *eq = strchr(elem, '=');
		const char *k = elem, *v;
		size_t kl;
		if (eq) {
			kl = (size_t)(eq - elem);
			v = eq + 1;
		} else if (first && implied_key) {
			k = implied_key;
			kl = strlen(implied_key);
			v = elem;
		} else {
			kl = n;
			v = "on"; /* a bare flag */
		}
		first = false;
		if (strlen(key) == kl && !strncmp(k, key, kl)) {
			size_t vl = strlen(v);
			if (vl >= cap)
				return -ENAMETOOLONG;
			memcpy(ret, v, vl + 1);
			return (int)vl;
		}
	}
	return -ENOENT;
}

int qemu_opt_bool(const char *arg, const char *key)
{
	char v[16];
	if (qemu_opt_get(arg, NULL, key, v, sizeof(v)) < 0)
		return -ENOENT;
	/* QEMU's spellings (qapi_bool_parse); JSON's true and false are among them as text. */
	if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "y"))
		return 1;
	if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "n"))
		return 0;
	return -EINVAL;
}

/* QEMU's options that take an argument (DEF(..., HAS_ARG, ...) in qemu-options.hx, QEMU 2.x to
 * 9.x: the current ones and those since removed), and Proxmox's -id. Every other option is a flag. */
static const char *const options_with_argument[] = {
	"D", "L", "M", "accel", "acpitable", "action", "add-fd", "append", "audio", "audiodev", "balloon",
	"bios", "blockdev", "boot", "bt", "cdrom", "chardev", "chroot", "clock", "compat", "cpu", "d",
	"debugcon", "device", "dfilter", "display", "drive", "dtb", "dump-vmstate", "echr", "fda", "fdb",
	"fsdev", "fw_cfg", "g", "gdb", "global", "hda", "hdb", "hdc", "hdd", "icount", "id", "incoming",
	"initrd", "iscsi", "k", "kernel", "kvm-shadow-memory", "loadvm", "m", "machine", "mem-path",
	"mon", "monitor", "msg", "mtdblock", "name", "net", "netdev", "nic", "numa", "object",
	"option-rom", "overcommit", "parallel", "pcidevice", "pflash", "pidfile", "plugin", "prom-env",
	"qmp", "qmp-pretty", "qtest", "qtest-log", "readconfig", "realtime", "rotate", "rtc", "run-with",
	"runas", "sandbox", "sd", "seed", "semihosting-config", "serial", "set", "shim", "smbios", "smp",
	"soundhw", "spice", "startdate", "tb-size", "tpmdev", "trace", "usbdevice", "uuid", "vga",
	"virtfs", "virtioconsole", "vnc", "watchdog", "watchdog-action", "writeconfig", "xen-domid",
};

static bool takes_argument(const char *name)
{
	for (size_t i = 0; i < sizeof(options_with_argument) / sizeof(options_with_argument[0]); i++)
		if (!strcmp(options_with_argument[i], name))
			return true;
	return false;
}

void qemu_options_each(const char *const *argv, size_t argc, qemu_option_fn *fn, void *ctx)
{
	for (size_t i = 1; i < argc; i++) {
		if (argv[i][0] != '-')
			continue; /* a positional word: an image QEMU would open as -hda */
		const char *name = argv[i] + (argv[i][1] == '-' ? 2 : 1);
		if (!takes_argument(name))
			continue; /* a flag */
		if (i + 1 == argc)
			return; /* its argument is missing: QEMU would refuse the line */
		fn(ctx, name, argv[++i]);
	}
}

bool qemu_id_wellformed(const char *id)
{
	if (!((*id >= 'a' && *id <= 'z') || (*id >= 'A' && *id <= 'Z')))
		return false;
	for (id++; *id; id++)
		if (!((*id >= 'a' && *id <= 'z') || (*id >= 'A' && *id <= 'Z') || (*id >= '0' && *id <= '9') || *id == '-' ||
		      *id == '.' || *id == '_'))
			return false;
	return true;
}
