/*
 * diskprobe.c - the collectd glue around the diskprobe core library.
 *
 * Everything that can be decided without collectd lives in the library:
 * the configuration model (conf.h), the scheduler that groups targets by
 * disk and runs their rounds, stalls and pacing (scheduler.h), the device
 * view from /proc/diskstats (diskstats.h). This file maps collectd's
 * config tree onto conf.h's setters, the scheduler's events onto log
 * lines and notifications, and its samples plus the device view onto
 * value lists.
 *
 * Threads: the scheduler's workers probe; collectd's read thread only
 * takes the queued samples and dispatches them (diskprobe_read); events
 * arrive on the workers' threads (plugin_dispatch_notification and the
 * per-target c_complain state are safe there: one worker owns a target at
 * a time).
 *
 * Values carry the interval until their next value: probe samples the
 * target's interval in force (ProbeInterval stretched by DutyCycle), the
 * per-read values collectd's interval.
 */
#include "core/daemon/collectd.h"
#include "core/daemon/plugin.h"
#include "core/daemon/utils_complain.h"
#include "core/utils/common/common.h"

#include "clock.h"
#include "conf.h"
#include "devview.h"
#include "events.h"
#include "health.h"
#include "metrics.h"
#include "peers.h"
#include "scheduler.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLUGIN_NAME "diskprobe"
#define DISKPROBE_DEVICES_MAX 1024

typedef struct {
  dp_plugin_conf_t conf;
  dp_target_conf_t *targets;
  size_t ntargets;
  c_complain_t *complaints; /* one per target, used by its worker */
  dp_sched_t *sched;
  dp_sched_sample_t *scratch; /* read callback: no allocation per read */
  dp_health_t *health;        /* read thread only, after init */
  char state_path[PATH_MAX];  /* the health state file */
  uint64_t saved_ns;          /* when it was last written */
  uint64_t read_interval_ns;
  dp_devview_t *devview; /* read thread only, after init */
  size_t nworkers_seen;  /* workers whose disk the view watches */
  c_complain_t ds_complaint;
  int *saturated;    /* per worker */
  dp_peers_t *peers; /* fail-slow among the device view's disks */
  int peers_tried;
} diskprobe_ctx_t;

/* collectd's config, init and shutdown callbacks take no user data. */
static diskprobe_ctx_t *diskprobe_ctx;

/* ---- configuration ----------------------------------------------------- */

/* One option value as a string, as conf.c wants it. */
static int diskprobe_value_string(const oconfig_item_t *ci, char *buf,
                                  size_t len) {
  if (ci->values_num != 1) {
    ERROR(PLUGIN_NAME " plugin: Option \"%s\" needs exactly one value.",
          ci->key);
    return -1;
  }
  const oconfig_value_t *v = &ci->values[0];
  switch (v->type) {
  case OCONFIG_TYPE_STRING:
    snprintf(buf, len, "%s", v->value.string);
    return 0;
  case OCONFIG_TYPE_NUMBER:
    snprintf(buf, len, "%.17g", v->value.number);
    return 0;
  case OCONFIG_TYPE_BOOLEAN:
    snprintf(buf, len, "%s", v->value.boolean ? "true" : "false");
    return 0;
  default:
    ERROR(PLUGIN_NAME " plugin: Option \"%s\": expected a string or a number.",
          ci->key);
    return -1;
  }
}

static int diskprobe_config_block_name(const oconfig_item_t *ci, char *buf,
                                       size_t len) {
  if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING) {
    ERROR(PLUGIN_NAME " plugin: <%s> needs exactly one string argument, "
                      "its name.",
          ci->key);
    return -1;
  }
  snprintf(buf, len, "%s", ci->values[0].value.string);
  return 0;
}

