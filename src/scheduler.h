/*
 * scheduler.h - the probe scheduler: who probes which target when, shared
 * by the collectd plugin and `diskprobe watch`. Free of collectd. (Not
 * "sched.h": with -Isrc that name would shadow the system's <sched.h>,
 * which <pthread.h> includes.)
 *
 * Workers
 *   Targets are grouped by the physical disk that holds their data,
 *   resolved through /sys: a partition to its disk, a device-mapper/LVM/MD
 *   device through its `slaves/` to the disk(s) below (dp_blockdev_resolve_at).
 *   One worker per disk runs its targets' rounds one after another, so
 *   probes on one disk never overlap and DutyCycle holds for the disk;
 *   different disks probe in parallel. A target whose disk cannot be
 *   resolved yet (a Device that does not exist at start) waits in the
 *   "unresolved" worker, which retries each round and moves it to the
 *   worker of its disk once it exists (DP_SCHED_REGROUPED).
 *
 * A round
 *   Opens the target if needed (laying out its probe file the first time;
 *   never on another filesystem than the one the Path was first found on:
 *   an unmounted mount point), then runs every probe of the target once, in
 *   order, and queues one sample per probe. A probe file is checked before
 *   and after each round (dp_target_verify: inode, size, blocks, header,
 *   extent map): changed before, it is laid out again first (OPEN_FAILED
 *   says what changed); changed during the round, the round's figures are
 *   discarded (DISCARDED) and it is laid out again next round. A round
 *   that nothing survived (every I/O failed, or the engine refused) closes
 *   the target so the next round reopens it (a replaced device).
 *
 * Timing
 *   Each target is due every interval -- the ProbeInterval the user set,
 *   never longer: a verdict is not delayed and an RRD step stays what it
 *   was created with. Its first round starts at a random point of its
 *   first interval when splay is on. The cadence is kept (next = previous
 *   due + interval); a round that overran starts the next at once, never a
 *   burst of catch-up rounds.
 * DutyCycle
 *   Bounds the disk's busy time by shortening the probes, not by
 *   stretching the interval. Each of the `sharing` targets on one disk may
 *   keep it busy interval x duty_cycle_percent / 100 / sharing per round
 *   (dp_sched_allowed_ns). Each probe runs for `scale` of its Duration
 *   (at least DP_SCHED_PROBE_MIN_NS, never more than its Duration), where
 *   scale = (allowed - overhead) / the Durations added up (dp_sched_scale):
 *   at start the overhead is taken as 0; after each round it is what the
 *   round spent beyond its probes' Durations (warm-up, drain, slow I/O),
 *   so a disk that slows down gets shorter probes at once. The first time
 *   a round's busy time exceeds the budget and the probes shrink for it,
 *   DP_SCHED_SHRUNK says so. On a disk so slow that even the shortest
 *   probes exceed the budget, the interval still holds (the budget is
 *   exceeded, said by SHRUNK with scale 0): the verdict comes first.
 *   A rate-capped volume that completes I/O in a throttle's steps gets
 *   probes of at least DP_SCHED_STEPPED_NS (or their Duration if
 *   shorter): a shorter one cannot hold a whole step and reads the cap
 *   with its credit (window.h); there the time is the throttle's waiting,
 *   not the disk's work. A round that shows steps (dp_result_t.throttled)
 *   runs the next round's probes that long as a trial; whole steps
 *   in it (stepped) set the floor for every probe while they last; none,
 *   and no trial for 8 rounds, then 16, ... 256.
 *
 * Stalls
 *   A probe whose I/O is older than the target's timeout ends stalled. The
 *   worker then runs no probe on its disk until every outstanding I/O has
 *   completed (the engine keeps their buffers alive), polling for them
 *   every DP_SCHED_REAP_NS; DP_SCHED_STALL_BEGAN / _ENDED say so. The
 *   interval is paced for a stalled round too.
 *   A brief stall -- every outstanding I/O completed at the first poll,
 *   within DP_SCHED_REAP_NS of the stall -- may be a Timeout too short for
 *   the probe's queue depth on this disk (Timeout 10 ms at QueueDepth
 *   256), not a hung disk: when the queue explains it
 *   (dp_stall_queueing_explains, stall.h: depth > 1, and the target's last
 *   queue-depth-1 probe answered in under half the Timeout but its p50
 *   times the depth reaches half the Timeout). Then the first one is
 *   reported as a stall and, once, DP_SCHED_TIMEOUT_SHORT. At depth 1, or
 *   without that evidence, every I/O past the Timeout is a stall, every
 *   round: a disk just slower than Timeout never turns green. From then on a
 * stall of that target is held back until the first poll: brief, it is not a
 * stall (no events, `stalled` stays 0, the round's samples are queued with
 * r.stalled cleared; its late I/Os still count in err_timeout); still
 * outstanding, STALL_BEGAN is reported then (at most DP_SCHED_REAP_NS late) and
 * the stall runs as above. So a Timeout that is simply too short is said once
 * instead of flapping FAILURE/OKAY every round.
 *
 * Threads and ownership
 *   dp_sched_start() runs one thread per worker. Workers block every
 *   asynchronous signal (all but the synchronous SIGSEGV, SIGBUS, SIGFPE,
 *   SIGILL, SIGTRAP and SIGSYS; the caller's own mask is restored), so a
 *   signal sent to the process -- collectd's SIGTERM, SIGINT, SIGHUP or
 *   SIGUSR1 -- runs its handler on the host's threads, never on a worker
 *   waiting in io_getevents (where the handler's writes would race with
 *   the host's main loop). Events are delivered from the worker threads,
 *   without the scheduler's lock held, so the callback must be thread-safe
 *   and must not call back into the scheduler except
 *   dp_sched_target_state(). Samples are queued (queue_len per probe; the
 *   oldest is dropped when a consumer falls behind) and taken by
 *   dp_sched_take() from any thread. Without dp_sched_start(), tests drive
 *   the same code deterministically with dp_sched_step() and an injected
 *   clock.
 *   dp_sched_stop() sets the stop flag (running probes end after reaping
 *   what is in flight), wakes every worker and joins each for at most its
 *   largest timeout plus join_grace_ns. A worker still stuck (a hung disk)
 *   is left behind and the scheduler's memory is then deliberately not
 *   freed by dp_sched_free(): the kernel may still write into its buffers.
 *   With a prober program (conf.prober) a worker waits for its prober at
 *   most DP_PROBER_GRACE_NS after the stop, and dp_sched_free() leaves a
 *   prober whose I/O is still in the kernel to finish on its own.
 *
 * Errors: functions return 0 or a negative errno; nothing here logs.
 */
