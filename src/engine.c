/* engine.c - closed-loop libaio probe engine; see engine.h for the contract. */
#define _GNU_SOURCE
#include "engine.h"
#include "clock.h"
#include "rng.h"
#include "window.h"

#include <errno.h>
#include <libaio.h>
#include <linux/fs.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_NS (30 * DP_NS_PER_S)
/* How often in-flight I/O is scanned for stalls, at most. */
#define STALL_SCAN_NS (50 * UINT64_C(1000000))
/* A probe whose I/Os keep failing stops after this many errors. */
#define MAX_ERRORS 16
/* io_submit -EAGAIN or -ENOMEM with nothing in flight: retry this often,
 * 1 ms apart. */
#define EAGAIN_RETRIES 1000
/* Completion times kept per probe for its rate window (window.h): 512 KiB.
 * A probe with more counted completions than this (over 65,000 IOPS for
 * the default half second) is read over the plain window. */
#define TIMELINE_MAX 65536
/* The longest a probe polls for a completion before it sleeps in
 * io_getevents (run_poll), and the most its waits may take on average for
 * it to poll at all. */
#define POLL_NS (64 * UINT64_C(1000))

struct dp_engine {
  io_context_t ctx;
  int fd;
  uint32_t align, max_qd, max_bs;
  unsigned outstanding;
  uint64_t rng;
  unsigned char *bufs; /* max_qd * max_bs of address space, aligned */
  size_t bufs_len;
  int bufs_mapped;       /* 1: mmap'ed (released with madvise), 0: malloc'ed */
  uint32_t *wfilled;     /* per slot: bytes of its buffer holding random data */
  struct iocb *iocbs;    /* max_qd */
  struct iocb **pending; /* iocbs ready to submit */
  struct io_event *events;
  uint64_t *submit_ns; /* per slot */
  uint64_t *timeline;  /* TIMELINE_MAX completion times (window.h) */
  unsigned char *inflight;
  dp_hist_t hist;
  uint64_t (*now_ns)(void *arg); /* dp_engine_set_clock */
  void *now_arg;
  uint64_t poll_ns; /* run_poll's bound; 0: never poll (dp_engine_set_poll) */
};

static double cpu_s(const struct timeval *tv) {
  return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static int is_pow2(uint32_t v) { return v && !(v & (v - 1)); }

static uint64_t default_now_ns(void *arg) {
  (void)arg;
  return dp_now_ns();
}

void dp_engine_set_poll(dp_engine_t *e, uint64_t max_ns) {
  e->poll_ns = max_ns;
}

/* Polling pays only where another CPU completes the I/O meanwhile: with one
 * CPU it would only delay the kernel thread that completes it. */
static uint64_t default_poll_ns(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2)
    return 0;
  return POLL_NS;
}

void dp_engine_set_clock(dp_engine_t *e, uint64_t (*now_ns)(void *arg),
                         void *arg) {
  e->now_ns = now_ns ? now_ns : default_now_ns;
  e->now_arg = now_ns ? arg : NULL;
}

static uint64_t engine_now(const dp_engine_t *e) {
  return e->now_ns(e->now_arg);
}

/* The slot of a completed iocb, or max_qd for one that is not ours. */
static size_t event_slot(const dp_engine_t *e, const struct iocb *obj) {
  uintptr_t off = (uintptr_t)obj - (uintptr_t)e->iocbs;
  if (off % sizeof(*e->iocbs) != 0 || off / sizeof(*e->iocbs) >= e->max_qd)
    return e->max_qd;
  return off / sizeof(*e->iocbs);
}