static int diskprobe_config_probe(dp_target_conf_t *tc,
                                  const oconfig_item_t *ci) {
  char name[DP_NAME_MAX * 2], val[4096], err[512];
  if (diskprobe_config_block_name(ci, name, sizeof(name)) != 0)
    return -1;
  dp_probe_conf_t p;
  dp_probe_conf_init(&p, name);
  for (int i = 0; i < ci->children_num; i++) {
    const oconfig_item_t *c = ci->children + i;
    if (diskprobe_value_string(c, val, sizeof(val)) != 0)
      return -1;
    if (dp_probe_conf_set(&p, c->key, val, err, sizeof(err)) != 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\", Probe \"%s\": %s", tc->name,
            name, err);
      return -1;
    }
  }
  if (dp_target_conf_add_probe(tc, &p, err, sizeof(err)) != 0) {
    ERROR(PLUGIN_NAME " plugin: Target \"%s\": %s", tc->name, err);
    return -1;
  }
  return 0;
}

static int diskprobe_config_target(diskprobe_ctx_t *ctx,
                                   const oconfig_item_t *ci) {
  char name[DP_NAME_MAX * 2], val[4096], err[512];
  if (diskprobe_config_block_name(ci, name, sizeof(name)) != 0)
    return -1;
  for (size_t i = 0; i < ctx->ntargets; i++)
    if (strcmp(ctx->targets[i].name, name) == 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\" is defined twice.", name);
      return -1;
    }
  dp_target_conf_t *nt =
      realloc(ctx->targets, (ctx->ntargets + 1) * sizeof(*nt));
  if (nt == NULL)
    return -1;
  ctx->targets = nt;
  dp_target_conf_t *t = &ctx->targets[ctx->ntargets];
  dp_target_conf_init(t, name);
  for (int i = 0; i < ci->children_num; i++) {
    const oconfig_item_t *c = ci->children + i;
    if (strcasecmp(c->key, "Probe") == 0) {
      if (diskprobe_config_probe(t, c) != 0)
        return -1;
      continue;
    }
    if (c->children_num > 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\": unknown block <%s>: allowed "
                        "<Probe>.",
            name, c->key);
      return -1;
    }
    if (diskprobe_value_string(c, val, sizeof(val)) != 0)
      return -1;
    if (dp_target_conf_set(t, c->key, val, err, sizeof(err)) != 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\": %s", name, err);
      return -1;
    }
  }
  if (dp_target_conf_finish(t, err, sizeof(err)) != 0) {
    ERROR(PLUGIN_NAME " plugin: %s", err);
    return -1;
  }
  ctx->ntargets++;
  return 0;
}

/* DeviceStats "sd*" "nvme*n1" ...: more devices for the iostat view. */
static int diskprobe_config_devstats(diskprobe_ctx_t *ctx,
                                     const oconfig_item_t *ci) {
  if (ci->values_num < 1 || ci->children_num > 0) {
    ERROR(PLUGIN_NAME " plugin: Option \"DeviceStats\" needs one or more "
                      "device name globs, e.g. DeviceStats \"sd*\" "
                      "\"nvme*n1\".");
    return -1;
  }
  for (int i = 0; i < ci->values_num; i++) {
    const oconfig_value_t *v = &ci->values[i];
    if (v->type != OCONFIG_TYPE_STRING ||
        dp_devview_watch(ctx->devview, v->value.string) != 0) {
      ERROR(PLUGIN_NAME " plugin: Option \"DeviceStats\": value %d is "
                        "invalid: allowed kernel device names or globs "
                        "(\"sda\", \"nvme*n1\"), not paths.",
            i + 1);
      return -1;
    }
  }
  return 0;
}

static int diskprobe_config(oconfig_item_t *ci) {
  if (diskprobe_ctx == NULL) {
    if ((diskprobe_ctx = calloc(1, sizeof(*diskprobe_ctx))) == NULL ||
        dp_devview_new(&diskprobe_ctx->devview, "/proc/diskstats",
                       DISKPROBE_DEVICES_MAX) != 0)
      return -1;
    dp_plugin_conf_init(&diskprobe_ctx->conf);
    C_COMPLAIN_INIT(&diskprobe_ctx->ds_complaint);
  }
  char val[64], err[512];
  for (int i = 0; i < ci->children_num; i++) {
    const oconfig_item_t *c = ci->children + i;
    int rc;
    if (strcasecmp(c->key, "Target") == 0)
      rc = diskprobe_config_target(diskprobe_ctx, c);
    else if (strcasecmp(c->key, "DeviceStats") == 0)
      rc = diskprobe_config_devstats(diskprobe_ctx, c);
    else if ((rc = diskprobe_value_string(c, val, sizeof(val))) == 0 &&
             (rc = dp_plugin_conf_set(&diskprobe_ctx->conf, c->key, val, err,
                                      sizeof(err))) != 0)
      ERROR(PLUGIN_NAME " plugin: %s", err);
    if (rc != 0)
      return -1;
  }
  return 0;
}