#ifndef DP_SCHED_H
#define DP_SCHED_H

#include "conf.h"
#include "engine.h"
#include "prober.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define DP_SCHED_REAP_NS (1000 * UINT64_C(1000000)) /* stall poll, 1 s */
#define DP_SCHED_QUEUE_DEFAULT 4

typedef struct dp_sched dp_sched_t;

/* The disk of the worker that holds targets whose disk is not known yet. */
#define DP_SCHED_DISK_UNRESOLVED "?"

typedef enum {
  DP_SCHED_WORKER_STARTED, /* disk, ntargets: a worker thread runs */
  DP_SCHED_OPENED,         /* target opened; laid_out, recovered */
  DP_SCHED_OPEN_FAILED,    /* target cannot be opened: msg, err, repeated */
  DP_SCHED_PROBE_FAILED,   /* the engine refused a probe (probe, msg, err),
                              or its AIO context failed (probe "") */
  DP_SCHED_IO_ERRORS,      /* a probe saw I/O errors or short transfers */
  DP_SCHED_STALL_BEGAN,    /* outstanding, timeout_ns */
  DP_SCHED_STALL_ENDED,    /* stall_ns */
  DP_SCHED_SHRUNK,         /* once: a round kept the disk busy busy_ns,
                              over the budget interval_ns (allowed) of
                              configured_ns (ProbeInterval); the probes
                              now run for `scale` of their Duration */
  DP_SCHED_REGROUPED,      /* target moved to the worker of disk */
  DP_SCHED_WORKER_STUCK,   /* at stop: worker of disk left behind */
  DP_SCHED_PROBE_SKIPPED,  /* a deep probe not run on a very slow disk:
                              probe, busy_ns = the p50 of one I/O of its
                              kind (reads for a read probe) seen this
                              round, by_probe = the probe that measured
                              it, timeout_ns = the probe's budget */
  DP_SCHED_TIMEOUT_SHORT,  /* once per target: a brief stall (see Stalls):
                              probe, outstanding = its QueueDepth,
                              timeout_ns, stall_ns = how old its oldest I/O
                              got */
  DP_SCHED_NO_SPACE,       /* a probe's writes were refused for want of
                              space (result->err_nospace): a full
                              filesystem, not a disk error */
  DP_SCHED_DISCARDED,      /* the probe file changed under the round
                              (msg: what changed; dp_target_verify): its
                              samples are queued unmeasured (no I/O, NaN
                              latencies, like a skipped probe) and the
                              file is laid out again next round */
} dp_sched_event_kind_t;

