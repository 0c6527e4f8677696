/* monitor_emit.c - the monitor's way out: log lines, values of the metric
 * table, notices through the sink; its clock; a series' time that never
 * goes back. See monitor_emit.h. */
#include "monitor_emit.h"

#include "clock.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A log line; ev: the scheduler event it is about, or NULL. */
void dp_mon_log(const dp_monitor_t *m, int level, dp_monitor_log_kind_t kind,
                const dp_sched_event_t *ev, const char *fmt, ...) {
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

/* A series of the metric table (metrics.h): its type from there, its type
 * instance the table's fixed one or ti (a probe, a rule, a disk). */
void dp_mon_value(const dp_monitor_t *m, dp_metric_id_t id,
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

void dp_mon_gauge(const dp_monitor_t *m, dp_metric_id_t id,
                  const char *instance, const char *ti, double g,
                  uint64_t time_ns, uint64_t interval_ns) {
  dp_mon_value(m, id, instance, ti, &g, 1, time_ns, interval_ns);
}

void dp_mon_notice(const dp_monitor_t *m, dp_monitor_severity_t sev,
                   const char *instance, const char *type,
                   const char *type_instance, const char *message,
                   uint64_t time_ns) {
  /* a health or stall notice is kept in the state file at the next read
   * (the monitor itself is not const: its callers' view is) */
  if (strcmp(type, "health") == 0 || strcmp(type, "stalled") == 0)
    atomic_store(&((dp_monitor_t *)m)->save_due, 1);
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

uint64_t dp_mon_now(const dp_monitor_t *m) {
  return m->now_ns ? m->now_ns(m->clock_arg) : dp_now_ns();
}

/* A value not newer than its series' last is refused downstream
 * (collectd's cache: "value too old"; an RRD: by less than a second): a
 * round that finished just before a read re-sent its not-probing verdict,
 * or a round right after a reopen, goes out a second after the last, not
 * before it. *last: the series' last time (0: none), updated. */
uint64_t dp_mon_not_before(uint64_t *last, uint64_t t) {
  if (*last != 0 && t < *last + DP_NS_PER_S)
    t = *last + DP_NS_PER_S;
  *last = t;
  return t;
}
