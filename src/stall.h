/*
 * stall.h - a stall's whole life as two small state machines, free of
 * threads, clocks and I/O: the callers pass what happened and the time,
 * and do what the answer says.
 *
 * A stall: a probe's I/O (or the check after a round) still outstanding a
 * Timeout after it was issued. The disk is then *fenced* -- no new probe
 * on it, only polls of the outstanding I/O -- until that I/O drains.
 *
 * The fence (dp_stall_fence_t, one per worker, i.e. per physical disk;
 * the scheduler holds it):
 *
 *   inputs                      outputs
 *   dp_stall_begin   a probe    fence; report now, or hold (a Timeout
 *                    stalled    found too short before: the first poll
 *                               tells a brief stall from a hung disk)
 *   dp_stall_poll    a poll     still fenced, or unfence; a held stall
 *                    answered   reported after all, or brief (its round
 *                               goes out, its stalled probe unmeasured,
 *                               nothing said); a reported stall ended;
 *                               a Timeout too short (drained at the first
 *                               poll and queueing explains it)
 *
 * The pairing (dp_stall_pair_t, one per target; the monitor holds it):
 * one stall is one FAILURE "stalled" however many rounds stall, and its
 * OKAY comes with the first round after the drain that ran without a
 * stall, not at the drain itself (a disk that drains and stalls again
 * pages once).
 *
 *   dp_stall_pair_began    a stall reported -> FAILURE due (the first)
 *   dp_stall_pair_drained  its I/O drained  -> nothing due yet
 *   dp_stall_pair_round    a judged round   -> OKAY due (clean, drained)
 *
 * Units: nanoseconds on the caller's monotonic clock; seconds (double)
 * where the health rules speak seconds. Nothing allocates; nothing fails.
 * Not thread-safe: the caller serialises calls on one object.
 */
#ifndef DP_STALL_H
#define DP_STALL_H

#include "vocab.h"

#include <stddef.h>
#include <stdint.h>

/* ---- the fence (per disk) ----------------------------------------------- */

typedef enum {
  DP_STALL_NONE = 0, /* not fenced */
  DP_STALL_HELD,     /* fenced, not said: waiting for the first poll */
  DP_STALL_REPORTED  /* fenced and said */
} dp_stall_phase_t;

typedef struct {
  dp_stall_phase_t phase;
  size_t target, probe; /* what stalled (valid while fenced) */
  uint64_t since_ns;    /* when the stalled I/O was issued */
  unsigned polls;       /* polls since the stall began */
} dp_stall_fence_t;

/* What dp_stall_begin asks of the caller. */
typedef enum {
  DP_STALL_REPORT, /* say the stall now */
  DP_STALL_HOLD    /* say nothing; hold the round until the first poll */
} dp_stall_begin_t;

/*
 * Probe `probe` of `target` stalled: its I/O was found late at seen_ns,
 * issued at least timeout_ns before. hold: a Timeout was found too short
 * for this target before (dp_stall_poll's timeout_short), so the stall is
 * held until the first poll. Fences the disk.
 */
dp_stall_begin_t dp_stall_begin(dp_stall_fence_t *f, size_t target,
                                size_t probe, uint64_t seen_ns,
                                uint64_t timeout_ns, int hold);

/* What a poll means. */
typedef struct {
  int fenced;        /* still fenced: poll again */
  int reported_now;  /* a held stall is a stall after all: say it now */
  int brief;         /* a held stall drained at its first poll: queue its
                        round as not stalled, the stalled probe unmeasured;
                        nothing is said */
  int ended;         /* a reported stall drained: say so */
  int timeout_short; /* drained at the first poll, and the queue explains
                        the wait (queueing below): a Timeout too short, not
                        a hung disk -- say so once, hold later stalls */
  uint64_t stall_ns; /* ended: how long it lasted */
} dp_stall_poll_t;

/*
 * A poll of the stalled I/O answered at now_ns with `left` I/Os still
 * outstanding (> 0), none (0), or a failed AIO context (< 0: the I/O
 * stays fenced). queueing: dp_stall_queueing_explains for the stalled
 * probe (ignored unless it drained at the first poll of a reported stall).
 */
dp_stall_poll_t dp_stall_poll(dp_stall_fence_t *f, int left, uint64_t now_ns,
                              int queueing);

/* Whether target i is stalled as the world sees it (fenced and said), and
 * for how long at now_ns (0 when not). */
int dp_stall_reported(const dp_stall_fence_t *f, size_t target);
uint64_t dp_stall_age_ns(const dp_stall_fence_t *f, size_t target,
                         uint64_t now_ns);

/*
 * Whether a stall of a probe at queue_depth is explained by its own queue
 * rather than a hung disk: depth > 1, the target's last queue-depth-1 p50
 * (shallow_p50_s, NaN: not known) well under the Timeout, and depth x that
 * p50 at least half the Timeout (the deepest read waits behind the others).
 */
int dp_stall_queueing_explains(unsigned queue_depth, double shallow_p50_s,
                               double timeout_s);

/* ---- the notices (per target) ------------------------------------------- */

#define DP_STALL_WORDS_MAX 256

typedef struct {
  int failed;  /* its FAILURE said, its OKAY not yet */
  int drained; /* the stalled I/O drained since */
  char probe[DP_NAME_MAX];
  char words[DP_STALL_WORDS_MAX]; /* the drain's, for the OKAY */
} dp_stall_pair_t;

/* A stall of `probe` was reported: 1 when its FAILURE is due (the first
 * since the last OKAY), 0 when one is out already. */
int dp_stall_pair_began(dp_stall_pair_t *p, const char *probe);

/* Its I/O drained; words: how (the OKAY quotes them). */
void dp_stall_pair_drained(dp_stall_pair_t *p, const char *words);

/*
 * A round of the target was judged; stall_clear: the health verdict's
 * stall rule is OK. 1 when the OKAY is due now: then probe (the stalled
 * probe's name, DP_NAME_MAX) and words (the drain's words and that the
 * round ran clean) are filled, and the pair is reset.
 */
int dp_stall_pair_round(dp_stall_pair_t *p, int stall_clear, char *probe,
                        char *words, size_t len);

#endif /* DP_STALL_H */
