/*
 * health.h - is a target degrading? A collectd-free verdict per target,
 * fed with every round's results by the plugin (and by `diskprobe replay`
 * with recorded rounds): OK, WARNING or FAILURE, which rule says so, and
 * the figures behind it.
 *
 * Baseline
 *   Per target and probe, the medians of the last `horizon_rounds` healthy
 *   rounds (default: a day of rounds) of three statistics: p50 latency,
 *   mean latency and IOPS. Medians, because one round in twenty can be a
 *   busy neighbour's; rounds are only learned while the target is OK, so a
 *   long degradation never becomes the new normal. Kept across restarts
 *   in a state file (dp_health_save / dp_health_load).
 *
 * Slowdown of one probe in one round, against its baseline
 *   uniform  u = p50 / base_p50
 *   bursty   b = min(mean / base_mean, base_iops / iops)
 *   A uniform slowdown moves p50. A bursty one (a throttle releasing I/O
 *   in 100 ms slices) leaves p50 where it was but moves mean latency and
 *   IOPS together; requiring both keeps one long I/O (which moves only the
 *   mean) from counting.
 * Slowdown of the round
 *   S = max( U,  B / burst_scale )
 *   U = the first probe's u (QD1 in the default set: the steadiest p50)
 *   or, if larger, the second largest u: the other probes' p50 wander
 *   more (0.33x-1.68x of their median on a quiet disk) and must agree in
 *   twos.
 *   B = with two or more probes the second largest b: two probes of the
 *   round must agree, because mean latency is noisy (measured here: QD1
 *   mean > 3x and QD32 IOPS < 1/3 together in 0 of 60 healthy rounds,
 *   against 3 and 4 of 60 alone); with one probe, its b. And it counts
 *   at 1/burst_scale (1.5): on a shared disk mean latency and IOPS sag
 *   1.7-2.4x for minutes while p50 barely moves (recorded here, see the
 *   README's replay), so the bursty part needs 6x to warn fast, 3.3x to
 *   warn -- a blkio throttle to a tenth (B ~ 10) still warns in 2 rounds.
 *
 * Rules (k of the last n rounds with S >= m), once armed
 *                        m      k of n   fires for a step of
 *   warn-fast            4.0    2 of 2   10x within 2 rounds
 *   warn                 1.9    3 of 3   3x within 3 rounds
 *   warn-slow            1.4    7 of 10  2x sustained within 10 rounds
 *                                        (the first probe's p50 only, and
 *                                        the newest round too)
 *   fail                 8.0    3 of 3   (FAILURE)
 *   throttled            the first probe's IOPS lost with its p50 near
 *                        its baseline: its bursty ratio b over its p50
 *                        ratio u, g = b / u, at burst_warn (1.6), or b at
 *                        burst_warn with g at burst_shape (1.25); u below
 *                        warn; in burst_k (5) of the last 6 rounds, the
 *                        newest among them (confirmations count). What a
 *                        token bucket does (a throttled cloud volume lets
 *                        bursts through): a real blkio throttle at half
 *                        QD1's rate moved its p50 1.1-1.4x, its mean 1.8x,
 *                        its IOPS 2x (g 1.3-1.7). g, not b alone: in a
 *                        stretch where the disk runs 30 % faster than its
 *                        median a halved IOPS reads b 1.3-1.6 but g ~2.
 *                        Off after clear_rounds rounds with b below
 *                        1.6 / 1.3 (the IOPS back). Recorded healthy
 *                        series: such a round in 1.5 % (quiet) to 6 %
 *                        (HDD-like) of rounds, never 5 of 6; a loaded
 *                        VM's QD1 sags so for minutes: reported, like its
 *                        stalls.
 *   Armed: after arm_rounds (default 20) rounds in the baseline.
 *
 *   Why these levels, measured on a quiet recorded series of this
 *   machine's disk (tests/fixtures/health, README): a healthy QD1 p50 lies
 *   within 0.66x-1.37x of its median (1st percentile to max), the deepest
 *   and the sequential probe's within 0.33x-1.68x. So a 3x step reads at
 *   least ~2x (hence 1.9), a 2x step at least ~1.3x and mostly >= 1.5x
 *   (hence 1.4 on the QD1 probe, 7 of 10), and no healthy round reaches
 *   1.9 on any probe or 1.4 on the QD1 probe.
 *   False alarms: a page per target-year at a 60 s interval is alpha =
 *   1.9e-6 per round. QD1's p50 has a log-sd of ~0.15: u >= 1.4 (z = 2.2)
 *   at p ~ 0.013, 7 of 10 such rounds C(10,7) p^7 ~ 6e-12 -- warn-slow is
 *   bounded on paper. warn is not: a symmetric lognormal fit of the
 *   sequential probe (log-sd ~0.4) gives p ~ 0.06 for u >= 1.9 and 2e-4
 *   for three in a row, but its measured upper tail is far tighter (p99
 *   1.57x, max 1.68x; the spread is fast outliers), and no healthy round
 *   reached 1.9: for warn the replay is the evidence. Mean latency is
 *   noisier (CV 0.4), hence the second largest of the round and
 *   1/burst_scale. Real noise also comes in bursts (a busy neighbour for
 *   minutes): see the README's busy series.
 *
 * Per-probe rules (once armed): what one probe shows and the round's S
 * averages away. Each is judged over a window, each level chosen from the
 * recorded noise of its own statistic (contrib/evaluation/health, the
 * study; replay_eval.py, its replay, is in tests/oracles/health).
 *   capacity      every probe but the first (the deep-queue and the
 *                 sequential probe in the default set): its capacity loss
 *                 c = base IOPS / IOPS, its median over the last cap_n
 *                 rounds, relative to the first probe's median loss,
 *                 r = med c / max(1, med c_first) -- so a whole-disk slowdown,
 *                 which the latency rules judge, does not count twice,
 *                 and a disk that lost its parallelism or half its
 *                 bandwidth does. WARNING when r (4 of the cap_n = 7
 *                 rounds measured at least) reaches
 *                 cap_warn (2) -- cap_warn_seq (1.75) for a sequential
 *                 probe, whose IOPS are steadier. Recorded noise (quiet,
 *                 HDD-like and busy-VM series, rule_noise.py): the deep
 *                 random probe's r >= 2 in at most 1.5 % of rounds, so 4
 *                 of 7 independent rounds C(7,4) p^4 <= 1.9e-6 (a page
 *                 per target-year at 60 s); the sequential probe's r >=
 *                 1.75 in at most 0.7 % (4 of 7: 9e-8); no 7-round median
 *                 of a healthy series reaches either (max 1.54, 1.50).
 *                 FAILURE ("collapse") when the median of c itself
 *                 reaches cap_fail (8: a tenth of the IOPS, read through
 *                 the noise). Off, per probe, only once the probe's own
 *                 loss c (not relative: a noisy first probe must not
 *                 clear it) has been below its level / 1.3 in each of
 *                 its newest cap_clear_n (2; cap_clear_n_seq, 4, for a
 *                 sequential probe) measured rounds -- every one
 *                 of them, because the sequential probe's bandwidth shifts
 *                 for minutes to twice its median on a shared disk, so a
 *                 halved one reads as its baseline now and then: a
 *                 median of 3 cleared the rule within the fault
 *                 (WARNING, OKAY, WARNING). The deep random probe under
 *                 QD32 /3 reads below 2 / 1.3 in 0 % (quiet) to 3.5 %
 *                 (loaded VM) of rounds, 2 in a row 0-0.12 %; simulated
 *                 30-round faults on the recorded series: QD32 /3 never
 *                 cleared, sequential /2 cleared within the fault in 0-5 %
 *                 of them on quiet series (up to 10 % on loaded ones: its
 *                 bandwidth at twice its median for minutes is a halved
 *                 disk's baseline); after a recovery they clear at the
 *                 2nd and 4th round (median). Confirmation rounds have the
 *                 first probe only: this rule counts full rounds.
 *   tail          the p99 / p50 of each probe against its learned median
 *                 (a fattened tail with p50 unchanged: retries on weak
 *                 sectors, GC pauses). Two figures:
 *                 - the whole disk's: the smallest over the probes, its
 *                   median over the last tail_n (15) rounds at tail_warn
 *                   (3.5); healthy recorded series stay <= 3.22 (a busy
 *                   shared disk). Off below tail_warn / 1.3.
 *                 - one probe's own: at >= tail_probe_warn (3.5) in
 *                   tail_probe_k (12) of the last tail_n full rounds it
 *                   judged: rounds of DP_HEALTH_TAIL_MIN_OPS (200) I/Os
 *                   or more (obs.ops; 0: not known). With fewer, the
 *                   p99 is the round's one or two slowest I/Os and one
 *                   hiccup of a loaded host makes it: the hdd-like
 *                   series' QD1 (94 reads a round, p99 = max) reaches 31x
 *                   for minutes, 1.44 without those rounds. Recorded
 *                   healthy series: at most 2.24 (12 of 15); a round at
 *                   >= 3.5 in at most 4.1 % of rounds, so C(15,12) p^12
 *                   ~ 1e-14 on independent rounds (rule_noise.py). p99 x5
 *                   on one probe gives >= 3.86. Off below the level / 1.3
 *                   (4 rounds of 15 below it); fires only while the
 *                   median of the probe's newest 3 judged rounds is at
 *                   the level / 1.3 or more.
 *                 Needs arm_rounds of its own baseline (kept in the state
 *                 file as "shape" lines).
 *   intermittent  a fault that comes and goes, over the last full
 *                 rounds (a history of their own: confirmations neither
 *                 count nor push full rounds out), in at least two spells
 *                 (a good round between: one sustained fault that ended
 *                 is not), with a bad round among the newest 3; two
 *                 levels:
 *                 - S >= warn_fast (4) in inter_k (3) of the last 10 (a
 *                   fault every 3rd round 10x slower). Single-round
 *                   spikes (one in 25) never make 3.
 *                 - "recurring": S >= recur_level (1.6) in recur_k (8) of
 *                   the last recur_n (20), counting spells of at most 3
 *                   rounds (a longer one is a sustained fault, the
 *                   latency rules' to judge: after its OKAY a slow round
 *                   must not make it recurring): every other round 2-3x slower
 *                   (garbage collection every other minute, a flapping
 *                   path), which neither warn (3 in a row) nor warn-slow
 *                   (the first probe in 7 of 10) nor the 4x level sees.
 *                   Recorded healthy series: a round at S >= 1.6 in
 *                   0.07 % (quiet) to 2.3 % (a loaded VM) of rounds,
 *                   C(20,8) p^8 <= 1.1e-8; at most 7 of 20 on the loaded
 *                   one. Busy shared disks reach 10-11 of 20 in their
 *                   minutes-long stalls: reported.
 *                 Off once none of the newest 4 full rounds reaches its
 *                 level.
 *   fail          also: any one probe at >= fail (8x) in 3 of 3 rounds.
 *
 * Learning: a round is learned only when it looks normal -- the target
 *   OK (not recovering either), S and the first probe's p50 ratio below
 *   warn_slow, its bursty ratio
 *   below 2, no probe at >= warn, no relative capacity at >= cap_warn --
 *   so a degradation is not learned even before a rule fires (a 2x step
 *   is never absorbed).
 *
 * One level per target, and its recovery (armed targets)
 *   The target's level is the worst of its rules' levels, every round. A
 *   target that is not OK stays at least WARNING ("recovering", the rule
 *   that held it last named) until every rule is clear AND its round's
 *   own slowdown S has been below `clear` (1.3) for clear_rounds (3)
 *   rounds in a row: one rule clearing never hands the target to another
 *   through an OKAY, and no OKAY comes on a round that is still slow.
 *   Each rule keeps its own hysteresis on top (the capacity rule's below).
 *   False clears under a fault still on, on recorded series
 *   (contrib/evaluation/health, tests/oracles/health/lifecycle.py and
 *   rule_noise.py): a whole disk still 2x slower reads S < 1.3 in
 *   0-1.3 % of rounds, three in a row in at most 0.13 %; 1.5x in 2-7 %.
 *   At the OKAY the rule windows start afresh (the intermittent rules'
 *   history of full rounds is kept), so a rule never fires again from the
 *   rounds of the fault that just ended.
 *
 * Confirmation rounds: a round fed with obs[0].confirm set is the first
 *   probe alone, run soon after a round that was `suspect` (S >= warn, a
 *   crawl, the first probe at the throttled level, or a recovery: the
 *   target held at WARNING while S is below clear, so the clear_rounds
 *   that end it take about one interval too, not clear_rounds intervals
 *   -- unless an earlier bad spell is
 *   among the last 10 full rounds: a fault that comes back every few
 *   intervals is then held between its windows, not an OKAY and a new
 *   WARNING each time). It counts in the latency rules' k of n (warn-fast,
 * warn, warn-slow, fail, throttled), the recovery's clear_rounds and the
 * ceiling rule, so a 10x step warns at the first
 * confirmation instead of an interval later; it is never learned, never counts
 * in the intermittent rule (one bad spell confirmed twice is one spell) and
 * leaves the capacity and tail rules as they were.
 *
 * Windowed rules (capacity, tail, intermittent) turn on only while their
 *   newest rounds agree (capacity and tail: the median of the newest 3 at
 *   the level / 1.3 or more; intermittent: a bad round among the newest
 *   3): a window still full of a fault that has ended never fires one.
 *
 * Crawl (armed or not): the first probe's p50 at min(1 s, 100x the
 *   ceiling) in 2 rounds in a row (a confirmation counts) is a FAILURE by
 *   the ceiling rule, detail "crawl": a disk that barely answers.
 *
 * Probing: a target that cannot be probed (open failing, its probe file
 *   gone or not ours, no round finished for two intervals and a Timeout)
 *   is FAILURE by "probing" (dp_health_not_probing) until its next round.
 *
 * Ceiling (armed or not: a disk slow from its first round)
 *   The first probe's p50 above the media class's ceiling for 3 rounds in
 *   a row: WARNING ("ceiling"). Defaults: NVMe 2 ms, SSD 5 ms, virtual or
 *   network 20 ms, HDD 50 ms, unknown 50 ms; per target overridable.
 *
 * Peers
 *   With three or more targets of one media class and model whose first
 *   probes run the same job (pattern, block size, queue depth) on other
 *   disks (dp_health_from_conf knows each target's disk), each
 *   target's first-probe p50 against the median of the others' in the
 *   same round; ratio >= 3 for 3 rounds in a row: WARNING ("peers"), so
 *   one disk slower than its siblings is flagged while host-wide load
 *   moves them all.
 *
 * Stalls and I/O errors: FAILURE at once ("stall", "errors"); cleared by
 *   the first round without them. Writes refused with ENOSPC/EDQUOT (a
 *   full copy-on-write filesystem or thin volume: an overwrite needs free
 *   space) are no disk error: WARNING by "errors", detail "no-space",
 *   said as such; such a round teaches the baseline nothing.
 *
 * Not thread-safe: one caller (the plugin feeds it from its read
 * callback).
 */
