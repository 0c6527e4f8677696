/*
 * diskprobe.c - the collectd glue around the diskprobe core library.
 *
 * Threads
 *   collectd's read thread only copies finished results under ctx->lock and
 *   dispatches them (diskprobe_read). Probes run in one worker thread per
 *   physical disk (targets on the same disk share a worker, so their probes
 *   never overlap; different disks probe in parallel). A worker sleeps on a
 *   CLOCK_MONOTONIC condition variable until its next target is due, so
 *   shutdown wakes it at once.
 *
 * Stalls
 *   An I/O older than the target's Timeout ends the probe (the engine does
 *   not wait for it) and marks the worker's disk stalled: a FAILURE
 *   notification, the `stalled` metric, and no new probe on that disk until
 *   every outstanding I/O has completed, then an OKAY notification. The
 *   worker polls for those completions once a second.
 *
 * Shutdown
 *   Sets the stop flag (probes end after reaping what is in flight), wakes
 *   the workers and joins each for at most its largest Timeout plus 5 s. A
 *   worker still stuck (a hung disk) is left running and its memory is not
 *   freed: the kernel may still hold its buffers. The process may then
 *   still wait in the kernel for the in-flight I/O when it exits.
 *
 * Values carry the interval they are produced at: probe results the
 * target's ProbeInterval, per-read values collectd's interval.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* pthread_timedjoin_np */
#endif
#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"
#include "collectd/core/daemon/utils_complain.h"
#include "collectd/core/utils/common/common.h"

#include "clock.h"
#include "conf.h"
#include "diskstats.h"
#include "engine.h"
#include "target.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#define PLUGIN_NAME "diskprobe"
#define NS_PER_S 1000000000ull

/* Results wait here for the read callback; it runs at least as often as
 * the shortest probe interval, so the queue only absorbs jitter. */
#define DISKPROBE_QUEUE 4

typedef struct {
  dp_result_t r; /* hist pointer cleared: engine-owned */
  cdtime_t time;
  uint64_t interval_ns; /* the target's interval when it finished */
  uint64_t err_io_total, err_short_total, err_timeout_total;
} diskprobe_sample_t;

typedef struct {
  dp_probe_conf_t conf;
  uint64_t err_io_total, err_short_total, err_timeout_total;
  diskprobe_sample_t queue[DISKPROBE_QUEUE]; /* oldest first from qhead */
  unsigned qhead, qlen;
} diskprobe_probe_t;

typedef struct {
  const diskprobe_probe_t *probe;
  diskprobe_sample_t s;
} diskprobe_pending_t;

struct diskprobe_worker;

typedef struct {
  dp_target_conf_t conf;
  dp_target_t t;
  int opened;
  dp_engine_t *engine;
  diskprobe_probe_t probes[DP_PROBES_MAX];
  c_complain_t complaint;
  uint64_t next_due_ns;
  uint64_t interval_ns; /* in force: ProbeInterval stretched by DutyCycle */
  dev_t home_dev;       /* st_dev of the first successful open (Path) */
  int stretched_logged;
  struct diskprobe_worker *w;
} diskprobe_target_t;

typedef struct diskprobe_worker {
  pthread_t thread;
  int started, exited;
  dev_t disk; /* the physical disk its targets live on */
  char disk_name[64];
  diskprobe_target_t **targets;
  size_t ntargets;
  uint64_t max_timeout_ns;
  dp_io_counter_t issued; /* completions of this worker's probes, live */
  uint64_t share_ios0, share_bytes0; /* counter values at the last read */
  int saturated; /* read thread only: util >= threshold, mostly not ours */
  /* stall state, guarded by ctx->lock */
  int stalled;
  uint64_t stall_since_ns;
  diskprobe_target_t *stalled_target;
  struct diskprobe_ctx *ctx;
} diskprobe_worker_t;

typedef struct diskprobe_ctx {
  dp_plugin_conf_t conf;
  diskprobe_target_t *targets;
  size_t ntargets;
  diskprobe_worker_t *workers;
  size_t nworkers;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int shutdown;
  volatile int stop; /* read by running probes */
  /* read-callback scratch, sized at init: no allocation per read */
  diskprobe_pending_t *scratch;
  uint64_t read_interval_ns;
  /* the device view from /proc/diskstats (read thread only) */
  char **dev_patterns; /* configured DeviceStats globs, then workers' disks */
  size_t ndev_patterns, nconf_patterns;
  dp_diskstats_tracker_t tracker;
  dp_diskstats_slot_t *slots;
  dp_diskstats_metrics_t *metrics;
  char *dsbuf;
  size_t dsbuf_cap;
  c_complain_t ds_complaint;
} diskprobe_ctx_t;

/* collectd's config, init and shutdown callbacks take no user data. */
static diskprobe_ctx_t *diskprobe_ctx;

