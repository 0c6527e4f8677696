/*
 * test_health.c - the health verdict (src/health.c) on deterministic
 * rounds: arming, each rule's k-of-n and its hysteresis, single-round
 * spikes ignored, a long degradation not learned as normal, bursty
 * slowdowns (mean and IOPS move, p50 does not), the state file across a
 * restart (and a corrupt one), media classes from a fixture sysfs and
 * their ceilings, peers, stalls and errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "health.h"
#include "helpers.h"

static const char *const names2[] = {"randread-qd1", "randread-qd32"};
static const char *const keys2[] = {"randread/8192/1", "randread/8192/32"};

/* A healthy round of an SSD-like target: QD1 100 us, QD32 8x the IOPS;
 * jitter j (0..1) scales latencies a little so medians are not trivial. */
static void healthy(dp_health_obs_t o[2], double j) {
  memset(o, 0, 2 * sizeof(*o));
  o[0].p50_s = 100e-6 * (1 + 0.1 * j);
  o[0].mean_s = 120e-6 * (1 + 0.1 * j);
  o[0].iops = 1 / o[0].mean_s;
  o[1].p50_s = 300e-6 * (1 + 0.1 * j);
  o[1].mean_s = 400e-6 * (1 + 0.1 * j);
  o[1].iops = 32 / o[1].mean_s;
}

/* Both probes f times slower (uniform: every latency up, IOPS down). */
static void slowed(dp_health_obs_t o[2], double f, double j) {
  healthy(o, j);
  for (int k = 0; k < 2; k++) {
    o[k].p50_s *= f;
    o[k].mean_s *= f;
    o[k].iops /= f;
  }
}

static dp_health_t *make(size_t n, dp_media_t media) {
  dp_health_conf_t c;
  dp_health_conf_init(&c);
  dp_health_t *h;
  assert_int_equal(dp_health_new(&h, &c, n), 0);
  for (size_t i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof(name), "t%zu", i);
    assert_int_equal(
        dp_health_set_target(h, i, name, 2, names2, keys2, media, "M", 0), 0);
  }
  return h;
}

static dp_health_verdict_t feed(dp_health_t *h, size_t i,
                                const dp_health_obs_t *o) {
  dp_health_verdict_t v;
  dp_health_round(h, i, o, &v);
  return v;
}

static void arm(dp_health_t *h, size_t i, int rounds) {
  dp_health_obs_t o[2];
  for (int r = 0; r < rounds; r++) {
    healthy(o, (r % 5) / 4.0);
    dp_health_verdict_t v = feed(h, i, o);
    assert_int_equal(v.level, DP_HEALTH_OK);
  }
}

/* Rounds of a step of factor f until the first WARNING or worse; -1 if
 * none within max. */
static int rounds_to_warn(dp_health_t *h, double f, int max) {
  dp_health_obs_t o[2];
  for (int r = 1; r <= max; r++) {
    slowed(o, f, (r % 5) / 4.0);
    if (feed(h, 0, o).level >= DP_HEALTH_WARNING)
      return r;
  }
  return -1;
}

static void test_arming(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  dp_health_obs_t o[2];
  for (int r = 0; r < 20; r++) {
    healthy(o, 0);
    dp_health_verdict_t v = feed(h, 0, o);
    if (v.armed)
      fail_msg("armed after %d rounds, expected after 20", r);
    assert_true(isnan(v.slowdown));
    assert_int_equal(v.baseline_rounds, r);
  }
  /* unarmed, a 10x round is not judged by the baseline rule */
  healthy(o, 0);
  dp_health_verdict_t v = feed(h, 0, o);
  assert_true(v.armed);
  assert_true(fabs(v.slowdown - 1) < 1e-6);
  assert_true(fabs(v.base_p50_s[0] - 100e-6) < 1e-9);
  dp_health_free(h);
}

static void test_steps_and_hysteresis(void **state) {
  (void)state;
  static const struct {
    double f;
    int within;
    const char *rule;
  } steps[] = {{10, 2, "warn-fast"}, {3, 3, "warn"}, {2, 10, "warn-slow"}};
  for (size_t s = 0; s < 3; s++) {
    dp_health_t *h = make(1, DP_MEDIA_SSD);
    arm(h, 0, 30);
    int r = rounds_to_warn(h, steps[s].f, 30);
    if (r < 1 || r > steps[s].within)
      fail_msg("%gx step: warned after %d rounds, expected 1..%d", steps[s].f,
               r, steps[s].within);
    /* back to healthy: held until 3 rounds below 1.3x, then OK */
    dp_health_obs_t o[2];
    healthy(o, 0);
    assert_int_equal(feed(h, 0, o).level, DP_HEALTH_WARNING);
    assert_int_equal(feed(h, 0, o).level, DP_HEALTH_WARNING);
    dp_health_verdict_t v = feed(h, 0, o);
    assert_int_equal(v.level, DP_HEALTH_OK);
    assert_true(v.changed);
    dp_health_free(h);
  }
  /* 10x sustained: FAILURE on the third round */
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  slowed(o, 10, 0);
  assert_int_equal(feed(h, 0, o).level, DP_HEALTH_OK);
  dp_health_verdict_t v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  assert_string_equal(v.why_detail, "warn-fast");
  assert_true(v.changed);
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_FAILURE);
  assert_int_equal(v.why, DP_RULE_BASELINE);
  assert_true(v.slowdown > 9 && v.slowdown < 11);
  dp_health_free(h);
}

static void test_single_spikes_ignored(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  for (int r = 0; r < 500; r++) {
    /* a 5-20x spike every 7th round (a busy neighbour), else healthy */
    if (r % 7 == 3)
      slowed(o, 5 + (r % 16), 0.5);
    else
      healthy(o, (r % 5) / 4.0);
    dp_health_verdict_t v = feed(h, 0, o);
    if (v.level != DP_HEALTH_OK)
      fail_msg("round %d: %s (%s, S %.2f), expected ok", r,
               dp_health_level_name(v.level), v.why_detail, v.slowdown);
  }
  dp_health_free(h);
}

static void test_long_degradation_not_learned(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  dp_health_verdict_t v;
  for (int r = 0; r < 2000; r++) { /* longer than the baseline's horizon */
    slowed(o, 3, (r % 5) / 4.0);
    v = feed(h, 0, o);
  }
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  assert_true(v.base_p50_s[0] < 115e-6); /* still the healthy median */
  assert_true(v.slowdown > 2.5);
  dp_health_free(h);
}

static void test_bursty_needs_mean_and_iops(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  /* one long I/O per round: mean up 6x, IOPS barely down: no warning */
  for (int r = 0; r < 20; r++) {
    healthy(o, 0);
    o[0].mean_s *= 6;
    o[1].mean_s *= 6;
    assert_int_equal(feed(h, 0, o).level, DP_HEALTH_OK);
  }
  /* a throttle: p50 unchanged, mean 10x and IOPS 1/10 on both probes */
  int warned = 0;
  for (int r = 1; r <= 3 && !warned; r++) {
    healthy(o, 0);
    for (int k = 0; k < 2; k++) {
      o[k].mean_s *= 10;
      o[k].iops /= 10;
    }
    warned = feed(h, 0, o).level >= DP_HEALTH_WARNING ? r : 0;
  }
  if (warned != 2)
    fail_msg("bursty 10x: warned at round %d, expected 2", warned);
  dp_health_free(h);

  /* only one of two probes bursty: the round's S ignores it (the other
   * probe disagrees), so no latency rule fires at 3x on the deeper probe;
   * on the first probe, with its p50 flat, it is "throttled" at the 5th
   * round in a row (a token bucket); a probe at >= 8x for 3 rounds is a
   * FAILURE on its own */
  for (int first = 0; first < 2; first++) {
    h = make(1, DP_MEDIA_SSD);
    arm(h, 0, 30);
    int fired = 0;
    for (int r = 1; r <= 20; r++) {
      healthy(o, 0);
      o[first ? 0 : 1].mean_s *= 3;
      o[first ? 0 : 1].iops /= 3;
      dp_health_verdict_t v = feed(h, 0, o);
      assert_true(v.slowdown < 1.9);
      if (!fired && v.rule[DP_RULE_BASELINE] != DP_HEALTH_OK) {
        fired = r;
        assert_string_equal(v.why_detail, "throttled");
        char words[400];
        dp_health_describe(h, 0, &v, words, sizeof(words));
        assert_non_null(strstr(words, "WARNING by throttled: probe "
                                      "randread-qd1 lost IOPS with its p50 "
                                      "near its baseline"));
      }
    }
    if (fired != (first ? 5 : 0))
      fail_msg("probe %d bursty 3x: baseline rule at round %d, want %d",
               first ? 0 : 1, fired, first ? 5 : 0);
    dp_health_free(h);
  }
  h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_verdict_t v;
  for (int r = 1; r <= 3; r++) {
    healthy(o, 0);
    o[0].mean_s *= 10;
    o[0].iops /= 10;
    v = feed(h, 0, o);
    assert_int_equal(v.level, r < 3 ? DP_HEALTH_OK : DP_HEALTH_FAILURE);
  }
  assert_string_equal(v.why_detail, "fail");
  dp_health_free(h);
}

