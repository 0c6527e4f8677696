/* monitor_events.c - see monitor_events.h. */
#include "monitor_events.h"

#include "clock.h"
#include "events.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

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

static void event_notice(const dp_monitor_t *m, const dp_sched_event_t *ev) {
  char msg[256];
  int failure = dp_event_notice(ev, m->host, msg, sizeof(msg));
  if (failure < 0 || !stall_notice_due(m, ev, msg))
    return;
  dp_mon_notice(m, failure ? DP_MONITOR_FAILURE : DP_MONITOR_OKAY,
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

void dp_mon_on_event(const dp_sched_event_t *ev, void *arg) {
  const dp_monitor_t *m = arg;
  live_event(m, ev);
  if (ev->kind == DP_SCHED_OPENED && ev->recovered)
    dp_mon_log(m, LOG_INFO, DP_MONITOR_LOG_RELEASE, ev,
               "target \"%s\" (%s) is probing again.", ev->target_name,
               ev->path);
  char line[1024];
  int level = dp_event_log_line(ev, line, sizeof(line));
  if (level >= 0)
    dp_mon_log(m, level, event_log_kind(ev->kind), ev, "%s", line);
  else if (ev->kind == DP_SCHED_OPENED) /* a front-end learns the path */
    dp_mon_log(m, LOG_DEBUG, DP_MONITOR_LOG_PLAIN, ev,
               "target \"%s\": opened %s.", ev->target_name, ev->path);
  event_notice(m, ev);
}
