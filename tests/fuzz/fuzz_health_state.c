/*
 * fuzz_health_state.c - libFuzzer target for the health state file's
 * reader (dp_health_state_parse in src/health_state.c) and its round trip
 * with the writer (dp_health_state_format); the file I/O around them
 * (statefile.c) is test_statefile's.
 *
 * The input is parsed into a tracker of two targets ("db": randread-qd1
 * and seqread; "logs": randread-qd1) with a horizon of 40 rounds. Checked:
 *   - parse returns 0, -EINVAL (with a message) or -ENOMEM;
 *   - a refused text changes nothing: formatting the tracker then gives
 *     the same bytes as formatting an untouched one;
 *   - an accepted text round-trips: its format parses into a fresh
 *     tracker, whose format is byte for byte the same (also after a judged
 *     round has been learned on top of the parsed baselines);
 *   - the format parses into a tracker with a smaller horizon (8 rounds: a
 *     shorter BaselineHorizon after a restart), which keeps the newest.
 */
#include "health.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c))                                                                  \
      __builtin_trap();                                                        \
  } while (0)

static dp_health_t *tracker(unsigned horizon) {
  dp_health_conf_t c;
  dp_health_conf_init(&c);
  c.horizon_rounds = horizon;
  c.arm_rounds = horizon < 5 ? horizon : 5;
  dp_health_t *h = NULL;
  CHECK(dp_health_new(&h, &c, 2) == 0);
  static const char *const n0[] = {"randread-qd1", "seqread"};
  static const char *const k0[] = {"randread/8192/1", "seqread/1048576/4"};
  static const char *const n1[] = {"randread-qd1"};
  static const char *const k1[] = {"randread/8192/1"};
  CHECK(dp_health_set_target(h, 0, "db", 2, n0, k0, DP_MEDIA_SSD, "m", 0) == 0);
  CHECK(dp_health_set_target(h, 1, "logs", 1, n1, k1, DP_MEDIA_HDD, "", 0) ==
        0);
  return h;
}

typedef struct {
  char *text;
  size_t len;
} text_t;

static text_t format(const dp_health_t *h) {
  text_t t;
  CHECK(dp_health_state_format(h, &t.text, &t.len) == 0);
  return t;
}

/* Formats h and checks it is the same text as *a; frees both. */
static void same_text(const dp_health_t *h, text_t *a) {
  text_t b = format(h);
  CHECK(a->len == b.len && memcmp(a->text, b.text, a->len) == 0);
  free(a->text);
  free(b.text);
}

static void parse_ok(dp_health_t *h, const text_t *t) {
  char err[256] = "";
  int rc = dp_health_state_parse(h, t->text, t->len, err, sizeof(err));
  if (rc != 0) {
    fprintf(stderr, "round trip: parsing the formatted state failed (%d): %s\n",
            rc, err);
    CHECK(0);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dp_health_t *h = tracker(40);
  char err[256] = "";
  int rc = dp_health_state_parse(h, (const char *)data, size, err, sizeof(err));
  CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
  text_t a = format(h);
  if (rc != 0) {
    CHECK(rc != -EINVAL || err[0] != '\0');
    dp_health_t *fresh = tracker(40);
    same_text(fresh, &a); /* a refused text changed nothing */
    dp_health_free(fresh);
    dp_health_free(h);
    return 0;
  }

  /* the round trip */
  dp_health_t *h2 = tracker(40);
  parse_ok(h2, &a);

  /* a shorter horizon keeps the newest values */
  dp_health_t *small = tracker(8);
  parse_ok(small, &a);
  dp_health_free(small);
  same_text(h2, &a);

  /* a round learned on top of the parsed baselines, then formatted and
   * parsed */
  dp_health_verdict_t v;
  dp_health_obs_t obs[2] = {{.p50_s = 0.0002, .mean_s = 0.00025, .iops = 4000},
                            {.p50_s = 0.004, .mean_s = 0.005, .iops = 250}};
  dp_health_round(h2, 0, obs, &v);
  dp_health_round(h2, 1, obs, &v);
  a = format(h2);
  dp_health_t *h3 = tracker(40);
  parse_ok(h3, &a);
  same_text(h3, &a);

  dp_health_free(h3);
  dp_health_free(h2);
  dp_health_free(h);
  return 0;
}
