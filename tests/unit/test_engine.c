/*
 * test_engine.c - the probe engine's logic and error paths, with libaio
 * replaced by a fake kernel through -Wl,--wrap (io_setup, io_submit,
 * io_getevents, io_destroy: tests/unit/fake_aio.c) and, where time
 * matters, the engine's clock by a fake one (dp_engine_set_clock) that the
 * fake kernel advances as it completes I/O. These are the cases a real
 * device cannot produce on demand: EIO and short completions,
 * -EAGAIN/-ENOMEM/-EINTR storms, a context that fails to set up or breaks
 * mid-probe, an I/O that never completes, the exact measured window of a
 * duration budget, the stop flag. The real path is covered by
 * tests/shell/loop_throttle.sh on a real loop device.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libaio.h>
#include <linux/fs.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "engine.h"
#include "fake_aio.h"

/* Failure messages name the quantity, what was expected and what was seen. */
#define EXPECT_EQ(seen, expected, what)                                        \
  do {                                                                         \
    long long seen_ = (long long)(seen), exp_ = (long long)(expected);         \
    if (seen_ != exp_)                                                         \
      fail_msg("%s: expected %lld, saw %lld", (what), exp_, seen_);            \
  } while (0)
#define EXPECT_RANGE(seen, lo, hi, what)                                       \
  do {                                                                         \
    long long seen_ = (long long)(seen);                                       \
    if (seen_ < (long long)(lo) || seen_ > (long long)(hi))                    \
      fail_msg("%s: expected %lld..%lld, saw %lld", (what), (long long)(lo),   \
               (long long)(hi), seen_);                                        \
  } while (0)
#define EXPECT_NEAR(seen, expected, what)                                      \
  do {                                                                         \
    double seen_ = (seen), exp_ = (expected);                                  \
    if (!(fabs(seen_ - exp_) <= 1e-9 * fabs(exp_) + 1e-12))                    \
      fail_msg("%s: expected %.9g, saw %.9g", (what), exp_, seen_);            \
  } while (0)

#define MS UINT64_C(1000000)
#define FAKE_T0 (1000 * DP_NS_PER_S) /* any start; 0 is no special value */

/* ---- fixtures ----------------------------------------------------------- */

static int setup(void **state) {
  fake_aio_reset();
  fake_aio.wait_advances_clock = 1; /* a wait for nothing takes its timeout */
  dp_engine_t *e = NULL;
  int rc = dp_engine_open(&e, 0, 4096, 32, 65536);
  if (rc != 0)
    return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  dp_engine_close(*state);
  EXPECT_EQ(fake_aio.destroyed, 1, "io_destroy calls at close");
  return 0;
}

static dp_job_t job(uint32_t qd, uint64_t ops) {
  dp_job_t j = {.pattern = DP_PATTERN_RANDREAD,
                .block_size = 8192,
                .queue_depth = qd,
                .max_ops = ops,
                .timeout_ns = 5000000000ull,
                .region_offset = 4096,
                .region_bytes = 64 << 20,
                .seed = 42};
  return j;
}

/* A job with a time budget only, on the fake clock. */
static dp_job_t timed_job(dp_engine_t *e, uint32_t qd, uint64_t duration_ns) {
  dp_job_t j = job(qd, 0);
  j.duration_ns = duration_ns;
  fake_aio_now = FAKE_T0;
  dp_engine_set_clock(e, fake_aio_clock, NULL);
  return j;
}

/* ---- tests -------------------------------------------------------------- */

static void test_setup_failure_is_returned(void **state) {
  (void)state;
  fake_aio_reset();
  fake_aio.setup_rc = -EAGAIN; /* aio-max-nr exhausted */
  dp_engine_t *e = (dp_engine_t *)0x1;
  EXPECT_EQ(dp_engine_open(&e, 0, 4096, 8, 8192), -EAGAIN,
            "dp_engine_open when io_setup fails");
  if (e != NULL)
    fail_msg("engine after a failed open: expected NULL, saw %p", (void *)e);
  EXPECT_EQ(fake_aio.destroyed, 0, "io_destroy calls (no context was set up)");
}

