/*
 * events.h - the words for the scheduler's events: the one log line each
 * event deserves, and the notification text for those that change a
 * target's health (I/O errors, a stall and its end). The collectd plugin
 * logs and notifies them, `diskprobe watch` prints them: one text for both.
 */
#ifndef DP_EVENTS_H
#define DP_EVENTS_H

#include "scheduler.h"

#include <stddef.h>

/*
 * Writes the event's log line into buf (no program prefix, e.g.
 * `target "db" (/srv/db/diskprobe.probe): device vda stalled: ...`) and
 * returns its syslog level (LOG_ERR, LOG_NOTICE, LOG_INFO, ...), or -1
 * for an event that logs nothing (OPENED of a file laid out earlier).
 */
int dp_event_log_line(const dp_sched_event_t *ev, char *buf, size_t len);

/* For the events that are notifications: writes the message ("diskprobe:
 * host H, target T, device D: I/O stalled for more than 2.0 s (8
 * outstanding)") and returns 1 for a failure, 0 for a recovery (OKAY);
 * -1 for other events. */
int dp_event_notice(const dp_sched_event_t *ev, const char *host, char *buf,
                    size_t len);

#endif /* DP_EVENTS_H */