typedef struct {
  dp_sched_event_kind_t kind;
  size_t target;             /* index into the configured targets */
  const char *target_name;   /* "" for worker events */
  const char *path;          /* the target's probe file or device node */
  const char *device;        /* kernel name of the device, or "unknown" */
  const char *disk;          /* the worker's disk ("vda", "253:4", "?") */
  const char *probe_name;    /* probe events, else NULL */
  const char *by_probe;      /* PROBE_SKIPPED: whose latency judged it */
  const dp_result_t *result; /* IO_ERRORS, STALL_BEGAN, NO_SPACE,
                                PROBE_SKIPPED; hist may be NULL */
  const char *msg;           /* OPEN_FAILED, PROBE_FAILED: the cause */
  int err;                   /* negative errno, or 0 */
  unsigned repeated;         /* OPEN_FAILED: consecutive failures, 1.. */
  int laid_out;              /* OPENED: the probe file was (re)laid out */
  int no_extent_map;         /* OPENED, once per target: no FIEMAP here,
                                the per-round check reads the header only */
  const char *members;       /* OPENED, once per target: the devices of a
                                multi-device btrfs (device is the first,
                                the one probed), else NULL */
  int recovered;             /* OPENED: after OPEN_FAILED/PROBE_FAILED */
  uint64_t size_bytes;       /* OPENED */
  uint64_t resumed_bytes;    /* OPENED: an interrupted layout resumed here */
  unsigned outstanding;      /* STALL_BEGAN */
  size_t ntargets;           /* WORKER_STARTED */
  uint64_t timeout_ns, stall_ns, busy_ns, configured_ns, interval_ns;
  double duty_percent; /* SHRUNK: the DutyCycle whose budget it is */
  double scale;        /* SHRUNK: of each probe's Duration from now on */
} dp_sched_event_t;

typedef void (*dp_sched_event_fn)(const dp_sched_event_t *ev, void *arg);

typedef struct {
  double duty_cycle_percent; /* DutyCycle, 0 < x <= 100 */
  int splay;                 /* 1: random first round in the interval */
  uint64_t seed;             /* splay randomness; 0: from the clock */
  const char *sysroot;       /* DP_SYSROOT_DEFAULT (or NULL); a fixture tree */
  unsigned queue_len;        /* samples kept per probe; 0: default 4 */
  uint64_t join_grace_ns;    /* stop: wait max timeout + this; 0: 5 s */
  /* The clock for due times and stall durations; NULL: dp_now_ns. Threads
   * sleep on CLOCK_MONOTONIC, so an injected clock is for dp_sched_step. */
  uint64_t (*now_ns)(void *arg);
  void *clock_arg;
  dp_sched_event_fn on_event; /* may be NULL */
  void *event_arg;
  /* Starts a worker thread; NULL: pthread_create. The collectd plugin
   * passes plugin_thread_create, so the workers carry the plugin's context
   * (its name and interval for log lines and complaint backoff). Returns
   * 0 or an errno. */
  int (*thread_create)(pthread_t *thread, void *(*start)(void *), void *arg,
                       const char *name);
  /* Where each target's disk I/O runs (prober.h): the prober program's
   * path, one prober process per open target, so that I/O a hung disk
   * holds never keeps the host's process from exiting; NULL: in the
   * worker threads (the test suites' fake AIO needs that). */
  const char *prober;
} dp_sched_conf_t;

/* Defaults: DutyCycle 2 %, splay on, /sys, queue 4, grace 5 s. */
void dp_sched_conf_init(dp_sched_conf_t *c);

/* One probe's result in one round, as queued for the consumer. */
typedef struct dp_sched_sample {
  size_t target, probe; /* indexes into the configured targets / probes */
  const char *target_name, *probe_name; /* valid until dp_sched_free */
  dp_result_t r;                        /* r.hist is NULL (engine-owned) */
  uint64_t done_ns;     /* when the probe finished (scheduler clock) */
  uint64_t interval_ns; /* until the target's next round */
  uint64_t round;       /* 1 for the target's first round */
  int last_in_round;    /* 1 for the round's last sample */
  int confirm;          /* a confirmation round's (dp_sched_confirm) */
  uint64_t err_io_total, err_short_total, err_timeout_total; /* since start */
} dp_sched_sample_t;

/* What a consumer shows between rounds. */
typedef struct dp_sched_target_state {
  int opened;           /* 1 while the target is open */
  int stalled;          /* 1 while this target's I/O is stuck */
  uint64_t stall_ns;    /* how long so far */
  uint64_t interval_ns; /* ProbeInterval */
  double scale;         /* of each probe's Duration (DutyCycle) */
  uint64_t asked_ns;    /* the probes' Durations added up */
  uint64_t allowed_ns;  /* DutyCycle's budget per round on its disk */
  unsigned sharing;     /* targets on its disk */
  const char *disk;     /* its worker's disk */
  char device[64];      /* the device that holds its data, or "unknown" */
} dp_sched_target_state_t;

/*
 * Builds a scheduler for n targets (configs copied; each already passed
 * dp_target_conf_finish) and groups them by disk. Nothing is opened yet.
 * -EINVAL for n == 0 or a bad conf, -ENOMEM.
 */
