/* test_failslow.c - the fail-slow detector (failslow.h) on generated peer
 * groups: deterministic load and noise (an LCG), one interval per step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "failslow.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t s;
} lcg_t;

static double unif(lcg_t *g) {
  g->s = g->s * 6364136223846793005ULL + 1442695040888963407ULL;
  return ((g->s >> 11) + 0.5) / 9007199254740992.0;
}

/* A standard normal deviate (Box-Muller, one of the pair). */
static double gauss(lcg_t *g) {
  double u = unif(g), v = unif(g);
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* A generated peer group: every drive follows latency = 2 ms * (x / 50
 * MB/s)^0.5 at its load x; the host's load swings slowly (x0.5 to x1.5);
 * each drive has per-sample lognormal noise on load and latency. */
typedef struct {
  size_t n;
  double slow[64];  /* latency factor per drive (1 healthy) */
  double busy[64];  /* load factor per drive (1 like its peers) */
  double missing;   /* probability of a NaN sample */
  double sigma;     /* log noise */
  double hostwide;  /* latency factor of every drive from step hw_from */
  unsigned hw_from; /* step */
  int never[64];    /* drive never fed */
  double later[64]; /* latency factor per drive from step later_from */
  unsigned later_from;
} gen_t;

static void gen_init(gen_t *g, size_t n) {
  memset(g, 0, sizeof(*g));
  g->n = n;
  for (size_t i = 0; i < 64; i++)
    g->slow[i] = g->busy[i] = g->later[i] = 1;
  g->sigma = 0.1;
  g->hostwide = 1;
  g->hw_from = UINT32_MAX;
  g->later_from = UINT32_MAX;
}

static unsigned clears[64]; /* times each drive was cleared in run() */

/* Runs steps intervals of 15 s; first[i] gets the step of drive i's first
 * flag (-1: never), rule[i] its rule then. Returns the detector (freed by
 * the caller). */
static dp_failslow_t *run(const gen_t *g, unsigned steps, long *first,
                          dp_failslow_rule_t *rule) {
  dp_failslow_conf_t c;
  dp_failslow_conf_init(&c);
  assert_int_equal(dp_failslow_conf_for_interval(&c, 15), 0);
  dp_failslow_t *d;
  assert_int_equal(dp_failslow_new(&d, &c, g->n), 0);
  dp_failslow_verdict_t v[64];
  lcg_t r = {42};
  for (size_t i = 0; i < g->n; i++) {
    first[i] = -1;
    clears[i] = 0;
    if (rule)
      rule[i] = DP_FAILSLOW_RULE_NONE;
  }
  for (unsigned t = 0; t < steps; t++) {
    double load = 50e6 * (1 + 0.5 * sin(t / 90.0));
    for (size_t i = 0; i < g->n; i++) {
      double x = load * g->busy[i] * exp(g->sigma * gauss(&r));
      double y = 2e-3 * sqrt(x / 50e6) *
                 (t >= g->later_from ? g->later[i] : g->slow[i]) *
                 (t >= g->hw_from ? g->hostwide : 1) *
                 exp(g->sigma * gauss(&r));
      if (g->never[i] || unif(&r) < g->missing)
        continue;
      if (unif(&r) < 0.01)
        y *= 20; /* a spike now and then */
      dp_failslow_feed(d, i, x, y);
    }
    dp_failslow_step(d, 1.7e9 + 15.0 * t, v);
    for (size_t i = 0; i < g->n; i++) {
      if (v[i].changed && v[i].flagged && first[i] < 0) {
        first[i] = t;
        if (rule)
          rule[i] = v[i].rule;
      }
      clears[i] += v[i].changed && !v[i].flagged;
    }
  }
  return d;
}

#define HOUR 240 /* steps of 15 s */

/* Fails unless drive k, and no other of n, was flagged (after run()). */
static void only_flagged(size_t n, const long *first,
                         const dp_failslow_rule_t *rule, size_t k) {
  for (size_t i = 0; i < n; i++)
    if ((first[i] >= 0) != (i == k))
      fail_msg("drive %zu: first flag at step %ld (rule %s)", i, first[i],
               dp_failslow_rule_name(rule[i]));
}

static void test_slower_drives_flagged(void **state) {
  (void)state;
  gen_t g;
  gen_init(&g, 12);
  g.slow[3] = 2;
  g.slow[5] = 3;
  g.slow[9] = 10;
  long first[64];
  dp_failslow_t *d = run(&g, 6 * HOUR, first, NULL);
  for (size_t i = 0; i < g.n; i++) {
    dp_failslow_verdict_t v;
    dp_failslow_verdict(d, i, &v);
    if (g.slow[i] > 1) {
      assert_true(v.flagged);
      /* within the 2-hour score's first hour of evidence, plus a window */
      assert_in_range(first[i], 1, HOUR + 20);
      assert_true(v.slowdown > 0.8 * g.slow[i] &&
                  v.slowdown < 1.25 * g.slow[i]);
      assert_int_equal(v.peers, 11);
    } else {
      assert_false(v.flagged);
      assert_int_equal(first[i], -1);
      assert_true(v.slowdown > 0.85 && v.slowdown < 1.2);
    }
  }
  char buf[256];
  dp_failslow_verdict_t v;
  dp_failslow_verdict(d, 9, &v);
  dp_failslow_describe(d, 9, &v, buf, sizeof(buf));
  assert_non_null(strstr(buf, "fail-slow"));
  dp_failslow_free(d);
}

static void test_busier_drive_not_flagged(void **state) {
  (void)state;
  gen_t g;
  gen_init(&g, 12);
  g.busy[0] = 2; /* twice the load, latency on the curve: sqrt(2) higher */
  g.busy[1] = 4; /* four times: latency twice its peers' */
  long first[64];
  dp_failslow_t *d = run(&g, 16 * HOUR, first, NULL);
  for (size_t i = 0; i < g.n; i++) {
    dp_failslow_verdict_t v;
    dp_failslow_verdict(d, i, &v);
    assert_false(v.flagged);
    assert_int_equal(first[i], -1);
    assert_true(v.slowdown > 0.85 && v.slowdown < 1.2);
  }
  dp_failslow_free(d);
}

static void test_hostwide_slowdown_not_flagged(void **state) {
  (void)state;
  gen_t g;
  gen_init(&g, 12);
  g.hostwide = 3;
  g.hw_from = 3 * HOUR; /* every drive 3x slower, at once */
  long first[64];
  dp_failslow_t *d = run(&g, 16 * HOUR, first, NULL);
  for (size_t i = 0; i < g.n; i++)
    assert_int_equal(first[i], -1);
  dp_failslow_free(d);
  /* also with one drive slow on top: still found */
  g.slow[4] = 3;
  d = run(&g, 16 * HOUR, first, NULL);
  for (size_t i = 0; i < g.n; i++)
    assert_int_equal(first[i] >= 0, i == 4);
  dp_failslow_free(d);
}

static void test_group_of_3(void **state) {
  (void)state;
  gen_t g;
  gen_init(&g, 3);
  g.slow[1] = 3;
  long first[64];
  dp_failslow_t *d = run(&g, 6 * HOUR, first, NULL);
  assert_int_equal(first[0], -1);
  assert_true(first[1] > 0 && first[1] <= HOUR + 20);
  assert_int_equal(first[2], -1);
  dp_failslow_free(d);
  gen_init(&g, 3); /* all healthy */
  d = run(&g, 16 * HOUR, first, NULL);
  for (size_t i = 0; i < 3; i++)
    assert_int_equal(first[i], -1);
  dp_failslow_free(d);
}

static void test_group_of_60(void **state) {
  (void)state;
  gen_t g;
  gen_init(&g, 60);
  g.slow[17] = 2;
  g.slow[59] = 10;
  long first[64];
  dp_failslow_t *d = run(&g, 16 * HOUR, first, NULL);
  for (size_t i = 0; i < g.n; i++)
    assert_int_equal(first[i] >= 0, i == 17 || i == 59);
  dp_failslow_verdict_t v;
  dp_failslow_verdict(d, 17, &v);
  assert_int_equal(v.peers, 59);
  dp_failslow_free(d);
}

static void test_missing_samples(void **state) {
  (void)state;
  gen_t g;
  gen_init(&g, 12);
  g.slow[2] = 3;
  g.missing = 0.3; /* 30% of samples NaN / not fed */
  g.never[7] = 1;  /* one drive never reports */
  long first[64];
  dp_failslow_t *d = run(&g, 8 * HOUR, first, NULL);
  for (size_t i = 0; i < g.n; i++)
    assert_int_equal(first[i] >= 0, i == 2);
  dp_failslow_verdict_t v;
  dp_failslow_verdict(d, 7, &v);
  assert_true(isnan(v.slowdown));
  assert_true(isnan(v.window_slowdown));
  assert_false(v.flagged);
  dp_failslow_verdict(d, 2, &v);
  assert_int_equal(v.peers, 10); /* drive 7 is no peer */
  dp_failslow_free(d);

  /* NaN, zero and negative values are missing, not numbers */
  dp_failslow_conf_t c;
  dp_failslow_conf_init(&c);
  assert_int_equal(dp_failslow_new(&d, &c, 4), 0);
  for (unsigned t = 0; t < 20 * 30; t++) {
    for (size_t i = 0; i < 3; i++)
      dp_failslow_feed(d, i, 1e7, 1e-3);
    dp_failslow_feed(d, 3, t % 2 ? NAN : 0, t % 3 ? -1 : NAN);
    dp_failslow_step(d, t, NULL);
  }
  dp_failslow_verdict(d, 3, &v);
  assert_true(isnan(v.slowdown));
  dp_failslow_verdict(d, 0, &v);
  assert_true(fabs(v.slowdown - 1) < 1e-9);
  assert_int_equal(v.peers, 2);
  dp_failslow_free(d);
}

static void test_sustained_small_slowdown(void **state) {
  (void)state;
  gen_t g;
  gen_init(&g, 12);
  g.sigma = 0.03; /* quiet peers */
  g.slow[6] = 1.3;
  long first[64];
  dp_failslow_rule_t rule[64];
  dp_failslow_t *d = run(&g, 12 * HOUR, first, rule);
  for (size_t i = 0; i < g.n; i++)
    assert_int_equal(first[i] >= 0, i == 6);
  assert_int_equal(rule[6], DP_FAILSLOW_RULE_SUSTAINED);
  /* the long score needs half its 12 hours */
  assert_in_range(first[6], 6 * HOUR - 20, 7 * HOUR);
  dp_failslow_free(d);
}

/* A drive 1.5x its peers among noisy ones (each window's slowdowns
 * spread widely, so its long score is no 40 MADs out) is flagged by the
 * persistent rule once every block of the 12-hour horizon agrees; one
 * 1.15x is not (below persist_ratio and too close to noisy peers). */
static void test_persistent_small_slowdown(void **state) {
  (void)state;
  gen_t g;
  gen_init(&g, 12);
  g.sigma = 0.6;
  g.slow[2] = 1.5;
  g.slow[8] = 1.15;
  long first[64];
  dp_failslow_rule_t rule[64];
  dp_failslow_t *d = run(&g, 16 * HOUR, first, rule);
  only_flagged(g.n, first, rule, 2);
  assert_int_equal(rule[2], DP_FAILSLOW_RULE_PERSISTENT);
  /* three blocks of 3 hours and half of the fourth */
  assert_in_range(first[2], 10 * HOUR + 100, 12 * HOUR + 20);
  dp_failslow_verdict_t v;
  dp_failslow_verdict(d, 2, &v);
  assert_true(v.slowdown_persist >= 1.25 && v.slowdown_persist < 1.8);
  assert_true(v.z_long < 40);
  dp_failslow_verdict(d, 8, &v);
  assert_true(v.slowdown_persist > 1.0 && v.slowdown_persist < 1.25);
  dp_failslow_free(d);
}

/* A drive only 1.2x slower than its peers, noisy like them: too small for
 * the 12-hour persistent rule (1.25), flagged by the day-long rule once
 * every 6-hour block of 24 hours agrees, and not before; a drive 1.08x
 * (a healthy drive's own offset, in the public data up to 1.07) never. */
static void test_day_long_small_slowdown(void **state) {
  (void)state;
  gen_t g;
  gen_init(&g, 12);
  g.sigma = 0.6;
  g.slow[3] = 1.2;
  g.slow[7] = 1.08;
  long first[64];
  dp_failslow_rule_t rule[64];
  dp_failslow_t *d = run(&g, 30 * HOUR, first, rule);
  only_flagged(g.n, first, rule, 3);
  assert_int_equal(rule[3], DP_FAILSLOW_RULE_DAY);
  assert_string_equal(dp_failslow_rule_name(rule[3]), "day-long");
  /* three blocks of 6 hours and half of the fourth */
  assert_in_range(first[3], 21 * HOUR - 20, 24 * HOUR + 20);
  dp_failslow_verdict_t v;
  dp_failslow_verdict(d, 3, &v);
  assert_true(v.flagged);
  assert_true(v.slowdown_day >= 1.14 && v.slowdown_day < 1.3);
  assert_true(v.slowdown_persist < 1.25);
  char buf[256];
  dp_failslow_describe(d, 3, &v, buf, sizeof(buf));
  if (strstr(buf, "by the day-long rule (at least 1.") == NULL)
    fail_msg("%s", buf);
  dp_failslow_verdict(d, 7, &v);
  assert_true(v.slowdown_day > 1.0 && v.slowdown_day < 1.14);
  dp_failslow_free(d);
}

/* Hysteresis of the persistent rules: a drive flagged at 1.35x that then
 * sits at 1.2x, under persist_ratio (1.25) but above its clearing level
 * (1.125), stays flagged without a clear; one that recovers to 1.0x is
 * cleared once, within 10 hours (the 12-hour long score lags by half). */
static void test_persistent_hysteresis(void **state) {
  (void)state;
  for (int recover = 0; recover < 2; recover++) {
    gen_t g;
    gen_init(&g, 12);
    g.sigma = 0.6;
    g.slow[5] = 1.35;
    g.later_from = 14 * HOUR;
    g.later[5] = recover ? 1.0 : 1.2;
    long first[64];
    dp_failslow_rule_t rule[64];
    dp_failslow_t *d = run(&g, 24 * HOUR, first, rule);
    assert_int_equal(rule[5], DP_FAILSLOW_RULE_PERSISTENT);
    assert_in_range(first[5], 10 * HOUR, 14 * HOUR);
    dp_failslow_verdict_t v;
    dp_failslow_verdict(d, 5, &v);
    if (recover) {
      if (v.flagged)
        fail_msg("score %.3f long %.3f z %.1f persist %.3f day %.3f",
                 v.slowdown, v.slowdown_long, v.z_long, v.slowdown_persist,
                 v.slowdown_day);
      assert_int_equal(clears[5], 1);
    } else {
      if (!v.flagged)
        fail_msg("cleared %u: score %.3f long %.3f z %.1f persist %.3f "
                 "day %.3f",
                 clears[5], v.slowdown, v.slowdown_long, v.z_long,
                 v.slowdown_persist, v.slowdown_day);
      assert_true(v.slowdown_persist < 1.25);
      assert_int_equal(clears[5], 0);
    }
    only_flagged(g.n, first, rule, 5);
    dp_failslow_free(d);
  }
}

static void test_recovery_clears(void **state) {
  (void)state;
  dp_failslow_conf_t c;
  dp_failslow_conf_init(&c);
  dp_failslow_t *d;
  assert_int_equal(dp_failslow_new(&d, &c, 5), 0);
  assert_int_equal(dp_failslow_set_device(d, 0, "sdb"), 0);
  assert_string_equal(dp_failslow_name(d, 0), "sdb");
  dp_failslow_verdict_t v[5];
  int flagged_at = -1, cleared_at = -1;
  for (int t = 0; t < 12 * HOUR; t++) {
    for (size_t i = 0; i < 5; i++)
      dp_failslow_feed(d, i, 2e7, (i == 0 && t < 3 * HOUR) ? 5e-3 : 1e-3);
    dp_failslow_step(d, t, v);
    if (v[0].changed && v[0].flagged)
      flagged_at = t;
    if (v[0].changed && !v[0].flagged)
      cleared_at = t;
    for (size_t i = 1; i < 5; i++)
      assert_false(v[i].flagged);
  }
  assert_true(flagged_at > 0 && flagged_at < HOUR + 20);
  /* cleared after the 2-hour median falls and 30 minutes below */
  assert_true(cleared_at > 3 * HOUR + HOUR && cleared_at < 3 * HOUR + 2 * HOUR);
  dp_failslow_free(d);
}

/* While no score is known (every drive silent for hours: no summaries, so
 * the 2-hour score runs out of windows) a flag is held, neither cleared
 * nor counted towards clearing; once samples return it clears as usual,
 * after an hour for a score and 30 minutes below. */
static void test_flag_held_without_score(void **state) {
  (void)state;
  dp_failslow_conf_t c;
  dp_failslow_conf_init(&c);
  dp_failslow_t *d;
  assert_int_equal(dp_failslow_new(&d, &c, 5), 0);
  dp_failslow_verdict_t v[5];
  int flagged_at = -1, cleared_at = -1, unknown_windows = 0;
  const int silent_from = 3 * HOUR, back_at = 7 * HOUR;
  for (int t = 0; t < 10 * HOUR; t++) {
    if (t < silent_from || t >= back_at)
      for (size_t i = 0; i < 5; i++)
        dp_failslow_feed(d, i, 2e7, (i == 0 && t < silent_from) ? 5e-3 : 1e-3);
    if (dp_failslow_step(d, t, v) && t >= silent_from && t < back_at &&
        isnan(v[0].slowdown) && isnan(v[0].z_long)) {
      unknown_windows++;
      assert_true(v[0].flagged);
    }
    if (v[0].changed && v[0].flagged)
      flagged_at = t;
    if (v[0].changed && !v[0].flagged)
      cleared_at = t;
  }
  assert_true(flagged_at > 0 && flagged_at < HOUR + 20);
  /* more windows without a score than clearing takes */
  assert_true(unknown_windows > (int)c.clear_windows);
  assert_true(cleared_at > back_at + HOUR && cleared_at < back_at + 2 * HOUR);
  dp_failslow_free(d);
}

static void test_conf(void **state) {
  (void)state;
  dp_failslow_conf_t c;
  dp_failslow_conf_init(&c);
  assert_int_equal(dp_failslow_conf_check(&c), 0);
  dp_failslow_t *d = NULL;
  assert_int_equal(dp_failslow_new(&d, &c, 0), -EINVAL);
  assert_int_equal(dp_failslow_new(&d, &c, DP_FAILSLOW_DEVICES_MAX + 1),
                   -EINVAL);
  c.clear_ratio = c.flag_ratio + 1;
  assert_int_equal(dp_failslow_conf_check(&c), -EINVAL);
  dp_failslow_conf_init(&c);
  c.window_steps = 0;
  assert_int_equal(dp_failslow_conf_check(&c), -EINVAL);
  dp_failslow_conf_init(&c);
  assert_int_equal(dp_failslow_conf_for_interval(&c, 10), 0);
  assert_int_equal(c.window_steps, 30);
  assert_int_equal(c.score_windows, 24);
  assert_int_equal(c.long_windows, 144);
  assert_int_equal(dp_failslow_conf_for_interval(&c, 0), -EINVAL);
  assert_int_equal(dp_failslow_conf_for_interval(&c, 0.1), -EINVAL);
  assert_int_equal(dp_failslow_conf_for_interval(&c, 60), 0);
  assert_int_equal(c.window_steps, 5);
  /* FailSlowWindow: a 3 s window at 1 s, the horizons in windows kept */
  assert_int_equal(dp_failslow_conf_for_window(&c, 1, 3), 0);
  assert_int_equal(c.window_steps, 3);
  assert_int_equal(c.min_valid_steps, 2);
  assert_int_equal(c.model_windows, 12);
  assert_int_equal(c.score_windows, 24);
  assert_int_equal(c.min_score_windows, 12);
  assert_int_equal(c.clear_windows, 6);
  assert_int_equal(c.long_windows, 144);
  assert_int_equal(c.day_windows, 288);
  dp_failslow_conf_t c300;
  dp_failslow_conf_init(&c300);
  assert_int_equal(dp_failslow_conf_for_window(&c300, 7, 300), 0);
  assert_int_equal(dp_failslow_conf_for_interval(&c, 7), 0);
  assert_int_equal(c.window_steps, c300.window_steps);
  assert_int_equal(c.min_valid_steps, c300.min_valid_steps);
  assert_int_equal(c.model_windows, c300.model_windows);
  assert_int_equal(c.score_windows, c300.score_windows);
  assert_int_equal(c.min_score_windows, c300.min_score_windows);
  assert_int_equal(c.clear_windows, c300.clear_windows);
  assert_int_equal(c.long_windows, c300.long_windows);
  assert_int_equal(c.day_windows, c300.day_windows);
  c.day_windows = DP_FAILSLOW_HISTORY_MAX + 1;
  assert_int_equal(dp_failslow_conf_check(&c), -EINVAL);
  dp_failslow_conf_init(&c);
  c.day_ratio = 0.9;
  assert_int_equal(dp_failslow_conf_check(&c), -EINVAL);
  assert_int_equal(dp_failslow_conf_for_window(&c, 1, 0), -EINVAL);
  assert_int_equal(dp_failslow_conf_for_window(&c, 1, NAN), -EINVAL);
  dp_failslow_free(NULL);
}

/* The latency a sample carries, one rule for every input: from counters
 * (100 reads waiting 0.5 s in all, 300 writes 2.1 s) and from the same
 * interval as rates and awaits (per second over 10 s) the same figure,
 * the wait per I/O over both directions; one direction alone is its own
 * await; none, or no I/O, is not known. */
static void test_latency_per_io(void **state) {
  (void)state;
  double from_counts =
      dp_failslow_latency_per_io(100, 0.5 / 100, 300, 2.1 / 300);
  double from_rates = dp_failslow_latency_per_io(10, 0.005, 30, 0.007);
  assert_float_equal(from_counts, 2.6 / 400, 1e-12);
  assert_float_equal(from_rates, from_counts, 1e-12);
  assert_float_equal(dp_failslow_latency_per_io(0, NAN, 30, 0.007), 0.007, 0);
  assert_float_equal(dp_failslow_latency_per_io(10, 0.005, 0, NAN), 0.005, 0);
  assert_true(isnan(dp_failslow_latency_per_io(0, NAN, 0, NAN)));
  assert_true(isnan(dp_failslow_latency_per_io(0, 0.001, 0, 0.002)));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_latency_per_io),
      cmocka_unit_test(test_slower_drives_flagged),
      cmocka_unit_test(test_busier_drive_not_flagged),
      cmocka_unit_test(test_hostwide_slowdown_not_flagged),
      cmocka_unit_test(test_group_of_3),
      cmocka_unit_test(test_group_of_60),
      cmocka_unit_test(test_missing_samples),
      cmocka_unit_test(test_sustained_small_slowdown),
      cmocka_unit_test(test_persistent_small_slowdown),
      cmocka_unit_test(test_day_long_small_slowdown),
      cmocka_unit_test(test_persistent_hysteresis),
      cmocka_unit_test(test_recovery_clears),
      cmocka_unit_test(test_flag_held_without_score),
      cmocka_unit_test(test_conf),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
