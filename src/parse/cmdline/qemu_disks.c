/* The disks of a QEMU command line: -drive, -hda..-hdd and -cdrom, and -blockdev node chains with
 * the -device that attaches them, read into each disk's names, image file, cache mode and AIO. */
#include "parse/cmdline/qemu_disks.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/cmdline/qemu_opts.h"
#include "parse/cmdline/vmcmd.h"

#define NODES_MAX 128
#define CHAIN_MAX 8 /* a format node, its protocol node, filters: deeper is left unread */

/* QEMU's interfaces (blockdev.c if_name) and the units per bus of those that have buses. */
static const char *const if_names[] = {"none", "ide", "scsi", "floppy", "pflash", "mtd", "sd", "virtio", "xen"};
static const int if_max_devs[] = {0, 2, 7, 0, 0, 0, 0, 0, 0};
#define IF_N (sizeof(if_names) / sizeof(if_names[0]))

struct slot {
	size_t type;
	long bus, unit;
};

struct scan {
	const char *drives[QEMU_DISKS_MAX]; /* -drive arguments (and -hda .. as drives), in order */
	long drive_index[QEMU_DISKS_MAX];  /* -hda .. -hdd, -cdrom: their index; -1 for -drive */
	bool drive_cdrom[QEMU_DISKS_MAX];
	size_t ndrives;
	const char *nodes[NODES_MAX]; /* -blockdev arguments */
	size_t nnodes;
	const char *devices[QEMU_DISKS_MAX]; /* -device arguments with drive= */
	size_t ndevices;
	struct slot used[QEMU_DISKS_MAX]; /* units taken by drives named so far */
	size_t nused;
};

/* One option and its argument (a qemu_option_fn): the drives, nodes and devices, kept in order. */
static void scan_option(void *ctx, const char *name, const char *arg)
{
	struct scan *s = ctx;
	static const char *const hd[] = {"hda", "hdb", "hdc", "hdd", "cdrom"};
	char v[8];
	for (size_t i = 0; i < sizeof(hd) / sizeof(hd[0]); i++)
		if (!strcmp(name, hd[i]) && s->ndrives < QEMU_DISKS_MAX) {
			s->drive_index[s->ndrives] = i < 4 ? (long)i : 2; /* -cdrom is index=2 */
			s->drive_cdrom[s->ndrives] = i == 4;
			s->drives[s->ndrives++] = arg;
			return;
		}
	if (!strcmp(name, "drive") && s->ndrives < QEMU_DISKS_MAX) {
		s->drive_index[s->ndrives] = -1;
		s->drive_cdrom[s->ndrives] = qemu_opt_get(arg, NULL, "media", v, sizeof(v)) >= 0 && !strcmp(v, "cdrom");
		s->drives[s->ndrives++] = arg;
	} else if (!strcmp(name, "blockdev") && s->nnodes < NODES_MAX) {
		s->nodes[s->nnodes++] = arg;
	} else if (!strcmp(name, "device") && s->ndevices < QEMU_DISKS_MAX &&
		   qemu_opt_get(arg, "driver", "drive", v, 1) != -ENOENT) {
		s->devices[s->ndevices++] = arg;
	}
}

static bool slot_used(const struct scan *s, size_t type, long bus, long unit)
{
	for (size_t i = 0; i < s->nused; i++)
		if (s->used[i].type == type && s->used[i].bus == bus && s->used[i].unit == unit)
			return true;
	return false;
}

static long opt_long(const char *arg, const char *key, long dflt)
{
	char v[24], *end;
	if (qemu_opt_get(arg, NULL, key, v, sizeof(v)) < 0)
		return dflt;
	long n = strtol(v, &end, 10);
	return end != v && !*end && n >= 0 && n < 1000 ? n : dflt;
}

/* The name QEMU gives a drive without id= (blockdev.c drive_new): interface, bus, medium, unit;
 * a drive without index, bus or unit takes the next free unit. */
