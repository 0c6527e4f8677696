/* hist.c - log-linear latency histogram; see hist.h for the layout. */
#include "hist.h"

#include <math.h>
#include <string.h>

void dp_hist_reset(dp_hist_t *h) {
  memset(h, 0, sizeof(*h));
  h->min_ns = UINT64_MAX;
}

unsigned dp_hist_index(uint64_t ns) {
  if (ns < 2 * DP_HIST_SUB)
    return (unsigned)ns;
  if (ns >= DP_HIST_MAX_NS)
    return DP_HIST_BUCKETS - 1;
  unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
  unsigned s = msb - DP_HIST_SUB_BITS;
  return s * DP_HIST_SUB + (unsigned)(ns >> s);
}

uint64_t dp_hist_bucket_lo(unsigned index) {
  if (index < 2 * DP_HIST_SUB)
    return index;
  unsigned s = index / DP_HIST_SUB - 1;
  uint64_t m = index % DP_HIST_SUB + DP_HIST_SUB;
  return m << s;
}

uint64_t dp_hist_bucket_hi(unsigned index) {
  if (index < 2 * DP_HIST_SUB)
    return (uint64_t)index + 1;
  unsigned s = index / DP_HIST_SUB - 1;
  return dp_hist_bucket_lo(index) + (UINT64_C(1) << s);
}

void dp_hist_record(dp_hist_t *h, uint64_t ns) {
  h->buckets[dp_hist_index(ns)]++;
  h->count++;
  if (ns >= DP_HIST_MAX_NS)
    h->overflow++;
  if (ns < h->min_ns)
    h->min_ns = ns;
  if (ns > h->max_ns)
    h->max_ns = ns;
  h->sum_ns += (long double)ns;
}

void dp_hist_merge(dp_hist_t *dst, const dp_hist_t *src) {
  if (src->count == 0)
    return;
  for (unsigned i = 0; i < DP_HIST_BUCKETS; i++)
    dst->buckets[i] += src->buckets[i];
  dst->count += src->count;
  dst->overflow += src->overflow;
  dst->sum_ns += src->sum_ns;
  if (src->min_ns < dst->min_ns)
    dst->min_ns = src->min_ns;
  if (src->max_ns > dst->max_ns)
    dst->max_ns = src->max_ns;
}

uint64_t dp_hist_quantile(const dp_hist_t *h, double q) {
  if (h->count == 0)
    return 0;
  if (q <= 0)
    return h->min_ns;
  if (q >= 1)
    return h->max_ns;
  /* rank: how many values must be <= the answer (1-based, at least 1). */
  uint64_t rank = (uint64_t)ceil(q * (double)h->count);
  if (rank < 1)
    rank = 1;
  uint64_t seen = 0;
  unsigned i = 0;
  for (; i < DP_HIST_BUCKETS; i++) {
    seen += h->buckets[i];
    if (seen >= rank)
      break;
  }
  uint64_t lo = dp_hist_bucket_lo(i), hi = dp_hist_bucket_hi(i);
  uint64_t v = lo + (hi - lo) / 2;
  if (v < h->min_ns)
    v = h->min_ns;
  if (v > h->max_ns)
    v = h->max_ns;
  return v;
}

double dp_hist_mean(const dp_hist_t *h) {
  if (h->count == 0)
    return 0;
  return (double)(h->sum_ns / (long double)h->count);
}