#ifndef DP_HEALTH_H
#define DP_HEALTH_H

#include "conf.h"
#include "vocab.h"

#include <stddef.h>
#include <stdint.h>

#define DP_HEALTH_PROBES_MAX 16
/* The fewest I/Os of a round whose p99 the one-probe tail rule judges. */
#define DP_HEALTH_TAIL_MIN_OPS 200
#define DP_HEALTH_HORIZON_MAX 2880 /* rounds kept per statistic */

typedef enum {
  DP_HEALTH_OK = 0,
  DP_HEALTH_WARNING = 1,
  DP_HEALTH_FAILURE = 2
} dp_health_level_t;

/* The rules, for per-rule values and messages. */
typedef enum {
  DP_RULE_BASELINE = 0, /* warn-fast, warn, warn-slow, fail */
  DP_RULE_CEILING,
  DP_RULE_PEERS,
  DP_RULE_STALL,
  DP_RULE_ERRORS,
  DP_RULE_FAILSLOW,     /* the target's disk slower than its peers (peers.h) */
  DP_RULE_CAPACITY,     /* a probe's IOPS against the first probe's */
  DP_RULE_TAIL,         /* p99 / p50 against its baseline, over 15 rounds */
  DP_RULE_INTERMITTENT, /* S >= warn_fast in 3 of 10 rounds */
  DP_RULE_PROBING,      /* the target is not probing at all */
  DP_RULE_COUNT
} dp_health_rule_t;
const char *dp_health_rule_name(dp_health_rule_t r);   /* "baseline" ... */
const char *dp_health_level_name(dp_health_level_t l); /* "ok" ... */