static void test_bad_open_arguments(void **state) {
  (void)state;
  dp_engine_t *e;
  EXPECT_EQ(dp_engine_open(&e, 0, 3000, 8, 8192), -EINVAL, "align 3000");
  EXPECT_EQ(dp_engine_open(&e, 0, 4096, 0, 8192), -EINVAL, "max_qd 0");
  EXPECT_EQ(dp_engine_open(&e, 0, 4096, 257, 8192), -EINVAL, "max_qd 257");
  EXPECT_EQ(dp_engine_open(&e, 0, 4096, 8, 6000), -EINVAL, "block 6000");
  EXPECT_EQ(dp_engine_open(&e, -1, 4096, 8, 8192), -EINVAL, "fd -1");
}

static void test_closed_loop_keeps_qd_in_flight(void **state) {
  dp_engine_t *e = *state;
  dp_job_t j = job(16, 2000);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, 2000, "ops counted (op budget)");
  EXPECT_EQ(r.bytes, 2000ull * 8192, "bytes counted");
  EXPECT_EQ(fake_aio.max_inflight, 16, "most I/Os in flight");
  /* warm-up (16) + counted (2000) + drained (up to 16) */
  EXPECT_RANGE(fake_aio.submitted, 2016, 2032, "I/Os submitted");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding after the probe");
  EXPECT_EQ(r.err_io + r.err_short + r.err_timeout, 0, "errors");
  EXPECT_EQ(r.hist->count, 2000, "latencies recorded");
  /* the live counter sees every completion, warm-up and drain included */
  dp_io_counter_t c = {0};
  j.counter = &c;
  fake_aio.completed = 0;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run with a counter");
  EXPECT_EQ(atomic_load(&c.ios), fake_aio.completed, "live counter: I/Os");
  EXPECT_EQ(atomic_load(&c.bytes), fake_aio.completed * 8192,
            "live counter: bytes");
  EXPECT_RANGE(atomic_load(&c.ios), 2001, 1 << 30,
               "live counter: I/Os (more than the counted ones)");
  if (!(r.lat_p99_s >= r.lat_p50_s && r.lat_max_s >= r.lat_p99_s))
    fail_msg("latency order: expected p50 <= p99 <= max, saw %g, %g, %g",
             r.lat_p50_s, r.lat_p99_s, r.lat_max_s);
}

/* The time budget on a fake clock, QD4, 100 ms budget; each case names
 * the expected window. Nothing is submitted once the budget is spent, the
 * I/Os then in flight drain and are counted, warm-up I/Os are not. */
static const struct window_case {
  const char *device;
  uint64_t tick_ns;        /* the fake clock's step per io_getevents */
  long events_max;         /* completions per io_getevents; 0 = all */
  uint64_t ops;            /* counted */
  uint64_t submitted;      /* warm-up + replacements */
  uint64_t last_submit_ms; /* the budget is spent one tick later */
  double elapsed_s, wall_s, iops, lat_s;
  int stepped; /* the rate over whole steps (window.h) */
} window_cases[] = {
    /* One completion per ms, each I/O taking 4 ms (1000 IOPS). Warm-up
     * completions at 1..4 ms open the window at 4 ms; the completion at
     * 104 ms spends the budget; the 3 I/Os submitted at 101..103 ms drain
     * at 105..107 ms: window 4..107 ms, 100 + 3 counted. */
    {"steady", MS, 1, 103, 4 + 4 + 99, 103, 0.103, 0.107, 1000.0, 0.004, 0},
    /* Bursts (a throttle's slices): all 4 in flight complete together
     * every 20 ms (200 IOPS). The window ends at 20 ms and 120 ms (a full
     * batch each), 20 counted; the rate is over whole steps, from the
     * first after the warm-up (40 ms) to the last (120 ms): 16 I/Os in
     * 80 ms, exact. */
    {"bursty", 20 * MS, 0, 20, 6 * 4, 100, 0.080, 0.120, 200.0, 0.020, 1},
};

