/*
 * test_engine.c - the probe engine's error paths, with libaio replaced by a
 * fake kernel through -Wl,--wrap (io_setup, io_submit, io_getevents,
 * io_destroy). These are the cases a real device cannot produce on demand:
 * EIO and short completions, -EAGAIN and -EINTR storms, partial submits, a
 * context that fails to set up, and an I/O that never completes. The real
 * path is covered by tests/loop_throttle.sh on a real loop device.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libaio.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "engine.h"

/* ---- the fake kernel ---------------------------------------------------- */

enum mode { OK, EIO_ALL, SHORT_ALL, HANG, EIO_EVERY_3RD };
static struct {
  enum mode mode;
  int setup_rc;
  int eagain_left; /* io_submit answers -EAGAIN this many times */
  int eintr_left;  /* io_getevents answers -EINTR this many times */
  long submit_max; /* accept at most this many iocbs per call; 0 = all */
  int submit_fail; /* io_submit fails with this errno (negative) */
  struct iocb *q[1024];
  unsigned qn;
  unsigned long submitted, completed, destroyed;
  size_t max_inflight; /* highest qn seen */
} fk;

int __wrap_io_setup(int nr, io_context_t *ctx) {
  (void)nr;
  if (fk.setup_rc)
    return fk.setup_rc;
  *ctx = (io_context_t)0x1;
  return 0;
}

int __wrap_io_destroy(io_context_t ctx) {
  (void)ctx;
  fk.destroyed++;
  return 0;
}

int __wrap_io_submit(io_context_t ctx, long n, struct iocb **cbs) {
  (void)ctx;
  if (fk.submit_fail)
    return fk.submit_fail;
  if (fk.eagain_left > 0) {
    fk.eagain_left--;
    return -EAGAIN;
  }
  if (fk.submit_max && n > fk.submit_max)
    n = fk.submit_max;
  for (long i = 0; i < n; i++)
    fk.q[fk.qn++] = cbs[i];
  if (fk.qn > fk.max_inflight)
    fk.max_inflight = fk.qn;
  fk.submitted += (unsigned long)n;
  return (int)n;
}

static void nap(const struct timespec *ts) {
  struct timespec t = {0, 2000000}; /* 2 ms, or less if asked */
  if (ts && ts->tv_sec == 0 && ts->tv_nsec < t.tv_nsec)
    t = *ts;
  nanosleep(&t, NULL);
}

int __wrap_io_getevents(io_context_t ctx, long min_nr, long nr,
                        struct io_event *ev, struct timespec *ts) {
  (void)ctx;
  (void)min_nr;
  if (fk.eintr_left > 0) {
    fk.eintr_left--;
    return -EINTR;
  }
  if (fk.mode == HANG || fk.qn == 0) {
    nap(ts);
    return 0;
  }
  long n = 0;
  while (n < nr && fk.qn > 0) {
    struct iocb *cb = fk.q[0];
    memmove(fk.q, fk.q + 1, (fk.qn - 1) * sizeof(fk.q[0]));
    fk.qn--;
    long bytes = (long)cb->u.c.nbytes;
    long res = bytes;
    fk.completed++;
    if (fk.mode == EIO_ALL ||
        (fk.mode == EIO_EVERY_3RD && fk.completed % 3 == 0))
      res = -EIO;
    else if (fk.mode == SHORT_ALL)
      res = bytes / 2;
    memset(&ev[n], 0, sizeof(ev[n]));
    ev[n].obj = cb;
    ev[n].res = (unsigned long)res; /* as the kernel does: -errno in a ulong */
    n++;
  }
  return (int)n;
}

/* ---- fixtures ----------------------------------------------------------- */