/* The default ceiling of the first probe's p50 for a class, seconds. */
double dp_media_ceiling_s(dp_media_t m);

/* What the rules need; dp_health_conf_init gives the defaults above. */
typedef struct dp_health_conf {
  unsigned horizon_rounds; /* <= DP_HEALTH_HORIZON_MAX */
  unsigned arm_rounds;
  double warn_fast, warn, warn_slow, fail, clear; /* slowdown levels */
  unsigned warn_slow_k, warn_slow_n;              /* 7 of 10 */
  double peer_ratio;                              /* 3 */
  double burst_scale; /* the bursty part counts at 1/this (1.5) */
  unsigned ceiling_rounds, peer_rounds, clear_rounds; /* 3 each */
  double cap_warn, cap_warn_seq;                      /* 2, 1.75 (relative) */
  double cap_fail;                                    /* 8 (raw) */
  unsigned cap_n;                                     /* 7 rounds, <= 10 */
  double tail_warn;                                   /* 3.5 */
  unsigned tail_n;                                    /* 15 rounds, <= 15 */
  double tail_probe_warn;                             /* 3.5 */
  unsigned tail_probe_k;                              /* 12 of tail_n */
  unsigned inter_k;          /* 3 of 10 rounds at >= warn_fast */
  double recur_level;        /* 1.6: the "recurring" intermittent level */
  unsigned recur_k, recur_n; /* 8 of 20 full rounds, recur_n <= 20 */
  unsigned cap_clear_n;      /* 2 (4 for a sequential probe): measured
                                rounds in a row of a probe's own loss below
                                its level / 1.3 that clear the capacity rule */
  unsigned cap_clear_n_seq;
  double burst_warn;  /* 1.6 and 1.25: the first probe's IOPS lost */
  double burst_shape; /* with its p50 near its baseline ... */
  unsigned burst_k;   /* ... in 5 of the last 6: "throttled" */
} dp_health_conf_t;
void dp_health_conf_init(dp_health_conf_t *c);

