/* test_window.c - the rate window on synthetic completion times: a
 * throttle's steps after idle, after credit left by an earlier probe and
 * after other I/O, read at the cap; a smooth disk (even and random gaps)
 * and one hiccup keep the plain window. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rng.h"
#include "window.h"

#define MS UINT64_C(1000000)
#define US UINT64_C(1000)

typedef struct {
  uint64_t t[4096];
  size_t n;      /* counted timeline: t[0] the warm-up's end */
  size_t drain;  /* index of the first completion not replaced */
  size_t before; /* completions before t[0] (the warm-up less its last) */
} line_t;

/* A blk-throttle staircase: the probe's queue of qd is full from 0;
 * step 0 at 0 lets first0 I/Os through (a slice's worth, more with
 * credit), later steps per_step I/Os each at first_at + k * period; the
 * budget ends at budget_ns (I/Os completing after it are not replaced, so
 * the step after it holds only what was in flight: at most qd). The warm-
 * up is the first qd completions. */
static void staircase(line_t *l, unsigned qd, unsigned first0,
                      unsigned per_step, uint64_t first_at, uint64_t period,
                      uint64_t budget_ns) {
  memset(l, 0, sizeof(*l));
  uint64_t all[4096];
  size_t m = 0, drain = 0;
  for (unsigned i = 0; i < first0; i++)
    all[m++] = 200 * US + i * 50 * US;
  for (uint64_t k = 0;; k++) {
    uint64_t at = first_at + k * period;
    int last = at >= budget_ns;
    if (last)
      drain = m;
    for (unsigned i = 0; i < (last ? qd : per_step); i++)
      all[m++] = at + i * 50 * US;
    if (last)
      break;
  }
  /* all[qd - 1] ends the warm-up */
  l->before = qd - 1;
  l->n = m - (qd - 1);
  memcpy(l->t, all + qd - 1, l->n * sizeof(uint64_t));
  l->drain = drain - (qd - 1);
}

static double rate_of(const line_t *l, const dp_window_t *w) {
  return (double)(w->last - w->first) /
         ((double)(l->t[w->last] - l->t[w->first]) / 1e9);
}

/* Picks l's window, which must be stepped; its rate. */
static double stepped_rate(const line_t *l, dp_window_t *w) {
  dp_window_pick(l->t, l->n, l->drain, w);
  assert_true(w->stepped);
  assert_true(w->throttled);
  return rate_of(l, w);
}

static double plain_rate(const line_t *l) {
  return (double)(l->n - 1) / ((double)(l->t[l->n - 1] - l->t[0]) / 1e9);
}

/* The 0.25 s sequential probe (1 MiB, QD4) against 50 MiB/s after idle:
 * 5 I/Os a step, the second step 120 ms after the first. */
static void test_steps_after_idle(void **state) {
  (void)state;
  line_t l;
  staircase(&l, 4, 5, 5, 120 * MS, 100 * MS, 254 * MS);
  dp_window_t w;
  double r = stepped_rate(&l, &w);
  assert_true(w.steps >= 2);
  assert_true(fabs(r / 50.0 - 1) < 0.03);
  /* the plain window reads it a tenth or more off: what this fixes */
  assert_true(fabs(plain_rate(&l) / 50.0 - 1) > 0.05);
  /* the early first step is no burst beyond the rate */
  assert_true(dp_window_burst(l.t, &w, 0, l.before + w.first, r / 1e9) < 1.0);
}

/* Right after a probe that used the IOPS cap and left the bytes: the
 * first step lets 12 I/Os through; the window still reads the cap and
 * the credit shows as a burst of about 12 - 6 I/Os. */
static void test_steps_after_credit(void **state) {
  (void)state;
  line_t l;
  staircase(&l, 4, 12, 5, 120 * MS, 100 * MS, 254 * MS);
  dp_window_t w;
  double r = stepped_rate(&l, &w);
  assert_true(fabs(r / 50.0 - 1) < 0.03);
  assert_true(plain_rate(&l) / 50.0 > 1.15);
  double b = dp_window_burst(l.t, &w, 0, l.before + w.first, r / 1e9);
  assert_true(b > 5.0 && b < 7.0);
}

/* After other I/O used the slice: the first step comes late and small. */
static void test_steps_after_debt(void **state) {
  (void)state;
  line_t l;
  staircase(&l, 32, 32, 25, 180 * MS, 100 * MS, 430 * MS);
  dp_window_t w;
  assert_true(fabs(stepped_rate(&l, &w) / 250.0 - 1) < 0.03);
}

