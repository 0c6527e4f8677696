/* window.c - a probe's rate window; see window.h. */
#include "window.h"

#define LONG_GAP 3.0         /* times the mean gap */
#define LONG_GAP_MIN_NS 10e6 /* and 10 ms at least */
#define STEPPED_SHARE 0.5    /* of the stepped window's time in long gaps */
#define MIN_SHARE 0.4        /* of the plain window's time */
#define MAX_STEPS 64         /* step starts looked at (steps past them: none) */

/* The median size (completions) of the steps between start[0..m). m >= 2. */
static size_t median_step(const size_t *start, size_t m) {
  size_t size[MAX_STEPS];
  for (size_t k = 0; k + 1 < m; k++)
    size[k] = start[k + 1] - start[k];
  size_t n = m - 1;
  for (size_t i = 1; i < n; i++) /* insertion sort: n < 64 */
    for (size_t j = i; j > 0 && size[j - 1] > size[j]; j--) {
      size_t x = size[j];
      size[j] = size[j - 1];
      size[j - 1] = x;
    }
  return size[n / 2];
}

static void plain(size_t n, dp_window_t *w) {
  w->throttled = 0;
  w->first = 0;
  w->last = n - 1;
  w->stepped = 0;
  w->steps = 0;
}

void dp_window_pick(const uint64_t *t, size_t n, size_t drain_from,
                    dp_window_t *w) {
  if (n < 2) {
    w->first = w->last = 0;
    w->throttled = 0;
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
  if (long_ns < LONG_GAP_MIN_NS)
    long_ns = LONG_GAP_MIN_NS;
  uint64_t all_gaps = 0;
  for (size_t i = 1; i < n; i++)
    if ((double)(t[i] - t[i - 1]) > long_ns)
      all_gaps += t[i] - t[i - 1];
  w->throttled = (double)all_gaps >= STEPPED_SHARE * (double)span;
  /* the step starts after the warm-up (t[0] is its end): each completion
   * after a long gap, up to drain_from */
  size_t start[MAX_STEPS], m = 0;
  uint64_t gaps[MAX_STEPS]; /* time in long gaps up to start[k] */
  uint64_t in_gaps = 0;
  for (size_t i = 1; i < n && i <= drain_from && m < MAX_STEPS; i++) {
    uint64_t g = t[i] - t[i - 1];
    if ((double)g > long_ns) {
      if (m > 0)
        in_gaps += g;
      gaps[m] = in_gaps;
      start[m++] = i;
    }
  }
  if (m < 2)
    return;
  /* A first step larger than the others' median by a quarter holds credit
   * let through late (after other I/O, a throttle may split its credit
   * over two dispatches): the window starts at the next one. */
  size_t k0 = 0;
  if (m >= 3 && 4 * (start[1] - start[0]) > 5 * median_step(start + 1, m - 1))
    k0 = 1;
  size_t first = start[k0], last = start[m - 1];
  uint64_t win = t[last] - t[first];
  if ((double)(gaps[m - 1] - gaps[k0]) < STEPPED_SHARE * (double)win ||
      (double)win < MIN_SHARE * (double)span)
    return;
  w->first = first;
  w->last = last;
  w->stepped = 1;
  w->steps = m - 1 - k0;
}

double dp_window_burst(const uint64_t *t, const dp_window_t *w,
                       uint64_t start_ns, uint64_t before_first, double rate) {
  if (!w->stepped || t[w->first] < start_ns)
    return 0;
  double due = rate * (double)(t[w->first] - start_ns);
  double over = (double)before_first - due;
  return over > 0 ? over : 0;
}