static int setup(void **state) {
  memset(&fk, 0, sizeof(fk));
  dp_engine_t *e = NULL;
  int rc = dp_engine_open(&e, 0, 4096, 32, 65536);
  if (rc != 0)
    return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  dp_engine_close(*state);
  assert_int_equal(fk.destroyed, 1);
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

/* ---- tests -------------------------------------------------------------- */

static void test_setup_failure_is_returned(void **state) {
  (void)state;
  memset(&fk, 0, sizeof(fk));
  fk.setup_rc = -EAGAIN; /* aio-max-nr exhausted */
  dp_engine_t *e = (dp_engine_t *)0x1;
  assert_int_equal(dp_engine_open(&e, 0, 4096, 8, 8192), -EAGAIN);
  assert_null(e);
  assert_int_equal(fk.destroyed, 0);
}

static void test_bad_open_arguments(void **state) {
  (void)state;
  dp_engine_t *e;
  assert_int_equal(dp_engine_open(&e, 0, 3000, 8, 8192), -EINVAL);
  assert_int_equal(dp_engine_open(&e, 0, 4096, 0, 8192), -EINVAL);
  assert_int_equal(dp_engine_open(&e, 0, 4096, 257, 8192), -EINVAL);
  assert_int_equal(dp_engine_open(&e, 0, 4096, 8, 6000), -EINVAL);
  assert_int_equal(dp_engine_open(&e, -1, 4096, 8, 8192), -EINVAL);
}

static void test_closed_loop_keeps_qd_in_flight(void **state) {
  dp_engine_t *e = *state;
  dp_job_t j = job(16, 2000);
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(r.ops, 2000);
  assert_int_equal(r.bytes, 2000ull * 8192);
  assert_int_equal(fk.max_inflight, 16);
  /* warm-up (16) + counted (2000) + drained (up to 16) */
  assert_true(fk.submitted >= 2016 && fk.submitted <= 2032);
  assert_int_equal(dp_engine_outstanding(e), 0);
  assert_int_equal(r.err_io + r.err_short + r.err_timeout, 0);
  assert_int_equal(r.hist->count, 2000);
  /* the live counter sees every completion, warm-up and drain included */
  dp_io_counter_t c = {0};
  j.counter = &c;
  fk.completed = 0;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(atomic_load(&c.ios), fk.completed);
  assert_int_equal(atomic_load(&c.bytes), fk.completed * 8192);
  assert_true(atomic_load(&c.ios) > 2000);
  assert_true(r.lat_p99_s >= r.lat_p50_s && r.lat_max_s >= r.lat_p99_s);
}

static void test_offsets_aligned_and_in_region(void **state) {
  dp_engine_t *e = *state;
  dp_job_t j = job(4, 500);
  j.region_offset = 1 << 20;
  j.region_bytes = 1 << 20;
  dp_result_t r;
  fk.mode = HANG; /* keep the first iocbs in the queue to look at them */
  j.timeout_ns = 20000000;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(fk.qn, 4);
  for (unsigned i = 0; i < fk.qn; i++) {
    long long off = fk.q[i]->u.c.offset;
    assert_int_equal(off % 8192, 0);
    assert_true(off >= (1 << 20) && off + 8192 <= (2 << 20));
    assert_int_equal((uintptr_t)fk.q[i]->u.c.buf % 4096, 0);
    assert_int_equal(fk.q[i]->aio_lio_opcode, IO_CMD_PREAD);
  }
  fk.mode = OK;
  assert_int_equal(dp_engine_reap(e, 1000000000ull), 0);
}

static void test_eio_completions_counted(void **state) {
  dp_engine_t *e = *state;
  fk.mode = EIO_ALL;
  dp_job_t j = job(4, 100);
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(r.ops, 0);
  assert_true(r.err_io >= 16); /* stops after MAX_ERRORS, does not spin */
  assert_true(r.err_io < 40);
  assert_int_equal(r.first_error, -EIO);
  assert_int_equal(r.stalled, 0);
  assert_int_equal(dp_engine_outstanding(e), 0);
}

static void test_some_eio_rest_counted(void **state) {
  dp_engine_t *e = *state;
  fk.mode = EIO_EVERY_3RD;
  dp_job_t j = job(1, 10);
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(r.ops, 10);
  assert_true(r.err_io >= 4);
  assert_int_equal(r.first_error, -EIO);
}

static void test_short_transfers_counted(void **state) {
  dp_engine_t *e = *state;
  fk.mode = SHORT_ALL;
  dp_job_t j = job(2, 50);
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(r.ops, 0);
  assert_true(r.err_short >= 16);
  assert_int_equal(r.err_io, 0);
  assert_int_equal(r.first_error, 0);
}

static void test_short_writes_counted(void **state) {
  dp_engine_t *e = *state;
  fk.mode = SHORT_ALL; /* a full disk or a dying one: fewer bytes written */
  dp_job_t j = job(4, 50);
  j.pattern = DP_PATTERN_SEQWRITE;
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(r.ops, 0);
  assert_true(r.err_short >= 16);
  assert_int_equal(r.err_io, 0);
  assert_int_equal(dp_engine_outstanding(e), 0);
}

static void test_eagain_storm_retried(void **state) {
  dp_engine_t *e = *state;
  fk.eagain_left = 50; /* nothing in flight: the engine waits and retries */
  dp_job_t j = job(8, 300);
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(r.ops, 300);
  assert_int_equal(fk.eagain_left, 0);
}

static void test_eagain_forever_fails(void **state) {
  dp_engine_t *e = *state;
  fk.eagain_left = 1 << 30;
  dp_job_t j = job(2, 10);
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), -EAGAIN);
  assert_int_equal(r.ops, 0);
  assert_int_equal(dp_engine_outstanding(e), 0);
}

