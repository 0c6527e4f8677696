/*
 * engine.h - the probe engine: closed-loop libaio I/O on an O_DIRECT fd.
 *
 * One engine owns one kernel AIO context, QD iocbs and buffer space,
 * allocated once by dp_engine_open for the largest job it will run; running
 * a probe allocates nothing. Each slot has its own buffer (reads too: a
 * read buffer shared by concurrent reads fails the after-DMA checksum of
 * ZFS Direct I/O, btrfs, dm-verity, dm-integrity). Buffer pages become
 * resident as probes touch them -- queue_depth x block_size of the largest
 * job run -- and can be handed back with dp_engine_release_buffers. The
 * engine does not own the fd.
 *
 * A probe keeps exactly `queue_depth` I/Os in flight (closed loop): each
 * completion is timestamped (CLOCK_MONOTONIC) and immediately replaced by a
 * new I/O until the time or op budget is spent. The first `queue_depth`
 * completions are a warm-up and not counted. When the budget is spent no
 * new I/O is submitted; the ones in flight are reaped and counted. The
 * measured window runs from the last warm-up completion to the last
 * counted completion: both ends are the completion of the last I/O of a
 * batch submitted at full queue depth. With an op budget exactly max_ops
 * I/Os are counted (unless some fail).
 *
 * The rates: over that window, unless the completions came in a kernel
 * throttle's steps (blk-throttle, cgroup blkio or io.max: a slice's worth
 * at once, 100 ms apart). Then over whole steps only, leaving out the
 * early first step with any credit left by earlier I/O and the partial
 * last one (window.h): the cap within a few percent at a quarter of a
 * second, where the whole window read 0.94 to 1.56 of it depending on
 * what ran before. Latencies are of every counted I/O either way.
 *
 * Stalls: an I/O older than `timeout_ns` ends the probe with
 * result.stalled = 1. io_cancel does not work for disk I/O, so the kernel
 * may still write into the buffers of those I/Os: the engine keeps them and
 * refuses new probes (-EBUSY) until dp_engine_reap() has seen every one of
 * them complete. dp_engine_close() on an engine with I/O outstanding blocks
 * in io_destroy until the kernel finishes it (a kernel rule, not ours).
 *
 * A broken AIO context: when io_getevents fails with anything but -EINTR
 * (-EINVAL, -EFAULT, ...) while I/O is in flight, the engine can no longer
 * learn when the kernel is done with those buffers. dp_engine_run then ends
 * the probe at once, submitting nothing more, and returns that errno with
 * result.stalled = 1 and result.first_error set to it (unless an earlier
 * error was first); the rest of the result describes what ran before.
 * dp_engine_outstanding() still counts the unreaped I/O and the engine is
 * fenced exactly as after a stall: dp_engine_run and
 * dp_engine_release_buffers return -EBUSY, and dp_engine_reap returns the
 * errno for as long as the context stays broken. The way out is
 * dp_engine_close() and a new engine.
 *
 * io_submit: one iocb per call. -EINTR is retried at once; -EAGAIN and
 * -ENOMEM (the kernel short of AIO requests or memory) are retried after
 * the next completion while I/O is in flight, else 1 ms apart for about a
 * second before the probe gives up with that errno; any other error ends the
 * probe with it. Completions: io_event.res is read as a long (-errno: an
 * I/O error; fewer bytes than asked: a short transfer).
 *
 * Thread-safety: one engine is used by one thread at a time.
 * Errors: functions return 0 or a negative errno; nothing here logs.
 */
#ifndef DP_ENGINE_H
#define DP_ENGINE_H

#include "hist.h"
#include "vocab.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  dp_pattern_t pattern;
  uint32_t block_size;  /* bytes; a multiple of the engine's alignment */
  uint32_t queue_depth; /* 1..DP_QD_MAX */
  uint64_t duration_ns; /* time budget of the measured window; 0 = none */
  uint64_t max_ops;     /* op budget of the measured window; 0 = none */
  uint64_t timeout_ns;  /* an I/O older than this is a stall; 0 = 30 s */
  /* Where I/O may go: [region_offset, region_offset + region_bytes) of the
   * fd, both multiples of the alignment, region_bytes >= block_size. */
  uint64_t region_offset;
  uint64_t region_bytes;
  uint64_t seed; /* random offsets and write data; 0 = from the clock */
  /* If non-NULL and nonzero (set by another thread with atomic_store), the
   * probe stops submitting and returns after reaping what is in flight (or
   * after timeout_ns: a stall). Completions reaped after the stop is seen
   * are not counted and the measured window ends where it was seen (once
   * the budget is spent the drain runs, and counts, as usual). Already
   * set when dp_engine_run is called: nothing is submitted. Read with
   * acquire ordering at each completion and each wait (at most every 50 ms,
   * or timeout_ns / 4 if shorter). */
  const atomic_int *stop;
  /* If non-NULL, every completion (warm-up, drain and errors included) is
   * added here as it happens. */
  dp_io_counter_t *counter;
} dp_job_t;

