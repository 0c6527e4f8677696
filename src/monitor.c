/* monitor.c - see monitor.h. */
#include "monitor.h"

#include "blockdev.h"
#include "clock.h"
#include "devview.h"
#include "events.h"
#include "health.h"
#include "metrics.h"
#include "peers.h"
#include "scheduler.h"
#include "stall.h"
#include "statefile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

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

/* ---- emitting -------------------------------------------------------------
 */

static void emit_log(const dp_monitor_t *m, int level,
                     dp_monitor_log_kind_t kind, const dp_sched_event_t *ev,
                     const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A log line; ev: the scheduler event it is about, or NULL. */
static void emit_log(const dp_monitor_t *m, int level,
                     dp_monitor_log_kind_t kind, const dp_sched_event_t *ev,
                     const char *fmt, ...) {
  if (m->sink.log == NULL)
    return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  dp_monitor_log_t l = {
      .level = level, .kind = kind, .event = -1, .target = -1, .line = line};
  if (ev != NULL) {
    l.event = (int)ev->kind;
    l.target = ev->target_name[0] ? (long)ev->target : -1;
    l.repeated = ev->kind == DP_SCHED_OPEN_FAILED ? ev->repeated : 0;
    l.notified = ev->kind == DP_SCHED_IO_ERRORS;
    l.path = ev->path;
  }
  m->sink.log(&l, m->sink.arg);
}

#define LOG_PLAIN(m, level, ...)                                               \
  emit_log(m, level, DP_MONITOR_LOG_PLAIN, NULL, __VA_ARGS__)

/* A series of the metric table (metrics.h): its type from there, its type
 * instance the table's fixed one or ti (a probe, a rule, a disk). */
static void emit_value(const dp_monitor_t *m, dp_metric_id_t id,
                       const char *instance, const char *ti, const double *g,
                       size_t n, uint64_t time_ns, uint64_t interval_ns) {
  if (m->sink.value == NULL)
    return;
  const dp_metric_t *mt = dp_metric(id);
  dp_monitor_value_t v = {
      .metric = mt,
      .instance = instance,
      .type = mt->type->name,
      .type_instance =
          mt->type_instance_rule == DP_METRIC_TI_FIXED ? mt->type_instance : ti,
      .n = n,
      .time_ns = time_ns,
      .interval_ns = interval_ns};
  for (size_t i = 0; i < n && i < DP_MONITOR_VALUES_MAX; i++)
    v.v[i].gauge = g[i];
  m->sink.value(&v, m->sink.arg);
}

static void emit_gauge(const dp_monitor_t *m, dp_metric_id_t id,
                       const char *instance, const char *ti, double g,
                       uint64_t time_ns, uint64_t interval_ns) {
  emit_value(m, id, instance, ti, &g, 1, time_ns, interval_ns);
}

static void emit_notice(const dp_monitor_t *m, dp_monitor_severity_t sev,
                        const char *instance, const char *type,
                        const char *type_instance, const char *message,
                        uint64_t time_ns) {
  if (m->sink.notice == NULL)
    return;
  dp_monitor_notice_t n = {.severity = sev,
                           .instance = instance,
                           .type = type,
                           .type_instance = type_instance,
                           .message = message,
                           .time_ns = time_ns};
  m->sink.notice(&n, m->sink.arg);
}

static uint64_t mono_now(const dp_monitor_t *m) {
  return m->now_ns ? m->now_ns(m->clock_arg) : dp_now_ns();
}

static uint64_t wall_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * DP_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* ---- scheduler events: log lines and notices (workers' threads) -------- */

static dp_monitor_log_kind_t event_log_kind(dp_sched_event_kind_t k) {
  switch (k) {
  case DP_SCHED_OPEN_FAILED:
  case DP_SCHED_PROBE_FAILED:
  case DP_SCHED_PROBE_SKIPPED:
    return DP_MONITOR_LOG_COMPLAINT;
  default:
    return DP_MONITOR_LOG_PLAIN;
  }
}

/* A stall's notices pair up: its FAILURE once (a disk that stalls every
 * round is one FAILURE, not one a round), its OKAY not at the drain of the
 * stalled I/O but at the first clean round after it (stall_cleared). 0:
 * say nothing now. Offline there are no stalls; without the live state
 * every event is said. */
static int stall_notice_due(const dp_monitor_t *m, const dp_sched_event_t *ev,
                            const char *msg) {
  if (m->live == NULL || ev->target >= m->ntargets ||
      (ev->kind != DP_SCHED_STALL_BEGAN && ev->kind != DP_SCHED_STALL_ENDED))
    return 1;
  dp_stall_pair_t *p = &m->live->t[ev->target].stall;
  int due = 0;
  pthread_mutex_lock(&m->live->lock);
  if (ev->kind == DP_SCHED_STALL_BEGAN)
    due = dp_stall_pair_began(p, ev->probe_name);
  else
    dp_stall_pair_drained(p, msg);
  pthread_mutex_unlock(&m->live->lock);
  return due;
}

/* After target i's round: a stall whose I/O drained is OKAY once a round
 * ran without one. */
static void stall_cleared(const dp_monitor_t *m, size_t i,
                          const dp_health_verdict_t *v, uint64_t wall_ns) {
  if (m->live == NULL)
    return;
  char msg[DP_STALL_WORDS_MAX + 64], probe[DP_NAME_MAX];
  pthread_mutex_lock(&m->live->lock);
  int due = dp_stall_pair_round(&m->live->t[i].stall,
                                v->rule[DP_RULE_STALL] == DP_HEALTH_OK, probe,
                                msg, sizeof(msg));
  pthread_mutex_unlock(&m->live->lock);
  if (due)
    emit_notice(m, DP_MONITOR_OKAY, m->target_names[i], "stalled", probe, msg,
                wall_ns);
}

static void event_notice(const dp_monitor_t *m, const dp_sched_event_t *ev) {
  char msg[256];
  int failure = dp_event_notice(ev, m->host, msg, sizeof(msg));
  if (failure < 0 || !stall_notice_due(m, ev, msg))
    return;
  emit_notice(m, failure ? DP_MONITOR_FAILURE : DP_MONITOR_OKAY,
              ev->target_name,
              ev->kind == DP_SCHED_IO_ERRORS ? "probe_errors" : "stalled",
              ev->probe_name ? ev->probe_name : "", msg, wall_now_ns());
}

/* An open failing or succeeding, for read_targets. */
static void live_event(const dp_monitor_t *m, const dp_sched_event_t *ev) {
  if (m->live == NULL || ev->target >= m->ntargets ||
      (ev->kind != DP_SCHED_OPEN_FAILED && ev->kind != DP_SCHED_OPENED))
    return;
  live_target_t *lt = &m->live->t[ev->target];
  pthread_mutex_lock(&m->live->lock);
  lt->open_failing = ev->kind == DP_SCHED_OPEN_FAILED;
  if (lt->open_failing) {
    /* a clause of the verdict's words: no full stop of its own */
    int n = snprintf(lt->cause, sizeof(lt->cause), "cannot open %s: %s",
                     ev->path ? ev->path : "?", ev->msg ? ev->msg : "");
    if (n > 0 && (size_t)n < sizeof(lt->cause) && lt->cause[n - 1] == '.')
      lt->cause[n - 1] = '\0';
  }
  pthread_mutex_unlock(&m->live->lock);
}

static void on_event(const dp_sched_event_t *ev, void *arg) {
  const dp_monitor_t *m = arg;
  live_event(m, ev);
  if (ev->kind == DP_SCHED_OPENED && ev->recovered)
    emit_log(m, LOG_INFO, DP_MONITOR_LOG_RELEASE, ev,
             "target \"%s\" (%s) is probing again.", ev->target_name, ev->path);
  char line[1024];
  int level = dp_event_log_line(ev, line, sizeof(line));
  if (level >= 0)
    emit_log(m, level, event_log_kind(ev->kind), ev, "%s", line);
  else if (ev->kind == DP_SCHED_OPENED) /* a front-end learns the path */
    emit_log(m, LOG_DEBUG, DP_MONITOR_LOG_PLAIN, ev,
             "target \"%s\": opened %s.", ev->target_name, ev->path);
  event_notice(m, ev);
}

/* ---- the verdict -------------------------------------------------------- */

dp_monitor_obs_t dp_monitor_obs(size_t probe, uint64_t ops, int stalled,
                                double iops, double p50_s, double mean_s,
                                uint64_t errors, int last_in_round) {
  /* a probe that did no I/O and neither stalled nor failed was skipped
   * (a disk too slow for it): not measured, rather than infinitely slow */
  dp_monitor_obs_t o = {.probe = probe,
                        .p99_s = NAN,
                        .ops = ops,
                        .p50_s = p50_s,
                        .mean_s = mean_s,
                        .iops = ops > 0 || stalled || errors > 0 ? iops : NAN,
                        .stalled = stalled,
                        .errors = errors,
                        .last_in_round = last_in_round};
  return o;
}

static dp_monitor_severity_t severity_of(dp_health_level_t l) {
  return l == DP_HEALTH_FAILURE   ? DP_MONITOR_FAILURE
         : l == DP_HEALTH_WARNING ? DP_MONITOR_WARNING
                                  : DP_MONITOR_OKAY;
}

/* The verdict's values: the level, each rule's level, armed, the round's
 * and each probe's slowdown, the peer ratio and the baselines. */
static void emit_verdict_values(const dp_monitor_t *m, size_t i,
                                const dp_health_verdict_t *v, uint64_t tm,
                                uint64_t ivl) {
  const char *tn = m->target_names[i];
  emit_gauge(m, DP_METRIC_HEALTH_LEVEL, tn, NULL, v->level, tm, ivl);
  for (int k = 0; k < DP_RULE_COUNT; k++)
    emit_gauge(m, DP_METRIC_HEALTH_RULE, tn,
               dp_health_rule_name((dp_health_rule_t)k), v->rule[k], tm, ivl);
  emit_gauge(m, DP_METRIC_HEALTH_ARMED, tn, NULL, v->armed, tm, ivl);
  emit_gauge(m, DP_METRIC_HEALTH_SLOWDOWN, tn, NULL, v->slowdown, tm, ivl);
  const dp_target_conf_t *tc = &m->targets[i];
  emit_gauge(m, DP_METRIC_HEALTH_PEER_RATIO, tn, tc->probes[0].name,
             v->peer_ratio, tm, ivl);
  for (size_t k = 0; k < tc->nprobes; k++) {
    emit_gauge(m, DP_METRIC_HEALTH_PROBE_SLOWDOWN, tn, tc->probes[k].name,
               v->probe_slowdown[k], tm, ivl);
    double b[3] = {v->base_p50_s[k], v->base_mean_s[k], v->base_iops[k]};
    emit_value(m, DP_METRIC_HEALTH_BASELINE, tn, tc->probes[k].name, b, 3, tm,
               ivl);
  }
}

static const char *target_device(dp_monitor_t *m, size_t i, char *buf,
                                 size_t len) {
  dp_sched_target_state_t st = {.device = "unknown"};
  if (m->sched != NULL) /* offline (replay): no scheduler, no device */
    dp_sched_target_state(m->sched, i, &st);
  snprintf(buf, len, "%s", st.device);
  return buf;
}

/* A slow verdict on a disk busy with other I/O says so: load, which the
 * operator finds with iotop, before a fault. */
static void busy_words(char *words, size_t len, const dp_monitor_busy_t *b) {
  size_t n = strlen(words);
  char whose[DP_BLOCKDEV_NAME_MAX + 48] = "its disk";
  if (b->under[0])
    snprintf(whose, sizeof(whose), "the disk under its loop device, %s,",
             b->under);
  if (b->probe_share >= 0)
    snprintf(words + n, len - n,
             "; %s was busy with other I/O (utilisation %.0f %%, the "
             "probe's share of the bytes %.0f %%): load, not necessarily a "
             "fault",
             whose, b->util_percent, 100 * b->probe_share);
  else
    snprintf(words + n, len - n,
             "; %s was busy with other I/O (utilisation %.0f %%): "
             "load, not necessarily a fault",
             whose, b->util_percent);
}

/* A value not newer than its series' last is refused downstream
 * (collectd's cache: "value too old"; an RRD: by less than a second): a
 * round that finished just before a read re-sent its not-probing verdict,
 * or a round right after a reopen, goes out a second after the last, not
 * before it. *last: the series' last time (0: none), updated. */
static uint64_t not_before(uint64_t *last, uint64_t t) {
  if (*last != 0 && t < *last + DP_NS_PER_S)
    t = *last + DP_NS_PER_S;
  *last = t;
  return t;
}

/* A verdict out: its values, the verdict sink, a notice when it changed. */
static void publish_verdict(dp_monitor_t *m, size_t i,
                            const dp_health_verdict_t *vp, uint64_t round,
                            uint64_t wall_ns, uint64_t interval_ns,
                            int confirm) {
  const dp_health_verdict_t v = *vp;
  uint64_t vt =
      m->live ? not_before(&m->live->t[i].verdict_ns, wall_ns) : wall_ns;
  emit_verdict_values(m, i, &v, vt, interval_ns);
  char words[800], device[64];
  dp_health_describe(m->health, i, &v, words, sizeof(words));
  target_device(m, i, device, sizeof(device));
  dp_monitor_busy_t busy = {.busy = 0, .util_percent = NAN, .probe_share = NAN};
  if (m->sched != NULL)
    busy = m->busy[dp_sched_target_worker(m->sched, i)];
  int slowness = v.why != DP_RULE_STALL && v.why != DP_RULE_ERRORS &&
                 v.why != DP_RULE_PROBING; /* busy explains slowness only */
  if (busy.busy && v.level != DP_HEALTH_OK && slowness)
    busy_words(words, sizeof(words), &busy);
  if (m->sink.verdict) {
    const char *model;
    dp_media_t media = dp_health_media(m->health, i, &model);
    dp_monitor_verdict_t mv = {.target = i,
                               .name = m->target_names[i],
                               .device = device,
                               .round = round,
                               .time_ns = wall_ns,
                               .v = &v,
                               .words = words,
                               .media = media,
                               .model = model,
                               .confirm = confirm,
                               .busy = busy};
    m->sink.verdict(&mv, m->sink.arg);
  }
  if (v.changed) {
    char msg[1024];
    /* the words' figures first, where a cut at 256 bytes keeps them */
    snprintf(msg, sizeof(msg), "diskprobe: %s on device %s, host %s", words,
             device, m->host);
    emit_notice(m, severity_of(v.level), m->target_names[i], "health",
                dp_health_rule_name(v.why), msg, wall_ns);
  }
}

/* Fast confirmation: a suspect round (health.h) asks the scheduler for a
 * short confirmation round soon after, and a suspect confirmation for
 * another, DP_MONITOR_CONFIRMS at most after each regular round: so a
 * rule of k rounds fires within about one interval. */
static void confirm_if_suspect(dp_monitor_t *m, size_t i,
                               const dp_health_verdict_t *v, int confirm) {
  if (m->sched == NULL || m->live == NULL)
    return;
  live_target_t *lt = &m->live->t[i];
  if (!confirm)
    lt->confirms = 0;
  /* a stall is a FAILURE already: more I/O on that disk says nothing */
  if (!v->suspect || lt->confirms >= DP_MONITOR_CONFIRMS ||
      v->rule[DP_RULE_STALL] != DP_HEALTH_OK)
    return;
  lt->confirms++;
  dp_sched_confirm(m->sched, i,
                   dp_monitor_confirm_delay_ns(m->targets[i].interval_ns));
}

uint64_t dp_monitor_confirm_delay_ns(uint64_t interval_ns) {
  uint64_t d = interval_ns / 12;
  return d < DP_NS_PER_S        ? DP_NS_PER_S
         : d > 10 * DP_NS_PER_S ? 10 * DP_NS_PER_S
                                : d;
}

int dp_monitor_feed(dp_monitor_t *m, size_t i, const dp_monitor_obs_t *o,
                    uint64_t round, uint64_t wall_ns, uint64_t interval_ns,
                    dp_health_verdict_t *out) {
  dp_health_verdict_t v;
  if (i >= m->ntargets ||
      !dp_health_feed(m->health, i, o->probe,
                      &(dp_health_obs_t){.p50_s = o->p50_s,
                                         .mean_s = o->mean_s,
                                         .iops = o->iops,
                                         .stalled = o->stalled,
                                         .errors = o->errors,
                                         .nospace = o->nospace,
                                         .p99_s = o->p99_s,
                                         .ops = o->ops,
                                         .confirm = o->confirm},
                      o->last_in_round, &v))
    return 0;
  if (m->live != NULL)
    m->live->t[i].last_round_ns = mono_now(m);
  publish_verdict(m, i, &v, round, wall_ns, interval_ns, o->confirm);
  stall_cleared(m, i, &v, wall_ns);
  confirm_if_suspect(m, i, &v, o->confirm);
  if (out)
    *out = v;
  return 1;
}

/* ---- the device view, saturation and fail-slow -------------------------- */

typedef struct {
  char s[DP_NAME_MAX + 8];
} dev_name_t;

/* The device view's plugin instance: DP_DEVVIEW_PREFIX and the kernel
 * name (a namespace no target name may enter, see devview.h). */
static dev_name_t dev_instance(const char *disk) {
  dev_name_t n;
  snprintf(n.s, sizeof(n.s), DP_DEVVIEW_PREFIX "%s", disk);
  return n;
}

static void emit_device(const dp_monitor_t *m, const dp_diskstats_metrics_t *d,
                        uint64_t tm) {
  dp_devview_value_t dv[DP_DEVVIEW_VALUES_MAX];
  size_t n = dp_devview_values(d, dv);
  dev_name_t in = dev_instance(d->name);
  for (size_t k = 0; k < n; k++)
    emit_gauge(m, dv[k].metric, in.s, dv[k].type_instance, dv[k].value, tm,
               m->read_interval_ns);
}

/* Watches the disks of workers the scheduler made since the last read (at
 * the first read, and when a late device was regrouped). A worker whose
 * disk has no block device ("0:39": tmpfs, btrfs) or is not resolved yet
 * has no statistics. */
/* A loop device's worker also watches the disk under its backing file:
 * that disk busy with other I/O is why the loop device is slow. */
static void watch_under(dp_monitor_t *m, size_t k, const char *loop) {
  dp_blockdev_t b;
  if (strncmp(loop, "loop", 4) != 0 ||
      dp_blockdev_loop_backing(m->sysroot, NULL, loop, &b) < 0 ||
      b.disk[0] == '\0' || strcmp(b.disk, loop) == 0)
    return;
  snprintf(m->under[k], sizeof(m->under[k]), "%s", b.disk);
  dp_devview_watch(m->devview, b.disk);
  LOG_PLAIN(m, LOG_INFO,
            "disk %s is a loop device over a file on %s: a slow verdict says "
            "when %s is busy with other I/O too.",
            loop, b.disk, b.disk);
}

static void watch_worker_disks(dp_monitor_t *m) {
  size_t n = dp_sched_nworkers(m->sched);
  for (; m->nworkers_seen < n; m->nworkers_seen++) {
    const char *d = dp_sched_worker_disk(m->sched, m->nworkers_seen);
    if (strchr(d, ':') == NULL && strcmp(d, DP_SCHED_DISK_UNRESOLVED) != 0) {
      dp_devview_watch(m->devview, d);
      watch_under(m, m->nworkers_seen, d);
    }
  }
}

/* The worker whose loop device is over `disk`, or -1. */
static int over(const dp_monitor_t *m, const char *disk) {
  for (size_t k = 0; k < m->nworkers_seen; k++)
    if (strcmp(m->under[k], disk) == 0)
      return (int)k;
  return -1;
}

/* A disk's probe I/O: its worker's, or for the disk under a loop device
 * that loop device's worker's (its I/O reaches the disk below). */
static const dp_io_counter_t *counter_of(const char *disk, void *arg) {
  const dp_monitor_t *m = arg;
  int k = dp_sched_find_disk(m->sched, disk);
  if (k < 0)
    k = over(m, disk);
  return k < 0 ? NULL : dp_sched_worker_counter(m->sched, (size_t)k);
}

/* Every interval: the disk's fail-slow score and decision (with its
 * hysteresis and slower rules, which the score alone does not tell) as of
 * the last window. */
static void peer_value(const dp_peers_disk_t *d, void *arg) {
  const dp_monitor_t *m = arg;
  dev_name_t in = dev_instance(d->device);
  emit_gauge(m, DP_METRIC_PEERS_SLOWDOWN, in.s, NULL, d->v.slowdown,
             m->read_wall_ns, m->read_interval_ns);
  emit_gauge(m, DP_METRIC_PEERS_FAILSLOW, in.s, NULL, d->v.flagged ? 1 : 0,
             m->read_wall_ns, m->read_interval_ns);
}

/* A disk's fail-slow verdict changed: its notice, and the failslow rule of
 * every target on that disk. */
static void peer_changed(const dp_peers_disk_t *d, void *arg) {
  dp_monitor_t *m = arg;
  char msg[1024];
  snprintf(msg, sizeof(msg),
           "diskprobe: host %s, device %s (%s%s%s%s%s), %zu peers: %s", m->host,
           d->device, dp_media_name(d->media), d->model[0] ? ", model " : "",
           d->model, d->serial[0] ? ", serial " : "", d->serial,
           d->group_size - 1, d->words);
  emit_notice(m, d->v.flagged ? DP_MONITOR_WARNING : DP_MONITOR_OKAY,
              dev_instance(d->device).s, "failslow", "", msg, m->read_wall_ns);
  for (size_t i = 0; i < m->ntargets; i++) {
    dp_sched_target_state_t st;
    dp_sched_target_state(m->sched, i, &st);
    if (strcmp(st.disk, d->device) == 0)
      dp_health_set_failslow(m->health, i, d->v.flagged, d->v.slowdown,
                             d->group_size - 1);
  }
}

/* Peer groups form at the first read with devices. */
static void peers_form(dp_monitor_t *m, const dp_diskstats_metrics_t *d,
                       int n) {
  m->peers_tried = 1;
  double win = (double)m->pc.failslow_window_ns / 1e9,
         ivl = (double)m->read_interval_ns / 1e9;
  int rc = dp_peers_new(&m->peers, d, (size_t)n, m->sysroot, ivl, win);
  if (rc == 0)
    LOG_PLAIN(m, LOG_INFO,
              "fail-slow: %zu disk(s) in peer groups of three or more, "
              "windows of %.3g s.",
              dp_peers_ndevices(m->peers), win);
  else
    LOG_PLAIN(m, LOG_ERR,
              "fail-slow: cannot judge the device view's disks against "
              "their peers at Interval %.3g s with FailSlowWindow %.3g s: "
              "%s; not judged until a restart.",
              ivl, win, strerror(-rc));
}

/* The device callback wants each disk's peer state: found by name among
 * the peers' last verdicts, collected here during the feed. */
typedef struct {
  dp_monitor_t *m;
  const dp_peers_disk_t **by_dev; /* per device-view index */
  const dp_diskstats_metrics_t *d;
  int n;
  dp_peers_disk_t *copies;
} peer_feed_t;

static void peer_each(const dp_peers_disk_t *pd, void *arg) {
  peer_feed_t *f = arg;
  peer_value(pd, f->m);
  for (int k = 0; k < f->n; k++)
    if (strcmp(f->d[k].name, pd->device) == 0) {
      f->copies[k] = *pd;
      f->by_dev[k] = &f->copies[k];
    }
}

static void peer_change(const dp_peers_disk_t *pd, void *arg) {
  peer_changed(pd, ((peer_feed_t *)arg)->m);
}

/* The Class a disk's targets give it: the first target on the disk that
 * sets one ("" when none does); a second target on it with another Class
 * is said once, when the disk is first met. */
static const char *class_option(const dp_monitor_t *m, const char *disk) {
  const char *first = "", *who = NULL;
  for (size_t i = 0; i < m->ntargets; i++) {
    dp_sched_target_state_t st;
    dp_sched_target_state(m->sched, i, &st);
    const char *c = m->targets[i].class_name;
    if (c[0] == '\0' || strcmp(st.disk, disk) != 0)
      continue;
    if (who == NULL) {
      first = c;
      who = m->targets[i].name;
    } else if (strcmp(c, first) != 0) {
      LOG_PLAIN(m, LOG_WARNING,
                "disk %s: target \"%s\" sets Class \"%s\", but target "
                "\"%s\" on the same disk set \"%s\" first: the disk is "
                "classed \"%s\".",
                disk, m->targets[i].name, c, who, first, first);
    }
  }
  return first;
}

/* A disk met for the first time: its identity from sysfs, its class, and
 * one INFO line with all of it (the fields disk_info cannot carry). NULL
 * when out of memory or past DP_MONITOR_DEVICES_MAX disks. */
static disk_ident_t *ident_add(dp_monitor_t *m, const char *disk) {
  if (m->nidents == m->cap_idents) {
    size_t cap = m->cap_idents ? 2 * m->cap_idents : 8;
    disk_ident_t *n;
    if (cap > DP_MONITOR_DEVICES_MAX ||
        (n = realloc(m->idents, cap * sizeof(*n))) == NULL)
      return NULL;
    m->idents = n;
    m->cap_idents = cap;
  }
  disk_ident_t *d = &m->idents[m->nidents++];
  snprintf(d->name, sizeof(d->name), "%s", disk);
  int rc = dp_blockdev_identity(m->sysroot, disk, &d->id);
  /* a partition in the view (DeviceStats) is classed as its disk */
  const char *opt = class_option(m, d->id.disk);
  dp_blockdev_class(opt, d->id.model, d->class_name, sizeof(d->class_name));
  char words[1024];
  dp_blockdev_identity_describe(&d->id, words, sizeof(words));
  LOG_PLAIN(m, LOG_INFO, "disk %s: class \"%s\" (%s): %s%s.", disk,
            d->class_name,
            opt[0]           ? "its targets' Class"
            : d->id.model[0] ? "its model"
                             : "no model, no Class",
            words, rc == -ENODEV ? " (not in sysfs)" : "");
  return d;
}

const dp_disk_identity_t *dp_monitor_disk_identity(dp_monitor_t *m,
                                                   const char *disk,
                                                   const char **class_name) {
  for (size_t i = 0; i < m->nidents; i++)
    if (strcmp(m->idents[i].name, disk) == 0) {
      if (class_name)
        *class_name = m->idents[i].class_name;
      return &m->idents[i].id;
    }
  return NULL;
}

/* disk_info: the class as type instance, the capacity as value. */
static void emit_identity(dp_monitor_t *m, const char *disk, uint64_t tm) {
  const char *cls;
  const dp_disk_identity_t *id = dp_monitor_disk_identity(m, disk, &cls);
  if (id == NULL) {
    disk_ident_t *d = ident_add(m, disk);
    if (d == NULL)
      return;
    id = &d->id;
    cls = d->class_name;
  }
  emit_gauge(m, DP_METRIC_DEV_INFO, dev_instance(disk).s, cls,
             (double)id->capacity_bytes, tm, m->read_interval_ns);
}

static void read_devices(dp_monitor_t *m, uint64_t wall_ns) {
  if (m->devview == NULL)
    return;
  uint64_t mono_ns = mono_now(m);
  m->read_wall_ns = wall_ns;
  watch_worker_disks(m);
  const dp_diskstats_metrics_t *d;
  int n = dp_devview_read(m->devview, mono_ns, counter_of, m, &d);
  if (n < 0) {
    if (!m->devstats_failing)
      LOG_PLAIN(m, LOG_ERR, "cannot read /proc/diskstats: %s", strerror(-n));
    m->devstats_failing = 1;
    return;
  }
  if (m->devstats_failing)
    LOG_PLAIN(m, LOG_INFO, "/proc/diskstats readable again.");
  m->devstats_failing = 0;
  if (n == 0)
    return;
  if (!m->peers_tried)
    peers_form(m, d, n);
  const dp_peers_disk_t *by_dev[n];
  dp_peers_disk_t copies[m->sink.device ? n : 1];
  memset(by_dev, 0, sizeof(by_dev));
  peer_feed_t f = {.m = m,
                   .by_dev = by_dev,
                   .d = d,
                   .n = m->sink.device ? n : 0,
                   .copies = copies};
  dp_peers_feed(m->peers, d, (size_t)n, (double)wall_ns / 1e9, peer_each,
                peer_change, &f);
  for (int i = 0; i < n; i++) {
    int k = dp_sched_find_disk(m->sched, d[i].name);
    if (k >= 0) {
      m->saturated[k] = dp_diskstats_saturated(&d[i], m->pc.saturation_percent);
      m->busy[k] = (dp_monitor_busy_t){.busy = m->saturated[k],
                                       .util_percent = d[i].util_percent,
                                       .probe_share = d[i].probe_bytes_share};
    }
    emit_device(m, &d[i], wall_ns);
    emit_identity(m, d[i].name, wall_ns);
    if (m->sink.device)
      m->sink.device(&d[i], by_dev[i], wall_ns, m->sink.arg);
  }
  /* then the disks under loop devices: busy there is busy for the loop */
  for (int i = 0; i < n; i++)
    for (size_t k = 0; k < m->nworkers_seen; k++)
      if (strcmp(m->under[k], d[i].name) == 0 && !m->busy[k].busy &&
          dp_diskstats_saturated(&d[i], m->pc.saturation_percent)) {
        m->busy[k] = (dp_monitor_busy_t){.busy = 1,
                                         .util_percent = d[i].util_percent,
                                         .probe_share = d[i].probe_bytes_share};
        snprintf(m->busy[k].under, sizeof(m->busy[k].under), "%s", d[i].name);
      }
}

/* ---- probe samples ------------------------------------------------------ */

static void emit_sample(const dp_monitor_t *m, const dp_sched_sample_t *s,
                        uint64_t tm) {
  const dp_result_t *r = &s->r;
  const char *in = s->target_name, *pn = s->probe_name;
  uint64_t ivl = s->interval_ns;
  int measured = r->ops > 0;
  emit_gauge(m, DP_METRIC_PROBE_IOPS, in, pn, r->iops, tm, ivl);
  emit_gauge(m, DP_METRIC_PROBE_BYTES, in, pn, r->bytes_per_s, tm, ivl);
  /* No completed I/O: latency is unknown, not zero. */
  double lat[7] = {r->lat_min_s, r->lat_mean_s, r->lat_p50_s, r->lat_p90_s,
                   r->lat_p99_s, r->lat_p999_s, r->lat_max_s};
  for (int i = 0; i < 7; i++)
    lat[i] = measured ? lat[i] : NAN;
  emit_value(m, DP_METRIC_PROBE_LATENCY, in, pn, lat, 7, tm, ivl);
  emit_gauge(m, DP_METRIC_PROBE_QUEUE, in, pn, measured ? r->achieved_qd : NAN,
             tm, ivl);
  if (m->sink.value) {
    const dp_metric_t *mt = dp_metric(DP_METRIC_PROBE_ERRORS);
    dp_monitor_value_t v = {.metric = mt,
                            .instance = in,
                            .type = mt->type->name,
                            .type_instance = pn,
                            .n = 3,
                            .derive = 1,
                            .time_ns = tm,
                            .interval_ns = ivl};
    v.v[0].counter = s->err_io_total;
    v.v[1].counter = s->err_short_total;
    v.v[2].counter = s->err_timeout_total;
    m->sink.value(&v, m->sink.arg);
  }
  emit_gauge(m, DP_METRIC_PROBE_DURATION, in, pn, r->wall_s, tm, ivl);
}

static size_t read_samples(dp_monitor_t *m, uint64_t wall_ns) {
  uint64_t mono_ns = mono_now(m);
  size_t n =
      dp_sched_take(m->sched, m->scratch, dp_sched_max_samples(m->sched));
  for (size_t k = 0; k < n; k++) {
    const dp_sched_sample_t *s = &m->scratch[k];
    /* when the probe finished, on the wall clock */
    uint64_t age = mono_ns > s->done_ns ? mono_ns - s->done_ns : 0;
    uint64_t tm = wall_ns > age ? wall_ns - age : 0;
    if (!s->confirm) /* a confirmation is the verdict's, not a series' */
      emit_sample(m, s,
                  not_before(&m->live->t[s->target].sample_ns[s->probe], tm));
    if (m->sink.sample) {
      dp_sched_target_state_t st;
      dp_sched_target_state(m->sched, s->target, &st);
      m->sink.sample(s, tm, &st, m->sink.arg);
    }
    const dp_result_t *r = &s->r;
    dp_monitor_obs_t o = dp_monitor_obs(
        s->probe, r->ops, r->stalled, r->iops, r->lat_p50_s, r->lat_mean_s,
        r->err_io + r->err_short, s->last_in_round);
    o.nospace = r->err_nospace;
    o.p99_s = r->lat_p99_s;
    o.confirm = s->confirm;
    dp_monitor_feed(m, s->target, &o, s->round, tm, s->interval_ns, NULL);
  }
  return n;
}

/* ---- per-read values of every target ------------------------------------ */

/* Why target i is not probing now ("" when it is): its open failing, or
 * no round judged for two intervals and a Timeout (since start, for one
 * that never finished a round) -- stalled, hung or never started. */
static void not_probing_cause(dp_monitor_t *m, size_t i,
                              const dp_sched_target_state_t *st, char *buf,
                              size_t len) {
  buf[0] = '\0';
  live_target_t *lt = &m->live->t[i];
  uint64_t now = mono_now(m);
  uint64_t since = lt->last_round_ns ? lt->last_round_ns : m->started_ns;
  uint64_t grace = 2 * m->targets[i].interval_ns + m->targets[i].timeout_ns;
  pthread_mutex_lock(&m->live->lock);
  if (lt->open_failing)
    snprintf(buf, len, "%s", lt->cause);
  pthread_mutex_unlock(&m->live->lock);
  if (buf[0] != '\0' || m->started_ns == 0 || now - since <= grace)
    return;
  double ago = (double)(now - since) / 1e9;
  if (st->stalled)
    snprintf(buf, len, "its I/O stalled %.0f s ago, no round since",
             (double)st->stall_ns / 1e9);
  else if (lt->last_round_ns == 0)
    snprintf(buf, len, "no round finished in the %.0f s since start", ago);
  else
    snprintf(buf, len, "no round finished in %.0f s (ProbeInterval %.0f s)",
             ago, (double)m->targets[i].interval_ns / 1e9);
}

/* A target that is not probing has a verdict every read: FAILURE by
 * "probing", so its health series never go silent. */
static void judge_not_probing(dp_monitor_t *m, size_t i,
                              const dp_sched_target_state_t *st,
                              uint64_t wall_ns) {
  char cause[320];
  if (m->live == NULL)
    return;
  not_probing_cause(m, i, st, cause, sizeof(cause));
  if (cause[0] == '\0')
    return;
  dp_health_verdict_t v;
  dp_health_not_probing(m->health, i, cause, &v);
  publish_verdict(m, i, &v, 0, wall_ns, m->read_interval_ns, 0);
}

static void read_targets(dp_monitor_t *m, uint64_t wall_ns) {
  uint64_t ivl = m->read_interval_ns;
  for (size_t i = 0; i < m->ntargets; i++) {
    const char *tn = m->target_names[i];
    dp_sched_target_state_t st;
    dp_sched_target_state(m->sched, i, &st);
    judge_not_probing(m, i, &st, wall_ns);
    emit_gauge(m, DP_METRIC_TARGET_STALLED, tn, NULL, st.stalled, wall_ns, ivl);
    emit_gauge(m, DP_METRIC_TARGET_STALL_DURATION, tn, NULL,
               (double)st.stall_ns / 1e9, wall_ns, ivl);
    emit_gauge(m, DP_METRIC_TARGET_INTERVAL, tn, NULL,
               (double)st.interval_ns / 1e9, wall_ns, ivl);
    emit_gauge(m, DP_METRIC_TARGET_SATURATED, tn, NULL,
               m->saturated[dp_sched_target_worker(m->sched, i)], wall_ns, ivl);
    /* An info series: which disk the target is on, for joins and alert
     * text (type_instance = the disk's kernel name). */
    emit_gauge(m, DP_METRIC_TARGET_DEVICE, tn, st.disk, 1, wall_ns, ivl);
  }
}

/* ---- the state file ----------------------------------------------------- */

/* A save that finished since: said if it failed. */
static void state_saved_log(dp_monitor_t *m, int rc, const char *err) {
  if (rc < 0)
    LOG_PLAIN(m, LOG_WARNING, "cannot write the health state file %s/%s: %s",
              m->state_dir, DP_MONITOR_STATE_FILE, err);
}

/* Each read: the result of a save that finished since the last. */
static void state_saved_poll(dp_monitor_t *m) {
  int rc;
  char err[512];
  if (m->saver != NULL &&
      dp_statefile_saver_result(m->saver, &rc, err, sizeof(err)))
    state_saved_log(m, rc, err);
}

/* The state formatted here (cheap), written by the saver's thread; a save
 * still running skips this one unless `last` (the stop's, which follows
 * it). */
static void state_save(dp_monitor_t *m, int last) {
  m->saved_ns = mono_now(m);
  if (m->saver == NULL)
    return;
  char *text;
  size_t len;
  int rc = dp_health_state_format(m->health, &text, &len);
  if (rc < 0) {
    LOG_PLAIN(m, LOG_WARNING, "cannot format the health state: %s",
              strerror(-rc));
    return;
  }
  if (dp_statefile_saver_submit(m->saver, text, len, last) == -EBUSY)
    LOG_PLAIN(m, LOG_WARNING,
              "health state save skipped: the previous one to StateDir %s "
              "has not finished (%lu skipped so far)",
              m->state_dir, dp_statefile_saver_skipped(m->saver));
}

/* Waits for the saves in flight, DP_MONITOR_SAVE_WAIT_NS at most, and ends
 * the saver; a hung StateDir keeps its thread, not us. */
static void state_saver_close(dp_monitor_t *m) {
  if (m->saver == NULL)
    return;
  int rc = 0;
  char err[512] = "";
  int wait = dp_statefile_saver_close(m->saver, DP_MONITOR_SAVE_WAIT_NS, &rc,
                                      err, sizeof(err));
  m->saver = NULL;
  if (wait == -ETIMEDOUT)
    LOG_PLAIN(m, LOG_WARNING,
              "health state not saved: StateDir %s did not answer within "
              "%.3g s",
              m->state_dir, (double)DP_MONITOR_SAVE_WAIT_NS / 1e9);
  else
    state_saved_log(m, rc, err);
}

static void state_load(dp_monitor_t *m) {
  m->saved_ns = mono_now(m);
  if (m->state_dir[0] == '\0')
    return;
  char path[PATH_MAX + 64], err[PATH_MAX + 256];
  snprintf(path, sizeof(path), "%s/%s", m->state_dir, DP_MONITOR_STATE_FILE);
  /* read off the init thread, bounded: a StateDir on a hung disk must not
   * hold collectd's start */
  char *text;
  size_t len;
  int rc = dp_statefile_read_bounded(
      m->state_dir, DP_MONITOR_STATE_FILE, DP_HEALTH_STATE_MAX_BYTES,
      m->saver != NULL, DP_MONITOR_SAVE_WAIT_NS, &text, &len, err, sizeof(err));
  if (rc == 0) {
    rc = dp_health_state_parse(m->health, text, len, err, sizeof(err));
    free(text);
  }
  if (rc < 0 && rc != -ENOENT)
    LOG_PLAIN(m, LOG_WARNING,
              "ignoring the health state file %s: %s; baselines start "
              "afresh.",
              path, err);
  else if (rc == 0)
    LOG_PLAIN(m, LOG_INFO, "health baselines restored from %s.", path);
}

uint64_t dp_monitor_read_interval_of(const dp_target_conf_t *t, size_t n,
                                     uint64_t max_ns) {
  uint64_t ns = max_ns;
  for (size_t i = 0; i < n; i++)
    if (ns == 0 || t[i].interval_ns < ns)
      ns = t[i].interval_ns;
  return ns;
}

uint64_t dp_monitor_read_interval_ns(const dp_monitor_t *m) {
  return m->read_interval_ns;
}

/* Whether this read runs the per-interval steps: on the grid of the read
 * interval from the first read, a tenth of it early at most (the caller's
 * timer may run on another clock); a read that fell behind restarts the
 * grid. */
static int read_due(dp_monitor_t *m) {
  uint64_t now = mono_now(m), ivl = m->read_interval_ns;
  if (m->next_read_ns != 0 && now + ivl / 10 < m->next_read_ns)
    return 0;
  m->next_read_ns = m->next_read_ns == 0 ? now + ivl : m->next_read_ns + ivl;
  if (m->next_read_ns <= now)
    m->next_read_ns = now + ivl;
  return 1;
}

void dp_monitor_read(dp_monitor_t *m, uint64_t wall_ns) {
  int due = read_due(m);
  if (due)
    read_devices(m, wall_ns);
  read_samples(m, wall_ns);
  if (!due)
    return;
  state_saved_poll(m);
  if (mono_now(m) - m->saved_ns > DP_MONITOR_SAVE_NS)
    state_save(m, 0);
  read_targets(m, wall_ns);
}

/* ---- set-up and teardown ------------------------------------------------ */

static int monitor_alloc(dp_monitor_t **out, const dp_monitor_sink_t *sink,
                         const char *host, size_t n) {
  dp_monitor_t *m = calloc(1, sizeof(*m));
  if (m == NULL || (m->target_names = calloc(n, DP_NAME_MAX)) == NULL ||
      (m->targets = calloc(n, sizeof(*m->targets))) == NULL) {
    if (m)
      free(m->target_names);
    free(m);
    return -ENOMEM;
  }
  if (sink)
    m->sink = *sink;
  snprintf(m->host, sizeof(m->host), "%s", host ? host : "localhost");
  m->ntargets = n;
  dp_plugin_conf_init(&m->pc);
  *out = m;
  return 0;
}

/* The health rules of every target: media class from the disk's sysfs,
 * probes keyed by their job; each target's disk and class logged. */
static int health_init(dp_monitor_t *m) {
  const char *disks[m->ntargets];
  dp_sched_target_state_t st;
  for (size_t i = 0; i < m->ntargets; i++) {
    dp_sched_target_state(m->sched, i, &st);
    disks[i] = st.disk;
  }
  int rc = dp_health_from_conf(&m->health, &m->pc, m->targets, m->ntargets,
                               disks, m->sysroot);
  if (rc < 0) {
    LOG_PLAIN(m, LOG_ERR, "cannot set up the health rules: %s", strerror(-rc));
    return rc;
  }
  for (size_t i = 0; i < m->ntargets; i++) {
    const char *model;
    dp_media_t md = dp_health_media(m->health, i, &model);
    LOG_PLAIN(m, LOG_INFO, "target \"%s\": disk %s, media class %s%s%s.",
              m->targets[i].name, disks[i], dp_media_name(md),
              model[0] ? ", model " : "", model);
  }
  return 0;
}

/* What each target's configuration costs its disk, said once at start:
 * the probes' Durations against DutyCycle's budget per ProbeInterval, and
 * how much of each Duration runs when they do not fit (a NOTICE, so a
 * terminal shows it too). */
static void budget_log(dp_monitor_t *m) {
  for (size_t i = 0; i < m->ntargets; i++) {
    const dp_target_conf_t *tc = &m->targets[i];
    dp_sched_target_state_t st;
    dp_sched_target_state(m->sched, i, &st);
    double ivl = (double)tc->interval_ns / 1e9,
           asked = (double)st.asked_ns / 1e9,
           allowed = (double)st.allowed_ns / 1e9;
    if (st.scale >= 1) {
      LOG_PLAIN(m, LOG_INFO,
                "target \"%s\": a round asks %.3g s of disk %s's time "
                "every %.3g s (%.2g %%), within DutyCycle %g %% (%.3g s a "
                "round%s).",
                tc->name, asked, st.disk, ivl, 100 * asked / ivl,
                m->pc.duty_cycle_percent, allowed,
                st.sharing > 1 ? ", shared with the disk's other targets" : "");
      continue;
    }
    char probes[512];
    size_t used = 0;
    probes[0] = '\0';
    for (size_t k = 0; k < tc->nprobes && used < sizeof(probes); k++)
      used += (size_t)snprintf(
          probes + used, sizeof(probes) - used, "%s%s %.3g s", k ? ", " : "",
          tc->probes[k].name,
          (double)dp_sched_scaled_ns(tc->probes[k].duration_ns, st.scale) /
              1e9);
    LOG_PLAIN(m, LOG_NOTICE,
              "target \"%s\": its probes ask %.3g s of disk %s's time every "
              "%.3g s; DutyCycle %g %% allows %.3g s a round%s, so each runs "
              "for %.0f %% of its Duration (%s). ProbeInterval stays %.3g s; "
              "raise DutyCycle or ProbeInterval for longer probes.",
              tc->name, asked, st.disk, ivl, m->pc.duty_cycle_percent, allowed,
              st.sharing > 1 ? " (shared with the disk's other targets)" : "",
              st.scale * 100, probes, ivl);
  }
}

/* After the state file: a target whose ProbeInterval changed since it was
 * saved has RRD files with the old step (collectd's rrdtool plugin keeps a
 * file's step for good). */
static void interval_change_log(dp_monitor_t *m) {
  for (size_t i = 0; i < m->ntargets; i++) {
    uint64_t was = dp_health_saved_interval_ns(m->health, i),
             now = m->targets[i].interval_ns;
    if (was == 0 || was == now)
      continue;
    LOG_PLAIN(m, LOG_NOTICE,
              "target \"%s\": ProbeInterval is %.3g s now, %.3g s when the "
              "state file was saved: RRD files made before keep their %.3g s "
              "step (each point then holds a mix of rounds); move the "
              "target's RRD directory (diskprobe-%s) away to have them made "
              "anew.",
              m->targets[i].name, (double)now / 1e9, (double)was / 1e9,
              (double)was / 1e9, m->targets[i].name);
  }
}

static int devview_init(dp_monitor_t *m, const dp_monitor_conf_t *c) {
  int rc = dp_devview_new(
      &m->devview, c->diskstats_path ? c->diskstats_path : "/proc/diskstats",
      DP_MONITOR_DEVICES_MAX);
  if (rc < 0)
    return rc;
  dp_devview_set_sysroot(m->devview, m->sysroot);
  for (size_t i = 0; i < c->nglobs; i++)
    if (dp_devview_watch(m->devview, c->device_globs[i]) != 0) {
      LOG_PLAIN(m, LOG_ERR,
                "Option \"DeviceStats\": value %zu (\"%s\") is invalid: "
                "allowed kernel device names or globs (\"sda\", "
                "\"nvme*n1\"), not paths.",
                i + 1, c->device_globs[i]);
      return -EINVAL;
    }
  return 0;
}

const char *dp_monitor_default_prober(void) { return dp_prober_default_path(); }

static int sched_init(dp_monitor_t *m, const dp_monitor_conf_t *c) {
  dp_sched_conf_t sc;
  dp_sched_conf_init(&sc);
  sc.duty_cycle_percent = m->pc.duty_cycle_percent;
  sc.splay = m->pc.splay;
  sc.sysroot = m->sysroot;
  sc.queue_len = c->queue_len;
  sc.now_ns = c->now_ns;
  sc.clock_arg = c->clock_arg;
  sc.on_event = on_event;
  sc.event_arg = m;
  sc.thread_create = c->thread_create;
  sc.prober = c->prober;
  m->live = calloc(1, sizeof(*m->live) + m->ntargets * sizeof(live_target_t));
  if (m->live == NULL)
    return -ENOMEM;
  pthread_mutex_init(&m->live->lock, NULL);
  int rc = dp_sched_new(&m->sched, &sc, m->targets, m->ntargets);
  if (rc < 0) {
    LOG_PLAIN(m, LOG_ERR, "cannot set up the scheduler: %s", strerror(-rc));
    return rc;
  }
  m->scratch = calloc(dp_sched_max_samples(m->sched), sizeof(*m->scratch));
  /* as many as the scheduler's most workers */
  m->saturated = calloc(m->ntargets + 1, sizeof(int));
  m->busy = calloc(m->ntargets + 1, sizeof(*m->busy));
  m->under = calloc(m->ntargets + 1, sizeof(*m->under));
  return m->scratch && m->saturated && m->busy && m->under ? 0 : -ENOMEM;
}

/* StateDir (or the front-end's default), checked once: a directory
 * someone else could redirect keeps no state file, said in one line. The
 * saver's thread unless the state is only read (a config test). */
static void state_dir_init(dp_monitor_t *m, const dp_monitor_conf_t *c) {
  const char *dir = m->pc.state_dir[0] ? m->pc.state_dir : c->state_dir;
  if (dir == NULL)
    return;
  char err[PATH_MAX + 256];
  int rc = dp_monitor_state_dir_check(dir, err, sizeof(err));
  if (rc < 0) {
    LOG_PLAIN(m, LOG_ERR,
              "StateDir %s: %s; the health baselines are not kept across "
              "restarts.",
              dir, err);
    return;
  }
  snprintf(m->state_dir, sizeof(m->state_dir), "%s", dir);
  if (c->state_read_only)
    return;
  /* a crash's temporary files are removed by state_load's reader */
  if ((rc = dp_statefile_saver_new(&m->saver, dir, DP_MONITOR_STATE_FILE)) < 0)
    LOG_PLAIN(m, LOG_WARNING,
              "cannot start the health state saver: %s; the baselines are "
              "not saved.",
              strerror(-rc));
}

int dp_monitor_new(dp_monitor_t **out, const dp_monitor_conf_t *c,
                   const dp_monitor_sink_t *sink) {
  *out = NULL;
  if (c->ntargets == 0 || c->targets == NULL)
    return -EINVAL;
  dp_monitor_t *m;
  int rc = monitor_alloc(&m, sink, c->host, c->ntargets);
  if (rc < 0)
    return rc;
  if (c->plugin)
    m->pc = *c->plugin;
  memcpy(m->targets, c->targets, c->ntargets * sizeof(*m->targets));
  for (size_t i = 0; i < c->ntargets; i++)
    snprintf(m->target_names[i], DP_NAME_MAX, "%s", c->targets[i].name);
  m->sysroot = c->sysroot; /* NULL: DP_SYSROOT_DEFAULT */
  m->read_interval_ns = dp_monitor_read_interval_of(c->targets, c->ntargets,
                                                    c->read_interval_max_ns);
  m->now_ns = c->now_ns;
  m->clock_arg = c->clock_arg;
  char err[PATH_MAX + 256];
  if (dp_conf_check_duplicates(m->targets, m->ntargets, err, sizeof(err)) !=
      0) {
    LOG_PLAIN(m, LOG_ERR, "%s", err);
    rc = -EINVAL;
  }
  if (rc == 0)
    rc = devview_init(m, c);
  if (rc == 0)
    rc = sched_init(m, c);
  if (rc == 0)
    rc = health_init(m);
  if (rc < 0) {
    dp_monitor_free(m);
    return rc;
  }
  budget_log(m);
  state_dir_init(m, c);
  state_load(m);
  interval_change_log(m);
  *out = m;
  return 0;
}

int dp_monitor_new_offline(dp_monitor_t **out, const dp_health_conf_t *hc,
                           const dp_monitor_offline_target_t *t, size_t n,
                           const char *host, const dp_monitor_sink_t *sink) {
  *out = NULL;
  if (n == 0)
    return -EINVAL;
  dp_monitor_t *m;
  int rc = monitor_alloc(&m, sink, host, n);
  if (rc < 0)
    return rc;
  dp_health_conf_t dflt;
  dp_health_conf_init(&dflt);
  rc = dp_health_new(&m->health, hc ? hc : &dflt, n);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    if (t[i].nprobes == 0 || t[i].nprobes > DP_PROBES_MAX) {
      rc = -EINVAL;
      break;
    }
    snprintf(m->target_names[i], DP_NAME_MAX, "%s", t[i].name);
    snprintf(m->targets[i].name, DP_NAME_MAX, "%s", t[i].name);
    m->targets[i].nprobes = t[i].nprobes;
    for (size_t k = 0; k < t[i].nprobes; k++)
      snprintf(m->targets[i].probes[k].name, DP_NAME_MAX, "%s",
               t[i].probe_names[k]);
    rc = dp_health_set_target(m->health, i, t[i].name, t[i].nprobes,
                              t[i].probe_names, t[i].probe_names, t[i].media,
                              t[i].model ? t[i].model : "", t[i].ceiling_s);
  }
  if (rc < 0) {
    dp_monitor_free(m);
    return rc;
  }
  *out = m;
  return 0;
}

int dp_monitor_start(dp_monitor_t *m) {
  m->started_ns = mono_now(m);
  int rc = dp_sched_start(m->sched);
  if (rc < 0)
    LOG_PLAIN(m, LOG_ERR, "cannot start the probe workers: %s", strerror(-rc));
  return rc;
}

int dp_monitor_wait(dp_monitor_t *m, uint64_t deadline_ns) {
  return dp_sched_wait(m->sched, deadline_ns);
}

dp_sched_t *dp_monitor_sched(dp_monitor_t *m) { return m->sched; }

int dp_monitor_stop(dp_monitor_t *m) {
  if (m->stopped)
    return m->leaked;
  m->stopped = 1;
  if (m->sched != NULL) {
    uint64_t t0 = dp_now_ns();
    m->leaked = dp_sched_stop(m->sched);
    LOG_PLAIN(m, LOG_INFO, "shut down in %.1f s%s.",
              (double)(dp_now_ns() - t0) / 1e9,
              m->leaked ? ", leaving a worker stuck on a hung disk" : "");
  }
  if (m->health != NULL && !m->leaked)
    state_save(m, 1);
  state_saver_close(m);
  return m->leaked;
}

void dp_monitor_free(dp_monitor_t *m) {
  if (m == NULL)
    return;
  state_saver_close(m); /* not stopped: nothing new saved */
  if (m->leaked) {
    /* a stuck worker still reads the targets' configuration and the
     * scheduler's buffers: free only what it cannot touch */
    dp_sched_free(m->sched);
    return;
  }
  dp_sched_free(m->sched);
  free(m->scratch);
  free(m->saturated);
  free(m->busy);
  free(m->under);
  dp_devview_free(m->devview);
  dp_health_free(m->health);
  dp_peers_free(m->peers);
  if (m->live != NULL)
    pthread_mutex_destroy(&m->live->lock);
  free(m->live);
  free(m->idents);
  free(m->targets);
  free(m->target_names);
  free(m);
}

_Static_assert(DP_MONITOR_DISK_NAME_MAX == DP_BLOCKDEV_NAME_MAX,
               "the busy disk's name is a kernel name");

const char *dp_monitor_type_name(size_t i) {
  return i < DP_METRIC_TYPE_COUNT ? dp_metric_type((dp_metric_type_id_t)i)->name
                                  : NULL;
}

int dp_monitor_glob_check(const char *glob, char *err, size_t errlen) {
  return dp_devview_glob_check(glob, err, errlen);
}

int dp_monitor_state_dir_check(const char *dir, char *err, size_t errlen) {
  /* bounded: a StateDir on a hung disk must not hold collectd's start */
  int rc =
      dp_statefile_check_dir_bounded(dir, DP_MONITOR_SAVE_WAIT_NS, err, errlen);
  return rc == -EPERM || rc == -ELOOP || rc == -ENOTDIR ? rc : 0;
}
