/* test_fleetstat.c - the fleet statistics (fleetstat.h) on known data: the
 * summaries, the block-bootstrap interval of a ratio and its verdict both
 * ways, and the ranking of disks against their class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fleetstat.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |seen - want| <= eps, saying both when not. */
#define assert_near(seen, want, eps)                                           \
  do {                                                                         \
    double s_ = (seen), w_ = (want);                                           \
    if (!(fabs(s_ - w_) <= (eps)))                                             \
      fail_msg("%s = %.17g, want %.17g", #seen, s_, w_);                       \
  } while (0)

/* Deterministic noise: an LCG, uniform in (0, 1). */
static double unif(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return ((*s >> 11) + 0.5) / 9007199254740992.0;
}

/* n rounds around level: lognormal-ish noise of about +-sigma, with a slow
 * autocorrelated swing (an AR(1) of coefficient 0.8) as on a shared disk. */
static void rounds(double *x, size_t n, double level, double sigma,
                   uint64_t seed) {
  double ar = 0;
  for (size_t i = 0; i < n; i++) {
    ar = 0.8 * ar + 0.2 * (unif(&seed) - 0.5) * 2;
    x[i] = level * exp(sigma * (ar + (unif(&seed) - 0.5)));
  }
}

static void test_summaries(void **state) {
  (void)state;
  double x[] = {4, 1, NAN, 3, INFINITY, 2};
  size_t n = dp_fleetstat_finite(x, 6);
  assert_int_equal(n, 4);
  assert_true(x[0] == 4 && x[1] == 1 && x[2] == 3 && x[3] == 2);
  assert_near(dp_fleetstat_summary(DP_FLEETSTAT_MEAN, x, n), 2.5, 1e-12);
  assert_near(dp_fleetstat_summary(DP_FLEETSTAT_MIN, x, n), 1, 0);
  assert_near(dp_fleetstat_summary(DP_FLEETSTAT_MAX, x, n), 4, 0);
  assert_near(dp_fleetstat_summary(DP_FLEETSTAT_MEDIAN, x, n), 2.5, 1e-12);
  assert_near(dp_fleetstat_summary(DP_FLEETSTAT_MEDIAN, x, 3), 2, 0);
  assert_true(isnan(dp_fleetstat_summary(DP_FLEETSTAT_MEAN, x, 0)));
}

/* A series against itself: ratio 1, an interval around 1, within noise. */
static void test_same_within_noise(void **state) {
  (void)state;
  double a[400];
  rounds(a, 400, 1e-4, 0.3, 1);
  for (int k = DP_FLEETSTAT_MEDIAN; k <= DP_FLEETSTAT_MAX; k++) {
    dp_fleetstat_ratio_t r;
    assert_int_equal(dp_fleetstat_compare(NULL, k, a, 400, a, 400, &r), 0);
    assert_near(r.ratio, 1, 1e-12);
    assert_true(r.lo <= 1 && r.hi >= 1);
    assert_int_equal(r.verdict, DP_FLEETSTAT_WITHIN_NOISE);
    assert_int_equal(r.block_a, 8); /* ceil(400^(1/3)) = 8 */
  }
}

/* Two draws of one disk: within noise; the same draws 3x slower: different,
 * the ratio inside its interval. */
static void test_scaled_different(void **state) {
  (void)state;
  double a[300], b[300], c[300];
  rounds(a, 300, 2e-4, 0.3, 7);
  rounds(b, 300, 2e-4, 0.3, 8);
  for (size_t i = 0; i < 300; i++)
    c[i] = 3 * b[i];
  dp_fleetstat_ratio_t r;
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEAN, a, 300, b, 300, &r), 0);
  assert_int_equal(r.verdict, DP_FLEETSTAT_WITHIN_NOISE);
  assert_true(r.lo < r.ratio && r.ratio < r.hi);
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEAN, a, 300, c, 300, &r), 0);
  assert_int_equal(r.verdict, DP_FLEETSTAT_DIFFERENT);
  assert_true(r.lo < r.ratio && r.ratio < r.hi);
  assert_true(r.lo > 2.5 && r.hi < 3.6);
  /* and the other way round: 1/3 is as different */
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEDIAN, c, 300, a, 300, &r), 0);
  assert_int_equal(r.verdict, DP_FLEETSTAT_DIFFERENT);
  assert_true(r.hi < 0.4);
}

/* The interval on known data: constant sides give a zero-width interval at
 * the exact ratio; the same input gives the same interval (fixed seed). */
static void test_known_interval(void **state) {
  (void)state;
  double a[10], b[10];
  for (int i = 0; i < 10; i++) {
    a[i] = 2;
    b[i] = 5;
  }
  dp_fleetstat_ratio_t r, r2;
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEAN, a, 10, b, 10, &r), 0);
  assert_near(r.ratio, 2.5, 1e-12);
  assert_near(r.lo, 2.5, 1e-12);
  assert_near(r.hi, 2.5, 1e-12);
  assert_int_equal(r.verdict, DP_FLEETSTAT_DIFFERENT);

  double x[50], y[50];
  rounds(x, 50, 1, 0.5, 3);
  rounds(y, 50, 1.05, 0.5, 4);
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEAN, x, 50, y, 50, &r), 0);
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEAN, x, 50, y, 50, &r2), 0);
  assert_true(r.lo == r2.lo && r.hi == r2.hi);
  assert_true(r.lo < 1 && r.hi > 1);
  assert_int_equal(r.verdict, DP_FLEETSTAT_WITHIN_NOISE);
}

/* Autocorrelated rounds: the block bootstrap's interval is wider than the
 * one of single rounds (block length 1), which would be too narrow. */
