/* health.c - see health.h for the rules and their arithmetic. */
#include "health.h"
#include "blockdev.h"
#include "conf.h"
#include "health_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const rule_names[DP_RULE_COUNT] = {
    "baseline", "ceiling",  "peers", "stall",        "errors",
    "failslow", "capacity", "tail",  "intermittent", "probing"};
static const char *const level_names[] = {"ok", "warning", "failure"};
static const double media_ceilings[DP_MEDIA_COUNT] = {0.050, 0.002, 0.005,
                                                      0.050, 0.020};

const char *dp_health_rule_name(dp_health_rule_t r) {
  return r < DP_RULE_COUNT ? rule_names[r] : "?";
}
const char *dp_health_level_name(dp_health_level_t l) {
  return l <= DP_HEALTH_FAILURE ? level_names[l] : "?";
}
double dp_media_ceiling_s(dp_media_t m) {
  return m < DP_MEDIA_COUNT ? media_ceilings[m] : media_ceilings[0];
}

/* ---- construction -------------------------------------------------------
 */

void dp_health_conf_init(dp_health_conf_t *c) {
  memset(c, 0, sizeof(*c));
  c->horizon_rounds = 1440;
  c->arm_rounds = 20;
  c->warn_fast = 4.0;
  c->warn = 1.9;
  c->warn_slow = 1.4;
  c->warn_slow_k = 7;
  c->warn_slow_n = 10;
  c->fail = 8.0;
  c->clear = 1.3;
  c->peer_ratio = 3.0;
  c->burst_scale = 1.5;
  c->ceiling_rounds = 3;
  c->peer_rounds = 3;
  c->clear_rounds = 3;
  c->cap_warn = 2.0;
  c->cap_warn_seq = 1.75;
  c->cap_fail = 8.0;
  c->cap_n = 7;
  c->tail_warn = 3.5;
  c->tail_n = TAIL_N;
  c->tail_probe_warn = 3.5;
  c->tail_probe_k = 12;
  c->inter_k = 3;
  c->recur_level = 1.6;
  c->recur_k = 8;
  c->recur_n = FULL_N;
  c->cap_clear_n = 2;
  c->cap_clear_n_seq = 4;
  c->burst_warn = 1.6;
  c->burst_shape = 1.25;
  c->burst_k = 5;
}

int dp_health_new(dp_health_t **out, const dp_health_conf_t *c, size_t n) {
  *out = NULL;
  if (n == 0 || c->horizon_rounds == 0 ||
      c->horizon_rounds > DP_HEALTH_HORIZON_MAX || c->arm_rounds == 0 ||
      c->arm_rounds > c->horizon_rounds || c->warn_slow_n > HIST_N ||
      c->warn_slow_k == 0 || c->warn_slow_k > c->warn_slow_n ||
      !(c->clear >= 1) || !(c->warn_slow > c->clear) ||
      !(c->warn >= c->warn_slow) || !(c->warn_fast >= c->warn) ||
      !(c->fail >= c->warn_fast) || c->ceiling_rounds == 0 ||
      c->ceiling_rounds > HIST_N || c->clear_rounds == 0 ||
      c->clear_rounds > HIST_N || c->peer_rounds == 0 || !(c->peer_ratio > 1) ||
      !(c->burst_scale >= 1) || !(c->cap_warn > 1) || !(c->cap_warn_seq > 1) ||
      !(c->cap_fail >= c->cap_warn) || c->cap_n < 3 || c->cap_n > HIST_N ||
      !(c->tail_warn > 1) || c->tail_n < 3 || c->tail_n > TAIL_N ||
      !(c->tail_probe_warn > 1) || c->tail_probe_k == 0 ||
      c->tail_probe_k > c->tail_n || c->inter_k < 2 || c->inter_k > HIST_N ||
      !(c->recur_level > c->clear) || c->recur_n > FULL_N || c->recur_k < 2 ||
      c->recur_k > c->recur_n || c->cap_clear_n == 0 ||
      c->cap_clear_n > HIST_N || c->cap_clear_n_seq == 0 ||
      c->cap_clear_n_seq > HIST_N || !(c->burst_warn > 1) ||
      !(c->burst_shape >= 1) || c->burst_k == 0 || c->burst_k > 16)
    return -EINVAL;
  dp_health_t *h = calloc(1, sizeof(*h));
  if (h == NULL)
    return -ENOMEM;
  h->c = *c;
  h->n = n;
  h->t = calloc(n, sizeof(*h->t));
  h->scratch = calloc(c->horizon_rounds, sizeof(float));
  if (h->t == NULL || h->scratch == NULL) {
    dp_health_free(h);
    return -ENOMEM;
  }
  *out = h;
  return 0;
}

void dp_health_free(dp_health_t *h) {
  if (h == NULL)
    return;
  for (size_t i = 0; h->t && i < h->n; i++)
    for (size_t k = 0; k < DP_HEALTH_PROBES_MAX; k++)
      for (int s = 0; s < ST_COUNT; s++)
        free(h->t[i].probes[k].st[s].v);
  for (size_t i = 0; h->t && i < h->n; i++)
    for (size_t k = 0; k < DP_HEALTH_PROBES_MAX; k++)
      free(h->t[i].probes[k].shape.v);
  free(h->t);
  free(h->scratch);
  free(h);
}

/* The rule windows, empty: at the start, and afresh at an OKAY: no rule fires
 * again from the rounds of the fault that just ended. The 4x intermittent
 * rule's history of full rounds is kept: a fault that comes back each few
 * intervals is one that comes and goes; the recurring rule's rounds are left
 * out (it goes off only after 4 good rounds, so a fault still coming and going
 * sends no OKAY). */
static void windows_restart(target_t *t) {
  t->nhist = t->nprobe_hist = t->ntail = 0;
  t->recur_long = (1u << FULL_N) - 1; /* recurring starts afresh too */
  for (size_t j = 0; j < HIST_N; j++) {
    t->s_hist[j] = t->u_hist[j] = NAN;
    for (size_t k = 0; k < DP_HEALTH_PROBES_MAX; k++)
      t->craw_hist[k][j] = t->ps_hist[k][j] = NAN;
  }
  for (size_t j = 0; j < TAIL_N; j++) {
    t->tail_hist[j] = NAN;
    for (size_t k = 0; k < DP_HEALTH_PROBES_MAX; k++)
      t->ptail_hist[k][j] = NAN;
  }
  memset(t->nptail, 0, sizeof(t->nptail));
}

int dp_health_set_target(dp_health_t *h, size_t i, const char *name,
                         size_t nprobes, const char *const *probe_names,
                         const char *const *probe_keys, dp_media_t media,
                         const char *model, double ceiling_s) {
  if (i >= h->n || nprobes == 0 || nprobes > DP_HEALTH_PROBES_MAX)
    return -EINVAL;
  target_t *t = &h->t[i];
  snprintf(t->name, sizeof(t->name), "%s", name);
  t->nprobes = nprobes;
  for (size_t k = 0; k < nprobes; k++) {
    probe_t *p = &t->probes[k];
    snprintf(p->name, sizeof(p->name), "%s", probe_names[k]);
    snprintf(p->key, sizeof(p->key), "%s", probe_keys[k]);
    for (int s = 0; s < ST_COUNT; s++) {
      free(p->st[s].v);
      p->st[s].head = p->st[s].n = 0;
      if ((p->st[s].v = calloc(h->c.horizon_rounds, sizeof(float))) == NULL)
        return -ENOMEM;
    }
    free(p->shape.v);
    p->shape.head = p->shape.n = 0;
    if ((p->shape.v = calloc(h->c.horizon_rounds, sizeof(float))) == NULL)
      return -ENOMEM;
  }
  t->media = media;
  snprintf(t->model, sizeof(t->model), "%s", model ? model : "");
  t->ceiling_s = ceiling_s > 0 ? ceiling_s : dp_media_ceiling_s(media);
  t->last_p50 = NAN;
  for (size_t k = 0; k < DP_HEALTH_PROBES_MAX; k++)
    t->last_p50_ratio[k] = t->last_iops_ratio[k] = NAN;
  windows_restart(t);
  t->set = 1;
  return 0;
}

