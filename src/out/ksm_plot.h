/* Small SVG charts for the KSM commands (sweep: scan time vs CPU; bench: savings over time).
 * A private minimal writer until the shared out/svg lands; same output either way. */
#ifndef VMHOST_OUT_KSM_PLOT_H
#define VMHOST_OUT_KSM_PLOT_H

#include <stddef.h>
#include <stdio.h>

struct plot_point {
	double x, y;
	const char *label; /* may be NULL */
};

struct plot_series {
	const char *name;
	const double *x, *y;
	size_t n;
};

/* Both return 0 or a negative errno (write error). Non-finite values are left out. */
int plot_scatter_svg(FILE *f, const char *title, const char *xlabel, const char *ylabel,
		     const struct plot_point *pts, size_t n);
int plot_lines_svg(FILE *f, const char *title, const char *xlabel, const char *ylabel,
		   const struct plot_series *series, size_t nseries);

#endif