static int diskprobe_devstats_init(diskprobe_ctx_t *ctx);
static void diskprobe_submit(const char *instance, const char *type,
                             const char *type_instance, value_t *values,
                             size_t n, cdtime_t time, cdtime_t interval);

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
    if (strcmp(ctx->targets[i].conf.name, name) == 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\" is defined twice.", name);
      return -1;
    }
  diskprobe_target_t *nt =
      realloc(ctx->targets, (ctx->ntargets + 1) * sizeof(*nt));
  if (nt == NULL)
    return -1;
  ctx->targets = nt;
  diskprobe_target_t *t = &ctx->targets[ctx->ntargets];
  memset(t, 0, sizeof(*t));
  dp_target_conf_init(&t->conf, name);
  t->t.fd = -1;
  C_COMPLAIN_INIT(&t->complaint);

  for (int i = 0; i < ci->children_num; i++) {
    const oconfig_item_t *c = ci->children + i;
    if (strcasecmp(c->key, "Probe") == 0) {
      if (diskprobe_config_probe(&t->conf, c) != 0)
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
    if (dp_target_conf_set(&t->conf, c->key, val, err, sizeof(err)) != 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\": %s", name, err);
      return -1;
    }
  }
  if (dp_target_conf_finish(&t->conf, err, sizeof(err)) != 0) {
    ERROR(PLUGIN_NAME " plugin: %s", err);
    return -1;
  }
  for (size_t i = 0; i < t->conf.nprobes; i++)
    t->probes[i].conf = t->conf.probes[i];
  ctx->ntargets++;
  return 0;
}

static int diskprobe_add_pattern(diskprobe_ctx_t *ctx, const char *pat) {
  for (size_t i = 0; i < ctx->ndev_patterns; i++)
    if (strcmp(ctx->dev_patterns[i], pat) == 0)
      return 0;
  char **np = realloc(ctx->dev_patterns,
                      (ctx->ndev_patterns + 1) * sizeof(*ctx->dev_patterns));
  if (np == NULL)
    return -1;
  ctx->dev_patterns = np;
  if ((np[ctx->ndev_patterns] = strdup(pat)) == NULL)
    return -1;
  ctx->ndev_patterns++;
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
    if (v->type != OCONFIG_TYPE_STRING || v->value.string[0] == '\0' ||
        strlen(v->value.string) >= DP_DISKSTATS_NAME_MAX ||
        strchr(v->value.string, '/') != NULL) {
      ERROR(PLUGIN_NAME " plugin: Option \"DeviceStats\": value %d is "
                        "invalid: allowed kernel device names or globs "
                        "(\"sda\", \"nvme*n1\"), not paths.",
            i + 1);
      return -1;
    }
    if (diskprobe_add_pattern(ctx, v->value.string) != 0)
      return -1;
  }
  ctx->nconf_patterns = ctx->ndev_patterns;
  return 0;
}

static diskprobe_ctx_t *diskprobe_ctx_new(void) {
  diskprobe_ctx_t *ctx = calloc(1, sizeof(*ctx));
  if (ctx == NULL)
    return NULL;
  pthread_mutex_init(&ctx->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&ctx->cond, &ca);
  pthread_condattr_destroy(&ca);
  dp_plugin_conf_init(&ctx->conf);
  C_COMPLAIN_INIT(&ctx->ds_complaint);
  return ctx;
}

static int diskprobe_config(oconfig_item_t *ci) {
  if (diskprobe_ctx == NULL && (diskprobe_ctx = diskprobe_ctx_new()) == NULL)
    return -1;
  char val[64], err[512];
  for (int i = 0; i < ci->children_num; i++) {
    const oconfig_item_t *c = ci->children + i;
    if (strcasecmp(c->key, "Target") == 0) {
      if (diskprobe_config_target(diskprobe_ctx, c) != 0)
        return -1;
      continue;
    }
    if (strcasecmp(c->key, "DeviceStats") == 0) {
      if (diskprobe_config_devstats(diskprobe_ctx, c) != 0)
        return -1;
      continue;
    }
    if (c->children_num == 0 && c->values_num == 1 &&
        c->values[0].type == OCONFIG_TYPE_BOOLEAN)
      snprintf(val, sizeof(val), "%s",
               c->values[0].value.boolean ? "true" : "false");
    else if (diskprobe_value_string(c, val, sizeof(val)) != 0)
      return -1;
    if (dp_plugin_conf_set(&diskprobe_ctx->conf, c->key, val, err,
                           sizeof(err)) != 0) {
      ERROR(PLUGIN_NAME " plugin: %s", err);
      return -1;
    }
  }
  return 0;
}

/* ---- notifications ------------------------------------------------------ */

