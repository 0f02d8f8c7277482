#include "core/base/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return a < b ? -1 : a > b;
}

void sort_doubles(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_double);
}

double median(double *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) /* finite values first, in place */
		if (isfinite(v[i])) {
			double t = v[k];
			v[k++] = v[i];
			v[i] = t;
		}
	if (!k)
		return NAN;
	sort_doubles(v, k);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

double median_nan_high(double *v, size_t n)
{
	if (!n)
		return NAN;
	sort_doubles(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; /* NaN + x is NaN */
}

double median_of(const double *v, size_t n)
{
	double *tmp = n ? malloc(n * sizeof(*v)) : NULL;
	if (!tmp)
		return NAN;
	memcpy(tmp, v, n * sizeof(*v));
	double m = median(tmp, n);
	free(tmp);
	return m;
}

int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

int cmp_unsigned(const void *pa, const void *pb)
{
	unsigned a = *(const unsigned *)pa, b = *(const unsigned *)pb;
	return a < b ? -1 : a > b;
}

size_t sort_unique(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n < 2)
		return n;
	qsort(v, n, size, cmp);
	char *p = v;
	size_t w = 1;
	for (size_t i = 1; i < n; i++)
		if (cmp(p + (w - 1) * size, p + i * size)) {
			if (w != i)
				memcpy(p + w * size, p + i * size, size);
			w++;
		}
	return w;
}