static void test_duration_window(void **state) {
  dp_engine_t *e = *state;
  for (size_t k = 0; k < sizeof(window_cases) / sizeof(window_cases[0]); k++) {
    const struct window_case *c = &window_cases[k];
    print_message("%s device\n", c->device);
    fake_aio.submitted = fake_aio.completed = 0;
    dp_job_t j = timed_job(e, 4, 100 * MS);
    fake_aio.tick_ns = c->tick_ns;
    fake_aio.events_max = c->events_max;
    dp_result_t r;
    EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
    EXPECT_EQ(r.ops, c->ops, "ops counted (drain included)");
    EXPECT_EQ(r.hist->count, c->ops, "latencies recorded");
    EXPECT_NEAR(r.elapsed_s, c->elapsed_s, "elapsed_s");
    EXPECT_NEAR(r.wall_s, c->wall_s, "wall_s (start .. last drain)");
    EXPECT_NEAR(r.iops, c->iops, "iops (the device's true rate)");
    EXPECT_EQ(r.stepped, c->stepped, "stepped");
    EXPECT_EQ(r.window_ops,
              c->stepped ? (uint64_t)(c->iops * c->elapsed_s + 0.5) : c->ops,
              "I/Os in the rate window");
    EXPECT_EQ(fake_aio.submitted, c->submitted, "I/Os submitted");
    EXPECT_EQ(fake_aio.completed, c->submitted, "I/Os completed");
    EXPECT_EQ((fake_aio.last_submit_ns - FAKE_T0) / MS, c->last_submit_ms,
              "time of the last submit, ms (none once the budget is spent)");
    EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding after the drain");
    EXPECT_NEAR(r.lat_min_s, c->lat_s, "lat_min_s (warm-up not counted)");
    EXPECT_NEAR(r.lat_max_s, c->lat_s, "lat_max_s");
    EXPECT_NEAR(r.lat_mean_s, c->lat_s, "lat_mean_s");
    EXPECT_NEAR(r.achieved_qd, 4.0, "achieved_qd (Little's law)");
    EXPECT_EQ(r.stalled, 0, "stalled");
    EXPECT_EQ(r.err_io + r.err_short + r.err_timeout, 0, "errors");
  }
}

/* The stop flag, set by another thread as the 20th I/O completes: nothing
 * more is submitted, the 3 I/Os in flight are reaped but not counted, and
 * the probe returns although its time budget (an hour) is far from spent. */
static void test_stop_flag_ends_probe(void **state) {
  dp_engine_t *e = *state;
  atomic_int stop = 0;
  dp_job_t j = timed_job(e, 4, 3600 * DP_NS_PER_S);
  j.stop = &stop;
  fake_aio.tick_ns = MS;
  fake_aio.events_max = 1;
  fake_aio.stop = &stop;
  fake_aio.stop_at = 20;
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(fake_aio.submitted_at_stop, 23,
            "I/Os submitted when the flag was set");
  EXPECT_EQ(fake_aio.submitted, fake_aio.submitted_at_stop,
            "I/Os submitted by the end (none after the stop)");
  EXPECT_EQ(fake_aio.completed, fake_aio.submitted,
            "I/Os completed (all reaped)");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding after the stop");
  EXPECT_EQ(r.ops, 16, "ops counted (completions 5..20)");
  EXPECT_NEAR(r.elapsed_s, 0.016, "elapsed_s (window 4 ms .. 20 ms)");
  EXPECT_EQ(r.stalled, 0, "stalled");

  /* Already set when the probe starts: nothing is submitted at all. */
  unsigned long before = fake_aio.submitted;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run with the flag set");
  EXPECT_EQ(fake_aio.submitted - before, 0, "I/Os submitted with the flag set");
  EXPECT_EQ(r.ops, 0, "ops counted with the flag set");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding with the flag set");
}

/* io_getevents failing for good (-EINVAL: the context is gone; -EFAULT)
 * with I/O in flight: the probe ends with that errno and stalled = 1, the
 * in-flight I/O stays counted as outstanding, and the engine refuses new
 * probes and buffer release until dp_engine_reap has seen it all. */
