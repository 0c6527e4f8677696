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
#include "monitor_types.h"
#include "vocab.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Fast confirmation (health.h, scheduler.h): after a suspect round at
 * most DP_MONITOR_CONFIRMS (monitor_types.h) confirmation rounds, each due
 * dp_monitor_confirm_delay_ns after the verdict that asked: ProbeInterval / 12,
 * between 1 and 10 s. */
uint64_t dp_monitor_confirm_delay_ns(uint64_t interval_ns);

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
 * could redirect, a symlink on the way, not a directory); -ETIMEDOUT
 * when it did not answer within DP_MONITOR_SAVE_WAIT_NS (a hung disk: the
 * start keeps no state file, said); 0 otherwise (a directory not there
 * yet is said when a save fails). */
int dp_monitor_state_dir_check(const char *dir, char *err, size_t errlen);

/* ---- the verdict, shared with replay ------------------------------------ */

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
