/* test_stall.c - a stall's life on a fake clock (plain numbers): the
 * fence (report or hold, brief or a stall after all, still fenced, ended,
 * a Timeout too short) and the pairing of its FAILURE with one OKAY. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stall.h"

#define S UINT64_C(1000000000)

/* A stall reported at once: fenced while I/O is outstanding (a failed
 * context too), the world sees it with its age, and it ends at the drain
 * with its length counted from when the I/O was issued. */
static void test_reported_stall(void **state) {
  (void)state;
  dp_stall_fence_t f = {0};
  assert_false(dp_stall_reported(&f, 0));
  assert_int_equal(dp_stall_begin(&f, 2, 1, 100 * S, 5 * S, 0),
                   DP_STALL_REPORT);
  assert_int_equal(f.phase, DP_STALL_REPORTED);
  assert_true(dp_stall_reported(&f, 2));
  assert_false(dp_stall_reported(&f, 1)); /* another target of the disk */
  assert_int_equal(dp_stall_age_ns(&f, 2, 101 * S), 6 * S);
  assert_int_equal(dp_stall_age_ns(&f, 1, 101 * S), 0);

  dp_stall_poll_t p = dp_stall_poll(&f, 32, 102 * S, 1);
  assert_true(p.fenced);
  assert_false(p.ended || p.brief || p.reported_now || p.timeout_short);
  p = dp_stall_poll(&f, -5, 103 * S, 1); /* failed context: stays fenced */
  assert_true(p.fenced);
  assert_false(p.ended);
  p = dp_stall_poll(&f, 0, 130 * S, 1);
  assert_false(p.fenced);
  assert_true(p.ended);
  assert_int_equal(p.stall_ns, 35 * S);
  assert_false(p.timeout_short); /* third poll: a real stall */
  assert_int_equal(f.phase, DP_STALL_NONE);
  assert_false(dp_stall_reported(&f, 2));
  /* a poll with nothing fenced says nothing */
  p = dp_stall_poll(&f, 0, 131 * S, 1);
  assert_false(p.fenced || p.ended || p.brief || p.reported_now);
}

/* Drained at the first poll with the queue explaining it: a Timeout too
 * short; without the queue's evidence, an ordinary (short) stall. */
static void test_timeout_short(void **state) {
  (void)state;
  dp_stall_fence_t f = {0};
  dp_stall_begin(&f, 0, 1, 10 * S, S / 100, 0);
  dp_stall_poll_t p = dp_stall_poll(&f, 0, 10 * S + S / 10, 1);
  assert_true(p.ended);
  assert_true(p.timeout_short);
  dp_stall_begin(&f, 0, 1, 20 * S, S / 100, 0);
  p = dp_stall_poll(&f, 0, 20 * S + S / 10, 0);
  assert_true(p.ended);
  assert_false(p.timeout_short);
}

/* Held (a Timeout found too short before): nothing is said until the
 * first poll; drained there it was brief (unfenced, nothing said), still
 * outstanding it is a stall after all, said then, and ends as one. */
static void test_held_stall(void **state) {
  (void)state;
  dp_stall_fence_t f = {0};
  assert_int_equal(dp_stall_begin(&f, 1, 0, 50 * S, S, 1), DP_STALL_HOLD);
  assert_int_equal(f.phase, DP_STALL_HELD);
  assert_false(dp_stall_reported(&f, 1)); /* the world does not see it */
  assert_int_equal(dp_stall_age_ns(&f, 1, 51 * S), 0);
  dp_stall_poll_t p = dp_stall_poll(&f, 0, 51 * S, 1);
  assert_true(p.brief);
  assert_false(p.fenced || p.ended || p.reported_now || p.timeout_short);
  assert_int_equal(f.phase, DP_STALL_NONE);

  dp_stall_begin(&f, 1, 0, 60 * S, S, 1);
  p = dp_stall_poll(&f, 4, 61 * S, 1);
  assert_true(p.fenced);
  assert_true(p.reported_now);
  assert_false(p.brief || p.ended);
  assert_true(dp_stall_reported(&f, 1));
  p = dp_stall_poll(&f, 4, 62 * S, 1);
  assert_true(p.fenced);
  assert_false(p.reported_now); /* said once */
  p = dp_stall_poll(&f, 0, 70 * S, 1);
  assert_true(p.ended);
  assert_int_equal(p.stall_ns, 11 * S);
  assert_false(p.timeout_short); /* a held one is known short already */
}

