/* scheduler.c - the probe scheduler; see scheduler.h for the contract. */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include "scheduler.h"
#include "blockdev.h"
#include "clock.h"
#include "job.h"
#include "reaper.h"
#include "rng.h"
#include "stall.h"
#include "target.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define UNRESOLVED_DISK DP_SCHED_DISK_UNRESOLVED

typedef struct {
  dp_probe_conf_t conf;
  uint64_t err_io_total, err_short_total, err_timeout_total;
  dp_sched_sample_t *queue; /* queue_len slots, oldest at qhead */
  unsigned qhead, qlen;
  int skipped; /* skipped last round: runs this one (never two running) */
} probe_t;

typedef struct {
  dp_target_conf_t conf;
  size_t index;
  dp_target_t t;
  dp_prober_t *prober; /* non-NULL exactly while the target is open */
  long held_pid;       /* its last prober, killed, still held by the kernel */
  dev_t home_dev;      /* st_dev of the first successful open of a Path */
  uint64_t next_due_ns, interval_ns, rounds;
  double scale;           /* of each probe's Duration: DutyCycle's budget */
  uint64_t asked_ns;      /* the probes' Durations added up */
  int shrunk_sent;        /* SHRUNK said once */
  unsigned open_failures; /* consecutive */
  int failed;             /* the last round ended in a failure */
  int timeout_short;      /* a brief stall was seen (TIMEOUT_SHORT sent) */
  double shallow_p50_s;   /* the last p50 of a queue-depth-1 probe; NaN */
  /* a rate cap's steps (scheduler.h, DutyCycle): stepped_floor: probes
   * of DP_SCHED_STEPPED_NS at least; trial: the next round's probes run
   * that long to see whether whole steps show; trial_wait rounds
   * before another, after one that showed none (trial_backoff, doubling) */
  int stepped_floor, trial;
  unsigned trial_wait, trial_backoff;
  int opened_once;         /* an OPENED was said (its first-time notes) */
  uint64_t confirm_due_ns; /* a confirmation round asked for; 0: none */
  dp_sched_sample_t held[DP_PROBES_MAX]; /* a round held back by a stall */
  size_t nheld;
  size_t worker;
  /* what other threads may read, under s->lock (the fields above belong
   * to the worker that runs the target) */
  int pub_opened;
  char pub_device[64];
  probe_t probes[DP_PROBES_MAX];
} target_t;

typedef struct {
  dev_t disk;
  char disk_name[64]; /* UNRESOLVED_DISK for the unresolved worker */
  size_t *targets;    /* indexes, capacity s->ntargets */
  size_t ntargets;
  uint64_t max_timeout_ns;
  dp_io_counter_t issued;
  pthread_t thread;
  int started;
  dp_stall_fence_t fence; /* guarded by s->lock (stall.h) */
} worker_t;

struct dp_sched {
  dp_sched_conf_t c;
  target_t *targets;
  size_t ntargets;
  worker_t *workers; /* capacity ntargets + 1: never reallocated */
  size_t nworkers;
  pthread_mutex_t lock;
  pthread_cond_t cond;  /* workers sleep here */
  pthread_cond_t qcond; /* consumers wait here for samples */
  atomic_int stop;      /* read by running probes */
  int shutdown, started, stopped, leaked;
  size_t queued;
  uint64_t rng;
};

void dp_sched_conf_init(dp_sched_conf_t *c) {
  memset(c, 0, sizeof(*c));
  c->duty_cycle_percent = 2;
  c->splay = 1;
  c->sysroot = DP_SYSROOT_DEFAULT;
  c->queue_len = DP_SCHED_QUEUE_DEFAULT;
  c->join_grace_ns = 5 * DP_NS_PER_S;
}

static uint64_t now_ns(const dp_sched_t *s) {
  return s->c.now_ns ? s->c.now_ns(s->c.clock_arg) : dp_now_ns();
}

static unsigned sharing_of(const dp_sched_t *s, const target_t *t) {
  const worker_t *w = &s->workers[t->worker];
  return (unsigned)(w->ntargets ? w->ntargets : 1);
}

uint64_t dp_sched_allowed_ns(uint64_t interval_ns, double duty_percent,
                             unsigned sharing) {
  if (duty_percent <= 0 || sharing == 0)
    return interval_ns;
  return (uint64_t)((double)interval_ns * duty_percent / 100.0 /
                    (double)sharing);
}

double dp_sched_scale(uint64_t interval_ns, uint64_t asked_ns,
                      uint64_t overhead_ns, double duty_percent,
                      unsigned sharing) {
  uint64_t allowed = dp_sched_allowed_ns(interval_ns, duty_percent, sharing);
  if (asked_ns == 0 || asked_ns + overhead_ns <= allowed)
    return 1.0;
  if (overhead_ns >= allowed)
    return 0.0; /* every probe at its floor */
  return (double)(allowed - overhead_ns) / (double)asked_ns;
}

uint64_t dp_sched_scaled_ns(uint64_t duration_ns, double scale) {
  if (duration_ns == 0 || scale >= 1.0)
    return duration_ns;
  double d = (double)duration_ns * scale;
  if (d < (double)DP_SCHED_PROBE_MIN_NS)
    d = (double)DP_SCHED_PROBE_MIN_NS;
  return d < (double)duration_ns ? (uint64_t)d : duration_ns;
}

uint64_t dp_sched_splay_ns(uint64_t now, uint64_t interval_ns, uint64_t *rng) {
  if (interval_ns == 0)
    return now;
  return now + dp_rng_next(rng) % interval_ns;
}

/* ---- disks ---------------------------------------------------------------
 */

/* st_dev of a path, or of its nearest existing parent; 0 when the path
 * cannot be examined for another reason than not existing (a dead mount:
 * ENOTCONN, EIO), so that opening it reports that cause. real (may be
 * NULL): that path with its symlinks resolved, or "". */
static dev_t path_dev(const char *path, char *real) {
  char p[PATH_MAX];
  struct stat st;
  snprintf(p, sizeof(p), "%s", path);
  while (stat(p, &st) != 0) {
    if (errno != ENOENT)
      return 0;
    char *slash = strrchr(p, '/');
    if (slash == NULL || slash == p) {
      snprintf(p, sizeof(p), "/");
      if (stat(p, &st) != 0)
        return 0;
      break;
    }
    *slash = '\0';
  }
  if (real != NULL && realpath(p, real) == NULL)
    real[0] = '\0';
  return st.st_dev;
}

/* The whole disk a configured target lives on, before anything is opened,
 * and its name; 0 when it cannot be known yet (a missing Device). A device
 * number sysfs does not know (btrfs, overlayfs) is looked up in the mount
 * table, else stands for itself. */
static dev_t target_disk(const dp_sched_t *s, const dp_target_conf_t *tc,
                         char *name, size_t len) {
  struct stat st;
  dev_t d = 0;
  char real[PATH_MAX] = "";
  if (tc->is_device) {
    if (stat(tc->path, &st) == 0 && S_ISBLK(st.st_mode))
      d = st.st_rdev;
  } else {
    d = path_dev(tc->path, real);
  }
  if (d == 0) {
    snprintf(name, len, UNRESOLVED_DISK);
    return 0;
  }
  dp_blockdev_t dev;
  /* btrfs, overlayfs: the mount table says which disk */
  if (dp_blockdev_resolve_at(s->c.sysroot, major(d), minor(d), &dev) == 0 ||
      (real[0] && dp_blockdev_resolve_mount_at(s->c.sysroot, NULL, real, &dev,
                                               NULL, 0) == 0)) {
    snprintf(name, len, "%s", dev.disk);
    return makedev(dev.disk_major, dev.disk_minor);
  }
  snprintf(name, len, "%u:%u", major(d), minor(d));
  return d;
}