typedef struct {
  dp_pattern_t pattern;
  uint32_t block_size, queue_depth;
  uint64_t ops;        /* completed, successful, full-size I/Os counted */
  uint64_t bytes;      /* ops * block_size */
  double elapsed_s;    /* the rate window (above) */
  uint64_t window_ops; /* the counted I/Os in it: ops, or fewer if stepped */
  double iops;         /* window_ops / elapsed_s */
  double bytes_per_s;  /* iops * block_size */
  int throttled;       /* 1: the completions came in a throttle's steps */
  int stepped;         /* 1: the rates are over whole steps (throttled too) */
  double burst_ops;    /* stepped: I/Os let through at the start beyond the
                          rate (credit from earlier I/O), else 0 */
  /* Latency of counted I/Os, seconds: submit to reap. */
  double lat_min_s, lat_mean_s, lat_p50_s, lat_p90_s, lat_p99_s, lat_p999_s,
      lat_max_s;
  double achieved_qd;   /* Little's law: iops * lat_mean_s */
  uint64_t err_io;      /* completions with a negative res (EIO, ...) but */
  uint64_t err_nospace; /* -ENOSPC or -EDQUOT, counted here: a write into a
                           full copy-on-write filesystem or thin volume
                           (an overwrite needs free space), not a disk's
                           error */
  uint64_t err_short;   /* completions that moved fewer bytes than asked */
  uint64_t err_timeout; /* I/Os found older than timeout_ns */
  int stalled;     /* 1: ended with I/O still outstanding, either older than
                      timeout_ns or unreapable (broken context; then
                      dp_engine_run returned the errno) */
  int first_error; /* first negative errno seen from the device, io_submit
                      or io_getevents, or 0 */
  double cpu_user_s, cpu_sys_s; /* this thread's CPU during the probe */
  double wall_s;                /* whole probe including warm-up and drain */
  dp_hist_t *hist; /* engine-owned latency histogram of the counted I/Os;
                      valid until the next run or close */
} dp_result_t;

typedef struct dp_engine dp_engine_t;

/*
 * Prepares an engine for I/O on fd (opened with O_DIRECT by the caller) with
 * buffers aligned to `align` bytes (a power of two, >= 512; the page size is
 * used if larger), for jobs with queue_depth <= max_qd and block_size <=
 * max_block_size. -EINVAL for bad sizes, -ENOMEM, or io_setup's error
 * (-EAGAIN when the system-wide aio-max-nr is exhausted).
 */
int dp_engine_open(dp_engine_t **out, int fd, uint32_t align, uint32_t max_qd,
                   uint32_t max_block_size);

/*
 * Runs one probe and fills *res. Returns 0 when the probe ran, even if some
 * I/Os failed (see res->err_* and res->first_error) or it stalled
 * (res->stalled); -EINVAL for a job the engine cannot run; -EBUSY while I/O
 * from a stalled probe is outstanding; io_getevents' errno when the AIO
 * context broke with I/O in flight (res->stalled = 1, see above); other
 * negative errnos when io_submit refuses outright (then res describes what
 * ran before).
 */
int dp_engine_run(dp_engine_t *e, const dp_job_t *job, dp_result_t *res);

/*
 * Reaps completions of a stalled probe's outstanding I/O, waiting at most
 * wait_ns. Returns how many remain outstanding (0: the engine is usable
 * again) or a negative errno.
 */
int dp_engine_reap(dp_engine_t *e, uint64_t wait_ns);

/* Gives the buffers' memory back to the system between probes (the next
 * probe faults it in again during its warm-up): a monitor that probes for
 * one second a minute should not keep megabytes resident; the completion
 * times too. 0, or -EBUSY
 * while I/O is outstanding. */
int dp_engine_release_buffers(dp_engine_t *e);

/*
 * Test hook: the clock the engine reads for every timestamp and deadline
 * (submit and reap times, the measured window, the stall scan, the wait of
 * dp_engine_reap). now_ns(arg) returns nanoseconds and never goes back.
 * NULL restores the default, dp_now_ns (CLOCK_MONOTONIC, clock.h). Waits
 * in the kernel (io_getevents' timeout, the 1 ms io_submit back-off) still
 * take real time.
 */
void dp_engine_set_clock(dp_engine_t *e, uint64_t (*now_ns)(void *arg),
                         void *arg);

/*
 * The longest a probe polls for a completion before it sleeps in
 * io_getevents, while its waits for completions take at most that long on
 * average (a fast device: see run_poll in engine.c); 0: never poll. The
 * default is 64 us where the calling thread may run on two or more CPUs,
 * else 0 (with one CPU polling only delays whatever completes the I/O).
 * Set before dp_engine_run; the tests use it.
 */
void dp_engine_set_poll(dp_engine_t *e, uint64_t max_ns);

/* How many I/Os the kernel still holds for this engine. */
unsigned dp_engine_outstanding(const dp_engine_t *e);

/* Destroys the AIO context (blocking while the kernel holds I/O, see above)
 * and frees everything. NULL is allowed. */
void dp_engine_close(dp_engine_t *e);

#endif /* DP_ENGINE_H */