/* A confirmation round: the first probe alone, obs[0].confirm set. */
static dp_health_verdict_t confirm_round(dp_health_t *h, double f) {
  dp_health_obs_t o[2];
  slowed(o, f, 0);
  o[0].confirm = 1;
  o[1] = (dp_health_obs_t){NAN, NAN, NAN, 0, 0, 0, NAN, 0, 0};
  return feed(h, 0, o);
}

/* Fast confirmation: a 10x round is suspect; its confirmation makes 2 of
 * 2 (warn-fast) at once and two more make 3 of 3 at 8x (fail), instead of
 * intervals later. Confirmations are not learned and are one spell for
 * the intermittent rule. */
static void test_confirmation_rounds(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  slowed(o, 10, 0);
  dp_health_verdict_t v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_OK);
  assert_true(v.suspect);
  unsigned learned = v.baseline_rounds;
  v = confirm_round(h, 10);
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  assert_string_equal(v.why_detail, "warn-fast");
  assert_int_equal(v.intermittent, 1); /* the regular round only */
  v = confirm_round(h, 10);
  assert_int_equal(v.level, DP_HEALTH_FAILURE);
  assert_string_equal(v.why_detail, "fail");
  assert_int_equal(v.baseline_rounds, learned);
  dp_health_free(h);

  /* a healthy round is not suspect; a confirmation at 1x clears nothing
   * early and learns nothing */
  h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  healthy(o, 0);
  v = feed(h, 0, o);
  assert_false(v.suspect);
  learned = v.baseline_rounds + 1; /* the healthy round was learned */
  v = confirm_round(h, 1);
  assert_int_equal(v.level, DP_HEALTH_OK);
  assert_int_equal(v.baseline_rounds, learned);
  v = confirm_round(h, 1);
  assert_int_equal(v.baseline_rounds, learned); /* the confirmation was not */
  dp_health_free(h);
}

/* A bursty slowdown (a throttle releasing I/O in slices: p50 stays, mean
 * and IOPS move) is confirmed by the first probe's own mean and IOPS. */
static void test_bursty_confirmation(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  healthy(o, 0);
  for (int k = 0; k < 2; k++) {
    o[k].mean_s *= 10;
    o[k].iops /= 10;
  }
  dp_health_verdict_t v = feed(h, 0, o);
  assert_true(v.suspect);
  o[0].confirm = 1;
  o[1] = (dp_health_obs_t){NAN, NAN, NAN, 0, 0, 0, NAN, 0, 0};
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  assert_string_equal(v.why_detail, "warn-fast");
  dp_health_free(h);
}

/* A crawl -- the first probe's p50 at 1 s or 100x the ceiling -- in a
 * round and its confirmation is a FAILURE, armed or not. */
static void test_crawl_is_failure(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD); /* ceiling 5 ms: crawl 0.5 s */
  dp_health_obs_t o[2];
  healthy(o, 0);
  o[0].p50_s = o[0].mean_s = 0.6;
  o[0].iops = 1 / 0.6;
  dp_health_verdict_t v = feed(h, 0, o);
  assert_false(v.armed);
  assert_true(v.suspect);
  assert_true(v.level < DP_HEALTH_FAILURE);
  o[0].confirm = 1;
  o[1] = (dp_health_obs_t){NAN, NAN, NAN, 0, 0, 0, NAN, 0, 0};
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_FAILURE);
  assert_int_equal(v.why, DP_RULE_CEILING);
  assert_string_equal(v.why_detail, "crawl");
  char words[512];
  dp_health_describe(h, 0, &v, words, sizeof(words));
  assert_non_null(strstr(words, "FAILURE by crawl"));
  dp_health_free(h);
}

/* The tail rule's baseline (p99/p50 of learned rounds) goes into the state
 * text as "shape" lines and comes back: format, parse into a fresh
 * tracker, format again gives the same text. */
static void test_state_keeps_tail_baseline(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  dp_health_obs_t o[2];
  for (int r = 0; r < 25; r++) {
    healthy(o, (r % 5) / 4.0);
    o[0].p99_s = 4 * o[0].p50_s;
    o[1].p99_s = 6 * o[1].p50_s;
    feed(h, 0, o);
  }
  char *a, *b;
  size_t la, lb;
  assert_int_equal(dp_health_state_format(h, &a, &la), 0);
  assert_non_null(strstr(a, "shape t0 randread-qd1 randread/8192/1 4 4 4"));
  assert_non_null(strstr(a, "shape t0 randread-qd32 randread/8192/32 6 6"));
  dp_health_t *h2 = make(1, DP_MEDIA_SSD);
  char err[256] = "";
  assert_int_equal(dp_health_state_parse(h2, a, la, err, sizeof(err)), 0);
  assert_int_equal(dp_health_state_format(h2, &b, &lb), 0);
  assert_int_equal(la, lb);
  assert_memory_equal(a, b, la);
  /* a file of another version's probes loads; a bad shape line is refused */
  char bad[] = "diskprobe-health 1\nshape t0 randread-qd1 randread/8192/1 "
               "-1\nend\n";
  assert_int_equal(
      dp_health_state_parse(h2, bad, strlen(bad), err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "line 2"));
  free(a);
  free(b);
  dp_health_free(h);
  dp_health_free(h2);
}

/* A probe never measured (a deep probe skipped on a slow disk every round)
 * does not keep the target unarmed: arming counts the probes learned in at
 * least a quarter of the rounds of the most learned one. */
static void test_arms_without_a_skipped_probe(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_HDD);
  dp_health_obs_t o[2];
  dp_health_verdict_t v;
  for (int r = 0; r < 21; r++) {
    healthy(o, (r % 5) / 4.0);
    o[1] = (dp_health_obs_t){NAN, NAN, NAN, 0, 0, 0, NAN, 0, 0}; /* skipped */
    v = feed(h, 0, o);
  }
  assert_int_equal(v.baseline_rounds, 20);
  assert_true(v.armed);
  /* then a 10x step on the probe that is measured still warns */
  for (int r = 0; r < 2; r++) {
    slowed(o, 10, 0);
    o[1] = (dp_health_obs_t){NAN, NAN, NAN, 0, 0, 0, NAN, 0, 0};
    v = feed(h, 0, o);
  }
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  dp_health_free(h);
}

/* A windowed rule clears within a few rounds of the recovery, not once its
 * whole window has turned over: the capacity rule (7 rounds) after a deep
 * probe at a third of its IOPS, the intermittent rule (10) after a fault
 * every third round. */
static void test_windowed_rules_clear_fast(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  dp_health_verdict_t v;
  for (int r = 0; r < 10; r++) {
    healthy(o, 0);
    o[1].iops /= 3; /* the deep probe only: lost parallelism */
    v = feed(h, 0, o);
  }
  assert_int_equal(v.rule[DP_RULE_CAPACITY], DP_HEALTH_WARNING);
  int back = 0;
  for (int r = 1; r <= 7 && !back; r++) {
    healthy(o, 0);
    if (feed(h, 0, o).rule[DP_RULE_CAPACITY] == DP_HEALTH_OK)
      back = r;
  }
  if (back == 0 || back > 3)
    fail_msg("capacity cleared after %d healthy rounds, want <= 3", back);
  dp_health_free(h);

  h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  for (int r = 0; r < 12; r++) {
    if (r % 3 == 0)
      slowed(o, 10, 0);
    else
      healthy(o, 0);
    v = feed(h, 0, o);
  }
  assert_int_equal(v.rule[DP_RULE_INTERMITTENT], DP_HEALTH_WARNING);
  back = 0;
  for (int r = 1; r <= 10 && !back; r++) {
    healthy(o, 0);
    if (feed(h, 0, o).rule[DP_RULE_INTERMITTENT] == DP_HEALTH_OK)
      back = r;
  }
  if (back == 0 || back > 5)
    fail_msg("intermittent cleared after %d healthy rounds, want <= 5", back);
  dp_health_free(h);
}

