/*
 * monitor.h - the monitoring pipeline, free of collectd: what the plugin,
 * `diskprobe watch` and `diskprobe replay` share, so that the three give
 * the same verdict on the same rounds.
 *
 * One monitor owns, for a set of configured targets:
 *   the scheduler (scheduler.h)  probes every target, one worker per disk;
 *   the device view (devview.h)  the iostat view of the watched devices
 *                                (DeviceStats, and every probed disk);
 *   the peers (peers.h)          fail-slow among the view's whole disks;
 *   the health (health.h)        the verdict of every target, its
 *                                baselines and their state file.
 * and decides what needs no collectd:
 *   - a probe that did no I/O and neither stalled nor failed was skipped
 *     (a disk too slow for it): it is "not measured" -- NaN -- never
 *     infinitely slow (dp_monitor_obs);
 *   - a target inherits the fail-slow flag of the disk it is on;
 *   - a worker's disk is saturated when its utilisation reaches
 *     SaturationThreshold;
 *   - peer groups form at the first device-view read that has devices;
 *   - fast confirmation: a suspect round (health.h) asks the scheduler for
 *     a short confirmation round of the first probe soon after
 *     (dp_sched_confirm), DP_MONITOR_CONFIRMS at most, whose sample is
 *     judged but not dispatched as the probe's values;
 *   - a target that cannot probe is FAILURE by "probing" every read;
 *   - the health state file (DP_MONITOR_STATE_FILE in StateDir) is read
 *     at start, written every DP_MONITOR_SAVE_NS and at stop (unless a
 *     worker was left on a hung disk, or the state is only read: a config
 *     test). It is formatted on the reading thread and written by a saver
 *     thread (statefile.h), one save at a time: one due while the last is
 *     still writing is skipped and said. The stop waits for it
 *     DP_MONITOR_SAVE_WAIT_NS at most, then says the state was not saved
 *     and leaves the saver behind (its write runs in a child process,
 *     so that a hung disk holds that process, not the caller's exit). A
 *     StateDir someone other than root or us could redirect (safepath.h's
 *     rules) keeps no state file, said at start;
 *   - which scheduler events are log lines, which of them a broken target
 *     repeats every round (rate-limited by the front-end), which are
 *     notifications; a stall is one "stalled" FAILURE however many rounds
 *     stall, and its OKAY comes with the first round after the drain that
 *     ran without a stall (not at the drain of the stalled I/O).
 *
 * Out, through a sink (dp_monitor_sink_t): values (a collectd value list
 * in all but name, each a series of the metric table, metrics.h),
 * notifications, log lines, and -- for front-ends that show more than values --
 * each probe sample, each target verdict and each device read. The plugin's
 * sink dispatches to collectd; watch's prints; replay's prints transitions.
 * Every callback may be NULL.
 *
 * Threads: dp_monitor_read (and its steps) run on one thread, the caller's
 * (collectd's read thread, watch's main loop). The scheduler's events reach
 * the sink's log and notice callbacks on the workers' threads: those two
 * must be thread-safe. Everything else reaches the sink on the reading
 * thread.
 *
 * Time: the monitor runs on CLOCK_MONOTONIC (clock.h); a value's `time_ns`
 * is on the wall clock the caller passes to dp_monitor_read (collectd's
 * cdtime, or CLOCK_REALTIME): a probe's values carry the wall time it
 * finished, the per-read values the read's.
 *
 * Errors: 0 or a negative errno; the cause in words goes to the sink's log
 * callback (the monitor never prints).
 */
#ifndef DP_MONITOR_H
#define DP_MONITOR_H

#include "conf.h"
#include "vocab.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define DP_MONITOR_SAVE_NS (600 * UINT64_C(1000000000)) /* 10 minutes */
/* how long the stop waits for the state file's last save: a slow or hung
 * StateDir must not hold the daemon's exit */
#define DP_MONITOR_SAVE_WAIT_NS (2 * UINT64_C(1000000000))
#define DP_MONITOR_STATE_FILE "diskprobe-health.state"
#define DP_MONITOR_DEVICES_MAX 1024
#define DP_MONITOR_VALUES_MAX 7     /* data sources of the widest type */
#define DP_MONITOR_DISK_NAME_MAX 64 /* a kernel name (blockdev.h's) */

/* The lower layers' own records, for front-ends that show more than
 * values (watch, replay, the tests): opaque here; such a front-end
 * includes the header that defines each it reads. A front-end that only
 * dispatches values, notices and log lines (the plugin) needs none. */
