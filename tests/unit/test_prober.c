/*
 * test_prober.c - a target's I/O in the prober program (the real one this
 * build made, src/cli/diskprobe-prober, run from the build directory) and
 * in process: the same probe either way, the live counter, a stop, a file
 * replaced under the prober, a prober killed mid-life, a program that is
 * missing or is no prober, what the prober holds (its descriptors), and
 * the reaper of children left behind (reaper.h); and programs that
 * misbehave: one that never answers the handshake, is stopped during it,
 * exits at once saying why, answers the handshake and then never the open,
 * or forges its results (tests/fakes/fake_prober).
 * The hung disk that motivates the prober is the fault matrix's case
 * (tests/shell/fault_matrix.sh: collectd exits while a throttled device
 * still holds 32 reads).
 *
 * Runs in /var/tmp (O_DIRECT; tmpfs refuses it).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "helpers.h"
#include "prober.h"
#include "reaper.h"

#define HELPER "src/cli/diskprobe-prober"
#define FAKE "tests/fakes/fake_prober"

static char dir[64], path[128];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof(dir), "/var/tmp/dp-test-prober.XXXXXX");
  if (mkdtemp(dir) == NULL)
    return -1;
  snprintf(path, sizeof(path), "%s/p", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  fixture_remove(dir);
  return 0;
}

/* Starts a prober (helper, or in process) and opens dir/p with its engine. */
static dp_prober_t *open_one(const char *helper, dp_target_t *t,
                             const atomic_int *stop) {
  dp_prober_t *p;
  char err[512];
  memset(t, 0, sizeof(*t));
  t->fd = -1;
  int rc = dp_prober_start(&p, helper, NULL, err, sizeof(err));
  if (rc < 0)
    fail_msg("start: %s", err);
  dp_prober_target_t o = {
      .path = path, .file_size_bytes = 4u << 20, .writable = 0, .stop = stop};
  rc = dp_prober_open_target(p, &o, t);
  if (rc < 0)
    fail_msg("open: %d %s", rc, t->err);
  assert_int_equal(dp_prober_open_engine(p, 8, 65536), 0);
  return p;
}

static dp_job_t job_of(const dp_target_t *t, uint64_t max_ops,
                       uint64_t duration_ns) {
  dp_job_t j = {.pattern = DP_PATTERN_RANDREAD,
                .block_size = 8192,
                .queue_depth = 4,
                .duration_ns = duration_ns,
                .max_ops = max_ops,
                .timeout_ns = 5 * DP_NS_PER_S,
                .region_offset = t->data_offset,
                .region_bytes = t->data_bytes,
                .seed = 7};
  return j;
}

/* The same probe out of process and in process: the I/O is counted, its
 * histogram comes back, and out of process the target's fd is the
 * prober's (the daemon holds none), the counter grows. */
static void test_run_both_ways(void **state) {
  (void)state;
  for (int out = 0; out < 2; out++) {
    dp_target_t t;
    dp_io_counter_t c = {0, 0};
    dp_prober_t *p = open_one(out ? HELPER : NULL, &t, NULL);
    if (out) {
      assert_int_equal(t.fd, -1);
      assert_true(dp_prober_pid(p) > 0);
    } else {
      assert_true(t.fd >= 0);
      assert_int_equal(dp_prober_pid(p), 0);
    }
    assert_true(t.data_bytes > 0);
    dp_job_t j = job_of(&t, 64, 0);
    j.counter = &c;
    dp_result_t r;
    assert_int_equal(dp_prober_run(p, &j, &r), 0);
    assert_int_equal(r.ops, 64);
    assert_int_equal(r.stalled, 0);
    assert_non_null(r.hist);
    assert_int_equal(r.hist->count, 64);
    assert_true(r.lat_p50_s > 0);
    /* the warm-up and the counted I/Os */
    assert_true(atomic_load(&c.ios) >= 64);
    assert_int_equal(atomic_load(&c.bytes), atomic_load(&c.ios) * 8192);
    assert_int_equal(dp_prober_outstanding(p), 0);
    assert_int_equal(dp_prober_release_buffers(p), 0);
    assert_int_equal(dp_prober_reap(p, 1000000), 0);
    assert_int_equal(dp_prober_verify(p, &t, DP_NS_PER_S), 0);
    long pid = dp_prober_pid(p);
    dp_prober_close(p, &t);
    assert_int_equal(t.fd, -1);
    if (pid > 0) { /* it exits on the closed socket, and is reaped */
      uint64_t until = dp_now_ns() + 5 * DP_NS_PER_S;
      while (kill((pid_t)pid, 0) == 0 && dp_now_ns() < until) {
        dp_prober_t *q;
        char err[256];
        /* a start reaps what was left */
        assert_int_equal(dp_prober_start(&q, NULL, NULL, err, sizeof(err)), 0);
        dp_prober_close(q, NULL);
        usleep(10000);
      }
      assert_int_not_equal(kill((pid_t)pid, 0), 0);
    }
  }
}

