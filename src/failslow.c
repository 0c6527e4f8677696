/* failslow.c - the fail-slow detector of failslow.h. */
#include "failslow.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char name[DP_FAILSLOW_NAME_MAX];
  double cur_x, cur_y; /* this interval's sample (NaN: not fed) */
  double *wx, *wy;     /* the window's samples, window_steps each */
  unsigned wn;         /* valid samples in the window */
  double *hx, *hy;     /* log summaries of the last model_windows (NaN) */
  double *sr;          /* the last sring window slowdowns (NaN) */
  unsigned below;      /* windows in a row with score < clear_ratio */
  dp_failslow_verdict_t v;
} fs_dev_t;

struct dp_failslow {
  dp_failslow_conf_t c;
  size_t n;
  fs_dev_t *dev;
  unsigned step_in_window;
  unsigned hpos, spos; /* ring positions (next slot) */
  double *px, *py;     /* scratch: peers' points, n * model_windows */
  double *tmp;         /* scratch: n * model_windows */
  double *lx, *ly;     /* this window's log summaries, n */
  double *ll;          /* each device's log long score (NaN), n */
  double *tmp2;        /* scratch: a ring's worth */
  unsigned sring;      /* slowdowns kept per device */
  double ts;
};

void dp_failslow_conf_init(dp_failslow_conf_t *c) {
  c->window_steps = 20;
  c->min_valid_steps = 10;
  c->model_windows = 12;
  c->score_windows = 24;
  c->min_score_windows = 12;
  c->clear_windows = 6;
  c->min_peers = 2;
  c->flag_ratio = 1.9;
  c->clear_ratio = 1.4;
  c->long_windows = 144;
  c->long_ratio = 1.1;
  c->long_z = 40;
  c->long_floor = 0.002;
  c->persist_blocks = 4;
  c->persist_ratio = 1.25;
  c->day_windows = 288;
  c->day_ratio = 1.14;
  c->max_slope = 1.0;
  c->min_load_spread = 1.25;
  c->min_throughput = 4096;
}

int dp_failslow_conf_check(const dp_failslow_conf_t *c) {
  if (c == NULL || c->window_steps < 1 ||
      c->window_steps > DP_FAILSLOW_WINDOW_MAX || c->min_valid_steps < 1 ||
      c->min_valid_steps > c->window_steps || c->model_windows < 1 ||
      c->model_windows > DP_FAILSLOW_HISTORY_MAX || c->score_windows < 1 ||
      c->score_windows > DP_FAILSLOW_HISTORY_MAX || c->min_score_windows < 1 ||
      c->min_score_windows > c->score_windows || c->clear_windows < 1 ||
      c->min_peers < 1 || c->persist_blocks < 1 ||
      c->persist_blocks > c->long_windows ||
      c->day_windows > DP_FAILSLOW_HISTORY_MAX ||
      c->persist_blocks > c->day_windows)
    return -EINVAL;
  if (!(c->clear_ratio >= 1.0) || !(c->flag_ratio >= c->clear_ratio) ||
      !(c->max_slope >= 0.0) || !(c->min_load_spread >= 1.0) ||
      !(c->min_throughput >= 0.0) || !(c->long_ratio >= 1.0) ||
      !(c->long_z > 0) || !(c->long_floor > 0) || !isfinite(c->long_z) ||
      !(c->persist_ratio >= 1.0) || !isfinite(c->persist_ratio) ||
      !(c->day_ratio >= 1.0) || !isfinite(c->day_ratio) ||
      !isfinite(c->flag_ratio) || !isfinite(c->max_slope) ||
      !isfinite(c->min_load_spread) || !isfinite(c->min_throughput))
    return -EINVAL;
  return 0;
}

static unsigned steps_for(double seconds, double interval_s, unsigned min) {
  double s = ceil(seconds / interval_s - 1e-9);
  if (s < min)
    s = min;
  return s > 1e6 ? 1000000u : (unsigned)s;
}

