/*
 * test_sched.c - the probe scheduler (src/scheduler.c) driven step by step
 * with a fake clock, over real probe files and a fake kernel AIO (libaio
 * replaced through -Wl,--wrap: tests/unit/fake_aio.c): grouping by disk,
 * splay bounds, pacing arithmetic, the results queue, a round that
 * overran, no probe while a disk is stalled and its recovery, a Timeout
 * too short for the disk said once instead of flapping, layouts splayed
 * over the first interval, a Device that appears after start, shutdown with a
 * worker stuck in the kernel, and workers that block the host's signals. The
 * real path (the real collectd on throttled loop devices) is
 * tests/shell/collectd_*.sh.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "events.h"
#include "fake_aio.h"
#include "helpers.h"
#include "scheduler.h"

/* ---- the fake kernel (tests/unit/fake_aio.c) ---------------------------- */

static char realloc_path[300]; /* re-allocated at the next submit, then "" */

/* What an administrator's tool does to a live file: ftruncate(0), then
 * posix_fallocate over its size (unwritten extents, the header zeros). */
static void reallocate(const char *path) {
  int fd = open(path, O_RDWR);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || ftruncate(fd, 0) < 0 ||
      posix_fallocate(fd, 0, st.st_size) != 0)
    fail_msg("cannot re-allocate %s", path);
  close(fd);
}

/* fake_aio's on_submit (the lock held): mid-round, between the probe's
 * I/Os. */
static void reallocate_pending(void) {
  if (realloc_path[0]) {
    reallocate(realloc_path);
    realloc_path[0] = '\0';
  }
}

/* ---- events seen ----------------------------------------------------------
 */

static struct {
  pthread_mutex_t lock;
  unsigned n[DP_SCHED_DISCARDED + 1];
  uint64_t stall_ns;
  char last_msg[256];
  char line[DP_SCHED_DISCARDED + 1][1024]; /* the last log line of each */
  uint64_t laid_at[4];                     /* fake clock, per target */
} evs = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_event(const dp_sched_event_t *ev, void *arg) {
  (void)arg;
  pthread_mutex_lock(&evs.lock);
  evs.n[ev->kind]++;
  dp_event_log_line(ev, evs.line[ev->kind], sizeof(evs.line[0]));
  if (ev->kind == DP_SCHED_OPENED && ev->laid_out && ev->target < 4)
    evs.laid_at[ev->target] = fake_aio_now;
  if (ev->kind == DP_SCHED_STALL_ENDED)
    evs.stall_ns = ev->stall_ns;
  if (ev->msg)
    snprintf(evs.last_msg, sizeof(evs.last_msg), "%s", ev->msg);
  pthread_mutex_unlock(&evs.lock);
}

static unsigned seen(dp_sched_event_kind_t k) {
  pthread_mutex_lock(&evs.lock);
  unsigned n = evs.n[k];
  pthread_mutex_unlock(&evs.lock);
  return n;
}

/* ---- fixtures -------------------------------------------------------------
 */

static char tmpdir[64];

