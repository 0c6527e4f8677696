/*
 * hist.h - fixed-size log-linear latency histogram.
 *
 * Values are nanoseconds (uint64_t). The range [0, 2^64) is covered by
 * power-of-two groups, each split into DP_HIST_SUB linear sub-buckets:
 *
 *   value v            bucket index                      bucket width
 *   v < 128            v                                 1 ns
 *   v >= 128           s*64 + (v >> s), s = msb(v) - 6   2^s ns
 *
 *   e.g.  1 us = 1000 ns:  msb 9, s 3, index 3*64 + 125 = 317, [1000, 1008)
 *         1 ms:            msb 19, s 13, index 832+122 = 954, width 8.2 us
 *         60 s:            msb 35, s 29, index 1856+111 = 1967, width 0.54 s
 *
 * A bucket [lo, lo + 2^s) with lo >= 64 * 2^s is reported by its midpoint,
 * so any value read back (percentile) is within DP_HIST_REL_ERROR = 1/128
 * (0.79 %) of the true order statistic; below 128 ns buckets are exact.
 * Values at or above DP_HIST_MAX_NS (2^40 ns, about 18 minutes) are counted
 * in the last bucket and in `overflow`.
 *
 * Memory: DP_HIST_BUCKETS (2240) 64-bit counters = 17.5 KiB, held inline. No
 * function here allocates; recording is O(1). Not thread-safe: one writer.
 */
#ifndef DP_HIST_H
#define DP_HIST_H

#include <stdint.h>

#define DP_HIST_SUB_BITS 6
#define DP_HIST_SUB (1u << DP_HIST_SUB_BITS) /* 64 */
#define DP_HIST_MAX_NS (UINT64_C(1) << 40)
/* One past the index of 2^40 - 1: (40 - 6) * 64 + 64 = 2240. */
#define DP_HIST_BUCKETS ((40 - DP_HIST_SUB_BITS) * DP_HIST_SUB + DP_HIST_SUB)
#define DP_HIST_REL_ERROR (1.0 / 128.0)

typedef struct {
  uint64_t count;     /* values recorded */
  uint64_t overflow;  /* values >= DP_HIST_MAX_NS (also in the last bucket) */
  uint64_t min_ns;    /* exact; UINT64_MAX when count == 0 */
  uint64_t max_ns;    /* exact; 0 when count == 0 */
  long double sum_ns; /* exact up to 2^64 ns per value; for the mean */
  uint64_t buckets[DP_HIST_BUCKETS];
} dp_hist_t;

/* Empties h. Must be called before first use. */
void dp_hist_reset(dp_hist_t *h);

/* Records one value. */
void dp_hist_record(dp_hist_t *h, uint64_t ns);

/* Adds every count of src into dst (dst may already hold values). */
void dp_hist_merge(dp_hist_t *dst, const dp_hist_t *src);

/* Bucket arithmetic, pure: index of a value, and the [lo, hi) it covers. */
unsigned dp_hist_index(uint64_t ns);
uint64_t dp_hist_bucket_lo(unsigned index);
uint64_t dp_hist_bucket_hi(unsigned index);

/*
 * The q-quantile (0 < q <= 1; 0.99 for p99) in nanoseconds: the smallest
 * recorded value v such that at least ceil(q * count) values are <= v,
 * approximated by its bucket's midpoint, clamped to [min_ns, max_ns].
 * Returns 0 when the histogram is empty.
 */
uint64_t dp_hist_quantile(const dp_hist_t *h, double q);

/* Mean in nanoseconds; 0 when empty. */
double dp_hist_mean(const dp_hist_t *h);

#endif /* DP_HIST_H */
