/*
 * fleetstat.h - the statistics behind `diskprobe fleet` and `diskprobe
 * compare`, collectd-free and reader-free: the caller has read the values
 * (an RRD tree, recorded rounds) and hands over plain arrays.
 *
 * Two questions:
 *
 *   1. Ranking (dp_fleetstat_rank): how fast is each disk against the other
 *      disks of its class? Per class and figure the median over the class's
 *      rows, each row's slowdown against it (>1 = worse: latency over the
 *      median, or the median's IOPS and throughput over the row's), and the
 *      rows sorted worst first. A median has a 50 % breakdown point: up to
 *      half the class may be slow without moving the reference.
 *
 *   2. Comparison (dp_fleetstat_compare): is side B's figure different from
 *      side A's, or is the difference noise? The ratio of one summary
 *      (median, mean, min or max of the per-round values) B/A with a
 *      confidence interval from a circular block bootstrap: rounds of a
 *      probe on a shared disk are autocorrelated (a busy neighbour lasts
 *      minutes), so resampling single rounds would treat a minute-long
 *      episode as many independent draws and give too narrow an interval.
 *      Blocks of ceil(n^(1/3)) consecutive rounds keep that dependence
 *      (Hall, Horowitz and Jing 1995: the block length of that order is
 *      right for variance and two-sided intervals); circular so that the
 *      first and last rounds are drawn as often as the others. A and B are
 *      resampled independently (two disks, or two times). The percentile
 *      interval of the resampled ratios is taken in log space, where a
 *      ratio is symmetric. A parametric log-t interval would need
 *      independent rounds and a lognormal shape; the bootstrap needs
 *      neither and works for the median, min and max alike (for min and
 *      max it is only a rough guide: the bootstrap of an extreme is known
 *      to be too narrow; the table says so).
 *
 *      The verdict is "different" when the whole interval lies beyond the
 *      margin (default 10 %: above 1.10 or below 1/1.10), "within noise"
 *      otherwise, and "too few rounds" when a side has fewer than
 *      min_rounds finite values. The margin keeps a statistically clear but
 *      practically small difference (two disks of one model, 3 % apart over
 *      a thousand rounds) from being called different.
 *
 * Values: any unit; NaN and infinities are left out by the caller
 * (dp_fleetstat_finite). Deterministic: the bootstrap draws from a fixed
 * seed (conf), so one input gives one interval. Thread-safe (no state);
 * dp_fleetstat_compare allocates scratch and frees it before returning.
 */
#ifndef DP_FLEETSTAT_H
#define DP_FLEETSTAT_H

#include <stddef.h>
#include <stdint.h>

/* The summary of one side's per-round values. */
typedef enum {
  DP_FLEETSTAT_MEDIAN,
  DP_FLEETSTAT_MEAN,
  DP_FLEETSTAT_MIN,
  DP_FLEETSTAT_MAX
} dp_fleetstat_kind_t;

typedef enum {
  DP_FLEETSTAT_WITHIN_NOISE,
  DP_FLEETSTAT_DIFFERENT,
  DP_FLEETSTAT_TOO_FEW
} dp_fleetstat_verdict_t;

typedef struct {
  unsigned resamples; /* bootstrap resamples (2000) */
  uint64_t seed;      /* the resampling's seed (fixed: 0x5eed) */
  double level;       /* the interval's coverage (0.95) */
  double margin;      /* "different" beyond this ratio either way (1.10) */
  size_t min_rounds;  /* finite values a side needs (5) */
} dp_fleetstat_conf_t;

/* The defaults above. */
void dp_fleetstat_conf_init(dp_fleetstat_conf_t *c);

/* One comparison's result. */
typedef struct {
  double a, b;    /* each side's summary; NaN: no value */
  double ratio;   /* b / a; NaN when either is missing or a is 0 */
  double lo, hi;  /* the interval of the ratio; NaN when too few */
  size_t na, nb;  /* finite values per side */
  size_t block_a; /* block lengths used, rounds */
  size_t block_b;
  dp_fleetstat_verdict_t verdict;
} dp_fleetstat_ratio_t;

/* Moves x's finite values to its front, in order; returns their count. */
size_t dp_fleetstat_finite(double *x, size_t n);

/* The summary of x[0..n) (finite values; x is reordered for the median,
 * which of an even count is the mean of the middle two). NaN when n is 0. */
double dp_fleetstat_summary(dp_fleetstat_kind_t k, double *x, size_t n);

/* Compares b against a (finite values, not changed) with c's bootstrap
 * (NULL: the defaults). 0 with *out filled (a side with too few values
 * gives verdict DP_FLEETSTAT_TOO_FEW and NaN bounds; its summary and the
 * ratio are still given when it has any); -EINVAL for a bad kind or conf
 * (resamples < 100, level outside (0.5, 1), margin < 1); -ENOMEM. */
int dp_fleetstat_compare(const dp_fleetstat_conf_t *c, dp_fleetstat_kind_t k,
                         const double *a, size_t na, const double *b, size_t nb,
                         dp_fleetstat_ratio_t *out);

/* "within noise", "different", "too few rounds". */
const char *dp_fleetstat_verdict_name(dp_fleetstat_verdict_t v);

/* ---- ranking against a class -------------------------------------------- */

/* The figures a disk is ranked by. */
typedef enum {
  DP_FLEETSTAT_QD1_P50_S, /* randread-qd1 p50 latency, s: lower better */
  DP_FLEETSTAT_QD32_IOPS, /* randread-qd32 I/O/s: higher better */
  DP_FLEETSTAT_SEQ_BPS,   /* seqread bytes/s: higher better */
  DP_FLEETSTAT_NFIGURES
} dp_fleetstat_figure_t;

/* The figure's short name: "qd1_p50_s", "qd32_iops", "seq_bytes_per_s". */
const char *dp_fleetstat_figure_name(dp_fleetstat_figure_t f);

/* One ranked row (a target on a disk). The caller fills cls, fig and id;
 * dp_fleetstat_rank fills the rest. */
typedef struct {
  const char *cls;                        /* the disk's class (not owned) */
  size_t id;                              /* the caller's index */
  double fig[DP_FLEETSTAT_NFIGURES];      /* NaN: not measured */
  double median[DP_FLEETSTAT_NFIGURES];   /* the class's; NaN: none */
  double slowdown[DP_FLEETSTAT_NFIGURES]; /* >1 worse than the median */
  double worst;   /* the largest slowdown; NaN when none */
  size_t class_n; /* rows in the class */
} dp_fleetstat_row_t;

/* Fills every row's class medians, slowdowns, worst and class_n, then
 * sorts rows worst first (rows without a slowdown last; ties by class,
 * then id). 0, or -ENOMEM (rows unchanged). */
int dp_fleetstat_rank(dp_fleetstat_row_t *rows, size_t n);

#endif /* DP_FLEETSTAT_H */
