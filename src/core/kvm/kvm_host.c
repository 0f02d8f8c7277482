#include "core/kvm/kvm_host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kvm_vendor_name(enum kvm_vendor vendor)
{
	switch (vendor) {
	case KVM_VENDOR_INTEL: return "intel";
	case KVM_VENDOR_AMD: return "amd";
	case KVM_VENDOR_OTHER: return "other";
	case KVM_VENDOR_NONE: break;
	}
	return "none";
}

/* Every file of <sys>/module/<module>/parameters; none (0) when the directory is missing. */
static int read_params(const struct io_root *root, const char *module, struct kvm_param **ret, size_t *ret_n)
{
	char **names;
	size_t n;
	*ret = NULL;
	*ret_n = 0;
	int r = io_list_dir(root, IO_SYS, &names, &n, "module/%s/parameters", module);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || n == 0) {
		if (r == 0)
			io_free_names(names, n);
		return 0;
	}
	struct kvm_param *params = calloc(n, sizeof(*params));
	if (!params) {
		io_free_names(names, n);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		struct kvm_param *p = &params[k];
		if (snprintf(p->name, sizeof(p->name), "%s", names[i]) >= (int)sizeof(p->name))
			continue;
		ssize_t len = io_read(root, IO_SYS, p->value, sizeof(p->value), "module/%s/parameters/%s", module, names[i]);
		if (len < 0) {
			p->error = (int)len;
			p->value[0] = '\0';
		} else {
			while (len > 0 && (p->value[len - 1] == '\n' || p->value[len - 1] == ' '))
				p->value[--len] = '\0';
		}
		k++;
	}
	io_free_names(names, n);
	*ret = params;
	*ret_n = k;
	return 0;
}

/* The vendor module: kvm_intel or kvm_amd when loaded, else the first other kvm_* module. */
static void find_module(const struct io_root *root, struct kvm_host *h)
{
	if (io_exists(root, IO_SYS, "module/kvm_intel")) {
		snprintf(h->module, sizeof(h->module), "kvm_intel");
		h->vendor = KVM_VENDOR_INTEL;
		return;
	}
	if (io_exists(root, IO_SYS, "module/kvm_amd")) {
		snprintf(h->module, sizeof(h->module), "kvm_amd");
		h->vendor = KVM_VENDOR_AMD;
		return;
	}
	snprintf(h->module, sizeof(h->module), "kvm");
	h->vendor = KVM_VENDOR_NONE;
	char **names;
	size_t n;
	if (io_list_dir(root, IO_SYS, &names, &n, "module") < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(names[i], "kvm_", 4) && names[i][4] &&
		    snprintf(h->module, sizeof(h->module), "%s", names[i]) < (int)sizeof(h->module)) {
			h->vendor = KVM_VENDOR_OTHER;
			break;
		}
	}
	io_free_names(names, n);
}

int kvm_host_read(const struct io_root *root, struct kvm_host *ret)
{
	struct kvm_host h = {0};
	*ret = h;
	if (!io_exists(root, IO_SYS, "module/kvm"))
		return 0;
	h.loaded = true;
	h.device = io_exists(root, IO_SYS, "class/misc/kvm");
	find_module(root, &h);
	int r = read_params(root, "kvm", &h.kvm_params, &h.nkvm_params);
	if (r == 0 && h.vendor != KVM_VENDOR_NONE)
		r = read_params(root, h.module, &h.module_params, &h.nmodule_params);
	if (r < 0) {
		kvm_host_free(&h);
		return r;
	}
	*ret = h;
	return 0;
}

void kvm_host_free(struct kvm_host *h)
{
	if (!h)
		return;
	free(h->module_params);
	free(h->kvm_params);
	h->module_params = h->kvm_params = NULL;
	h->nmodule_params = h->nkvm_params = 0;
}

static const char *find_param(const struct kvm_param *p, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(p[i].name, name))
			return p[i].error ? NULL : p[i].value;
	return NULL;
}

const char *kvm_host_param(const struct kvm_host *h, const char *name)
{
	const char *v = find_param(h->module_params, h->nmodule_params, name);
	return v ? v : find_param(h->kvm_params, h->nkvm_params, name);
}
