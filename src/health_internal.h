/*
 * health_internal.h - the health tracker's state, shared by health.c (the
 * rules) and health_state.c (the state file). Private to those two files:
 * everything else uses health.h.
 */
#ifndef DP_HEALTH_INTERNAL_H
#define DP_HEALTH_INTERNAL_H

#include "health.h"

#define HIST_N 10     /* rounds of S remembered for k-of-n rules */
#define TAIL_N 15     /* rounds of the tail statistic (its window) */
#define FULL_N 20     /* full rounds of S remembered (the intermittent rules) */
#define RECUR_SPELL 4 /* rounds in a row at recur_level: a sustained spell */
#define NAME_MAX_ 64
#define KEY_MAX_ 64

enum { ST_P50, ST_MEAN, ST_IOPS, ST_COUNT };

typedef struct {
  float *v; /* ring of horizon values, oldest at head */
  unsigned head, n;
} ring_t;

typedef struct {
  char name[NAME_MAX_], key[KEY_MAX_];
  ring_t st[ST_COUNT];
  ring_t shape; /* p99 / p50 of learned rounds (not in the state file) */
} probe_t;

typedef struct {
  char name[NAME_MAX_];
  int set;
  size_t nprobes;
  probe_t probes[DP_HEALTH_PROBES_MAX];
  dp_media_t media;
  char model[64];
  char disk[32]; /* its worker's disk ("" not known): peers are on others */
  double ceiling_s;
  uint64_t interval_ns;       /* ProbeInterval now (0: not known) */
  uint64_t saved_interval_ns; /* as the state file had it (0: none) */
  /* rule state */
  double s_hist[HIST_N], u_hist[HIST_N]; /* newest at [0] */
  /* S of the full rounds only (no confirmation), newest at [0]: the
   * intermittent rule's, which confirmations must not crowd out */
  double full_hist[FULL_N];
  unsigned nfull;
  /* full rounds at recur_level: rounds in a row now, and the rounds of a
   * spell of RECUR_SPELL or more (a bit each, newest at bit 0) */
  unsigned recur_run, recur_long;
  int confirming; /* the round being judged is one */
  unsigned unmeasured_run[DP_HEALTH_PROBES_MAX]; /* skipped rounds in a row */
  unsigned crawl_run; /* rounds in a row at a crawl (ceiling rule) */
  unsigned nhist;
  /* the recovery (health.h, "One level per target"): rounds in a row
   * with S below clear, and the rule that held the target last */
  unsigned clear_run;
  dp_health_rule_t held_why;
  const char *held_detail; /* a static string */
  unsigned ceil_run, ceil_clear_run, peer_run, peer_clear_run;
  /* throttled: the first probe's bursty rounds (newest at bit 0) and its
   * rounds in a row below the level / 1.3 */
  unsigned burst_bits, burst_clear_run;
  int burst_on;
  int ceil_on, peer_on;
  int failslow_on; /* dp_health_set_failslow */
  double failslow_score;
  size_t failslow_peers;
  /* per-probe rules, newest at [0]; NaN: not measured */
  double craw_hist[DP_HEALTH_PROBES_MAX][HIST_N]; /* capacity loss c */
  double ps_hist[DP_HEALTH_PROBES_MAX][HIST_N];   /* probe slowdown */
  unsigned nprobe_hist;
  double tail_hist[TAIL_N];
  double ptail_hist[DP_HEALTH_PROBES_MAX][TAIL_N]; /* one probe's tail, */
  unsigned nptail[DP_HEALTH_PROBES_MAX]; /* of the rounds it judged only */
  unsigned ntail;
  int cap_on, cap_fail_on, tail_on, ptail_on, inter_on, recur_on;
  /* the capacity rule per probe: on, and its measured rounds in a row of
   * its own loss below the level / 1.3 (warn) and cap_fail / 1.3 */
  int cap_on_k[DP_HEALTH_PROBES_MAX], capf_on_k[DP_HEALTH_PROBES_MAX];
  unsigned cap_clear_run[DP_HEALTH_PROBES_MAX];
  unsigned capf_clear_run[DP_HEALTH_PROBES_MAX];
  int probing_fail; /* dp_health_not_probing until the next round */
  char probing_why[256];
  dp_health_level_t level;
  /* a stall's FAILURE notified and its OKAY not yet (the monitor's,
   * dp_health_set_stall_open: kept in the state file); "" none */
  char stall_open[NAME_MAX_];
  /* the restored baselines' probation (health.h): rounds left to judge
   * (0: none), rounds so far that ran DP_HEALTH_PROBATION_FAST faster,
   * and the words of a drop */
  unsigned probation, probation_fast;
  char relearn_why[256];
  /* read from the state file, applied once the whole file parsed */
  int restore_set;
  dp_health_level_t restore_level;
  dp_health_rule_t restore_why;
  char restore_stall[NAME_MAX_];
  double last_p50; /* first probe's p50 of the latest round, for peers */
  /* each probe's p50 and IOPS against its baseline in the latest round
   * that measured it: an OKAY on a confirmation (the first probe alone)
   * still gives every probe's figures */
  double last_p50_ratio[DP_HEALTH_PROBES_MAX];
  double last_iops_ratio[DP_HEALTH_PROBES_MAX];
  dp_health_obs_t pending[DP_HEALTH_PROBES_MAX]; /* dp_health_feed's round */
  int pending_any;
} target_t;

struct dp_health {
  dp_health_conf_t c;
  size_t n;
  target_t *t;
  float *scratch; /* horizon floats, for medians */
};

/* Appends x to a ring of cap values, dropping the oldest when full. */
void dp_health_ring_add(ring_t *r, unsigned cap, float x);

#endif /* DP_HEALTH_INTERNAL_H */