int dp_engine_open(dp_engine_t **out, int fd, uint32_t align, uint32_t max_qd,
                   uint32_t max_block_size) {
  *out = NULL;
  if (fd < 0 || !is_pow2(align) || align < 512 || max_qd < 1 ||
      max_qd > DP_QD_MAX || max_block_size < align ||
      max_block_size % align != 0)
    return -EINVAL;

  dp_engine_t *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return -ENOMEM;
  e->fd = fd;
  e->max_qd = max_qd;
  e->max_bs = max_block_size;
  long page = sysconf(_SC_PAGESIZE);
  e->align = (page > 0 && (uint32_t)page > align) ? (uint32_t)page : align;
  e->iocbs = calloc(max_qd, sizeof(*e->iocbs));
  e->pending = calloc(max_qd, sizeof(*e->pending));
  e->events = calloc(max_qd, sizeof(*e->events));
  e->submit_ns = calloc(max_qd, sizeof(*e->submit_ns));
  e->inflight = calloc(max_qd, 1);
  e->wfilled = calloc(max_qd, sizeof(*e->wfilled));
  /* mapped, so that only what probes touch is resident and it can be
   * handed back with the buffers */
  void *tl =
      mmap(NULL, TIMELINE_MAX * sizeof(*e->timeline), PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  e->timeline = tl == MAP_FAILED ? NULL : tl;
  /* Address space for the worst case, memory only for what a probe
   * touches: queue_depth pages-rounded blocks, one per slot, reads and
   * writes alike. Reads must not share a buffer: filesystems and targets
   * that verify read data after the DMA (ZFS Direct I/O, btrfs before 6.14,
   * dm-verity, dm-integrity) would see another read's data land in it
   * before the check and report a checksum failure (ZFS then re-reads
   * through its cache, and stops using Direct I/O for that handle). */
  e->bufs_len = (size_t)max_qd * max_block_size;
  int rc = 0;
  if (e->align <= (uint32_t)page) {
    void *m = mmap(NULL, e->bufs_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    e->bufs = m == MAP_FAILED ? NULL : m;
    e->bufs_mapped = 1;
  } else {
    void *b = NULL;
    rc = posix_memalign(&b, e->align, e->bufs_len);
    e->bufs = rc == 0 ? b : NULL;
  }
  if (!e->iocbs || !e->pending || !e->events || !e->submit_ns || !e->inflight ||
      !e->wfilled || !e->timeline || !e->bufs) {
    dp_engine_close(e);
    return -ENOMEM;
  }
  e->rng = dp_now_ns() | 1;
  dp_engine_set_clock(e, NULL, NULL);
  e->poll_ns = default_poll_ns();

  /* io_setup directly, not io_queue_init: the tests wrap io_setup. */
  rc = io_setup((int)max_qd, &e->ctx);
  if (rc < 0) {
    e->ctx = 0;
    dp_engine_close(e);
    return rc;
  }
  *out = e;
  return 0;
}

unsigned dp_engine_outstanding(const dp_engine_t *e) { return e->outstanding; }

int dp_engine_release_buffers(dp_engine_t *e) {
  if (e->outstanding > 0)
    return -EBUSY; /* the kernel may still write into them */
  if (e->bufs_mapped && madvise(e->bufs, e->bufs_len, MADV_DONTNEED) != 0)
    return -errno;
  if (madvise(e->timeline, TIMELINE_MAX * sizeof(*e->timeline),
              MADV_DONTNEED) != 0)
    return -errno;
  /* the pages read back as zeros now */
  memset(e->wfilled, 0, e->max_qd * sizeof(*e->wfilled));
  return 0;
}

void dp_engine_close(dp_engine_t *e) {
  if (e == NULL)
    return;
  if (e->ctx)
    io_destroy(e->ctx);
  free(e->iocbs);
  free(e->pending);
  free(e->events);
  free(e->submit_ns);
  free(e->inflight);
  free(e->wfilled);
  if (e->timeline)
    munmap(e->timeline, TIMELINE_MAX * sizeof(*e->timeline));
  if (e->bufs && e->bufs_mapped)
    munmap(e->bufs, e->bufs_len);
  else
    free(e->bufs);
  free(e);
}

int dp_engine_reap(dp_engine_t *e, uint64_t wait_ns) {
  uint64_t deadline = engine_now(e) + wait_ns;
  while (e->outstanding > 0) {
    uint64_t now = engine_now(e);
    if (now >= deadline)
      break;
    struct timespec ts;
    dp_ns_to_timespec(deadline - now, &ts);
    int n = io_getevents(e->ctx, 1, (long)e->max_qd, e->events, &ts);
    if (n == -EINTR)
      continue;
    if (n < 0)
      return n; /* a broken context: see engine.h */
    for (int i = 0; i < n; i++) {
      size_t slot = event_slot(e, e->events[i].obj);
      if (slot < e->max_qd && e->inflight[slot]) {
        e->inflight[slot] = 0;
        e->outstanding--;
      }
    }
  }
  return (int)e->outstanding;
}

/* What a probe does with a freed slot. */
typedef enum {
  PHASE_RUN,     /* replace each completion by a new I/O */
  PHASE_DRAIN,   /* budget spent: submit nothing, count what completes */
  PHASE_ABANDON, /* stop flag, errors, a refused submit: submit and count
                    nothing more, only reap what is in flight */
} phase_t;

/* State of one probe run, kept off the engine so the engine stays small. */
typedef struct {
  const dp_job_t *job;
  dp_result_t *res;
  uint64_t nblocks;  /* region_bytes / block_size */
  uint64_t seq_next; /* next block for the sequential patterns */
  unsigned npending; /* prepared iocbs in e->pending, not yet submitted */
  phase_t phase;
  uint32_t warmup_left; /* 0: the measured window has started */
  uint64_t timeout_ns, scan_every_ns;
  uint64_t t_start, last_scan_ns;
  uint64_t window_start; /* valid once warmup_left == 0 */
  uint64_t last_counted; /* valid once res->ops > 0 */
  uint64_t window_end;   /* valid once window_closed */
  int window_closed;
  /* e->timeline[0..tl_n): the window's start, then each counted
   * completion; tl_drain: the index of the first one not replaced (SIZE_MAX
   * while all are); tl_full: more than TIMELINE_MAX */
  size_t tl_n, tl_drain;
  int tl_full, tl_last_counted; /* the last completion went in */
  int rc;                       /* what dp_engine_run returns */
  struct rusage ru0;
  uint64_t wait_avg_ns; /* moving average of the waits that reaped I/O */
  int wait_known;       /* wait_avg_ns holds one */
} run_t;

/* Write data: a slot's buffer is filled with random bytes once; each write
 * then stamps a fresh random 8 bytes at the start of every 512-byte
 * sector. Every sector written differs from every earlier version
 * (deduplication cannot short-cut it) and the rest is random (compression
 * cannot either), for 1/64 of the cost of refilling the block per write. */
#define STAMP_EVERY 512u

static void write_data(dp_engine_t *e, unsigned char *buf, size_t slot,
                       uint32_t block_size) {
  /* Only the block: filling max_bs would make a QD32 8 KiB write probe
   * touch 32 MiB when the target also has a 1 MiB probe. */
  if (e->wfilled[slot] < block_size) {
    dp_fill_random(buf + e->wfilled[slot], block_size - e->wfilled[slot],
                   &e->rng);
    e->wfilled[slot] = block_size;
  }
  for (uint32_t off = 0; off < block_size; off += STAMP_EVERY) {
    uint64_t v = dp_rng_next(&e->rng);
    memcpy(buf + off, &v, sizeof(v));
  }
}

static void prep_slot(dp_engine_t *e, run_t *r, size_t slot) {
  const dp_job_t *j = r->job;
  uint64_t block;
  if (j->pattern == DP_PATTERN_SEQREAD || j->pattern == DP_PATTERN_SEQWRITE) {
    block = r->seq_next;
    r->seq_next = (r->seq_next + 1) % r->nblocks;
  } else {
    block = dp_rng_next(&e->rng) % r->nblocks;
  }
  long long off = (long long)(j->region_offset + block * j->block_size);
  unsigned char *buf = e->bufs + slot * (size_t)e->max_bs;
  struct iocb *cb = &e->iocbs[slot];
  if (dp_pattern_writes(j->pattern)) {
    write_data(e, buf, slot, j->block_size);
    io_prep_pwrite(cb, e->fd, buf, j->block_size, off);
    if (j->pattern == DP_PATTERN_SYNCWRITE)
      cb->aio_rw_flags = RWF_DSYNC;
  } else {
    io_prep_pread(cb, e->fd, buf, j->block_size, off);
  }
  r->npending++;
  e->pending[r->npending - 1] = cb;
}

/* Submits what is pending. Returns 0, or a negative errno that ends the
 * probe. -EAGAIN or -ENOMEM (the kernel short of AIO requests or memory)
 * with I/O in flight is not an error: retried after a reap, once in-flight
 * I/O has given resources back; with nothing in flight, retried 1 ms apart
 * for about a second.
 *
 * One iocb per io_submit. A multi-iocb io_submit plugs the block queue and
 * hands the device the whole batch only at its end, so the device idles while
 * the batch is built: at QD32 on virtio-blk that cost 21 % of the IOPS fio
 * gets (fio also submits one at a time by default). All pending I/Os share
 * one timestamp, so an I/O's latency includes waiting for the submissions
 * ahead of it, as an application's would, and IOPS x mean latency stays
 * equal to the queue depth. */
static int submit_pending(dp_engine_t *e, run_t *r) {
  unsigned tries = 0, done = 0;
  int rc = 0;
  uint64_t now = engine_now(e);
  for (unsigned i = 0; i < r->npending; i++)
    e->submit_ns[e->pending[i] - e->iocbs] = now;
  while (done < r->npending) {
    int n = io_submit(e->ctx, 1, &e->pending[done]);
    if (n == -EINTR)
      continue;
    if (n == -EAGAIN || n == -ENOMEM || n == 0) {
      if (e->outstanding > 0)
        break; /* retried after the next reap */
      if (++tries > EAGAIN_RETRIES) {
        rc = n ? n : -EAGAIN;
        break;
      }
      if (n != 0) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
      }
      /* That wait was ours, not the device's. */
      now = engine_now(e);
      for (unsigned i = done; i < r->npending; i++)
        e->submit_ns[e->pending[i] - e->iocbs] = now;
      continue;
    }
    if (n < 0) {
      rc = n;
      break;
    }
    size_t slot = (size_t)(e->pending[done] - e->iocbs);
    e->inflight[slot] = 1;
    e->outstanding++;
    done++;
  }
  memmove(e->pending, e->pending + done,
          (r->npending - done) * sizeof(*e->pending));
  r->npending -= done;
  return rc;
}

static int job_valid(const dp_engine_t *e, const dp_job_t *j) {
  return (unsigned)j->pattern < DP_PATTERN_COUNT && j->queue_depth >= 1 &&
         j->queue_depth <= e->max_qd && j->block_size >= 512 &&
         j->block_size <= e->max_bs && j->block_size % 512 == 0 &&
         j->region_bytes >= j->block_size &&
         (j->duration_ns > 0 || j->max_ops > 0);
}

/* ---- the steps of a probe ------------------------------------------------
 *
 * dp_engine_run is: begin; then, while I/O is in flight: wait, complete and
 * replace each completion, refill, scan; then finish. The phase says what a
 * freed slot does (run -> drain when the budget is spent; run -> abandon on
 * the stop flag, errors or a refused submit); a stall or a broken context
 * leaves the loop with I/O outstanding, fenced until dp_engine_reap. */

/* Nonzero once another thread has set the job's stop flag. */
static int stop_asked(const run_t *r) {
  return r->job->stop &&
         atomic_load_explicit(r->job->stop, memory_order_acquire) != 0;
}

/* Nonzero once the time budget of the measured window is spent at `now`. */
static int time_spent(const run_t *r, uint64_t now) {
  return r->warmup_left == 0 && r->job->duration_ns &&
         now - r->window_start >= r->job->duration_ns;
}

/* Ends the measured window at `t`, unless it has already ended. */
static void close_window(run_t *r, uint64_t t) {
  if (!r->window_closed) {
    r->window_end = t;
    r->window_closed = 1;
  }
}

/* Keeps a completion time for the rate window (the window's start first). */
static void timeline_add(dp_engine_t *e, run_t *r, uint64_t now) {
  if (r->tl_n < TIMELINE_MAX)
    e->timeline[r->tl_n++] = now;
  else
    r->tl_full = 1;
}

/* The budget is spent: from timeline index `from` on, no completion is
 * replaced. */
static void drain_begins(run_t *r, size_t from) {
  r->phase = PHASE_DRAIN;
  if (r->tl_drain == SIZE_MAX)
    r->tl_drain = from;
}

/* Submits and counts nothing more; the window ends at `now`. */
static void run_abandon(run_t *r, uint64_t now) {
  r->phase = PHASE_ABANDON;
  r->npending = 0; /* slots prepared for resubmission stay idle */
  close_window(r, now);
}

/* Ends the loop with I/O the engine cannot wait for: stalled, the window
 * ending at the last counted completion. */
static void run_stall(run_t *r, uint64_t now) {
  r->res->stalled = 1;
  close_window(r, r->res->ops > 0 ? r->last_counted : now);
}

/* Submits what is prepared; a refusal abandons the probe with its errno. */
static void run_submit(dp_engine_t *e, run_t *r, uint64_t now) {
  int rc = submit_pending(e, r);
  if (rc < 0) {
    r->rc = rc;
    if (!r->res->first_error)
      r->res->first_error = rc;
    run_abandon(r, now);
  }
}

/* begin: resets the result and fills the queue to queue_depth (nothing if
 * the stop flag is already set). */
static void run_begin(dp_engine_t *e, run_t *r, const dp_job_t *job,
                      dp_result_t *res) {
  res->pattern = job->pattern;
  res->block_size = job->block_size;
  res->queue_depth = job->queue_depth;
  dp_hist_reset(&e->hist);
  if (job->seed)
    e->rng = job->seed;

  memset(r, 0, sizeof(*r));
  r->job = job;
  r->res = res;
  r->phase = PHASE_RUN;
  r->nblocks = job->region_bytes / job->block_size;
  r->seq_next = dp_rng_next(&e->rng) % r->nblocks;
  r->warmup_left = job->queue_depth;
  r->tl_drain = SIZE_MAX;
  r->timeout_ns = job->timeout_ns ? job->timeout_ns : DEFAULT_TIMEOUT_NS;
  r->scan_every_ns =
      r->timeout_ns / 4 < STALL_SCAN_NS ? r->timeout_ns / 4 : STALL_SCAN_NS;
  if (r->scan_every_ns < DP_NS_PER_MS)
    r->scan_every_ns = DP_NS_PER_MS;

  getrusage(RUSAGE_THREAD, &r->ru0);
  r->t_start = r->last_scan_ns = engine_now(e);
  if (stop_asked(r)) {
    run_abandon(r, r->t_start);
    return;
  }
  for (size_t s = 0; s < job->queue_depth; s++)
    prep_slot(e, r, s);
  run_submit(e, r, r->t_start);
}

/* poll: when the waits for completions have taken at most e->poll_ns on
 * average, looks for one for up to e->poll_ns (since t0) before the caller
 * sleeps. io_getevents with a zero timeout is answered by libaio from the
 * completion ring in user space, without a system call while it is empty.
 *
 * Sleeping costs a fast device's I/O more than the device does: the CPU that
 * sleeps in io_getevents goes idle, and waking it for the completion (an
 * inter-processor interrupt; in a VM the idle virtual CPU is halted in the
 * host) took 30-40 us on a 2-vCPU VM whose RAM-backed loop device reads 8 KiB
 * in 10-20 us. Whenever the kernel put the loop device's worker on the other,
 * idle CPU, QD1 p50 was 2-3x fio's (contrib/evaluation/bench/qd1_fio.sh).
 * Polling keeps this CPU awake at the price of the wait's CPU time (at most
 * poll_ns per I/O), and yields between looks: when the other CPUs are busy,
 * what completes the I/O (the loop device's worker) may be queued behind us
 * on this one. Returns what io_getevents returned: events, 0 (none yet), or
 * an error. */
static int run_poll(dp_engine_t *e, run_t *r, uint64_t t0) {
  if (e->poll_ns == 0 || !r->wait_known || r->wait_avg_ns > e->poll_ns)
    return 0;
  struct timespec zero = {0, 0};
  /* a clock that does not move (a test's) still ends the loop */
  for (uint64_t i = 0; i < e->poll_ns / 8; i++) {
    int n =
        io_getevents(e->ctx, 1, (long)r->job->queue_depth, e->events, &zero);
    if (n != 0)
      return n == -EINTR ? 0 : n;
    if (engine_now(e) - t0 >= e->poll_ns)
      break;
    sched_yield();
  }
  return 0;
}

/* Learns how long a wait that reaped I/O took: an average over about the
 * last 8. */
static void run_learn_wait(run_t *r, uint64_t ns) {
  if (!r->wait_known)
    r->wait_avg_ns = ns;
  else
    r->wait_avg_ns = r->wait_avg_ns - r->wait_avg_ns / 8 + ns / 8;
  r->wait_known = 1;
}

/* wait: polls (run_poll), then sleeps up to one scan period for completions
 * into e->events. Returns how many arrived (0 on a timeout or -EINTR), or -1
 * when the context is broken: then the probe is over and reported like a
 * stall (engine.h). */
static int run_wait(dp_engine_t *e, run_t *r) {
  uint64_t t0 = engine_now(e);
  int n = run_poll(e, r, t0);
  if (n == 0) {
    struct timespec ts;
    dp_ns_to_timespec(r->scan_every_ns, &ts);
    n = io_getevents(e->ctx, 1, (long)r->job->queue_depth, e->events, &ts);
  }
  if (n > 0)
    run_learn_wait(r, engine_now(e) - t0);
  if (n >= 0)
    return n;
  if (n == -EINTR)
    return 0;
  /* -EINVAL, -EFAULT, ...: nothing more can be reaped through this context,
   * and the kernel may still DMA into the buffers of the I/O in flight. */
  r->rc = n;
  if (!r->res->first_error)
    r->res->first_error = n;
  run_stall(r, engine_now(e));
  return -1;
}

/* complete: accounts one completion (live counter, errors, warm-up, counted
 * latency). Returns its slot, now free, or -1 for an event not ours. */
static long run_complete(dp_engine_t *e, run_t *r, const struct io_event *ev,
                         uint64_t now) {
  const dp_job_t *j = r->job;
  dp_result_t *res = r->res;
  size_t slot = event_slot(e, ev->obj);
  if (slot >= j->queue_depth || !e->inflight[slot])
    return -1;
  e->inflight[slot] = 0;
  e->outstanding--;
  r->tl_last_counted = 0;
  uint64_t lat = now - e->submit_ns[slot];
  long got = (long)ev->res; /* res is unsigned; errors are -errno */
  if (j->counter) {
    atomic_fetch_add_explicit(&j->counter->ios, 1, memory_order_relaxed);
    if (got > 0)
      atomic_fetch_add_explicit(&j->counter->bytes, (uint64_t)got,
                                memory_order_relaxed);
  }
  if (got < 0) {
    if (got == -ENOSPC || got == -EDQUOT)
      res->err_nospace++;
    else
      res->err_io++;
    if (!res->first_error)
      res->first_error = (int)got;
  } else if ((unsigned long)got != j->block_size) {
    res->err_short++;
  } else if (r->warmup_left > 0) {
    if (--r->warmup_left == 0) {
      r->window_start = now;
      timeline_add(e, r, now);
    }
  } else if (r->phase != PHASE_ABANDON) {
    /* Counted, also while draining: the window ends at the completion of
     * the last I/O submitted before the budget was spent, as it starts at
     * the completion of the last I/O of the first batch. Ending it at the
     * first completion past the budget would drop up to queue_depth - 1
     * I/Os at the end that the start does not: -3 % at QD32 on a
     * blkio-throttled device (500 IOPS), whose I/Os complete in bursts. */
    if (lat > r->timeout_ns)
      res->err_timeout++;
    dp_hist_record(&e->hist, lat);
    res->ops++;
    r->last_counted = now;
    timeline_add(e, r, now);
    r->tl_last_counted = 1;
  }
  return (long)slot;
}

/* replace: while running, prepares a new I/O in the freed slot, unless the
 * stop flag or the error cap abandons the probe or the budget is spent. */
static void run_replace(dp_engine_t *e, run_t *r, size_t slot, uint64_t now) {
  const dp_job_t *j = r->job;
  const dp_result_t *res = r->res;
  if (r->phase != PHASE_RUN)
    return;
  if (stop_asked(r) ||
      res->err_io + res->err_short + res->err_nospace >= MAX_ERRORS) {
    run_abandon(r, now);
    return;
  }
  /* For the op budget, what is in flight (or prepared) past the warm-up
   * will be counted too, so exactly max_ops are (if none fails). */
  uint64_t ahead = (uint64_t)e->outstanding + r->npending;
  ahead = ahead > r->warmup_left ? ahead - r->warmup_left : 0;
  if (time_spent(r, now) || (j->max_ops && res->ops + ahead >= j->max_ops)) {
    /* this completion is not replaced */
    drain_begins(r, r->tl_n - (r->tl_last_counted && r->tl_n > 0));
    return;
  }
  prep_slot(e, r, slot);
}

/* refill: after a batch (or a wait that reaped nothing), checks the stop
 * flag and the time budget, then submits what was prepared before. */
static void run_refill(dp_engine_t *e, run_t *r, uint64_t now) {
  if (r->phase == PHASE_RUN) {
    if (stop_asked(r))
      run_abandon(r, now);
    else if (time_spent(r, now))
      drain_begins(r, r->tl_n);
  }
  /* Prepared before the budget ran out: submitted and counted. */
  if (r->phase != PHASE_ABANDON && r->npending > 0)
    run_submit(e, r, now);
}

/* scan: at most once a scan period, counts in-flight I/O older than the
 * timeout; nonzero (the probe is over, stalled) if there is any. */
static int run_scan(dp_engine_t *e, run_t *r) {
  /* Re-read the clock: the submissions just made are newer than `now`. */
  uint64_t now = engine_now(e);
  if (now - r->last_scan_ns < r->scan_every_ns)
    return 0;
  r->last_scan_ns = now;
  uint64_t late = 0;
  for (size_t s = 0; s < r->job->queue_depth; s++)
    if (e->inflight[s] && now - e->submit_ns[s] > r->timeout_ns)
      late++;
  if (late == 0)
    return 0;
  r->res->err_timeout += late;
  run_stall(r, now);
  return 1; /* leave the rest to dp_engine_reap */
}

/* The latency figures of the result, from the counted I/Os' histogram. */
static void fill_latency(dp_result_t *res, const dp_hist_t *h) {
  if (h->count == 0)
    return;
  res->lat_min_s = (double)h->min_ns / 1e9;
  res->lat_max_s = (double)h->max_ns / 1e9;
  res->lat_mean_s = dp_hist_mean(h) / 1e9;
  res->lat_p50_s = (double)dp_hist_quantile(h, 0.50) / 1e9;
  res->lat_p90_s = (double)dp_hist_quantile(h, 0.90) / 1e9;
  res->lat_p99_s = (double)dp_hist_quantile(h, 0.99) / 1e9;
  res->lat_p999_s = (double)dp_hist_quantile(h, 0.999) / 1e9;
}

/* A probe that ran its course on a disk that completes I/O in a
 * throttle's steps: the rate over whole steps (window.h), and what the
 * disk let through at the start beyond it. */
static void rate_window(const dp_engine_t *e, run_t *r) {
  dp_result_t *res = r->res;
  if (r->tl_full || r->tl_n < 3 || r->warmup_left > 0 || res->stalled ||
      r->phase == PHASE_ABANDON || res->ops + 1 != r->tl_n)
    return;
  dp_window_t w;
  dp_window_pick(e->timeline, r->tl_n, r->tl_drain, &w);
  res->throttled = w.throttled;
  if (!w.stepped)
    return;
  const uint64_t *t = e->timeline;
  res->stepped = 1;
  res->window_ops = w.last - w.first;
  res->elapsed_s = (double)(t[w.last] - t[w.first]) / 1e9;
  double rate = (double)res->window_ops / (double)(t[w.last] - t[w.first]);
  res->burst_ops = dp_window_burst(t, &w, r->t_start,
                                   r->job->queue_depth + w.first - 1, rate);
}

/* finish: fills the window, rates, latency and CPU of the result; returns
 * what dp_engine_run returns. */
static int run_finish(dp_engine_t *e, run_t *r) {
  dp_result_t *res = r->res;
  struct rusage ru1;
  uint64_t t_end = engine_now(e);
  getrusage(RUSAGE_THREAD, &ru1);
  close_window(r, res->ops > 0 ? r->last_counted : t_end);
  /* A warm-up that never finished measured nothing. */
  uint64_t start = r->warmup_left == 0 ? r->window_start : r->window_end;

  res->wall_s = (double)(t_end - r->t_start) / 1e9;
  res->elapsed_s = (double)(r->window_end - start) / 1e9;
  res->bytes = res->ops * r->job->block_size;
  res->window_ops = res->ops;
  rate_window(e, r);
  if (res->elapsed_s > 0) {
    res->iops = (double)res->window_ops / res->elapsed_s;
    res->bytes_per_s = res->iops * r->job->block_size;
  }
  fill_latency(res, &e->hist);
  res->achieved_qd = res->iops * res->lat_mean_s;
  res->cpu_user_s = cpu_s(&ru1.ru_utime) - cpu_s(&r->ru0.ru_utime);
  res->cpu_sys_s = cpu_s(&ru1.ru_stime) - cpu_s(&r->ru0.ru_stime);
  return r->rc;
}

int dp_engine_run(dp_engine_t *e, const dp_job_t *job, dp_result_t *res) {
  memset(res, 0, sizeof(*res));
  res->hist = &e->hist;
  if (!job_valid(e, job))
    return -EINVAL;
  if (e->outstanding > 0)
    return -EBUSY;

  run_t r;
  run_begin(e, &r, job, res);
  while (e->outstanding > 0) {
    int n = run_wait(e, &r);
    if (n < 0)
      break; /* broken context: fenced like a stall */
    uint64_t now = engine_now(e);
    for (int i = 0; i < n; i++) {
      long slot = run_complete(e, &r, &e->events[i], now);
      if (slot >= 0)
        run_replace(e, &r, (size_t)slot, now);
    }
    run_refill(e, &r, now);
    if (run_scan(e, &r))
      break; /* stalled */
  }
  return run_finish(e, &r);
}
