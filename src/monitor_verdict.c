/* monitor_verdict.c - see monitor_verdict.h. */
#include "monitor_verdict.h"

#include "clock.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

dp_monitor_obs_t dp_mon_obs(size_t probe, uint64_t ops, int stalled,
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
    dp_mon_notice(m, DP_MONITOR_OKAY, m->target_names[i], "stalled", probe, msg,
                  wall_ns);
}

/* The verdict's values: the level, each rule's level, armed, the round's
 * and each probe's slowdown, the peer ratio and the baselines. */
static void emit_verdict_values(const dp_monitor_t *m, size_t i,
                                const dp_health_verdict_t *v, uint64_t tm,
                                uint64_t ivl) {
  const char *tn = m->target_names[i];
  dp_mon_gauge(m, DP_METRIC_HEALTH_LEVEL, tn, NULL, v->level, tm, ivl);
  for (int k = 0; k < DP_RULE_COUNT; k++)
    dp_mon_gauge(m, DP_METRIC_HEALTH_RULE, tn,
                 dp_health_rule_name((dp_health_rule_t)k), v->rule[k], tm, ivl);
  dp_mon_gauge(m, DP_METRIC_HEALTH_ARMED, tn, NULL, v->armed, tm, ivl);
  dp_mon_gauge(m, DP_METRIC_HEALTH_SLOWDOWN, tn, NULL, v->slowdown, tm, ivl);
  const dp_target_conf_t *tc = &m->targets[i];
  dp_mon_gauge(m, DP_METRIC_HEALTH_PEER_RATIO, tn, tc->probes[0].name,
               v->peer_ratio, tm, ivl);
  for (size_t k = 0; k < tc->nprobes; k++) {
    dp_mon_gauge(m, DP_METRIC_HEALTH_PROBE_SLOWDOWN, tn, tc->probes[k].name,
                 v->probe_slowdown[k], tm, ivl);
    double b[3] = {v->base_p50_s[k], v->base_mean_s[k], v->base_iops[k]};
    dp_mon_value(m, DP_METRIC_HEALTH_BASELINE, tn, tc->probes[k].name, b, 3, tm,
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

/* A verdict out: its values, the verdict sink, a notice when it changed. */
void dp_mon_publish_verdict(dp_monitor_t *m, size_t i,
                            const dp_health_verdict_t *vp, uint64_t round,
                            uint64_t wall_ns, uint64_t interval_ns,
                            int confirm) {
  const dp_health_verdict_t v = *vp;
  uint64_t vt =
      m->live ? dp_mon_not_before(&m->live->t[i].verdict_ns, wall_ns) : wall_ns;
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
    dp_mon_notice(m, severity_of(v.level), m->target_names[i], "health",
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
                   dp_mon_confirm_delay_ns(m->targets[i].interval_ns));
}

uint64_t dp_mon_confirm_delay_ns(uint64_t interval_ns) {
  uint64_t d = interval_ns / 12;
  return d < DP_NS_PER_S        ? DP_NS_PER_S
         : d > 10 * DP_NS_PER_S ? 10 * DP_NS_PER_S
                                : d;
}

int dp_mon_feed(dp_monitor_t *m, size_t i, const dp_monitor_obs_t *o,
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
    m->live->t[i].last_round_ns = dp_mon_now(m);
  if (v.relearned != NULL) { /* the restored baselines' probation */
    LOG_PLAIN(m, LOG_WARNING, "target \"%s\": %s.", m->target_names[i],
              v.relearned);
    atomic_store(&m->save_due, 1); /* the file loses them too */
  }
  dp_mon_publish_verdict(m, i, &v, round, wall_ns, interval_ns, o->confirm);
  stall_cleared(m, i, &v, wall_ns);
  confirm_if_suspect(m, i, &v, o->confirm);
  if (out)
    *out = v;
  return 1;
}