static void diskprobe_notify(const diskprobe_target_t *t, int severity,
                             const char *type_instance, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void diskprobe_notify(const diskprobe_target_t *t, int severity,
                             const char *type_instance, const char *fmt, ...) {
  notification_t n = {.severity = severity, .time = cdtime()};
  sstrncpy(n.host, hostname_g, sizeof(n.host));
  sstrncpy(n.plugin, PLUGIN_NAME, sizeof(n.plugin));
  sstrncpy(n.plugin_instance, t->conf.name, sizeof(n.plugin_instance));
  sstrncpy(n.type, "stalled", sizeof(n.type));
  sstrncpy(n.type_instance, type_instance, sizeof(n.type_instance));
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(n.message, sizeof(n.message), fmt, ap);
  va_end(ap);
  plugin_dispatch_notification(&n);
}

static const char *diskprobe_devname(const diskprobe_target_t *t) {
  if (t->t.dev.name[0])
    return t->t.dev.name;
  return t->w && t->w->disk_name[0] ? t->w->disk_name : "unknown";
}

/* ---- the worker --------------------------------------------------------- */

/* st_dev of a path, or of its nearest existing parent; 0 when the path
 * cannot be examined for another reason than not existing (a dead mount:
 * ENOTCONN, EIO), so that opening it reports that cause. */
static dev_t diskprobe_path_dev(const char *path) {
  char p[PATH_MAX];
  struct stat st;
  sstrncpy(p, path, sizeof(p));
  while (stat(p, &st) != 0) {
    if (errno != ENOENT)
      return 0;
    char *slash = strrchr(p, '/');
    if (slash == NULL || slash == p)
      return stat("/", &st) == 0 ? st.st_dev : 0;
    *slash = '\0';
  }
  return st.st_dev;
}

/* The kernel name of a device number ("vda1"), or "M:m". */
static void diskprobe_dev_name(dev_t d, char *buf, size_t len) {
  dp_device_t dev;
  if (dp_device_resolve_at("/sys", major(d), minor(d), &dev) == 0)
    sstrncpy(buf, dev.name, len);
  else
    snprintf(buf, len, "%u:%u", major(d), minor(d));
}

/* Opens the target (laying out its probe file the first time) and its
 * engine. 0, or -1 after a rate-limited log line naming target and cause. */
static int diskprobe_target_open(diskprobe_target_t *t) {
  if (t->opened)
    return 0;
  /* A Path whose filesystem was unmounted now points into the mount point
   * on the parent filesystem: never lay out a probe file there. */
  if (!t->conf.is_device && t->home_dev != 0) {
    char now_on[64];
    dev_t d = diskprobe_path_dev(t->conf.path);
    if (d != 0 && d != t->home_dev) {
      diskprobe_dev_name(d, now_on, sizeof(now_on));
      c_complain(LOG_ERR, &t->complaint,
                 PLUGIN_NAME " plugin: target \"%s\" (%s): the path is now on "
                             "device %s (%u:%u), it was on %u:%u: filesystem "
                             "unmounted or replaced? Not probing there.",
                 t->conf.name, t->conf.path, now_on, major(d), minor(d),
                 major(t->home_dev), minor(t->home_dev));
      return -1;
    }
  }
  int rc =
      t->conf.is_device
          ? dp_target_open_block(t->conf.path, &t->t)
          : dp_target_open_file(t->conf.path, t->conf.file_size_bytes, &t->t);
  if (rc < 0) {
    c_complain(LOG_ERR, &t->complaint,
               PLUGIN_NAME " plugin: target \"%s\" (%s): %s", t->conf.name,
               t->conf.path, t->t.err);
    return -1;
  }
  uint32_t max_qd = 1, max_bs = t->t.align;
  for (size_t i = 0; i < t->conf.nprobes; i++) {
    const dp_probe_conf_t *p = &t->conf.probes[i];
    if (p->block_size % t->t.align != 0 || p->block_size > t->t.data_bytes) {
      c_complain(LOG_ERR, &t->complaint,
                 PLUGIN_NAME " plugin: target \"%s\" (%s): Probe \"%s\" "
                             "BlockSize %u is not a multiple of the device's "
                             "O_DIRECT alignment %u or exceeds the target",
                 t->conf.name, t->t.path, p->name, p->block_size, t->t.align);
      dp_target_close(&t->t);
      return -1;
    }
    if (p->queue_depth > max_qd)
      max_qd = p->queue_depth;
    if (p->block_size > max_bs)
      max_bs = p->block_size;
  }
  rc = dp_engine_open(&t->engine, t->t.fd, t->t.align, max_qd, max_bs);
  if (rc < 0) {
    c_complain(LOG_ERR, &t->complaint,
               PLUGIN_NAME " plugin: target \"%s\" (%s): cannot set up AIO: %s",
               t->conf.name, t->t.path, strerror(-rc));
    dp_target_close(&t->t);
    return -1;
  }
  t->opened = 1;
  if (t->home_dev == 0)
    t->home_dev = t->t.st_dev;
  c_release(LOG_INFO, &t->complaint,
            PLUGIN_NAME " plugin: target \"%s\" (%s) is probing again.",
            t->conf.name, t->t.path);
  if (t->t.laid_out)
    INFO(PLUGIN_NAME " plugin: target \"%s\": laid out probe file %s "
                     "(%llu bytes) on device %s.",
         t->conf.name, t->t.path, (unsigned long long)t->t.size_bytes,
         diskprobe_devname(t));
  return 0;
}

/* Closes a target whose device failed, so the next round opens it afresh
 * (a replaced device, a remounted filesystem) or says why it cannot. Not
 * while the kernel still holds I/O: that would block in io_destroy. */
static void diskprobe_target_reset(diskprobe_target_t *t) {
  if (t->engine != NULL) {
    if (dp_engine_outstanding(t->engine) > 0)
      return;
    dp_engine_close(t->engine);
    t->engine = NULL;
  }
  dp_target_close(&t->t);
  t->opened = 0;
}

/* After a round: the interval that keeps the disk within DutyCycle. */
static void diskprobe_target_pace(diskprobe_ctx_t *ctx, diskprobe_target_t *t,
                                  uint64_t busy_ns) {
  uint64_t ivl = dp_duty_interval_ns(t->conf.interval_ns, busy_ns,
                                     ctx->conf.duty_cycle_percent,
                                     (unsigned)t->w->ntargets);
  if (ivl > t->conf.interval_ns && !t->stretched_logged) {
    NOTICE(PLUGIN_NAME " plugin: target \"%s\": a round keeps disk %s busy "
                       "for %.2f s; DutyCycle %g%% stretches ProbeInterval "
                       "from %.0f s to %.0f s.",
           t->conf.name, t->w->disk_name, (double)busy_ns / 1e9,
           ctx->conf.duty_cycle_percent, (double)t->conf.interval_ns / 1e9,
           (double)ivl / 1e9);
    t->stretched_logged = 1;
  }
  pthread_mutex_lock(&ctx->lock);
  t->interval_ns = ivl;
  pthread_mutex_unlock(&ctx->lock);
}

/* Runs every probe of a target once. Called without the lock. */
static void diskprobe_target_run(diskprobe_ctx_t *ctx, diskprobe_target_t *t) {
  if (diskprobe_target_open(t) != 0)
    return;
  uint64_t busy_ns = 0;
  for (size_t i = 0; i < t->conf.nprobes; i++) {
    if (ctx->stop)
      return;
    diskprobe_probe_t *ps = &t->probes[i];
    const dp_probe_conf_t *p = &ps->conf;
    dp_job_t job = {.pattern = p->pattern,
                    .block_size = p->block_size,
                    .queue_depth = p->queue_depth,
                    .duration_ns = p->duration_ns,
                    .max_ops = p->max_ops,
                    .timeout_ns = t->conf.timeout_ns,
                    .region_offset = t->t.data_offset,
                    .region_bytes =
                        t->t.data_bytes - t->t.data_bytes % p->block_size,
                    .stop = &ctx->stop,
                    .counter = &t->w->issued};
    dp_result_t r;
    int rc = dp_engine_run(t->engine, &job, &r);
    if (rc < 0 && r.ops == 0 && !r.stalled) {
      c_complain(LOG_ERR, &t->complaint,
                 PLUGIN_NAME " plugin: target \"%s\" (%s): probe \"%s\" "
                             "failed: %s",
                 t->conf.name, t->t.path, p->name, strerror(-rc));
      diskprobe_target_reset(t);
      return;
    }
    if (ctx->stop)
      return; /* a probe cut short by shutdown is not a measurement */
    busy_ns += (uint64_t)(r.wall_s * 1e9);
    r.hist = NULL;
    pthread_mutex_lock(&ctx->lock);
    ps->err_io_total += r.err_io;
    ps->err_short_total += r.err_short;
    ps->err_timeout_total += r.err_timeout;
    if (ps->qlen == DISKPROBE_QUEUE) { /* reads fell behind: drop oldest */
      ps->qhead = (ps->qhead + 1) % DISKPROBE_QUEUE;
      ps->qlen--;
    }
    diskprobe_sample_t *q =
        &ps->queue[(ps->qhead + ps->qlen++) % DISKPROBE_QUEUE];
    q->r = r;
    q->time = cdtime();
    q->interval_ns = t->interval_ns;
    q->err_io_total = ps->err_io_total;
    q->err_short_total = ps->err_short_total;
    q->err_timeout_total = ps->err_timeout_total;
    if (r.stalled) {
      t->w->stalled = 1;
      t->w->stall_since_ns = dp_now_ns() - t->conf.timeout_ns;
      t->w->stalled_target = t;
    }
    pthread_mutex_unlock(&ctx->lock);

    if (r.err_io > 0 || r.err_short > 0)
      diskprobe_notify(t, NOTIF_FAILURE, p->name,
                       "diskprobe: host %s, target %s, device %s: probe %s "
                       "saw %llu I/O errors and %llu short transfers (%s)",
                       hostname_g, t->conf.name, diskprobe_devname(t), p->name,
                       (unsigned long long)r.err_io,
                       (unsigned long long)r.err_short,
                       r.first_error ? strerror(-r.first_error) : "short read");
    if (r.ops == 0 && (r.err_io > 0 || r.err_short > 0) && !r.stalled) {
      /* Nothing succeeded: the device may be gone; reopen next round. */
      diskprobe_target_reset(t);
      return;
    }
    if (r.stalled) {
      ERROR(PLUGIN_NAME " plugin: target \"%s\" (%s): device %s stalled: %u "
                        "I/O outstanding for more than %.1f s; no new probe "
                        "on this disk until they complete.",
            t->conf.name, t->t.path, diskprobe_devname(t),
            dp_engine_outstanding(t->engine), (double)t->conf.timeout_ns / 1e9);
      diskprobe_notify(t, NOTIF_FAILURE, "",
                       "diskprobe: host %s, target %s, device %s: I/O stalled "
                       "for more than %.1f s (%u outstanding)",
                       hostname_g, t->conf.name, diskprobe_devname(t),
                       (double)t->conf.timeout_ns / 1e9,
                       dp_engine_outstanding(t->engine));
      return;
    }
  }
  diskprobe_target_pace(ctx, t, busy_ns);
  /* Idle until the next round: hand the buffers' pages back. */
  dp_engine_release_buffers(t->engine);
}

/* While stalled: reap for up to a second; on full drain, clear the stall. */
static void diskprobe_worker_unstall(diskprobe_worker_t *w) {
  diskprobe_target_t *t = w->stalled_target;
  int left = dp_engine_reap(t->engine, NS_PER_S);
  if (left != 0)
    return;
  diskprobe_ctx_t *ctx = w->ctx;
  pthread_mutex_lock(&ctx->lock);
  double secs = (double)(dp_now_ns() - w->stall_since_ns) / 1e9;
  w->stalled = 0;
  w->stalled_target = NULL;
  pthread_mutex_unlock(&ctx->lock);
  NOTICE(PLUGIN_NAME " plugin: target \"%s\" (%s): device %s recovered after "
                     "%.1f s; probing resumes.",
         t->conf.name, t->t.path, diskprobe_devname(t), secs);
  diskprobe_notify(t, NOTIF_OKAY, "",
                   "diskprobe: host %s, target %s, device %s: I/O completes "
                   "again after a %.1f s stall",
                   hostname_g, t->conf.name, diskprobe_devname(t), secs);
}

static void diskprobe_abs_timespec(uint64_t mono_ns, struct timespec *ts) {
  ts->tv_sec = (time_t)(mono_ns / NS_PER_S);
  ts->tv_nsec = (long)(mono_ns % NS_PER_S);
}

static void *diskprobe_worker_main(void *arg) {
  diskprobe_worker_t *w = arg;
  diskprobe_ctx_t *ctx = w->ctx;
  pthread_mutex_lock(&ctx->lock);
  while (!ctx->shutdown) {
    if (w->stalled) {
      pthread_mutex_unlock(&ctx->lock);
      diskprobe_worker_unstall(w);
      pthread_mutex_lock(&ctx->lock);
      continue;
    }
    diskprobe_target_t *next = NULL;
    for (size_t i = 0; i < w->ntargets; i++)
      if (next == NULL || w->targets[i]->next_due_ns < next->next_due_ns)
        next = w->targets[i];
    uint64_t now = dp_now_ns();
    if (next->next_due_ns > now) {
      struct timespec ts;
      diskprobe_abs_timespec(next->next_due_ns, &ts);
      pthread_cond_timedwait(&ctx->cond, &ctx->lock, &ts);
      continue;
    }
    pthread_mutex_unlock(&ctx->lock);
    diskprobe_target_run(ctx, next);
    pthread_mutex_lock(&ctx->lock);
    /* Keep the cadence; a round that overran starts the next at once. */
    next->next_due_ns += next->interval_ns;
    now = dp_now_ns();
    if (next->next_due_ns < now)
      next->next_due_ns = now;
  }
  w->exited = 1;
  pthread_mutex_unlock(&ctx->lock);
  return NULL;
}

/* ---- init: group targets by disk, start workers ------------------------- */

/* The whole disk a configured target lives on, before anything is opened:
 * st_rdev of a device, st_dev of the path (or its parent) for a file. */
static dev_t diskprobe_target_disk(const diskprobe_target_t *t, char *name,
                                   size_t len) {
  struct stat st;
  dev_t d = 0;
  if (t->conf.is_device) {
    if (stat(t->conf.path, &st) == 0)
      d = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  } else {
    d = diskprobe_path_dev(t->conf.path);
  }
  dp_device_t dev;
  if (dp_device_resolve_at("/sys", major(d), minor(d), &dev) == 0) {
    sstrncpy(name, dev.disk, len);
    return makedev(dev.disk_major, dev.disk_minor);
  }
  snprintf(name, len, "%u:%u", major(d), minor(d));
  return d;
}

static int diskprobe_init(void) {
  diskprobe_ctx_t *ctx = diskprobe_ctx;
  if (ctx == NULL || ctx->ntargets == 0) {
    NOTICE(PLUGIN_NAME " plugin: no Target configured; nothing to probe.");
    return 0;
  }
  static const char *const types[] = {"probe_latency",    "probe_errors",
                                      "bytes_per_second", "stalled",
                                      "saturated",        "target_device"};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    if (plugin_get_ds(types[i]) == NULL) {
      ERROR(PLUGIN_NAME " plugin: type \"%s\" is not known: add "
                        "TypesDB \"<path>/diskprobe.types.db\" (and the "
                        "default types.db) to collectd.conf.",
            types[i]);
      return -1;
    }

  size_t nprobes = 0;
  ctx->read_interval_ns = CDTIME_T_TO_NS(plugin_get_interval());
  ctx->workers = calloc(ctx->ntargets, sizeof(*ctx->workers));
  if (ctx->workers == NULL)
    return -1;
  uint64_t now = dp_now_ns();
  unsigned seed = (unsigned)now;
  for (size_t i = 0; i < ctx->ntargets; i++) {
    diskprobe_target_t *t = &ctx->targets[i];
    nprobes += t->conf.nprobes;
    if (t->conf.interval_ns < ctx->read_interval_ns)
      ctx->read_interval_ns = t->conf.interval_ns;
    char name[64];
    dev_t disk = diskprobe_target_disk(t, name, sizeof(name));
    diskprobe_worker_t *w = NULL;
    for (size_t k = 0; k < ctx->nworkers; k++)
      if (ctx->workers[k].disk == disk)
        w = &ctx->workers[k];
    if (w == NULL) {
      w = &ctx->workers[ctx->nworkers++];
      w->disk = disk;
      w->ctx = ctx;
      sstrncpy(w->disk_name, name, sizeof(w->disk_name));
    }
    diskprobe_target_t **nt =
        realloc(w->targets, (w->ntargets + 1) * sizeof(*nt));
    if (nt == NULL)
      return -1;
    w->targets = nt;
    w->targets[w->ntargets++] = t;
    t->w = w;
    if (t->conf.timeout_ns > w->max_timeout_ns)
      w->max_timeout_ns = t->conf.timeout_ns;
    /* Splay: the first round starts at a random point of the interval, so
     * hosts started together do not probe shared storage in lockstep. */
    t->interval_ns = t->conf.interval_ns;
    t->next_due_ns = now;
    if (ctx->conf.splay)
      t->next_due_ns += (uint64_t)((double)rand_r(&seed) / RAND_MAX *
                                   (double)t->conf.interval_ns);
  }
  ctx->scratch = calloc(nprobes * DISKPROBE_QUEUE, sizeof(*ctx->scratch));
  if (ctx->scratch == NULL)
    return -1;
  if (diskprobe_devstats_init(ctx) != 0)
    return -1;
  for (size_t k = 0; k < ctx->nworkers; k++) {
    diskprobe_worker_t *w = &ctx->workers[k];
    char tname[16];
    snprintf(tname, sizeof(tname), "diskprobe#%zu", k);
    int rc = plugin_thread_create(&w->thread, diskprobe_worker_main, w, tname);
    if (rc != 0) {
      ERROR(PLUGIN_NAME " plugin: cannot start the worker for disk %s: %s",
            w->disk_name, strerror(rc));
      return -1;
    }
    w->started = 1;
    INFO(PLUGIN_NAME " plugin: worker for disk %s probes %zu target(s).",
         w->disk_name, w->ntargets);
  }
  return 0;
}

/* ---- the device view (/proc/diskstats) ---------------------------------- */

#define DISKPROBE_DEVICES_MAX 1024
/* A device busier than SaturationThreshold, mostly with I/O that is not
 * ours, is marked saturated: probes still run (their latency is what users
 * see then, and DutyCycle bounds what they add) but the flag says why
 * latency is high. */

static int diskprobe_devstats_init(diskprobe_ctx_t *ctx) {
  for (size_t k = 0; k < ctx->nworkers; k++) {
    const char *n = ctx->workers[k].disk_name;
    /* "0:39" (no block device behind a tmpfs, btrfs...) has no stats */
    if (n[0] && strchr(n, ':') == NULL && diskprobe_add_pattern(ctx, n) != 0)
      return -1;
  }
  ctx->slots = calloc(DISKPROBE_DEVICES_MAX, sizeof(*ctx->slots));
  ctx->metrics = calloc(DISKPROBE_DEVICES_MAX, sizeof(*ctx->metrics));
  ctx->dsbuf_cap = 256 * 1024;
  ctx->dsbuf = malloc(ctx->dsbuf_cap);
  if (!ctx->slots || !ctx->metrics || !ctx->dsbuf)
    return -1;
  dp_diskstats_tracker_init(&ctx->tracker, ctx->slots, DISKPROBE_DEVICES_MAX);
  dp_diskstats_tracker_filter(&ctx->tracker,
                              (const char *const *)ctx->dev_patterns,
                              ctx->ndev_patterns);
  return 0;
}

static void diskprobe_submit_device(const dp_diskstats_metrics_t *m,
                                    cdtime_t now, cdtime_t ivl) {
  const char *in = m->name;
  value_t v;
#define DEV(type, ti, val)                                                     \
  do {                                                                         \
    v.gauge = (val);                                                           \
    diskprobe_submit(in, type, ti, &v, 1, now, ivl);                           \
  } while (0)
  DEV("operations_per_second", "read", m->reads_per_s);
  DEV("operations_per_second", "write", m->writes_per_s);
  DEV("bytes_per_second", "read", m->read_bytes_per_s);
  DEV("bytes_per_second", "write", m->write_bytes_per_s);
  DEV("bytes", "avg_read_size", m->avg_read_size_bytes);
  DEV("bytes", "avg_write_size", m->avg_write_size_bytes);
  DEV("latency", "read_await", m->read_await_s);
  DEV("latency", "write_await", m->write_await_s);
  DEV("queue_length", "average", m->avg_queue_length);
  DEV("percent", "utilization", m->util_percent);
  DEV("pending_operations", "in_flight", (double)m->in_flight);
  /* Probe I/O straddling a read boundary can make the raw share exceed
   * 100 %; all of the device's I/O is the most it can be. */
  DEV("percent", "probe_share",
      m->probe_bytes_share > 1 ? 100.0 : 100.0 * m->probe_bytes_share);
  if (m->flags & DP_DISKSTATS_HAVE_DISCARDS) {
    DEV("operations_per_second", "discard", m->discards_per_s);
    DEV("latency", "discard_await", m->discard_await_s);
  }
  if (m->flags & DP_DISKSTATS_HAVE_FLUSHES) {
    DEV("operations_per_second", "flush", m->flushes_per_s);
    DEV("latency", "flush_await", m->flush_await_s);
  }
#undef DEV
}

/* Reads /proc/diskstats once and dispatches the view of every watched
 * device; sets each worker's saturated flag. Read thread only. */
static void diskprobe_devstats_read(diskprobe_ctx_t *ctx, cdtime_t now,
                                    cdtime_t ivl) {
  if (ctx->ndev_patterns == 0)
    return;
  size_t len = 0;
  int rc = dp_diskstats_read_file("/proc/diskstats", ctx->dsbuf, ctx->dsbuf_cap,
                                  &len);
  if (rc == -ENOBUFS) { /* a host with very many devices: grow once */
    char *nb = realloc(ctx->dsbuf, ctx->dsbuf_cap * 4);
    if (nb != NULL) {
      ctx->dsbuf = nb;
      ctx->dsbuf_cap *= 4;
      rc = dp_diskstats_read_file("/proc/diskstats", ctx->dsbuf, ctx->dsbuf_cap,
                                  &len);
    }
  }
  if (rc < 0) {
    c_complain(LOG_ERR, &ctx->ds_complaint,
               PLUGIN_NAME " plugin: cannot read /proc/diskstats: %s",
               strerror(-rc));
    return;
  }
  c_release(LOG_INFO, &ctx->ds_complaint,
            PLUGIN_NAME " plugin: /proc/diskstats readable again.");
  int n = dp_diskstats_tracker_feed(&ctx->tracker, ctx->dsbuf, len, dp_now_ns(),
                                    ctx->metrics, DISKPROBE_DEVICES_MAX);
  for (int i = 0; i < n; i++) {
    dp_diskstats_metrics_t *m = &ctx->metrics[i];
    diskprobe_worker_t *w = NULL;
    for (size_t k = 0; k < ctx->nworkers; k++)
      if (strcmp(ctx->workers[k].disk_name, m->name) == 0)
        w = &ctx->workers[k];
    if (w != NULL) {
      uint64_t ios = atomic_load_explicit(&w->issued.ios, memory_order_relaxed);
      uint64_t bytes =
          atomic_load_explicit(&w->issued.bytes, memory_order_relaxed);
      dp_diskstats_probe_share(m, ios - w->share_ios0, bytes - w->share_bytes0);
      w->share_ios0 = ios;
      w->share_bytes0 = bytes;
      w->saturated = m->util_percent >= ctx->conf.saturation_percent &&
                     !(m->probe_bytes_share >= 0.5);
    } else {
      m->probe_bytes_share = 0;
    }
    diskprobe_submit_device(m, now, ivl);
  }
}

/* ---- read: dispatch what the workers finished --------------------------- */

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

static void diskprobe_submit_probe(const diskprobe_target_t *t,
                                   const diskprobe_pending_t *p) {
  const dp_result_t *r = &p->s.r;
  cdtime_t ivl = NS_TO_CDTIME_T(p->s.interval_ns), tm = p->s.time;
  const char *in = t->conf.name, *pn = p->probe->conf.name;
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
  v[0].derive = (derive_t)p->s.err_io_total;
  v[1].derive = (derive_t)p->s.err_short_total;
  v[2].derive = (derive_t)p->s.err_timeout_total;
  diskprobe_submit(in, "probe_errors", pn, v, 3, tm, ivl);
  v[0].gauge = r->wall_s;
  diskprobe_submit(in, "duration", pn, v, 1, tm, ivl);
}

static int diskprobe_read(user_data_t *ud) {
  diskprobe_ctx_t *ctx = ud->data;
  cdtime_t now = cdtime(), ivl = plugin_get_interval();
  uint64_t mono = dp_now_ns();

  diskprobe_devstats_read(ctx, now, ivl);

  for (size_t i = 0; i < ctx->ntargets; i++) {
    diskprobe_target_t *t = &ctx->targets[i];
    size_t nfresh = 0;
    int stalled;
    double stall_s = 0, interval_s;
    pthread_mutex_lock(&ctx->lock);
    interval_s = (double)t->interval_ns / 1e9;
    for (size_t k = 0; k < t->conf.nprobes; k++) {
      diskprobe_probe_t *ps = &t->probes[k];
      for (; ps->qlen > 0; ps->qlen--) {
        ctx->scratch[nfresh].probe = ps;
        ctx->scratch[nfresh++].s = ps->queue[ps->qhead];
        ps->qhead = (ps->qhead + 1) % DISKPROBE_QUEUE;
      }
    }
    stalled = t->w->stalled && t->w->stalled_target == t;
    if (stalled)
      stall_s = (double)(mono - t->w->stall_since_ns) / 1e9;
    pthread_mutex_unlock(&ctx->lock);

    for (size_t k = 0; k < nfresh; k++)
      diskprobe_submit_probe(t, &ctx->scratch[k]);
    value_t v;
    v.gauge = stalled;
    diskprobe_submit(t->conf.name, "stalled", "stalled", &v, 1, now, ivl);
    v.gauge = stall_s;
    diskprobe_submit(t->conf.name, "duration", "stalled", &v, 1, now, ivl);
    v.gauge = interval_s;
    diskprobe_submit(t->conf.name, "duration", "interval", &v, 1, now, ivl);
    v.gauge = t->w->saturated;
    diskprobe_submit(t->conf.name, "saturated", "saturated", &v, 1, now, ivl);
    /* An info series: which disk the target is on, for joins and alert
     * text (type_instance = the disk's kernel name). */
    v.gauge = 1;
    diskprobe_submit(t->conf.name, "target_device", t->w->disk_name, &v, 1, now,
                     ivl);
  }
  return 0;
}

/* ---- shutdown ------------------------------------------------------------ */

static int diskprobe_shutdown(void) {
  diskprobe_ctx_t *ctx = diskprobe_ctx;
  if (ctx == NULL)
    return 0;
  pthread_mutex_lock(&ctx->lock);
  ctx->shutdown = 1;
  ctx->stop = 1;
  pthread_cond_broadcast(&ctx->cond);
  pthread_mutex_unlock(&ctx->lock);

  int leaked = 0;
  uint64_t t0 = dp_now_ns();
  for (size_t k = 0; k < ctx->nworkers; k++) {
    diskprobe_worker_t *w = &ctx->workers[k];
    if (!w->started)
      continue;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)(w->max_timeout_ns / NS_PER_S) + 5;
    if (pthread_timedjoin_np(w->thread, NULL, &dl) != 0) {
      WARNING(PLUGIN_NAME " plugin: worker for disk %s did not stop in time "
                          "(a hung disk?); leaving it behind.",
              w->disk_name);
      pthread_detach(w->thread);
      leaked = 1;
      continue;
    }
    w->started = 0;
  }
  INFO(PLUGIN_NAME " plugin: shut down in %.1f s%s.",
       (double)(dp_now_ns() - t0) / 1e9,
       leaked ? ", leaving a worker stuck on a hung disk" : "");
  if (leaked)
    return 0; /* memory stays: a stuck worker and the kernel still use it */

  for (size_t i = 0; i < ctx->ntargets; i++) {
    diskprobe_target_t *t = &ctx->targets[i];
    /* An engine with I/O outstanding would block in io_destroy. */
    if (t->engine && dp_engine_outstanding(t->engine) == 0)
      dp_engine_close(t->engine);
    dp_target_close(&t->t);
  }
  for (size_t k = 0; k < ctx->nworkers; k++)
    free(ctx->workers[k].targets);
  free(ctx->workers);
  free(ctx->targets);
  free(ctx->scratch);
  for (size_t i = 0; i < ctx->ndev_patterns; i++)
    free(ctx->dev_patterns[i]);
  free(ctx->dev_patterns);
  free(ctx->slots);
  free(ctx->metrics);
  free(ctx->dsbuf);
  pthread_mutex_destroy(&ctx->lock);
  pthread_cond_destroy(&ctx->cond);
  free(ctx);
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
