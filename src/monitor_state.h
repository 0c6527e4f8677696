/*
 * monitor_state.h - the monitor's health state file (monitor_state.c):
 * StateDir checked once, the baselines read at start (bounded), saved by a
 * saver thread every DP_MONITOR_SAVE_NS and at the stop. Part of the
 * monitor, for monitor.c.
 */
#ifndef DP_MONITOR_STATE_H
#define DP_MONITOR_STATE_H

#include "monitor_emit.h"

/* dp_monitor_state_dir_check's. */
int dp_mon_state_dir_check(const char *dir, char *err, size_t errlen);
void dp_mon_state_dir_init(dp_monitor_t *m, const dp_monitor_conf_t *c);
void dp_mon_state_load(dp_monitor_t *m);
/* Each read: says a save that finished since and failed. */
void dp_mon_state_poll(dp_monitor_t *m);
/* Formats the state and hands it to the saver; last: the stop's. A save
 * still running skips this one (said unless quiet): -EBUSY; else 0. */
int dp_mon_state_save(dp_monitor_t *m, int last, int quiet);
/* Waits for the saves in flight, DP_MONITOR_SAVE_WAIT_NS at most. */
void dp_mon_state_close(dp_monitor_t *m);

#endif /* DP_MONITOR_STATE_H */
