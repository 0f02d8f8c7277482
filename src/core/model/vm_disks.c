#include "core/model/vm_disks.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/peer/qmp.h"
#include "parse/elements.h"
#include "parse/json.h"

double vm_disk_latency(double seconds, maybe_i64 ops)
{
	return ops.known && ops.v > 0 && !isnan(seconds) ? seconds / (double)ops.v : NAN;
}

static void disk_unknown(struct vm_disk *d)
{
	*d = (struct vm_disk){.read_bytes = UNKNOWN, .write_bytes = UNKNOWN, .read_ops = UNKNOWN, .write_ops = UNKNOWN,
			      .flush_ops = UNKNOWN, .read_seconds = NAN, .write_seconds = NAN, .flush_seconds = NAN};
}

/* The cache mode and AIO of the command line's disk, when one matched. */
static void disk_config(struct vm_disk *d, const struct qemu_disk *k)
{
	if (!k)
		return;
	snprintf(d->cache, sizeof(d->cache), "%s", k->cache);
	snprintf(d->aio, sizeof(d->aio), "%s", k->aio);
	if (!d->node_name[0])
		snprintf(d->node_name, sizeof(d->node_name), "%s", k->node_name);
}

static maybe_i64 stat_i64(const struct json_doc *doc, const struct json_value *stats, const char *key)
{
	int64_t v;
	const struct json_value *e = json_get(doc, stats, key);
	return e && json_as_i64(doc, e, &v) == 0 && v >= 0 ? MAYBE(v) : UNKNOWN;
}

static double stat_seconds(const struct json_doc *doc, const struct json_value *stats, const char *key)
{
	maybe_i64 ns = stat_i64(doc, stats, key);
	return ns.known ? (double)ns.v / 1e9 : NAN;
}

/* One query-blockstats entry: {"device": "disk0", "node-name": .., "qdev": .., "stats": {...}}. */
static void blockstats_entry(const struct json_doc *doc, const struct json_value *e, const struct qemu_disks *cmd,
			     struct vm_disk *d)
{
	char device[64] = "", node[64] = "", qdev[128] = "";
	const struct json_value *v;
	disk_unknown(d);
	if ((v = json_get(doc, e, "device")))
		json_as_string(doc, v, device, sizeof(device));
	if ((v = json_get(doc, e, "node-name")))
		json_as_string(doc, v, node, sizeof(node));
	if ((v = json_get(doc, e, "qdev")))
		json_as_string(doc, v, qdev, sizeof(qdev));
	const struct qemu_disk *k = cmd ? qemu_disks_find(cmd, device, node, qdev) : NULL;
	/* A -blockdev disk has no drive name: its device's id, as the command line gave it. */
	const char *name = device[0] ? device : k && k->device_id[0] ? k->device_id : node;
	snprintf(d->device, sizeof(d->device), "%.63s", name[0] ? name : qdev);
	if (node[0] != '#') /* "#block187": a name QEMU made up for a -drive's node, no one else's */
		snprintf(d->node_name, sizeof(d->node_name), "%s", node);
	disk_config(d, k);
	const struct json_value *s = json_get(doc, e, "stats");
	if (!s || s->type != JSON_OBJECT)
		return;
	d->read_bytes = stat_i64(doc, s, "rd_bytes");
	d->write_bytes = stat_i64(doc, s, "wr_bytes");
	d->read_ops = stat_i64(doc, s, "rd_operations");
	d->write_ops = stat_i64(doc, s, "wr_operations");
	d->flush_ops = stat_i64(doc, s, "flush_operations");
	d->read_seconds = stat_seconds(doc, s, "rd_total_time_ns");
	d->write_seconds = stat_seconds(doc, s, "wr_total_time_ns");
	d->flush_seconds = stat_seconds(doc, s, "flush_total_time_ns");
}

/* A VM with more disks than vmhost lists: the list is its first ones, and why says so. */
static void disks_left_out(struct vm_disks *d, size_t more)
{
	if (more)
		snprintf(d->why, sizeof(d->why), "%zu more disks not listed: vmhost lists %d a VM", more, VM_DISKS_MAX);
}