static int setup(void **state) {
  (void)state;
  fake_aio_reset();
  pthread_mutex_lock(&fake_aio.lock);
  realloc_path[0] = '\0';
  fake_aio.on_submit = reallocate_pending;
  pthread_mutex_unlock(&fake_aio.lock);
  memset(evs.n, 0, sizeof(evs.n));
  memset(evs.laid_at, 0, sizeof(evs.laid_at));
  evs.last_msg[0] = '\0';
  snprintf(tmpdir, sizeof(tmpdir), "/var/tmp/dp-test-sched.XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  fixture_remove(tmpdir);
  return 0;
}

/* A file target in tmpdir/sub (or a Device when device != 0) with one
 * probe of 4 I/Os at QD1. */
static dp_target_conf_t target(const char *name, const char *sub, int device,
                               const char *interval, const char *timeout) {
  dp_target_conf_t t;
  char err[256], path[256];
  dp_target_conf_init(&t, name);
  snprintf(path, sizeof(path), "%s/%s", tmpdir, sub);
  assert_int_equal(
      dp_target_conf_set(&t, device ? "Device" : "Path", path, err, 256), 0);
  if (!device)
    assert_int_equal(dp_target_conf_set(&t, "FileSize", "1M", err, 256), 0);
  assert_int_equal(dp_target_conf_set(&t, "ProbeInterval", interval, err, 256),
                   0);
  assert_int_equal(dp_target_conf_set(&t, "Timeout", timeout, err, 256), 0);
  dp_probe_conf_t p;
  dp_probe_conf_init(&p, "r");
  assert_int_equal(dp_probe_conf_set(&p, "BlockSize", "4k", err, 256), 0);
  assert_int_equal(dp_probe_conf_set(&p, "MaxOps", "4", err, 256), 0);
  assert_int_equal(dp_probe_conf_set(&p, "Duration", "0.5", err, 256), 0);
  assert_int_equal(dp_target_conf_add_probe(&t, &p, err, 256), 0);
  if (dp_target_conf_finish(&t, err, sizeof(err)) != 0)
    fail_msg("target conf refused: %s", err);
  return t;
}

static dp_sched_conf_t sconf(void) {
  dp_sched_conf_t c;
  dp_sched_conf_init(&c);
  c.splay = 0;
  c.now_ns = fake_aio_clock;
  c.on_event = on_event;
  return c;
}

#define S(x) ((uint64_t)(x)*DP_NS_PER_S)

/* ---- pure policy -----------------------------------------------------------
 */

/* DutyCycle shortens the probes; the interval is never stretched. */
static void test_budget_arithmetic(void **state) {
  (void)state;
  /* 2 % of 60 s: 1.2 s a round; two targets on the disk: 0.6 s each */
  assert_int_equal(dp_sched_allowed_ns(S(60), 2, 1), S(6) / 5);
  assert_int_equal(dp_sched_allowed_ns(S(60), 2, 2), S(3) / 5);
  /* 1 s of probes fits in 1.2 s: full length */
  assert_true(dp_sched_scale(S(60), S(1), 0, 2, 1) == 1.0);
  /* 1 s of probes at ProbeInterval 10, 2 %: 0.2 s, a fifth */
  assert_true(fabs(dp_sched_scale(S(10), S(1), 0, 2, 1) - 0.2) < 1e-9);
  /* 0.1 s of warm-up and drain last round leave 0.1 s for the probes */
  assert_true(fabs(dp_sched_scale(S(10), S(1), S(1) / 10, 2, 1) - 0.1) < 1e-9);
  /* an overhead that fills the budget: every probe at its floor */
  assert_true(dp_sched_scale(S(10), S(1), S(1), 2, 1) == 0.0);
  /* 100 %: as long as the interval holds them */
  assert_true(dp_sched_scale(S(1), S(1) / 2, 0, 100, 1) == 1.0);
  /* a Duration at a scale: never below the floor, never above itself */
  assert_int_equal(dp_sched_scaled_ns(S(1), 0.2), S(1) / 5);
  assert_int_equal(dp_sched_scaled_ns(S(1), 0.0), DP_SCHED_PROBE_MIN_NS);
  assert_int_equal(dp_sched_scaled_ns(S(1), 1.0), S(1));
  assert_int_equal(dp_sched_scaled_ns(S(1) / 100, 0.5), S(1) / 100);
  assert_int_equal(dp_sched_scaled_ns(0, 0.5), 0); /* an op budget only */
}

static void test_splay_bounds(void **state) {
  (void)state;
  uint64_t rng = 42, lo = UINT64_MAX, hi = 0, now = S(5);
  for (int i = 0; i < 10000; i++) {
    uint64_t d = dp_sched_splay_ns(now, S(60), &rng);
    if (d < now || d >= now + S(60))
      fail_msg("splay %llu outside [%llu, %llu)", (unsigned long long)d,
               (unsigned long long)now, (unsigned long long)(now + S(60)));
    lo = d < lo ? d : lo;
    hi = d > hi ? d : hi;
  }
  /* spread over the whole interval, not bunched at its start */
  assert_true(lo - now < S(1));
  assert_true(hi - now > S(59));
  assert_int_equal(dp_sched_splay_ns(now, 0, &rng), now);
}

/* ---- grouping -------------------------------------------------------------
 */

static void test_group_by_disk(void **state) {
  (void)state;
  dp_target_conf_t t[3] = {target("a", "a", 0, "10", "1"),
                           target("b", "b", 0, "10", "1"),
                           target("late", "nodev", 1, "10", "1")};
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, t, 3), 0);
  /* a and b live on one filesystem, so on one disk: one worker */
  assert_int_equal(dp_sched_nworkers(s), 2);
  size_t wa = dp_sched_target_worker(s, 0);
  assert_int_equal(dp_sched_target_worker(s, 1), wa);
  assert_int_equal(dp_sched_worker_ntargets(s, wa), 2);
  /* a Device that does not exist yet waits in the unresolved worker */
  size_t wl = dp_sched_target_worker(s, 2);
  assert_true(wl != wa);
  assert_string_equal(dp_sched_worker_disk(s, wl), "?");
  assert_int_equal(dp_sched_find_disk(s, "?"), (int)wl);
  assert_int_equal(dp_sched_max_samples(s), 3 * DP_SCHED_QUEUE_DEFAULT);
  dp_sched_free(s);
}

/* ---- rounds, cadence, queue -----------------------------------------------
 */

/* A scheduler of one file target "a" (ProbeInterval 10 s, Timeout 1 s). */
static dp_sched_t *one_target(void) {
  dp_target_conf_t t = target("a", "a", 0, "10", "1");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  return s;
}