/* ---- scheduler events: log lines and notifications ---------------------- */

static void diskprobe_notify(const dp_sched_event_t *ev) {
  notification_t n = {.time = cdtime()};
  int failure = dp_event_notice(ev, hostname_g, n.message, sizeof(n.message));
  if (failure < 0)
    return;
  n.severity = failure ? NOTIF_FAILURE : NOTIF_OKAY;
  sstrncpy(n.host, hostname_g, sizeof(n.host));
  sstrncpy(n.plugin, PLUGIN_NAME, sizeof(n.plugin));
  sstrncpy(n.plugin_instance, ev->target_name, sizeof(n.plugin_instance));
  sstrncpy(n.type, ev->kind == DP_SCHED_IO_ERRORS ? "probe_errors" : "stalled",
           sizeof(n.type));
  sstrncpy(n.type_instance, ev->probe_name ? ev->probe_name : "",
           sizeof(n.type_instance));
  plugin_dispatch_notification(&n);
}

/* Log lines (rate-limited per target where a broken target would repeat
 * them every round) and notifications. */
static void diskprobe_event(const dp_sched_event_t *ev, void *arg) {
  diskprobe_ctx_t *ctx = arg;
  c_complain_t *cc = ev->target_name[0] ? &ctx->complaints[ev->target] : NULL;
  char line[1024];
  int level = dp_event_log_line(ev, line, sizeof(line));
  switch (ev->kind) {
  case DP_SCHED_OPEN_FAILED:
  case DP_SCHED_PROBE_FAILED:
  case DP_SCHED_PROBE_SKIPPED:
    c_complain(level, cc, PLUGIN_NAME " plugin: %s", line);
    break;
  case DP_SCHED_OPENED:
    c_release(LOG_INFO, cc,
              PLUGIN_NAME " plugin: target \"%s\" (%s) is probing again.",
              ev->target_name, ev->path);
    /* fall through */
  default:
    if (level >= 0 && ev->kind != DP_SCHED_IO_ERRORS) /* notified instead */
      plugin_log(level, PLUGIN_NAME " plugin: %s", line);
  }
  diskprobe_notify(ev);
}

/* ---- dispatch ------------------------------------------------------------ */

static void diskprobe_submit(const char *instance, const char *type,
                             const char *type_instance, value_t *values,
                             size_t n, cdtime_t time, cdtime_t interval) {
  value_list_t vl = VALUE_LIST_INIT;
  vl.values = values;
  vl.values_len = n;
  vl.time = time;
  vl.interval = interval;
  sstrncpy(vl.plugin, PLUGIN_NAME, sizeof(vl.plugin));
  sstrncpy(vl.plugin_instance, instance, sizeof(vl.plugin_instance));
  sstrncpy(vl.type, type, sizeof(vl.type));
  sstrncpy(vl.type_instance, type_instance, sizeof(vl.type_instance));
  plugin_dispatch_values(&vl);
}

static void diskprobe_submit_sample(const dp_sched_sample_t *s, cdtime_t tm) {
  const dp_result_t *r = &s->r;
  cdtime_t ivl = NS_TO_CDTIME_T(s->interval_ns);
  const char *in = s->target_name, *pn = s->probe_name;
  int measured = r->ops > 0;
  value_t v[7];

  v[0].gauge = r->iops;
  diskprobe_submit(in, "operations_per_second", pn, v, 1, tm, ivl);
  v[0].gauge = r->bytes_per_s;
  diskprobe_submit(in, "bytes_per_second", pn, v, 1, tm, ivl);
  /* No completed I/O: latency is unknown, not zero. */
  double lat[7] = {r->lat_min_s, r->lat_mean_s, r->lat_p50_s, r->lat_p90_s,
                   r->lat_p99_s, r->lat_p999_s, r->lat_max_s};
  for (int i = 0; i < 7; i++)
    v[i].gauge = measured ? lat[i] : NAN;
  diskprobe_submit(in, "probe_latency", pn, v, 7, tm, ivl);
  v[0].gauge = measured ? r->achieved_qd : NAN;
  diskprobe_submit(in, "queue_length", pn, v, 1, tm, ivl);
  v[0].derive = (derive_t)s->err_io_total;
  v[1].derive = (derive_t)s->err_short_total;
  v[2].derive = (derive_t)s->err_timeout_total;
  diskprobe_submit(in, "probe_errors", pn, v, 3, tm, ivl);
  v[0].gauge = r->wall_s;
  diskprobe_submit(in, "duration", pn, v, 1, tm, ivl);
}

