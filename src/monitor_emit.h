/*
 * monitor_emit.h - the monitor's own state and its way out, shared by its
 * parts (monitor.c: the read sequence, samples, verdicts, events, set-up;
 * monitor_devices.c: the device view; monitor_state.c: the state file):
 * struct dp_monitor, and log lines, values and notices through the sink
 * (monitor_emit.c). Not an API: nothing outside src/monitor*.c includes
 * it.
 */
#ifndef DP_MONITOR_EMIT_H
#define DP_MONITOR_EMIT_H

#include "blockdev.h"
#include "devview.h"
#include "health.h"
#include "metrics.h"
#include "monitor_types.h"
#include "peers.h"
#include "scheduler.h"
#include "stall.h"
#include "statefile.h"

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Whether a target probes: its last judged round (the reading thread) and
 * its open failing with the cause (the workers' events), under lock. */
typedef struct {
  uint64_t last_round_ns; /* monitor clock; 0: none yet */
  int open_failing;
  char cause[320];
  unsigned confirms; /* confirmation rounds asked since the last round */
  /* a stalled FAILURE said and its OKAY not yet (stall.h) */
  dp_stall_pair_t stall;
  /* the read thread's only (no lock): the time of the target's last
   * verdict values, and of each probe's last values (not_before) */
  uint64_t verdict_ns, sample_ns[DP_PROBES_MAX];
} live_target_t;
typedef struct {
  pthread_mutex_t lock;
  live_target_t t[];
} live_t;

struct dp_monitor {
  dp_monitor_sink_t sink;
  char host[256];
  dp_plugin_conf_t pc;
  dp_target_conf_t *targets; /* owned copy */
  char (*target_names)[DP_NAME_MAX];
  size_t ntargets;
  uint64_t read_interval_ns;
  uint64_t next_read_ns; /* monitor clock: the per-interval steps of
                            dp_monitor_read are due; 0: at the first */
  const char *sysroot;
  dp_sched_t *sched;          /* NULL offline */
  dp_sched_sample_t *scratch; /* read_samples: no allocation */
  dp_health_t *health;
  char state_dir[PATH_MAX];    /* "" : no state file */
  dp_statefile_saver_t *saver; /* NULL: the state file is never written */
  uint64_t saved_ns;
  /* a notice went out since the last save: save at the next read, so a
   * restart knows what the last notices said (any thread) */
  atomic_int save_due;
  dp_devview_t *devview;   /* NULL offline */
  size_t nworkers_seen;    /* workers whose disk the view watches */
  int devstats_failing;    /* /proc/diskstats unreadable at the last read */
  int *saturated;          /* per worker */
  dp_monitor_busy_t *busy; /* per worker: its disk at the last view read */
  char (*under)[DP_BLOCKDEV_NAME_MAX]; /* per worker: the disk under its
                                          loop device ("" none) */
  dp_peers_t *peers; /* fail-slow among the device view's disks */
  int peers_tried;
  int stopped, leaked;
  uint64_t (*now_ns)(void *arg); /* the monitor's clock; NULL: dp_now_ns */
  void *clock_arg;
  /* the wall clock of the read in progress, for the peers' callbacks */
  uint64_t read_wall_ns;
  live_t *live;        /* is each target probing? NULL offline */
  uint64_t started_ns; /* dp_monitor_start, monitor clock */
  /* the device view's disks as met: identity and class (disk_info) */
  struct disk_ident *idents;
  size_t nidents, cap_idents;
};

typedef struct disk_ident {
  char name[DP_NAME_MAX]; /* the device view's name (a partition's own) */
  dp_disk_identity_t id;  /* id.disk: a partition's parent */
  char class_name[DP_DISK_CLASS_MAX];
} disk_ident_t;

/* ---- emitting (monitor_emit.c)
 * ------------------------------------------------ */

/* A log line; ev: the scheduler event it is about, or NULL. */
void dp_mon_log(const dp_monitor_t *m, int level, dp_monitor_log_kind_t kind,
                const dp_sched_event_t *ev, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define LOG_PLAIN(m, level, ...)                                               \
  dp_mon_log(m, level, DP_MONITOR_LOG_PLAIN, NULL, __VA_ARGS__)

/* A series of the metric table (metrics.h): its type from there, its type
 * instance the table's fixed one or ti (a probe, a rule, a disk). */
void dp_mon_value(const dp_monitor_t *m, dp_metric_id_t id,
                  const char *instance, const char *ti, const double *g,
                  size_t n, uint64_t time_ns, uint64_t interval_ns);
void dp_mon_gauge(const dp_monitor_t *m, dp_metric_id_t id,
                  const char *instance, const char *ti, double g,
                  uint64_t time_ns, uint64_t interval_ns);
void dp_mon_notice(const dp_monitor_t *m, dp_monitor_severity_t sev,
                   const char *instance, const char *type,
                   const char *type_instance, const char *message,
                   uint64_t time_ns);
/* The monitor's clock (conf's now_ns, else CLOCK_MONOTONIC). */
uint64_t dp_mon_now(const dp_monitor_t *m);
/* A series' time not before its last plus a second. */
uint64_t dp_mon_not_before(uint64_t *last, uint64_t t);

#endif /* DP_MONITOR_EMIT_H */