static void test_round_queue_cadence(void **state) {
  (void)state;
  dp_sched_t *s = one_target();
  uint64_t t0 = fake_aio_now;
  assert_int_equal(dp_sched_step(s, 0, 0), t0 + S(10));
  assert_int_equal(fake_aio_submitted(), 4 + 1); /* 1 warm-up at QD1 */
  assert_int_equal(seen(DP_SCHED_OPENED), 1);
  dp_sched_sample_t out[8];
  assert_int_equal(dp_sched_take(s, out, 8), 1);
  assert_int_equal(out[0].round, 1);
  assert_int_equal(out[0].r.ops, 4);
  assert_int_equal(out[0].interval_ns, S(10));
  assert_true(out[0].last_in_round);
  assert_string_equal(out[0].target_name, "a");
  assert_string_equal(out[0].probe_name, "r");
  assert_int_equal(dp_sched_take(s, out, 8), 0);

  /* not due: nothing runs */
  fake_aio_now = t0 + S(5);
  assert_int_equal(dp_sched_step(s, 0, 0), t0 + S(10));
  assert_int_equal(fake_aio_submitted(), 5);

  /* six rounds without a consumer: the queue keeps the newest four */
  for (int i = 0; i < 6; i++) {
    fake_aio_now = t0 + S(10) * (uint64_t)(i + 1);
    assert_int_equal(dp_sched_step(s, 0, 0), t0 + S(10) * (uint64_t)(i + 2));
  }
  assert_int_equal(dp_sched_take(s, out, 8), DP_SCHED_QUEUE_DEFAULT);
  assert_int_equal(out[0].round, 4);
  assert_int_equal(out[3].round, 7);
  dp_sched_free(s);
}

/* A probe file re-allocated while a round reads it: the round's sample is
 * queued unmeasured (no I/O, no latency), its short reads (reads that met
 * the truncation) are not said as I/O errors, DISCARDED says what changed,
 * and the next round lays the file out again and measures. */
static void test_round_discarded_when_file_changes(void **state) {
  (void)state;
  dp_sched_t *s = one_target();
  uint64_t t0 = fake_aio_now;
  dp_sched_sample_t out[8];
  dp_sched_step(s, 0, 0);
  assert_int_equal(dp_sched_take(s, out, 8), 1);
  assert_int_equal(out[0].r.ops, 4);
  assert_int_equal(seen(DP_SCHED_OPENED), 1);

  pthread_mutex_lock(&fake_aio.lock);
  snprintf(realloc_path, sizeof(realloc_path), "%s/a/diskprobe.probe", tmpdir);
  fake_aio.short_left = 2; /* reads that met the truncation: at EOF */
  pthread_mutex_unlock(&fake_aio.lock);
  fake_aio_now = t0 + S(10);
  dp_sched_step(s, 0, 0);
  assert_int_equal(seen(DP_SCHED_DISCARDED), 1);
  assert_non_null(strstr(evs.line[DP_SCHED_DISCARDED], "target \"a\""));
  assert_non_null(strstr(evs.line[DP_SCHED_DISCARDED], "discarded"));
  assert_int_equal(dp_sched_take(s, out, 8), 1);
  assert_int_equal(out[0].round, 2);
  assert_int_equal(out[0].r.ops, 0); /* not a measurement */
  assert_true(isnan(out[0].r.lat_p50_s));
  /* its short reads were the file's, not the disk's: no I/O error said,
   * none for the health rules (the running total still counts them) */
  assert_int_equal(seen(DP_SCHED_IO_ERRORS), 0);
  assert_int_equal(out[0].r.err_short, 0);
  assert_int_equal(out[0].err_short_total, 2);
  assert_int_equal(seen(DP_SCHED_OPENED), 1);

  fake_aio_now = t0 + S(20);
  dp_sched_step(s, 0, 0);
  assert_int_equal(seen(DP_SCHED_OPENED), 2);
  assert_non_null(strstr(evs.line[DP_SCHED_OPENED], "laid out probe file"));
  assert_int_equal(dp_sched_take(s, out, 8), 1);
  assert_int_equal(out[0].round, 3);
  assert_int_equal(out[0].r.ops, 4);
  assert_int_equal(seen(DP_SCHED_DISCARDED), 1);
  dp_sched_free(s);
}

static void test_overrun_starts_next_at_once(void **state) {
  (void)state;
  dp_target_conf_t t = target("a", "a", 0, "10", "1");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  uint64_t t0 = fake_aio_now;
  /* each completion takes 6 s of the fake clock: 5 I/Os = 30 s, three
   * intervals */
  fake_aio.advance_ns = S(6);
  uint64_t due = dp_sched_step(s, 0, 0);
  assert_int_equal(fake_aio_now, t0 + S(30));
  assert_int_equal(due, t0 + S(30)); /* at once, not t0 + 10 s */
  fake_aio.advance_ns = 0;
  /* one catch-up round, then the cadence resumes: no burst of three */
  assert_int_equal(dp_sched_step(s, 0, 0), t0 + S(40));
  assert_int_equal(fake_aio_submitted(), 10);
  dp_sched_free(s);
}

/* ---- stalls ------------------------------------------------------------- */

