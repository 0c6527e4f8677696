/* fleetstat.c - the statistics of fleetstat.h. */
#include "fleetstat.h"

#include "rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void dp_fleetstat_conf_init(dp_fleetstat_conf_t *c) {
  c->resamples = 2000;
  c->seed = 0x5eed;
  c->level = 0.95;
  c->margin = 1.10;
  c->min_rounds = 5;
}

size_t dp_fleetstat_finite(double *x, size_t n) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(x[i]))
      x[m++] = x[i];
  return m;
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

static double median_sorted(const double *x, size_t n) {
  return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

double dp_fleetstat_summary(dp_fleetstat_kind_t k, double *x, size_t n) {
  if (n == 0)
    return NAN;
  double s = x[0];
  switch (k) {
  case DP_FLEETSTAT_MEDIAN:
    qsort(x, n, sizeof(*x), cmp_double);
    return median_sorted(x, n);
  case DP_FLEETSTAT_MEAN:
    s = 0;
    for (size_t i = 0; i < n; i++)
      s += x[i];
    return s / (double)n;
  case DP_FLEETSTAT_MIN:
    for (size_t i = 1; i < n; i++)
      s = x[i] < s ? x[i] : s;
    return s;
  case DP_FLEETSTAT_MAX:
    for (size_t i = 1; i < n; i++)
      s = x[i] > s ? x[i] : s;
    return s;
  }
  return NAN;
}

/* The block length for n rounds: ceil(n^(1/3)), at least 1. */
static size_t block_len(size_t n) {
  /* less a hair: cbrt(216) is 6.000000000000001 */
  size_t l = (size_t)ceil(cbrt((double)n) - 1e-9);
  return l < 1 ? 1 : l;
}

/* A uniform index below n. */
static size_t draw(uint64_t *s, size_t n) {
  return (size_t)(dp_rng_next(s) % (uint64_t)n);
}

/* One circular block resample of x (n values, blocks of l) into out. */
static void resample(const double *x, size_t n, size_t l, double *out,
                     uint64_t *s) {
  for (size_t i = 0; i < n;) {
    size_t start = draw(s, n);
    for (size_t j = 0; j < l && i < n; j++, i++)
      out[i] = x[(start + j) % n];
  }
}

/* The q-quantile of sorted x (linear between order statistics). */
static double quantile_sorted(const double *x, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t i = (size_t)floor(pos);
  if (i + 1 >= n)
    return x[n - 1];
  return x[i] + (pos - (double)i) * (x[i + 1] - x[i]);
}

static dp_fleetstat_verdict_t judge(double lo, double hi, double margin) {
  return lo > margin || hi < 1 / margin ? DP_FLEETSTAT_DIFFERENT
                                        : DP_FLEETSTAT_WITHIN_NOISE;
}

/* The bootstrap interval of b/a into out->lo, out->hi. 0 or -ENOMEM. */
static int bootstrap(const dp_fleetstat_conf_t *c, dp_fleetstat_kind_t k,
                     const double *a, size_t na, const double *b, size_t nb,
                     dp_fleetstat_ratio_t *out) {
  double *ra = malloc(na * sizeof(*ra)), *rb = malloc(nb * sizeof(*rb));
  double *lr = malloc(c->resamples * sizeof(*lr));
  if (ra == NULL || rb == NULL || lr == NULL) {
    free(ra);
    free(rb);
    free(lr);
    return -ENOMEM;
  }
  uint64_t s = c->seed;
  size_t m = 0;
  for (unsigned r = 0; r < c->resamples; r++) {
    resample(a, na, out->block_a, ra, &s);
    resample(b, nb, out->block_b, rb, &s);
    double sa = dp_fleetstat_summary(k, ra, na);
    double sb = dp_fleetstat_summary(k, rb, nb);
    if (sa > 0 && sb > 0)
      lr[m++] = log(sb / sa);
  }
  if (m > 0) {
    qsort(lr, m, sizeof(*lr), cmp_double);
    double tail = (1 - c->level) / 2;
    out->lo = exp(quantile_sorted(lr, m, tail));
    out->hi = exp(quantile_sorted(lr, m, 1 - tail));
  }
  free(ra);
  free(rb);
  free(lr);
  return 0;
}

int dp_fleetstat_compare(const dp_fleetstat_conf_t *c, dp_fleetstat_kind_t k,
                         const double *a, size_t na, const double *b, size_t nb,
                         dp_fleetstat_ratio_t *out) {
  dp_fleetstat_conf_t def;
  if (c == NULL) {
    dp_fleetstat_conf_init(&def);
    c = &def;
  }
  if ((unsigned)k > DP_FLEETSTAT_MAX || c->resamples < 100 ||
      !(c->level > 0.5 && c->level < 1) || !(c->margin >= 1))
    return -EINVAL;
  out->na = na;
  out->nb = nb;
  out->block_a = block_len(na);
  out->block_b = block_len(nb);
  out->lo = out->hi = NAN;
  double *sa = malloc((na + nb + 1) * sizeof(*sa));
  if (sa == NULL)
    return -ENOMEM;
  memcpy(sa, a, na * sizeof(*a));
  out->a = dp_fleetstat_summary(k, sa, na);
  memcpy(sa, b, nb * sizeof(*b));
  out->b = dp_fleetstat_summary(k, sa, nb);
  free(sa);
  out->ratio = out->a != 0 ? out->b / out->a : NAN;
  if (na < c->min_rounds || nb < c->min_rounds || !(out->a > 0) ||
      !(out->b > 0)) {
    out->verdict = DP_FLEETSTAT_TOO_FEW;
    return 0;
  }
  int e = bootstrap(c, k, a, na, b, nb, out);
  if (e != 0)
    return e;
  out->verdict = isnan(out->lo) ? DP_FLEETSTAT_TOO_FEW
                                : judge(out->lo, out->hi, c->margin);
  return 0;
}

const char *dp_fleetstat_verdict_name(dp_fleetstat_verdict_t v) {
  switch (v) {
  case DP_FLEETSTAT_WITHIN_NOISE:
    return "within noise";
  case DP_FLEETSTAT_DIFFERENT:
    return "different";
  case DP_FLEETSTAT_TOO_FEW:
    return "too few rounds";
  }
  return "?";
}

/* ---- ranking ------------------------------------------------------------- */

const char *dp_fleetstat_figure_name(dp_fleetstat_figure_t f) {
  static const char *const names[DP_FLEETSTAT_NFIGURES] = {
      "qd1_p50_s", "qd32_iops", "seq_bytes_per_s"};
  return (unsigned)f < DP_FLEETSTAT_NFIGURES ? names[f] : "?";
}

/* Latency grows when a disk is slower; IOPS and throughput shrink. */
static double slowdown(dp_fleetstat_figure_t f, double v, double median) {
  if (!(v > 0) || !(median > 0))
    return NAN;
  return f == DP_FLEETSTAT_QD1_P50_S ? v / median : median / v;
}

/* By class, then id. */
static int cmp_class(const void *pa, const void *pb) {
  const dp_fleetstat_row_t *a = pa, *b = pb;
  int c = strcmp(a->cls, b->cls);
  return c != 0 ? c : (a->id > b->id) - (a->id < b->id);
}

static int cmp_rows(const void *pa, const void *pb) {
  const dp_fleetstat_row_t *a = pa, *b = pb;
  int na = isnan(a->worst), nb = isnan(b->worst);
  if (na != nb)
    return na - nb;
  if (!na && a->worst != b->worst)
    return a->worst < b->worst ? 1 : -1;
  return cmp_class(pa, pb);
}

/* The medians of one class, rows[0..n), into each of its rows. */
static void class_medians(dp_fleetstat_row_t *rows, size_t n, double *scratch) {
  for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++) {
    size_t m = 0;
    for (size_t j = 0; j < n; j++)
      if (isfinite(rows[j].fig[f]))
        scratch[m++] = rows[j].fig[f];
    double med = dp_fleetstat_summary(DP_FLEETSTAT_MEDIAN, scratch, m);
    for (size_t j = 0; j < n; j++) {
      rows[j].median[f] = med;
      rows[j].class_n = n;
    }
  }
}

int dp_fleetstat_rank(dp_fleetstat_row_t *rows, size_t n) {
  if (n == 0)
    return 0;
  double *scratch = malloc(n * sizeof(*scratch));
  if (scratch == NULL)
    return -ENOMEM;
  /* a class's rows next to each other: O(n log n) for a fleet of 10,000 */
  qsort(rows, n, sizeof(*rows), cmp_class);
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && strcmp(rows[j].cls, rows[i].cls) == 0; j++)
      ;
    class_medians(rows + i, j - i, scratch);
  }
  free(scratch);
  for (size_t i = 0; i < n; i++) {
    dp_fleetstat_row_t *r = &rows[i];
    r->worst = NAN;
    for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++) {
      r->slowdown[f] =
          slowdown((dp_fleetstat_figure_t)f, r->fig[f], r->median[f]);
      if (!(r->slowdown[f] <= r->worst))
        r->worst = isnan(r->slowdown[f]) ? r->worst : r->slowdown[f];
    }
  }
  qsort(rows, n, sizeof(*rows), cmp_rows);
  return 0;
}