/* target_disk in a child process (reaper.h), DP_CONF_ANSWER_NS at most
 * for all of them together: a Path or Device on a hung disk or a dead
 * mount (a stat there waits for ever) is left unresolved, never waited
 * for, and *slow set. */
typedef struct {
  const dp_sched_t *s;
  const dp_target_conf_t *tc;
} disk_arg_t;
typedef struct {
  dev_t d;
  char name[64];
} disk_answer_t;

static void disk_of(void *arg, void *out, size_t len) {
  const disk_arg_t *a = arg;
  disk_answer_t *r = out;
  (void)len;
  r->d = target_disk(a->s, a->tc, r->name, sizeof(r->name));
}

static void targets_disks(const dp_sched_t *s,
                          const dp_target_conf_t *const *tc, size_t n,
                          disk_answer_t *out, int *slow) {
  disk_arg_t *args = calloc(n, sizeof(*args));
  int *rcs = calloc(n, sizeof(*rcs));
  for (size_t i = 0; args && rcs && i < n; i++)
    args[i] = (disk_arg_t){.s = s, .tc = tc[i]};
  if (args && rcs)
    dp_reaper_call_many(disk_of, args, sizeof(*args), out, sizeof(*out), n,
                        DP_CONF_ANSWER_NS, rcs);
  for (size_t i = 0; i < n; i++) {
    slow[i] = args && rcs && rcs[i] == -ETIMEDOUT;
    if (args == NULL || rcs == NULL || rcs[i] != 0) {
      out[i].d = 0;
      snprintf(out[i].name, sizeof(out[i].name), UNRESOLVED_DISK);
    }
  }
  free(args);
  free(rcs);
}

/* The worker of disk d (name), created if missing. Lock held or not yet
 * shared. */
static size_t worker_for(dp_sched_t *s, dev_t d, const char *name) {
  for (size_t k = 0; k < s->nworkers; k++)
    if (s->workers[k].disk == d &&
        (d != 0 || strcmp(s->workers[k].disk_name, UNRESOLVED_DISK) == 0))
      return k;
  worker_t *w = &s->workers[s->nworkers];
  w->disk = d;
  snprintf(w->disk_name, sizeof(w->disk_name), "%s", name);
  return s->nworkers++;
}

static void worker_add(dp_sched_t *s, size_t k, size_t ti) {
  worker_t *w = &s->workers[k];
  w->targets[w->ntargets++] = ti;
  s->targets[ti].worker = k;
  if (s->targets[ti].conf.timeout_ns > w->max_timeout_ns)
    w->max_timeout_ns = s->targets[ti].conf.timeout_ns;
}

static void worker_remove(dp_sched_t *s, size_t k, size_t ti) {
  worker_t *w = &s->workers[k];
  for (size_t i = 0; i < w->ntargets; i++)
    if (w->targets[i] == ti) {
      memmove(&w->targets[i], &w->targets[i + 1],
              (w->ntargets - i - 1) * sizeof(*w->targets));
      w->ntargets--;
      return;
    }
}

/* ---- events --------------------------------------------------------------
 */

static const char *device_name(const dp_sched_t *s, const target_t *t) {
  if (t->t.dev.name[0])
    return t->t.dev.name;
  const char *d = s->workers[t->worker].disk_name;
  return d[0] && strcmp(d, UNRESOLVED_DISK) != 0 ? d : "unknown";
}

/* Publishes the target's open state and device for dp_sched_target_state
 * (worker thread, without the lock held). */
static void publish(dp_sched_t *s, target_t *t) {
  char dev[64];
  snprintf(dev, sizeof(dev), "%s", device_name(s, t));
  pthread_mutex_lock(&s->lock);
  t->pub_opened = t->prober != NULL;
  snprintf(t->pub_device, sizeof(t->pub_device), "%s", dev);
  pthread_mutex_unlock(&s->lock);
}

static dp_sched_event_t event_of(const dp_sched_t *s, dp_sched_event_kind_t k,
                                 const target_t *t) {
  dp_sched_event_t ev = {.kind = k,
                         .target_name = "",
                         .path = "",
                         .device = "unknown",
                         .disk = ""};
  if (t != NULL) {
    ev.target = t->index;
    ev.target_name = t->conf.name;
    ev.path = t->t.path[0] ? t->t.path : t->conf.path;
    ev.device = device_name(s, t);
    ev.disk = s->workers[t->worker].disk_name;
    ev.timeout_ns = t->conf.timeout_ns;
  }
  return ev;
}

static void emit(const dp_sched_t *s, const dp_sched_event_t *ev) {
  if (s->c.on_event != NULL)
    s->c.on_event(ev, s->c.event_arg);
}

/* ---- construction --------------------------------------------------------
 */

static void sched_free_memory(dp_sched_t *s) {
  for (size_t i = 0; s->targets && i < s->ntargets; i++)
    for (size_t k = 0; k < DP_PROBES_MAX; k++)
      free(s->targets[i].probes[k].queue);
  for (size_t k = 0; s->workers && k < s->ntargets + 1; k++)
    free(s->workers[k].targets);
  free(s->targets);
  free(s->workers);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cond);
  pthread_cond_destroy(&s->qcond);
  free(s);
}

static void open_failed(dp_sched_t *s, target_t *t, int err, const char *msg);