static void test_no_probe_while_stalled(void **state) {
  (void)state;
  dp_target_conf_t t = target("slow", "a", 0, "10", "0.05");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  fake_aio_set_mode(FAKE_AIO_HANG);
  dp_sched_step(s, 0, 0);
  assert_int_equal(seen(DP_SCHED_STALL_BEGAN), 1);
  dp_sched_target_state_t st;
  dp_sched_target_state(s, 0, &st);
  assert_true(st.stalled);
  dp_sched_sample_t out[4];
  assert_int_equal(dp_sched_take(s, out, 4), 1);
  assert_true(out[0].r.stalled);
  assert_int_equal(out[0].interval_ns, S(10)); /* ProbeInterval, as set */
  unsigned long sub = fake_aio_submitted();
  assert_true(sub >= 1);

  /* long past due: the worker only waits for the outstanding I/O */
  for (int i = 0; i < 3; i++) {
    fake_aio_now += S(60);
    dp_sched_step(s, 0, 1000000);
  }
  assert_int_equal(fake_aio_submitted(), sub);
  dp_sched_target_state(s, 0, &st);
  assert_true(st.stalled);
  assert_int_equal(seen(DP_SCHED_STALL_ENDED), 0);

  /* the disk answers again: the stall ends, probing resumes */
  fake_aio_now += S(2);
  fake_aio_set_mode(FAKE_AIO_OK);
  dp_sched_step(s, 0, 1000000);
  assert_int_equal(seen(DP_SCHED_STALL_ENDED), 1);
  assert_true(evs.stall_ns >= S(182));
  dp_sched_target_state(s, 0, &st);
  assert_false(st.stalled);
  dp_sched_step(s, 0, 0);
  assert_int_equal(fake_aio_submitted(), sub + 5);
  dp_sched_free(s);
}

/* Freed with a probe's I/O still outstanding on a disk that answers (a
 * stall held for its first poll, a probe stopped mid-flight at shutdown):
 * the completions are waited for briefly and the engine is closed, not
 * leaked (valgrind_collectd.sh saw 18 KB definitely lost at a SIGTERM). */
static void test_free_reaps_outstanding(void **state) {
  (void)state;
  dp_target_conf_t t = target("late", "a", 0, "10", "0.05");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  fake_aio_set_mode(FAKE_AIO_HANG);
  dp_sched_step(s, 0, 0);
  dp_sched_target_state_t st;
  dp_sched_target_state(s, 0, &st);
  assert_true(st.stalled);
  /* the I/O is still queued in the fake kernel */
  fake_aio_set_mode(FAKE_AIO_OK);
  unsigned long d0 = fake_aio.destroyed;
  dp_sched_free(s);
  assert_int_equal(fake_aio.destroyed, d0 + 1);
}

/* Timeout too short for the disk (a hardening finding: Timeout 0.01 s at QD256
 * went FAILURE/OKAY every round): the first brief stall -- drained at the first
 * poll -- is reported, then said once to be a short Timeout; later brief ones
 * are not stalls (no events, no `stalled`, the probe not measured but its late
 * I/O counted); one that outlasts the first poll is still reported, late by
 * that poll. The lines print the Timeout in ms. */
/* At queue depth 1 there is no queue to blame: an I/O past the Timeout is
 * a stall every round, however briefly past (a disk just slower than its
 * Timeout never turns green), and no TIMEOUT_SHORT is said. */
static void test_past_timeout_at_qd1_is_a_stall(void **state) {
  (void)state;
  dp_target_conf_t t = target("short", "a", 0, "10", "0.05");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  dp_sched_target_state_t st;
  dp_sched_sample_t out[4];
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  for (int round = 1; round <= 3; round++) {
    fake_aio_now += S(10);
    /* the I/O outlives the 50 ms Timeout ... */
    fake_aio_set_mode(FAKE_AIO_HANG);
    dp_sched_step(s, 0, 0);
    assert_int_equal(seen(DP_SCHED_STALL_BEGAN), round);
    assert_non_null(strstr(evs.line[DP_SCHED_STALL_BEGAN], "more than 50 ms"));
    dp_sched_target_state(s, 0, &st);
    assert_true(st.stalled);
    fake_aio_set_mode(FAKE_AIO_OK); /* ... and completes by the first poll */
    dp_sched_step(s, 0, 1000000);
    assert_int_equal(seen(DP_SCHED_STALL_ENDED), round);
    assert_int_equal(dp_sched_take(s, out, 4), 1);
    assert_int_equal(out[0].round, (uint64_t)round);
    assert_true(out[0].r.stalled);
  }
  assert_int_equal(seen(DP_SCHED_TIMEOUT_SHORT), 0);
  dp_sched_free(s);
}

/* Fast confirmation: a confirmation asked for runs the first probe alone
 * when due, queued as one sample with confirm set and the round it
 * follows; the regular cadence stays. One asked for after the next
 * round's due time is not run. */
