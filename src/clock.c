/* clock.c - see clock.h. */
#include "clock.h"

uint64_t dp_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * DP_NS_PER_S + (uint64_t)ts.tv_nsec;
}

void dp_ns_to_timespec(uint64_t ns, struct timespec *ts) {
  ts->tv_sec = (time_t)(ns / DP_NS_PER_S);
  ts->tv_nsec = (long)(ns % DP_NS_PER_S);
}
