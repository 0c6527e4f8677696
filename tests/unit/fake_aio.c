/* fake_aio.c - the fake kernel AIO of the cmocka suites; see fake_aio.h. */
#define _GNU_SOURCE
#include "fake_aio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

fake_aio_t fake_aio = {.lock = PTHREAD_MUTEX_INITIALIZER,
                       .cond = PTHREAD_COND_INITIALIZER};
uint64_t fake_aio_now = 1000 * DP_NS_PER_S;

uint64_t fake_aio_clock(void *arg) {
  (void)arg;
  return __atomic_load_n(&fake_aio_now, __ATOMIC_SEQ_CST);
}

static void clock_add(uint64_t ns) {
  __atomic_add_fetch(&fake_aio_now, ns, __ATOMIC_SEQ_CST);
}

void fake_aio_reset(void) {
  pthread_mutex_lock(&fake_aio.lock);
  uintptr_t next_ctx = fake_aio.next_ctx;
  size_t keep = offsetof(fake_aio_t, mode);
  memset((char *)&fake_aio + keep, 0, sizeof(fake_aio) - keep);
  fake_aio.next_ctx = next_ctx;
  pthread_cond_broadcast(&fake_aio.cond);
  pthread_mutex_unlock(&fake_aio.lock);
}

void fake_aio_set_mode(enum fake_aio_mode m) {
  pthread_mutex_lock(&fake_aio.lock);
  fake_aio.mode = m;
  pthread_cond_broadcast(&fake_aio.cond);
  pthread_mutex_unlock(&fake_aio.lock);
}

void fake_aio_set_delay(long ns) {
  pthread_mutex_lock(&fake_aio.lock);
  fake_aio.delay_ns = ns;
  pthread_mutex_unlock(&fake_aio.lock);
}

unsigned long fake_aio_submitted(void) {
  pthread_mutex_lock(&fake_aio.lock);
  unsigned long n = fake_aio.submitted;
  pthread_mutex_unlock(&fake_aio.lock);
  return n;
}

int __wrap_io_setup(int nr, io_context_t *ctx);
int __wrap_io_destroy(io_context_t ctx);
int __wrap_io_submit(io_context_t ctx, long n, struct iocb **cbs);
int __wrap_io_getevents(io_context_t ctx, long min_nr, long nr,
                        struct io_event *ev, struct timespec *ts);

int __wrap_io_setup(int nr, io_context_t *ctx) {
  (void)nr;
  pthread_mutex_lock(&fake_aio.lock);
  int rc = fake_aio.setup_rc;
  if (rc == 0)
    *ctx = (io_context_t)(++fake_aio.next_ctx);
  pthread_mutex_unlock(&fake_aio.lock);
  return rc;
}

int __wrap_io_destroy(io_context_t ctx) {
  (void)ctx;
  pthread_mutex_lock(&fake_aio.lock);
  fake_aio.destroyed++;
  pthread_mutex_unlock(&fake_aio.lock);
  return 0;
}

static int every(unsigned long k, unsigned n) { return n && k % n == 0; }

/* io_submit's answer before it queues anything: 0, or what it refuses with. */
static int refusal(void) {
  if (fake_aio.submit_fail)
    return fake_aio.submit_fail;
  if (fake_aio.eagain_left > 0) {
    fake_aio.eagain_left--;
    return -EAGAIN;
  }
  if (fake_aio.nomem_left > 0) {
    fake_aio.nomem_left--;
    return -ENOMEM;
  }
  static const int refused[3] = {-EINTR, -EAGAIN, -ENOMEM};
  const unsigned period[3] = {fake_aio.submit_eintr_every,
                              fake_aio.submit_eagain_every,
                              fake_aio.submit_nomem_every};
  for (int i = 0; i < 3; i++)
    if (every(fake_aio.submit_calls, period[i])) {
      fake_aio.submit_refused++;
      return refused[i];
    }
  return 0;
}

int __wrap_io_submit(io_context_t ctx, long n, struct iocb **cbs) {
  pthread_mutex_lock(&fake_aio.lock);
  if (fake_aio.on_submit != NULL)
    fake_aio.on_submit();
  fake_aio.submit_calls++;
  if (n > fake_aio.max_batch)
    fake_aio.max_batch = n;
  int rc = refusal();
  if (rc != 0) {
    pthread_mutex_unlock(&fake_aio.lock);
    return rc;
  }
  if (n < 0 || (size_t)n > FAKE_AIO_QUEUE - fake_aio.qn) {
    fprintf(stderr, "fake_aio: more than %d iocbs queued\n", FAKE_AIO_QUEUE);
    abort();
  }
  for (long i = 0; i < n; i++) {
    fake_aio.q[fake_aio.qn].ctx = ctx;
    fake_aio.q[fake_aio.qn++].cb = cbs[i];
  }
  if (fake_aio.qn > fake_aio.max_inflight)
    fake_aio.max_inflight = fake_aio.qn;
  fake_aio.submitted += (unsigned long)n;
  fake_aio.last_submit_ns = fake_aio_clock(NULL);
  pthread_mutex_unlock(&fake_aio.lock);
  return (int)n;
}