static void test_broken_context_fenced(void **state) {
  dp_engine_t *e = *state;
  static const int errs[] = {-EINVAL, -EFAULT};
  for (size_t k = 0; k < sizeof(errs) / sizeof(errs[0]); k++) {
    int err = errs[k];
    print_message("io_getevents fails with %d\n", err);
    fake_aio.getevents_fail = err;
    fake_aio.fail_after = fake_aio.completed + 10; /* 4 warm-up, 6 counted */
    fake_aio.events_max = 1;
    dp_job_t j = job(4, 1000);
    dp_result_t r;
    EXPECT_EQ(dp_engine_run(e, &j, &r), err,
              "dp_engine_run when the context breaks");
    EXPECT_EQ(r.stalled, 1, "stalled (I/O in flight that cannot be reaped)");
    EXPECT_EQ(r.first_error, err, "first_error");
    EXPECT_EQ(r.err_timeout, 0, "err_timeout (nothing timed out)");
    EXPECT_EQ(r.ops, 6, "ops counted before the context broke");
    EXPECT_EQ(dp_engine_outstanding(e), 4, "outstanding");
    EXPECT_EQ(fake_aio.qn, 4, "I/Os the fake kernel still holds");

    unsigned long before = fake_aio.submitted;
    dp_result_t r2;
    EXPECT_EQ(dp_engine_run(e, &j, &r2), -EBUSY,
              "dp_engine_run with unreaped I/O");
    EXPECT_EQ(fake_aio.submitted - before, 0,
              "I/Os submitted by a refused run");
    EXPECT_EQ(dp_engine_release_buffers(e), -EBUSY,
              "dp_engine_release_buffers with unreaped I/O");
    EXPECT_EQ(dp_engine_reap(e, 5 * MS), err,
              "dp_engine_reap while the context is broken");
    EXPECT_EQ(dp_engine_outstanding(e), 4, "outstanding after a failed reap");

    fake_aio.getevents_fail = 0; /* the context answers again */
    EXPECT_EQ(dp_engine_reap(e, 1000 * MS), 0, "dp_engine_reap, recovered");
    EXPECT_EQ(dp_engine_run(e, &j, &r2), 0, "dp_engine_run, recovered");
    EXPECT_EQ(r2.ops, 1000, "ops counted, recovered");
    EXPECT_EQ(r2.stalled, 0, "stalled, recovered");
  }
}

static void test_offsets_aligned_and_in_region(void **state) {
  dp_engine_t *e = *state;
  dp_job_t j = job(4, 500);
  j.region_offset = 1 << 20;
  j.region_bytes = 1 << 20;
  dp_result_t r;
  /* keep the first iocbs in the queue to look at them */
  fake_aio.mode = FAKE_AIO_HANG;
  j.timeout_ns = 20000000;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(fake_aio.qn, 4, "I/Os held by the hung fake");
  for (unsigned i = 0; i < fake_aio.qn; i++) {
    long long off = fake_aio.q[i].cb->u.c.offset;
    EXPECT_EQ(off % 8192, 0, "offset modulo the block size");
    EXPECT_RANGE(off, 1 << 20, (2 << 20) - 8192, "offset");
    EXPECT_EQ((uintptr_t)fake_aio.q[i].cb->u.c.buf % 4096, 0,
              "buffer modulo 4096");
    EXPECT_EQ(fake_aio.q[i].cb->aio_lio_opcode, IO_CMD_PREAD, "opcode");
  }
  fake_aio.mode = FAKE_AIO_OK;
  EXPECT_EQ(dp_engine_reap(e, 1000000000ull), 0, "dp_engine_reap");
}

static void test_eio_completions_counted(void **state) {
  dp_engine_t *e = *state;
  fake_aio.mode = FAKE_AIO_EIO_ALL;
  dp_job_t j = job(4, 100);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, 0, "ops counted");
  /* stops after MAX_ERRORS, does not spin */
  EXPECT_RANGE(r.err_io, 16, 39, "err_io");
  EXPECT_EQ(r.first_error, -EIO, "first_error");
  EXPECT_EQ(r.stalled, 0, "stalled");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding");
}

/* A full copy-on-write filesystem refuses overwrites with ENOSPC: counted
 * apart from I/O errors (the disk is fine), and the probe still stops. */
static void test_enospc_counted_apart(void **state) {
  dp_engine_t *e = *state;
  fake_aio.mode = FAKE_AIO_ENOSPC_ALL;
  dp_job_t j = job(4, 100);
  j.pattern = DP_PATTERN_RANDWRITE;
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, 0, "ops counted");
  EXPECT_EQ(r.err_io, 0, "err_io");
  EXPECT_RANGE(r.err_nospace, 16, 39, "err_nospace");
  EXPECT_EQ(r.first_error, -ENOSPC, "first_error");
  EXPECT_EQ(r.stalled, 0, "stalled");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding");
}

