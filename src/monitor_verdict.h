/*
 * monitor_verdict.h - the verdict of a round as the monitor publishes it
 * (monitor_verdict.c): a probe's figures into the health rules, the
 * verdict's values, the verdict sink, its notice when the level changed
 * (with a busy disk's words), a stall's OKAY at the first clean round, and
 * fast confirmation. Part of the monitor, for monitor.c.
 */
#ifndef DP_MONITOR_VERDICT_H
#define DP_MONITOR_VERDICT_H

#include "monitor_emit.h"

/* dp_monitor_obs's, dp_monitor_confirm_delay_ns's, dp_monitor_feed's. */
dp_monitor_obs_t dp_mon_obs(size_t probe, uint64_t ops, int stalled,
                            double iops, double p50_s, double mean_s,
                            uint64_t errors, int last_in_round);
uint64_t dp_mon_confirm_delay_ns(uint64_t interval_ns);
int dp_mon_feed(dp_monitor_t *m, size_t i, const dp_monitor_obs_t *o,
                uint64_t round, uint64_t wall_ns, uint64_t interval_ns,
                dp_health_verdict_t *out);

/* A verdict out: its values, the verdict sink, a notice when it changed.
 * round 0: not a round's (a target that is not probing). */
void dp_mon_publish_verdict(dp_monitor_t *m, size_t i,
                            const dp_health_verdict_t *v, uint64_t round,
                            uint64_t wall_ns, uint64_t interval_ns,
                            int confirm);

#endif /* DP_MONITOR_VERDICT_H */