struct dp_metric;             /* metrics.h */
struct dp_sched_sample;       /* scheduler.h */
struct dp_sched_target_state; /* scheduler.h */
struct dp_health_verdict;     /* health.h */
struct dp_health_conf;        /* health.h */
struct dp_diskstats_metrics;  /* diskstats.h */
struct dp_peers_disk;         /* peers.h */
struct dp_disk_identity;      /* blockdev.h */
struct dp_sched;              /* scheduler.h */

/* Fast confirmation (health.h, scheduler.h): after a suspect round at
 * most this many confirmation rounds, each due dp_monitor_confirm_delay_ns
 * after the verdict that asked: ProbeInterval / 12, between 1 and 10 s. */
#define DP_MONITOR_CONFIRMS 2
uint64_t dp_monitor_confirm_delay_ns(uint64_t interval_ns);

/* ---- what comes out ------------------------------------------------------ */

/* One value list: plugin instance (the target's name, or the device view's
 * DP_DEVVIEW_PREFIX + kernel name), type and type instance as collectd
 * names them (the metric catalogue), and one number per data source:
 * gauges as doubles, counters (derive data sources) as integers. */
typedef struct {
  const struct dp_metric *metric; /* the series in the metric table */
  const char *instance, *type, *type_instance;
  size_t n;
  int derive; /* 1: the values are counters (v[i].counter) */
  union {
    double gauge;
    uint64_t counter;
  } v[DP_MONITOR_VALUES_MAX];
  uint64_t time_ns;     /* wall clock */
  uint64_t interval_ns; /* until the next value of this series */
} dp_monitor_value_t;

typedef enum {
  DP_MONITOR_OKAY = 0,
  DP_MONITOR_WARNING = 1,
  DP_MONITOR_FAILURE = 2
} dp_monitor_severity_t;

/* A notification: named as the values are (type "health" with the rule as
 * type instance, "stalled", "probe_errors", "failslow"). */
typedef struct {
  dp_monitor_severity_t severity;
  const char *instance, *type, *type_instance;
  const char *message;
  uint64_t time_ns; /* wall clock */
} dp_monitor_notice_t;

/* How a log line wants to be rate-limited: a line a broken target repeats
 * every round (an open that fails, a probe the engine refuses, a deep
 * probe skipped) is a COMPLAINT about that target; the first good round
 * after complaints RELEASEs it (the line says it is probing again); other
 * lines are PLAIN. The front-end decides how often to show complaints
 * (collectd's c_complain backoff, watch's 1st, 2nd, 4th ... time). */
typedef enum {
  DP_MONITOR_LOG_PLAIN = 0,
  DP_MONITOR_LOG_COMPLAINT,
  DP_MONITOR_LOG_RELEASE
} dp_monitor_log_kind_t;

typedef struct {
  int level; /* syslog level: LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO */
  dp_monitor_log_kind_t kind;
  long target;       /* index of the target it is about, or -1 */
  unsigned repeated; /* an open failing: consecutive failures, 1..; else 0 */
  int event;         /* the scheduler event (dp_sched_event_kind_t), or -1 */
  int notified;      /* the same news also goes out as a notice */
  const char *path;  /* scheduler events: the target's probe file or device
                        node; else NULL */
  const char *line;  /* no program prefix */
} dp_monitor_log_t;

/* Busy or failing: a target's disk at the last device-view read --
 * saturated by I/O that was mostly not the probe's (SaturationThreshold,
 * diskstats.h), its utilisation and the probe's share of its bytes (NaN:
 * not known). For a loop device, the disk under its backing file too
 * (found from sysfs and the mount table, dp_blockdev_loop_backing, and
 * watched by the device view): the loop device's own figures hide load
 * there. A verdict that is not OK on a busy disk says so in its words. */
typedef struct {
  int busy;
  double util_percent, probe_share;
  char under[DP_MONITOR_DISK_NAME_MAX]; /* "" its own disk; else the disk
                                           under its loop device, which was
                                           busy */
} dp_monitor_busy_t;

/* A target's round, judged (the verdict after its last probe). */
typedef struct {
  size_t target;
  const char *name;   /* the target's name */
  const char *device; /* the device that holds its data, or "unknown" */
  uint64_t round;
  uint64_t time_ns; /* wall clock, when the round's last probe finished */
  const struct dp_health_verdict *v;
  const char *words; /* dp_health_describe */
  dp_media_t media;
  const char *model;
  int confirm; /* the verdict of a confirmation round (fast confirmation) */
  dp_monitor_busy_t busy; /* its disk at the last device-view read */
} dp_monitor_verdict_t;

