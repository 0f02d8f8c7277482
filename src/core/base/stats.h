/* The few statistics every experiment needs, once: sorting, medians that skip unknowns. */
#ifndef VMHOST_CORE_STATS_H
#define VMHOST_CORE_STATS_H

#include <stddef.h>

/* qsort comparator: ascending, NaN last. */
int cmp_double(const void *a, const void *b);
/* Sorts ascending, NaN last. */
void sort_doubles(double *v, size_t n);
/* The median of the finite values (v is sorted in place); NaN when there is none. */
double median(double *v, size_t n);
/* The median where NaN counts as larger than any value ("did not get there"): NaN when
 * more than half of the values are NaN (v is sorted in place). */
double median_nan_high(double *v, size_t n);
/* The same on a copy (v untouched); NaN also when the copy cannot be made. */
double median_of(const double *v, size_t n);

/* qsort comparators: ascending. */
int cmp_u64(const void *a, const void *b);
int cmp_unsigned(const void *a, const void *b);
/* Sorts n elements of size bytes with cmp and drops the repeats; returns how many are left. */
size_t sort_unique(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
