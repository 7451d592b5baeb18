/* hist.h: a log-linear latency histogram (HDR-like) with percentiles. */
#ifndef KLAB_HIST_H
#define KLAB_HIST_H

#include <stdint.h>

/*
 * Values are unsigned integers (the generators record nanoseconds). Values
 * below HIST_SUB each get their own bucket; above that, every power of two
 * [2^m, 2^(m+1)) is split into HIST_SUB equal linear sub-buckets, so a
 * bucket is never wider than 1/HIST_SUB (6.25%) of its lower bound. The
 * whole uint64_t range fits in HIST_BUCKETS fixed buckets: recording is an
 * index computation and an increment, with no allocation.
 */
#define HIST_SUB_BITS 4
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct hist {
	uint64_t count[HIST_BUCKETS];
	uint64_t n;		/* values recorded */
	uint64_t sum;		/* their sum (saturates at UINT64_MAX) */
	uint64_t min, max;	/* exact extremes (min is UINT64_MAX when empty) */
};

/* Empty the histogram. */
void hist_init(struct hist *h);
/* Bucket index of a value (0 .. HIST_BUCKETS-1). */
unsigned hist_index(uint64_t v);
/* The value range [*lo, *hi) of bucket `idx`; hi saturates at UINT64_MAX. */
void hist_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi);
/* Record one value. */
void hist_add(struct hist *h, uint64_t v);
/* Add every count of `src` into `dst`. */
void hist_merge(struct hist *dst, const struct hist *src);
/* Arithmetic mean of the recorded values; 0 when empty. */
double hist_mean(const struct hist *h);
/*
 * The p-th percentile (0 < p <= 100) by nearest rank: the bucket holding
 * the ceil(p/100 * n)-th smallest value, reported as its midpoint (its
 * exact value for one-wide buckets) and clamped to [min, max]. 0 when empty.
 */
double hist_percentile(const struct hist *h, double p);

#endif
