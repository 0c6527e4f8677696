/*
 * monitor_events.h - the scheduler's events as the monitor passes them on
 * (monitor_events.c): log lines with how to rate-limit them, the notices
 * (I/O errors; a stall's FAILURE, once per stall, stall.h), whether each
 * target's open is failing. Runs on the workers' threads. Part of the
 * monitor, for monitor.c.
 */
#ifndef DP_MONITOR_EVENTS_H
#define DP_MONITOR_EVENTS_H

#include "monitor_emit.h"

/* The scheduler's event callback (scheduler.h's dp_sched_conf_t.on_event);
 * arg: the monitor. */
void dp_mon_on_event(const dp_sched_event_t *ev, void *arg);

#endif /* DP_MONITOR_EVENTS_H */
