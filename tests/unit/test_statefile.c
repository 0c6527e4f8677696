/*
 * test_statefile.c - the health state file's safe I/O (src/statefile.c,
 * dp_health_save / dp_health_load): a FIFO, a symlink, a foreign-owned or
 * group-writable file in its place are refused at once with what they
 * are; a temporary file someone placed beside it is never written
 * through; a directory others could write, or reached through a symlink,
 * is refused; the round trip and the saver thread work. Run as root (the
 * foreign owner is uid 65534); without root those cases are skipped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "health.h"
#include "helpers.h"
#include "reaper.h"
#include "statefile.h"

#define NOBODY 65534

static char dir[64], path[128];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof(dir), "/tmp/dp-test-statefile.XXXXXX");
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/health.state", dir);
  /* a hung test fails instead of hanging (a FIFO opened for reading) */
  alarm(20);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  alarm(0);
  chmod(dir, 0700);
  fixture_remove(dir);
  return 0;
}

/* A tracker of one target with two probes (no rounds: the file's values
 * do not matter here). */
static dp_health_t *tracker(void) {
  static const char *const names[] = {"randread-qd1", "randread-qd32"};
  static const char *const keys[] = {"randread/8192/1", "randread/8192/32"};
  dp_health_conf_t c;
  dp_health_conf_init(&c);
  dp_health_t *h;
  assert_int_equal(dp_health_new(&h, &c, 1), 0);
  assert_int_equal(
      dp_health_set_target(h, 0, "t0", 2, names, keys, DP_MEDIA_SSD, "M", 0),
      0);
  return h;
}

static void write_file(const char *p, const char *text) {
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static void read_back(const char *p, char *buf, size_t len) {
  FILE *f = fopen(p, "r");
  assert_non_null(f);
  size_t n = fread(buf, 1, len - 1, f);
  buf[n] = '\0';
  fclose(f);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char good[] = "diskprobe-health 1\nend\n";

/* A FIFO where the state file should be: refused at once (a plain open
 * would wait for a writer forever), naming what it is. */
static void test_fifo_refused_at_once(void **state) {
  (void)state;
  assert_int_equal(mkfifo(path, 0600), 0);
  dp_health_t *h = tracker();
  char err[512] = "";
  double t0 = now_s();
  int rc = dp_health_load(h, path, err, sizeof(err));
  assert_true(now_s() - t0 < 1.0);
  assert_int_equal(rc, -EINVAL);
  assert_non_null(strstr(err, "FIFO"));
  assert_non_null(strstr(err, path));
  dp_health_free(h);
}

/* A symlink, a file of another user, a file others may write: refused
 * with the cause. */
static void test_untrusted_files_refused(void **state) {
  (void)state;
  char other[160], err[512] = "";
  snprintf(other, sizeof(other), "%s/elsewhere", dir);
  write_file(other, good);
  dp_health_t *h = tracker();
  assert_int_equal(symlink(other, path), 0);
  assert_int_equal(dp_health_load(h, path, err, sizeof(err)), -ELOOP);
  assert_non_null(strstr(err, "symlink"));
  unlink(path);

  write_file(path, good);
  assert_int_equal(dp_health_load(h, path, err, sizeof(err)), 0);
  assert_int_equal(chmod(path, 0620), 0);
  assert_int_equal(dp_health_load(h, path, err, sizeof(err)), -EPERM);
  assert_non_null(strstr(err, "writable by its group or others"));
  assert_int_equal(chmod(path, 0600), 0);
  if (geteuid() == 0) {
    assert_int_equal(chown(path, NOBODY, NOBODY), 0);
    assert_int_equal(dp_health_load(h, path, err, sizeof(err)), -EPERM);
    assert_non_null(strstr(err, "owned by uid 65534"));
  }
  dp_health_free(h);
}

/* Larger than a state file may be: refused before reading it. */
static void test_oversized_refused(void **state) {
  (void)state;
  int fd = open(path, O_WRONLY | O_CREAT, 0600);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, (off_t)DP_HEALTH_STATE_MAX_BYTES + 1), 0);
  close(fd);
  char *text = NULL, err[512] = "";
  size_t len;
  assert_int_equal(dp_statefile_read(dir, "health.state",
                                     DP_HEALTH_STATE_MAX_BYTES, &text, &len,
                                     err, sizeof(err)),
                   -EFBIG);
  assert_null(text);
  assert_non_null(strstr(err, "more than"));
}

