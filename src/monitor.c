/* monitor.c - see monitor.h: the read sequence, probe samples, the
 * per-read values, set-up and teardown; the other parts of the monitor
 * (monitor_emit, _events, _verdict, _devices, _state) do the rest. */
#include "monitor.h"
#include "monitor_devices.h"
#include "monitor_emit.h"
#include "monitor_events.h"
#include "monitor_state.h"
#include "monitor_verdict.h"

#include "clock.h"
#include "events.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

/* ---- probe samples ------------------------------------------------------ */

static void emit_sample(const dp_monitor_t *m, const dp_sched_sample_t *s,
                        uint64_t tm) {
  const dp_result_t *r = &s->r;
  const char *in = s->target_name, *pn = s->probe_name;
  uint64_t ivl = s->interval_ns;
  int measured = r->ops > 0;
  /* A probe that did no I/O and neither stalled nor failed was skipped (a
   * disk too slow for it, a round discarded): its rates are unknown, not
   * zero -- a healthy capped disk must not graph as dead. A stall or
   * failing I/O that completed nothing is a true zero. */
  int skipped = !measured && !r->stalled &&
                r->err_io + r->err_short + r->err_timeout == 0;
  dp_mon_gauge(m, DP_METRIC_PROBE_IOPS, in, pn, skipped ? NAN : r->iops, tm,
               ivl);
  dp_mon_gauge(m, DP_METRIC_PROBE_BYTES, in, pn, skipped ? NAN : r->bytes_per_s,
               tm, ivl);
  /* No completed I/O: latency is unknown, not zero. */
  double lat[7] = {r->lat_min_s, r->lat_mean_s, r->lat_p50_s, r->lat_p90_s,
                   r->lat_p99_s, r->lat_p999_s, r->lat_max_s};
  for (int i = 0; i < 7; i++)
    lat[i] = measured ? lat[i] : NAN;
  dp_mon_value(m, DP_METRIC_PROBE_LATENCY, in, pn, lat, 7, tm, ivl);
  dp_mon_gauge(m, DP_METRIC_PROBE_QUEUE, in, pn,
               measured ? r->achieved_qd : NAN, tm, ivl);
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
  dp_mon_gauge(m, DP_METRIC_PROBE_DURATION, in, pn, r->wall_s, tm, ivl);
}