int dp_sched_new(dp_sched_t **out, const dp_sched_conf_t *c,
                 const dp_target_conf_t *targets, size_t n);

/* Workers and what they hold (the unresolved worker's disk is "?"). */
size_t dp_sched_nworkers(const dp_sched_t *s);
const char *dp_sched_worker_disk(const dp_sched_t *s, size_t w);
size_t dp_sched_worker_ntargets(const dp_sched_t *s, size_t w);
/* The worker that runs target i. */
size_t dp_sched_target_worker(const dp_sched_t *s, size_t i);
/* Completions of worker w's probes, counted live (probe share). */
const dp_io_counter_t *dp_sched_worker_counter(const dp_sched_t *s, size_t w);
/* The worker of the disk with this kernel name; -ENOENT. */
int dp_sched_find_disk(const dp_sched_t *s, const char *disk);
/* The most samples dp_sched_take can return at once. */
size_t dp_sched_max_samples(const dp_sched_t *s);

/* Starts one thread per worker (WORKER_STARTED each). -errno; on failure
 * the workers already started keep running until dp_sched_stop. */
int dp_sched_start(dp_sched_t *s);

/*
 * Without threads: does what is due on worker w at the clock's now -- one
 * round of the most overdue target, or one poll of a stall (waiting at
 * most wait_ns for completions) -- and returns the time (scheduler clock)
 * at which something is next due on w (now, if more is due at once).
 */
uint64_t dp_sched_step(dp_sched_t *s, size_t w, uint64_t wait_ns);

/* Copies up to max queued samples into out, oldest first, and removes
 * them. Returns how many. Any thread. */
size_t dp_sched_take(dp_sched_t *s, dp_sched_sample_t *out, size_t max);

/* Blocks until a sample is queued, dp_sched_stop is called, or
 * CLOCK_MONOTONIC reaches deadline_ns. 1 if samples are queued, else 0. */
int dp_sched_wait(dp_sched_t *s, uint64_t deadline_ns);

/* Target i's state now. Any thread. */
void dp_sched_target_state(dp_sched_t *s, size_t i,
                           dp_sched_target_state_t *out);

/*
 * Fast confirmation: asks for a confirmation round of target i, due
 * delay_ns from now (ignored when its next round comes first or one is
 * pending). A confirmation round runs the target's first probe alone, for
 * its Duration at DutyCycle's scale but at most DP_SCHED_CONFIRM_NS, and
 * queues its one sample with confirm = 1 and the number of the round it
 * follows; it leaves the cadence and DutyCycle's scale alone. The monitor
 * asks for one after a round whose slowdown trips a rule, so that a rule
 * of k rounds needs k - 1 short confirmations, not k - 1 intervals.
 * 0, -EINVAL. Any thread.
 */
#define DP_SCHED_CONFIRM_NS (200 * UINT64_C(1000000)) /* 0.2 s */
int dp_sched_confirm(dp_sched_t *s, size_t i, uint64_t delay_ns);

/* Stops and joins the workers (see above). Returns how many were left
 * behind on a hung disk (0: all joined). Idempotent. */
int dp_sched_stop(dp_sched_t *s);

/* Frees everything after dp_sched_stop; if workers were left behind it
 * only closes nothing and frees nothing (their buffers may still be
 * written by the kernel). NULL is allowed. */
void dp_sched_free(dp_sched_t *s);

/*
 * DutyCycle's arithmetic (see DutyCycle above). allowed: the disk time one
 * of `sharing` targets may use per interval. scale: the share of its
 * probes' Durations (asked_ns added up) a round may run, given what the
 * last round spent beyond them (overhead_ns): 1 when they fit, 0 when the
 * overhead alone fills the budget (every probe at its floor). scaled: one
 * Duration at that scale, at least DP_SCHED_PROBE_MIN_NS, at most itself.
 */
#define DP_SCHED_PROBE_MIN_NS (20 * UINT64_C(1000000)) /* 20 ms */
#define DP_SCHED_STEPPED_NS (250 * UINT64_C(1000000))  /* 0.25 s */
uint64_t dp_sched_allowed_ns(uint64_t interval_ns, double duty_percent,
                             unsigned sharing);
double dp_sched_scale(uint64_t interval_ns, uint64_t asked_ns,
                      uint64_t overhead_ns, double duty_percent,
                      unsigned sharing);
uint64_t dp_sched_scaled_ns(uint64_t duration_ns, double scale);

/* Splay: the first due time of a target, now + a uniform offset in
 * [0, interval_ns), advancing *rng. */
uint64_t dp_sched_splay_ns(uint64_t now_ns, uint64_t interval_ns,
                           uint64_t *rng);

#endif /* DP_SCHED_H */