/* One probe's figures in one round. */
typedef struct {
  double p50_s, mean_s, iops; /* NaN or 0 when nothing completed */
  int stalled;
  uint64_t errors;  /* I/O errors + short transfers in this round */
  uint64_t nospace; /* writes refused for want of space (ENOSPC, EDQUOT) */
  double p99_s;     /* NaN or 0: the tail rule does not judge the probe */
  int confirm;      /* (first probe) a confirmation round: see below */
  uint64_t ops;     /* I/Os completed; 0: not known (the one-probe tail
                       rule judges rounds of DP_HEALTH_TAIL_MIN_OPS) */
} dp_health_obs_t;

/* A target's verdict after a round. */
typedef struct dp_health_verdict {
  dp_health_level_t level, prev_level;
  int changed;                           /* level != prev_level */
  dp_health_level_t rule[DP_RULE_COUNT]; /* each rule's own level */
  dp_health_rule_t why;   /* the worst rule (first if tied); while
                             recovering and at the OKAY, the rule that held
                             the target last (its notices pair up) */
  const char *why_detail; /* "warn-fast", "ceiling", ... */
  int armed;
  unsigned baseline_rounds;                    /* rounds in the baseline */
  double slowdown;                             /* S; NaN before armed */
  double slowdown_uniform;                     /* max u; NaN before armed */
  size_t worst_probe;                          /* probe with the largest s */
  double probe_slowdown[DP_HEALTH_PROBES_MAX]; /* s per probe; NaN unarmed */
  double base_p50_s[DP_HEALTH_PROBES_MAX], base_mean_s[DP_HEALTH_PROBES_MAX],
      base_iops[DP_HEALTH_PROBES_MAX]; /* NaN until a round is learned */
  double p50_s[DP_HEALTH_PROBES_MAX], iops[DP_HEALTH_PROBES_MAX]; /* now */
  double peer_ratio; /* NaN without 2+ peers */
  double ceiling_s;  /* in force */
  /* the per-probe rules' statistics (NaN before armed / not measured) */
  double capacity[DP_HEALTH_PROBES_MAX];     /* median relative capacity loss */
  double capacity_raw[DP_HEALTH_PROBES_MAX]; /* median capacity loss */
  size_t capacity_probe;                     /* the probe it judged worst */
  double tail;             /* median of the round's tail ratio */
  double tail_probe;       /* the one-probe figure: the largest over the
                              probes of the tail_probe_k-th largest of its
                              last tail_n ratios; NaN when none judged */
  size_t tail_which;       /* the probe it is (when tail_probe is a number) */
  unsigned intermittent;   /* rounds of the last 10 at >= warn_fast */
  unsigned recurring;      /* full rounds of the last recur_n at >=
                              recur_level */
  const char *not_probing; /* dp_health_not_probing's cause, else NULL */
  /* the baselines restored from the state file were dropped this round
   * (their probation, "Across restarts"): why, in words; else NULL */
  const char *relearned;
  int suspect;         /* this round's S reached warn, a crawl, or a
                          recovery (see "Confirmation rounds"): worth a
                          confirmation round (scheduler.h, dp_sched_confirm) */
  int recovering;      /* WARNING only because the target has not
                          recovered yet: every rule is clear, S has not
                          been below clear for clear_rounds rounds */
  unsigned clear_run;  /* rounds in a row with S below clear */
  double bursty_first; /* the first probe's bursty ratio over its p50
                          ratio, g (the throttled rule; NaN) */
  /* u and IOPS / base IOPS per probe (NaN; in a confirmation, a probe it
   * did not run: its latest round's) */
  double probe_p50_ratio[DP_HEALTH_PROBES_MAX];
  double probe_iops_ratio[DP_HEALTH_PROBES_MAX];
} dp_health_verdict_t;