/* The device view's plugin instance: "dev-" and the kernel name (a
 * namespace no target name may enter, see devview.h). */
typedef struct {
  char s[DATA_MAX_NAME_LEN];
} diskprobe_dev_name_t;

static diskprobe_dev_name_t diskprobe_dev_instance(const char *disk) {
  diskprobe_dev_name_t n;
  snprintf(n.s, sizeof(n.s), DP_DEVVIEW_PREFIX "%s", disk);
  return n;
}

static void diskprobe_submit_device(const dp_diskstats_metrics_t *m,
                                    cdtime_t now, cdtime_t ivl) {
  dp_devview_value_t dv[DP_DEVVIEW_VALUES_MAX];
  size_t n = dp_devview_values(m, dv);
  diskprobe_dev_name_t in = diskprobe_dev_instance(m->name);
  for (size_t i = 0; i < n; i++) {
    value_t v = {.gauge = dv[i].value};
    diskprobe_submit(in.s, dv[i].type, dv[i].type_instance, &v, 1, now, ivl);
  }
}

/* Watches the disks of workers the scheduler made since the last read
 * (at init, and when a late device was regrouped). */
static void diskprobe_watch_worker_disks(diskprobe_ctx_t *ctx) {
  size_t n = dp_sched_nworkers(ctx->sched);
  for (; ctx->nworkers_seen < n; ctx->nworkers_seen++) {
    const char *d = dp_sched_worker_disk(ctx->sched, ctx->nworkers_seen);
    /* "0:39" (no block device behind a tmpfs, btrfs...) has no stats */
    if (strchr(d, ':') == NULL && strcmp(d, "?") != 0)
      dp_devview_watch(ctx->devview, d);
  }
}

static const dp_io_counter_t *diskprobe_counter_of(const char *disk,
                                                   void *arg) {
  int k = dp_sched_find_disk(arg, disk);
  return k < 0 ? NULL : dp_sched_worker_counter(arg, (size_t)k);
}

/* ---- fail-slow among peers (the device view's disks) ------------------ */

typedef struct {
  cdtime_t now, ivl; /* of the read in progress */
  diskprobe_ctx_t *ctx;
} diskprobe_when_t;

/* Every interval: the score and the decision (with its hysteresis and
 * slower rules, which the score alone does not tell) as of the last
 * window. */
static void diskprobe_peer_value(const dp_peers_disk_t *d, void *arg) {
  const diskprobe_when_t *w = arg;
  diskprobe_dev_name_t in = diskprobe_dev_instance(d->device);
  value_t v = {.gauge = d->v.slowdown};
  diskprobe_submit(in.s, "slowdown", "peers", &v, 1, w->now, w->ivl);
  v.gauge = d->v.flagged ? 1 : 0;
  diskprobe_submit(in.s, "failslow", "peers", &v, 1, w->now, w->ivl);
}