int dp_sched_new(dp_sched_t **out, const dp_sched_conf_t *c,
                 const dp_target_conf_t *targets, size_t n) {
  *out = NULL;
  if (n == 0 || c == NULL || c->duty_cycle_percent <= 0 ||
      c->duty_cycle_percent > 100)
    return -EINVAL;
  dp_sched_t *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return -ENOMEM;
  s->c = *c;
  if (s->c.queue_len == 0)
    s->c.queue_len = DP_SCHED_QUEUE_DEFAULT;
  if (s->c.join_grace_ns == 0)
    s->c.join_grace_ns = 5 * DP_NS_PER_S;
  pthread_mutex_init(&s->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cond, &ca);
  pthread_cond_init(&s->qcond, &ca);
  pthread_condattr_destroy(&ca);
  s->ntargets = n;
  s->targets = calloc(n, sizeof(*s->targets));
  s->workers = calloc(n + 1, sizeof(*s->workers));
  if (s->targets == NULL || s->workers == NULL)
    goto nomem;
  for (size_t k = 0; k < n + 1; k++)
    if ((s->workers[k].targets = calloc(n, sizeof(size_t))) == NULL)
      goto nomem;
  uint64_t now = now_ns(s);
  s->rng = c->seed ? c->seed : now | 1;
  for (size_t i = 0; i < n; i++) {
    target_t *t = &s->targets[i];
    t->conf = targets[i];
    t->index = i;
    t->t.fd = -1;
    t->interval_ns = t->conf.interval_ns;
    t->shallow_p50_s = NAN;
    t->next_due_ns =
        s->c.splay ? dp_sched_splay_ns(now, t->interval_ns, &s->rng) : now;
    for (size_t k = 0; k < t->conf.nprobes; k++) {
      t->probes[k].conf = t->conf.probes[k];
      t->probes[k].queue = calloc(s->c.queue_len, sizeof(dp_sched_sample_t));
      if (t->probes[k].queue == NULL)
        goto nomem;
    }
  }
  /* each target's disk, bounded: one on a hung disk goes to the
   * unresolved worker and is said (below) */
  const dp_target_conf_t **tcs = calloc(n, sizeof(*tcs));
  disk_answer_t *disks = calloc(n, sizeof(*disks));
  int *slow = calloc(n, sizeof(*slow));
  if (tcs == NULL || disks == NULL || slow == NULL) {
    free(tcs);
    free(disks);
    free(slow);
    goto nomem;
  }
  for (size_t i = 0; i < n; i++)
    tcs[i] = &s->targets[i].conf;
  targets_disks(s, tcs, n, disks, slow);
  for (size_t i = 0; i < n; i++)
    worker_add(s, worker_for(s, disks[i].d, disks[i].name), i);
  for (size_t i = 0; i < n; i++)
    if (slow[i]) {
      char msg[160];
      snprintf(msg, sizeof(msg),
               "did not answer within %.3g s (a hung disk or a dead mount?): "
               "not waited for; probed once it answers",
               (double)DP_CONF_ANSWER_NS / 1e9);
      open_failed(s, &s->targets[i], -ETIMEDOUT, msg);
    }
  free(tcs);
  free(disks);
  free(slow);
  /* DutyCycle's budget, once the disks' targets are known */
  for (size_t i = 0; i < n; i++) {
    target_t *t = &s->targets[i];
    for (size_t k = 0; k < t->conf.nprobes; k++)
      t->asked_ns += t->conf.probes[k].duration_ns;
    t->scale = dp_sched_scale(t->conf.interval_ns, t->asked_ns, 0,
                              s->c.duty_cycle_percent, sharing_of(s, t));
  }
  *out = s;
  return 0;
nomem:
  sched_free_memory(s);
  return -ENOMEM;
}

size_t dp_sched_nworkers(const dp_sched_t *s) { return s->nworkers; }
const char *dp_sched_worker_disk(const dp_sched_t *s, size_t w) {
  return s->workers[w].disk_name;
}
size_t dp_sched_worker_ntargets(const dp_sched_t *s, size_t w) {
  return s->workers[w].ntargets;
}
size_t dp_sched_target_worker(const dp_sched_t *s, size_t i) {
  return s->targets[i].worker;
}
const dp_io_counter_t *dp_sched_worker_counter(const dp_sched_t *s, size_t w) {
  return &s->workers[w].issued;
}
int dp_sched_find_disk(const dp_sched_t *s, const char *disk) {
  for (size_t k = 0; k < s->nworkers; k++)
    if (strcmp(s->workers[k].disk_name, disk) == 0)
      return (int)k;
  return -ENOENT;
}
size_t dp_sched_max_samples(const dp_sched_t *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->ntargets; i++)
    n += s->targets[i].conf.nprobes;
  return n * s->c.queue_len;
}

/* ---- opening a target ----------------------------------------------------
 */

static void open_failed(dp_sched_t *s, target_t *t, int err, const char *msg) {
  t->open_failures++;
  dp_sched_event_t ev = event_of(s, DP_SCHED_OPEN_FAILED, t);
  ev.err = err;
  ev.msg = msg;
  ev.repeated = t->open_failures;
  emit(s, &ev);
}

/* A Path whose filesystem was unmounted now points into the mount point on
 * the parent filesystem: never lay out a probe file there. */
static int moved_filesystem(dp_sched_t *s, target_t *t) {
  if (t->conf.is_device || t->home_dev == 0)
    return 0;
  dev_t d = path_dev(t->conf.path, NULL);
  if (d == 0 || d == t->home_dev)
    return 0;
  char name[64], msg[320];
  dp_blockdev_t dev;
  if (dp_blockdev_resolve_at(s->c.sysroot, major(d), minor(d), &dev) == 0)
    snprintf(name, sizeof(name), "%s", dev.name);
  else
    snprintf(name, sizeof(name), "%u:%u", major(d), minor(d));
  snprintf(msg, sizeof(msg),
           "the path is now on %s (%u:%u), not %u:%u as at start: filesystem "
           "unmounted or replaced? Not probing there.",
           name, major(d), minor(d), major(t->home_dev), minor(t->home_dev));
  open_failed(s, t, -EXDEV, msg);
  return 1;
}

static void target_reset(target_t *t);

/* Closes the target and its prober (out of process, whatever the kernel
 * still holds). */
static void target_close(target_t *t) {
  long pid = dp_prober_hung(t->prober) ? dp_prober_pid(t->prober) : 0;
  dp_prober_close(t->prober, &t->t);
  if (pid > 0 && dp_reaper_holds((pid_t)pid))
    t->held_pid = pid;
  t->prober = NULL;
  dp_target_close(&t->t);
}

/* Opens the target and its engine if needed. 1 when open. A probe file
 * that changed under us since the last round (deleted, replaced,
 * truncated, holes punched) is said once and opened afresh. */
static void check_stalled(dp_sched_t *s, worker_t *w, target_t *t);
static int target_open(dp_sched_t *s, worker_t *w, target_t *t) {
  int rc = 0;
  if (t->prober != NULL && dp_prober_outstanding(t->prober) == 0)
    rc = dp_prober_verify(t->prober, &t->t, t->conf.timeout_ns);
  if (rc == -ETIMEDOUT) { /* the disk holds even that read */
    check_stalled(s, w, t);
    return 0;
  }
  if (rc == -ESTALE) {
    open_failed(s, t, -ESTALE, t->t.err);
    target_reset(t);
    t->failed = 1;
  }
  if (t->prober != NULL)
    return 1;
  if (moved_filesystem(s, t))
    return 0;
  int writes = 0; /* a probe file is opened for writing only if needed */
  for (size_t i = 0; i < t->conf.nprobes; i++)
    writes |= dp_pattern_writes(t->probes[i].conf.pattern);
  /* A layout (the first round's, so splayed like the rounds) obeys the
   * stop flag and LayoutRate. */
  dp_prober_target_t o = {.path = t->conf.path,
                          .is_device = t->conf.is_device,
                          .file_size_bytes = t->conf.file_size_bytes,
                          .writable = writes,
                          .layout_rate_bytes = t->conf.layout_rate_bytes,
                          .stop = &s->stop,
                          .timeout_ns = t->conf.timeout_ns};
  char perr[PATH_MAX + 384];
  /* One prober per target at most in the kernel's hands: one killed on a
   * hung disk (an open that never answered) stays until its I/O returns;
   * another would only join it. */
  if (t->held_pid > 0 && dp_reaper_holds((pid_t)t->held_pid)) {
    snprintf(perr, sizeof(perr),
             "its last prober (pid %ld), killed when it did not answer, is "
             "still held by the kernel (I/O on a hung disk?): not starting "
             "another until it exits",
             t->held_pid);
    open_failed(s, t, -EBUSY, perr);
    return 0;
  }
  t->held_pid = 0;
  rc = dp_prober_start(&t->prober, s->c.prober, &s->stop, perr, sizeof(perr));
  if (rc == -ECANCELED)
    return 0; /* shutting down: not a failure to report */
  if (rc < 0) {
    open_failed(s, t, rc, perr);
    return 0;
  }
  rc = dp_prober_open_target(t->prober, &o, &t->t);
  if (rc < 0)
    target_close(t);
  if (rc == -ECANCELED)
    return 0; /* shutting down mid-layout: not a failure to report */
  if (rc < 0) {
    open_failed(s, t, rc, t->t.err);
    return 0;
  }
  uint32_t max_qd = 1, max_bs = t->t.align;
  for (size_t i = 0; i < t->conf.nprobes; i++) {
    const dp_probe_conf_t *p = &t->probes[i].conf;
    dp_job_t job;
    char err[256], msg[320];
    if ((rc = dp_job_build(p, &t->t, t->conf.timeout_ns, &job, err,
                           sizeof(err))) < 0) {
      snprintf(msg, sizeof(msg), "Probe \"%s\": %s", p->name, err);
      target_close(t);
      open_failed(s, t, rc, msg);
      return 0;
    }
    if (p->queue_depth > max_qd)
      max_qd = p->queue_depth;
    if (p->block_size > max_bs)
      max_bs = p->block_size;
  }
  if ((rc = dp_prober_open_engine(t->prober, max_qd, max_bs)) < 0) {
    char msg[PATH_MAX + 256];
    if (dp_prober_error(t->prober)[0])
      snprintf(msg, sizeof(msg), "cannot set up AIO: %s",
               dp_prober_error(t->prober));
    else
      snprintf(msg, sizeof(msg), "cannot set up AIO: %s", strerror(-rc));
    target_close(t);
    open_failed(s, t, rc, msg);
    return 0;
  }
  if (t->home_dev == 0)
    t->home_dev = t->t.st_dev;
  dp_sched_event_t ev = event_of(s, DP_SCHED_OPENED, t);
  ev.laid_out = t->t.laid_out;
  ev.resumed_bytes = t->t.resumed_bytes;
  ev.recovered = t->open_failures > 0 || t->failed;
  ev.size_bytes = t->t.size_bytes;
  if (!t->opened_once) { /* said once per target, not every reopen */
    ev.no_extent_map = t->t.no_extent_map;
    ev.members = t->t.dev_members[0] ? t->t.dev_members : NULL;
  }
  t->opened_once = 1;
  t->open_failures = 0;
  t->failed = 0;
  emit(s, &ev);
  return 1;
}