typedef struct dp_health dp_health_t;

/* A health tracker for n targets. -EINVAL (bad conf), -ENOMEM. */
int dp_health_new(dp_health_t **out, const dp_health_conf_t *c, size_t n);
void dp_health_free(dp_health_t *h);

/*
 * Describes target i: its name, its probes' names (each with a key that
 * changes when the probe's job does, e.g. "randread/8192/1", so a saved
 * baseline of another job is not reused), media class and model, and a
 * ceiling override (seconds; 0 = the class default). Call before feeding.
 */
int dp_health_set_target(dp_health_t *h, size_t i, const char *name,
                         size_t nprobes, const char *const *probe_names,
                         const char *const *probe_keys, dp_media_t media,
                         const char *model, double ceiling_s);

/*
 * The fail-slow verdict of target i's disk among the host's like disks
 * (peers.h, from the device view): flagged 1 makes the target's failslow
 * rule WARNING from its next round on, 0 clears it then; slowdown is the
 * disk's score and peers the other disks of its group, for the
 * description. The detector keeps its own hysteresis, so the rule follows
 * the flag as it is. Targets start unflagged.
 */
void dp_health_set_failslow(dp_health_t *h, size_t i, int flagged,
                            double slowdown, size_t peers);

/*
 * A tracker set up from the configuration: ArmRounds, BaselineHorizon
 * over the shortest ProbeInterval (at most DP_HEALTH_HORIZON_MAX rounds),
 * every target with its probes keyed by their job ("randread/8192/1"),
 * its LatencyCeiling, and the media class and model of disks[i] (its
 * worker's disk) from sysfs under sysroot (dp_blockdev_info; NULL:
 * DP_SYSROOT_DEFAULT). 0, -EINVAL, -ENOMEM.
 */
