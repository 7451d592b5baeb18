/* hist.c: log-linear histogram buckets and nearest-rank percentiles. */
#include <math.h>
#include <string.h>

#include "hist.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned hist_index(uint64_t v)
{
	unsigned m, shift;

	if (v < HIST_SUB)
		return (unsigned)v;
	m = 63u - (unsigned)__builtin_clzll(v);	/* v in [2^m, 2^(m+1)) */
	shift = m - HIST_SUB_BITS;
	return (m - HIST_SUB_BITS + 1) * HIST_SUB + (unsigned)((v >> shift) - HIST_SUB);
}

void hist_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi)
{
	unsigned g = idx / HIST_SUB, sub = idx % HIST_SUB, shift;
	uint64_t l, w;

	if (g == 0) {
		*lo = idx;
		*hi = (uint64_t)idx + 1;
		return;
	}
	shift = g - 1;
	l = (uint64_t)(HIST_SUB + sub) << shift;
	w = (uint64_t)1 << shift;
	*lo = l;
	*hi = l + w < l ? UINT64_MAX : l + w;	/* the last bucket ends at 2^64 */
}

void hist_add(struct hist *h, uint64_t v)
{
	h->count[hist_index(v)]++;
	h->n++;
	h->sum = h->sum + v < h->sum ? UINT64_MAX : h->sum + v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	unsigned i;

	for (i = 0; i < HIST_BUCKETS; i++)
		dst->count[i] += src->count[i];
	dst->n += src->n;
	dst->sum = dst->sum + src->sum < dst->sum ? UINT64_MAX : dst->sum + src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double hist_mean(const struct hist *h)
{
	return h->n ? (double)h->sum / (double)h->n : 0.0;
}

double hist_percentile(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, lo, hi;
	double v;
	unsigned i;

	if (!h->n)
		return 0.0;
	if (p <= 0)
		return (double)h->min;
	if (p >= 100)
		return (double)h->max;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->n);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->count[i];
		if (seen >= rank)
			break;
	}
	if (i == HIST_BUCKETS)
		return (double)h->max;
	hist_bucket_range(i, &lo, &hi);
	v = hi - lo == 1 ? (double)lo : (double)lo + (double)(hi - lo) / 2.0;
	if (v < (double)h->min)
		v = (double)h->min;
	if (v > (double)h->max)
		v = (double)h->max;
	return v;
}