static void test_confirmation_round(void **state) {
  (void)state;
  dp_target_conf_t t = target("c", "a", 0, "10", "1");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  dp_sched_sample_t out[4];
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  fake_aio_set_mode(FAKE_AIO_OK);
  uint64_t t0 = fake_aio_now;
  uint64_t due = dp_sched_step(s, 0, 0); /* round 1 */
  assert_int_equal(due, t0 + S(10));
  assert_int_equal(dp_sched_take(s, out, 4), 1);
  assert_int_equal(out[0].confirm, 0);
  assert_int_equal(dp_sched_confirm(s, 0, S(1)), 0);
  assert_int_equal(dp_sched_confirm(s, 5, S(1)), -EINVAL);
  assert_int_equal(dp_sched_step(s, 0, 0), t0 + S(1)); /* not yet */
  fake_aio_now = t0 + S(1);
  due = dp_sched_step(s, 0, 0);
  assert_int_equal(due, t0 + S(10)); /* the cadence stays */
  assert_int_equal(dp_sched_take(s, out, 4), 1);
  assert_int_equal(out[0].confirm, 1);
  assert_int_equal(out[0].round, 1);
  assert_int_equal(out[0].probe, 0);
  assert_int_equal(out[0].last_in_round, 1);
  assert_true(out[0].r.ops > 0);
  /* past the next round: not run */
  assert_int_equal(dp_sched_confirm(s, 0, S(20)), 0);
  fake_aio_now = t0 + S(10);
  dp_sched_step(s, 0, 0); /* round 2 */
  assert_int_equal(dp_sched_take(s, out, 4), 1);
  assert_int_equal(out[0].confirm, 0);
  assert_int_equal(out[0].round, 2);
  dp_sched_free(s);
}

/* A brief stall is the queue's only with evidence: depth > 1 and a fast
 * shallow probe whose latency times the depth reaches half the Timeout. */
/* Layouts are splayed like the rounds: each target's probe file is laid
 * out at its own first round, a random point of the first interval (the
 * same points dp_sched_splay_ns gives for the seed), not all at start-up. */
static void test_layouts_splayed(void **state) {
  (void)state;
  dp_target_conf_t t[3] = {target("a", "a", 0, "60", "1"),
                           target("b", "b", 0, "60", "1"),
                           target("c", "c", 0, "60", "1")};
  dp_sched_conf_t c = sconf();
  c.splay = 1;
  c.seed = 42;
  uint64_t t0 = fake_aio_now, rng = 42, want[3];
  for (int i = 0; i < 3; i++)
    want[i] = dp_sched_splay_ns(t0, S(60), &rng);
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, t, 3), 0);
  assert_int_equal(dp_sched_nworkers(s), 1);
  uint64_t due = dp_sched_step(s, 0, 0);
  assert_int_equal(seen(DP_SCHED_OPENED), 0); /* nothing at start-up */
  while (seen(DP_SCHED_OPENED) < 3 && due < t0 + S(60)) {
    fake_aio_now = due;
    due = dp_sched_step(s, 0, 0);
  }
  assert_int_equal(seen(DP_SCHED_OPENED), 3);
  for (int i = 0; i < 3; i++) {
    if (evs.laid_at[i] != want[i])
      fail_msg("target %d laid out at t0 + %.3f s, its first round is at t0 "
               "+ %.3f s",
               i, (double)(evs.laid_at[i] - t0) / 1e9,
               (double)(want[i] - t0) / 1e9);
    for (int k = 0; k < i; k++)
      assert_true(evs.laid_at[i] != evs.laid_at[k]);
  }
  dp_sched_free(s);
}

/* Adds probe name (pattern, QueueDepth qd, 4k, MaxOps ops or none,
 * Duration dur) to t. */
static void add_probe(dp_target_conf_t *t, const char *name,
                      const char *pattern, const char *qd, const char *ops,
                      const char *dur) {
  char err[256];
  dp_probe_conf_t p;
  dp_probe_conf_init(&p, name);
  assert_int_equal(dp_probe_conf_set(&p, "Pattern", pattern, err, 256), 0);
  assert_int_equal(dp_probe_conf_set(&p, "QueueDepth", qd, err, 256), 0);
  assert_int_equal(dp_probe_conf_set(&p, "BlockSize", "4k", err, 256), 0);
  if (ops)
    assert_int_equal(dp_probe_conf_set(&p, "MaxOps", ops, err, 256), 0);
  assert_int_equal(dp_probe_conf_set(&p, "Duration", dur, err, 256), 0);
  assert_int_equal(dp_target_conf_add_probe(t, &p, err, 256), 0);
}

/* One round of target t on a disk that takes 30 ms an I/O. */
static dp_sched_t *slow_round(dp_target_conf_t *t) {
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, t, 1), 0);
  fake_aio_set_delay(30000000); /* every completion 30 ms after the call */
  dp_sched_step(s, 0, 0);
  fake_aio_set_delay(0);
  return s;
}

/* A disk that takes 30 ms a read: the QD8 probe's 20 ms budget is shorter
 * than one read, so it is skipped, not given 8 more I/Os. */