/* No name in dir but ".", ".." and those of keep (NULL-terminated): no
 * temporary file of ours left behind, nothing planted removed. */
static void assert_only(const char *const *keep) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int kept = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    for (size_t i = 0; !kept && keep[i] != NULL; i++)
      kept = strcmp(e->d_name, keep[i]) == 0;
    if (!kept)
      fail_msg("unexpected file %s in %s", e->d_name, dir);
  }
  closedir(d);
}
#define ONLY(...) assert_only((const char *const[]){__VA_ARGS__, NULL})

/* The saved file: a regular file of ours, mode 0600, that loads. */
static void assert_saved_ours(void) {
  struct stat st;
  assert_int_equal(lstat(path, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_int_equal(st.st_uid, geteuid());
  assert_int_equal(st.st_mode & 07777, 0600);
  dp_health_t *h = tracker();
  char err[512] = "";
  assert_int_equal(dp_health_load(h, path, err, sizeof(err)), 0);
  dp_health_free(h);
}

/* A temporary file placed beside the state file -- a symlink to a file to
 * overwrite, or a file of another user to have renamed into place -- is
 * neither written through nor renamed: the save makes its own. */
static void test_planted_temp_not_written_through(void **state) {
  (void)state;
  char victim[160], tmp[160], buf[64], err[512] = "";
  snprintf(victim, sizeof(victim), "%s/victim", dir);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  write_file(victim, "victim\n");
  assert_int_equal(symlink(victim, tmp), 0);
  dp_health_t *h = tracker();
  assert_int_equal(dp_health_save(h, path, err, sizeof(err)), 0);
  read_back(victim, buf, sizeof(buf));
  assert_string_equal(buf, "victim\n");
  assert_saved_ours();
  struct stat st; /* the planted link stays, untouched */
  assert_int_equal(lstat(tmp, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  ONLY("health.state", "health.state.tmp", "victim");
  dp_health_free(h);
}

static void test_planted_foreign_temp_not_renamed(void **state) {
  (void)state;
  char tmp[160], buf[64], err[512] = "";
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  write_file(tmp, "planted\n");
  if (geteuid() == 0)
    assert_int_equal(chown(tmp, NOBODY, NOBODY), 0);
  dp_health_t *h = tracker();
  assert_int_equal(dp_health_save(h, path, err, sizeof(err)), 0);
  assert_saved_ours();
  read_back(tmp, buf, sizeof(buf));
  assert_string_equal(buf, "planted\n");
  ONLY("health.state", "health.state.tmp");
  dp_health_free(h);
}

/* A directory its group may write (not sticky), or reached through a
 * symlink: neither read nor written, the cause said. */
static void test_untrusted_dir_refused(void **state) {
  (void)state;
  dp_health_t *h = tracker();
  char err[512] = "";
  assert_int_equal(dp_health_save(h, path, err, sizeof(err)), 0);
  assert_int_equal(chmod(dir, 0770), 0); /* its group may write */
  assert_int_equal(dp_health_save(h, path, err, sizeof(err)), -EPERM);
  assert_non_null(strstr(err, "group-writable"));
  assert_non_null(strstr(err, "could redirect the state file"));
  assert_int_equal(dp_health_load(h, path, err, sizeof(err)), -EPERM);
  assert_int_equal(dp_statefile_check_dir(dir, err, sizeof(err)), -EPERM);
  assert_int_equal(chmod(dir, 0700), 0);

  char link[160], via[200];
  snprintf(link, sizeof(link), "%s.link", dir);
  unlink(link);
  assert_int_equal(symlink(dir, link), 0);
  snprintf(via, sizeof(via), "%s/health.state", link);
  assert_int_equal(dp_health_load(h, via, err, sizeof(err)), -ELOOP);
  assert_non_null(strstr(err, "is a symlink"));
  assert_int_equal(dp_health_save(h, via, err, sizeof(err)), -ELOOP);
  unlink(link);
  dp_health_free(h);
}

/* What is saved loads, and formats back to the same text. */
static void test_round_trip(void **state) {
  (void)state;
  dp_health_t *h = tracker();
  char err[512] = "";
  assert_int_equal(dp_health_save(h, path, err, sizeof(err)), 0);
  assert_int_equal(dp_health_save(h, path, err, sizeof(err)), 0); /* over */
  char *text, *again;
  size_t len, len2;
  assert_int_equal(dp_statefile_read(dir, "health.state",
                                     DP_HEALTH_STATE_MAX_BYTES, &text, &len,
                                     err, sizeof(err)),
                   0);
  assert_int_equal(dp_health_state_parse(h, text, len, err, sizeof(err)), 0);
  assert_int_equal(dp_health_state_format(h, &again, &len2), 0);
  assert_int_equal(len, len2);
  assert_memory_equal(text, again, len);
  assert_non_null(strstr(text, "probe t0 randread-qd1 randread/8192/1 0\n"));
  free(text);
  free(again);
  ONLY("health.state");
  dp_health_free(h);
}

/* The bounded read gives what the plain read gives, its refusals with
 * their cause, and -ETIMEDOUT (saying so) when the reading process does
 * not answer in time -- here a wait of 0. */
static void test_read_bounded(void **state) {
  (void)state;
  dp_health_t *h = tracker();
  char err[512] = "";
  assert_int_equal(dp_health_save(h, path, err, sizeof(err)), 0);
  char *a, *b;
  size_t la, lb;
  assert_int_equal(dp_statefile_read(dir, "health.state",
                                     DP_HEALTH_STATE_MAX_BYTES, &a, &la, err,
                                     sizeof(err)),
                   0);
  assert_int_equal(
      dp_statefile_read_bounded(dir, "health.state", DP_HEALTH_STATE_MAX_BYTES,
                                0, 2 * DP_NS_PER_S, &b, &lb, err, sizeof(err)),
      0);
  assert_int_equal(la, lb);
  assert_memory_equal(a, b, la);
  free(a);
  free(b);
  assert_int_equal(dp_statefile_read_bounded(dir, "missing.state", 1 << 20, 0,
                                             2 * DP_NS_PER_S, &b, &lb, err,
                                             sizeof(err)),
                   -ENOENT);
  assert_null(b);
  assert_non_null(strstr(err, "missing.state"));
  assert_int_equal(dp_statefile_read_bounded(dir, "health.state",
                                             DP_HEALTH_STATE_MAX_BYTES, 0, 0,
                                             &b, &lb, err, sizeof(err)),
                   -ETIMEDOUT);
  assert_null(b);
  assert_non_null(strstr(err, "did not answer within"));
  assert_int_equal(
      dp_statefile_check_dir_bounded(dir, 2 * DP_NS_PER_S, err, sizeof(err)),
      0);
  assert_int_equal(dp_statefile_check_dir_bounded(dir, 0, err, sizeof(err)),
                   -ETIMEDOUT);
  dp_health_free(h);
}

/* A crash's temporary files are removed at start -- ours, regular, of a
 * writer no longer running -- and nothing else. */
static void test_stale_temps_cleaned(void **state) {
  (void)state;
  pid_t dead = fork();
  if (dead == 0)
    _exit(0);
  assert_true(dead > 0);
  assert_int_equal(waitpid(dead, NULL, 0), dead);
  char p[200], q[200];
  snprintf(p, sizeof(p), "%s.tmp", path); /* the name before */
  write_file(p, "old\n");
  snprintf(p, sizeof(p), "%s.tmp.%d.aa", path, (int)dead);
  write_file(p, "crashed\n");
  snprintf(p, sizeof(p), "%s.tmp.%d.bb", path, (int)getpid()); /* running */
  write_file(p, "running\n");
  snprintf(p, sizeof(p), "%s.tmp.%d.cc", path, (int)dead);
  snprintf(q, sizeof(q), "%s/other", dir);
  write_file(q, "other\n");
  assert_int_equal(symlink(q, p), 0); /* not a regular file */
  if (geteuid() == 0) {
    snprintf(p, sizeof(p), "%s.tmp.%d.dd", path, (int)dead);
    write_file(p, "foreign\n");
    assert_int_equal(chown(p, NOBODY, NOBODY), 0);
  }
  char err[512] = "";
  assert_int_equal(dp_statefile_clean(dir, "health.state", err, sizeof(err)),
                   2);
  snprintf(p, sizeof(p), "health.state.tmp.%d.bb", (int)getpid());
  snprintf(q, sizeof(q), "health.state.tmp.%d.cc", (int)dead);
  char r[64];
  snprintf(r, sizeof(r), "health.state.tmp.%d.dd", (int)dead);
  ONLY(p, q, r, "other");
}

/* The saver writes what it is given; a failed save's cause comes back;
 * a close with nothing running returns at once. */
static void test_saver(void **state) {
  (void)state;
  dp_statefile_saver_t *s;
  assert_int_equal(dp_statefile_saver_new(&s, dir, "health.state"), 0);
  assert_int_equal(dp_statefile_saver_submit(s, strdup(good), strlen(good), 0),
                   0);
  int rc = 1;
  char err[512] = "", buf[64];
  double t0 = now_s();
  assert_int_equal(dp_statefile_saver_close(s, 2 * UINT64_C(1000000000), &rc,
                                            err, sizeof(err)),
                   0);
  assert_true(now_s() - t0 < 1.0);
  assert_int_equal(rc, 0);
  read_back(path, buf, sizeof(buf));
  assert_string_equal(buf, good);
  ONLY("health.state");

  assert_int_equal(chmod(dir, 0770), 0);
  assert_int_equal(dp_statefile_saver_new(&s, dir, "health.state"), 0);
  assert_int_equal(dp_statefile_saver_submit(s, strdup(good), strlen(good), 1),
                   0);
  assert_int_equal(dp_statefile_saver_close(s, 2 * UINT64_C(1000000000), &rc,
                                            err, sizeof(err)),
                   0);
  assert_int_equal(rc, -EPERM);
  assert_non_null(strstr(err, "group-writable"));
}

/* reaper.h's bounded calls: answers come back; one that never answers
 * (a stat on a hung disk) costs the deadline, once for all of them, and
 * its child is left to the reaper. */
static void answer(void *arg, void *out, size_t len) {
  int v = *(int *)arg;
  if (v < 0)
    sleep(3); /* stands for a stat that does not return in time */
  memcpy(out, &v, len < sizeof(v) ? len : sizeof(v));
}

static void test_reaper_call_bounded(void **state) {
  (void)state;
  int v = 42, out = 0;
  assert_int_equal(dp_reaper_call(answer, &v, &out, sizeof(out), DP_NS_PER_S),
                   0);
  assert_int_equal(out, 42);
  int args[4] = {1, -1, 3, -1}, outs[4] = {0}, rcs[4];
  uint64_t t0 = dp_now_ns();
  dp_reaper_call_many(answer, args, sizeof(args[0]), outs, sizeof(outs[0]), 4,
                      300 * DP_NS_PER_MS, rcs);
  uint64_t took = dp_now_ns() - t0;
  assert_int_equal(rcs[0], 0);
  assert_int_equal(outs[0], 1);
  assert_int_equal(rcs[1], -ETIMEDOUT);
  assert_int_equal(rcs[2], 0);
  assert_int_equal(outs[2], 3);
  assert_int_equal(rcs[3], -ETIMEDOUT);
  assert_true(took >= 250 * DP_NS_PER_MS && took < 2 * DP_NS_PER_S);
  assert_true(dp_reaper_kept() >= 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fifo_refused_at_once, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_untrusted_files_refused, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_oversized_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_planted_temp_not_written_through,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_planted_foreign_temp_not_renamed,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_untrusted_dir_refused, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_read_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stale_temps_cleaned, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_saver, setup, teardown),
      cmocka_unit_test(test_reaper_call_bounded),
  };
  return cmocka_run_group_tests_name("statefile", tests, NULL, NULL);
}