static void *stop_soon(void *arg);
static atomic_int stop_flag;
static void *stop_soon(void *arg) {
  (void)arg;
  usleep(200000);
  atomic_store(&stop_flag, 1);
  return NULL;
}

/* A 30-second probe ends soon after the daemon's stop flag is set. */
static void test_stop(void **state) {
  (void)state;
  dp_target_t t;
  atomic_store(&stop_flag, 0);
  dp_prober_t *p = open_one(HELPER, &t, NULL);
  dp_job_t j = job_of(&t, 0, 30 * DP_NS_PER_S);
  j.stop = &stop_flag;
  pthread_t th;
  pthread_create(&th, NULL, stop_soon, NULL);
  uint64_t t0 = dp_now_ns();
  dp_result_t r;
  assert_int_equal(dp_prober_run(p, &j, &r), 0);
  pthread_join(th, NULL);
  double secs = (double)(dp_now_ns() - t0) / 1e9;
  print_message("  a 30 s probe stopped after %.2f s (%llu I/Os)\n", secs,
                (unsigned long long)r.ops);
  assert_true(secs < 10);
  assert_true(r.ops > 0);
  assert_int_equal(r.stalled, 0);
  dp_prober_close(p, &t);
}

/* The file replaced under the prober: its check says so, with the cause
 * in the daemon's t.err. */
static void test_verify_replaced(void **state) {
  (void)state;
  dp_target_t t;
  dp_prober_t *p = open_one(HELPER, &t, NULL);
  assert_int_equal(unlink(t.path), 0); /* dir/p/diskprobe.probe */
  int fd = open(t.path, O_CREAT | O_WRONLY, 0600);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(dp_prober_verify(p, &t, DP_NS_PER_S), -ESTALE);
  assert_non_null(strstr(t.err, "deleted or replaced under us"));
  dp_prober_close(p, &t);
}

/* A prober killed: the next probe says -EPIPE, nothing is outstanding,
 * and a new prober opens the target again. */
static void test_killed(void **state) {
  (void)state;
  dp_target_t t;
  dp_prober_t *p = open_one(HELPER, &t, NULL);
  pid_t pid = (pid_t)dp_prober_pid(p);
  assert_int_equal(kill(pid, SIGKILL), 0);
  assert_int_equal(waitpid(pid, NULL, 0), pid);
  dp_job_t j = job_of(&t, 16, 0);
  dp_result_t r;
  assert_int_equal(dp_prober_run(p, &j, &r), -EPIPE);
  assert_int_equal(r.ops, 0);
  assert_int_equal(dp_prober_outstanding(p), 0);
  assert_int_equal(dp_prober_reap(p, 1000), 0);
  dp_prober_close(p, &t);
  p = open_one(HELPER, &t, NULL);
  assert_int_equal(dp_prober_run(p, &j, &r), 0);
  assert_int_equal(r.ops, 16);
  dp_prober_close(p, &t);
}

/* A missing program, and one that is not a prober (it exits at once). */
static void test_bad_program(void **state) {
  (void)state;
  dp_prober_t *p = (dp_prober_t *)1;
  char err[512];
  assert_int_equal(dp_prober_start(&p, "/nonexistent/diskprobe-prober", NULL,
                                   err, sizeof(err)),
                   -ENOENT);
  assert_null(p);
  assert_non_null(strstr(err, "/nonexistent/diskprobe-prober"));
  assert_int_equal(dp_prober_start(&p, "/bin/true", NULL, err, sizeof(err)),
                   -EPIPE);
  assert_null(p);
  assert_non_null(strstr(err, "ended at once"));
}

/* Writes dir/NAME, a shell script with body, executable; its path in out. */
static void script(const char *name, const char *body, char *out, size_t len) {
  snprintf(out, len, "%s/%s", dir, name);
  FILE *f = fopen(out, "w");
  assert_non_null(f);
  fprintf(f, "#!/bin/sh\n%s\n", body);
  fclose(f);
  assert_int_equal(chmod(out, 0700), 0);
}

/* The pid a script wrote into dir/pid (it echoes $$), or 0. */
static pid_t script_pid(void) {
  char pp[160];
  snprintf(pp, sizeof(pp), "%s/pid", dir);
  FILE *f = fopen(pp, "r");
  long pid = 0;
  if (f != NULL) {
    if (fscanf(f, "%ld", &pid) != 1)
      pid = 0;
    fclose(f);
  }
  return (pid_t)pid;
}