/* Closes a target whose device failed, so the next round opens it afresh
 * (a replaced device, a remounted filesystem). Not while the kernel still
 * holds I/O: that would block in io_destroy. */
static void target_reset(target_t *t) {
  t->failed = 1;
  if (dp_prober_outstanding(t->prober) > 0)
    return;
  target_close(t);
}

/* ---- a round -------------------------------------------------------------
 */

/* Queues the round's samples with the interval now in force. Lock held. */
static void enqueue(dp_sched_t *s, target_t *t, dp_sched_sample_t *round,
                    size_t n) {
  for (size_t i = 0; i < n; i++) {
    probe_t *p = &t->probes[round[i].probe];
    round[i].interval_ns = t->interval_ns;
    round[i].last_in_round = i == n - 1;
    if (p->qlen == s->c.queue_len) { /* the consumer fell behind */
      p->qhead = (p->qhead + 1) % s->c.queue_len;
      p->qlen--;
      s->queued--;
    }
    p->queue[(p->qhead + p->qlen++) % s->c.queue_len] = round[i];
    s->queued++;
  }
  if (n > 0)
    pthread_cond_broadcast(&s->qcond);
}

/* After a round: the share of each probe's Duration the next round runs,
 * so that the disk stays within DutyCycle at the ProbeInterval the user
 * set. ran_ns: the (scaled) Durations of the probes that ran; the rest of
 * busy_ns is warm-up, drain and the slow I/O the budget must also hold. */
static void pace(dp_sched_t *s, target_t *t, uint64_t busy_ns,
                 uint64_t ran_ns) {
  uint64_t overhead = busy_ns > ran_ns ? busy_ns - ran_ns : 0;
  double was = t->scale;
  unsigned sharing = sharing_of(s, t);
  double scale = dp_sched_scale(t->conf.interval_ns, t->asked_ns, overhead,
                                s->c.duty_cycle_percent, sharing);
  pthread_mutex_lock(&s->lock); /* dp_sched_target_state reads it */
  t->scale = scale;
  pthread_mutex_unlock(&s->lock);
  uint64_t allowed = dp_sched_allowed_ns(t->conf.interval_ns,
                                         s->c.duty_cycle_percent, sharing);
  if (busy_ns > allowed && t->scale < was && !t->shrunk_sent) {
    t->shrunk_sent = 1;
    dp_sched_event_t ev = event_of(s, DP_SCHED_SHRUNK, t);
    ev.busy_ns = busy_ns;
    ev.configured_ns = t->conf.interval_ns;
    ev.interval_ns = allowed;
    ev.duty_percent = s->c.duty_cycle_percent;
    ev.scale = t->scale;
    emit(s, &ev);
  }
}

static void round_done(dp_sched_t *s, target_t *t, dp_sched_sample_t *round,
                       size_t n, uint64_t busy_ns, uint64_t ran_ns) {
  pace(s, t, busy_ns, ran_ns);
  pthread_mutex_lock(&s->lock);
  enqueue(s, t, round, n);
  pthread_mutex_unlock(&s->lock);
}

/* A result that measured nothing (a probe skipped, or cut short by a
 * brief stall): no I/O counted, every latency NaN; the job's shape and
 * error counts stay. */
static void result_unmeasured(dp_result_t *r) {
  r->stalled = 0;
  r->ops = r->bytes = 0;
  r->iops = r->bytes_per_s = r->achieved_qd = 0;
  r->lat_min_s = r->lat_mean_s = r->lat_p50_s = r->lat_p90_s = r->lat_p99_s =
      r->lat_p999_s = r->lat_max_s = NAN;
}

/* How a round goes on after one of its probes. */
typedef enum {
  ROUND_NEXT,    /* on to the next probe (after the last: the round is over) */
  ROUND_END,     /* queue what ran; the round is over */
  ROUND_RESET,   /* queue what ran, and reopen the target next round */
  ROUND_HELD,    /* held back in t->held until the first stall poll */
  ROUND_ABANDON, /* shutting down: a round cut short is not a measurement */
} round_step_t;

/* The kinds of I/O whose latencies judge each other: reads, writes,
 * writes made durable one by one (syncwrite). */
enum { LAT_READ, LAT_WRITE, LAT_SYNCWRITE, LAT_KINDS };
static int lat_kind(dp_pattern_t p) {
  return p == DP_PATTERN_SYNCWRITE ? LAT_SYNCWRITE
         : dp_pattern_writes(p)    ? LAT_WRITE
                                   : LAT_READ;
}

/* A round in progress. */
typedef struct {
  dp_sched_sample_t smp[DP_PROBES_MAX];
  size_t n;
  uint64_t busy_ns;
  uint64_t ran_ns; /* the scaled Durations of the probes that ran */
  /* the slowest p50 of the round so far of each kind of I/O (lat_kind),
   * and the probe that measured it */
  double single_s[LAT_KINDS];
  const char *single_by[LAT_KINDS];
  int throttled; /* a probe's completions came in a throttle's steps */
  int stepped;   /* a probe's rate was over whole steps */
} round_t;

/* A deep probe that could not complete one I/O per queue slot within its
 * duration at the slowest single I/O of its own kind seen this round (a
 * read probe by the reads: a syncwrite's flush says nothing of a read)
 * measures nothing: skipped -- but never two rounds running, so that
 * every probe is measured at least every other round. */