static void diskprobe_peer_changed(const dp_peers_disk_t *d, void *arg) {
  const diskprobe_when_t *w = arg;
  notification_t n = {.time = w->now,
                      .severity = d->v.flagged ? NOTIF_WARNING : NOTIF_OKAY};
  snprintf(n.message, sizeof(n.message),
           "diskprobe: host %s, device %s (%s%s%s%s%s), %zu peers: %s",
           hostname_g, d->device, dp_media_name(d->media),
           d->model[0] ? ", model " : "", d->model,
           d->serial[0] ? ", serial " : "", d->serial, d->group_size - 1,
           d->words);
  sstrncpy(n.host, hostname_g, sizeof(n.host));
  sstrncpy(n.plugin, PLUGIN_NAME, sizeof(n.plugin));
  sstrncpy(n.plugin_instance, diskprobe_dev_instance(d->device).s,
           sizeof(n.plugin_instance));
  sstrncpy(n.type, "failslow", sizeof(n.type));
  plugin_dispatch_notification(&n);
  /* and the health of the targets on that disk (their failslow rule) */
  for (size_t i = 0; w->ctx->health && i < w->ctx->ntargets; i++) {
    dp_sched_target_state_t st;
    dp_sched_target_state(w->ctx->sched, i, &st);
    if (strcmp(st.disk, d->device) == 0)
      dp_health_set_failslow(w->ctx->health, i, d->v.flagged, d->v.slowdown,
                             d->group_size - 1);
  }
}

/* The device view's disks against their peers; groups are formed at the
 * first read with devices. */
static void diskprobe_peers(diskprobe_ctx_t *ctx,
                            const dp_diskstats_metrics_t *m, int n,
                            cdtime_t now, cdtime_t ivl) {
  if (n <= 0)
    return;
  if (!ctx->peers_tried) {
    ctx->peers_tried = 1;
    double win = (double)ctx->conf.failslow_window_ns / 1e9;
    int rc = dp_peers_new(&ctx->peers, m, (size_t)n, "/sys",
                          CDTIME_T_TO_DOUBLE(ivl), win);
    if (rc == 0)
      INFO(PLUGIN_NAME " plugin: fail-slow: %zu disk(s) in peer groups of "
                       "three or more, windows of %.3g s.",
           dp_peers_ndevices(ctx->peers), win);
    else
      ERROR(PLUGIN_NAME " plugin: fail-slow: cannot judge the device view's "
                        "disks against their peers at Interval %.3g s with "
                        "FailSlowWindow %.3g s: %s; not judged until a "
                        "restart.",
            CDTIME_T_TO_DOUBLE(ivl), win, strerror(-rc));
  }
  diskprobe_when_t w = {.now = now, .ivl = ivl, .ctx = ctx};
  dp_peers_feed(ctx->peers, m, (size_t)n, CDTIME_T_TO_DOUBLE(now),
                diskprobe_peer_value, diskprobe_peer_changed, &w);
}

/* Dispatches the view of every watched device and sets each worker's
 * saturated flag. Read thread only. */
static void diskprobe_devstats_read(diskprobe_ctx_t *ctx, cdtime_t now,
                                    cdtime_t ivl) {
  diskprobe_watch_worker_disks(ctx);
  const dp_diskstats_metrics_t *m;
  int n = dp_devview_read(ctx->devview, dp_now_ns(), diskprobe_counter_of,
                          ctx->sched, &m);
  if (n < 0) {
    c_complain(LOG_ERR, &ctx->ds_complaint,
               PLUGIN_NAME " plugin: cannot read /proc/diskstats: %s",
               strerror(-n));
    return;
  }
  c_release(LOG_INFO, &ctx->ds_complaint,
            PLUGIN_NAME " plugin: /proc/diskstats readable again.");
  diskprobe_peers(ctx, m, n, now, ivl);
  for (int i = 0; i < n; i++) {
    int k = dp_sched_find_disk(ctx->sched, m[i].name);
    if (k >= 0)
      ctx->saturated[k] =
          dp_diskstats_saturated(&m[i], ctx->conf.saturation_percent);
    diskprobe_submit_device(&m[i], now, ivl);
  }
}

/* ---- health ------------------------------------------------------------ */

#define DISKPROBE_SAVE_NS                                                      \
  (600 * UINT64_C(1000000000)) /* state every 10 min                           \
                                */

