/*
 * test_hist.c - the latency histogram: bucket arithmetic, the documented
 * relative error bound over 1 us .. 60 s, quantiles, merge and reset.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "hist.h"

static int setup(void **state) {
  dp_hist_t *h = malloc(sizeof(*h));
  if (h == NULL)
    return -1;
  dp_hist_reset(h);
  *state = h;
  return 0;
}

static int teardown(void **state) {
  free(*state);
  return 0;
}

/* Buckets tile [0, 2^40) with no gap or overlap, and index() inverts lo(). */
static void test_buckets_tile(void **state) {
  (void)state;
  assert_int_equal(dp_hist_bucket_lo(0), 0);
  for (unsigned i = 0; i + 1 < DP_HIST_BUCKETS; i++) {
    assert_true(dp_hist_bucket_hi(i) > dp_hist_bucket_lo(i));
    if (dp_hist_bucket_hi(i) != dp_hist_bucket_lo(i + 1))
      fail_msg("bucket %u ends at %llu but bucket %u starts at %llu", i,
               (unsigned long long)dp_hist_bucket_hi(i), i + 1,
               (unsigned long long)dp_hist_bucket_lo(i + 1));
    assert_int_equal(dp_hist_index(dp_hist_bucket_lo(i)), i);
    assert_int_equal(dp_hist_index(dp_hist_bucket_hi(i) - 1), i);
  }
  assert_int_equal(dp_hist_bucket_hi(DP_HIST_BUCKETS - 1), DP_HIST_MAX_NS);
  assert_int_equal(dp_hist_index(DP_HIST_MAX_NS), DP_HIST_BUCKETS - 1);
  assert_int_equal(dp_hist_index(UINT64_MAX), DP_HIST_BUCKETS - 1);
}

/* Worked examples from the header comment. */
static void test_header_examples(void **state) {
  (void)state;
  assert_int_equal(dp_hist_index(1000), 317);
  assert_int_equal(dp_hist_bucket_lo(317), 1000);
  assert_int_equal(dp_hist_bucket_hi(317), 1008);
  assert_int_equal(dp_hist_index(1000000), 954);
  assert_int_equal(dp_hist_index(60000000000ull), 1967);
}

/*
 * The error bound: for every value v in 1 us .. 60 s (a geometric sweep with
 * 0.01 % steps, ~140k values, plus every bucket edge), a histogram holding
 * only v reports every quantile within DP_HIST_REL_ERROR of v... and since
 * the quantile is clamped to [min, max], a single value is exact; so the
 * bound is tested on the bucket midpoint itself, the value a quantile of a
 * mixed population reads back.
 */
static void test_error_bound_whole_range(void **state) {
  (void)state;
  double worst = 0;
  uint64_t worst_v = 0;
  for (double x = 1000; x <= 60e9; x *= 1.0001) {
    uint64_t v = (uint64_t)x;
    unsigned i = dp_hist_index(v);
    uint64_t lo = dp_hist_bucket_lo(i), hi = dp_hist_bucket_hi(i);
    assert_true(v >= lo && v < hi);
    double mid = (double)(lo + (hi - lo) / 2);
    double rel = fabs(mid - (double)v) / (double)v;
    if (rel > worst) {
      worst = rel;
      worst_v = v;
    }
  }
  for (unsigned i = dp_hist_index(1000); i <= dp_hist_index(60000000000ull);
       i++) {
    uint64_t lo = dp_hist_bucket_lo(i), hi = dp_hist_bucket_hi(i);
    double mid = (double)(lo + (hi - lo) / 2);
    double rel = (mid - (double)lo) / (double)lo;
    if (rel > worst) {
      worst = rel;
      worst_v = lo;
    }
  }
  if (worst > DP_HIST_REL_ERROR)
    fail_msg("relative error %.6f at %llu ns exceeds the bound %.6f", worst,
             (unsigned long long)worst_v, DP_HIST_REL_ERROR);
  /* The bound is tight, not loose: some value comes close to it. */
  assert_true(worst > DP_HIST_REL_ERROR * 0.9);
}