static int deep_on_slow_disk(const dp_job_t *job, const round_t *rd,
                             const probe_t *ps) {
  return job->queue_depth > 1 && job->duration_ns > 0 && !ps->skipped &&
         rd->single_s[lat_kind(job->pattern)] * 1e9 > (double)job->duration_ns;
}

/* How long a single I/O of r took. A queue-depth-1 probe's p50 is that. A
 * deep probe's p50 is mostly waiting behind its own queue: at a volume's
 * rate cap (a throttle holding the I/O until its next slice) its p50 is
 * the queue's length in time, 0.1 s at 250 IOPS and QD32, while each read
 * takes microseconds; its time per slot, p50 / achieved depth, is the time
 * a single I/O holds the disk. */
static double single_io_s(const dp_result_t *r) {
  if (r->ops == 0)
    return 0;
  if (r->queue_depth <= 1)
    return r->lat_p50_s;
  return r->lat_p50_s / (r->achieved_qd > 1 ? r->achieved_qd : 1);
}

static void probe_skip(dp_sched_t *s, target_t *t, probe_t *ps,
                       const dp_job_t *job, const round_t *rd, dp_result_t *r) {
  int k = lat_kind(job->pattern);
  ps->skipped = 1;
  memset(r, 0, sizeof(*r));
  r->pattern = job->pattern;
  r->block_size = job->block_size;
  r->queue_depth = job->queue_depth;
  result_unmeasured(r);
  dp_sched_event_t ev = event_of(s, DP_SCHED_PROBE_SKIPPED, t);
  ev.probe_name = ps->conf.name;
  ev.busy_ns = (uint64_t)(rd->single_s[k] * 1e9);
  ev.by_probe = rd->single_by[k];
  ev.result = r; /* its pattern: a read or a write probe */
  ev.timeout_ns = job->duration_ns;
  ev.outstanding = job->queue_depth;
  emit(s, &ev);
}

/* Runs (or skips) one probe into *r: 0, or -errno when it could not run
 * (said as PROBE_FAILED). A probe that ran and failed returns 0: its
 * result says what went wrong. */
static int probe_measure(dp_sched_t *s, worker_t *w, target_t *t, probe_t *ps,
                         const round_t *rd, dp_result_t *r, uint64_t *ran_ns) {
  dp_job_t job;
  char err[256];
  dp_probe_conf_t pc = ps->conf; /* its Duration within DutyCycle */
  pc.duration_ns = dp_sched_scaled_ns(pc.duration_ns, t->scale);
  if ((t->stepped_floor || t->trial) && pc.duration_ns < DP_SCHED_STEPPED_NS)
    pc.duration_ns = ps->conf.duration_ns < DP_SCHED_STEPPED_NS
                         ? ps->conf.duration_ns
                         : DP_SCHED_STEPPED_NS;
  int rc = dp_job_build(&pc, &t->t, t->conf.timeout_ns, &job, err, sizeof(err));
  if (rc == 0 && deep_on_slow_disk(&job, rd, ps)) {
    probe_skip(s, t, ps, &job, rd, r);
    return 0;
  }
  ps->skipped = 0;
  if (rc == 0) {
    job.stop = &s->stop;
    job.counter = &w->issued;
    *ran_ns += pc.duration_ns;
    rc = dp_prober_run(t->prober, &job, r);
    if (rc < 0 && (r->ops > 0 || r->stalled))
      rc = 0; /* it ran: the result says what went wrong */
  }
  if (rc < 0) {
    dp_sched_event_t ev = event_of(s, DP_SCHED_PROBE_FAILED, t);
    ev.probe_name = ps->conf.name;
    ev.err = rc;
    const char *why = dp_prober_error(t->prober);
    ev.msg = (rc == -EPIPE || rc == -EBADMSG) && why[0] ? why
             : rc == -EPIPE                             ? "the prober process "
                                                          "ended (killed?)"
             : job.block_size                           ? strerror(-rc)
                                                        : err;
    emit(s, &ev);
  }
  return rc;
}

/* Adds probe i's result to the round as its next sample (with the
 * probe's running error totals) and says its I/O errors. */
static void sample_add(dp_sched_t *s, target_t *t, size_t i,
                       const dp_result_t *r, round_t *rd) {
  probe_t *ps = &t->probes[i];
  int k = lat_kind(r->pattern);
  if (single_io_s(r) > rd->single_s[k]) {
    rd->single_s[k] = single_io_s(r);
    rd->single_by[k] = ps->conf.name;
  }
  rd->busy_ns += (uint64_t)(r->wall_s * 1e9);
  rd->throttled |= r->throttled;
  rd->stepped |= r->stepped;
  if (ps->conf.queue_depth == 1)
    t->shallow_p50_s = r->ops > 0 ? r->lat_p50_s : NAN;
  ps->err_io_total += r->err_io;
  ps->err_short_total += r->err_short;
  ps->err_timeout_total += r->err_timeout;
  dp_sched_sample_t *smp = &rd->smp[rd->n++];
  smp->target = t->index;
  smp->probe = i;
  smp->target_name = t->conf.name;
  smp->probe_name = ps->conf.name;
  smp->r = *r;
  smp->r.hist = NULL;
  smp->done_ns = now_ns(s);
  smp->round = t->rounds;
  smp->err_io_total = ps->err_io_total;
  smp->err_short_total = ps->err_short_total;
  smp->err_timeout_total = ps->err_timeout_total;
  /* A probe file is read only within the size it was opened at: short
   * reads alone mean it shrank under the round, which the check after the
   * round says (DISCARDED), not a failing disk. */
  int shrank = t->t.kind == DP_TARGET_FILE && r->err_io == 0;
  if (r->err_io > 0 || (r->err_short > 0 && !shrank)) {
    dp_sched_event_t ev = event_of(s, DP_SCHED_IO_ERRORS, t);
    ev.probe_name = ps->conf.name;
    ev.result = r;
    ev.err = r->first_error;
    emit(s, &ev);
  }
  if (r->err_nospace > 0) {
    dp_sched_event_t ev = event_of(s, DP_SCHED_NO_SPACE, t);
    ev.probe_name = ps->conf.name;
    ev.result = r;
    emit(s, &ev);
  }
}

/* Worker w is stalled on target t's probe i, whose I/O was found late at
 * seen_ns (it was issued at least a Timeout before): no new probe on the
 * disk until a stall poll clears it (stall.h). hold: held back, not
 * reported until the first poll. */
static dp_stall_begin_t fence(dp_sched_t *s, worker_t *w, const target_t *t,
                              size_t i, uint64_t seen_ns, int hold) {
  pthread_mutex_lock(&s->lock);
  dp_stall_begin_t b =
      dp_stall_begin(&w->fence, t->index, i, seen_ns, t->conf.timeout_ns, hold);
  pthread_mutex_unlock(&s->lock);
  return b;
}

static void say_stall(dp_sched_t *s, const target_t *t, size_t i,
                      const dp_result_t *r) {
  dp_sched_event_t ev = event_of(s, DP_SCHED_STALL_BEGAN, t);
  ev.probe_name = t->probes[i].conf.name;
  ev.result = r;
  ev.outstanding = dp_prober_outstanding(t->prober);
  emit(s, &ev);
}

/* Probe i stalled: the worker is fenced until its I/O drains. Said at
 * once, or (after a Timeout found too short) held back with the round
 * until the first poll tells a brief stall from a hung disk. */
