/*
 * window.h - which stretch of a probe's completions gives the disk's
 * sustained rate (layer 0: plain numbers, no clock, no I/O).
 *
 * A probe keeps its queue full and timestamps every completion. It hands
 * over t[0..n), nanoseconds, nondecreasing: t[0] the end of its warm-up
 * (the completion of the last I/O of the first batch) and t[1..n) its
 * counted completions. Those at index >= drain_from completed after the
 * budget was spent: nothing replaced them, the queue was no longer full.
 * The plain window runs from t[0] to t[n-1]: n - 1 completions.
 *
 * A rate-capped volume throttled by the kernel (blk-throttle: cgroup v1
 * blkio.throttle.*_device, cgroup v2 io.max) does not complete I/O evenly.
 * It lets a slice's worth through at once (100 ms of the cap: 25 I/Os at
 * 250 IOPS, 5 MiB at 50 MiB/s) and holds the rest until the next slice:
 * completions come in steps a slice apart. The first step is early (its
 * I/Os are let through at once, not when they fall due) and larger when
 * the slice still held credit from earlier I/O (a previous probe that used
 * the IOPS cap and left the bytes unused); the last step, after the budget
 * is spent, holds only what was in flight. A plain window of a quarter of
 * a second spans two or three steps, so one early or partial step moves it
 * by a third: 0.94 to 1.56 of the cap, depending on what ran before.
 *
 * Stepped completions are recognised by their gaps: a gap is long when it
 * is more than LONG_GAP (3) times the window's mean gap and 10 ms at
 * least, and the completions are stepped when the long gaps hold at least
 * STEPPED_SHARE (half) of the window's time. (A disk that completes I/O at
 * random, exponential gaps, spends about a fifth of its time in gaps over
 * three times the mean; a throttle step of k I/Os leaves a gap of about k
 * times the mean, a slice less the step, and the gaps hold nearly all the
 * time. The 10 ms keep out a fast disk's batches: a deep probe reaps its
 * completions a batch at a time, one timestamp each, and the batches are
 * microseconds apart.) A step starts at the
 * completion after a long gap. The stepped window then runs from the start
 * of the first step that begins after the warm-up (so the early first step
 * and any credit are left out) to the start of the last step that begins
 * at or before drain_from (so the partial last step is left out: its start
 * is still the throttle's, as its I/Os waited in the throttle's queue): a
 * whole number of steps, the cap exactly, whatever ran before. It is used
 * when it holds at least one whole step and at least MIN_SHARE (40 %) of
 * the plain window's time; else the plain window is.
 *
 * A probe too short for a whole step (under two of a throttle's slices:
 * 0.05 s where DutyCycle shortens the default probes at a 10 s
 * ProbeInterval) still shows the steps (`throttled`), but its plain
 * window holds the first step with its credit: 1.8 times a 50 MiB/s cap.
 * The scheduler then gives the target's probes a quarter of a second.
 *
 * What no window of a short probe can see: a token bucket that refills
 * over minutes (a cloud volume's burst balance) -- the probe reads the
 * rate of the moment, the burst rate while the balance lasts and the
 * baseline once it is spent -- and a throttle smoother than the
 * completions (each I/O paced alone), where credit at the start is not
 * told from speed.
 */
#ifndef DP_WINDOW_H
#define DP_WINDOW_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  /* The window: last - first completions over t[last] - t[first]. */
  size_t first, last;
  int throttled; /* 1: the completions came in steps (long gaps hold half
                    the time or more), whole ones or not */
  int stepped;   /* 1: between step starts; 0: the plain window */
  size_t steps;  /* whole steps in a stepped window, else 0 */
} dp_window_t;

/* Picks the window of t[0..n) (above) into *w. n < 2: first = last = 0.
 * drain_from is clamped to n. Allocates nothing; O(n). */
void dp_window_pick(const uint64_t *t, size_t n, size_t drain_from,
                    dp_window_t *w);

/* The I/Os the disk let through at the start beyond the window's rate:
 * before_first completions before t[w->first] (the warm-up's and the
 * counted ones before the window) since the probe started at start_ns,
 * less what rate (completions per ns) allows in that time. 0 when the
 * window is plain or the start was no faster than the rate. */
double dp_window_burst(const uint64_t *t, const dp_window_t *w,
                       uint64_t start_ns, uint64_t before_first, double rate);

#endif /* DP_WINDOW_H */
