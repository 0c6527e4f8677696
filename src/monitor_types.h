/*
 * monitor_types.h - what the monitor speaks (monitor.h): its limits, what
 * comes out through the sink (values, notices, log lines, verdicts), the
 * sink itself and the configuration a front-end passes in. Part of the
 * monitor; a front-end includes monitor.h, which includes this.
 */
#ifndef DP_MONITOR_TYPES_H
#define DP_MONITOR_TYPES_H

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
/* fast confirmation: confirmation rounds after a suspect one, at most */
#define DP_MONITOR_CONFIRMS 2
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

/* One probe's figures as the health rules take them (dp_monitor_obs,
 * monitor.h). */
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

#endif /* DP_MONITOR_TYPES_H */
