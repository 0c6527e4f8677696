/*
 * failslow.h - is one drive slower than its peers at the same load? A
 * collectd-free fail-slow detector per host over the devices of one peer
 * group (same media class and model), fed every interval with each
 * device's throughput (bytes/s) and average latency per I/O (seconds) --
 * the device view the plugin already has, or a recorded trace (`diskprobe
 * failslow`). After Perseus (Lu et al., FAST'23), online instead of a daily
 * batch, with medians instead of DBSCAN and least squares.
 *
 * A drive is only ever compared with the other drives of its group on its
 * own host, in the same window: no absolute latency level is learned or
 * used, so a host that is slow as a whole (load, firmware, a host-wide
 * artefact) is not fail-slow, and a host whose drives are all fast does
 * not make another host's drives look slow.
 *
 * Method, every window of `window_steps` intervals (default 20: 5 min at
 * 15 s)
 *   1. Summary per device: the medians of its throughput and of its latency
 *      over the window's valid samples (at least `min_valid_steps`, 10;
 *      NaN, latency <= 0 and throughput < `min_throughput` are missing:
 *      an idle drive's latency says nothing). Outlier removal, 1: one
 *      sample in two can be a spike without moving a median.
 *   2. Model of latency against load, per device i, from its peers only
 *      (leave-one-out, so the drive judged never bends its own model):
 *      log latency = a + b * log throughput.
 *      Slope b: Tukey's resistant line over the peers' summaries of the last
 *      `model_windows` windows (12: an hour, enough spread of load): the
 *      medians of the lower and of the upper third by throughput, clamped
 *      to [0, `max_slope` = 1] (latency does not fall as load rises; more
 *      than proportional growth is queueing collapse, not a model to
 *      extrapolate) and 0 when the thirds' loads differ by less than
 *      `min_load_spread` (x1.25): then the model is the peers' median.
 *      Intercept a: the median over the peers' summaries of THIS window of
 *      log latency - b * log throughput, so a host-wide step moves the
 *      model at once. Outlier removal, 2: medians have a 50% breakdown
 *      point, so up to half the peers may be slow themselves (3 of 12 in
 *      cluster J of the public data).
 *   3. The window's slowdown of device i: latency / model(throughput), its
 *      latency against what its peers show at its own load. A drive that
 *      is only busier sits on the curve: about 1.
 *   4. Scores: the 2-hour score, the median of the last `score_windows`
 *      (24) window slowdowns once `min_score_windows` (12: an hour) were
 *      valid; and the long score, the median of the last `long_windows`
 *      (144: 12 hours of samples) once half were valid. A median over
 *      windows is a sliding-window vote: it exceeds r only if half the
 *      windows did, so a burst of minutes never counts.
 *   5. Decision with hysteresis: flagged by the FAST rule when the 2-hour
 *      score >= `flag_ratio` (1.9); by the SUSTAINED rule when the long
 *      score >= `long_ratio` (1.1), stands `long_z` (40) robust standard
 *      deviations (1.4826 x MAD of the peers' long scores, at least
 *      `long_floor` = 0.002 in log units) above the peers' median long
 *      score, and the 2-hour score is >= long_ratio too (still slow now).
 *      And by the PERSISTENT rule when the last long_windows slowdowns,
 *      cut into `persist_blocks` (4) blocks of consecutive windows (3
 *      hours of samples each at the defaults), have a median of at least
 *      `persist_ratio` (1.25) in EVERY block (each with half its windows
 *      valid), and the 2-hour score is >= long_ratio: a small slowdown
 *      that never lets up, however noisy the peers. And by the DAY-LONG
 *      rule, the same over the last `day_windows` (288: 24 hours of
 *      samples, 4 blocks of 6 hours) with the smaller `day_ratio` (1.14):
 *      twice the evidence for a smaller slowdown. Cleared when all are
 *      well below their thresholds (2-hour score < `clear_ratio` = 1.4,
 *      the long one below long_ratio or under half of long_z, and the
 *      least block medians under half of their excess: 1.125 and 1.07)
 *      for `clear_windows` (6: 30 minutes) windows in a row; while no
 *      score is valid the state is held.
 *
 * Why these values (tuned on clusters A and J of the public Perseus
 * subset, kratos-failslow; cluster C held out; README has the table)
 *   On A and J the largest 2-hour score any unlabelled drive reached in 15
 *   days was 1.73 (J's log workload: drives run hot for hours), the
 *   smallest largest 2-hour score of a labelled drive 2.40: flag_ratio 1.9
 *   sits between with ~1.1x and ~1.26x margins, and flags A's and J's
 *   labelled drives within the first hour of evidence. Smaller slowdowns
 *   need more evidence and a quiet peer group: the largest long-score z
 *   of an unlabelled drive was 31.7 (one J drive persistently 1.31x its
 *   peers), labelled drives 27-39 (caught by the fast rule anyway), so
 *   long_z 40 leaves a 1.26x margin; long_ratio 1.1 keeps a statistically
 *   clear but practically small difference (a quiet host) from paging.
 *   clear_ratio 1.4 is well below 1.9 so a flagged drive does not flap.
 *   The persistent rule: over 15 days of A and J, the largest least-block
 *   median of an unlabelled drive (4 blocks of 36 windows, the 2-hour
 *   score >= 1.1 at the time) was 1.118, of a labelled drive at least
 *   1.91; persist_ratio 1.25 leaves a 1.12x margin, as the fast rule has
 *   (a median over one long window is not enough: J drives run 1.3x for
 *   a day and then not; every block of it must agree).
 *   The day-long rule: a healthy drive sits at 0.93-1.05x its peers over
 *   the record (5th-99th percentile; at most 1.07), so a drive 1.2x its
 *   peers is only ~1.12x the slowest healthy one -- too close for 12
 *   hours of evidence. Over 24 hours the largest least-block median of an
 *   unlabelled drive was 1.080. day_ratio 1.14 (a 1.056x margin) is where
 *   the extrapolated tail of those figures gives fewer false flags than
 *   the fast rule already does: 0.034 against 0.05 per drive-year
 *   (tests/oracles/failslow/false_alarms.py, on A and J). Injected
 *   into real A and J drives so that each ends 1.2x its peers, 126 of 128
 *   were flagged, after a median 23 h of samples, with no other drive flagged
 *   (tests/oracles/failslow/inject.py --peer-ratio).
 *   The long score adapts to the host's noise (its peers' spread), not to
 *   any latency level. The held-out cluster C: README (run once with the
 *   three first rules, once after the day-long rule was chosen on A and J).
 *
 * Memory is fixed at dp_failslow_new: per device the current window's
 * samples, the last model_windows summaries and the last day_windows
 * slowdowns, plus scratch for the peers' points. Nothing is allocated
 * while feeding. A step costs O(ndevices^2 * model_windows) once per
 * window and O(ndevices) otherwise; measured for 90 devices at 10 s
 * intervals (contrib/evaluation/bench/failslow_cost.sh): ~4 ms (~20 M
 * instructions) per window closed, ~2 us per other interval, 3.5 kB per device.
 * Not thread-safe: one caller.
 */