static void test_some_eio_rest_counted(void **state) {
  dp_engine_t *e = *state;
  fake_aio.mode = FAKE_AIO_EIO_EVERY_3RD;
  dp_job_t j = job(1, 10);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, 10, "ops counted");
  EXPECT_RANGE(r.err_io, 4, 1 << 30, "err_io");
  EXPECT_EQ(r.first_error, -EIO, "first_error");
}

static void test_short_transfers_counted(void **state) {
  dp_engine_t *e = *state;
  fake_aio.mode = FAKE_AIO_SHORT_ALL;
  dp_job_t j = job(2, 50);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, 0, "ops counted");
  EXPECT_RANGE(r.err_short, 16, 1 << 30, "err_short");
  EXPECT_EQ(r.err_io, 0, "err_io");
  EXPECT_EQ(r.first_error, 0, "first_error");
}

static void test_short_writes_counted(void **state) {
  dp_engine_t *e = *state;
  /* a full disk or a dying one: fewer bytes written */
  fake_aio.mode = FAKE_AIO_SHORT_ALL;
  dp_job_t j = job(4, 50);
  j.pattern = DP_PATTERN_SEQWRITE;
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, 0, "ops counted");
  EXPECT_RANGE(r.err_short, 16, 1 << 30, "err_short");
  EXPECT_EQ(r.err_io, 0, "err_io");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding");
}

static void test_eagain_storm_retried(void **state) {
  dp_engine_t *e = *state;
  /* nothing in flight: the engine waits and retries */
  fake_aio.eagain_left = 50;
  dp_job_t j = job(8, 300);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, 300, "ops counted");
  EXPECT_EQ(fake_aio.eagain_left, 0, "-EAGAIN answers left");
}

static void test_eagain_forever_fails(void **state) {
  dp_engine_t *e = *state;
  fake_aio.eagain_left = 1 << 30;
  dp_job_t j = job(2, 10);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), -EAGAIN, "dp_engine_run");
  EXPECT_EQ(r.ops, 0, "ops counted");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding");
}

/* -ENOMEM from io_submit is the kernel short of memory, as transient as
 * -EAGAIN: retried while it passes, the probe's errno when it does not. */
static void test_enomem_retried_then_fails(void **state) {
  dp_engine_t *e = *state;
  fake_aio.nomem_left = 30; /* nothing in flight: waits and retries */
  dp_job_t j = job(8, 300);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run, brief -ENOMEM");
  EXPECT_EQ(r.ops, 300, "ops counted, brief -ENOMEM");
  EXPECT_EQ(fake_aio.nomem_left, 0, "-ENOMEM answers left");
  fake_aio.nomem_left = 1 << 30;
  EXPECT_EQ(dp_engine_run(e, &j, &r), -ENOMEM, "dp_engine_run, -ENOMEM");
  EXPECT_EQ(r.first_error, -ENOMEM, "first_error, -ENOMEM");
  EXPECT_EQ(r.ops, 0, "ops counted, -ENOMEM");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding, -ENOMEM");
}

/* One iocb per io_submit (a batch plugs the block queue until its end),
 * with -EINTR from both calls retried: the queue still fills to its
 * depth and the op budget is met exactly. */
static void test_one_iocb_per_submit_and_eintr(void **state) {
  dp_engine_t *e = *state;
  fake_aio.eintr_left = 20;
  fake_aio.submit_eintr_every = 5;
  dp_job_t j = job(32, 1000);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, 1000, "ops counted");
  EXPECT_EQ(fake_aio.max_batch, 1, "most iocbs handed to one io_submit");
  EXPECT_EQ(fake_aio.eintr_left, 0, "io_getevents -EINTR answers left");
  EXPECT_RANGE(fake_aio.submit_refused, 100, 1 << 30,
               "io_submit -EINTR answers");
  EXPECT_EQ(fake_aio.max_inflight, 32, "most I/Os in flight");
}

/* -EAGAIN and -ENOMEM from io_submit while I/O is in flight: the iocb waits
 * for the next completion and goes then; none is lost or doubled. */