static void diskprobe_health_notify(diskprobe_ctx_t *ctx, size_t i,
                                    const dp_health_verdict_t *v, cdtime_t tm) {
  dp_sched_target_state_t st;
  dp_sched_target_state(ctx->sched, i, &st);
  char words[800];
  dp_health_describe(ctx->health, i, v, words, sizeof(words));
  notification_t n = {.time = tm};
  n.severity = v->level == DP_HEALTH_FAILURE   ? NOTIF_FAILURE
               : v->level == DP_HEALTH_WARNING ? NOTIF_WARNING
                                               : NOTIF_OKAY;
  snprintf(n.message, sizeof(n.message), "diskprobe: host %s, device %s: %s",
           hostname_g, st.device, words);
  sstrncpy(n.host, hostname_g, sizeof(n.host));
  sstrncpy(n.plugin, PLUGIN_NAME, sizeof(n.plugin));
  sstrncpy(n.plugin_instance, ctx->targets[i].name, sizeof(n.plugin_instance));
  sstrncpy(n.type, "health", sizeof(n.type));
  sstrncpy(n.type_instance, dp_health_rule_name(v->why),
           sizeof(n.type_instance));
  plugin_dispatch_notification(&n);
}

/* Feeds a sample to the health verdict; after a round's last probe
 * dispatches the verdict and notifies a change. */
static void diskprobe_health_sample(diskprobe_ctx_t *ctx,
                                    const dp_sched_sample_t *s, cdtime_t tm) {
  dp_health_verdict_t v;
  const dp_result_t *r = &s->r;
  /* a probe that did no I/O and neither stalled nor failed was skipped
   * (a disk too slow for it): not measured, rather than infinitely slow */
  double iops = r->ops > 0 || r->stalled ? r->iops : NAN;
  if (!dp_health_feed(ctx->health, s->target, s->probe, r->lat_p50_s,
                      r->lat_mean_s, iops, r->stalled, r->err_io + r->err_short,
                      s->last_in_round, &v))
    return;
  const dp_target_conf_t *tc = &ctx->targets[s->target];
  cdtime_t ivl = NS_TO_CDTIME_T(s->interval_ns);
  value_t x[3];
#define ONE(type, ti, val)                                                     \
  do {                                                                         \
    x[0].gauge = (val);                                                        \
    diskprobe_submit(tc->name, type, ti, x, 1, tm, ivl);                       \
  } while (0)
  ONE("target_health", "level", v.level);
  for (int k = 0; k < DP_RULE_COUNT; k++)
    ONE("target_health", dp_health_rule_name((dp_health_rule_t)k), v.rule[k]);
  ONE("armed", "armed", v.armed);
  ONE("slowdown", "round", v.slowdown);
  ONE("peer_ratio", tc->probes[0].name, v.peer_ratio);
  for (size_t k = 0; k < tc->nprobes; k++) {
    ONE("slowdown", tc->probes[k].name, v.probe_slowdown[k]);
    x[0].gauge = v.base_p50_s[k];
    x[1].gauge = v.base_mean_s[k];
    x[2].gauge = v.base_iops[k];
    diskprobe_submit(tc->name, "probe_baseline", tc->probes[k].name, x, 3, tm,
                     ivl);
  }
#undef ONE
  if (v.changed)
    diskprobe_health_notify(ctx, s->target, &v, tm);
}

static void diskprobe_health_save(diskprobe_ctx_t *ctx) {
  int rc = dp_health_save(ctx->health, ctx->state_path);
  if (rc < 0)
    c_complain(LOG_WARNING, &ctx->ds_complaint,
               PLUGIN_NAME " plugin: cannot write the health state file %s: "
                           "%s",
               ctx->state_path, strerror(-rc));
  ctx->saved_ns = dp_now_ns();
}

/* The health verdict of every target: media class from the disk's sysfs,
 * probes keyed by their job, baselines from the state file. */