#ifndef DP_FAILSLOW_H
#define DP_FAILSLOW_H

#include <stddef.h>

#define DP_FAILSLOW_DEVICES_MAX 1024
#define DP_FAILSLOW_WINDOW_MAX 720  /* steps per window */
#define DP_FAILSLOW_HISTORY_MAX 288 /* windows kept for model and score */
#define DP_FAILSLOW_NAME_MAX 64

typedef struct {
  unsigned window_steps;      /* intervals per window (20) */
  unsigned min_valid_steps;   /* valid samples for a summary (10) */
  unsigned model_windows;     /* windows of peers' points for the slope (12) */
  unsigned score_windows;     /* windows in the score's median (24) */
  unsigned min_score_windows; /* valid windows before a score (12) */
  unsigned clear_windows;     /* windows below clear_ratio to clear (6) */
  unsigned min_peers;         /* peers with a summary this window (2) */
  double flag_ratio;          /* 2-hour score >= this: flagged (1.9) */
  double clear_ratio;         /* below this for clear_windows: cleared (1.4) */
  double max_slope;           /* of log latency on log throughput (1) */
  double min_load_spread;     /* thirds' load ratio for a slope (1.25) */
  double min_throughput;      /* bytes/s; below: idle, missing (4096) */
  unsigned long_windows;      /* windows in the long score (144) */
  double long_ratio;          /* long score at least this (1.1) */
  unsigned persist_blocks;    /* the long horizon in this many blocks (4) */
  double persist_ratio;       /* every block's median at least this (1.25) */
  double long_z;              /* and this many peer MADs above (40) */
  unsigned day_windows;       /* the persistent rule's second horizon (288) */
  double day_ratio;           /* every block of it at least this (1.14) */
  double long_floor;          /* least peer spread, log units (0.002) */
} dp_failslow_conf_t;

/* The defaults above. */
void dp_failslow_conf_init(dp_failslow_conf_t *c);

/* The step counts for an interval of interval_s seconds: a window of about
 * 300 s (at least 3 intervals), the others kept as durations (model 1 h,
 * score 2 h, min score 1 h, clear 30 min). -EINVAL if interval_s is not
 * positive or a count would exceed its maximum. */
int dp_failslow_conf_for_interval(dp_failslow_conf_t *c, double interval_s);