/* The intermittent rule counts full rounds, however many confirmations
 * the bad ones brought: every third round 10x slower, each confirmed
 * twice (once still slow, once after the window) as at ProbeInterval 60,
 * is on by the third bad round and stays on between the windows. */
static void test_intermittent_counts_full_rounds(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  dp_health_verdict_t v;
  int on_at = -1, off_after = 0;
  for (int r = 0; r < 12; r++) {
    if (r % 3 == 0) {
      slowed(o, 10, 0);
      v = feed(h, 0, o);
      confirm_round(h, 10);
      v = confirm_round(h, 1);
    } else {
      healthy(o, 0);
      v = feed(h, 0, o);
    }
    if (on_at < 0 && v.rule[DP_RULE_INTERMITTENT] == DP_HEALTH_WARNING)
      on_at = r;
    if (on_at >= 0 && v.rule[DP_RULE_INTERMITTENT] == DP_HEALTH_OK)
      off_after = r;
  }
  if (on_at < 0 || on_at > 7)
    fail_msg("intermittent on at full round %d, want by 7 (3 bad in 10)",
             on_at);
  if (off_after)
    fail_msg("intermittent off at round %d between the windows", off_after);
  assert_int_equal(v.intermittent, 3); /* rounds 3, 6 and 9 of the last 10 */
  dp_health_free(h);
}

/* A healthy round with tails: p99 3x p50 on both probes, `ops` I/Os each;
 * probe `fat` (or none: -1) with its p99 f times further out. */
static void tailed(dp_health_obs_t o[2], double j, int fat, double f,
                   uint64_t ops) {
  healthy(o, j);
  for (int k = 0; k < 2; k++) {
    o[k].p99_s = 3 * o[k].p50_s * (k == fat ? f : 1);
    o[k].ops = ops;
  }
}

/* The first round (1-based) of up to max at which probe `fat`'s p99 x f
 * puts the target at WARNING by tail; -1 if none. *why: its message. */
static int tail_rounds(uint64_t ops, int fat, double f, int max, char *why,
                       size_t whylen) {
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  dp_health_obs_t o[2];
  dp_health_verdict_t v;
  for (int r = 0; r < 30; r++) {
    tailed(o, (r % 5) / 4.0, -1, 1, ops);
    v = feed(h, 0, o);
    assert_int_equal(v.level, DP_HEALTH_OK);
  }
  int at = -1;
  for (int r = 1; r <= max && at < 0; r++) {
    tailed(o, (r % 5) / 4.0, fat, f, ops);
    v = feed(h, 0, o);
    if (v.rule[DP_RULE_TAIL] != DP_HEALTH_OK) {
      at = r;
      assert_int_equal(v.why, DP_RULE_TAIL);
      dp_health_describe(h, 0, &v, why, whylen);
    }
  }
  dp_health_free(h);
  return at;
}

/* A tail fattened on one probe only (p99 x5 on QD1 or on QD32, p50 and the
 * other probe's tail unchanged) warns by the one-probe tail rule at its
 * 12th round of 15, naming the probe; not in rounds of fewer than 200
 * I/Os (a p99 that is the one or two slowest I/Os), and when the count is
 * not known, as in old recordings, it judges. */
static void test_tail_one_probe(void **state) {
  (void)state;
  char why[512] = "";
  assert_int_equal(tail_rounds(1000, 0, 5, 40, why, sizeof(why)), 12);
  assert_non_null(strstr(why, "by tail: probe randread-qd1 p99 at 5"));
  assert_non_null(strstr(why, "in 12 of the last 15 rounds"));
  assert_int_equal(tail_rounds(1000, 1, 5, 40, why, sizeof(why)), 12);
  assert_non_null(strstr(why, "probe randread-qd32 p99"));
  assert_int_equal(tail_rounds(0, 0, 5, 40, why, sizeof(why)), 12);
  assert_int_equal(tail_rounds(150, 0, 5, 100, why, sizeof(why)), -1);
  /* 3x (below the level) never warns; the whole disk's tail still does */
  assert_int_equal(tail_rounds(1000, 0, 3, 100, why, sizeof(why)), -1);
  /* a fattened tail is not learned: it still warns after 100 rounds */
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  dp_health_obs_t o[2];
  dp_health_verdict_t v;
  for (int r = 0; r < 30; r++) {
    tailed(o, (r % 5) / 4.0, -1, 1, 1000);
    feed(h, 0, o);
  }
  for (int r = 0; r < 100; r++) {
    tailed(o, (r % 5) / 4.0, 0, 5, 1000);
    v = feed(h, 0, o);
  }
  assert_int_equal(v.rule[DP_RULE_TAIL], DP_HEALTH_WARNING);
  assert_true(v.tail_probe >= 4.5);
  assert_int_equal(v.tail_which, 0);
  /* and it clears within 4 rounds of the recovery */
  int back = 0;
  for (int r = 1; r <= 10 && !back; r++) {
    tailed(o, 0, -1, 1, 1000);
    if (feed(h, 0, o).rule[DP_RULE_TAIL] == DP_HEALTH_OK)
      back = r;
  }
  if (back == 0 || back > 4)
    fail_msg("one-probe tail cleared after %d rounds, want <= 4", back);
  dp_health_free(h);
}

/* A sustained fault that ended is not intermittent: 12 rounds 10x slower,
 * then healthy rounds, never say "intermittent" (it used to hold the
 * target at WARNING for 5 more rounds), and a window still full of the
 * fault fires no windowed rule (capacity's collapse fired during a
 * recovery). The recovering rounds are suspect, so confirmations count
 * towards the recovery's 3 rounds below 1.3x; the collapsed probe's own
 * capacity is judged on full rounds only. */
static void test_recovery_after_sustained_fault(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  dp_health_verdict_t v;
  for (int r = 0; r < 12; r++) {
    slowed(o, 10, 0);
    v = feed(h, 0, o);
  }
  assert_int_equal(v.level, DP_HEALTH_FAILURE);
  int ok_at = 0, suspect = 0;
  for (int r = 1; r <= 10; r++) {
    healthy(o, 0);
    v = feed(h, 0, o);
    assert_int_equal(v.rule[DP_RULE_INTERMITTENT], DP_HEALTH_OK);
    if (r >= 2) /* the collapsed probe's own loss back 2 rounds */
      assert_int_equal(v.rule[DP_RULE_CAPACITY], DP_HEALTH_OK);
    suspect |= v.level != DP_HEALTH_OK && v.suspect;
    if (!ok_at && v.level == DP_HEALTH_OK)
      ok_at = r;
  }
  assert_true(suspect);
  if (ok_at == 0 || ok_at > 3)
    fail_msg("OK after %d healthy rounds, want <= 3 (clear_rounds)", ok_at);
  dp_health_free(h);

  /* the same recovery with confirmation rounds: OK at the second one */
  h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  for (int r = 0; r < 12; r++) {
    slowed(o, 10, 0);
    feed(h, 0, o);
  }
  healthy(o, 0);
  v = feed(h, 0, o);
  assert_int_equal(v.rule[DP_RULE_BASELINE], DP_HEALTH_OK);
  assert_true(v.level >= DP_HEALTH_WARNING);
  assert_int_equal(v.why, DP_RULE_CAPACITY); /* the deep probe's collapse */
  v = confirm_round(h, 1);
  v = confirm_round(h, 1);
  /* the deep probe's own loss must be back for 2 full rounds: its rule
   * holds the target through the confirmations, then the next full
   * round clears it (the confirmations made the 3 rounds below 1.3x) */
  assert_true(v.level >= DP_HEALTH_WARNING);
  ok_at = 0;
  for (int r = 1; r <= 4 && !ok_at; r++) {
    healthy(o, 0);
    if (feed(h, 0, o).level == DP_HEALTH_OK)
      ok_at = r;
  }
  if (ok_at != 1)
    fail_msg("OK at full round %d after the confirmations, want 1", ok_at);
  dp_health_free(h);

  /* a 2x fault's recovery ends on a confirmation: its OKAY still gives
   * every probe's figures (the deep probe's from its latest round) */
  h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  for (int r = 0; r < 8; r++) {
    slowed(o, 2, 0);
    feed(h, 0, o);
  }
  healthy(o, 0);
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  assert_true(v.recovering && v.suspect);
  v = confirm_round(h, 1);
  v = confirm_round(h, 1);
  assert_int_equal(v.level, DP_HEALTH_OK);
  assert_true(v.changed);
  char words[400];
  dp_health_describe(h, 0, &v, words, sizeof(words));
  assert_non_null(strstr(words, "randread-qd32 p50 0.95x IOPS 1.05x"));
  if (strstr(words, "nan") != NULL)
    fail_msg("the OKAY's words have a NaN: %s", words);
  dp_health_free(h);
}

