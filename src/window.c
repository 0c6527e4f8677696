/* window.c - a probe's rate window; see window.h. */
#include "window.h"

#define LONG_GAP 3.0      /* times the mean gap */
#define STEPPED_SHARE 0.5 /* of the stepped window's time in long gaps */
#define MIN_SHARE 0.4     /* of the plain window's time */

static void plain(size_t n, dp_window_t *w) {
  w->first = 0;
  w->last = n - 1;
  w->stepped = 0;
  w->steps = 0;
}

void dp_window_pick(const uint64_t *t, size_t n, size_t drain_from,
                    dp_window_t *w) {
  if (n < 2) {
    w->first = w->last = 0;
    w->stepped = 0;
    w->steps = 0;
    return;
  }
  plain(n, w);
  if (drain_from > n)
    drain_from = n;
  uint64_t span = t[n - 1] - t[0];
  if (span == 0)
    return;
  double long_ns = LONG_GAP * (double)span / (double)(n - 1);
  /* the first step start after the warm-up: the completion after the
   * first long gap (t[0] is the warm-up's end) */
  size_t first = 0, last = 0, steps = 0;
  for (size_t i = 1; i < n; i++)
    if ((double)(t[i] - t[i - 1]) > long_ns) {
      first = i;
      break;
    }
  if (first == 0)
    return;
  /* then every step start up to drain_from, and the time in long gaps */
  uint64_t gaps = 0, gaps_at_last = 0;
  for (size_t i = first + 1; i < n && i <= drain_from; i++) {
    uint64_t g = t[i] - t[i - 1];
    if ((double)g > long_ns) {
      gaps += g;
      last = i;
      gaps_at_last = gaps;
      steps++;
    }
  }
  if (steps == 0)
    return;
  uint64_t win = t[last] - t[first];
  if ((double)gaps_at_last < STEPPED_SHARE * (double)win ||
      (double)win < MIN_SHARE * (double)span)
    return;
  w->first = first;
  w->last = last;
  w->stepped = 1;
  w->steps = steps;
}

double dp_window_burst(const uint64_t *t, const dp_window_t *w,
                       uint64_t start_ns, uint64_t before_first, double rate) {
  if (!w->stepped || t[w->first] < start_ns)
    return 0;
  double due = rate * (double)(t[w->first] - start_ns);
  double over = (double)before_first - due;
  return over > 0 ? over : 0;
}
