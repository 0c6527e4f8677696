/*
 * clock.h - the one monotonic clock of the library, and the conversions
 * every caller needs. Times are uint64_t nanoseconds of CLOCK_MONOTONIC
 * (never wall time: an NTP step must not stretch or shrink an interval).
 */
#ifndef DP_CLOCK_H
#define DP_CLOCK_H

#include <stdint.h>
#include <time.h>

#define DP_NS_PER_S UINT64_C(1000000000)
#define DP_NS_PER_MS UINT64_C(1000000)

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t dp_now_ns(void);

/* A duration or an absolute CLOCK_MONOTONIC time as a timespec. */
void dp_ns_to_timespec(uint64_t ns, struct timespec *ts);

#endif /* DP_CLOCK_H */