/* A fault every third round, confirmed as the monitor does (up to two
 * confirmations while a round is suspect): the first window's recovery is
 * confirmed fast (one OKAY), later ones are held between the windows, so
 * the target does not flap OKAY / WARNING each window. */
static void test_intermittent_held_between_windows(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  dp_health_verdict_t v;
  int okays = 0;
  dp_health_level_t last = DP_HEALTH_OK;
  for (int r = 0; r < 15; r++) {
    double f = r % 3 == 0 ? 10 : 1;
    slowed(o, f, 0);
    v = feed(h, 0, o);
    for (int k = 0; k < 2 && v.suspect; k++)
      v = confirm_round(h, f);
    okays += last != DP_HEALTH_OK && v.level == DP_HEALTH_OK;
    last = v.level;
  }
  if (okays > 1)
    fail_msg("%d OKAYs during the fault, want at most 1", okays);
  assert_true(v.level >= DP_HEALTH_WARNING); /* held, between windows */
  dp_health_free(h);
}

/* A fault's whole life, round by round: `fault` rounds of inject(o, j),
 * then `after` healthy rounds. Counts OKAY transitions during the fault
 * and on rounds whose own slowdown is >= 1.3x, and returns the rounds from
 * the first warning's onset (0: none) and from the recovery to the OKAY
 * (0: none within `after`). */
typedef void (*inject_fn)(dp_health_obs_t o[2], int j);
typedef struct {
  int warned_at, ok_in_fault, ok_at_slow, okay_after, again;
} life_t;
static life_t fault_life(inject_fn inject, int fault, int after) {
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  life_t l = {0, 0, 0, 0, 0};
  dp_health_obs_t o[2];
  for (int j = 0; j < fault + after; j++) {
    healthy(o, (j % 5) / 4.0);
    if (j < fault)
      inject(o, j);
    dp_health_verdict_t v = feed(h, 0, o);
    int okay = v.changed && v.level == DP_HEALTH_OK;
    if (!l.warned_at && v.level != DP_HEALTH_OK)
      l.warned_at = j + 1;
    l.ok_in_fault += okay && j < fault;
    l.ok_at_slow += okay && v.slowdown >= 1.3;
    if (okay && j >= fault && !l.okay_after)
      l.okay_after = j - fault + 1;
    else if (l.okay_after && v.changed)
      l.again++;
    if (okay) { /* the words show each probe against its baseline */
      char words[400];
      dp_health_describe(h, 0, &v, words, sizeof(words));
      assert_non_null(strstr(words, "OKAY: back to its baseline: "
                                    "randread-qd1 p50 "));
      assert_non_null(strstr(words, "randread-qd32 p50 "));
    }
  }
  dp_health_free(h);
  return l;
}

static void scale_probe(dp_health_obs_t *o, double f) {
  o->p50_s *= f;
  o->mean_s *= f;
  o->iops /= f;
}
/* QD32 lost a third of its IOPS, then from the 10th round the whole disk
 * 3x on top: the capacity rule's clearing must not hand over to the
 * baseline rule through an OKAY */
static void cap_then_disk(dp_health_obs_t o[2], int j) {
  scale_probe(&o[1], 3);
  if (j >= 10)
    for (int k = 0; k < 2; k++)
      scale_probe(&o[k], 3);
}
/* QD32 at a third while the first probe is noisy (every 3rd round 2x):
 * the capacity rule divides by the first probe's loss, and must not flap */
static void cap_noisy_first(dp_health_obs_t o[2], int j) {
  scale_probe(&o[1], 3);
  if (j % 3 == 0)
    scale_probe(&o[0], 2);
}
static void alt3(dp_health_obs_t o[2], int j) {
  if (j % 2 == 0)
    for (int k = 0; k < 2; k++)
      scale_probe(&o[k], 3);
}
static void alt2(dp_health_obs_t o[2], int j) {
  if (j % 2 == 0)
    for (int k = 0; k < 2; k++)
      scale_probe(&o[k], 2);
}
/* a token bucket: the first probe's IOPS halved, mean doubled, p50 flat */
static void qd1_throttled(dp_health_obs_t o[2], int j) {
  (void)j;
  o[0].mean_s *= 2;
  o[0].iops /= 2;
}
/* as a real blkio throttle at half QD1's rate did: IOPS / 2, mean 1.8x,
 * p50 1.3x (the deep probe capped far more) */
static void qd1_throttled_blkio(dp_health_obs_t o[2], int j) {
  (void)j;
  o[0].p50_s *= 1.3;
  o[0].mean_s *= 1.8;
  o[0].iops /= 2;
  scale_probe(&o[1], 8);
}
static void disk2(dp_health_obs_t o[2], int j) {
  (void)j;
  for (int k = 0; k < 2; k++)
    scale_probe(&o[k], 2);
}

static void test_fault_lives(void **state) {
  (void)state;
  static const struct {
    const char *name;
    inject_fn inject;
    int warn_within;
  } cases[] = {{"QD32 /3 then disk 3x", cap_then_disk, 5},
               {"QD32 /3, QD1 noisy", cap_noisy_first, 5},
               {"alternate rounds 3x", alt3, 20},
               {"alternate rounds 2x", alt2, 30},
               {"QD1 IOPS /2, p50 flat", qd1_throttled, 6},
               {"QD1 IOPS /2, p50 1.3x, QD32 /8", qd1_throttled_blkio, 6},
               {"disk 2x", disk2, 10}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    life_t l = fault_life(cases[c].inject, 40, 20);
    if (l.warned_at == 0 || l.warned_at > cases[c].warn_within)
      fail_msg("%s: warned at round %d, want 1..%d", cases[c].name, l.warned_at,
               cases[c].warn_within);
    if (l.ok_in_fault || l.ok_at_slow)
      fail_msg("%s: %d OKAYs during the fault, %d at a slowdown >= 1.3x",
               cases[c].name, l.ok_in_fault, l.ok_at_slow);
    if (l.okay_after == 0 || l.okay_after > 5 || l.again)
      fail_msg("%s: OKAY %d rounds after the recovery (want 1..5), %d "
               "changes after it",
               cases[c].name, l.okay_after, l.again);
  }
}

/* A recovered target is recovering, not OK, while its rounds are still
 * slow (S >= 1.3) though no rule fires; and at the OKAY the windows start
 * afresh: a warn-slow window full of the fault does not fire again on one
 * slow round after it. */