static void drive_name(struct scan *s, size_t i, char *ret, size_t cap)
{
	const char *arg = s->drives[i];
	char ifname[16] = "ide";
	if (s->drive_index[i] < 0)
		qemu_opt_get(arg, NULL, "if", ifname, sizeof(ifname));
	size_t type = 0;
	while (type < IF_N && strcmp(if_names[type], ifname))
		type++;
	if (type == IF_N) {
		ret[0] = '\0';
		return;
	}
	long max = if_max_devs[type];
	long index = s->drive_index[i] >= 0 ? s->drive_index[i] : opt_long(arg, "index", -1);
	long bus = index >= 0 && max ? index / max : opt_long(arg, "bus", 0);
	long unit = index >= 0 ? (max ? index % max : index) : opt_long(arg, "unit", -1);
	if (unit < 0)
		for (unit = 0; slot_used(s, type, bus, unit);)
			if (++unit >= max && max) {
				unit = 0;
				bus++;
			}
	if (s->nused < QEMU_DISKS_MAX)
		s->used[s->nused++] = (struct slot){type, bus, unit};
	const char *medium = type == 1 || type == 2 ? (s->drive_cdrom[i] ? "-cd" : "-hd") : "";
	if (max)
		snprintf(ret, cap, "%s%ld%s%ld", if_names[type], bus, medium, unit);
	else
		snprintf(ret, cap, "%s%s%ld", if_names[type], medium, unit);
}

/* What a node chain says about its cache: unset (-1) until a node sets it; a child's own setting
 * overrides what it inherits. */
struct cache_opts {
	int direct, no_flush, write_cache;
};

static const char *cache_mode(struct cache_opts c)
{
	if (c.no_flush == 1)
		return "unsafe";
	if (c.direct == 1)
		return c.write_cache == 0 ? "directsync" : "none";
	return c.write_cache == 0 ? "writethrough" : "writeback";
}

static void set_bool(int *field, const char *arg, const char *prefix, const char *key)
{
	char full[96];
	snprintf(full, sizeof(full), "%s%s", prefix, key);
	int b = qemu_opt_bool(arg, full);
	if (b >= 0)
		*field = b;
}

static const char *find_node(const struct scan *s, const char *name)
{
	char v[64];
	for (size_t i = 0; i < s->nnodes; i++)
		if (qemu_opt_get(s->nodes[i], NULL, "node-name", v, sizeof(v)) >= 0 && !strcmp(v, name))
			return s->nodes[i];
	return NULL;
}

/* Reads a node chain from its top: the node, its inline child ("file.driver=...": the keys under
 * "file."), or the node its "file" names, CHAIN_MAX deep at most. */
static void read_chain(const struct scan *s, const char *arg, struct cache_opts *c, struct qemu_disk *d)
{
	char prefix[CHAIN_MAX * 5 + 1] = "", key[96], v[64];
	for (int depth = 0; arg && depth < CHAIN_MAX; depth++) {
		set_bool(&c->direct, arg, prefix, "cache.direct");
		set_bool(&c->no_flush, arg, prefix, "cache.no-flush");
		snprintf(key, sizeof(key), "%saio", prefix);
		qemu_opt_get(arg, NULL, key, d->aio, sizeof(d->aio));
		snprintf(key, sizeof(key), "%sfilename", prefix);
		qemu_opt_get(arg, NULL, key, d->file, sizeof(d->file));
		snprintf(key, sizeof(key), "%sfile.driver", prefix);
		size_t plen = strlen(prefix);
		if (qemu_opt_get(arg, NULL, key, v, sizeof(v)) >= 0 && plen + 5 < sizeof(prefix)) {
			memcpy(prefix + plen, "file.", 6);
			continue;
		}
		snprintf(key, sizeof(key), "%sfile", prefix);
		if (qemu_opt_get(arg, NULL, key, v, sizeof(v)) < 0)
			break;
		arg = find_node(s, v);
		prefix[0] = '\0';
	}
}