static void test_submit_refused_in_flight_retried(void **state) {
  dp_engine_t *e = *state;
  fake_aio.submit_eagain_every = 7;
  fake_aio.submit_nomem_every = 11;
  fake_aio.events_max = 1; /* I/O is always in flight when a refusal comes */
  dp_job_t j = job(8, 1000);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, 1000, "ops counted");
  EXPECT_RANGE(fake_aio.submit_refused, 100, 1 << 30, "io_submit refusals");
  EXPECT_EQ(fake_aio.completed, fake_aio.submitted,
            "I/Os completed vs submitted");
  EXPECT_RANGE(fake_aio.submitted, 1008, 1016, "I/Os submitted");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding");
  EXPECT_EQ(r.first_error, 0, "first_error");
}

static void test_submit_error_ends_probe(void **state) {
  dp_engine_t *e = *state;
  fake_aio.submit_fail = -EBADF;
  dp_job_t j = job(4, 10);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), -EBADF, "dp_engine_run");
  EXPECT_EQ(r.first_error, -EBADF, "first_error");
  EXPECT_EQ(dp_engine_outstanding(e), 0, "outstanding");
}

/* A hung device: the probe returns (it does not join the hang), reports the
 * stall, refuses new probes while the kernel holds buffers, and recovers
 * once every outstanding I/O has completed. On the real clock: the default
 * the plugin runs with. */
static void test_stall_reported_and_fenced(void **state) {
  dp_engine_t *e = *state;
  fake_aio.mode = FAKE_AIO_HANG;
  dp_job_t j = job(4, 100);
  j.timeout_ns = 30000000; /* 30 ms */
  dp_result_t r;
  uint64_t t0 = dp_now_ns();
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  uint64_t took = dp_now_ns() - t0;
  EXPECT_EQ(r.stalled, 1, "stalled");
  EXPECT_EQ(r.err_timeout, 4, "err_timeout");
  EXPECT_EQ(dp_engine_outstanding(e), 4, "outstanding");
  /* not a timing test: "it returned" */
  EXPECT_RANGE(took, 30000000ull, 1999999999ull, "time to report, ns");

  dp_result_t r2;
  EXPECT_EQ(dp_engine_run(e, &j, &r2), -EBUSY, "dp_engine_run while stalled");
  EXPECT_EQ(dp_engine_reap(e, 5000000), 4, "dp_engine_reap, still hung");

  fake_aio.mode = FAKE_AIO_OK; /* the device answers again */
  EXPECT_EQ(dp_engine_reap(e, 1000000000ull), 0, "dp_engine_reap, recovered");
  j.timeout_ns = 5000000000ull;
  EXPECT_EQ(dp_engine_run(e, &j, &r2), 0, "dp_engine_run, recovered");
  EXPECT_EQ(r2.ops, 100, "ops counted, recovered");
  EXPECT_EQ(r2.stalled, 0, "stalled, recovered");
}

static void test_write_pattern_fills_fresh_data(void **state) {
  dp_engine_t *e = *state;
  fake_aio.mode = FAKE_AIO_HANG;
  dp_job_t j = job(2, 10);
  j.pattern = DP_PATTERN_RANDWRITE;
  j.timeout_ns = 10000000;
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(fake_aio.qn, 2, "I/Os held by the hung fake");
  EXPECT_EQ(fake_aio.q[0].cb->aio_lio_opcode, IO_CMD_PWRITE, "opcode");
  /* the two buffers hold different, non-zero data */
  assert_memory_not_equal(fake_aio.q[0].cb->u.c.buf, fake_aio.q[1].cb->u.c.buf,
                          8192);
  static const unsigned char zero[8192];
  assert_memory_not_equal(fake_aio.q[0].cb->u.c.buf, zero, 8192);
  /* The next write from the same slot differs in every 512-byte sector. */
  unsigned char before[8192];
  void *b0 = fake_aio.q[0].cb->u.c.buf;
  memcpy(before, b0, sizeof(before));
  fake_aio.mode = FAKE_AIO_OK;
  EXPECT_EQ(dp_engine_reap(e, 1000000000ull), 0, "dp_engine_reap");
  fake_aio.mode = FAKE_AIO_HANG;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run, second");
  for (int sec = 0; sec < 16; sec++)
    if (memcmp(before + sec * 512, (unsigned char *)b0 + sec * 512, 512) == 0)
      fail_msg("sector %d of a rewritten block: expected new data, saw the "
               "old",
               sec);
  fake_aio.mode = FAKE_AIO_OK;
  EXPECT_EQ(dp_engine_reap(e, 1000000000ull), 0, "dp_engine_reap, second");
}