static void test_recovering_and_fresh_windows(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  dp_health_verdict_t v;
  for (int r = 0; r < 8; r++) {
    slowed(o, 2, 0);
    v = feed(h, 0, o);
  }
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  for (int r = 0; r < 6; r++) { /* ~1.35x its baseline: no rule, not back */
    slowed(o, 1.42, 0);
    v = feed(h, 0, o);
    assert_int_equal(v.level, DP_HEALTH_WARNING);
  }
  assert_true(v.recovering);
  assert_string_equal(v.why_detail, "recovering");
  char words[400];
  dp_health_describe(h, 0, &v, words, sizeof(words));
  assert_non_null(strstr(words, "WARNING, recovering from warn"));
  assert_non_null(strstr(words, "OKAY after 3 rounds in a row below 1.3x"));
  for (int r = 0; r < 3; r++) {
    healthy(o, 0);
    v = feed(h, 0, o);
  }
  assert_int_equal(v.level, DP_HEALTH_OK);
  assert_true(v.changed);
  slowed(o, 1.5, 0); /* one slow round: warn-slow's window starts afresh */
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_OK);
  dp_health_free(h);

  /* after a fault's OKAY, slow rounds now and then are not "recurring":
   * a sustained fault's 20 rounds at 10x are one long spell, not a fault
   * that comes and goes, and an alternating fault's rounds before its
   * OKAY start afresh */
  for (int alt = 0; alt < 2; alt++) {
    h = make(1, DP_MEDIA_SSD);
    arm(h, 0, 30);
    for (int r = 0; r < 20; r++) {
      slowed(o, alt ? (r % 2 ? 1 : 3) : 10, 0);
      feed(h, 0, o);
    }
    int ok = 0;
    for (int r = 0; r < 10 && !ok; r++) {
      healthy(o, 0);
      ok = feed(h, 0, o).level == DP_HEALTH_OK;
    }
    assert_true(ok);
    for (int r = 0; r < 6; r++) {
      if (r % 3 == 0)
        slowed(o, 1.75, 0);
      else
        healthy(o, 0);
      v = feed(h, 0, o);
      if (v.level != DP_HEALTH_OK)
        fail_msg("%s fault, round %d after the OKAY: %s by %s",
                 alt ? "alternating" : "sustained", r,
                 dp_health_level_name(v.level), v.why_detail);
    }
    dp_health_free(h);
  }
}

/* A target that could not probe: FAILURE by probing until its next round,
 * then recovering (named) for the recovery's 3 rounds, and its OKAY pairs
 * with the FAILURE's rule. */
static void test_not_probing_recovery(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_verdict_t v;
  dp_health_not_probing(h, 0, "cannot open: No such device", &v);
  assert_int_equal(v.level, DP_HEALTH_FAILURE);
  assert_int_equal(v.why, DP_RULE_PROBING);
  dp_health_obs_t o[2];
  healthy(o, 0);
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  assert_true(v.recovering);
  assert_int_equal(v.why, DP_RULE_PROBING);
  char words[400];
  dp_health_describe(h, 0, &v, words, sizeof(words));
  assert_non_null(strstr(words, "WARNING, recovering from probing"));
  feed(h, 0, o);
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_OK);
  assert_true(v.changed);
  assert_int_equal(v.why, DP_RULE_PROBING);
  dp_health_free(h);
}

/* Each notice once, whatever restarts fall between a WARNING and its
 * OKAY: the state file keeps the level last judged (and an open stall's
 * probe); restored, the target is held there -- no second WARNING while
 * the fault lasts, the OKAY through the recovery once it ends (unarmed:
 * at its first round), naming the rule of the WARNING. A target OK at the
 * save keeps no line; a bad level line is refused with its line. */
static void test_level_across_restart(void **state) {
  (void)state;
  dp_health_t *h = make(2, DP_MEDIA_SSD);
  arm(h, 0, 30);
  arm(h, 1, 3);
  assert_true(rounds_to_warn(h, 4, 10) > 0);
  dp_health_rule_t why;
  assert_int_equal(dp_health_level(h, 0, &why), DP_HEALTH_WARNING);
  dp_health_rule_t warned_by = why;
  dp_health_set_stall_open(h, 1, "randread-qd32");
  char *text;
  size_t len;
  assert_int_equal(dp_health_state_format(h, &text, &len), 0);
  char want[128];
  snprintf(want, sizeof(want), "level t0 warning %s\n",
           dp_health_rule_name(warned_by));
  assert_non_null(strstr(text, want));
  assert_non_null(strstr(text, "stalled t1 randread-qd32\n"));
  assert_null(strstr(text, "level t1 ")); /* OK: no line */
  dp_health_free(h);

  /* restart 1: the fault lasts -- no new notice */
  char err[256] = "";
  h = make(2, DP_MEDIA_SSD);
  assert_int_equal(dp_health_state_parse(h, text, len, err, sizeof(err)), 0);
  assert_int_equal(dp_health_level(h, 0, &why), DP_HEALTH_WARNING);
  assert_int_equal(why, warned_by);
  assert_string_equal(dp_health_stall_open(h, 1), "randread-qd32");
  assert_string_equal(dp_health_stall_open(h, 0), "");
  dp_health_obs_t o[2];
  slowed(o, 4, 0);
  dp_health_verdict_t v = feed(h, 0, o);
  assert_true(v.level >= DP_HEALTH_WARNING);
  assert_false(v.changed && v.level == DP_HEALTH_WARNING);
  free(text);
  assert_int_equal(dp_health_state_format(h, &text, &len), 0);
  dp_health_free(h);

  /* restart 2: recovered -- held (recovering), then one OKAY by the rule
   * of the WARNING */
  h = make(2, DP_MEDIA_SSD);
  assert_int_equal(dp_health_state_parse(h, text, len, err, sizeof(err)), 0);
  int okays = 0, warnings = 0;
  for (int r = 0; r < 8; r++) {
    healthy(o, (r % 5) / 4.0);
    v = feed(h, 0, o);
    if (r == 0) {
      assert_int_equal(v.level, DP_HEALTH_WARNING);
      assert_true(v.recovering);
    }
    okays += v.changed && v.level == DP_HEALTH_OK;
    warnings += v.changed && v.level != DP_HEALTH_OK;
    if (v.changed && v.level == DP_HEALTH_OK)
      assert_int_equal(v.why, warned_by);
  }
  assert_int_equal(okays, 1);
  assert_int_equal(warnings, 0);
  /* t1 is not armed: restored at FAILURE by probing, its first round is
   * the OKAY */
  free(text);
  const char *t1 = "diskprobe-health 1\nlevel t1 failure probing\nend\n";
  assert_int_equal(dp_health_state_parse(h, t1, strlen(t1), err, sizeof(err)),
                   0);
  assert_int_equal(dp_health_level(h, 1, NULL), DP_HEALTH_FAILURE);
  v = feed(h, 1, o);
  assert_int_equal(v.level, DP_HEALTH_OK);
  assert_true(v.changed);
  assert_int_equal(v.why, DP_RULE_PROBING);
  /* refused, with the line; nothing restored */
  static const char *const bad[] = {
      "diskprobe-health 1\nlevel t0 orange baseline\nend\n",
      "diskprobe-health 1\nlevel t0 warning nosuchrule\nend\n",
      "diskprobe-health 1\nlevel t0 warning\nend\n",
      "diskprobe-health 1\nstalled t0\nend\n",
      "diskprobe-health 1\nlevel t0 warning baseline\nprobe t0 x\nend\n"};
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    assert_int_equal(
        dp_health_state_parse(h, bad[k], strlen(bad[k]), err, sizeof(err)),
        -EINVAL);
    assert_non_null(strstr(err, "line "));
    assert_int_equal(dp_health_level(h, 0, NULL), DP_HEALTH_OK);
  }
  dp_health_free(h);
}

/* A poisoned state file: every p50 and mean a thousand times the disk's
 * (as if its rounds had been 1000x slower) is refused when its checksum
 * does not match, and when it does (written by a save), its baselines go
 * on probation: three first rounds 10x or more faster drop them, said;
 * relearned, a 500x slowdown -- which the poisoned baselines read as 0.5x
 * -- is seen again. A real fault at the
 * restart (rounds slower than the restored baseline) keeps them. */
