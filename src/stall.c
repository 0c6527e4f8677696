/* stall.c - see stall.h. */
#include "stall.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

dp_stall_begin_t dp_stall_begin(dp_stall_fence_t *f, size_t target,
                                size_t probe, uint64_t seen_ns,
                                uint64_t timeout_ns, int hold) {
  f->phase = hold ? DP_STALL_HELD : DP_STALL_REPORTED;
  f->target = target;
  f->probe = probe;
  f->since_ns = seen_ns > timeout_ns ? seen_ns - timeout_ns : 0;
  f->polls = 0;
  return hold ? DP_STALL_HOLD : DP_STALL_REPORT;
}

dp_stall_poll_t dp_stall_poll(dp_stall_fence_t *f, int left, uint64_t now_ns,
                              int queueing) {
  dp_stall_poll_t r = {0};
  if (f->phase == DP_STALL_NONE)
    return r;
  f->polls++;
  if (f->phase == DP_STALL_HELD) {
    /* the first poll decides: drained, it was brief; else a stall */
    if (left == 0) {
      f->phase = DP_STALL_NONE;
      r.brief = 1;
      return r;
    }
    f->phase = DP_STALL_REPORTED;
    r.fenced = r.reported_now = 1;
    return r;
  }
  if (left != 0) { /* outstanding, or a failed context: still fenced */
    r.fenced = 1;
    return r;
  }
  f->phase = DP_STALL_NONE;
  r.ended = 1;
  r.stall_ns = now_ns > f->since_ns ? now_ns - f->since_ns : 0;
  r.timeout_short = f->polls == 1 && queueing;
  return r;
}

int dp_stall_reported(const dp_stall_fence_t *f, size_t target) {
  return f->phase == DP_STALL_REPORTED && f->target == target;
}

uint64_t dp_stall_age_ns(const dp_stall_fence_t *f, size_t target,
                         uint64_t now_ns) {
  if (!dp_stall_reported(f, target) || now_ns < f->since_ns)
    return 0;
  return now_ns - f->since_ns;
}

int dp_stall_queueing_explains(unsigned queue_depth, double shallow_p50_s,
                               double timeout_s) {
  double s1 = shallow_p50_s, d = queue_depth;
  return d > 1 && s1 > 0 && s1 < timeout_s / 2 && s1 * d >= timeout_s / 2;
}

/* ---- the notices -------------------------------------------------------- */

int dp_stall_pair_began(dp_stall_pair_t *p, const char *probe) {
  int due = !p->failed;
  p->failed = 1;
  p->drained = 0;
  if (due)
    snprintf(p->probe, sizeof(p->probe), "%s", probe ? probe : "");
  return due;
}

void dp_stall_pair_drained(dp_stall_pair_t *p, const char *words) {
  if (!p->failed)
    return;
  p->drained = 1;
  snprintf(p->words, sizeof(p->words), "%s", words ? words : "");
}

int dp_stall_pair_round(dp_stall_pair_t *p, int stall_clear, char *probe,
                        char *words, size_t len) {
  if (!stall_clear || !p->failed || !p->drained)
    return 0;
  snprintf(probe, DP_NAME_MAX, "%s", p->probe);
  snprintf(words, len, "%s; the next round ran without a stall", p->words);
  memset(p, 0, sizeof(*p));
  return 1;
}