static size_t read_samples(dp_monitor_t *m, uint64_t wall_ns) {
  uint64_t mono_ns = dp_mon_now(m);
  size_t n =
      dp_sched_take(m->sched, m->scratch, dp_sched_max_samples(m->sched));
  for (size_t k = 0; k < n; k++) {
    const dp_sched_sample_t *s = &m->scratch[k];
    /* when the probe finished, on the wall clock */
    uint64_t age = mono_ns > s->done_ns ? mono_ns - s->done_ns : 0;
    uint64_t tm = wall_ns > age ? wall_ns - age : 0;
    if (!s->confirm) /* a confirmation is the verdict's, not a series' */
      emit_sample(
          m, s,
          dp_mon_not_before(&m->live->t[s->target].sample_ns[s->probe], tm));
    if (m->sink.sample) {
      dp_sched_target_state_t st;
      dp_sched_target_state(m->sched, s->target, &st);
      m->sink.sample(s, tm, &st, m->sink.arg);
    }
    const dp_result_t *r = &s->r;
    dp_monitor_obs_t o =
        dp_mon_obs(s->probe, r->ops, r->stalled, r->iops, r->lat_p50_s,
                   r->lat_mean_s, r->err_io + r->err_short, s->last_in_round);
    o.nospace = r->err_nospace;
    o.p99_s = r->lat_p99_s;
    o.confirm = s->confirm;
    dp_mon_feed(m, s->target, &o, s->round, tm, s->interval_ns, NULL);
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
  uint64_t now = dp_mon_now(m);
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
  dp_mon_publish_verdict(m, i, &v, 0, wall_ns, m->read_interval_ns, 0);
}

static void read_targets(dp_monitor_t *m, uint64_t wall_ns) {
  uint64_t ivl = m->read_interval_ns;
  for (size_t i = 0; i < m->ntargets; i++) {
    const char *tn = m->target_names[i];
    dp_sched_target_state_t st;
    dp_sched_target_state(m->sched, i, &st);
    judge_not_probing(m, i, &st, wall_ns);
    dp_mon_gauge(m, DP_METRIC_TARGET_STALLED, tn, NULL, st.stalled, wall_ns,
                 ivl);
    dp_mon_gauge(m, DP_METRIC_TARGET_STALL_DURATION, tn, NULL,
                 (double)st.stall_ns / 1e9, wall_ns, ivl);
    dp_mon_gauge(m, DP_METRIC_TARGET_INTERVAL, tn, NULL,
                 (double)st.interval_ns / 1e9, wall_ns, ivl);
    dp_mon_gauge(m, DP_METRIC_TARGET_SATURATED, tn, NULL,
                 m->saturated[dp_sched_target_worker(m->sched, i)], wall_ns,
                 ivl);
    /* An info series: which disk the target is on, for joins and alert
     * text (type_instance = the disk's kernel name). */
    dp_mon_gauge(m, DP_METRIC_TARGET_DEVICE, tn, st.disk, 1, wall_ns, ivl);
  }
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
  uint64_t now = dp_mon_now(m), ivl = m->read_interval_ns;
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
    dp_mon_read_devices(m, wall_ns);
  read_samples(m, wall_ns);
  if (!due)
    return;
  dp_mon_state_poll(m);
  /* every DP_MONITOR_SAVE_NS, and soon after a notice: what it said is
   * kept across a restart (monitor_emit.h's save_due) */
  if (atomic_load(&m->save_due) ||
      dp_mon_now(m) - m->saved_ns > DP_MONITOR_SAVE_NS)
    if (dp_mon_state_save(m, 0, atomic_load(&m->save_due)) == 0)
      atomic_store(&m->save_due, 0);
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
  sc.on_event = dp_mon_on_event;
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
    rc = dp_mon_devview_init(m, c);
  if (rc == 0)
    rc = sched_init(m, c);
  if (rc == 0)
    rc = health_init(m);
  if (rc < 0) {
    dp_monitor_free(m);
    return rc;
  }
  budget_log(m);
  dp_mon_state_dir_init(m, c);
  dp_mon_state_load(m);
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
  m->started_ns = dp_mon_now(m);
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
    dp_mon_state_save(m, 1, 0);
  dp_mon_state_close(m);
  return m->leaked;
}

void dp_monitor_free(dp_monitor_t *m) {
  if (m == NULL)
    return;
  dp_mon_state_close(m); /* not stopped: nothing new saved */
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

dp_monitor_obs_t dp_monitor_obs(size_t probe, uint64_t ops, int stalled,
                                double iops, double p50_s, double mean_s,
                                uint64_t errors, int last_in_round) {
  return dp_mon_obs(probe, ops, stalled, iops, p50_s, mean_s, errors,
                    last_in_round);
}

uint64_t dp_monitor_confirm_delay_ns(uint64_t interval_ns) {
  return dp_mon_confirm_delay_ns(interval_ns);
}

int dp_monitor_feed(dp_monitor_t *m, size_t i, const dp_monitor_obs_t *o,
                    uint64_t round, uint64_t wall_ns, uint64_t interval_ns,
                    dp_health_verdict_t *out) {
  return dp_mon_feed(m, i, o, round, wall_ns, interval_ns, out);
}

const char *dp_monitor_type_name(size_t i) {
  return i < DP_METRIC_TYPE_COUNT ? dp_metric_type((dp_metric_type_id_t)i)->name
                                  : NULL;
}

const dp_disk_identity_t *dp_monitor_disk_identity(dp_monitor_t *m,
                                                   const char *disk,
                                                   const char **class_name) {
  return dp_mon_disk_identity(m, disk, class_name);
}

int dp_monitor_state_dir_check(const char *dir, char *err, size_t errlen) {
  return dp_mon_state_dir_check(dir, err, errlen);
}

int dp_monitor_glob_check(const char *glob, char *err, size_t errlen) {
  return dp_devview_glob_check(glob, err, errlen);
}