static void test_poisoned_state(void **state) {
  (void)state;
  /* a tracker armed on rounds a thousand times slower (no ceiling, so that
   * it learns them) */
  dp_health_conf_t c;
  dp_health_conf_init(&c);
  dp_health_t *h;
  assert_int_equal(dp_health_new(&h, &c, 1), 0);
  assert_int_equal(dp_health_set_target(h, 0, "t0", 2, names2, keys2,
                                        DP_MEDIA_SSD, "M", 1e9),
                   0);
  dp_health_obs_t o[2];
  for (int r = 0; r < 25; r++) {
    slowed(o, 1e3, (r % 5) / 4.0);
    feed(h, 0, o);
  }
  char *text;
  size_t len;
  assert_int_equal(dp_health_state_format(h, &text, &len), 0);
  dp_health_free(h);
  assert_non_null(strstr(text, "diskprobe-health 2\n"));
  assert_non_null(strstr(text, "\nsum "));
  char err[256];

  /* one byte changed: refused by its checksum */
  char *p50 = strstr(text, "\np50 ");
  assert_non_null(p50);
  char *edited = strdup(text);
  edited[p50 - text + 5] = edited[p50 - text + 5] == '1' ? '2' : '1';
  h = make(1, DP_MEDIA_SSD);
  assert_int_equal(dp_health_state_parse(h, edited, len, err, sizeof(err)),
                   -EINVAL);
  assert_non_null(strstr(err, "checksum does not match"));
  /* the sum line gone: refused too */
  char *sum = strstr(edited, "\nsum ");
  memcpy(sum + 1, "end\n", 5);
  assert_int_equal(
      dp_health_state_parse(h, edited, strlen(edited), err, sizeof(err)),
      -EINVAL);
  assert_non_null(strstr(err, "no checksum line"));
  free(edited);

  /* the file as saved: loaded, then the disk's own rounds drop it */
  assert_int_equal(dp_health_state_parse(h, text, len, err, sizeof(err)), 0);
  dp_health_verdict_t v;
  for (int r = 0; r < DP_HEALTH_PROBATION_ROUNDS; r++) {
    healthy(o, 0);
    v = feed(h, 0, o);
    if (r < DP_HEALTH_PROBATION_ROUNDS - 1) {
      assert_null(v.relearned);
      assert_true(v.armed);
    }
  }
  assert_non_null(v.relearned);
  assert_non_null(strstr(v.relearned, "not this disk's; learning them afresh"));
  assert_false(v.armed);
  /* learned afresh: a 500x slowdown is found */
  arm(h, 0, 20);
  assert_true(rounds_to_warn(h, 500, 5) > 0);
  dp_health_free(h);

  /* a real fault at the restart: slower than the restored baseline keeps
   * it (and the rules judge it) */
  h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 25);
  free(text);
  assert_int_equal(dp_health_state_format(h, &text, &len), 0);
  dp_health_free(h);
  h = make(1, DP_MEDIA_SSD);
  assert_int_equal(dp_health_state_parse(h, text, len, err, sizeof(err)), 0);
  int warned = 0;
  for (int r = 0; r < 6; r++) {
    slowed(o, 5, 0);
    v = feed(h, 0, o);
    assert_null(v.relearned);
    assert_true(v.armed);
    warned |= v.level >= DP_HEALTH_WARNING;
  }
  assert_true(warned);
  /* and a version 1 file (no sum) still loads */
  const char *v1 = "diskprobe-health 1\ninterval t0 10000000000\nend\n";
  assert_int_equal(dp_health_state_parse(h, v1, strlen(v1), err, sizeof(err)),
                   0);
  free(text);
  dp_health_free(h);
}

static void test_state_file(void **state) {
  (void)state;
  char dir[] = "/tmp/dp-test-health.XXXXXX", path[64], cmd[128];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/health.state", dir);
  dp_health_t *h = make(2, DP_MEDIA_SSD);
  arm(h, 0, 25);
  arm(h, 1, 5);
  char err[256] = "";
  assert_int_equal(dp_health_save(h, path, err, sizeof(err)), 0);
  assert_int_equal(access(path, F_OK), 0);
  dp_health_free(h);

  /* a restart: armed at once with the same baseline */
  h = make(2, DP_MEDIA_SSD);
  assert_int_equal(dp_health_load(h, path, err, sizeof(err)), 0);
  dp_health_obs_t o[2];
  healthy(o, 0);
  dp_health_verdict_t v = feed(h, 0, o);
  assert_true(v.armed);
  assert_int_equal(v.baseline_rounds, 25);
  v = feed(h, 1, o);
  assert_false(v.armed);
  assert_int_equal(v.baseline_rounds, 5);
  dp_health_free(h);

  /* a probe whose job changed does not inherit the baseline */
  dp_health_conf_t c;
  dp_health_conf_init(&c);
  assert_int_equal(dp_health_new(&h, &c, 1), 0);
  static const char *const other[] = {"randread/4096/1", "randread/8192/32"};
  assert_int_equal(
      dp_health_set_target(h, 0, "t0", 2, names2, other, DP_MEDIA_SSD, "M", 0),
      0);
  assert_int_equal(dp_health_load(h, path, err, sizeof(err)), 0);
  v = feed(h, 0, o);
  assert_false(v.armed); /* probe 0 starts afresh, so the target is unarmed */
  dp_health_free(h);

  /* corrupt: truncated, then garbage; nothing changes, the cause is said */
  int m = snprintf(cmd, sizeof(cmd), "head -c 300 %s > %s.cut", path, path);
  assert_true(m > 0 && (size_t)m < sizeof(cmd));
  assert_int_equal(system(cmd), 0);
  char cut[80];
  snprintf(cut, sizeof(cut), "%s.cut", path);
  h = make(2, DP_MEDIA_SSD);
  assert_int_equal(dp_health_load(h, cut, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "line"));
  v = feed(h, 0, o);
  assert_int_equal(v.baseline_rounds, 0);
  FILE *f = fopen(cut, "w");
  fputs("diskprobe-health 1\nprobe t0 randread-qd1 randread/8192/1 2\n"
        "p50 1e-4 banana\n",
        f);
  fclose(f);
  assert_int_equal(dp_health_load(h, cut, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "line 3"));
  f = fopen(cut, "w");
  fputs("something else\n", f);
  fclose(f);
  assert_int_equal(dp_health_load(h, cut, err, sizeof(err)), -EINVAL);
  assert_int_equal(dp_health_load(h, "/nonexistent/x", err, sizeof(err)),
                   -ENOENT);
  dp_health_free(h);
  fixture_remove(dir);
}

/* Loads a state file of `text` into h: the return code, the cause in err. */
static int load_text(dp_health_t *h, const char *text, char *err,
                     size_t errlen) {
  char path[] = "/tmp/dp-test-health-state.XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  err[0] = '\0';
  int rc = dp_health_load(h, path, err, errlen);
  unlink(path);
  return rc;
}

/* Each step of a load says what is wrong, with the line; none changes a
 * baseline; probes that do not exist now are skipped; a file saved with a
 * longer horizon keeps its newest values. */