/* The same with a window of about window_s seconds instead of 300 s, every
 * other horizon scaled with it (model 12 windows, score 24, min score 12,
 * clear 6, long 144 windows, as at 300 s): the plugin's FailSlowWindow,
 * shorter for a test or a demo that cannot wait hours. At window_s = 300
 * it is dp_failslow_conf_for_interval. -EINVAL as there, or if window_s is
 * not positive. */
int dp_failslow_conf_for_window(dp_failslow_conf_t *c, double interval_s,
                                double window_s);

/* 0 or -EINVAL (a count out of range, ratios not 1 <= clear <= flag). */
int dp_failslow_conf_check(const dp_failslow_conf_t *c);

typedef enum {
  DP_FAILSLOW_RULE_NONE = 0,
  DP_FAILSLOW_RULE_FAST,       /* 2-hour score >= flag_ratio */
  DP_FAILSLOW_RULE_SUSTAINED,  /* 12-hour score stands out from the peers' */
  DP_FAILSLOW_RULE_PERSISTENT, /* slow in each block of the long horizon */
  DP_FAILSLOW_RULE_DAY,        /* a little slow in each block of 24 hours */
} dp_failslow_rule_t;
/* "fast", "sustained", "persistent", "day-long" */
const char *dp_failslow_rule_name(dp_failslow_rule_t r);

/* One device's verdict, as of the last closed window. */
typedef struct {
  double slowdown;         /* the score (median of window slowdowns); NaN */
  double window_slowdown;  /* the last window's slowdown; NaN if missing */
  int flagged;             /* 1 while judged fail-slow */
  int changed;             /* flagged changed at this step */
  unsigned peers;          /* peers in the last window's model */
  unsigned windows;        /* valid windows behind the score */
  double slowdown_long;    /* the long score; NaN */
  double z_long;           /* its distance from the peers' long scores, in
                              robust standard deviations; NaN */
  double slowdown_persist; /* the least of the long horizon's block
                              medians; NaN until every block has one */
  double slowdown_day;     /* the same over the day_windows horizon */
  dp_failslow_rule_t rule; /* the rule that flagged it (while flagged) */
} dp_failslow_verdict_t;

typedef struct dp_failslow dp_failslow_t;

/* A detector over ndevices (1 .. DP_FAILSLOW_DEVICES_MAX) devices of one
 * peer group. 0, -EINVAL (bad conf or count), -ENOMEM. */
int dp_failslow_new(dp_failslow_t **out, const dp_failslow_conf_t *c,
                    size_t ndevices);
void dp_failslow_free(dp_failslow_t *d);

/* Device i's name (for dp_failslow_name; truncated). 0 or -EINVAL. */
int dp_failslow_set_device(dp_failslow_t *d, size_t i, const char *name);
const char *dp_failslow_name(const dp_failslow_t *d, size_t i);

/* The latency a sample carries: the mean wait per I/O over reads and
 * writes together, in seconds, from each direction's I/O count (or rate:
 * only their ratio matters) and its mean wait (await, seconds; NaN: none).
 * With one await known, that one; NaN with none, or with no I/O. The one
 * rule for every input (the device view's counters, iostat-style rates
 * and awaits). */
double dp_failslow_latency_per_io(double reads, double read_await_s,
                                  double writes, double write_await_s);

/* Device i's sample of the current interval: throughput in bytes/s and
 * average latency per I/O in seconds (dp_failslow_latency_per_io); NaN for
 * a missing one. A device not fed before dp_failslow_step is missing for
 * that interval; fed twice, the last sample counts. */
void dp_failslow_feed(dp_failslow_t *d, size_t i, double throughput,
                      double latency_s);

/* Ends the interval at time ts (any clock, seconds; kept as the time of the
 * window's verdicts). When it closes a window, judges it and returns 1,
 * else 0; v (ndevices entries, may be NULL) gets every device's verdict:
 * `changed` is set only at the step that changed it. */
int dp_failslow_step(dp_failslow_t *d, double ts, dp_failslow_verdict_t *v);

/* Device i's verdict as of the last closed window (changed = 0). */
void dp_failslow_verdict(const dp_failslow_t *d, size_t i,
                         dp_failslow_verdict_t *v);

/* The verdict in words, what matters first (a notification may cut the
 * end off), e.g. "fail-slow: 2.07x its 11 peers at the same load over 24
 * windows; by the fast rule (threshold 1.90x); the long score 1.95x (41.2
 * peer MADs)". The caller names the device. */
void dp_failslow_describe(const dp_failslow_t *d, size_t i,
                          const dp_failslow_verdict_t *v, char *buf,
                          size_t len);

#endif /* DP_FAILSLOW_H */
