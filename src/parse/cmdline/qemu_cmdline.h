/* A QEMU command line read for what vmhost needs to know of its guest (struct vm_config: name,
 * uuid, guest RAM and its blocks, shared or huge-page RAM, KSM's mem-merge, nested VMX/SVM, most
 * vCPUs, the QMP monitor, the balloon). Its option syntax is parse/cmdline/qemu_opts.h's;
 * parse/cmdline/vmcmd.h calls it for a QEMU argv[0]. */
#ifndef VMHOST_PARSE_CMDLINE_QEMU_CMDLINE_H
#define VMHOST_PARSE_CMDLINE_QEMU_CMDLINE_H

#include <stddef.h>

#include "parse/cmdline/vmcmd.h"

/* Fills ret from a QEMU argv (argv[0] the program) over what parse_vm_cmdline set (vmm, an
 * unknown RAM size): ret->guest_ram_bytes is unknown when a size cannot be read, QEMU's 128 MiB
 * when nothing says. 0, or -ENOMEM. */
int qemu_cmdline_config(const char *const *argv, size_t argc, struct vm_config *ret);

#endif