int dp_health_from_conf(dp_health_t **out, const dp_plugin_conf_t *pc,
                        const dp_target_conf_t *tc, size_t n,
                        const char *const *disks, const char *sysroot) {
  dp_health_conf_t hc;
  dp_health_conf_init(&hc);
  uint64_t shortest = UINT64_MAX;
  for (size_t i = 0; i < n; i++)
    if (tc[i].interval_ns < shortest)
      shortest = tc[i].interval_ns;
  uint64_t rounds = shortest ? pc->baseline_horizon_ns / shortest : 0;
  hc.arm_rounds = (unsigned)pc->arm_rounds;
  hc.horizon_rounds = rounds > DP_HEALTH_HORIZON_MAX ? DP_HEALTH_HORIZON_MAX
                      : rounds < hc.arm_rounds       ? hc.arm_rounds
                                                     : (unsigned)rounds;
  int rc = dp_health_new(out, &hc, n);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    const char *names[DP_PROBES_MAX], *keys[DP_PROBES_MAX];
    char keybuf[DP_PROBES_MAX][64];
    for (size_t k = 0; k < tc[i].nprobes; k++) {
      const dp_probe_conf_t *p = &tc[i].probes[k];
      snprintf(keybuf[k], sizeof(keybuf[k]), "%s/%u/%u",
               dp_pattern_name(p->pattern), p->block_size, p->queue_depth);
      names[k] = p->name;
      keys[k] = keybuf[k];
    }
    dp_blockdev_info_t info;
    (void)dp_blockdev_info(sysroot, disks[i], &info); /* unknown: says so */
    rc = dp_health_set_target(*out, i, tc[i].name, tc[i].nprobes, names, keys,
                              info.media, info.model,
                              (double)tc[i].ceiling_ns / 1e9);
    (*out)->t[i].interval_ns = tc[i].interval_ns;
    snprintf((*out)->t[i].disk, sizeof((*out)->t[i].disk), "%s",
             disks[i] ? disks[i] : "");
  }
  if (rc != 0) {
    dp_health_free(*out);
    *out = NULL;
  }
  return rc;
}

uint64_t dp_health_saved_interval_ns(const dp_health_t *h, size_t i) {
  return i < h->n ? h->t[i].saved_interval_ns : 0;
}

dp_media_t dp_health_media(const dp_health_t *h, size_t i, const char **model) {
  if (model)
    *model = h->t[i].model;
  return h->t[i].media;
}

dp_health_level_t dp_health_level(const dp_health_t *h, size_t i,
                                  dp_health_rule_t *why) {
  if (why)
    *why = h->t[i].held_why;
  return h->t[i].level;
}

void dp_health_set_stall_open(dp_health_t *h, size_t i, const char *probe) {
  snprintf(h->t[i].stall_open, sizeof(h->t[i].stall_open), "%s",
           probe ? probe : "");
}

const char *dp_health_stall_open(const dp_health_t *h, size_t i) {
  return h->t[i].stall_open;
}

/* ---- baselines ----------------------------------------------------------
 */

void dp_health_ring_add(ring_t *r, unsigned cap, float x) {
  if (r->n < cap) {
    r->v[(r->head + r->n++) % cap] = x;
  } else {
    r->v[r->head] = x;
    r->head = (r->head + 1) % cap;
  }
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* The median of a ring (NaN when empty). Sorting 1,440 floats a round is
 * a few tens of microseconds: not worth a cleverer structure. */
static double ring_median(const dp_health_t *h, const ring_t *r) {
  if (r->n == 0)
    return NAN;
  memcpy(h->scratch, r->v, r->n * sizeof(float));
  qsort(h->scratch, r->n, sizeof(float), cmp_float);
  return r->n % 2 ? h->scratch[r->n / 2]
                  : 0.5 * (h->scratch[r->n / 2 - 1] + h->scratch[r->n / 2]);
}

static int usable(const dp_health_obs_t *o) {
  return !o->stalled && o->errors == 0 && o->p50_s > 0 && o->mean_s > 0 &&
         o->iops > 0 && isfinite(o->p50_s) && isfinite(o->mean_s) &&
         isfinite(o->iops);
}

/* ---- rules --------------------------------------------------------------
 */

/* Prepends x to a history of cap values, newest first. */
static void push_n(double *hist, unsigned cap, double x) {
  memmove(hist + 1, hist, (cap - 1) * sizeof(double));
  hist[0] = x;
}

/* Remembers a round's S and max u, newest first; a full round's S also
 * in its own history. */
static void push(target_t *t, double s, double u, double recur_level) {
  push_n(t->s_hist, HIST_N, s);
  push_n(t->u_hist, HIST_N, u);
  if (t->nhist < HIST_N)
    t->nhist++;
  if (!t->confirming) {
    push_n(t->full_hist, FULL_N, s);
    if (t->nfull < FULL_N)
      t->nfull++;
    /* the rounds of a long spell at the recurring level: a sustained
     * fault, not one that comes and goes */
    t->recur_run = s >= recur_level ? t->recur_run + 1 : 0;
    t->recur_long = (t->recur_long << 1) & ((1u << FULL_N) - 1);
    if (t->recur_run >= RECUR_SPELL)
      t->recur_long |=
          (1u << (t->recur_run < FULL_N ? t->recur_run : FULL_N)) - 1;
  }
}

/* The measured values among the newest n of a history into v (room for
 * TAIL_N or HIST_N), sorted ascending; how many. */
static unsigned measured_sorted(const double *x, unsigned have, unsigned n,
                                double *v) {
  unsigned m = 0;
  for (unsigned i = 0; i < n && i < have; i++)
    if (x[i] == x[i])
      v[m++] = x[i];
  for (unsigned a = 1; a < m; a++) /* insertion sort: 15 at most */
    for (unsigned b = a; b > 0 && v[b - 1] > v[b]; b--) {
      double y = v[b];
      v[b] = v[b - 1];
      v[b - 1] = y;
    }
  return m;
}

#define WINDOW_MAX (TAIL_N > HIST_N ? TAIL_N : HIST_N)

/* The median of the measured values among the newest n of a history; NaN
 * when fewer than `need` are measured. */
static double hist_median(const double *x, unsigned have, unsigned n,
                          unsigned need) {
  double v[WINDOW_MAX];
  unsigned m = measured_sorted(x, have, n, v);
  if (m < need || m == 0)
    return NAN;
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/* The k-th largest of the measured values among the newest n of a
 * history (k >= 1); NaN when fewer than k are measured. */
static double kth_largest(const double *x, unsigned have, unsigned n,
                          unsigned k) {
  double v[WINDOW_MAX];
  unsigned m = measured_sorted(x, have, n, v);
  return k == 0 || m < k ? NAN : v[m - k];
}

/* How many of the newest n entries are >= m (NaN never is). */
static unsigned at_least(const double *hist, unsigned have, unsigned n,
                         double m) {
  unsigned c = 0;
  for (unsigned i = 0; i < n && i < have; i++)
    c += hist[i] >= m;
  return c;
}

static double second_largest(const double *x, size_t n) {
  double a = -INFINITY, b = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!(x[i] == x[i]))
      continue;
    if (x[i] > a) {
      b = a;
      a = x[i];
    } else if (x[i] > b) {
      b = x[i];
    }
  }
  return n >= 2 ? b : a;
}