int dp_failslow_conf_for_window(dp_failslow_conf_t *c, double interval_s,
                                double window_s) {
  if (c == NULL || !(interval_s > 0) || !isfinite(interval_s) ||
      !(window_s > 0) || !isfinite(window_s))
    return -EINVAL;
  double k = window_s / 300; /* the horizons below are for 300 s windows */
  c->window_steps = steps_for(window_s, interval_s, 3);
  c->min_valid_steps = (c->window_steps + 1) / 2;
  double win_s = c->window_steps * interval_s;
  c->model_windows = steps_for(3600 * k, win_s, 1);
  c->score_windows = steps_for(7200 * k, win_s, 1);
  c->min_score_windows = steps_for(3600 * k, win_s, 1);
  c->clear_windows = steps_for(1800 * k, win_s, 1);
  c->long_windows = steps_for(43200 * k, win_s, 1);
  c->day_windows = steps_for(86400 * k, win_s, 1);
  return dp_failslow_conf_check(c);
}

int dp_failslow_conf_for_interval(dp_failslow_conf_t *c, double interval_s) {
  return dp_failslow_conf_for_window(c, interval_s, 300);
}

int dp_failslow_new(dp_failslow_t **out, const dp_failslow_conf_t *c,
                    size_t n) {
  if (out == NULL || dp_failslow_conf_check(c) != 0 || n < 1 ||
      n > DP_FAILSLOW_DEVICES_MAX)
    return -EINVAL;
  *out = NULL;
  dp_failslow_t *d = calloc(1, sizeof(*d));
  if (d == NULL)
    return -ENOMEM;
  d->c = *c;
  d->n = n;
  size_t w = c->window_steps, h = c->model_windows;
  size_t s =
      c->score_windows > c->long_windows ? c->score_windows : c->long_windows;
  if (c->day_windows > s)
    s = c->day_windows;
  size_t per = 2 * w + 2 * h + s;
  d->dev = calloc(n, sizeof(*d->dev));
  /* one block for every device's arrays, one for the scratch */
  double *block = malloc(n * per * sizeof(double));
  size_t sc = 3 * n * h + 3 * n + s;
  double *scratch = malloc(sc * sizeof(double));
  if (d->dev == NULL || block == NULL || scratch == NULL) {
    free(block);
    free(scratch);
    free(d->dev);
    free(d);
    return -ENOMEM;
  }
  for (size_t i = 0; i < n * per; i++)
    block[i] = NAN;
  for (size_t i = 0; i < n; i++) {
    fs_dev_t *v = &d->dev[i];
    double *p = block + i * per;
    v->wx = p;
    v->wy = p + w;
    v->hx = p + 2 * w;
    v->hy = p + 2 * w + h;
    v->sr = p + 2 * w + 2 * h;
    v->cur_x = v->cur_y = NAN;
    v->v.slowdown = v->v.window_slowdown = NAN;
    v->v.slowdown_long = v->v.z_long = v->v.slowdown_persist = NAN;
    v->v.slowdown_day = NAN;
    snprintf(v->name, sizeof(v->name), "dev%zu", i);
  }
  d->px = scratch;
  d->py = scratch + n * h;
  d->tmp = scratch + 2 * n * h;
  d->lx = scratch + 3 * n * h;
  d->ly = scratch + 3 * n * h + n;
  d->ll = scratch + 3 * n * h + 2 * n;
  d->tmp2 = scratch + 3 * n * h + 3 * n;
  d->sring = (unsigned)s;
  d->ts = NAN;
  *out = d;
  return 0;
}

void dp_failslow_free(dp_failslow_t *d) {
  if (d == NULL)
    return;
  if (d->dev != NULL)
    free(d->dev[0].wx); /* the block */
  free(d->px);          /* the scratch */
  free(d->dev);
  free(d);
}

int dp_failslow_set_device(dp_failslow_t *d, size_t i, const char *name) {
  if (d == NULL || i >= d->n || name == NULL)
    return -EINVAL;
  snprintf(d->dev[i].name, sizeof(d->dev[i].name), "%s", name);
  return 0;
}

const char *dp_failslow_name(const dp_failslow_t *d, size_t i) {
  return (d != NULL && i < d->n) ? d->dev[i].name : "";
}

double dp_failslow_latency_per_io(double reads, double read_await_s,
                                  double writes, double write_await_s) {
  if (isnan(read_await_s) || isnan(write_await_s))
    return isnan(read_await_s) ? write_await_s : read_await_s;
  double n = reads + writes;
  return n > 0 ? (reads * read_await_s + writes * write_await_s) / n : NAN;
}

