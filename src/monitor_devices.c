/* monitor_devices.c - the monitor's device view: the iostat view of the
 * watched devices and of every probed disk (and the disk under a loop
 * device), saturation and busy disks, fail-slow among peers, and each
 * disk's identity and class. See monitor_devices.h. */
#include "monitor_devices.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

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
    dp_mon_gauge(m, dv[k].metric, in.s, dv[k].type_instance, dv[k].value, tm,
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
  dp_mon_gauge(m, DP_METRIC_PEERS_SLOWDOWN, in.s, NULL, d->v.slowdown,
               m->read_wall_ns, m->read_interval_ns);
  dp_mon_gauge(m, DP_METRIC_PEERS_FAILSLOW, in.s, NULL, d->v.flagged ? 1 : 0,
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
  dp_mon_notice(m, d->v.flagged ? DP_MONITOR_WARNING : DP_MONITOR_OKAY,
                dev_instance(d->device).s, "failslow", "", msg,
                m->read_wall_ns);
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

const dp_disk_identity_t *dp_mon_disk_identity(dp_monitor_t *m,
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
  const dp_disk_identity_t *id = dp_mon_disk_identity(m, disk, &cls);
  if (id == NULL) {
    disk_ident_t *d = ident_add(m, disk);
    if (d == NULL)
      return;
    id = &d->id;
    cls = d->class_name;
  }
  dp_mon_gauge(m, DP_METRIC_DEV_INFO, dev_instance(disk).s, cls,
               (double)id->capacity_bytes, tm, m->read_interval_ns);
}

void dp_mon_read_devices(dp_monitor_t *m, uint64_t wall_ns) {
  if (m->devview == NULL)
    return;
  uint64_t mono_ns = dp_mon_now(m);
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

int dp_mon_devview_init(dp_monitor_t *m, const dp_monitor_conf_t *c) {
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
