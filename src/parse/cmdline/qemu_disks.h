/* A QEMU command line's disks and how their I/O reaches the host: the cache mode and AIO engine of
 * each -drive, -hda..-hdd/-cdrom, and each -device attached to a -blockdev node (QemuOpts or
 * libvirt's JSON, with the options a node inherits from its parent and the child it names). */
#ifndef VMHOST_PARSE_CMDLINE_QEMU_DISKS_H
#define VMHOST_PARSE_CMDLINE_QEMU_DISKS_H

#include <stddef.h>

#define QEMU_DISKS_MAX 32

struct qemu_disk {
	/* QEMU's name for the drive (query-blockstats "device"): -drive id=, or the name QEMU gives an
	 * unnamed one (virtio0, ide0-hd0, ide1-cd0, scsi0-hd0, pflash0); "" for a -blockdev disk. */
	char drive[64];
	char node_name[64]; /* -blockdev: the node the device attaches ("" for -drive) */
	char device_id[64]; /* the -device id that attaches it ("" none, or no id) */
	char file[256];     /* the image's file name (the last node's filename=), "" unknown */
	/* "writeback" (QEMU's default), "none", "writethrough", "directsync" or "unsafe"; with
	 * -blockdev from cache.direct and cache.no-flush, and the device's write-cache=off. */
	char cache[16];
	char aio[16];       /* "threads" (QEMU's default), "native" or "io_uring" */
};

struct qemu_disks {
	struct qemu_disk d[QEMU_DISKS_MAX];
	size_t n;
};

/* Parses a NUL-separated QEMU command line (as /proc/PID/cmdline). 0 (n may be 0), -EINVAL on an
 * empty buffer, -ENOMEM; disks past QEMU_DISKS_MAX are left out. *ret untouched on failure. */
int parse_qemu_disks(const char *cmdline, size_t len, struct qemu_disks *ret);

/* The disk whose name query-blockstats reports: its "device" (a -drive's name), else its
 * "node-name", else its "qdev" ("/machine/peripheral/ID/virtio-backend", or "ID"). NULL none. */
const struct qemu_disk *qemu_disks_find(const struct qemu_disks *d, const char *device, const char *node_name,
					const char *qdev);

/* The disk on the image file path (libvirt's block.N.path). NULL none. */
const struct qemu_disk *qemu_disks_find_file(const struct qemu_disks *d, const char *path);

#endif