int dp_health_from_conf(dp_health_t **out, const dp_plugin_conf_t *pc,
                        const dp_target_conf_t *tc, size_t n,
                        const char *const *disks, const char *sysroot);

/* Target i's media class and model (""), as set. */
dp_media_t dp_health_media(const dp_health_t *h, size_t i, const char **model);

/*
 * Across restarts, a restored baseline is on probation: a disk cannot run
 * many times faster than its own healthy normal, so when in each of the
 * target's first DP_HEALTH_PROBATION_ROUNDS full rounds after a load every
 * probe that measured ran at least DP_HEALTH_PROBATION_FAST times faster
 * (p50) than its restored baseline, those baselines are not this disk's
 * (another disk under the same name, or a file edited or corrupted in a
 * way its checksum did not catch): they are dropped and learned afresh,
 * and that round's verdict says so (relearned). A first round no faster
 * than that ends the probation. Slower is left to the rules: that is what
 * they judge.
 */
#define DP_HEALTH_PROBATION_ROUNDS 3
#define DP_HEALTH_PROBATION_FAST 10.0

/*
 * Across restarts (the state file): target i's level as last judged --
 * after a load, the level its last notice said -- and the rule that holds
 * it (*why, if not NULL; for OK, the rule its OKAY named). A target
 * restored at WARNING or FAILURE is held there: its first rounds send the
 * OKAY through the recovery (unarmed: at its first round), or nothing
 * while the fault lasts, so each notice is sent once whatever restarts
 * fall between a WARNING and its OKAY.
 */