/* After other I/O a throttle may let its credit through in two parts:
 * 4 I/Os at once (the warm-up), then 8 together 60 ms later, then 5 a
 * step. The oversized first step is left out of the window. */
static void test_split_credit(void **state) {
  (void)state;
  line_t l;
  memset(&l, 0, sizeof(l));
  l.t[l.n++] = 300 * US; /* the warm-up's last */
  const unsigned size[] = {8, 5, 5, 5, 4};
  for (unsigned k = 0; k < 5; k++) {
    if (k == 4)
      l.drain = l.n;
    for (unsigned i = 0; i < size[k]; i++)
      l.t[l.n++] = (60 + 100 * k) * MS + i * 50 * US;
  }
  dp_window_t w;
  double r = stepped_rate(&l, &w);
  assert_true(fabs(r / 50.0 - 1) < 0.03);
  assert_int_equal(w.steps, 3); /* 160 ms to 460 ms */
}

/* QD1 at 250 IOPS: 25 quick reads a step, 0.5 s. */
static void test_steps_qd1(void **state) {
  (void)state;
  line_t l;
  staircase(&l, 1, 25, 25, 100 * MS, 100 * MS, 500 * MS);
  dp_window_t w;
  assert_true(fabs(stepped_rate(&l, &w) / 250.0 - 1) < 0.01);
  assert_true(w.steps >= 4);
}

/* A probe shorter than two steps: too short for a whole one, but the
 * steps show (throttled), so the scheduler lengthens it. */
static void test_one_step_only(void **state) {
  (void)state;
  line_t l;
  staircase(&l, 4, 5, 5, 120 * MS, 100 * MS, 50 * MS);
  dp_window_t w;
  dp_window_pick(l.t, l.n, l.drain, &w);
  assert_false(w.stepped);
  assert_true(w.throttled);
}

/* A smooth disk keeps the plain window: even gaps, random (exponential)
 * gaps over many seeds, and even gaps with one 30 ms hiccup. */
static void test_smooth_plain(void **state) {
  (void)state;
  static uint64_t t[4000];
  dp_window_t w;
  for (size_t i = 0; i < 4000; i++)
    t[i] = i * 100 * US;
  dp_window_pick(t, 4000, 3999, &w);
  assert_false(w.stepped);
  assert_int_equal(w.first, 0);
  assert_int_equal(w.last, 3999);
  for (size_t i = 2000; i < 4000; i++)
    t[i] += 30 * MS;
  dp_window_pick(t, 4000, 3999, &w);
  assert_false(w.stepped);
  for (uint64_t seed = 1; seed <= 200; seed++) {
    uint64_t rng = seed, at = 0;
    for (size_t i = 0; i < 4000; i++) {
      double u = (double)(dp_rng_next(&rng) >> 11) / 9007199254740992.0;
      at += (uint64_t)(-log(1 - u) * 100e3);
      t[i] = at;
    }
    dp_window_pick(t, 4000, 3999, &w);
    assert_false(w.stepped);
    assert_false(w.throttled);
  }
}

/* A fast disk at QD32: its completions are reaped 16 at a time, one
 * timestamp each, 80 us apart: batches, not a throttle's steps. */
static void test_fast_batches_plain(void **state) {
  (void)state;
  static uint64_t t[4001];
  for (size_t i = 0; i < 4001; i++)
    t[i] = (i / 16) * 80 * US;
  dp_window_t w;
  dp_window_pick(t, 4001, 4000, &w);
  assert_false(w.throttled);
  assert_false(w.stepped);
}

/* Too few completions: nothing to pick. */
static void test_short(void **state) {
  (void)state;
  uint64_t t[2] = {5, 9};
  dp_window_t w;
  dp_window_pick(t, 1, 1, &w);
  assert_int_equal(w.first, 0);
  assert_int_equal(w.last, 0);
  assert_false(w.stepped);
  dp_window_pick(t, 2, 7, &w); /* drain_from past n: clamped */
  assert_int_equal(w.last, 1);
  assert_false(w.stepped);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_steps_after_idle),
      cmocka_unit_test(test_steps_after_credit),
      cmocka_unit_test(test_steps_after_debt),
      cmocka_unit_test(test_split_credit),
      cmocka_unit_test(test_steps_qd1),
      cmocka_unit_test(test_one_step_only),
      cmocka_unit_test(test_smooth_plain),
      cmocka_unit_test(test_fast_batches_plain),
      cmocka_unit_test(test_short),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