/* A round that looks throttled: the first probe's IOPS and mean latency
 * (its bursty ratio b) further off than its p50 (ratio u): g = b / u at
 * burst_warn, or b itself at burst_warn with g at burst_shape; and p50
 * not at warn (a real blkio throttle at half the rate moved QD1's p50
 * 1.1-1.4x, its mean 1.8x and its IOPS 2x). */
static int throttled_round(const dp_health_conf_t *c, double b0, double u0) {
  double g = b0 / u0;
  return !(u0 >= c->warn) &&
         (g >= c->burst_warn || (b0 >= c->burst_warn && g >= c->burst_shape));
}

/* The throttled rule: a throttled round (above) in burst_k of the last
 * burst_k + 1 rounds, the newest among them (confirmations count); off
 * after clear_rounds rounds with b below burst_warn / 1.3 (the IOPS
 * back). A round it does not measure (NaN) changes nothing. */
static void throttled_rule(const dp_health_conf_t *c, target_t *t, double b0,
                           double u0) {
  if (!(b0 == b0) || !(u0 > 0))
    return;
  unsigned bursty = (unsigned)throttled_round(c, b0, u0);
  unsigned window = (1u << (c->burst_k + 1)) - 1;
  t->burst_bits = ((t->burst_bits << 1) | bursty) & window;
  t->burst_clear_run = b0 < c->burst_warn / 1.3 ? t->burst_clear_run + 1 : 0;
  if (!t->burst_on && bursty &&
      (unsigned)__builtin_popcount(t->burst_bits) >= c->burst_k)
    t->burst_on = 1;
  else if (t->burst_on && t->burst_clear_run >= c->clear_rounds)
    t->burst_on = 0;
}

/* The baseline rule's level after this round's S and u (armed only): what
 * fires now; the target's recovery holds it after (round_verdict). */
static dp_health_level_t baseline_rule(const dp_health_t *h, target_t *t,
                                       const char **detail) {
  const dp_health_conf_t *c = &h->c;
  const double *s = t->s_hist, *u = t->u_hist;
  unsigned n = t->nhist;
  int probe_failing = 0; /* any one probe at >= fail in 3 of 3 */
  for (size_t k = 0; k < t->nprobes && n >= 3; k++)
    probe_failing |= at_least(t->ps_hist[k], n, 3, c->fail) == 3;
  if ((at_least(s, n, 3, c->fail) == 3 && n >= 3) || probe_failing) {
    *detail = "fail";
    return DP_HEALTH_FAILURE;
  }
  *detail = n >= 2 && at_least(s, n, 2, c->warn_fast) == 2 ? "warn-fast"
            : n >= 3 && at_least(s, n, 3, c->warn) == 3    ? "warn"
            : u[0] >= c->warn_slow && at_least(u, n, c->warn_slow_n,
                                               c->warn_slow) >= c->warn_slow_k
                ? "warn-slow"
            : t->burst_on ? "throttled"
                          : "";
  return (*detail)[0] ? DP_HEALTH_WARNING : DP_HEALTH_OK;
}

/* A rule that is on after `on_rounds` rounds of `bad` in a row and off
 * after as many rounds of `good` in a row. */
static int latch(int on, int bad, int good, unsigned *run, unsigned *clear,
                 unsigned rounds) {
  *run = bad ? *run + 1 : 0;
  *clear = good ? *clear + 1 : 0;
  if (!on && *run >= rounds)
    return 1;
  if (on && *clear >= rounds)
    return 0;
  return on;
}