/* A program that never answers the handshake: the start fails within
 * DP_PROBER_HELLO_NS (and a little), saying so and naming the program, and
 * the program is killed and reaped (not even a zombie is left). */
static void test_hello_deadline(void **state) {
  (void)state;
  char prog[192], err[1024], body[256];
  snprintf(body, sizeof(body),
           "echo $$ > %s/pid; echo starting >&2; exec sleep 1000", dir);
  script("silent", body, prog, sizeof(prog));
  dp_prober_t *p = (dp_prober_t *)1;
  uint64_t t0 = dp_now_ns();
  assert_int_equal(dp_prober_start(&p, prog, NULL, err, sizeof(err)),
                   -ETIMEDOUT);
  double secs = (double)(dp_now_ns() - t0) / 1e9;
  print_message("  no handshake: failed after %.2f s: %s\n", secs, err);
  assert_null(p);
  assert_true(secs < 8);
  assert_non_null(strstr(err, prog));
  assert_non_null(strstr(err, "did not answer the handshake within 5 s"));
  assert_non_null(strstr(err, "it said \"starting\""));
  pid_t pid = script_pid();
  assert_true(pid > 0);
  assert_int_equal(kill(pid, 0), -1); /* reaped: not even a zombie */
  assert_int_equal(errno, ESRCH);
}

/* The same program, and the daemon stopping meanwhile: the start ends
 * within DP_PROBER_GRACE_NS of the stop, -ECANCELED. */
static void test_hello_stop(void **state) {
  (void)state;
  char prog[192], err[1024], body[256];
  snprintf(body, sizeof(body), "echo $$ > %s/pid; exec sleep 1000", dir);
  script("silent", body, prog, sizeof(prog));
  atomic_store(&stop_flag, 0);
  pthread_t th;
  pthread_create(&th, NULL, stop_soon, NULL);
  dp_prober_t *p;
  uint64_t t0 = dp_now_ns();
  assert_int_equal(dp_prober_start(&p, prog, &stop_flag, err, sizeof(err)),
                   -ECANCELED);
  pthread_join(th, NULL);
  double secs = (double)(dp_now_ns() - t0) / 1e9;
  print_message("  stopped during the handshake: %.2f s\n", secs);
  assert_true(secs < 4);
  assert_int_equal(kill(script_pid(), 0), -1);
}

/* A program that exits at once says why on its standard error: the
 * cause names its exit status and quotes its first line, bounded. */
static void test_exit_last_words(void **state) {
  (void)state;
  char prog[192], err[1024];
  script("dies",
         "echo 'error while loading shared libraries: libaio.so.1'; "
         "echo 'error while loading shared libraries: libaio.so.1' >&2; "
         "head -c 3000 /dev/zero | tr '\\0' x >&2; exit 127",
         prog, sizeof(prog));
  dp_prober_t *p;
  assert_int_equal(dp_prober_start(&p, prog, NULL, err, sizeof(err)), -EPIPE);
  print_message("  %s\n", err);
  assert_non_null(strstr(err, "ended at once (exit status 127)"));
  assert_non_null(
      strstr(err, "it said \"error while loading shared libraries: libaio"));
  assert_true(strlen(err) < sizeof(err) - 1);
}

/* A copy of the fake prober named fake-prober-MODE, in dir; its path in
 * out. */
static void fake(const char *mode, char *out, size_t len) {
  snprintf(out, len, "%s/fake-prober-%s", dir, mode);
  char cmd[512];
  snprintf(cmd, sizeof(cmd), "cp %s %s", FAKE, out);
  assert_int_equal(system(cmd), 0);
}

/* A prober that answers the handshake, then never the open (and makes no
 * progress): the open fails within the target's Timeout and a grace, the
 * prober is killed and reaped. */
static void test_open_silent(void **state) {
  (void)state;
  char prog[192], err[512];
  fake("stall", prog, sizeof(prog));
  dp_prober_t *p;
  if (dp_prober_start(&p, prog, NULL, err, sizeof(err)) < 0)
    fail_msg("start: %s", err);
  pid_t pid = (pid_t)dp_prober_pid(p);
  dp_target_t t;
  memset(&t, 0, sizeof(t));
  t.fd = -1;
  dp_prober_target_t o = {
      .path = path, .file_size_bytes = 4u << 20, .timeout_ns = DP_NS_PER_S};
  uint64_t t0 = dp_now_ns();
  assert_int_equal(dp_prober_open_target(p, &o, &t), -ETIMEDOUT);
  double secs = (double)(dp_now_ns() - t0) / 1e9;
  print_message("  open: %.2f s: %s\n", secs, t.err);
  assert_true(secs < 6);
  assert_non_null(strstr(t.err, "neither answered the open nor made progress"));
  assert_int_equal(kill(pid, 0), -1);
  assert_int_equal(dp_prober_outstanding(p), 0);
  dp_prober_close(p, &t);
}