static void test_syncwrite_sets_dsync(void **state) {
  dp_engine_t *e = *state;
  fake_aio.mode = FAKE_AIO_HANG;
  dp_job_t j = job(2, 10);
  j.pattern = DP_PATTERN_SYNCWRITE;
  j.timeout_ns = 10000000;
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(fake_aio.qn, 2, "I/Os held by the hung fake");
  for (unsigned i = 0; i < 2; i++) {
    EXPECT_EQ(fake_aio.q[i].cb->aio_lio_opcode, IO_CMD_PWRITE,
              "syncwrite opcode");
    EXPECT_EQ(fake_aio.q[i].cb->aio_rw_flags, RWF_DSYNC,
              "syncwrite aio_rw_flags");
  }
  fake_aio.mode = FAKE_AIO_OK;
  EXPECT_EQ(dp_engine_reap(e, 1000000000ull), 0, "dp_engine_reap");
  /* and a plain randwrite does not ask for durability */
  j.pattern = DP_PATTERN_RANDWRITE;
  fake_aio.mode = FAKE_AIO_HANG;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run, randwrite");
  EXPECT_EQ(fake_aio.q[0].cb->aio_rw_flags, 0, "randwrite aio_rw_flags");
  fake_aio.mode = FAKE_AIO_OK;
  EXPECT_EQ(dp_engine_reap(e, 1000000000ull), 0, "dp_engine_reap, randwrite");
}

static int resident(const void *p, size_t len) {
  long page = sysconf(_SC_PAGESIZE);
  unsigned char vec[64];
  uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page - 1);
  int n = 0;
  size_t pages = (len + (size_t)page - 1) / (size_t)page;
  if (pages > sizeof(vec))
    pages = sizeof(vec);
  EXPECT_EQ(mincore((void *)a, pages * (size_t)page, vec), 0, "mincore");
  for (size_t i = 0; i < pages; i++)
    n += vec[i] & 1;
  return n;
}

/* Each slot has its own buffer; buffers can be given back between probes. */
static void test_read_buffers_apart_and_released(void **state) {
  dp_engine_t *e = *state;
  fake_aio.mode = FAKE_AIO_HANG;
  dp_job_t j = job(8, 10);
  j.timeout_ns = 10000000;
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(fake_aio.qn, 8, "I/Os held by the hung fake");
  /* Reads in flight never share memory (checksumming filesystems verify
   * read data in the caller's buffer after the DMA). */
  for (unsigned i = 0; i < 8; i++)
    for (unsigned k = i + 1; k < 8; k++) {
      char *a = fake_aio.q[i].cb->u.c.buf, *b = fake_aio.q[k].cb->u.c.buf;
      if (!(a + fake_aio.q[i].cb->u.c.nbytes <= b ||
            b + fake_aio.q[k].cb->u.c.nbytes <= a))
        fail_msg("buffers of reads %u and %u: expected apart, saw %p and %p", i,
                 k, (void *)a, (void *)b);
    }
  void *buf = fake_aio.q[0].cb->u.c.buf;
  EXPECT_EQ(dp_engine_release_buffers(e), -EBUSY,
            "dp_engine_release_buffers with I/O in flight");
  fake_aio.mode = FAKE_AIO_OK;
  EXPECT_EQ(dp_engine_reap(e, 1000000000ull), 0, "dp_engine_reap");
  memset(buf, 0xab, 8192); /* what a device's DMA would do */
  EXPECT_EQ(resident(buf, 8192), 2, "resident pages after a read");
  EXPECT_EQ(dp_engine_release_buffers(e), 0, "dp_engine_release_buffers");
  EXPECT_EQ(resident(buf, 8192), 0, "resident pages after release");
}

static void test_invalid_jobs(void **state) {
  dp_engine_t *e = *state;
  dp_result_t r;
  dp_job_t j = job(64, 10); /* above max_qd 32 */
  EXPECT_EQ(dp_engine_run(e, &j, &r), -EINVAL, "queue depth 64 > max 32");
  j = job(1, 10);
  j.block_size = 1 << 20; /* above max block size */
  EXPECT_EQ(dp_engine_run(e, &j, &r), -EINVAL, "block 1 MiB > max 64 KiB");
  j = job(1, 0); /* no budget at all */
  EXPECT_EQ(dp_engine_run(e, &j, &r), -EINVAL, "no budget");
  j = job(1, 10);
  j.region_bytes = 4096; /* smaller than one block */
  EXPECT_EQ(dp_engine_run(e, &j, &r), -EINVAL, "region smaller than a block");
  EXPECT_EQ(fake_aio.submitted, 0, "I/Os submitted by invalid jobs");
}