int vm_disks_from_blockstats(const struct json_doc *doc, const struct json_value *ret_array,
			     const struct qemu_disks *cmd, struct vm_disks *ret)
{
	if (!ret_array || ret_array->type != JSON_ARRAY)
		return -EBADMSG;
	struct vm_disks out = {.known = true, .source = "qmp"};
	size_t more = 0;
	for (const struct json_value *e = json_first(doc, ret_array); e; e = json_next(doc, ret_array, e))
		if (e->type == JSON_OBJECT && out.n < VM_DISKS_MAX)
			blockstats_entry(doc, e, cmd, &out.d[out.n++]);
		else if (e->type == JSON_OBJECT)
			more++;
	disks_left_out(&out, more);
	*ret = out;
	return 0;
}

/* "block.N.rest" → N and rest; false for any other field. */
static bool block_field(const char *field, size_t *ret_n, const char **ret_rest)
{
	if (strncmp(field, "block.", 6))
		return false;
	char *end;
	unsigned long n = strtoul(field + 6, &end, 10);
	if (end == field + 6 || *end != '.' || n >= VM_DISKS_MAX)
		return false;
	*ret_n = n;
	*ret_rest = end + 1;
	return true;
}

static void virt_param_into(const struct virt_param *p, const char *rest, struct vm_disk *d, const char **path)
{
	static const struct {
		const char *name;
		size_t offset;
	} counts[] = {
		{"rd.bytes", offsetof(struct vm_disk, read_bytes)}, {"wr.bytes", offsetof(struct vm_disk, write_bytes)},
		{"rd.reqs", offsetof(struct vm_disk, read_ops)},   {"wr.reqs", offsetof(struct vm_disk, write_ops)},
		{"fl.reqs", offsetof(struct vm_disk, flush_ops)},
	};
	for (size_t i = 0; i < ELEMENTSOF(counts); i++)
		if (!strcmp(rest, counts[i].name) && !p->s && p->i >= 0)
			*(maybe_i64 *)((char *)d + counts[i].offset) = MAYBE(p->i);
	if (!p->s && p->i >= 0 && !strcmp(rest, "rd.times"))
		d->read_seconds = (double)p->i / 1e9;
	else if (!p->s && p->i >= 0 && !strcmp(rest, "wr.times"))
		d->write_seconds = (double)p->i / 1e9;
	else if (!p->s && p->i >= 0 && !strcmp(rest, "fl.times"))
		d->flush_seconds = (double)p->i / 1e9;
	else if (p->s && !strcmp(rest, "name"))
		snprintf(d->device, sizeof(d->device), "%s", p->s);
	else if (p->s && !strcmp(rest, "path"))
		*path = p->s;
}

void vm_disks_from_virt(const struct virt_domain *dom, const struct qemu_disks *cmd, struct vm_disks *ret)
{
	struct vm_disks out = {.known = true, .source = "libvirt"};
	const char *paths[VM_DISKS_MAX] = {0};
	for (size_t i = 0; i < VM_DISKS_MAX; i++)
		disk_unknown(&out.d[i]);
	for (size_t i = 0; i < dom->nparams; i++) {
		size_t n;
		const char *rest;
		if (!block_field(dom->params[i].field, &n, &rest))
			continue;
		virt_param_into(&dom->params[i], rest, &out.d[n], &paths[n]);
		out.n = n + 1 > out.n ? n + 1 : out.n;
	}
	for (size_t i = 0; i < out.n; i++)
		disk_config(&out.d[i], cmd ? qemu_disks_find_file(cmd, paths[i]) : NULL);
	for (size_t i = 0; i < dom->nparams; i++)
		if (!strcmp(dom->params[i].field, "block.count") && !dom->params[i].s && dom->params[i].i > VM_DISKS_MAX)
			disks_left_out(&out, (size_t)dom->params[i].i - VM_DISKS_MAX);
	*ret = out;
}

void vm_disks_unread(const char *why, struct vm_disks *ret)
{
	*ret = (struct vm_disks){0};
	snprintf(ret->why, sizeof(ret->why), "%s", why);
}

void vm_disks_query(struct qmp *q, const struct qemu_disks *cmd, struct vm_disks *ret)
{
	struct json_doc doc = {0};
	const struct json_value *v;
	int r = qmp_call(q, "query-blockstats", NULL, &doc, &v);
	if (r < 0) {
		*ret = (struct vm_disks){0};
		snprintf(ret->why, sizeof(ret->why), "query-blockstats: %s",
			 r == -EREMOTEIO ? qmp_error_desc(q) : qmp_strerror(r));
		return;
	}
	if (vm_disks_from_blockstats(&doc, v, cmd, ret) < 0)
		vm_disks_unread("query-blockstats: the reply is not a list of devices", ret);
	json_free(&doc);
}