static round_step_t stall_began(dp_sched_t *s, worker_t *w, target_t *t,
                                size_t i, const dp_result_t *r, round_t *rd) {
  if (fence(s, w, t, i, rd->smp[rd->n - 1].done_ns, t->timeout_short) ==
      DP_STALL_HOLD) { /* the first poll says whether it is one */
    pace(s, t, rd->busy_ns, rd->ran_ns);
    memcpy(t->held, rd->smp, rd->n * sizeof(rd->smp[0]));
    t->nheld = rd->n;
    return ROUND_HELD;
  }
  say_stall(s, t, i, r);
  return ROUND_END;
}

/* Probe i of the round, and what the round does next. */
static round_step_t probe_step(dp_sched_t *s, worker_t *w, target_t *t,
                               size_t i, round_t *rd) {
  if (atomic_load(&s->stop))
    return ROUND_ABANDON;
  dp_result_t r;
  if (probe_measure(s, w, t, &t->probes[i], rd, &r, &rd->ran_ns) < 0)
    return ROUND_RESET; /* what did run still counts */
  if (atomic_load(&s->stop))
    return ROUND_ABANDON;
  sample_add(s, t, i, &r, rd);
  if (r.stalled)
    return stall_began(s, w, t, i, &r, rd);
  if (r.ops == 0 && (r.err_io > 0 || r.err_short > 0))
    return ROUND_RESET; /* nothing succeeded: the device may be gone */
  return ROUND_NEXT;
}

/* The prober did not answer the check after a round within Timeout: its
 * disk holds that read, a stall like a probe's (the worker is fenced and
 * polls the prober until the answer comes). */
static void check_stalled(dp_sched_t *s, worker_t *w, target_t *t) {
  fence(s, w, t, 0, now_ns(s), 0);
  say_stall(s, t, 0, NULL);
}

/* After a round: its probe file still what the reads hit (dp_target_verify),
 * or the round is discarded -- every sample made unmeasured, like a skipped
 * probe, its short reads not counted against the disk (the file shrank
 * under them; I/O errors stay), DISCARDED said -- and 1 returned: the
 * target is reopened, laying the file out again. */
static int round_discarded(dp_sched_t *s, worker_t *w, target_t *t,
                           round_t *rd) {
  /* after a stall the disk may not answer a check either: the stall says
   * enough */
  if (dp_prober_outstanding(t->prober) > 0)
    return 0;
  int rc = dp_prober_verify(t->prober, &t->t, t->conf.timeout_ns);
  if (rc == -ETIMEDOUT)
    check_stalled(s, w, t);
  if (rc != -ESTALE)
    return 0;
  for (size_t i = 0; i < rd->n; i++) {
    result_unmeasured(&rd->smp[i].r);
    rd->smp[i].r.err_short = 0; /* reads past a truncation: not the disk */
  }
  dp_sched_event_t ev = event_of(s, DP_SCHED_DISCARDED, t);
  ev.msg = t->t.err;
  ev.err = -ESTALE;
  emit(s, &ev);
  return 1;
}

/* After a round: does the target's volume complete I/O in a rate cap's
 * steps, so that its probes need DP_SCHED_STEPPED_NS to hold a whole one?
 * A round that shows steps (throttled) asks for a trial: the next round's
 * probes run that long. Whole steps in it (stepped) set the floor
 * for every probe; none, and no trial for 8, 16, ... 256 rounds (a disk
 * whose completions come in bursts for another reason, a loop device's
 * worker short of CPU, pays one longer probe now and then, not every other
 * round). The floor holds while rounds show whole steps. */
#define TRIAL_BACKOFF_MIN 8
#define TRIAL_BACKOFF_MAX 256
static void steps_seen(target_t *t, const round_t *rd) {
  if (t->stepped_floor) {
    t->stepped_floor = rd->stepped;
    return;
  }
  if (t->trial) {
    t->trial = 0;
    if (rd->stepped) {
      t->stepped_floor = 1;
      t->trial_backoff = 0;
      return;
    }
    t->trial_backoff = t->trial_backoff < TRIAL_BACKOFF_MIN ? TRIAL_BACKOFF_MIN
                       : t->trial_backoff < TRIAL_BACKOFF_MAX
                           ? 2 * t->trial_backoff
                           : TRIAL_BACKOFF_MAX;
    t->trial_wait = t->trial_backoff;
    return;
  }
  if (t->trial_wait > 0)
    t->trial_wait--;
  else if (rd->throttled)
    t->trial = 1;
}

/* Runs every probe of target t once (worker w, without the lock). */
static void round_run(dp_sched_t *s, worker_t *w, target_t *t) {
  if (!target_open(s, w, t))
    return;
  round_t rd = {.n = 0, .busy_ns = 0, .ran_ns = 0};
  t->rounds++;
  round_step_t step = ROUND_NEXT;
  for (size_t i = 0; i < t->conf.nprobes && step == ROUND_NEXT; i++)
    step = probe_step(s, w, t, i, &rd);
  if (step == ROUND_ABANDON || step == ROUND_HELD)
    return;
  if (round_discarded(s, w, t, &rd))
    step = ROUND_RESET;
  if (rd.n > 0)
    steps_seen(t, &rd);
  round_done(s, t, rd.smp, rd.n, rd.busy_ns, rd.ran_ns);
  if (step == ROUND_RESET)
    target_reset(t);
  else if (step == ROUND_NEXT) /* every probe ran */
    /* Idle until the next round: hand the buffers' pages back. */
    dp_prober_release_buffers(t->prober);
}

/* The first poll of a stall held back (target.timeout_short) told it
 * brief: the round is queued as not stalled, the stalled probe cut short
 * is not measured, like a skipped one (its late I/Os stay in
 * err_timeout); or a stall after all, said now with the held round. */
static void held_round_out(dp_sched_t *s, target_t *t, const dp_stall_poll_t *p,
                           size_t probe) {
  pthread_mutex_lock(&s->lock);
  if (p->brief && t->nheld > 0)
    result_unmeasured(&t->held[t->nheld - 1].r);
  enqueue(s, t, t->held, t->nheld);
  pthread_mutex_unlock(&s->lock);
  if (p->reported_now && t->nheld > 0)
    say_stall(s, t, probe, &t->held[t->nheld - 1].r);
  t->nheld = 0;
}

static int queueing_explains(const target_t *t, size_t i) {
  return dp_stall_queueing_explains(t->probes[i].conf.queue_depth,
                                    t->shallow_p50_s,
                                    (double)t->conf.timeout_ns / 1e9);
}

/* While stalled: reap for up to wait_ns, and do what the fence says
 * (stall.h). Returns what dp_engine_reap said: 0 drained, > 0 still
 * outstanding, < 0 the AIO context failed (the I/O stays fenced; reported
 * once). */