static void test_blocks_widen(void **state) {
  (void)state;
  double a[216], b[216];
  double ar = 0;
  uint64_t s = 11;
  for (size_t i = 0; i < 216; i++) { /* long episodes: AR(1) 0.95 */
    ar = 0.95 * ar + (unif(&s) - 0.5);
    a[i] = exp(0.3 * ar);
    b[i] = exp(0.3 * (unif(&s) - 0.5));
  }
  dp_fleetstat_ratio_t r;
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEAN, a, 216, b, 216, &r), 0);
  assert_int_equal(r.block_a, 6);
  /* the same values, shuffled so that no episode remains */
  double sh[216];
  memcpy(sh, a, sizeof(sh));
  for (size_t i = 215; i > 0; i--) {
    size_t j = (size_t)(unif(&s) * (double)(i + 1));
    double t = sh[i];
    sh[i] = sh[j];
    sh[j] = t;
  }
  dp_fleetstat_ratio_t rs;
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEAN, sh, 216, b, 216, &rs), 0);
  double wide = log(r.hi / r.lo), narrow = log(rs.hi / rs.lo);
  printf("autocorrelated width %.4f, shuffled %.4f\n", wide, narrow);
  assert_true(wide > 1.3 * narrow);
}

static void test_too_few_and_errors(void **state) {
  (void)state;
  double a[4] = {1, 1, 1, 1}, b[10] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  dp_fleetstat_ratio_t r;
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEAN, a, 4, b, 10, &r), 0);
  assert_int_equal(r.verdict, DP_FLEETSTAT_TOO_FEW);
  assert_near(r.ratio, 2, 1e-12);
  assert_true(isnan(r.lo) && isnan(r.hi));
  assert_int_equal(
      dp_fleetstat_compare(NULL, DP_FLEETSTAT_MEAN, a, 0, b, 10, &r), 0);
  assert_int_equal(r.verdict, DP_FLEETSTAT_TOO_FEW);
  assert_true(isnan(r.ratio));
  dp_fleetstat_conf_t c;
  dp_fleetstat_conf_init(&c);
  c.margin = 0.9;
  assert_int_equal(
      dp_fleetstat_compare(&c, DP_FLEETSTAT_MEAN, b, 10, b, 10, &r), -EINVAL);
  dp_fleetstat_conf_init(&c);
  c.resamples = 10;
  assert_int_equal(
      dp_fleetstat_compare(&c, DP_FLEETSTAT_MEAN, b, 10, b, 10, &r), -EINVAL);
  assert_int_equal(
      dp_fleetstat_compare(NULL, (dp_fleetstat_kind_t)9, b, 10, b, 10, &r),
      -EINVAL);
  assert_string_equal(dp_fleetstat_verdict_name(DP_FLEETSTAT_DIFFERENT),
                      "different");
  assert_string_equal(dp_fleetstat_verdict_name(DP_FLEETSTAT_WITHIN_NOISE),
                      "within noise");
}

/* One class of three disks, one 4x slower in every figure; one class of one
 * disk. The slow disk comes first with slowdown 4; the lone disk is its own
 * median (1); a disk without figures comes last. */
static void test_rank(void **state) {
  (void)state;
  dp_fleetstat_row_t rows[5];
  memset(rows, 0, sizeof(rows));
  const double fast[3] = {1e-4, 60000, 5e8};
  for (size_t i = 0; i < 5; i++) {
    rows[i].id = i;
    rows[i].cls = i < 3 ? "SSD-A" : "HDD-B";
    memcpy(rows[i].fig, fast, sizeof(fast));
  }
  rows[1].fig[DP_FLEETSTAT_QD1_P50_S] = 4e-4;
  rows[1].fig[DP_FLEETSTAT_QD32_IOPS] = 15000;
  rows[1].fig[DP_FLEETSTAT_SEQ_BPS] = 1.25e8;
  rows[2].fig[DP_FLEETSTAT_QD32_IOPS] = 50000;
  for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++)
    rows[4].fig[f] = NAN;
  assert_int_equal(dp_fleetstat_rank(rows, 5), 0);
  assert_int_equal(rows[0].id, 1);
  assert_near(rows[0].worst, 4, 1e-12);
  assert_int_equal(rows[0].class_n, 3);
  assert_near(rows[0].median[DP_FLEETSTAT_QD1_P50_S], 1e-4, 1e-15);
  assert_near(rows[0].median[DP_FLEETSTAT_QD32_IOPS], 50000, 1e-9);
  assert_near(rows[0].slowdown[DP_FLEETSTAT_QD32_IOPS], 50000.0 / 15000, 1e-12);
  /* worst 1 ties, by class: the lone HDD-B disk, then disks 0 and 2 */
  assert_int_equal(rows[1].id, 3);
  assert_int_equal(rows[1].class_n, 2);
  assert_near(rows[1].worst, 1, 1e-12);
  /* disk 0: 60000 IOPS against the median 50000: faster, 0.833 */
  assert_int_equal(rows[2].id, 0);
  assert_near(rows[2].worst, 1, 1e-12);
  assert_near(rows[2].slowdown[DP_FLEETSTAT_QD32_IOPS], 50000.0 / 60000, 1e-12);
  assert_int_equal(rows[3].id, 2);
  assert_int_equal(rows[4].id, 4);
  assert_true(isnan(rows[4].worst));
  assert_string_equal(dp_fleetstat_figure_name(DP_FLEETSTAT_SEQ_BPS),
                      "seq_bytes_per_s");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_summaries),
      cmocka_unit_test(test_same_within_noise),
      cmocka_unit_test(test_scaled_different),
      cmocka_unit_test(test_known_interval),
      cmocka_unit_test(test_blocks_widen),
      cmocka_unit_test(test_too_few_and_errors),
      cmocka_unit_test(test_rank),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