static double peer_median(const dp_health_t *h, size_t i, unsigned *npeers) {
  const target_t *me = &h->t[i];
  double v[256];
  unsigned n = 0;
  for (size_t k = 0; k < h->n && n < 256; k++) {
    const target_t *o = &h->t[k];
    if (k == i || !o->set || o->media != me->media ||
        strcmp(o->model, me->model) != 0 || !(o->last_p50 > 0) ||
        strcmp(o->probes[0].key, me->probes[0].key) != 0 ||
        (me->disk[0] && strcmp(o->disk, me->disk) == 0))
      continue;
    v[n++] = o->last_p50;
  }
  *npeers = n;
  if (n < 2)
    return NAN;
  for (unsigned a = 1; a < n; a++) /* insertion sort: a host's disks */
    for (unsigned b = a; b > 0 && v[b - 1] > v[b]; b--) {
      double x = v[b];
      v[b] = v[b - 1];
      v[b - 1] = x;
    }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void dp_health_set_failslow(dp_health_t *h, size_t i, int flagged,
                            double slowdown, size_t peers) {
  if (i >= h->n)
    return;
  h->t[i].failslow_on = flagged != 0;
  h->t[i].failslow_score = slowdown;
  h->t[i].failslow_peers = peers;
}

/* A round's slowdown ratios of each probe against its baseline as it
 * stood before the round. */
typedef struct {
  double u[DP_HEALTH_PROBES_MAX];     /* uniform: p50 / base p50 */
  double b[DP_HEALTH_PROBES_MAX];     /* bursty: min(mean, 1/IOPS) ratios */
  double c[DP_HEALTH_PROBES_MAX];     /* capacity loss: base IOPS / IOPS */
  double tail[DP_HEALTH_PROBES_MAX];  /* (p99 / p50) / its baseline */
  double ptail[DP_HEALTH_PROBES_MAX]; /* the same, of rounds of enough I/O */
  int stalled, errors, nospace;       /* any probe of the round */
} round_ratios_t;

/* The verdict before any rule: the level it comes from, nothing fired. */
static void round_start(const target_t *t, dp_health_verdict_t *v) {
  memset(v, 0, sizeof(*v));
  v->prev_level = t->level;
  v->why_detail = "";
  v->peer_ratio = NAN;
  v->ceiling_s = t->ceiling_s;
  v->tail = v->tail_probe = NAN;
  v->bursty_first = NAN;
  for (size_t k = 0; k < DP_HEALTH_PROBES_MAX; k++)
    v->capacity[k] = v->capacity_raw[k] = v->probe_p50_ratio[k] =
        v->probe_iops_ratio[k] = NAN;
}

/* The rounds the target's baselines hold: the fewest of its probes', not
 * counting a probe not measured for arm_rounds rounds in a row -- a deep
 * probe skipped on a slow disk every round (scheduler.h) must not keep the
 * others' rules unarmed for ever; a probe whose job changed is measured
 * and so holds arming back until it has learned. */
static unsigned baseline_rounds(const dp_health_t *h, const target_t *t) {
  unsigned fewest = UINT32_MAX;
  for (size_t k = 0; k < t->nprobes; k++) {
    unsigned n = t->probes[k].st[ST_P50].n;
    if (t->unmeasured_run[k] < h->c.arm_rounds && n < fewest)
      fewest = n;
  }
  return fewest == UINT32_MAX ? 0 : fewest;
}

/* Each probe's baselines (into v), its figures now and its ratios; how
 * many rounds the baseline holds and whether that arms the rules. */
static void round_ratios(const dp_health_t *h, const target_t *t,
                         const dp_health_obs_t *obs, dp_health_verdict_t *v,
                         round_ratios_t *r) {
  r->stalled = r->errors = r->nospace = 0;
  for (size_t k = 0; k < t->nprobes; k++) {
    const probe_t *p = &t->probes[k];
    const dp_health_obs_t *o = &obs[k];
    v->base_p50_s[k] = ring_median(h, &p->st[ST_P50]);
    v->base_mean_s[k] = ring_median(h, &p->st[ST_MEAN]);
    v->base_iops[k] = ring_median(h, &p->st[ST_IOPS]);
    r->stalled |= o->stalled;
    r->errors |= o->errors > 0;
    r->nospace |= o->nospace > 0;
    v->p50_s[k] = o->p50_s;
    v->iops[k] = o->iops;
    r->u[k] = r->b[k] = r->c[k] = r->tail[k] = r->ptail[k] = NAN;
    v->probe_p50_ratio[k] = v->probe_iops_ratio[k] = NAN;
    if (usable(o) && v->base_p50_s[k] > 0) {
      r->u[k] = o->p50_s / v->base_p50_s[k];
      v->probe_p50_ratio[k] = r->u[k];
      v->probe_iops_ratio[k] = o->iops / v->base_iops[k];
      double bm = o->mean_s / v->base_mean_s[k];
      double bi = v->base_iops[k] / o->iops;
      r->b[k] = bm < bi ? bm : bi;
      r->c[k] = bi;
      double shape = ring_median(h, &p->shape);
      if (o->p99_s > 0 && isfinite(o->p99_s) && shape > 0 &&
          p->shape.n >= h->c.arm_rounds)
        r->tail[k] = o->p99_s / o->p50_s / shape;
      if (o->ops == 0 || o->ops >= DP_HEALTH_TAIL_MIN_OPS)
        r->ptail[k] = r->tail[k];
    } else if (o->stalled || (o->iops == 0 && v->base_iops[k] > 0)) {
      /* nothing completed: slower than all */
      r->u[k] = r->b[k] = r->c[k] = INFINITY;
    }
  }
  v->baseline_rounds = baseline_rounds(h, t);
  v->armed = v->baseline_rounds >= h->c.arm_rounds;
}

/* Each probe's slowdown and the round's S (armed only): into v, and
 * remembered for the k-of-n rules. */
static void round_slowdown(const dp_health_t *h, target_t *t,
                           const round_ratios_t *r, dp_health_verdict_t *v) {
  const double *u = r->u, *b = r->b;
  double worst = -INFINITY;
  for (size_t k = 0; k < t->nprobes; k++) {
    double s = u[k] > b[k] || !(b[k] == b[k]) ? u[k] : b[k];
    v->probe_slowdown[k] = s;
    if (s > worst) {
      worst = s;
      v->worst_probe = k;
    }
  }
  /* a confirmation has the first probe alone: its bursty figure confirms
   * what the round's probes agreed on in twos */
  double bb =
      (t->confirming ? b[0] : second_largest(b, t->nprobes)) / h->c.burst_scale;
  /* the first probe (QD1 in the default set, the steadiest p50) counts
   * alone; the others' p50 wander more and must agree in twos */
  double uu = second_largest(u, t->nprobes);
  if (u[0] > uu || !(uu == uu))
    uu = u[0];
  v->slowdown_uniform = uu;
  v->slowdown = uu > bb ? uu : bb;
  if (!(v->slowdown == v->slowdown))
    v->slowdown = NAN;
  /* warn-slow judges the first probe (QD1 in the default set): the
   * least noisy p50; a deep or sequential probe's p50 wanders more */
  push(t, v->slowdown, u[0], h->c.recur_level);
  for (size_t k = 0; k < t->nprobes; k++)
    if (!t->confirming || k == 0) /* a confirmation runs the first only */
      push_n(t->ps_hist[k], HIST_N, v->probe_slowdown[k]);
  /* the recovery's count: S below clear, rounds in a row (NaN is not) */
  t->clear_run = v->slowdown < h->c.clear ? t->clear_run + 1 : 0;
  v->clear_run = t->clear_run;
  /* mean latency and IOPS off by more than p50 is: a disk that is fast
   * or slow as a whole for minutes moves all three */
  v->bursty_first = b[0] / u[0];
  throttled_rule(&h->c, t, b[0], u[0]);
  v->suspect = v->slowdown >= h->c.warn ||
               (u[0] > 0 && throttled_round(&h->c, b[0], u[0]));
}

/* On at `on` or above, off below on / 1.3; a NaN (not measured) keeps the
 * state. `recent` (the same statistic over the newest few rounds; NaN: not
 * known) below on / 1.3 turns it off and keeps it off: a windowed rule
 * clears within a few rounds of the recovery, not once the whole window
 * has turned over, and a window still full of a fault that has ended
 * does not fire it during the recovery. */
static int hold(int was, double x, double recent, double on) {
  if (recent == recent && recent < on / 1.3)
    return 0;
  if (!(x == x))
    return was;
  return was ? x >= on / 1.3 : x >= on;
}

#define RECENT_N 3 /* rounds a windowed rule's newest agree over */
#define QUIET_N 4  /* full rounds without a bad one that end intermittent */

/* The capacity rule's level for a probe: a sequential probe's IOPS are
 * steadier than a deep random probe's (recorded noise: see health.h). */
static int seq_probe(const probe_t *p) {
  return strncmp(p->key, "seq", 3) == 0;
}
static double cap_level(const dp_health_conf_t *c, const probe_t *p) {
  return seq_probe(p) ? c->cap_warn_seq : c->cap_warn;
}

/* Full round k (newest 0) at >= level and not left out by `skip` (a
 * bit per round, newest at bit 0). */
static int full_bad(const target_t *t, unsigned k, double level,
                    unsigned skip) {
  return k < t->nfull && t->full_hist[k] >= level && !((skip >> k) & 1u);
}

/* Spells of such full rounds among the newest n (runs of them with a
 * better one between). */
static unsigned spells(const target_t *t, double level, unsigned n,
                       unsigned skip) {
  unsigned count = 0;
  for (unsigned k = 0; k < n; k++)
    count += full_bad(t, k, level, skip) &&
             (k == 0 || !full_bad(t, k - 1, level, skip));
  return count;
}

/* Such full rounds among the newest n. */
static unsigned full_at_least(const target_t *t, double level, unsigned n,
                              unsigned skip) {
  unsigned count = 0;
  for (unsigned k = 0; k < n; k++)
    count += full_bad(t, k, level, skip);
  return count;
}

/* One probe's capacity latch: on when its window (relative to the first
 * probe's loss) reaches `level` while its newest rounds agree; off only
 * after cap_clear_n measured full rounds in a row of its own loss below
 * level / 1.3 (*run counts them). */
static int cap_latch(int on, double window, double recent, double newest,
                     unsigned *run, double level, unsigned clear_n) {
  if (newest == newest)
    *run = newest < level / 1.3 ? *run + 1 : 0;
  if (!on && window >= level && recent >= level / 1.3) {
    *run = 0;
    return 1;
  }
  return on && *run < clear_n;
}

/* The capacity rule: each probe but the first against the first's loss,
 * so a whole-disk slowdown is the latency rules' to judge; collapse on a
 * probe's own loss. */
static void round_capacity(const dp_health_t *h, target_t *t,
                           const round_ratios_t *r, dp_health_verdict_t *v) {
  const dp_health_conf_t *c = &h->c;
  unsigned need = c->cap_n / 2 + 1;
  if (!t->confirming) { /* a confirmation's one probe says nothing here */
    if (t->nprobe_hist < HIST_N)
      t->nprobe_hist++;
    for (size_t k = 0; k < t->nprobes; k++)
      push_n(t->craw_hist[k], HIST_N, r->c[k]);
  }
  double c0 = hist_median(t->craw_hist[0], t->nprobe_hist, c->cap_n, need);
  double ref = c0 > 1 ? c0 : 1;
  double r0 = hist_median(t->craw_hist[0], t->nprobe_hist, RECENT_N, 2);
  double rref = r0 > 1 ? r0 : 1;
  /* the probe the words name: the worst (median / its level) of those
   * on, else of all */
  double worst = -INFINITY;
  int worst_on = 0;
  v->capacity_probe = 0; /* none yet: the first probe is not judged */
  t->cap_on = t->cap_fail_on = 0;
  for (size_t k = 1; k < t->nprobes; k++) {
    double level = cap_level(c, &t->probes[k]);
    v->capacity_raw[k] =
        hist_median(t->craw_hist[k], t->nprobe_hist, c->cap_n, need);
    v->capacity[k] = c0 == c0 ? v->capacity_raw[k] / ref : NAN;
    double rr = hist_median(t->craw_hist[k], t->nprobe_hist, RECENT_N, 2);
    double newest = t->confirming ? NAN : r->c[k];
    unsigned clear_n =
        seq_probe(&t->probes[k]) ? c->cap_clear_n_seq : c->cap_clear_n;
    t->cap_on_k[k] =
        cap_latch(t->cap_on_k[k], v->capacity[k], r0 == r0 ? rr / rref : NAN,
                  newest, &t->cap_clear_run[k], level, clear_n);
    t->capf_on_k[k] = cap_latch(t->capf_on_k[k], v->capacity_raw[k], rr, newest,
                                &t->capf_clear_run[k], c->cap_fail, clear_n);
    t->cap_on |= t->cap_on_k[k];
    t->cap_fail_on |= t->capf_on_k[k];
    int on = t->cap_on_k[k] || t->capf_on_k[k];
    double norm = v->capacity[k] / level;
    if (!(norm == norm))
      norm = -INFINITY;
    if (v->capacity_probe == 0 || on > worst_on ||
        (on == worst_on && norm > worst)) {
      worst_on = on;
      worst = norm;
      v->capacity_probe = k;
    }
  }
}

/* The tail rules: every probe's (the smallest of their ratios, its
 * median over tail_n rounds) and one probe's own. */
static void round_tail(const dp_health_t *h, target_t *t,
                       const round_ratios_t *r, dp_health_verdict_t *v) {
  const dp_health_conf_t *c = &h->c;
  double tail = INFINITY;
  unsigned measured = 0;
  for (size_t k = 0; k < t->nprobes; k++)
    if (r->tail[k] == r->tail[k]) {
      measured++;
      if (r->tail[k] < tail)
        tail = r->tail[k];
    }
  if (!t->confirming) {
    push_n(t->tail_hist, TAIL_N,
           measured >= (t->nprobes > 1 ? 2u : 1u) ? tail : NAN);
    for (size_t k = 0; k < t->nprobes; k++)
      if (r->ptail[k] == r->ptail[k]) {
        push_n(t->ptail_hist[k], TAIL_N, r->ptail[k]);
        if (t->nptail[k] < TAIL_N)
          t->nptail[k]++;
      }
    if (t->ntail < TAIL_N)
      t->ntail++;
  }
  v->tail = hist_median(t->tail_hist, t->ntail, c->tail_n, c->tail_n / 2 + 1);
  t->tail_on =
      hold(t->tail_on, v->tail,
           hist_median(t->tail_hist, t->ntail, RECENT_N, 2), c->tail_warn);
  /* one probe's tail: the probe whose tail_probe_k-th largest of its last
   * tail_n judged ratios is the largest; it falls below the level / 1.3
   * once tail_n - tail_probe_k + 1 (4) rounds are, and fires only while
   * its newest judged rounds agree */
  for (size_t k = 0; k < t->nprobes; k++) {
    double x =
        kth_largest(t->ptail_hist[k], t->nptail[k], c->tail_n, c->tail_probe_k);
    if (x == x && (x > v->tail_probe || !(v->tail_probe == v->tail_probe))) {
      v->tail_probe = x;
      v->tail_which = k;
    }
  }
  double recent = v->tail_probe == v->tail_probe
                      ? hist_median(t->ptail_hist[v->tail_which],
                                    t->nptail[v->tail_which], RECENT_N, 2)
                      : NAN;
  t->ptail_on = hold(t->ptail_on, v->tail_probe, recent, c->tail_probe_warn);
}

/* The intermittent rules over the full rounds (confirmations of one bad
 * spell are one spell and do not push full rounds out): at `level` in k
 * of the newest n, in two spells or more, a bad round among the newest
 * RECENT_N; off once the newest QUIET_N have none. */
static int intermittent_latch(const target_t *t, int on, double level,
                              unsigned k, unsigned n, unsigned skip,
                              unsigned *count) {
  *count = full_at_least(t, level, n, skip);
  if (!on)
    return *count >= k && spells(t, level, n, skip) >= 2 &&
           full_at_least(t, level, RECENT_N, skip) > 0;
  return full_at_least(t, level, QUIET_N, 0) > 0;
}

/* The per-probe rules (armed only): capacity, tail, intermittent. */
static void round_probe_rules(const dp_health_t *h, target_t *t,
                              const round_ratios_t *r, dp_health_verdict_t *v) {
  const dp_health_conf_t *c = &h->c;
  if (!v->armed)
    return;
  round_capacity(h, t, r, v);
  round_tail(h, t, r, v);
  t->inter_on = intermittent_latch(t, t->inter_on, c->warn_fast, c->inter_k,
                                   HIST_N, 0, &v->intermittent);
  /* recurring counts short spells only: the rounds of a sustained fault
   * (RECUR_SPELL or more in a row) are the latency rules' to judge, and
   * after its OKAY they must not make one slow round "recurring" */
  t->recur_on = intermittent_latch(t, t->recur_on, c->recur_level, c->recur_k,
                                   c->recur_n, t->recur_long, &v->recurring);
}

/* The baseline rule: the round's slowdown against the baseline, judged
 * once armed; *detail names what fired. */
static dp_health_level_t round_baseline(const dp_health_t *h, target_t *t,
                                        const round_ratios_t *r,
                                        dp_health_verdict_t *v,
                                        const char **detail) {
  *detail = "";
  v->slowdown = v->slowdown_uniform = NAN;
  for (size_t k = 0; k < DP_HEALTH_PROBES_MAX; k++)
    v->probe_slowdown[k] = NAN;
  if (!v->armed)
    return DP_HEALTH_OK;
  round_slowdown(h, t, r, v);
  round_probe_rules(h, t, r, v);
  return baseline_rule(h, t, detail);
}

/* The ceiling rule: the first probe's p50 against the class's. */
static void round_ceiling(const dp_health_t *h, target_t *t,
                          const dp_health_obs_t *first) {
  double p50 = first->p50_s;
  int slow = (usable(first) && p50 > t->ceiling_s) || first->stalled;
  int fine = usable(first) && p50 < t->ceiling_s / 1.5;
  t->ceil_on = latch(t->ceil_on, slow, fine, &t->ceil_run, &t->ceil_clear_run,
                     h->c.ceiling_rounds);
  /* a crawl: the first probe's p50 at 1 s or 100x the ceiling, whichever
   * is less, in two rounds in a row (a confirmation counts): FAILURE */
  double crawl_s = 100 * t->ceiling_s < 1.0 ? 100 * t->ceiling_s : 1.0;
  int crawl = usable(first) && p50 >= crawl_s;
  t->crawl_run = crawl ? t->crawl_run + 1 : 0;
}

/* The peers rule: target i's first-probe p50 against the median of the
 * other targets' latest rounds. */
static void round_peers(const dp_health_t *h, size_t i,
                        const dp_health_obs_t *first, dp_health_verdict_t *v) {
  const dp_health_conf_t *c = &h->c;
  target_t *t = &h->t[i];
  t->last_p50 = usable(first) ? first->p50_s : NAN;
  unsigned npeers;
  double pm = peer_median(h, i, &npeers);
  if (pm > 0 && t->last_p50 > 0) {
    v->peer_ratio = t->last_p50 / pm;
    t->peer_on = latch(t->peer_on, v->peer_ratio >= c->peer_ratio,
                       v->peer_ratio < c->peer_ratio / 1.5, &t->peer_run,
                       &t->peer_clear_run, c->peer_rounds);
  } else {
    t->peer_on = 0;
    t->peer_run = t->peer_clear_run = 0;
  }
}

/* The target's level from every rule's: the worst of them, and once
 * armed, a target that was not OK stays WARNING ("recovering") until
 * every rule is clear and S has been below clear for clear_rounds rounds
 * in a row (health.h, "One level per target"). */
static void round_level(const dp_health_t *h, target_t *t,
                        dp_health_verdict_t *v) {
  v->level = DP_HEALTH_OK;
  v->why = DP_RULE_BASELINE;
  for (int k = 0; k < DP_RULE_COUNT; k++)
    if (v->rule[k] > v->level) {
      v->level = v->rule[k];
      v->why = (dp_health_rule_t)k;
    }
  if (v->level == DP_HEALTH_OK && t->level != DP_HEALTH_OK)
    v->why = t->held_why; /* the OKAY pairs with the rule that held it */
  if (v->level == DP_HEALTH_OK && v->armed && t->level != DP_HEALTH_OK &&
      t->clear_run < h->c.clear_rounds) {
    v->level = DP_HEALTH_WARNING;
    v->why = t->held_why;
    v->recovering = 1;
    /* confirmations end the recovery within about an interval, unless
     * the fault came and went before (an earlier bad spell among the last
     * full rounds): a fault that comes back each few intervals is held
     * between its windows rather than an OKAY and a new WARNING each time */
    if (v->slowdown < h->c.clear && spells(t, h->c.warn_fast, HIST_N, 0) <= 1)
      v->suspect = 1;
  }
}

/* Every rule's level, the target's and why. */
static void round_verdict(const dp_health_t *h, target_t *t,
                          dp_health_level_t base, const char *base_detail,
                          const round_ratios_t *r, dp_health_verdict_t *v) {
  v->rule[DP_RULE_BASELINE] = base;
  v->rule[DP_RULE_CEILING] = t->crawl_run >= 2 ? DP_HEALTH_FAILURE
                             : t->ceil_on      ? DP_HEALTH_WARNING
                                               : DP_HEALTH_OK;
  v->suspect |= t->crawl_run >= 1;
  v->rule[DP_RULE_PEERS] = t->peer_on ? DP_HEALTH_WARNING : DP_HEALTH_OK;
  v->rule[DP_RULE_STALL] = r->stalled ? DP_HEALTH_FAILURE : DP_HEALTH_OK;
  /* a full filesystem refusing writes is not a failing disk */
  v->rule[DP_RULE_ERRORS] = r->errors    ? DP_HEALTH_FAILURE
                            : r->nospace ? DP_HEALTH_WARNING
                                         : DP_HEALTH_OK;
  v->rule[DP_RULE_FAILSLOW] = t->failslow_on ? DP_HEALTH_WARNING : DP_HEALTH_OK;
  v->rule[DP_RULE_CAPACITY] = t->cap_fail_on ? DP_HEALTH_FAILURE
                              : t->cap_on    ? DP_HEALTH_WARNING
                                             : DP_HEALTH_OK;
  v->rule[DP_RULE_TAIL] =
      t->tail_on || t->ptail_on ? DP_HEALTH_WARNING : DP_HEALTH_OK;
  v->rule[DP_RULE_INTERMITTENT] = v->armed && (t->inter_on || t->recur_on)
                                      ? DP_HEALTH_WARNING
                                      : DP_HEALTH_OK;
  v->rule[DP_RULE_PROBING] = DP_HEALTH_OK; /* a round came: it probes */
  t->probing_fail = 0;
  round_level(h, t, v);
  v->why_detail = v->recovering                                  ? "recovering"
                  : v->level == DP_HEALTH_OK                     ? ""
                  : v->why == DP_RULE_BASELINE                   ? base_detail
                  : v->why == DP_RULE_ERRORS && !r->errors       ? "no-space"
                  : v->why == DP_RULE_CAPACITY && t->cap_fail_on ? "collapse"
                  : v->why == DP_RULE_CEILING && t->crawl_run >= 2 ? "crawl"
                  : v->why == DP_RULE_INTERMITTENT && !t->inter_on
                      ? "recurring"
                      : dp_health_rule_name(v->why);
  if (v->level != DP_HEALTH_OK && !v->recovering) {
    t->held_why = v->why;
    t->held_detail = v->why_detail;
  }
  v->changed = v->level != v->prev_level;
  if (v->changed && v->level == DP_HEALTH_OK && v->armed)
    windows_restart(t);
  t->level = v->level;
}

/* Learns only healthy rounds: a degradation is never the new normal. */
static void round_learn(const dp_health_t *h, target_t *t,
                        const dp_health_obs_t *obs,
                        const dp_health_verdict_t *v, const round_ratios_t *r) {
  const dp_health_conf_t *c = &h->c;
  unsigned cap = c->horizon_rounds;
  if (t->confirming || v->level != DP_HEALTH_OK || r->stalled || r->errors ||
      r->nospace || t->cap_on || t->cap_fail_on || t->tail_on || t->ptail_on ||
      v->rule[DP_RULE_INTERMITTENT] != DP_HEALTH_OK)
    return;
  if (v->armed) { /* a round that looks degraded is not learned either */
    if (v->slowdown >= c->warn_slow || r->u[0] >= c->warn_slow ||
        r->b[0] >= 2.0)
      return;
    for (size_t k = 0; k < t->nprobes; k++)
      if (v->probe_slowdown[k] >= c->warn ||
          v->capacity[k] >= cap_level(c, &t->probes[k]))
        return;
  }
  for (size_t k = 0; k < t->nprobes; k++)
    if (usable(&obs[k])) {
      probe_t *p = &t->probes[k];
      dp_health_ring_add(&p->st[ST_P50], cap, (float)obs[k].p50_s);
      dp_health_ring_add(&p->st[ST_MEAN], cap, (float)obs[k].mean_s);
      dp_health_ring_add(&p->st[ST_IOPS], cap, (float)obs[k].iops);
      /* a tail that looks fattened is not learned either (the one-probe
       * tail rule needs tail_probe_k rounds to fire) */
      if (obs[k].p99_s > 0 && isfinite(obs[k].p99_s) &&
          !(r->tail[k] >= c->tail_probe_warn))
        dp_health_ring_add(&p->shape, cap,
                           (float)(obs[k].p99_s / obs[k].p50_s));
    }
}

static void fmt_s(double x, char *buf, size_t len);

/* The restored baselines' probation (health.h, "a restored baseline is on
 * probation"): a full round judges it when a probe with a baseline
 * measured; not faster by DP_HEALTH_PROBATION_FAST ends it, keeping them;
 * DP_HEALTH_PROBATION_ROUNDS such rounds drop them (v->relearned). */
static void probation(const dp_health_t *h, target_t *t,
                      const dp_health_obs_t *obs, dp_health_verdict_t *v) {
  if (t->probation == 0 || t->confirming)
    return;
  int judged = 0, fast = 1;
  double got = NAN, had = NAN;
  const char *name = "";
  for (size_t k = 0; k < t->nprobes; k++) {
    double b = ring_median(h, &t->probes[k].st[ST_P50]);
    if (!usable(&obs[k]) || !(b > 0))
      continue;
    if (!judged) {
      got = obs[k].p50_s;
      had = b;
      name = t->probes[k].name;
    }
    judged = 1;
    fast &= obs[k].p50_s * DP_HEALTH_PROBATION_FAST <= b;
  }
  if (!judged)
    return;
  if (!fast) {
    t->probation = 0; /* the disk they describe */
    return;
  }
  if (++t->probation_fast < DP_HEALTH_PROBATION_ROUNDS)
    return;
  for (size_t k = 0; k < t->nprobes; k++) {
    probe_t *p = &t->probes[k];
    for (int s = 0; s < ST_COUNT; s++)
      p->st[s].head = p->st[s].n = 0;
    p->shape.head = p->shape.n = 0;
  }
  char a[32], b[32];
  fmt_s(got, a, sizeof(a));
  fmt_s(had, b, sizeof(b));
  snprintf(t->relearn_why, sizeof(t->relearn_why),
           "its first %d rounds after the restart ran %gx or more faster "
           "than the baselines restored from the state file (%s p50 %s vs "
           "%s): not this disk's; learning them afresh",
           DP_HEALTH_PROBATION_ROUNDS, DP_HEALTH_PROBATION_FAST, name, a, b);
  v->relearned = t->relearn_why;
  t->probation = 0;
}

void dp_health_round(dp_health_t *h, size_t i, const dp_health_obs_t *obs,
                     dp_health_verdict_t *v) {
  target_t *t = &h->t[i];
  t->confirming = obs[0].confirm != 0;
  for (size_t k = 0; k < t->nprobes && !t->confirming; k++) {
    const dp_health_obs_t *o = &obs[k]; /* skipped: no I/O, no fault */
    int skipped = !usable(o) && !o->stalled && o->errors == 0 &&
                  o->nospace == 0 && !(o->iops > 0);
    t->unmeasured_run[k] = skipped ? t->unmeasured_run[k] + 1 : 0;
  }
  round_ratios_t r;
  const char *base_detail;
  round_start(t, v);
  probation(h, t, obs, v);
  round_ratios(h, t, obs, v, &r);
  for (size_t k = 0; k < t->nprobes; k++) {
    if (v->probe_p50_ratio[k] == v->probe_p50_ratio[k]) {
      t->last_p50_ratio[k] = v->probe_p50_ratio[k];
      t->last_iops_ratio[k] = v->probe_iops_ratio[k];
    } else if (t->confirming) { /* not run: its latest figures */
      v->probe_p50_ratio[k] = t->last_p50_ratio[k];
      v->probe_iops_ratio[k] = t->last_iops_ratio[k];
    }
  }
  dp_health_level_t base = round_baseline(h, t, &r, v, &base_detail);
  round_ceiling(h, t, &obs[0]);
  round_peers(h, i, &obs[0], v);
  round_verdict(h, t, base, base_detail, &r, v);
  round_learn(h, t, obs, v, &r);
}

static void pending_reset(target_t *t) {
  for (size_t k = 0; k < DP_HEALTH_PROBES_MAX; k++)
    t->pending[k] = (dp_health_obs_t){NAN, NAN, NAN, 0, 0, 0, NAN, 0, 0};
  t->pending_any = 0;
}

int dp_health_feed(dp_health_t *h, size_t i, size_t probe,
                   const dp_health_obs_t *o, int last_in_round,
                   dp_health_verdict_t *v) {
  target_t *t = &h->t[i];
  if (!t->pending_any)
    pending_reset(t);
  t->pending_any = 1;
  if (probe < t->nprobes)
    t->pending[probe] = *o;
  if (!last_in_round)
    return 0;
  dp_health_obs_t obs[DP_HEALTH_PROBES_MAX];
  memcpy(obs, t->pending, sizeof(obs));
  pending_reset(t);
  dp_health_round(h, i, obs, v);
  return 1;
}

void dp_health_not_probing(dp_health_t *h, size_t i, const char *why,
                           dp_health_verdict_t *v) {
  target_t *t = &h->t[i];
  pending_reset(t);
  round_start(t, v);
  t->probing_fail = 1;
  t->clear_run = 0;
  t->held_why = DP_RULE_PROBING; /* its recovery and OKAY name it */
  t->held_detail = "probing";
  snprintf(t->probing_why, sizeof(t->probing_why), "%s", why ? why : "");
  for (size_t k = 0; k < DP_HEALTH_PROBES_MAX; k++) {
    const probe_t *p = &t->probes[k];
    v->probe_slowdown[k] = v->p50_s[k] = v->iops[k] = NAN;
    v->base_p50_s[k] = k < t->nprobes ? ring_median(h, &p->st[ST_P50]) : NAN;
    v->base_mean_s[k] = k < t->nprobes ? ring_median(h, &p->st[ST_MEAN]) : NAN;
    v->base_iops[k] = k < t->nprobes ? ring_median(h, &p->st[ST_IOPS]) : NAN;
  }
  v->baseline_rounds = baseline_rounds(h, t);
  v->armed = v->baseline_rounds >= h->c.arm_rounds;
  v->slowdown = v->slowdown_uniform = NAN;
  v->rule[DP_RULE_PROBING] = DP_HEALTH_FAILURE;
  v->level = DP_HEALTH_FAILURE;
  v->why = DP_RULE_PROBING;
  v->why_detail = "probing";
  v->not_probing = t->probing_why;
  v->changed = v->level != v->prev_level;
  t->level = v->level;
  t->last_p50 = NAN; /* no reference for its peers */
}

/* ---- words ----------------------------------------------------------------
 */

/* Seconds as "1.21 ms" / "118 us" / "2.5 s". */
static void fmt_s(double x, char *buf, size_t len) {
  if (!(x == x))
    snprintf(buf, len, "?");
  else if (x >= 1)
    snprintf(buf, len, "%.3g s", x);
  else if (x >= 1e-3)
    snprintf(buf, len, "%.3g ms", x * 1e3);
  else
    snprintf(buf, len, "%.3g us", x * 1e6);
}

/* An OKAY's words: each probe's p50 and IOPS against its baseline, the
 * figures that show the recovery. */
static void describe_okay(const dp_health_t *h, const target_t *t,
                          const dp_health_verdict_t *v, char *buf, size_t len) {
  size_t at = (size_t)snprintf(buf, len, "OKAY: back to its baseline:");
  for (size_t k = 0; k < t->nprobes && at < len; k++)
    at += (size_t)snprintf(buf + at, len - at, "%s %s p50 %.2fx IOPS %.2fx",
                           k ? "," : "", t->probes[k].name,
                           v->probe_p50_ratio[k], v->probe_iops_ratio[k]);
  if (at < len)
    snprintf(buf + at, len - at, "; slowdown %.2fx, %u rounds below %gx",
             v->slowdown, v->clear_run, h->c.clear);
}

/* The verdict's words without the target: level, rule, probe, figures. */
static void describe_what(const dp_health_t *h, const target_t *t,
                          const dp_health_verdict_t *v, char *buf, size_t len) {
  const dp_health_conf_t *c = &h->c;
  const char *lvl = v->level == DP_HEALTH_FAILURE   ? "FAILURE"
                    : v->level == DP_HEALTH_WARNING ? "WARNING"
                                                    : "OKAY";
  size_t k = v->worst_probe;
  char now[32], base[32], thr[160];
  fmt_s(t->last_p50, now, sizeof(now));
  thr[0] = '\0';
  if (v->level == DP_HEALTH_OK) {
    /* no "nanx": a slowdown is said only where there is one */
    if (!v->armed)
      snprintf(buf, len, "%s: learning its baseline (%u of %u rounds)",
               v->changed ? "OKAY: back to normal" : "OK", v->baseline_rounds,
               c->arm_rounds);
    else if (v->changed)
      describe_okay(h, t, v, buf, len);
    else
      snprintf(buf, len, "OK: slowdown %.2fx its baseline", v->slowdown);
    return;
  }
  if (v->recovering) {
    snprintf(buf, len,
             "WARNING, recovering from %s: slowdown %.2fx; OKAY after %u "
             "rounds in a row below %gx (%u so far) with every rule clear",
             t->held_detail ? t->held_detail : dp_health_rule_name(v->why),
             v->slowdown, c->clear_rounds, c->clear, v->clear_run);
    return;
  }
  switch (v->why) {
  case DP_RULE_BASELINE:
    if (strcmp(v->why_detail, "warn-fast") == 0)
      snprintf(thr, sizeof(thr), "threshold %gx in 2 of 2 rounds",
               c->warn_fast);
    else if (strcmp(v->why_detail, "warn") == 0)
      snprintf(thr, sizeof(thr), "threshold %gx in 3 of 3 rounds", c->warn);
    else if (strcmp(v->why_detail, "warn-slow") == 0)
      snprintf(thr, sizeof(thr), "threshold %gx (p50) in %u of %u rounds",
               c->warn_slow, c->warn_slow_k, c->warn_slow_n);
    else if (strcmp(v->why_detail, "fail") == 0)
      snprintf(thr, sizeof(thr), "threshold %gx in 3 of 3 rounds", c->fail);
    else if (strcmp(v->why_detail, "throttled") == 0) {
      fmt_s(v->base_p50_s[0], base, sizeof(base));
      fmt_s(v->p50_s[0], now, sizeof(now));
      snprintf(buf, len,
               "%s by throttled: probe %s lost IOPS with its p50 near its "
               "baseline (IOPS %.0f vs %.0f, p50 %s vs %s; mean latency and "
               "IOPS %.2fx further off than p50, in %u of %u rounds): a "
               "throttled or bursty volume, I/O held back in bursts",
               lvl, t->probes[0].name, v->iops[0], v->base_iops[0], now, base,
               v->bursty_first, c->burst_k, c->burst_k + 1);
      return;
    }
    fmt_s(v->base_p50_s[k], base, sizeof(base));
    fmt_s(v->p50_s[k], now, sizeof(now));
    snprintf(buf, len,
             "%s by %s: probe %s at %.2fx its baseline (p50 %s vs %s, IOPS "
             "%.0f vs %.0f); %s",
             lvl, v->why_detail, t->probes[k].name, v->probe_slowdown[k], now,
             base, v->iops[k], v->base_iops[k], thr);
    return;
  case DP_RULE_CEILING:
    fmt_s(v->ceiling_s, base, sizeof(base));
    if (v->rule[DP_RULE_CEILING] == DP_HEALTH_FAILURE) {
      snprintf(buf, len,
               "%s by crawl: probe %s p50 %s, at least 1 s or 100x the "
               "ceiling %s in 2 rounds in a row: the disk barely answers",
               lvl, t->probes[0].name, now, base);
      return;
    }
    snprintf(buf, len,
             "%s by ceiling: probe %s p50 %s above the ceiling %s for %u "
             "rounds",
             lvl, t->probes[0].name, now, base, c->ceiling_rounds);
    return;
  case DP_RULE_PEERS:
    snprintf(buf, len,
             "%s by peers: probe %s p50 %s, %.2fx the median of its peers for "
             "%u rounds (threshold %gx)",
             lvl, t->probes[0].name, now, v->peer_ratio, c->peer_rounds,
             c->peer_ratio);
    return;
  case DP_RULE_FAILSLOW:
    snprintf(buf, len,
             "%s by failslow: its disk is %.2fx slower than its %zu peers at "
             "the same load",
             lvl, t->failslow_score, t->failslow_peers);
    return;
  case DP_RULE_ERRORS:
    if (strcmp(v->why_detail, "no-space") == 0) {
      snprintf(buf, len,
               "%s by errors: no space left on device (ENOSPC): writes "
               "refused, the filesystem is full (a copy-on-write filesystem "
               "or thin volume needs free space to overwrite); not a disk "
               "error",
               lvl);
      return;
    }
    snprintf(buf, len, "%s by errors: I/O errors", lvl);
    return;
  case DP_RULE_CAPACITY: {
    size_t q = v->capacity_probe;
    if (v->rule[DP_RULE_CAPACITY] == DP_HEALTH_FAILURE)
      snprintf(buf, len,
               "%s by collapse: probe %s at 1/%.1f of its baseline IOPS "
               "(%.0f vs %.0f; median of %u rounds, threshold 1/%g)",
               lvl, t->probes[q].name, v->capacity_raw[q], v->iops[q],
               v->base_iops[q], c->cap_n, c->cap_fail);
    else
      snprintf(buf, len,
               "%s by capacity: probe %s lost %.2fx more IOPS than probe %s "
               "(IOPS %.0f vs %.0f; median of %u rounds, threshold %gx): "
               "lost parallelism or bandwidth, not latency",
               lvl, t->probes[q].name, v->capacity[q], t->probes[0].name,
               v->iops[q], v->base_iops[q], c->cap_n,
               cap_level(c, &t->probes[q]));
    return;
  }
  case DP_RULE_TAIL:
    if (!t->tail_on && v->tail_probe == v->tail_probe) {
      snprintf(buf, len,
               "%s by tail: probe %s p99 at %.2fx its usual distance from "
               "p50 in %u of the last %u rounds (threshold %gx, rounds of "
               "%d I/Os or more): slow outliers (retries, pauses) in this "
               "probe's I/O with p50 unchanged",
               lvl, t->probes[v->tail_which].name, v->tail_probe,
               c->tail_probe_k, c->tail_n, c->tail_probe_warn,
               DP_HEALTH_TAIL_MIN_OPS);
      return;
    }
    snprintf(buf, len,
             "%s by tail: p99 at %.2fx its usual distance from p50 on every "
             "probe (median of %u rounds, threshold %gx): slow outliers "
             "(retries, pauses) with p50 unchanged",
             lvl, v->tail, c->tail_n, c->tail_warn);
    return;
  case DP_RULE_INTERMITTENT:
    if (strcmp(v->why_detail, "recurring") == 0)
      snprintf(buf, len,
               "%s by recurring: %u of the last %u rounds at >= %gx its "
               "baseline (on at %u in two spells or more, off after %d "
               "rounds below): a fault that comes and goes",
               lvl, v->recurring, c->recur_n, c->recur_level, c->recur_k,
               QUIET_N);
    else
      snprintf(buf, len,
               "%s by intermittent: %u of the last %d rounds at >= %gx its "
               "baseline (on at %u in two spells or more, off after %d "
               "rounds below): a fault that comes and goes",
               lvl, v->intermittent, HIST_N, c->warn_fast, c->inter_k, QUIET_N);
    return;
  case DP_RULE_PROBING:
    snprintf(buf, len, "%s by probing: the target is not probing: %s", lvl,
             v->not_probing && v->not_probing[0] ? v->not_probing : "no round");
    return;
  case DP_RULE_STALL:
  default:
    snprintf(buf, len, "%s by stall: I/O stalled", lvl);
    return;
  }
}

void dp_health_describe(const dp_health_t *h, size_t i,
                        const dp_health_verdict_t *v, char *buf, size_t len) {
  const target_t *t = &h->t[i];
  /* the figures first: a notification cut at collectd's 256 bytes loses
   * the target's name (its plugin instance says it) before them */
  char what[512];
  describe_what(h, t, v, what, sizeof(what));
  int model = t->model[0] &&
              (v->why == DP_RULE_PEERS || v->why == DP_RULE_FAILSLOW) &&
              v->level != DP_HEALTH_OK;
  snprintf(buf, len, "%s; target %s (%s%s%s)", what, t->name,
           dp_media_name(t->media), model ? ", " : "", model ? t->model : "");
}
