/*
 * fake_aio.h - a fake kernel AIO for the cmocka suites that link it with
 * -Wl,--wrap=io_setup,--wrap=io_submit,--wrap=io_getevents,--wrap=io_destroy
 * (Makefile.am's AIO_WRAP): test_engine, test_sched and test_monitor.
 *
 * An io_submit queues its iocbs; an io_getevents completes those of its own
 * context, oldest first, with the whole transfer unless a knob says
 * otherwise. With nothing to complete (or FAKE_AIO_HANG) it sleeps at most
 * 2 ms (less when the timeout is shorter) and returns 0. A fake clock,
 * fake_aio_now (ns), moves only when a knob says so; fake_aio_clock reads
 * it (a dp_clock_fn). Every knob is zero (off) after fake_aio_reset; a
 * suite sets the ones it uses. The fields are guarded by fake_aio.lock
 * where several threads run (the scheduler's workers): fake_aio_set_mode
 * and fake_aio_submitted take it; a single-threaded suite may set them
 * directly.
 */
#ifndef DP_TEST_FAKE_AIO_H
#define DP_TEST_FAKE_AIO_H

#include <libaio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum fake_aio_mode {
  FAKE_AIO_OK,            /* every I/O completes whole */
  FAKE_AIO_EIO_ALL,       /* every I/O completes with -EIO */
  FAKE_AIO_SHORT_ALL,     /* every I/O transfers half its bytes */
  FAKE_AIO_HANG,          /* nothing completes; io_getevents naps */
  FAKE_AIO_EIO_EVERY_3RD, /* every third completion -EIO */
  FAKE_AIO_ENOSPC_ALL,    /* every I/O completes with -ENOSPC */
  FAKE_AIO_DSTATE,        /* io_getevents blocks, ignoring its timeout, until
                             the mode changes (a thread stuck in the kernel) */
};

#define FAKE_AIO_QUEUE 4096

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* broadcast at each mode change */
  enum fake_aio_mode mode;
  int setup_rc;    /* io_setup answers this when non-zero */
  int eagain_left; /* io_submit answers -EAGAIN this many times */
  int nomem_left;  /* then -ENOMEM this many times */
  int eintr_left;  /* io_getevents answers -EINTR this many times */
  /* io_submit call k (1-based) answers -EINTR / -EAGAIN / -ENOMEM when k is
   * a multiple of these; 0 = never */
  unsigned submit_eintr_every, submit_eagain_every, submit_nomem_every;
  unsigned long submit_calls, submit_refused;
  int submit_fail; /* io_submit fails with this errno (negative) */
  /* io_getevents fails with this errno once this many I/Os have completed */
  int getevents_fail;
  unsigned long fail_after;
  /* The fake clock: tick_ns more at each io_getevents that completes I/O,
   * advance_ns more at each completion, and (wait_advances_clock) the
   * whole timeout at one that waits for nothing. */
  uint64_t tick_ns, advance_ns;
  int wait_advances_clock;
  long delay_ns;       /* a real wait in each io_getevents before it completes
                          anything: a measurable latency (< 1 s) */
  long events_max;     /* complete at most this many per call; 0 = all queued */
  unsigned short_left; /* completions to cut short (0 bytes: EOF) */
  /* Set *stop as the stop_at-th completion is returned. */
  atomic_int *stop;
  unsigned long stop_at, submitted_at_stop;
  /* Called with the lock held at each io_submit before anything else. */
  void (*on_submit)(void);
  struct {
    io_context_t ctx;
    struct iocb *cb;
  } q[FAKE_AIO_QUEUE];
  unsigned qn;
  unsigned long submitted, completed, destroyed;
  /* io_getevents calls with a zero timeout (a poll) and with any other */
  unsigned long getevents_polls, getevents_waits;
  uintptr_t next_ctx;
  int in_getevents;        /* a thread is blocked in FAKE_AIO_DSTATE */
  size_t max_inflight;     /* highest qn seen */
  long max_batch;          /* most iocbs handed to one io_submit */
  uint64_t last_submit_ns; /* fake clock when an iocb was last accepted */
} fake_aio_t;

extern fake_aio_t fake_aio;
extern uint64_t fake_aio_now; /* starts at 1000 s; 0 is no special value */

/* fake_aio_now, as a clock for dp_engine_set_clock or dp_sched_conf_t. */
uint64_t fake_aio_clock(void *arg);

/* Every knob and counter back to zero (the lock, the clock and the
 * contexts handed out stay); queued iocbs are forgotten. */
void fake_aio_reset(void);

/* The mode, under the lock, waking a thread held in FAKE_AIO_DSTATE. */
void fake_aio_set_mode(enum fake_aio_mode m);

/* A real wait of ns in each io_getevents (0: none), under the lock. */
void fake_aio_set_delay(long ns);

/* The iocbs accepted so far, under the lock. */
unsigned long fake_aio_submitted(void);

#endif /* DP_TEST_FAKE_AIO_H */