void dp_failslow_feed(dp_failslow_t *d, size_t i, double throughput,
                      double latency_s) {
  if (d == NULL || i >= d->n)
    return;
  d->dev[i].cur_x = throughput;
  d->dev[i].cur_y = latency_s;
}

/* The k-th smallest of a[0..n) (0-based), Wirth's selection: afterwards
 * a[0..k) <= a[k] <= a(k..n). Reorders a. */
static double select_k(double *a, size_t n, size_t k) {
  ptrdiff_t l = 0, m = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
  while (l < m) {
    double x = a[kk];
    ptrdiff_t i = l, j = m;
    do {
      while (a[i] < x)
        i++;
      while (x < a[j])
        j--;
      if (i <= j) {
        double t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    } while (i <= j);
    if (j < kk)
      l = i;
    if (kk < i)
      m = j;
  }
  return a[kk];
}

/* The median of a[0..n) (n >= 1); reorders a. */
static double median(double *a, size_t n) {
  double hi = select_k(a, n, n / 2);
  if (n % 2)
    return hi;
  double lo = a[0];
  for (size_t i = 1; i < n / 2; i++)
    if (a[i] > lo)
      lo = a[i];
  return 0.5 * (lo + hi);
}

/* The persistent rules' figure: the least of the medians of persist_blocks
 * blocks of consecutive windows over device v's newest `horizon` slowdowns
 * (sslot is the newest); NaN unless every block has half its windows. */
static double least_block(const dp_failslow_t *d, const fs_dev_t *v,
                          unsigned sslot, unsigned horizon) {
  unsigned per = horizon / d->c.persist_blocks;
  double least = INFINITY;
  for (unsigned b = 0; b < d->c.persist_blocks && !isnan(least); b++) {
    size_t kb = 0;
    for (unsigned age = b * per; age < (b + 1) * per; age++) {
      double x = v->sr[(sslot + d->sring - age) % d->sring];
      if (!isnan(x))
        d->tmp2[kb++] = x;
    }
    double m = kb >= (per + 1) / 2 ? median(d->tmp2, kb) : NAN;
    least = isnan(m) || m < least ? m : least;
  }
  return least;
}

/* A persistent rule's clearing level: half its excess over 1 (1.25 flags,
 * below 1.125 clears), as the sustained rule clears under half of long_z:
 * a drive that sits at its threshold does not flap. */
static double half_way(double ratio) { return 1 + (ratio - 1) / 2; }

/* The slope of Tukey's resistant line through (x, y)[0..m): medians of the
 * lower and upper thirds by x; 0 without enough spread of x. */
static double resistant_slope(const dp_failslow_t *d, const double *x,
                              const double *y, size_t m) {
  if (m < 3)
    return 0.0;
  double *t = d->tmp;
  memcpy(t, x, m * sizeof(double));
  double q1 = select_k(t, m, m / 3);
  memcpy(t, x, m * sizeof(double));
  double q2 = select_k(t, m, m - 1 - m / 3);
  if (!(q2 > q1))
    return 0.0;
  double xl[2], yl[2];
  for (int side = 0; side < 2; side++) {
    size_t k = 0;
    for (size_t j = 0; j < m; j++)
      if (side == 0 ? x[j] <= q1 : x[j] >= q2)
        t[k++] = x[j];
    xl[side] = median(t, k);
    k = 0;
    for (size_t j = 0; j < m; j++)
      if (side == 0 ? x[j] <= q1 : x[j] >= q2)
        t[k++] = y[j];
    yl[side] = median(t, k);
  }
  double dx = xl[1] - xl[0];
  if (!(dx >= log(d->c.min_load_spread)) || dx <= 0)
    return 0.0;
  double b = (yl[1] - yl[0]) / dx;
  if (!(b > 0))
    return 0.0;
  return b > d->c.max_slope ? d->c.max_slope : b;
}

/* Step 1: each device's window summary (the log medians of its valid
 * samples, NaN with fewer than min_valid_steps) into lx, ly and its model
 * history at hslot; the window's samples are cleared for the next. */
static void summarize_window(dp_failslow_t *d, unsigned hslot) {
  const dp_failslow_conf_t *c = &d->c;
  for (size_t i = 0; i < d->n; i++) {
    fs_dev_t *v = &d->dev[i];
    d->lx[i] = d->ly[i] = NAN;
    if (v->wn >= c->min_valid_steps) {
      size_t k = 0;
      for (size_t s = 0; s < c->window_steps; s++)
        if (!isnan(v->wx[s]))
          d->tmp[k++] = v->wx[s];
      double mx = median(d->tmp, k);
      k = 0;
      for (size_t s = 0; s < c->window_steps; s++)
        if (!isnan(v->wy[s]))
          d->tmp[k++] = v->wy[s];
      double my = median(d->tmp, k);
      d->lx[i] = log(mx);
      d->ly[i] = log(my);
    }
    v->hx[hslot] = d->lx[i];
    v->hy[hslot] = d->ly[i];
    for (size_t s = 0; s < c->window_steps; s++)
      v->wx[s] = v->wy[s] = NAN;
    v->wn = 0;
  }
}

/* The peers of device i with a summary this window (0 when i has none). */
static unsigned window_peers(const dp_failslow_t *d, size_t i) {
  unsigned peers = 0;
  if (isnan(d->lx[i]))
    return 0;
  for (size_t j = 0; j < d->n; j++)
    if (j != i && !isnan(d->lx[j]))
      peers++;
  return peers;
}

/* Step 2, the slope: the resistant line over the peers' (not i's) summaries
 * of the last model_windows windows. */
static double peer_slope(dp_failslow_t *d, size_t i) {
  size_t m = 0;
  for (size_t j = 0; j < d->n; j++) {
    if (j == i)
      continue;
    for (size_t w = 0; w < d->c.model_windows; w++)
      if (!isnan(d->dev[j].hx[w])) {
        d->px[m] = d->dev[j].hx[w];
        d->py[m] = d->dev[j].hy[w];
        m++;
      }
  }
  return resistant_slope(d, d->px, d->py, m);
}

/* Steps 2-3: device i's slowdown this window, its latency over what its
 * peers' model (slope, and intercept from this window's summaries) expects
 * at its throughput; NaN with fewer than min_peers peers. */
static double window_slowdown(dp_failslow_t *d, size_t i, unsigned peers) {
  if (peers < d->c.min_peers)
    return NAN;
  double b = peer_slope(d, i);
  size_t k = 0;
  for (size_t j = 0; j < d->n; j++)
    if (j != i && !isnan(d->lx[j]))
      d->tmp[k++] = d->ly[j] - b * d->lx[j];
  double a = median(d->tmp, k);
  return exp(d->ly[i] - (a + b * d->lx[i]));
}

/* Step 4: device i's scores from its slowdown ring (sslot the newest): the
 * 2-hour and long medians (the long one's log into ll[i]) and the two
 * persistent rules' least block medians. */
static void score_device(dp_failslow_t *d, size_t i, unsigned sslot) {
  const dp_failslow_conf_t *c = &d->c;
  fs_dev_t *v = &d->dev[i];
  size_t k = 0, kl = 0;
  for (unsigned age = 0; age < d->sring; age++) {
    double x = v->sr[(sslot + d->sring - age) % d->sring];
    if (isnan(x))
      continue;
    if (age < c->score_windows)
      d->tmp[k++] = x;
    if (age < c->long_windows)
      d->tmp2[kl++] = log(x);
  }
  v->v.windows = (unsigned)k;
  v->v.slowdown = k >= c->min_score_windows ? median(d->tmp, k) : NAN;
  d->ll[i] = kl >= (c->long_windows + 1) / 2 ? median(d->tmp2, kl) : NAN;
  v->v.slowdown_long = isnan(d->ll[i]) ? NAN : exp(d->ll[i]);
  v->v.slowdown_persist = least_block(d, v, sslot, c->long_windows);
  v->v.slowdown_day = least_block(d, v, sslot, c->day_windows);
}

/* Step 4b: device i's long score against its peers' long scores, in robust
 * standard deviations (1.4826 MAD, at least long_floor); NaN without a
 * long score or with fewer than min_peers peers that have one. */
static double long_z(dp_failslow_t *d, size_t i) {
  if (isnan(d->ll[i]))
    return NAN;
  size_t k = 0;
  for (size_t j = 0; j < d->n; j++)
    if (j != i && !isnan(d->ll[j]))
      d->tmp[k++] = d->ll[j];
  if (k < d->c.min_peers)
    return NAN;
  double m = median(d->tmp, k);
  for (size_t j = 0; j < k; j++)
    d->tmp[j] = fabs(d->tmp[j] - m);
  double s = 1.4826 * median(d->tmp, k);
  if (s < d->c.long_floor)
    s = d->c.long_floor;
  return (d->ll[i] - m) / s;
}

/* Step 5, flagging: the first rule that fires (fast, sustained, persistent,
 * day-long), or DP_FAILSLOW_RULE_NONE. */
static dp_failslow_rule_t rule_fired(const dp_failslow_conf_t *c,
                                     const dp_failslow_verdict_t *v) {
  if (!isnan(v->slowdown) && v->slowdown >= c->flag_ratio)
    return DP_FAILSLOW_RULE_FAST;
  /* the other rules also want the drive slow now: a recovered drive's
   * long figures lag by hours */
  int now = !isnan(v->slowdown) && v->slowdown >= c->long_ratio;
  if (!now)
    return DP_FAILSLOW_RULE_NONE;
  if (!isnan(v->z_long) && v->z_long >= c->long_z &&
      v->slowdown_long >= c->long_ratio)
    return DP_FAILSLOW_RULE_SUSTAINED;
  if (v->slowdown_persist >= c->persist_ratio)
    return DP_FAILSLOW_RULE_PERSISTENT;
  if (v->slowdown_day >= c->day_ratio)
    return DP_FAILSLOW_RULE_DAY;
  return DP_FAILSLOW_RULE_NONE;
}

/* Step 5, clearing: every rule's figure well below its threshold (the
 * 2-hour score under clear_ratio, the long z under half of long_z or the
 * long score under long_ratio, the block medians under half their excess);
 * a missing figure counts as below. */
static int all_low(const dp_failslow_conf_t *c,
                   const dp_failslow_verdict_t *v) {
  return (isnan(v->slowdown) || v->slowdown < c->clear_ratio) &&
         (isnan(v->z_long) || v->z_long < c->long_z / 2 ||
          v->slowdown_long < c->long_ratio) &&
         !(v->slowdown_persist >= half_way(c->persist_ratio)) &&
         !(v->slowdown_day >= half_way(c->day_ratio));
}

/* Step 5: the decision with hysteresis. Flagged by the first rule that
 * fires; a flagged device clears after clear_windows windows in a row with
 * all_low (a window with no score at all holds the count). */
static void decide(const dp_failslow_conf_t *c, fs_dev_t *v) {
  int was = v->v.flagged;
  dp_failslow_rule_t rule = rule_fired(c, &v->v);
  if (rule != DP_FAILSLOW_RULE_NONE) {
    if (!was) {
      v->v.flagged = 1;
      v->v.rule = rule;
    }
    v->below = 0;
  } else if (was) {
    int known = !isnan(v->v.slowdown) || !isnan(v->v.z_long);
    if (known)
      v->below = all_low(c, &v->v) ? v->below + 1 : 0;
    if (v->below >= c->clear_windows) {
      v->v.flagged = 0;
      v->v.rule = DP_FAILSLOW_RULE_NONE;
      v->below = 0;
    }
  }
  v->v.changed = v->v.flagged != was;
}

/* Closes the window: summaries (1), per device its peers' model and its
 * slowdown (2-3) and scores (4), the long scores against the peers' (4b),
 * decisions (5). */
static void judge_window(dp_failslow_t *d) {
  unsigned hslot = d->hpos, sslot = d->spos;
  summarize_window(d, hslot);
  for (size_t i = 0; i < d->n; i++) {
    fs_dev_t *v = &d->dev[i];
    unsigned peers = window_peers(d, i);
    double r = window_slowdown(d, i, peers);
    v->sr[sslot] = r;
    v->v.window_slowdown = r;
    v->v.peers = peers;
    score_device(d, i, sslot);
  }
  for (size_t i = 0; i < d->n; i++)
    d->dev[i].v.z_long = long_z(d, i);
  for (size_t i = 0; i < d->n; i++)
    decide(&d->c, &d->dev[i]);
  d->hpos = (hslot + 1) % d->c.model_windows;
  d->spos = (sslot + 1) % d->sring;
}

int dp_failslow_step(dp_failslow_t *d, double ts, dp_failslow_verdict_t *out) {
  if (d == NULL)
    return 0;
  const dp_failslow_conf_t *c = &d->c;
  unsigned s = d->step_in_window;
  for (size_t i = 0; i < d->n; i++) {
    fs_dev_t *v = &d->dev[i];
    double x = v->cur_x, y = v->cur_y;
    if (isfinite(x) && isfinite(y) && y > 0 && x >= c->min_throughput &&
        x > 0) {
      v->wx[s] = x;
      v->wy[s] = y;
      v->wn++;
    }
    v->cur_x = v->cur_y = NAN;
    v->v.changed = 0;
  }
  int closed = 0;
  if (++d->step_in_window >= c->window_steps) {
    d->step_in_window = 0;
    d->ts = ts;
    judge_window(d);
    closed = 1;
  }
  if (out != NULL)
    for (size_t i = 0; i < d->n; i++)
      out[i] = d->dev[i].v;
  return closed;
}

void dp_failslow_verdict(const dp_failslow_t *d, size_t i,
                         dp_failslow_verdict_t *v) {
  if (d == NULL || i >= d->n || v == NULL)
    return;
  *v = d->dev[i].v;
  v->changed = 0;
}

void dp_failslow_describe(const dp_failslow_t *d, size_t i,
                          const dp_failslow_verdict_t *v, char *buf,
                          size_t len) {
  if (buf == NULL || len == 0)
    return;
  if (d == NULL || i >= d->n || v == NULL) {
    buf[0] = '\0';
    return;
  }
  /* what matters first: a caller's message may cut the end off */
  int n = snprintf(buf, len, "%s: ", v->flagged ? "fail-slow" : "ok");
  if (n < 0 || (size_t)n >= len)
    return;
  if (isnan(v->slowdown))
    n += snprintf(buf + n, len - n, "no 2-hour score yet (%u windows)",
                  v->windows);
  else
    n += snprintf(buf + n, len - n,
                  "%.2fx its %u peers at the same load over %u windows",
                  v->slowdown, v->peers, v->windows);
  if ((size_t)n >= len)
    return;
  const dp_failslow_conf_t *c = &d->c;
  if (!v->flagged)
    n += snprintf(buf + n, len - n,
                  "; thresholds %.2fx, or %.2fx and %.0f MADs, or %.2fx in "
                  "each of %u blocks of the last %u windows, or %.2fx of %u",
                  c->flag_ratio, c->long_ratio, c->long_z, c->persist_ratio,
                  c->persist_blocks, c->long_windows, c->day_ratio,
                  c->day_windows);
  else if (v->rule == DP_FAILSLOW_RULE_PERSISTENT ||
           v->rule == DP_FAILSLOW_RULE_DAY) {
    int day = v->rule == DP_FAILSLOW_RULE_DAY;
    n += snprintf(buf + n, len - n,
                  "; by the %s rule (at least %.2fx in each of %u blocks of "
                  "the last %u windows, threshold %.2fx)",
                  dp_failslow_rule_name(v->rule),
                  day ? v->slowdown_day : v->slowdown_persist,
                  c->persist_blocks, day ? c->day_windows : c->long_windows,
                  day ? c->day_ratio : c->persist_ratio);
  } else if (v->rule == DP_FAILSLOW_RULE_SUSTAINED)
    n += snprintf(buf + n, len - n,
                  "; by the sustained rule (thresholds %.2fx and %.0f MADs)",
                  c->long_ratio, c->long_z);
  else
    n += snprintf(buf + n, len - n, "; by the %s rule (threshold %.2fx)",
                  dp_failslow_rule_name(v->rule), c->flag_ratio);
  if ((size_t)n >= len)
    return;
  if (!isnan(v->slowdown_long))
    snprintf(buf + n, len - n, "; the long score %.2fx (%.1f peer MADs)",
             v->slowdown_long, v->z_long);
}

const char *dp_failslow_rule_name(dp_failslow_rule_t r) {
  switch (r) {
  case DP_FAILSLOW_RULE_FAST:
    return "fast";
  case DP_FAILSLOW_RULE_SUSTAINED:
    return "sustained";
  case DP_FAILSLOW_RULE_PERSISTENT:
    return "persistent";
  case DP_FAILSLOW_RULE_DAY:
    return "day-long";
  default:
    return "none";
  }
}