/* Quantiles of a mixed population are within the bound of the exact order
 * statistic, across six decades. */
static void test_quantiles_vs_exact(void **state) {
  dp_hist_t *h = *state;
  enum { N = 100000 };
  static uint64_t vals[N];
  uint64_t s = 12345;
  for (int i = 0; i < N; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    /* log-uniform between 1 us and 10 s */
    double e = 3.0 + 7.0 * (double)(s % 1000000) / 1e6;
    vals[i] = (uint64_t)pow(10.0, e);
    dp_hist_record(h, vals[i]);
  }
  int cmp(const void *a, const void *b);
  qsort(vals, N, sizeof(vals[0]), cmp);
  const double qs[] = {0.01, 0.5, 0.9, 0.99, 0.999, 0.9999};
  for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
    size_t rank = (size_t)ceil(qs[k] * N);
    double exact = (double)vals[rank - 1];
    double got = (double)dp_hist_quantile(h, qs[k]);
    double rel = fabs(got - exact) / exact;
    if (rel > DP_HIST_REL_ERROR)
      fail_msg("q=%g: expected %.0f ns (+-%.2f%%), got %.0f ns", qs[k], exact,
               DP_HIST_REL_ERROR * 100, got);
  }
  assert_int_equal(dp_hist_quantile(h, 0), vals[0]);
  assert_int_equal(dp_hist_quantile(h, 1), vals[N - 1]);
  assert_int_equal(h->count, N);
  assert_int_equal(h->min_ns, vals[0]);
  assert_int_equal(h->max_ns, vals[N - 1]);
}

int cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void test_mean_and_empty(void **state) {
  dp_hist_t *h = *state;
  assert_int_equal(dp_hist_quantile(h, 0.99), 0);
  assert_true(dp_hist_mean(h) == 0);
  dp_hist_record(h, 100);
  dp_hist_record(h, 300);
  assert_true(fabs(dp_hist_mean(h) - 200.0) < 1e-9);
  assert_int_equal(dp_hist_quantile(h, 0.5), 100);
  assert_int_equal(dp_hist_quantile(h, 0.51), 300);
}

static void test_overflow_clamps(void **state) {
  dp_hist_t *h = *state;
  dp_hist_record(h, DP_HIST_MAX_NS * 4);
  assert_int_equal(h->overflow, 1);
  assert_int_equal(h->buckets[DP_HIST_BUCKETS - 1], 1);
  assert_int_equal(dp_hist_quantile(h, 0.5), DP_HIST_MAX_NS * 4);
}

static void test_merge_equals_recording_all(void **state) {
  dp_hist_t *a = *state;
  dp_hist_t *b = malloc(sizeof(*b)), *all = malloc(sizeof(*all));
  assert_non_null(b);
  assert_non_null(all);
  dp_hist_reset(b);
  dp_hist_reset(all);
  for (uint64_t v = 1000; v < 50000000; v = v * 3 / 2 + 7) {
    dp_hist_record((v & 1) ? a : b, v);
    dp_hist_record(all, v);
  }
  dp_hist_merge(a, b);
  assert_int_equal(a->count, all->count);
  assert_int_equal(a->min_ns, all->min_ns);
  assert_int_equal(a->max_ns, all->max_ns);
  assert_memory_equal(a->buckets, all->buckets, sizeof(a->buckets));
  assert_int_equal(dp_hist_quantile(a, 0.99), dp_hist_quantile(all, 0.99));
  dp_hist_reset(a);
  assert_int_equal(a->count, 0);
  assert_int_equal(a->min_ns, UINT64_MAX);
  assert_int_equal(dp_hist_quantile(a, 0.5), 0);
  free(b);
  free(all);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_buckets_tile),
      cmocka_unit_test(test_header_examples),
      cmocka_unit_test(test_error_bound_whole_range),
      cmocka_unit_test_setup_teardown(test_quantiles_vs_exact, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mean_and_empty, setup, teardown),
      cmocka_unit_test_setup_teardown(test_overflow_clamps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_merge_equals_recording_all, setup,
                                      teardown),
  };
  return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