static void test_deep_probe_skipped_on_slow_disk(void **state) {
  (void)state;
  dp_target_conf_t t = target("slow", "a", 0, "10", "5");
  add_probe(&t, "deep", "randread", "8", NULL, "0.02");
  dp_sched_t *s = slow_round(&t);
  assert_int_equal(seen(DP_SCHED_PROBE_SKIPPED), 1);
  /* it says whose latency judged it */
  if (strstr(evs.line[DP_SCHED_PROBE_SKIPPED],
             "probe \"deep\" skipped: a single read of probe \"r\" took") ==
      NULL)
    fail_msg("skip line: %s", evs.line[DP_SCHED_PROBE_SKIPPED]);
  assert_int_equal(fake_aio_submitted(), 5); /* the QD1 probe's only */
  dp_sched_sample_t out[4];
  assert_int_equal(dp_sched_take(s, out, 4), 2);
  assert_int_equal(out[1].r.ops, 0);
  assert_true(out[1].last_in_round);
  /* a fast disk runs both */
  fake_aio_now += S(10);
  dp_sched_step(s, 0, 0);
  assert_int_equal(seen(DP_SCHED_PROBE_SKIPPED), 1);
  assert_true(fake_aio_submitted() > 10);
  dp_sched_free(s);
}

/* A slow syncwrite (a flush takes 30 ms) says nothing of how fast a read
 * is: the deep read probe after it runs. */
static void test_deep_read_not_judged_by_writes(void **state) {
  (void)state;
  dp_target_conf_t t = target("slow", "a", 0, "10", "5");
  t.nprobes = 0;
  add_probe(&t, "sw", "syncwrite", "1", "4", "0.5");
  add_probe(&t, "deep", "randread", "8", "8", "0.02");
  dp_sched_t *s = slow_round(&t);
  if (seen(DP_SCHED_PROBE_SKIPPED) != 0)
    fail_msg("skipped: %s", evs.line[DP_SCHED_PROBE_SKIPPED]);
  dp_sched_sample_t out[4];
  assert_int_equal(dp_sched_take(s, out, 4), 2);
  assert_true(out[0].r.ops > 0);
  assert_true(out[1].r.ops > 0); /* the deep read ran */
  dp_sched_free(s);
}

/* A throttle's queueing: a deep probe's I/Os wait 30 ms in a queue and
 * then complete all at once (a rate cap's slice), while a single read
 * takes no time. Its p50 of 30 ms is its queue's length in time, not a
 * slow read: the next deep probe, whose budget is 20 ms, still runs. */
static void deep_queue_waits(void) {
  fake_aio.delay_ns = fake_aio.qn >= 1 ? 30000000 : 0; /* deep: queued */
}

static void test_queueing_is_no_slow_read(void **state) {
  (void)state;
  dp_target_conf_t t = target("capped", "a", 0, "10", "5");
  add_probe(&t, "q8", "randread", "8", NULL, "0.1");
  add_probe(&t, "deep", "randread", "8", NULL, "0.02");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  fake_aio.on_submit = deep_queue_waits;
  dp_sched_step(s, 0, 0);
  fake_aio.on_submit = NULL;
  fake_aio_set_delay(0);
  if (seen(DP_SCHED_PROBE_SKIPPED) != 0)
    fail_msg("skipped: %s", evs.line[DP_SCHED_PROBE_SKIPPED]);
  dp_sched_sample_t out[4];
  assert_int_equal(dp_sched_take(s, out, 4), 3);
  assert_true(out[1].r.lat_p50_s >= 0.025); /* the queue's wait */
  assert_true(out[0].r.lat_p50_s < 0.01);   /* a single read */
  assert_true(out[2].r.ops > 0);            /* the deep probe ran */
  dp_sched_free(s);
}

/* A volume whose I/O completes in a throttle's steps: DutyCycle shortens
 * the deep probe to 0.13 s, shorter than it takes to hold a whole step.
 * Round 1 shows the steps; round 2 runs its probes 0.25 s as a trial,
 * which shows whole steps; from then on they run 0.25 s. */
static double capped_round(dp_sched_t *s, int stepped_disk) {
  dp_sched_sample_t out[4];
  fake_aio.on_submit = stepped_disk ? deep_queue_waits : NULL;
  fake_aio_now += S(10);
  dp_sched_step(s, 0, 0);
  fake_aio.on_submit = NULL;
  fake_aio_set_delay(0);
  assert_int_equal(dp_sched_take(s, out, 4), 2);
  assert_int_equal(out[1].r.throttled, stepped_disk);
  return out[1].r.wall_s;
}

static void test_throttled_probes_not_shortened(void **state) {
  (void)state;
  dp_target_conf_t t = target("capped", "a", 0, "10", "5");
  add_probe(&t, "q8", "randread", "8", NULL, "1");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  assert_true(capped_round(s, 1) < 0.2);
  assert_true(capped_round(s, 1) >= 0.25); /* the trial */
  assert_true(capped_round(s, 1) >= 0.25);
  dp_sched_free(s);
}

/* Steps seen once on a disk that then shows none in the trial (its
 * completions came in bursts for another reason): no floor, and no new
 * trial for 8 rounds though steps show again. */
static void test_failed_trial_backs_off(void **state) {
  (void)state;
  dp_target_conf_t t = target("bursty", "a", 0, "10", "5");
  add_probe(&t, "q8", "randread", "8", NULL, "1");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  assert_true(capped_round(s, 1) < 0.2);
  assert_true(capped_round(s, 0) >= 0.25); /* the trial: no steps */
  for (unsigned k = 0; k < 3; k++)
    assert_true(capped_round(s, 1) < 0.2); /* backing off */
  dp_sched_free(s);
}