/* A prober that forges its results (a million times the I/Os it did, a
 * negative latency): refused, -EBADMSG with the cause, nothing counted. */
static void test_forged(void **state) {
  (void)state;
  char prog[192];
  fake("forge", prog, sizeof(prog));
  dp_target_t t;
  dp_prober_t *p = open_one(prog, &t, NULL);
  dp_job_t j = job_of(&t, 0, 200 * DP_NS_PER_MS);
  dp_result_t r;
  assert_int_equal(dp_prober_run(p, &j, &r), -EBADMSG);
  print_message("  %s\n", dp_prober_error(p));
  assert_non_null(strstr(dp_prober_error(p), "cannot be true"));
  assert_non_null(strstr(dp_prober_error(p), prog));
  assert_int_equal(r.ops, 0);
  assert_int_equal(r.stalled, 0);
  assert_null(r.hist);
  dp_prober_close(p, &t);
}

/* The prober holds its page, its socket and the probe file: none of the
 * daemon's other descriptors (a listening socket it kept would keep the
 * next collectd from binding its port). */
static void test_descriptors(void **state) {
  (void)state;
  int extra = open("/dev/null", O_RDONLY); /* without O_CLOEXEC */
  assert_true(extra >= 0);
  dp_target_t t;
  dp_prober_t *p = open_one(HELPER, &t, NULL);
  char fdd[64];
  snprintf(fdd, sizeof(fdd), "/proc/%ld/fd", dp_prober_pid(p));
  DIR *dp = opendir(fdd);
  assert_non_null(dp);
  int n = 0, has_extra = 0;
  struct dirent *e;
  while ((e = readdir(dp)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    n++;
    char l[256], lp[128];
    int m = snprintf(lp, sizeof(lp), "%s/%s", fdd, e->d_name);
    assert_true(m > 0 && (size_t)m < sizeof(lp));
    ssize_t k = readlink(lp, l, sizeof(l) - 1);
    l[k > 0 ? k : 0] = '\0';
    if (strcmp(l, "/dev/null") == 0 && atoi(e->d_name) > 2)
      has_extra = 1;
    if (strcmp(e->d_name, "1") == 0) /* its output is not the daemon's */
      assert_string_equal(l, "/dev/null");
  }
  closedir(dp);
  print_message("  the prober holds %d descriptors\n", n);
  assert_false(has_extra);
  /* 0-2, the socket, the probe file (the page is mapped, its fd closed) */
  assert_true(n <= 5);
  dp_prober_close(p, &t);
  close(extra);
}

/* A child left while it still runs is reaped once it has exited: no
 * zombie stays behind in a long-running daemon. */
static void test_reaper(void **state) {
  (void)state;
  int p[2];
  assert_int_equal(pipe(p), 0);
  pid_t pid = fork();
  if (pid == 0) { /* runs until the pipe closes */
    char c;
    close(p[1]);
    (void)!read(p[0], &c, 1);
    _exit(0);
  }
  close(p[0]);
  dp_reaper_leave(pid);
  assert_true(dp_reaper_kept() >= 1);
  assert_int_equal(kill(pid, 0), 0); /* still running: kept */
  close(p[1]);
  /* a zombie answers kill(pid, 0) too: only a reaped child is gone */
  uint64_t until = dp_now_ns() + 5 * DP_NS_PER_S;
  while (kill(pid, 0) == 0 && dp_now_ns() < until) {
    usleep(10000);
    dp_reaper_poll();
  }
  /* reaped: no such child any more (a zombie would still be ours) */
  assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

int main(void) {
  if (access(HELPER, X_OK) != 0 || access(FAKE, X_OK) != 0) {
    fprintf(stderr, "test_prober: %s not built\n", HELPER);
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_run_both_ways, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_verify_replaced, setup, teardown),
      cmocka_unit_test_setup_teardown(test_killed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_program, setup, teardown),
      cmocka_unit_test_setup_teardown(test_descriptors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hello_deadline, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hello_stop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exit_last_words, setup, teardown),
      cmocka_unit_test_setup_teardown(test_open_silent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forged, setup, teardown),
      cmocka_unit_test(test_reaper),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