typedef struct {
  void *arg;
  void (*value)(const dp_monitor_value_t *v, void *arg);
  void (*notice)(const dp_monitor_notice_t *n, void *arg); /* any thread */
  void (*log)(const dp_monitor_log_t *l, void *arg);       /* any thread */
  /* Each probe result as the scheduler queued it, with the wall time it
   * finished and the target's state. */
  void (*sample)(const struct dp_sched_sample *s, uint64_t time_ns,
                 const struct dp_sched_target_state *st, void *arg);
  void (*verdict)(const dp_monitor_verdict_t *v, void *arg);
  /* Each device of a device-view read, with its fail-slow state (NULL when
   * the disk is not in a peer group). */
  void (*device)(const struct dp_diskstats_metrics *m,
                 const struct dp_peers_disk *peer, uint64_t time_ns, void *arg);
} dp_monitor_sink_t;

/* ---- set-up -------------------------------------------------------------- */

typedef struct {
  const dp_plugin_conf_t *plugin;  /* DutyCycle, Splay, StateDir, ... */
  const dp_target_conf_t *targets; /* each passed dp_target_conf_finish */
  size_t ntargets;
  const char *const *device_globs; /* DeviceStats; may be NULL */
  size_t nglobs;
  const char *host;      /* for notification texts */
  const char *state_dir; /* where the health state file lives when StateDir
                            is not set (collectd's BaseDir); NULL: no state
                            file unless StateDir is set */
  int state_read_only;   /* read the state file, never write it (a
                            config test: `collectd -T`) */
  /* the front-end's own read cadence, if it has one (collectd's
   * Interval): the read interval is the shortest ProbeInterval, this at
   * most (dp_monitor_read_interval_of); 0: none */
  uint64_t read_interval_max_ns;
  unsigned queue_len; /* samples kept per probe; 0: default */
  /* starts the workers' threads; NULL: pthread_create (scheduler.h) */
  int (*thread_create)(pthread_t *thread, void *(*start)(void *), void *arg,
                       const char *name);
  /* the prober program each target's I/O runs in (scheduler.h); NULL: in
   * the workers' threads */
  const char *prober;
  /* tests: the scheduler's clock and sysfs / diskstats fixtures; NULL:
   * the real ones */
  uint64_t (*now_ns)(void *arg);
  void *clock_arg;
  const char *sysroot;
  const char *diskstats_path;
} dp_monitor_conf_t;

typedef struct dp_monitor dp_monitor_t;

/*
 * Builds the pipeline: checks the targets against each other, groups them
 * by disk, classifies each disk, restores the baselines from the state
 * file, and says each of those on the sink's log. Starts no thread.
 * The sink is kept for the scheduler's events (copied). 0, -EINVAL (the
 * cause logged), -ENOMEM.
 */
/* The installed prober program (prober.h), for dp_monitor_conf_t.prober. */
const char *dp_monitor_default_prober(void);

int dp_monitor_new(dp_monitor_t **out, const dp_monitor_conf_t *c,
                   const dp_monitor_sink_t *sink);

/* Starts the scheduler's workers. -errno (logged). */
int dp_monitor_start(dp_monitor_t *m);

/*
 * The read: the one sequence every front-end runs (the plugin from
 * collectd's read callback, watch from its loop), at wall_ns (the
 * monitor's own clock -- conf's now_ns -- for the rest). Once per read
 * interval, the device view (values, saturation, peers); every call, each
 * queued probe sample (values, verdicts, notices); once per read interval
 * again, the state file's save if due and every target's per-read values
 * and verdict when it is not probing (FAILURE by "probing"; stalled, how
 * long, interval in force, saturated, which disk). A front-end calls it
 * at least every read interval; calling it more often (watch: whenever a
 * sample is queued) shows samples sooner and changes nothing else.
 */
void dp_monitor_read(dp_monitor_t *m, uint64_t wall_ns);

/* The read interval: the shortest ProbeInterval of the targets, max_ns at
 * most (0: no cap); and the monitor's. */
uint64_t dp_monitor_read_interval_of(const dp_target_conf_t *t, size_t n,
                                     uint64_t max_ns);
uint64_t dp_monitor_read_interval_ns(const dp_monitor_t *m);