static int unstall(dp_sched_t *s, worker_t *w, uint64_t wait_ns) {
  pthread_mutex_lock(&s->lock);
  dp_stall_fence_t f = w->fence;
  pthread_mutex_unlock(&s->lock);
  target_t *t = &s->targets[f.target];
  int left = dp_prober_reap(t->prober, wait_ns);
  if (left < 0 && !t->failed) {
    t->failed = 1;
    dp_sched_event_t ev = event_of(s, DP_SCHED_PROBE_FAILED, t);
    ev.probe_name = "";
    ev.err = left;
    ev.msg = "the AIO context failed with I/O outstanding; no new probe on "
             "this disk";
    emit(s, &ev);
  }
  int queueing = !t->timeout_short && queueing_explains(t, f.probe);
  pthread_mutex_lock(&s->lock);
  dp_stall_poll_t p = dp_stall_poll(&w->fence, left, now_ns(s), queueing);
  pthread_mutex_unlock(&s->lock);
  if (f.phase == DP_STALL_HELD) {
    held_round_out(s, t, &p, f.probe);
    return left;
  }
  if (!p.ended)
    return left;
  dp_sched_event_t ev = event_of(s, DP_SCHED_STALL_ENDED, t);
  ev.stall_ns = p.stall_ns;
  emit(s, &ev);
  if (p.timeout_short) {
    /* drained at the first poll: a Timeout too short, not a hung disk */
    t->timeout_short = 1;
    ev = event_of(s, DP_SCHED_TIMEOUT_SHORT, t);
    ev.probe_name = t->probes[f.probe].conf.name;
    ev.outstanding = t->probes[f.probe].conf.queue_depth;
    ev.stall_ns = p.stall_ns;
    emit(s, &ev);
  }
  return 0;
}

static int worker_start(dp_sched_t *s, size_t k);

/* The unresolved worker's round: a target whose disk is now known moves to
 * that disk's worker. 1 if it moved. */
static int regroup(dp_sched_t *s, size_t from, target_t *t) {
  const dp_target_conf_t *tc = &t->conf;
  disk_answer_t a;
  int slow;
  targets_disks(s, &tc, 1, &a, &slow);
  dev_t d = a.d;
  const char *name = a.name;
  if (d == 0)
    return 0;
  pthread_mutex_lock(&s->lock);
  size_t k = worker_for(s, d, name);
  worker_remove(s, from, t->index);
  worker_add(s, k, t->index);
  t->next_due_ns = now_ns(s);
  int start = s->started && !s->shutdown && !s->workers[k].started;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
  dp_sched_event_t ev = event_of(s, DP_SCHED_REGROUPED, t);
  ev.ntargets = s->workers[k].ntargets;
  emit(s, &ev);
  if (start)
    worker_start(s, k);
  return 1;
}

/* When target t is due next: its round, or a confirmation before it. */
static uint64_t due_of(const target_t *t) {
  return t->confirm_due_ns && t->confirm_due_ns < t->next_due_ns
             ? t->confirm_due_ns
             : t->next_due_ns;
}

/* The target of worker w due first. Lock held. */
static target_t *next_target(dp_sched_t *s, worker_t *w) {
  target_t *next = NULL;
  for (size_t i = 0; i < w->ntargets; i++) {
    target_t *t = &s->targets[w->targets[i]];
    if (next == NULL || due_of(t) < due_of(next))
      next = t;
  }
  return next;
}

/* A confirmation round (dp_sched_confirm): the first probe alone, for at
 * most DP_SCHED_CONFIRM_NS, queued as one sample with confirm set and the
 * round it confirms; the cadence and DutyCycle's scale are left alone. */
static void confirm_run(dp_sched_t *s, worker_t *w, target_t *t) {
  if (t->rounds == 0 || !target_open(s, w, t))
    return;
  round_t rd = {.n = 0, .busy_ns = 0, .ran_ns = 0};
  rd.smp[0].confirm = 1; /* sample_add keeps it (also for a held stall) */
  uint64_t full = t->probes[0].conf.duration_ns;
  uint64_t d = dp_sched_scaled_ns(full, t->scale);
  t->probes[0].conf.duration_ns =
      d < DP_SCHED_CONFIRM_NS ? d : DP_SCHED_CONFIRM_NS;
  pthread_mutex_lock(&s->lock); /* dp_sched_target_state reads it */
  double scale = t->scale;
  t->scale = 1.0; /* the Duration above is already scaled */
  pthread_mutex_unlock(&s->lock);
  round_step_t step = probe_step(s, w, t, 0, &rd);
  pthread_mutex_lock(&s->lock);
  t->scale = scale;
  pthread_mutex_unlock(&s->lock);
  t->probes[0].conf.duration_ns = full;
  if (step == ROUND_ABANDON || step == ROUND_HELD || rd.n == 0)
    return;
  pthread_mutex_lock(&s->lock);
  enqueue(s, t, rd.smp, rd.n);
  pthread_mutex_unlock(&s->lock);
  if (step == ROUND_RESET)
    target_reset(t);
}

int dp_sched_confirm(dp_sched_t *s, size_t i, uint64_t delay_ns) {
  if (i >= s->ntargets)
    return -EINVAL;
  pthread_mutex_lock(&s->lock);
  target_t *t = &s->targets[i];
  uint64_t due = now_ns(s) + delay_ns;
  if (due < t->next_due_ns && t->confirm_due_ns == 0)
    t->confirm_due_ns = due;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
  return 0;
}

uint64_t dp_sched_step(dp_sched_t *s, size_t wi, uint64_t wait_ns) {
  worker_t *w = &s->workers[wi];
  pthread_mutex_lock(&s->lock);
  if (w->fence.phase != DP_STALL_NONE) {
    pthread_mutex_unlock(&s->lock);
    /* a failed context answers at once: poll it at the stall pace */
    return now_ns(s) + (unstall(s, w, wait_ns) < 0 ? DP_SCHED_REAP_NS : 0);
  }
  target_t *t = next_target(s, w);
  uint64_t now = now_ns(s);
  if (t == NULL || due_of(t) > now) {
    uint64_t due = t ? due_of(t) : UINT64_MAX;
    pthread_mutex_unlock(&s->lock);
    return due;
  }
  int unresolved = strcmp(w->disk_name, UNRESOLVED_DISK) == 0;
  int confirm = t->confirm_due_ns && t->confirm_due_ns < t->next_due_ns;
  t->confirm_due_ns = 0;
  pthread_mutex_unlock(&s->lock);

  if (confirm) {
    if (!unresolved)
      confirm_run(s, w, t);
    pthread_mutex_lock(&s->lock);
    t = next_target(s, w);
    uint64_t due = w->fence.phase != DP_STALL_NONE ? now_ns(s)
                   : t                             ? due_of(t)
                                                   : UINT64_MAX;
    pthread_mutex_unlock(&s->lock);
    return due;
  }

  if (!unresolved || !regroup(s, wi, t)) {
    round_run(s, w, t);
    publish(s, t);
  }

  pthread_mutex_lock(&s->lock);
  if (t->worker == wi) {
    /* Keep the cadence; a round that overran starts the next at once. */
    t->next_due_ns += t->interval_ns;
    now = now_ns(s);
    if (t->next_due_ns < now)
      t->next_due_ns = now;
  }
  t = next_target(s, w);
  uint64_t due = w->fence.phase != DP_STALL_NONE ? now_ns(s)
                 : t                             ? due_of(t)
                                                 : UINT64_MAX;
  pthread_mutex_unlock(&s->lock);
  return due;
}

/* ---- threads -------------------------------------------------------------
 */

typedef struct {
  dp_sched_t *s;
  size_t k;
} worker_arg_t;