static void test_pattern_names(void **state) {
  (void)state;
  dp_pattern_t p;
  for (int i = 0; i < DP_PATTERN_COUNT; i++) {
    EXPECT_EQ(dp_pattern_parse(dp_pattern_name((dp_pattern_t)i), &p), 0,
              "dp_pattern_parse of a pattern's own name");
    EXPECT_EQ(p, i, "pattern parsed back");
  }
  EXPECT_EQ(dp_pattern_parse("randrw", &p), -EINVAL, "dp_pattern_parse randrw");
  if (dp_pattern_name(DP_PATTERN_COUNT) != NULL)
    fail_msg("name of DP_PATTERN_COUNT: expected NULL, saw \"%s\"",
             dp_pattern_name(DP_PATTERN_COUNT));
  EXPECT_EQ(dp_pattern_writes(DP_PATTERN_SEQWRITE), 1, "seqwrite writes");
  EXPECT_EQ(dp_pattern_writes(DP_PATTERN_SEQREAD), 0, "seqread writes");
}

/* Runs `ops` QD1 reads with polling bounded by poll_ns on a device whose
 * every io_getevents first takes delay_ns, counting the polls and waits. */
static void run_qd1(dp_engine_t *e, uint64_t poll_ns, long delay_ns,
                    uint64_t ops) {
  dp_engine_set_poll(e, poll_ns);
  fake_aio.delay_ns = delay_ns;
  fake_aio.getevents_polls = fake_aio.getevents_waits = 0;
  dp_job_t j = job(1, ops);
  dp_result_t r;
  EXPECT_EQ(dp_engine_run(e, &j, &r), 0, "dp_engine_run");
  EXPECT_EQ(r.ops, ops, "ops counted");
}

/* A fast device (the fake completes at once): after the first wait, which
 * has nothing to go by, every wait polls and none sleeps. A device slower
 * than the poll bound (200 us a wait against 64 us) is never polled:
 * polling would only burn CPU before the same sleep. Neither is any device
 * when polling is off. */
static void test_poll_only_fast_devices(void **state) {
  dp_engine_t *e = *state;
  run_qd1(e, 64000, 0, 200);
  EXPECT_EQ(fake_aio.getevents_waits, 1, "waits, fast device");
  EXPECT_EQ(fake_aio.getevents_polls, 200, "polls, fast device");
  run_qd1(e, 64000, 200000, 20);
  EXPECT_EQ(fake_aio.getevents_waits, 21, "waits, slow device");
  EXPECT_EQ(fake_aio.getevents_polls, 0, "polls, slow device");
  run_qd1(e, 0, 0, 200);
  EXPECT_EQ(fake_aio.getevents_waits, 201, "waits, polling off");
  EXPECT_EQ(fake_aio.getevents_polls, 0, "polls, polling off");
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_setup_failure_is_returned),
      cmocka_unit_test(test_bad_open_arguments),
      cmocka_unit_test(test_pattern_names),
      T(test_closed_loop_keeps_qd_in_flight),
      T(test_duration_window),
      T(test_stop_flag_ends_probe),
      T(test_broken_context_fenced),
      T(test_offsets_aligned_and_in_region),
      T(test_eio_completions_counted),
      T(test_some_eio_rest_counted),
      T(test_short_transfers_counted),
      T(test_short_writes_counted),
      T(test_enospc_counted_apart),
      T(test_eagain_storm_retried),
      T(test_eagain_forever_fails),
      T(test_enomem_retried_then_fails),
      T(test_one_iocb_per_submit_and_eintr),
      T(test_submit_refused_in_flight_retried),
      T(test_submit_error_ends_probe),
      T(test_stall_reported_and_fenced),
      T(test_write_pattern_fills_fresh_data),
      T(test_syncwrite_sets_dsync),
      T(test_read_buffers_apart_and_released),
      T(test_invalid_jobs),
      T(test_poll_only_fast_devices),
  };
  return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