/* Blocks until a sample is queued or CLOCK_MONOTONIC reaches deadline_ns
 * (scheduler.h's dp_sched_wait). 1 if samples are queued. */
int dp_monitor_wait(dp_monitor_t *m, uint64_t deadline_ns);

/* The scheduler, for what a front-end shows besides (watch's summary). */
struct dp_sched *dp_monitor_sched(dp_monitor_t *m);

/*
 * Stops the workers, saves the state file (unless a worker was left
 * behind on a hung disk) and logs how long it took. Returns how many
 * workers were left behind; then dp_monitor_free frees nothing the workers
 * may still use. Idempotent.
 */
int dp_monitor_stop(dp_monitor_t *m);
void dp_monitor_free(dp_monitor_t *m);

/*
 * What disk `disk` of the device view is (blockdev.h's identity, read from
 * sysfs once, at the first device-view read that has it) and, in
 * *class_name if not NULL, its class: the Class of the first target on it
 * that sets one, else the model (dp_blockdev_class). The monitor owns both
 * (valid until dp_monitor_free); NULL for a disk the view has not read.
 * The reading thread only (a sink's device callback may call it).
 */
const struct dp_disk_identity *
dp_monitor_disk_identity(dp_monitor_t *m, const char *disk,
                         const char **class_name);

/* The collectd types of the metric table (metrics.h), for a front-end
 * that must know them all (the plugin checks its types.db): the i-th
 * type's name, NULL past the last. */
const char *dp_monitor_type_name(size_t i);

/* DeviceStats: a kernel device name or glob ("sda", "nvme*n1"), not a
 * path, a valid glob. 0, or -EINVAL / -ENAMETOOLONG with the reason in err
 * (devview.h's rule, for config checks). */
int dp_monitor_glob_check(const char *glob, char *err, size_t errlen);

/* StateDir: -EPERM / -ELOOP / -ENOTDIR with the cause in err when the
 * monitor would refuse it (a directory someone other than root or us
 * could redirect, a symlink on the way, not a directory); 0 otherwise (a
 * directory not there yet is said when a save fails). */
int dp_monitor_state_dir_check(const char *dir, char *err, size_t errlen);

/* ---- the verdict, shared with replay ------------------------------------ */

/* One probe's figures as the health rules take them (the skipped-probe
 * rule above). */
typedef struct {
  size_t probe;
  double p50_s, mean_s, iops; /* iops NaN: not measured */
  int stalled;
  uint64_t errors;  /* I/O errors + short transfers */
  uint64_t nospace; /* writes refused with ENOSPC/EDQUOT (0 from
                       dp_monitor_obs: set it after) */
  double p99_s;     /* NaN from dp_monitor_obs: set it after */
  uint64_t ops;     /* I/Os completed (0: not known; health.h's obs.ops) */
  int confirm;      /* a confirmation round's sample (0 from dp_monitor_obs) */
  int last_in_round;
} dp_monitor_obs_t;

/* From a probe result: ops, stalled and iops decide "skipped". */
dp_monitor_obs_t dp_monitor_obs(size_t probe, uint64_t ops, int stalled,
                                double iops, double p50_s, double mean_s,
                                uint64_t errors, int last_in_round);

/*
 * The judging pipeline without probing: for `diskprobe replay` (recorded
 * rounds) and tests. Targets are named, with their probes' names (also
 * their baseline keys), media class, model and ceiling (0: the class's);
 * hc NULL: health.h's defaults. No state file, scheduler or device view.
 */
typedef struct {
  const char *name;
  size_t nprobes;
  const char *const *probe_names;
  dp_media_t media;
  const char *model;
  double ceiling_s;
} dp_monitor_offline_target_t;

int dp_monitor_new_offline(dp_monitor_t **out, const struct dp_health_conf *hc,
                           const dp_monitor_offline_target_t *t, size_t n,
                           const char *host, const dp_monitor_sink_t *sink);

/*
 * Feeds one probe result of target i (live: from the scheduler's samples;
 * offline: from a record) through the health rules; after the round's last
 * probe emits the verdict (values, the verdict callback, a notice when the
 * level changed). round and interval_ns are the sample's. Returns 1 when a
 * round was judged (then *out, if not NULL, holds the verdict), else 0.
 */
int dp_monitor_feed(dp_monitor_t *m, size_t i, const dp_monitor_obs_t *o,
                    uint64_t round, uint64_t wall_ns, uint64_t interval_ns,
                    struct dp_health_verdict *out);

#endif /* DP_MONITOR_H */