/* On a disk too slow for a deep probe's budget the probe is skipped one
 * round and runs the next: never unmeasured two rounds running. */
static void test_skipped_probe_runs_next_round(void **state) {
  (void)state;
  dp_target_conf_t t = target("slow", "a", 0, "10", "5");
  add_probe(&t, "deep", "randread", "8", NULL, "0.02");
  dp_sched_t *s = slow_round(&t); /* round 1: skipped */
  assert_int_equal(seen(DP_SCHED_PROBE_SKIPPED), 1);
  dp_sched_sample_t out[4];
  assert_int_equal(dp_sched_take(s, out, 4), 2);
  assert_int_equal(out[1].r.ops, 0);
  for (unsigned round = 2; round <= 3; round++) {
    fake_aio_now += S(10);
    fake_aio_set_delay(30000000);
    dp_sched_step(s, 0, 0);
    fake_aio_set_delay(0);
    assert_int_equal(dp_sched_take(s, out, 4), 2);
    if (round == 2) { /* runs, though the disk is as slow */
      assert_int_equal(seen(DP_SCHED_PROBE_SKIPPED), 1);
      assert_true(out[1].r.ops > 0);
    } else { /* skipped again */
      assert_int_equal(seen(DP_SCHED_PROBE_SKIPPED), 2);
      assert_int_equal(out[1].r.ops, 0);
    }
  }
  dp_sched_free(s);
}

/* ---- a Device that appears after start ------------------------------------
 */

/* Some block device of this machine (2 MiB or more), for a symlink to
 * point at. */
static int some_block_device(char *path, size_t len) {
  DIR *d = opendir("/sys/class/block");
  struct dirent *de;
  int found = 0;
  while (d && !found && (de = readdir(d)) != NULL) {
    struct stat st;
    char attr[PATH_MAX];
    unsigned long long sectors = 0;
    snprintf(attr, sizeof(attr), "/sys/class/block/%s/size", de->d_name);
    FILE *f = de->d_name[0] != '.' ? fopen(attr, "r") : NULL;
    if (f != NULL) {
      if (fscanf(f, "%llu", &sectors) != 1)
        sectors = 0;
      fclose(f);
    }
    snprintf(path, len, "/dev/%s", de->d_name);
    /* one big enough to probe (an unattached loop device has size 0) */
    found = sectors >= 4096 && stat(path, &st) == 0 && S_ISBLK(st.st_mode);
  }
  if (d)
    closedir(d);
  return found;
}

static void test_device_appears_after_start(void **state) {
  (void)state;
  char dev[PATH_MAX], link[PATH_MAX];
  if (!some_block_device(dev, sizeof(dev)))
    skip();
  dp_target_conf_t t = target("late", "dev", 1, "10", "1");
  dp_sched_conf_t c = sconf();
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  assert_int_equal(dp_sched_nworkers(s), 1);
  assert_string_equal(dp_sched_worker_disk(s, 0), "?");
  /* missing: the round says why, and it stays unresolved */
  dp_sched_step(s, 0, 0);
  assert_int_equal(seen(DP_SCHED_OPEN_FAILED), 1);
  assert_int_equal(seen(DP_SCHED_REGROUPED), 0);

  snprintf(link, sizeof(link), "%s/dev", tmpdir);
  assert_int_equal(symlink(dev, link), 0);
  fake_aio_now += S(10);
  dp_sched_step(s, 0, 0);
  assert_int_equal(seen(DP_SCHED_REGROUPED), 1);
  assert_int_equal(dp_sched_nworkers(s), 2);
  assert_int_equal(dp_sched_target_worker(s, 0), 1);
  assert_int_equal(dp_sched_worker_ntargets(s, 0), 0);
  assert_string_not_equal(dp_sched_worker_disk(s, 1), "?");
  /* the disk's worker probes it at once (read-only; the AIO is fake) */
  int fd = open(dev, O_RDONLY | O_DIRECT);
  if (fd >= 0) {
    close(fd);
    dp_sched_step(s, 1, 0);
    assert_int_equal(seen(DP_SCHED_OPENED), 1);
    dp_sched_sample_t out[4];
    assert_int_equal(dp_sched_take(s, out, 4), 1);
  }
  dp_sched_free(s);
}

/* ---- threads and shutdown -------------------------------------------------
 */

static void test_threads_deliver_and_stop(void **state) {
  (void)state;
  dp_target_conf_t t = target("a", "a", 0, "1", "1");
  dp_sched_conf_t c = sconf();
  c.now_ns = NULL; /* threads sleep on the real clock */
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  assert_int_equal(dp_sched_start(s), 0);
  assert_true(dp_sched_wait(s, dp_now_ns() + S(30)));
  dp_sched_sample_t out[4];
  assert_true(dp_sched_take(s, out, 4) >= 1);
  assert_int_equal(out[0].r.ops, 4);
  assert_int_equal(seen(DP_SCHED_WORKER_STARTED), 1);
  assert_int_equal(dp_sched_stop(s), 0);
  assert_int_equal(dp_sched_stop(s), 0); /* idempotent */
  dp_sched_free(s);
}