static int diskprobe_health_init(diskprobe_ctx_t *ctx) {
  const char *disks[ctx->ntargets];
  dp_sched_target_state_t st;
  for (size_t i = 0; i < ctx->ntargets; i++) {
    dp_sched_target_state(ctx->sched, i, &st);
    disks[i] = st.disk;
  }
  int rc = dp_health_from_conf(&ctx->health, &ctx->conf, ctx->targets,
                               ctx->ntargets, disks, "/sys");
  if (rc < 0) {
    ERROR(PLUGIN_NAME " plugin: cannot set up the health rules: %s",
          strerror(-rc));
    return -1;
  }
  for (size_t i = 0; i < ctx->ntargets; i++) {
    const char *model;
    dp_media_t m = dp_health_media(ctx->health, i, &model);
    INFO(PLUGIN_NAME " plugin: target \"%s\": disk %s, media class %s%s%s.",
         ctx->targets[i].name, disks[i], dp_media_name(m),
         model[0] ? ", model " : "", model);
  }
  const char *dir = ctx->conf.state_dir[0] ? ctx->conf.state_dir
                                           : global_option_get("BaseDir");
  snprintf(ctx->state_path, sizeof(ctx->state_path),
           "%s/diskprobe-health.state", dir ? dir : ".");
  char err[256];
  rc = dp_health_load(ctx->health, ctx->state_path, err, sizeof(err));
  if (rc == -EINVAL)
    WARNING(PLUGIN_NAME " plugin: ignoring the health state file %s: %s; "
                        "baselines start afresh.",
            ctx->state_path, err);
  else if (rc < 0 && rc != -ENOENT)
    WARNING(PLUGIN_NAME " plugin: cannot read the health state file %s: %s; "
                        "baselines start afresh.",
            ctx->state_path, strerror(-rc));
  else if (rc == 0)
    INFO(PLUGIN_NAME " plugin: health baselines restored from %s.",
         ctx->state_path);
  ctx->saved_ns = dp_now_ns();
  return 0;
}

static int diskprobe_read(user_data_t *ud) {
  diskprobe_ctx_t *ctx = ud->data;
  cdtime_t now = cdtime(), ivl = plugin_get_interval();
  uint64_t mono = dp_now_ns();

  diskprobe_devstats_read(ctx, now, ivl);
  size_t n =
      dp_sched_take(ctx->sched, ctx->scratch, dp_sched_max_samples(ctx->sched));
  for (size_t k = 0; k < n; k++) {
    const dp_sched_sample_t *smp = &ctx->scratch[k];
    /* when the probe finished, on collectd's clock */
    cdtime_t tm =
        now - NS_TO_CDTIME_T(mono > smp->done_ns ? mono - smp->done_ns : 0);
    diskprobe_submit_sample(smp, tm);
    diskprobe_health_sample(ctx, smp, tm);
  }
  if (mono - ctx->saved_ns > DISKPROBE_SAVE_NS)
    diskprobe_health_save(ctx);

  for (size_t i = 0; i < ctx->ntargets; i++) {
    const char *tn = ctx->targets[i].name;
    dp_sched_target_state_t st;
    dp_sched_target_state(ctx->sched, i, &st);
    value_t v;
    v.gauge = st.stalled;
    diskprobe_submit(tn, "stalled", "stalled", &v, 1, now, ivl);
    v.gauge = (double)st.stall_ns / 1e9;
    diskprobe_submit(tn, "duration", "stalled", &v, 1, now, ivl);
    v.gauge = (double)st.interval_ns / 1e9;
    diskprobe_submit(tn, "duration", "interval", &v, 1, now, ivl);
    v.gauge = ctx->saturated[dp_sched_target_worker(ctx->sched, i)];
    diskprobe_submit(tn, "saturated", "saturated", &v, 1, now, ivl);
    /* An info series: which disk the target is on, for joins and alert
     * text (type_instance = the disk's kernel name). */
    v.gauge = 1;
    diskprobe_submit(tn, "target_device", st.disk, &v, 1, now, ivl);
  }
  return 0;
}

/* ---- init and shutdown --------------------------------------------------- */

static void diskprobe_ctx_free(diskprobe_ctx_t *ctx) {
  free(ctx->targets);
  free(ctx->complaints);
  free(ctx->scratch);
  dp_devview_free(ctx->devview);
  dp_health_free(ctx->health);
  dp_peers_free(ctx->peers);
  free(ctx->saturated);
  free(ctx);
}