static void *worker_main(void *arg) {
  worker_arg_t a = *(worker_arg_t *)arg;
  free(arg);
  dp_sched_t *s = a.s;
  while (!atomic_load(&s->stop)) {
    uint64_t due = dp_sched_step(s, a.k, DP_SCHED_REAP_NS);
    pthread_mutex_lock(&s->lock);
    if (!s->shutdown && due > dp_now_ns()) {
      if (due == UINT64_MAX) {
        pthread_cond_wait(&s->cond, &s->lock);
      } else {
        struct timespec ts;
        dp_ns_to_timespec(due, &ts);
        pthread_cond_timedwait(&s->cond, &s->lock, &ts);
      }
    }
    pthread_mutex_unlock(&s->lock);
  }
  return NULL;
}

/* The mask a worker starts with (it inherits its creator's): every
 * asynchronous signal blocked, so the host's handlers run on the host's
 * threads; the synchronous ones a fault raises stay deliverable. */
static void worker_sigmask(sigset_t *set) {
  sigfillset(set);
  static const int sync_signals[] = {SIGSEGV, SIGBUS,  SIGFPE,
                                     SIGILL,  SIGTRAP, SIGSYS};
  for (size_t i = 0; i < sizeof(sync_signals) / sizeof(sync_signals[0]); i++)
    sigdelset(set, sync_signals[i]);
}

static int worker_start(dp_sched_t *s, size_t k) {
  worker_t *w = &s->workers[k];
  worker_arg_t *a = malloc(sizeof(*a));
  if (a == NULL)
    return -ENOMEM;
  a->s = s;
  a->k = k;
  pthread_mutex_lock(&s->lock);
  char name[16];
  snprintf(name, sizeof(name), "diskprobe#%zu", k);
  sigset_t block, old;
  worker_sigmask(&block);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  int rc = w->started ? 0
           : s->c.thread_create == NULL
               ? pthread_create(&w->thread, NULL, worker_main, a)
               : s->c.thread_create(&w->thread, worker_main, a, name);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc == 0 && !w->started)
    w->started = 1;
  else
    free(a);
  pthread_mutex_unlock(&s->lock);
  if (rc != 0)
    return -rc;
  dp_sched_event_t ev = event_of(s, DP_SCHED_WORKER_STARTED, NULL);
  ev.disk = w->disk_name;
  ev.ntargets = w->ntargets;
  emit(s, &ev);
  return 0;
}

int dp_sched_start(dp_sched_t *s) {
  pthread_mutex_lock(&s->lock);
  s->started = 1;
  size_t n = s->nworkers;
  pthread_mutex_unlock(&s->lock);
  for (size_t k = 0; k < n; k++) {
    int rc = worker_start(s, k);
    if (rc < 0)
      return rc;
  }
  return 0;
}

/* ---- consumers -----------------------------------------------------------
 */

size_t dp_sched_take(dp_sched_t *s, dp_sched_sample_t *out, size_t max) {
  size_t n = 0;
  pthread_mutex_lock(&s->lock);
  for (size_t i = 0; i < s->ntargets; i++) {
    target_t *t = &s->targets[i];
    for (size_t k = 0; k < t->conf.nprobes; k++) {
      probe_t *p = &t->probes[k];
      for (; p->qlen > 0 && n < max; p->qlen--, s->queued--) {
        out[n++] = p->queue[p->qhead];
        p->qhead = (p->qhead + 1) % s->c.queue_len;
      }
    }
  }
  pthread_mutex_unlock(&s->lock);
  return n;
}

int dp_sched_wait(dp_sched_t *s, uint64_t deadline_ns) {
  struct timespec ts;
  dp_ns_to_timespec(deadline_ns, &ts);
  pthread_mutex_lock(&s->lock);
  while (s->queued == 0 && !s->shutdown && dp_now_ns() < deadline_ns)
    if (pthread_cond_timedwait(&s->qcond, &s->lock, &ts) == ETIMEDOUT)
      break;
  int have = s->queued > 0;
  pthread_mutex_unlock(&s->lock);
  return have;
}

void dp_sched_target_state(dp_sched_t *s, size_t i,
                           dp_sched_target_state_t *out) {
  pthread_mutex_lock(&s->lock);
  const target_t *t = &s->targets[i];
  const worker_t *w = &s->workers[t->worker];
  out->opened = t->pub_opened;
  out->stalled = dp_stall_reported(&w->fence, i);
  out->stall_ns = dp_stall_age_ns(&w->fence, i, now_ns(s));
  out->interval_ns = t->interval_ns;
  out->scale = t->scale;
  out->asked_ns = t->asked_ns;
  out->allowed_ns = dp_sched_allowed_ns(
      t->conf.interval_ns, s->c.duty_cycle_percent, sharing_of(s, t));
  out->sharing = sharing_of(s, t);
  out->disk = w->disk_name;
  snprintf(out->device, sizeof(out->device), "%s",
           t->pub_device[0] ? t->pub_device : "unknown");
  pthread_mutex_unlock(&s->lock);
}

/* ---- shutdown ------------------------------------------------------------
 */

int dp_sched_stop(dp_sched_t *s) {
  pthread_mutex_lock(&s->lock);
  if (s->stopped) {
    pthread_mutex_unlock(&s->lock);
    return s->leaked;
  }
  s->shutdown = 1;
  atomic_store(&s->stop, 1);
  pthread_cond_broadcast(&s->cond);
  pthread_cond_broadcast(&s->qcond);
  size_t n = s->nworkers;
  pthread_mutex_unlock(&s->lock);

  int leaked = 0;
  for (size_t k = 0; k < n; k++) {
    worker_t *w = &s->workers[k];
    if (!w->started)
      continue;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t wait = w->max_timeout_ns + s->c.join_grace_ns;
    uint64_t ns = (uint64_t)dl.tv_nsec + wait % DP_NS_PER_S;
    dl.tv_sec += (time_t)(wait / DP_NS_PER_S + ns / DP_NS_PER_S);
    dl.tv_nsec = (long)(ns % DP_NS_PER_S);
    if (pthread_timedjoin_np(w->thread, NULL, &dl) != 0) {
      pthread_detach(w->thread);
      leaked++;
      dp_sched_event_t ev = event_of(s, DP_SCHED_WORKER_STUCK, NULL);
      ev.disk = w->disk_name;
      ev.ntargets = w->ntargets;
      emit(s, &ev);
      continue;
    }
    w->started = 0;
  }
  pthread_mutex_lock(&s->lock);
  s->stopped = 1;
  s->leaked = leaked;
  pthread_mutex_unlock(&s->lock);
  return leaked;
}

void dp_sched_free(dp_sched_t *s) {
  if (s == NULL)
    return;
  dp_sched_stop(s);
  if (s->leaked)
    return; /* a stuck worker and the kernel still use this memory */
  /* the probers killed here are waited for 0.5 s at most in all, so that
   * the next process on the same probe files does not find them held */
  uint64_t deadline = dp_now_ns() + 500 * UINT64_C(1000000);
  for (size_t i = 0; i < s->ntargets; i++) {
    target_t *t = &s->targets[i];
    /* An engine with I/O outstanding would block in io_destroy. A probe
     * stopped mid-flight (or a stall held back for its first poll) on a
     * disk that answers has it back within milliseconds: wait a little
     * for it; only a disk that does not answer keeps the engine. */
    if (dp_prober_outstanding(t->prober) > 0)
      (void)dp_prober_reap(t->prober, 200 * UINT64_C(1000000));
    /* a prober process is left to finish on its own */
    if (dp_prober_outstanding(t->prober) == 0 || dp_prober_pid(t->prober))
      dp_prober_close_by(t->prober, &t->t, deadline);
    dp_target_close(&t->t);
  }
  sched_free_memory(s);
}
