/* What KSM saves now against the sharing map (core/share/share_saved.h). */
#include "core/share/share_saved.h"

maybe_i64 share_saved_now_bytes(const struct share_map *m, const struct host *h)
{
	const maybe_i64 sharing = h->ksm.pages_sharing;
	if (!h->ksm.present || !sharing.known)
		return UNKNOWN;
	return MAYBE((sharing.v + m->zero_mapped_pages) * h->page_size_bytes);
}