static int diskprobe_init(void) {
  diskprobe_ctx_t *ctx = diskprobe_ctx;
  if (ctx == NULL || ctx->ntargets == 0) {
    NOTICE(PLUGIN_NAME " plugin: no Target configured; nothing to probe.");
    return 0;
  }
  char err[PATH_MAX + 256];
  if (dp_conf_check_duplicates(ctx->targets, ctx->ntargets, err, sizeof(err)) !=
      0) {
    ERROR(PLUGIN_NAME " plugin: %s", err);
    return -1;
  }
  for (int i = 0; i < DP_METRIC_TYPE_COUNT; i++) {
    const char *type = dp_metric_type((dp_metric_type_id_t)i)->name;
    if (plugin_get_ds(type) == NULL) {
      ERROR(PLUGIN_NAME " plugin: type \"%s\" is not known: add "
                        "TypesDB \"<path>/diskprobe.types.db\" (and the "
                        "default types.db) to collectd.conf.",
            type);
      return -1;
    }
  }

  ctx->complaints = calloc(ctx->ntargets, sizeof(*ctx->complaints));
  /* as many as the scheduler's most workers */
  ctx->saturated = calloc(ctx->ntargets + 1, sizeof(int));
  if (!ctx->complaints || !ctx->saturated)
    return -1;
  ctx->read_interval_ns = CDTIME_T_TO_NS(plugin_get_interval());
  for (size_t i = 0; i < ctx->ntargets; i++) {
    C_COMPLAIN_INIT(&ctx->complaints[i]);
    if (ctx->targets[i].interval_ns < ctx->read_interval_ns)
      ctx->read_interval_ns = ctx->targets[i].interval_ns;
  }

  dp_sched_conf_t sc;
  dp_sched_conf_init(&sc);
  sc.duty_cycle_percent = ctx->conf.duty_cycle_percent;
  sc.splay = ctx->conf.splay;
  sc.on_event = diskprobe_event;
  sc.event_arg = ctx;
  sc.thread_create = plugin_thread_create;
  int rc = dp_sched_new(&ctx->sched, &sc, ctx->targets, ctx->ntargets);
  if (rc < 0) {
    ERROR(PLUGIN_NAME " plugin: cannot set up the scheduler: %s",
          strerror(-rc));
    return -1;
  }
  ctx->scratch =
      calloc(dp_sched_max_samples(ctx->sched), sizeof(*ctx->scratch));
  if (ctx->scratch == NULL)
    return -1;
  if (diskprobe_health_init(ctx) != 0)
    return -1;
  if ((rc = dp_sched_start(ctx->sched)) < 0) {
    ERROR(PLUGIN_NAME " plugin: cannot start the probe workers: %s",
          strerror(-rc));
    return -1;
  }
  return 0;
}

static int diskprobe_shutdown(void) {
  diskprobe_ctx_t *ctx = diskprobe_ctx;
  if (ctx == NULL)
    return 0;
  int leaked = 0;
  if (ctx->sched != NULL) {
    uint64_t t0 = dp_now_ns();
    leaked = dp_sched_stop(ctx->sched);
    INFO(PLUGIN_NAME " plugin: shut down in %.1f s%s.",
         (double)(dp_now_ns() - t0) / 1e9,
         leaked ? ", leaving a worker stuck on a hung disk" : "");
    dp_sched_free(ctx->sched);
  }
  if (ctx->health != NULL && !leaked)
    diskprobe_health_save(ctx);
  if (leaked)
    return 0; /* a stuck worker still reads the targets' configuration */
  diskprobe_ctx_free(ctx);
  diskprobe_ctx = NULL;
  return 0;
}

static int diskprobe_init_read(void) {
  int rc = diskprobe_init();
  if (rc != 0 || diskprobe_ctx == NULL || diskprobe_ctx->ntargets == 0)
    return rc;
  /* Read at least as often as the shortest ProbeInterval so results do
   * not wait (collectd's Interval if that is shorter). */
  return plugin_register_complex_read(
      NULL, PLUGIN_NAME, diskprobe_read,
      NS_TO_CDTIME_T(diskprobe_ctx->read_interval_ns),
      &(user_data_t){.data = diskprobe_ctx, .free_func = NULL});
}

void module_register(void) {
  plugin_register_complex_config(PLUGIN_NAME, diskprobe_config);
  plugin_register_init(PLUGIN_NAME, diskprobe_init_read);
  plugin_register_shutdown(PLUGIN_NAME, diskprobe_shutdown);
}