/* A clock that starts near zero (a fake one) never underflows. */
static void test_clock_near_zero(void **state) {
  (void)state;
  dp_stall_fence_t f = {0};
  dp_stall_begin(&f, 0, 0, S, 5 * S, 0);
  assert_int_equal(f.since_ns, 0);
  dp_stall_poll_t p = dp_stall_poll(&f, 0, 2 * S, 0);
  assert_int_equal(p.stall_ns, 2 * S);
}

/* One FAILURE per stall however many rounds stall, and one OKAY: not at
 * the drain, at the first clean round after it; a stall again before that
 * round keeps the first FAILURE and waits for its own drain. */
static void test_pairing(void **state) {
  (void)state;
  dp_stall_pair_t p = {0};
  char probe[DP_NAME_MAX], words[DP_STALL_WORDS_MAX + 64];
  assert_false(dp_stall_pair_round(&p, 1, probe, words, sizeof(words)));
  assert_true(dp_stall_pair_began(&p, "randread-qd32"));
  assert_false(dp_stall_pair_began(&p, "randread-qd1")); /* the same stall */
  assert_false(dp_stall_pair_round(&p, 0, probe, words, sizeof(words)));
  assert_false(dp_stall_pair_round(&p, 1, probe, words, sizeof(words)));
  dp_stall_pair_drained(&p, "stall ended after 12 s");
  assert_false(dp_stall_pair_round(&p, 0, probe, words, sizeof(words)));
  assert_false(dp_stall_pair_began(&p, "randread-qd32")); /* again */
  assert_false(dp_stall_pair_round(&p, 1, probe, words, sizeof(words)));
  dp_stall_pair_drained(&p, "stall ended after 3 s");
  assert_true(dp_stall_pair_round(&p, 1, probe, words, sizeof(words)));
  assert_string_equal(probe, "randread-qd32"); /* the FAILURE's probe */
  assert_string_equal(words,
                      "stall ended after 3 s; the next round ran without a "
                      "stall");
  assert_false(dp_stall_pair_round(&p, 1, probe, words, sizeof(words)));
  /* a drain with no FAILURE out is nothing */
  dp_stall_pair_drained(&p, "x");
  assert_false(dp_stall_pair_round(&p, 1, probe, words, sizeof(words)));
  /* and a new stall pages again */
  assert_true(dp_stall_pair_began(&p, NULL));
  assert_string_equal(p.probe, "");
}

static void test_queueing_explains(void **state) {
  (void)state;
  /* Timeout 0.01 at QD256 with 100 us reads: 25.6 ms queued */
  assert_true(dp_stall_queueing_explains(256, 100e-6, 0.010));
  assert_true(dp_stall_queueing_explains(32, 0.2, 2.0));      /* 6.4 s queued */
  assert_false(dp_stall_queueing_explains(1, 100e-6, 0.010)); /* no queue */
  /* the single read itself near the Timeout: the disk, not the queue */
  assert_false(dp_stall_queueing_explains(32, 2.6, 2.0));
  assert_false(dp_stall_queueing_explains(32, 1.5, 2.0));
  /* a queue far too short to explain it */
  assert_false(dp_stall_queueing_explains(32, 100e-6, 2.0));
  assert_false(dp_stall_queueing_explains(32, NAN, 2.0)); /* no evidence */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reported_stall),
      cmocka_unit_test(test_timeout_short),
      cmocka_unit_test(test_held_stall),
      cmocka_unit_test(test_clock_near_zero),
      cmocka_unit_test(test_pairing),
      cmocka_unit_test(test_queueing_explains),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