static void test_state_file_steps(void **state) {
  (void)state;
  static const struct {
    const char *text, *err;
  } bad[] = {
      {"", "line 1: not a diskprobe health state file of version 1 or 2"},
      {"diskprobe-health 3\nend\n",
       "line 1: not a diskprobe health state file of version 1 or 2"},
      {"diskprobe-health 2\nend\n",
       "no checksum line before \"end\" (a truncated or edited file)"},
      {"diskprobe-health 1\nprobe t0\nend\n",
       "line 2: expected \"probe TARGET PROBE KEY N\""},
      {"diskprobe-health 1\nprobe t0 randread-qd1 randread/8192/1 9999\n",
       "line 2: 9999 values, more than 2880"},
      {"diskprobe-health 1\nprobe t0 randread-qd1 randread/8192/1 1\n"
       "p50 1e-4\nmean 1e-4\n",
       "line 5: the file ends inside a probe"},
      {"diskprobe-health 1\nprobe t0 randread-qd1 randread/8192/1 1\n"
       "p50 1e-4\nmean 1e-4 2e-4\niops 1e4\nend\n",
       "line 4: expected 1 positive values of mean"},
      {"diskprobe-health 1\nprobe t0 randread-qd1 randread/8192/1 1\n"
       "p50 1e-4\niops 1e4\nmean 1e-4\nend\n",
       "line 4: expected 1 positive values of mean"},
      {"diskprobe-health 1\nprobe t0 randread-qd1 randread/8192/1 1\n"
       "p50 1e-4\nmean 1e-4\niops 1e4\n",
       "line 5: no \"end\" line (a truncated file)"},
      {"diskprobe-health 1\nend", "line 2: too long"},
      {"diskprobe-health 1\ninterval t0 10s\nend\n",
       "line 2: expected \"interval TARGET NS\""},
      {"diskprobe-health 1\ninterval t0 10000000000\nprobe t0\nend\n",
       "line 3: expected \"probe TARGET PROBE KEY N\""},
  };
  char err[256];
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
    assert_int_equal(load_text(h, bad[j].text, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, bad[j].err);
  }
  /* a corrupt file's interval line is not kept either */
  assert_int_equal(dp_health_saved_interval_ns(h, 0), 0);
  assert_int_equal(load_text(h,
                             "diskprobe-health 1\ninterval t0 10000000000\n"
                             "interval gone 5\nend\n",
                             err, sizeof(err)),
                   0);
  assert_int_equal(dp_health_saved_interval_ns(h, 0), 10000000000ull);
  dp_health_obs_t o[2];
  healthy(o, 0);
  assert_int_equal(feed(h, 0, o).baseline_rounds, 0); /* nothing restored */
  dp_health_free(h);

  /* a target and a probe key that do not exist now are skipped; the
   * known probes are restored */
  dp_health_conf_t c;
  dp_health_conf_init(&c);
  c.horizon_rounds = 3;
  c.arm_rounds = 2;
  assert_int_equal(dp_health_new(&h, &c, 1), 0);
  assert_int_equal(
      dp_health_set_target(h, 0, "t0", 2, names2, keys2, DP_MEDIA_SSD, "M", 0),
      0);
  assert_int_equal(
      load_text(h,
                "diskprobe-health 1\n"
                "probe gone randread-qd1 randread/8192/1 1\n"
                "p50 1\nmean 1\niops 1\n"
                "probe t0 randread-qd1 randread/4096/1 1\n"
                "p50 1\nmean 1\niops 1\n"
                "probe t0 randread-qd1 randread/8192/1 4\n"
                "p50 9 1e-4 1e-4 1e-4\nmean 9 1.2e-4 1.2e-4 1.2e-4\n"
                "iops 1 8000 8000 8000\n"
                "probe t0 randread-qd32 randread/8192/32 3\n"
                "p50 3e-4 3e-4 3e-4\nmean 4e-4 4e-4 4e-4\n"
                "iops 8e4 8e4 8e4\n"
                "end\n",
                err, sizeof(err)),
      0);
  dp_health_verdict_t v = feed(h, 0, o);
  assert_int_equal(v.baseline_rounds, 3); /* 4 values, the newest 3 kept */
  assert_true(v.armed);
  assert_true(fabs(v.base_p50_s[0] - 1e-4) < 1e-9); /* the 9 was dropped */
  assert_true(fabs(v.base_iops[1] - 8e4) < 1e-3);
  assert_int_equal(v.level, DP_HEALTH_OK);
  dp_health_free(h);
}

/* The media classes themselves are test_blockdev's. */
static void test_media_classes_and_ceiling(void **state) {
  (void)state;
  assert_true(dp_media_ceiling_s(DP_MEDIA_NVME) <
              dp_media_ceiling_s(DP_MEDIA_SSD));
  assert_true(dp_media_ceiling_s(DP_MEDIA_SSD) <
              dp_media_ceiling_s(DP_MEDIA_HDD));

  /* an NVMe disk at 3 ms from its first round: the ceiling warns on the
   * third round, unarmed; an override of 10 ms keeps it quiet */
  for (int ovr = 0; ovr < 2; ovr++) {
    dp_health_conf_t c;
    dp_health_conf_init(&c);
    dp_health_t *h;
    assert_int_equal(dp_health_new(&h, &c, 1), 0);
    assert_int_equal(dp_health_set_target(h, 0, "n", 2, names2, keys2,
                                          DP_MEDIA_NVME, "", ovr ? 0.010 : 0),
                     0);
    dp_health_obs_t o[2];
    slowed(o, 30, 0); /* 3 ms */
    dp_health_verdict_t v;
    for (int r = 1; r <= 3; r++) {
      v = feed(h, 0, o);
      assert_false(v.armed);
      assert_int_equal(v.level,
                       ovr || r < 3 ? DP_HEALTH_OK : DP_HEALTH_WARNING);
    }
    if (!ovr)
      assert_int_equal(v.why, DP_RULE_CEILING);
    dp_health_free(h);
  }
}

static void test_peers(void **state) {
  (void)state;
  dp_health_t *h = make(4, DP_MEDIA_HDD);
  dp_health_obs_t ok[2], slow[2];
  dp_health_verdict_t v;
  /* one of four 4x slower than its siblings, from the start (unarmed) */
  for (int r = 1; r <= 3; r++) {
    healthy(ok, 0);
    slowed(slow, 4, 0);
    for (size_t i = 0; i < 3; i++)
      assert_int_equal(feed(h, i, ok).level, DP_HEALTH_OK);
    v = feed(h, 3, slow);
    assert_true(fabs(v.peer_ratio - 4) < 1e-6);
    assert_int_equal(v.level, r < 3 ? DP_HEALTH_OK : DP_HEALTH_WARNING);
  }
  assert_int_equal(v.why, DP_RULE_PEERS);
  dp_health_free(h);

  /* all four slowed together (host-wide load): no peer warning */
  h = make(4, DP_MEDIA_HDD);
  for (int r = 0; r < 10; r++) {
    slowed(slow, 4, 0);
    for (size_t i = 0; i < 4; i++) {
      v = feed(h, i, slow);
      assert_int_equal(v.rule[DP_RULE_PEERS], DP_HEALTH_OK);
    }
  }
  dp_health_free(h);

  /* two targets are no peer group */
  h = make(2, DP_MEDIA_HDD);
  healthy(ok, 0);
  slowed(slow, 4, 0);
  feed(h, 0, ok);
  v = feed(h, 1, slow);
  assert_true(isnan(v.peer_ratio));
  dp_health_free(h);
}

/* Peers are on other disks: two targets on one disk are not each other's
 * reference (dp_health_from_conf knows each target's disk). */
static void test_peers_on_other_disks(void **state) {
  (void)state;
  char dir[] = "/tmp/dp-test-peers.XXXXXX", err[256];
  assert_non_null(mkdtemp(dir));
  dp_target_conf_t tc[3];
  for (int i = 0; i < 3; i++) {
    char name[8];
    snprintf(name, sizeof(name), "t%d", i);
    dp_target_conf_init(&tc[i], name);
    assert_int_equal(dp_target_conf_set(&tc[i], "Path", dir, err, sizeof(err)),
                     0);
    assert_int_equal(dp_target_conf_finish(&tc[i], err, sizeof(err)), 0);
  }
  dp_plugin_conf_t pc;
  dp_plugin_conf_init(&pc);
  const char *disks[] = {"sda", "sda", "sdb"};
  dp_health_t *h;
  assert_int_equal(
      dp_health_from_conf(&h, &pc, tc, 3, disks, "/nonexistent-sysroot"), 0);
  dp_health_obs_t ok[3], slow[3];
  memset(ok, 0, sizeof(ok));
  for (int k = 0; k < 3; k++)
    ok[k] = (dp_health_obs_t){1e-4, 1.2e-4, 8000, 0, 0, 0, NAN, 0, 0};
  memcpy(slow, ok, sizeof(ok));
  for (int k = 0; k < 3; k++) {
    slow[k].p50_s *= 4;
    slow[k].mean_s *= 4;
    slow[k].iops /= 4;
  }
  dp_health_verdict_t v;
  feed(h, 1, slow); /* t1 on sda with t0: slow too */
  feed(h, 2, ok);   /* t2 on sdb */
  v = feed(h, 0, slow);
  assert_true(isnan(v.peer_ratio)); /* one peer on another disk: no group */
  v = feed(h, 2, ok);
  assert_true(v.peer_ratio > 0); /* t2's peers t0 and t1 are on sda */
  assert_true(fabs(v.peer_ratio - 0.25) < 1e-6);
  dp_health_free(h);
  rmdir(dir);
}

static void test_stall_and_errors_immediate(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  healthy(o, 0);
  o[1].stalled = 1;
  o[1].iops = 0;
  dp_health_verdict_t v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_FAILURE);
  assert_int_equal(v.why, DP_RULE_STALL);
  healthy(o, 0);
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_OK);
  o[0].errors = 3;
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_FAILURE);
  assert_int_equal(v.why, DP_RULE_ERRORS);
  assert_string_equal(dp_health_rule_name(v.why), "errors");
  dp_health_free(h);
}