dp_health_level_t dp_health_level(const dp_health_t *h, size_t i,
                                  dp_health_rule_t *why);

/* A stall's FAILURE notice out and its OKAY not yet (the monitor's
 * pairing, stall.h), kept in the state file: the stalled probe's name, or
 * NULL / "" when none; dp_health_stall_open: as set or restored ("": none). */
void dp_health_set_stall_open(dp_health_t *h, size_t i, const char *probe);
const char *dp_health_stall_open(const dp_health_t *h, size_t i);

/*
 * Feeds target i's round: obs[0..nprobes) in the order given to
 * set_target. Updates the target's state and fills *v. Peers are judged
 * against the other targets' latest rounds.
 */
void dp_health_round(dp_health_t *h, size_t i, const dp_health_obs_t *obs,
                     dp_health_verdict_t *v);

/*
 * The same, one probe result at a time as the scheduler delivers them:
 * keeps the round's figures until its last probe (last_in_round), then
 * judges the round into *v and returns 1; else 0. A probe of the round
 * that never reported (a round cut short) counts as not measured.
 */
int dp_health_feed(dp_health_t *h, size_t i, size_t probe,
                   const dp_health_obs_t *o, int last_in_round,
                   dp_health_verdict_t *v);

/*
 * Target i is not probing (why: "cannot open: ...", "no round for 130 s",
 * copied): its verdict is FAILURE by "probing" into *v, kept (and said
 * again by every call) until its next round is fed, which judges it as
 * usual and so clears the rule. The round in progress, if any, is
 * dropped.
 */
void dp_health_not_probing(dp_health_t *h, size_t i, const char *why,
                           dp_health_verdict_t *v);

/*
 * The verdict in words, for notifications and replays: level, rule, the
 * probe and its figures against the baseline, and the threshold first,
 * then the target (a cut at collectd's 256-byte notification loses the
 * least), e.g.
 *   WARNING by warn-fast: probe randread-qd1 at 10.20x its baseline (p50
 *   1.21 ms vs 118 us, IOPS 812 vs 8120); threshold 4x in 2 of 2 rounds;
 *   target db (ssd)
 */
void dp_health_describe(const dp_health_t *h, size_t i,
                        const dp_health_verdict_t *v, char *buf, size_t len);

/*
 * State file: the baselines of every target and probe, as text, version
 * line first ("diskprobe-health 1").
 *
 * dp_health_state_format writes the text into *text (malloc'd, the
 * caller's to free; *len bytes): cheap, for the read thread.
 * dp_health_state_parse restores the baselines of the targets and probes
 * that exist now with the same key; others are ignored. On a corrupt or
 * foreign text it returns -EINVAL, changes nothing and writes the cause
 * (with its line number) to err.
 *
 * dp_health_save / dp_health_load do both with the file at path, through
 * statefile.h's safe I/O: the directory reached without symlinks and
 * writable only by root or us; a new temporary file (O_EXCL, 0600)
 * fsynced and renamed over path in that directory; only a regular file we
 * own, not group/other-writable, of at most DP_HEALTH_STATE_MAX_BYTES, is
 * read. -errno, the cause in err.
 */
/* the largest state file read: 64 MiB, ~500 probes at the longest horizon */
#define DP_HEALTH_STATE_MAX_BYTES (64u << 20)
int dp_health_state_format(const dp_health_t *h, char **text, size_t *len);
int dp_health_state_parse(dp_health_t *h, const char *text, size_t len,
                          char *err, size_t errlen);
int dp_health_save(const dp_health_t *h, const char *path, char *err,
                   size_t errlen);
int dp_health_load(dp_health_t *h, const char *path, char *err, size_t errlen);

/* The ProbeInterval target i had when the loaded state file was saved (an
 * "interval TARGET NS" line, written for targets set up by
 * dp_health_from_conf), or 0 when the file did not say: a change means
 * the RRD files made before keep their old step. */
uint64_t dp_health_saved_interval_ns(const dp_health_t *h, size_t i);

#endif /* DP_HEALTH_H */