static void test_partial_submit_and_eintr(void **state) {
  dp_engine_t *e = *state;
  fk.submit_max = 1;
  fk.eintr_left = 20;
  dp_job_t j = job(32, 1000);
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(r.ops, 1000);
  assert_int_equal(fk.eintr_left, 0);
  assert_int_equal(fk.max_inflight, 32);
}

static void test_submit_error_ends_probe(void **state) {
  dp_engine_t *e = *state;
  fk.submit_fail = -EBADF;
  dp_job_t j = job(4, 10);
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), -EBADF);
  assert_int_equal(r.first_error, -EBADF);
  assert_int_equal(dp_engine_outstanding(e), 0);
}

/* A hung device: the probe returns (it does not join the hang), reports the
 * stall, refuses new probes while the kernel holds buffers, and recovers
 * once every outstanding I/O has completed. */
static void test_stall_reported_and_fenced(void **state) {
  dp_engine_t *e = *state;
  fk.mode = HANG;
  dp_job_t j = job(4, 100);
  j.timeout_ns = 30000000; /* 30 ms */
  dp_result_t r;
  uint64_t t0 = dp_now_ns();
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  uint64_t took = dp_now_ns() - t0;
  assert_int_equal(r.stalled, 1);
  assert_int_equal(r.err_timeout, 4);
  assert_int_equal(dp_engine_outstanding(e), 4);
  assert_true(took >= 30000000ull);
  assert_true(took < 2000000000ull); /* not a timing test: "it returned" */

  dp_result_t r2;
  assert_int_equal(dp_engine_run(e, &j, &r2), -EBUSY);
  assert_int_equal(dp_engine_reap(e, 5000000), 4); /* still hung */

  fk.mode = OK; /* the device answers again */
  assert_int_equal(dp_engine_reap(e, 1000000000ull), 0);
  j.timeout_ns = 5000000000ull;
  assert_int_equal(dp_engine_run(e, &j, &r2), 0);
  assert_int_equal(r2.ops, 100);
  assert_int_equal(r2.stalled, 0);
}

static void test_write_pattern_fills_fresh_data(void **state) {
  dp_engine_t *e = *state;
  fk.mode = HANG;
  dp_job_t j = job(2, 10);
  j.pattern = DP_PATTERN_RANDWRITE;
  j.timeout_ns = 10000000;
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(fk.qn, 2);
  assert_int_equal(fk.q[0]->aio_lio_opcode, IO_CMD_PWRITE);
  /* the two buffers hold different, non-zero data */
  assert_memory_not_equal(fk.q[0]->u.c.buf, fk.q[1]->u.c.buf, 8192);
  static const unsigned char zero[8192];
  assert_memory_not_equal(fk.q[0]->u.c.buf, zero, 8192);
  /* The next write from the same slot differs in every 512-byte sector. */
  unsigned char before[8192];
  void *b0 = fk.q[0]->u.c.buf;
  memcpy(before, b0, sizeof(before));
  fk.mode = OK;
  assert_int_equal(dp_engine_reap(e, 1000000000ull), 0);
  fk.mode = HANG;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  for (int sec = 0; sec < 16; sec++)
    if (memcmp(before + sec * 512, (unsigned char *)b0 + sec * 512, 512) == 0)
      fail_msg("sector %d of a rewritten block is unchanged", sec);
  fk.mode = OK;
  assert_int_equal(dp_engine_reap(e, 1000000000ull), 0);
}

static void test_syncwrite_sets_dsync(void **state) {
  dp_engine_t *e = *state;
  fk.mode = HANG;
  dp_job_t j = job(2, 10);
  j.pattern = DP_PATTERN_SYNCWRITE;
  j.timeout_ns = 10000000;
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(fk.qn, 2);
  for (unsigned i = 0; i < 2; i++) {
    assert_int_equal(fk.q[i]->aio_lio_opcode, IO_CMD_PWRITE);
    assert_int_equal(fk.q[i]->aio_rw_flags, RWF_DSYNC);
  }
  fk.mode = OK;
  assert_int_equal(dp_engine_reap(e, 1000000000ull), 0);
  /* and a plain randwrite does not ask for durability */
  j.pattern = DP_PATTERN_RANDWRITE;
  fk.mode = HANG;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(fk.q[0]->aio_rw_flags, 0);
  fk.mode = OK;
  assert_int_equal(dp_engine_reap(e, 1000000000ull), 0);
}