/* Writes refused with ENOSPC (a full copy-on-write filesystem or thin
 * volume): a WARNING that says the filesystem is full, not a FAILURE by
 * I/O errors; such a round teaches the baseline nothing. Real I/O errors
 * with it are still a FAILURE. */
static void test_nospace_warns(void **state) {
  (void)state;
  dp_health_t *h = make(1, DP_MEDIA_SSD);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  healthy(o, 0);
  o[1].nospace = 16;
  o[1].iops = NAN; /* nothing completed: not measured */
  dp_health_verdict_t v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  assert_int_equal(v.why, DP_RULE_ERRORS);
  assert_int_equal(v.rule[DP_RULE_ERRORS], DP_HEALTH_WARNING);
  assert_string_equal(v.why_detail, "no-space");
  char words[400];
  dp_health_describe(h, 0, &v, words, sizeof(words));
  if (strstr(words, "WARNING by errors: no space left on device (ENOSPC)") !=
          words ||
      strstr(words, "the filesystem is full") == NULL ||
      strstr(words, "I/O errors") != NULL)
    fail_msg("words: %s", words);
  o[0].errors = 2;
  v = feed(h, 0, o);
  assert_int_equal(v.level, DP_HEALTH_FAILURE);
  assert_string_equal(v.why_detail, "errors");
  healthy(o, 0);
  assert_int_equal(feed(h, 0, o).level, DP_HEALTH_OK);
  dp_health_free(h);
}

/* The figures come first: a target name of 63 characters (and, in the
 * notification, a long FQDN after it) cannot push them past collectd's
 * 256-byte cut. */
static void test_describe_figures_first(void **state) {
  (void)state;
  dp_health_conf_t c;
  dp_health_conf_init(&c);
  dp_health_t *h;
  assert_int_equal(dp_health_new(&h, &c, 1), 0);
  char name[64];
  memset(name, 'n', 63);
  name[63] = '\0';
  assert_int_equal(
      dp_health_set_target(h, 0, name, 2, names2, keys2, DP_MEDIA_SSD, "M", 0),
      0);
  arm(h, 0, 30);
  dp_health_obs_t o[2];
  slowed(o, 10, 0);
  feed(h, 0, o);
  dp_health_verdict_t v = feed(h, 0, o);
  assert_string_equal(v.why_detail, "warn-fast");
  char words[600];
  dp_health_describe(h, 0, &v, words, sizeof(words));
  const char *fig = strstr(words, "IOPS");
  const char *tgt = strstr(words, name);
  if (strncmp(words, "WARNING by warn-fast: probe randread-qd", 39) != 0 ||
      fig == NULL || fig - words > 120 || tgt == NULL || tgt < fig ||
      strstr(words, "threshold 4x") == NULL ||
      strstr(words, "threshold 4x") - words > 200)
    fail_msg("figures not first: %s", words);
  dp_health_free(h);
}

/* The disk under target 1 flagged fail-slow among its peers: target 1
 * WARNING by failslow from its next round (with the score and the peers
 * in the words), target 0 untouched; unflagged: OK at the next round. */
static void test_failslow_rule(void **state) {
  (void)state;
  dp_health_t *h = make(2, DP_MEDIA_HDD);
  arm(h, 0, 30);
  arm(h, 1, 30);
  dp_health_obs_t o[2];
  healthy(o, 0);
  dp_health_set_failslow(h, 1, 1, 2.37, 11);
  dp_health_verdict_t v = feed(h, 1, o);
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  assert_int_equal(v.why, DP_RULE_FAILSLOW);
  assert_int_equal(v.rule[DP_RULE_FAILSLOW], DP_HEALTH_WARNING);
  assert_int_equal(v.rule[DP_RULE_BASELINE], DP_HEALTH_OK);
  assert_true(v.changed);
  assert_string_equal(dp_health_rule_name(v.why), "failslow");
  char words[400];
  dp_health_describe(h, 1, &v, words, sizeof(words));
  assert_non_null(strstr(words, "target t1"));
  assert_non_null(
      strstr(words, "failslow: its disk is 2.37x slower than its 11 peers"));
  assert_int_equal(feed(h, 0, o).level, DP_HEALTH_OK);
  /* a stall still outranks it */
  o[0].stalled = 1;
  v = feed(h, 1, o);
  assert_int_equal(v.level, DP_HEALTH_FAILURE);
  assert_int_equal(v.why, DP_RULE_STALL);
  healthy(o, 0);
  assert_int_equal(feed(h, 1, o).why, DP_RULE_FAILSLOW);
  dp_health_set_failslow(h, 1, 0, 1.02, 11);
  /* the stall's round is among the last 3: recovering, then OK */
  v = feed(h, 1, o);
  assert_int_equal(v.level, DP_HEALTH_WARNING);
  assert_true(v.recovering);
  v = feed(h, 1, o);
  assert_int_equal(v.level, DP_HEALTH_OK);
  assert_true(v.changed);
  dp_health_set_failslow(h, 7, 1, 3, 2); /* out of range: ignored */
  dp_health_free(h);
}

static void test_bad_conf(void **state) {
  (void)state;
  dp_health_conf_t c;
  dp_health_t *h;
  dp_health_conf_init(&c);
  c.arm_rounds = 0;
  assert_int_equal(dp_health_new(&h, &c, 1), -EINVAL);
  dp_health_conf_init(&c);
  c.warn_slow = 1.2; /* below clear: would never clear */
  assert_int_equal(dp_health_new(&h, &c, 1), -EINVAL);
  dp_health_conf_init(&c);
  c.horizon_rounds = DP_HEALTH_HORIZON_MAX + 1;
  assert_int_equal(dp_health_new(&h, &c, 1), -EINVAL);
  dp_health_conf_init(&c);
  c.recur_k = c.recur_n + 1; /* more rounds than the window holds */
  assert_int_equal(dp_health_new(&h, &c, 1), -EINVAL);
  dp_health_conf_init(&c);
  c.recur_level = c.clear; /* every healthy round would count */
  assert_int_equal(dp_health_new(&h, &c, 1), -EINVAL);
  dp_health_conf_init(&c);
  c.burst_shape = 0.5;
  assert_int_equal(dp_health_new(&h, &c, 1), -EINVAL);
  dp_health_conf_init(&c);
  c.cap_clear_n = 0; /* the capacity rule would never stay on */
  assert_int_equal(dp_health_new(&h, &c, 1), -EINVAL);
  dp_health_conf_init(&c);
  assert_int_equal(dp_health_new(&h, &c, 1), 0);
  dp_health_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arming),
      cmocka_unit_test(test_steps_and_hysteresis),
      cmocka_unit_test(test_single_spikes_ignored),
      cmocka_unit_test(test_long_degradation_not_learned),
      cmocka_unit_test(test_bursty_needs_mean_and_iops),
      cmocka_unit_test(test_confirmation_rounds),
      cmocka_unit_test(test_bursty_confirmation),
      cmocka_unit_test(test_crawl_is_failure),
      cmocka_unit_test(test_state_keeps_tail_baseline),
      cmocka_unit_test(test_arms_without_a_skipped_probe),
      cmocka_unit_test(test_windowed_rules_clear_fast),
      cmocka_unit_test(test_intermittent_counts_full_rounds),
      cmocka_unit_test(test_tail_one_probe),
      cmocka_unit_test(test_recovery_after_sustained_fault),
      cmocka_unit_test(test_intermittent_held_between_windows),
      cmocka_unit_test(test_fault_lives),
      cmocka_unit_test(test_recovering_and_fresh_windows),
      cmocka_unit_test(test_not_probing_recovery),
      cmocka_unit_test(test_state_file),
      cmocka_unit_test(test_level_across_restart),
      cmocka_unit_test(test_poisoned_state),
      cmocka_unit_test(test_state_file_steps),
      cmocka_unit_test(test_media_classes_and_ceiling),
      cmocka_unit_test(test_peers),
      cmocka_unit_test(test_peers_on_other_disks),
      cmocka_unit_test(test_stall_and_errors_immediate),
      cmocka_unit_test(test_nospace_warns),
      cmocka_unit_test(test_describe_figures_first),
      cmocka_unit_test(test_failslow_rule),
      cmocka_unit_test(test_bad_conf),
  };
  return cmocka_run_group_tests_name("health", tests, NULL, NULL);
}