static void drive_disk(struct scan *s, size_t i, struct qemu_disk *d)
{
	const char *arg = s->drives[i];
	if (qemu_opt_get(arg, NULL, "id", d->drive, sizeof(d->drive)) < 0)
		drive_name(s, i, d->drive, sizeof(d->drive));
	if (s->drive_index[i] >= 0) { /* -hda FILE */
		snprintf(d->file, sizeof(d->file), "%s", arg);
		return;
	}
	qemu_opt_get(arg, NULL, "file", d->file, sizeof(d->file));
	struct cache_opts c = {-1, -1, -1};
	char v[16];
	read_chain(s, arg, &c, d);
	if (qemu_opt_get(arg, NULL, "cache", v, sizeof(v)) >= 0)
		snprintf(d->cache, sizeof(d->cache), "%s", v);
	else
		snprintf(d->cache, sizeof(d->cache), "%s", cache_mode(c));
}

/* The devices attached to drives: a -drive gains its device's id; a -blockdev node is a disk. */
static void device_disks(struct scan *s, struct qemu_disks *ret)
{
	for (size_t i = 0; i < s->ndevices; i++) {
		char ref[64], id[64] = "";
		const char *arg = s->devices[i];
		if (qemu_opt_get(arg, NULL, "drive", ref, sizeof(ref)) < 0 || !ref[0])
			continue;
		qemu_opt_get(arg, NULL, "id", id, sizeof(id));
		size_t k = 0;
		while (k < ret->n && strcmp(ret->d[k].drive, ref))
			k++;
		if (k < ret->n) {
			snprintf(ret->d[k].device_id, sizeof(ret->d[k].device_id), "%s", id);
			continue;
		}
		const char *node = find_node(s, ref);
		if (!node || ret->n == QEMU_DISKS_MAX)
			continue;
		struct qemu_disk *d = &ret->d[ret->n++];
		*d = (struct qemu_disk){.aio = "threads"};
		snprintf(d->node_name, sizeof(d->node_name), "%s", ref);
		snprintf(d->device_id, sizeof(d->device_id), "%s", id);
		struct cache_opts c = {-1, -1, qemu_opt_bool(arg, "write-cache")};
		read_chain(s, node, &c, d);
		snprintf(d->cache, sizeof(d->cache), "%s", cache_mode(c));
	}
}

int parse_qemu_disks(const char *cmdline, size_t len, struct qemu_disks *ret)
{
	if (!len)
		return -EINVAL;
	const char **argv;
	size_t argc;
	struct scan *s = calloc(1, sizeof(*s));
	struct qemu_disks *out = calloc(1, sizeof(*out));
	if (!s || !out || cmdline_split(cmdline, len, &argv, &argc) < 0) {
		free(s);
		free(out);
		return -ENOMEM;
	}
	qemu_options_each(argv, argc, scan_option, s);
	for (size_t i = 0; i < s->ndrives; i++) {
		out->d[out->n] = (struct qemu_disk){.aio = "threads", .cache = "writeback"};
		drive_disk(s, i, &out->d[out->n]);
		out->n += out->d[out->n].drive[0] != '\0';
	}
	device_disks(s, out);
	*ret = *out;
	cmdline_split_free(argv);
	free(s);
	free(out);
	return 0;
}

const struct qemu_disk *qemu_disks_find(const struct qemu_disks *d, const char *device, const char *node_name,
					const char *qdev)
{
	/* "/machine/peripheral/ID/virtio-backend" or "ID": the device's id. */
	char id[64] = "";
	if (qdev && !strncmp(qdev, "/machine/peripheral/", 20))
		snprintf(id, sizeof(id), "%.*s", (int)strcspn(qdev + 20, "/"), qdev + 20);
	else if (qdev && qdev[0] != '/')
		snprintf(id, sizeof(id), "%s", qdev);
	for (size_t i = 0; i < d->n; i++) {
		const struct qemu_disk *k = &d->d[i];
		if ((device && device[0] && !strcmp(k->drive, device)) ||
		    (node_name && node_name[0] && !strcmp(k->node_name, node_name)) ||
		    (id[0] && !strcmp(k->device_id, id)))
			return k;
	}
	return NULL;
}

const struct qemu_disk *qemu_disks_find_file(const struct qemu_disks *d, const char *path)
{
	for (size_t i = 0; path && path[0] && i < d->n; i++)
		if (!strcmp(d->d[i].file, path))
			return &d->d[i];
	return NULL;
}