/* A thread_create hook that records the signal mask each worker starts
 * with (the mask it inherited), then runs the worker. */
static struct {
  void *(*start)(void *);
  void *arg;
  sigset_t mask;
  int recorded;
} tramp;

static void *trampoline(void *unused) {
  (void)unused;
  pthread_sigmask(SIG_SETMASK, NULL, &tramp.mask);
  __atomic_store_n(&tramp.recorded, 1, __ATOMIC_SEQ_CST);
  return tramp.start(tramp.arg);
}

static int record_mask_create(pthread_t *thread, void *(*start)(void *),
                              void *arg, const char *name) {
  (void)name;
  tramp.start = start;
  tramp.arg = arg;
  return pthread_create(thread, NULL, trampoline, NULL);
}

/* A process-directed signal (collectd's SIGTERM) must run its handler on
 * the host's threads: a worker starts with every asynchronous signal
 * blocked and the synchronous ones deliverable, and the caller's own mask
 * is as it was. */
static void test_workers_block_signals(void **state) {
  (void)state;
  dp_target_conf_t t = target("a", "a", 0, "1", "1");
  dp_sched_conf_t c = sconf();
  c.now_ns = NULL;
  c.thread_create = record_mask_create;
  sigset_t before, after;
  pthread_sigmask(SIG_SETMASK, NULL, &before);
  assert_false(sigismember(&before, SIGTERM));
  dp_sched_t *s;
  assert_int_equal(dp_sched_new(&s, &c, &t, 1), 0);
  assert_int_equal(dp_sched_start(s), 0);
  assert_true(dp_sched_wait(s, dp_now_ns() + S(30)));
  assert_true(__atomic_load_n(&tramp.recorded, __ATOMIC_SEQ_CST));
  const int async[] = {SIGTERM, SIGINT,  SIGHUP,  SIGQUIT,
                       SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM};
  for (size_t i = 0; i < sizeof(async) / sizeof(async[0]); i++)
    assert_true(sigismember(&tramp.mask, async[i]));
  const int sync[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
  for (size_t i = 0; i < sizeof(sync) / sizeof(sync[0]); i++)
    assert_false(sigismember(&tramp.mask, sync[i]));
  pthread_sigmask(SIG_SETMASK, NULL, &after);
  for (int sig = 1; sig < SIGRTMIN; sig++)
    assert_int_equal(sigismember(&after, sig), sigismember(&before, sig));
  assert_int_equal(dp_sched_stop(s), 0);
  dp_sched_free(s);
}

/* Kept reachable: a scheduler with a worker left behind is not freed. */
static dp_sched_t *hung_sched;

static void test_stop_leaves_hung_worker(void **state) {
  (void)state;
  dp_target_conf_t t = target("hung", "a", 0, "1", "0.05");
  dp_sched_conf_t c = sconf();
  c.now_ns = NULL;
  c.join_grace_ns = S(1) / 10;
  assert_int_equal(dp_sched_new(&hung_sched, &c, &t, 1), 0);
  fake_aio_set_mode(FAKE_AIO_DSTATE);
  assert_int_equal(dp_sched_start(hung_sched), 0);
  /* until the worker is stuck in the kernel */
  pthread_mutex_lock(&fake_aio.lock);
  while (!fake_aio.in_getevents)
    pthread_cond_wait(&fake_aio.cond, &fake_aio.lock);
  pthread_mutex_unlock(&fake_aio.lock);
  assert_int_equal(dp_sched_stop(hung_sched), 1);
  assert_int_equal(seen(DP_SCHED_WORKER_STUCK), 1);
  dp_sched_free(hung_sched); /* frees nothing: the worker still runs */
  /* the kernel lets go: the worker finishes on its own */
  fake_aio_set_mode(FAKE_AIO_OK);
  for (int i = 0; i < 200 && fake_aio_submitted() > fake_aio.completed; i++)
    nanosleep(&(struct timespec){0, 10000000}, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_budget_arithmetic),
      cmocka_unit_test(test_splay_bounds),
      cmocka_unit_test_setup_teardown(test_group_by_disk, setup, teardown),
      cmocka_unit_test_setup_teardown(test_round_queue_cadence, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_round_discarded_when_file_changes,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_overrun_starts_next_at_once, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_no_probe_while_stalled, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_free_reaps_outstanding, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_queueing_is_no_slow_read, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_throttled_probes_not_shortened,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_failed_trial_backs_off, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_skipped_probe_runs_next_round, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_deep_probe_skipped_on_slow_disk,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_deep_read_not_judged_by_writes,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_past_timeout_at_qd1_is_a_stall,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_confirmation_round, setup, teardown),
      cmocka_unit_test_setup_teardown(test_layouts_splayed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_device_appears_after_start, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_threads_deliver_and_stop, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_workers_block_signals, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_stop_leaves_hung_worker, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