/* Waiting for nothing (called without the lock): at most 2 ms, less when
 * the timeout is shorter; the fake clock waits the whole timeout when
 * wait_advances_clock is set. */
static void nap(const struct timespec *ts, int advance) {
  struct timespec t = {0, 2000000};
  if (ts && ts->tv_sec == 0 && ts->tv_nsec < t.tv_nsec)
    t = *ts;
  nanosleep(&t, NULL);
  if (ts && advance)
    clock_add((uint64_t)ts->tv_sec * DP_NS_PER_S + (uint64_t)ts->tv_nsec);
}

static int queued_for(io_context_t ctx) {
  for (unsigned i = 0; i < fake_aio.qn; i++)
    if (fake_aio.q[i].ctx == ctx)
      return 1;
  return 0;
}

/* What an I/O of cb completes with, as the kernel puts it: -errno in a
 * ulong, else the bytes transferred. */
static long result(const struct iocb *cb) {
  long bytes = (long)cb->u.c.nbytes;
  if (fake_aio.short_left > 0) {
    fake_aio.short_left--;
    return 0;
  }
  switch (fake_aio.mode) {
  case FAKE_AIO_EIO_ALL:
    return -EIO;
  case FAKE_AIO_EIO_EVERY_3RD:
    return fake_aio.completed % 3 == 0 ? -EIO : bytes;
  case FAKE_AIO_SHORT_ALL:
    return bytes / 2;
  case FAKE_AIO_ENOSPC_ALL:
    return -ENOSPC;
  default:
    return bytes;
  }
}

int __wrap_io_getevents(io_context_t ctx, long min_nr, long nr,
                        struct io_event *ev, struct timespec *ts) {
  (void)min_nr;
  pthread_mutex_lock(&fake_aio.lock);
  if (ts != NULL && ts->tv_sec == 0 && ts->tv_nsec == 0)
    fake_aio.getevents_polls++;
  else
    fake_aio.getevents_waits++;
  if (fake_aio.eintr_left > 0) {
    fake_aio.eintr_left--;
    pthread_mutex_unlock(&fake_aio.lock);
    return -EINTR;
  }
  if (fake_aio.getevents_fail && fake_aio.completed >= fake_aio.fail_after) {
    int rc = fake_aio.getevents_fail;
    pthread_mutex_unlock(&fake_aio.lock);
    return rc;
  }
  while (fake_aio.mode == FAKE_AIO_DSTATE) { /* ignores the timeout */
    fake_aio.in_getevents = 1;
    pthread_cond_broadcast(&fake_aio.cond);
    pthread_cond_wait(&fake_aio.cond, &fake_aio.lock);
  }
  int advance = fake_aio.wait_advances_clock;
  if (fake_aio.mode == FAKE_AIO_HANG) {
    pthread_mutex_unlock(&fake_aio.lock);
    nap(ts, advance);
    return 0;
  }
  long delay = fake_aio.delay_ns;
  if (delay > 0) {
    pthread_mutex_unlock(&fake_aio.lock);
    nanosleep(&(struct timespec){0, delay}, NULL);
    pthread_mutex_lock(&fake_aio.lock);
  }
  if (!queued_for(ctx)) {
    pthread_mutex_unlock(&fake_aio.lock);
    nap(ts, advance);
    return 0;
  }
  if (fake_aio.events_max && nr > fake_aio.events_max)
    nr = fake_aio.events_max;
  clock_add(fake_aio.tick_ns);
  long n = 0;
  for (unsigned i = 0; i < fake_aio.qn && n < nr;) {
    if (fake_aio.q[i].ctx != ctx) {
      i++;
      continue;
    }
    struct iocb *cb = fake_aio.q[i].cb;
    memmove(&fake_aio.q[i], &fake_aio.q[i + 1],
            (fake_aio.qn - i - 1) * sizeof(fake_aio.q[0]));
    fake_aio.qn--;
    fake_aio.completed++;
    memset(&ev[n], 0, sizeof(ev[n]));
    ev[n].obj = cb;
    ev[n].res = (unsigned long)result(cb);
    n++;
    clock_add(fake_aio.advance_ns);
    if (fake_aio.stop && fake_aio.completed == fake_aio.stop_at) {
      atomic_store(fake_aio.stop, 1);
      fake_aio.submitted_at_stop = fake_aio.submitted;
    }
  }
  pthread_mutex_unlock(&fake_aio.lock);
  return (int)n;
}