static int resident(const void *p, size_t len) {
  long page = sysconf(_SC_PAGESIZE);
  unsigned char vec[64];
  uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page - 1);
  int n = 0;
  size_t pages = (len + (size_t)page - 1) / (size_t)page;
  if (pages > sizeof(vec))
    pages = sizeof(vec);
  assert_int_equal(mincore((void *)a, pages * (size_t)page, vec), 0);
  for (size_t i = 0; i < pages; i++)
    n += vec[i] & 1;
  return n;
}

/* Each slot has its own buffer; buffers can be given back between probes. */
static void test_read_buffers_apart_and_released(void **state) {
  dp_engine_t *e = *state;
  fk.mode = HANG;
  dp_job_t j = job(8, 10);
  j.timeout_ns = 10000000;
  dp_result_t r;
  assert_int_equal(dp_engine_run(e, &j, &r), 0);
  assert_int_equal(fk.qn, 8);
  /* Reads in flight never share memory (checksumming filesystems verify
   * read data in the caller's buffer after the DMA). */
  for (unsigned i = 0; i < 8; i++)
    for (unsigned k = i + 1; k < 8; k++) {
      char *a = fk.q[i]->u.c.buf, *b = fk.q[k]->u.c.buf;
      assert_true(a + fk.q[i]->u.c.nbytes <= b || b + fk.q[k]->u.c.nbytes <= a);
    }
  void *buf = fk.q[0]->u.c.buf;
  assert_int_equal(dp_engine_release_buffers(e), -EBUSY); /* I/O in flight */
  fk.mode = OK;
  assert_int_equal(dp_engine_reap(e, 1000000000ull), 0);
  memset(buf, 0xab, 8192); /* what a device's DMA would do */
  assert_int_equal(resident(buf, 8192), 2);
  assert_int_equal(dp_engine_release_buffers(e), 0);
  assert_int_equal(resident(buf, 8192), 0);
}

static void test_invalid_jobs(void **state) {
  dp_engine_t *e = *state;
  dp_result_t r;
  dp_job_t j = job(64, 10); /* above max_qd 32 */
  assert_int_equal(dp_engine_run(e, &j, &r), -EINVAL);
  j = job(1, 10);
  j.block_size = 1 << 20; /* above max block size */
  assert_int_equal(dp_engine_run(e, &j, &r), -EINVAL);
  j = job(1, 0); /* no budget at all */
  assert_int_equal(dp_engine_run(e, &j, &r), -EINVAL);
  j = job(1, 10);
  j.region_bytes = 4096; /* smaller than one block */
  assert_int_equal(dp_engine_run(e, &j, &r), -EINVAL);
  assert_int_equal(fk.submitted, 0);
}

static void test_pattern_names(void **state) {
  (void)state;
  dp_pattern_t p;
  for (int i = 0; i < DP_PATTERN_COUNT; i++) {
    assert_int_equal(dp_pattern_parse(dp_pattern_name((dp_pattern_t)i), &p), 0);
    assert_int_equal(p, i);
  }
  assert_int_equal(dp_pattern_parse("randrw", &p), -EINVAL);
  assert_null(dp_pattern_name(DP_PATTERN_COUNT));
  assert_true(dp_pattern_writes(DP_PATTERN_SEQWRITE));
  assert_false(dp_pattern_writes(DP_PATTERN_SEQREAD));
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_setup_failure_is_returned),
      cmocka_unit_test(test_bad_open_arguments),
      cmocka_unit_test(test_pattern_names),
      T(test_closed_loop_keeps_qd_in_flight),
      T(test_offsets_aligned_and_in_region),
      T(test_eio_completions_counted),
      T(test_some_eio_rest_counted),
      T(test_short_transfers_counted),
      T(test_short_writes_counted),
      T(test_eagain_storm_retried),
      T(test_eagain_forever_fails),
      T(test_partial_submit_and_eintr),
      T(test_submit_error_ends_probe),
      T(test_stall_reported_and_fenced),
      T(test_write_pattern_fills_fresh_data),
      T(test_syncwrite_sets_dsync),
      T(test_read_buffers_apart_and_released),
      T(test_invalid_jobs),
  };
  return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
