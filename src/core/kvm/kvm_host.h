/* The host's KVM settings: which vendor module is loaded and every parameter it and kvm expose in
 * <sys>/module/<module>/parameters (ept, vpid, enable_apicv, nested, halt_poll_ns, ...).
 *
 *   struct kvm_host h;
 *   kvm_host_read(root, &h);   h.loaded false: KVM not loaded (not an error)
 *   kvm_host_param(&h, "ept")  "Y", or NULL
 *   kvm_host_free(&h);
 */
#ifndef VMHOST_CORE_KVM_HOST_H
#define VMHOST_CORE_KVM_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "io/io.h"

enum kvm_vendor {
	KVM_VENDOR_NONE,  /* kvm alone (built-in on arm64, or no vendor module loaded) */
	KVM_VENDOR_INTEL, /* kvm_intel: VMX exit reasons */
	KVM_VENDOR_AMD,   /* kvm_amd: SVM exit reasons */
	KVM_VENDOR_OTHER, /* another kvm_* module (kvm_pvm, kvm_hv ...) */
};

struct kvm_param {
	char name[64];
	char value[128]; /* the file's content without its newline; "" when unreadable */
	int error;       /* 0, or the negative errno that reading it gave (write-only parameters) */
};

struct kvm_host {
	bool loaded;     /* <sys>/module/kvm exists */
	char module[64]; /* "kvm_intel", "kvm_amd", "kvm_pvm" ...; "kvm" when no vendor module; "" */
	enum kvm_vendor vendor;
	bool device;     /* <sys>/class/misc/kvm exists: /dev/kvm is registered */
	struct kvm_param *module_params; /* the vendor module's, sorted by name */
	size_t nmodule_params;
	struct kvm_param *kvm_params;    /* kvm's own (halt_poll_ns ...), sorted by name */
	size_t nkvm_params;
};

/* Reads the settings. Returns 0 (also when KVM is not loaded) or -ENOMEM; *ret is always set. */
int kvm_host_read(const struct io_root *root, struct kvm_host *ret);
void kvm_host_free(struct kvm_host *h); /* accepts a zeroed struct */

/* A parameter's value: the vendor module's first, then kvm's; NULL when absent or unreadable. */
const char *kvm_host_param(const struct kvm_host *h, const char *name);

const char *kvm_vendor_name(enum kvm_vendor vendor); /* "intel", "amd", "other", "none" */

#endif
