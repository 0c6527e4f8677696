/*
 * test_devview.c - the device view (src/devview.c) over snapshot files in
 * the /proc/diskstats format and a fixture sysfs: the first read of a
 * device yields nothing, the second its metrics; only watched devices
 * come out; the probes' share of a device's bytes from a live counter;
 * a device of size 0 (an unattached loop device) is left out; the values
 * of the metric catalogue, with discards and flushes where counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "devview.h"
#include "helpers.h"

static char dir[] = "/tmp/dp-test-devview.XXXXXX";
static char snap[128];

static void write_snapshot(const char *text) {
  FILE *f = fopen(snap, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* DIR/sys/REL of the fixture sysfs. */
static void write_attr(const char *rel, const char *text) {
  char p[256];
  snprintf(p, sizeof(p), "sys/%s", rel);
  fixture_write(dir, p, text);
}

static dp_io_counter_t probe_counter;
static const dp_io_counter_t *counter_of(const char *name, void *arg) {
  (void)arg;
  return strcmp(name, "vda") == 0 ? &probe_counter : NULL;
}

/* 20-field lines: vda does 1000 reads of 8 KiB (16,000 sectors) and 100
 * writes per second; loop3 is unattached (size 0); sdb is not watched. */
static const char *const A =
    " 254 0 vda 1000 0 16000 500 100 0 800 50 0 400 550 0 0 0 0 10 5\n"
    "   7 3 loop3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "   8 16 sdb 5 0 40 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n";
static const char *const B =
    " 254 0 vda 2000 0 32000 1000 200 0 1600 100 0 800 1100 0 0 0 0 20 10\n"
    "   7 3 loop3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "   8 16 sdb 10 0 80 2 0 0 0 0 0 2 2 0 0 0 0 0 0\n";

/* DeviceStats globs are checked as fnmatch reads them, with a reason. */
static void test_glob_check(void **state) {
  (void)state;
  static const char *const good[] = {"sda",       "nvme*n1", "sd[a-c]",
                                     "sd[!a]*",   "sd[]a]",  "[[:alpha:]]*",
                                     "md\\[0\\]", "loop?"};
  char why[128];
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
    if (dp_devview_glob_check(good[i], why, sizeof(why)) != 0)
      fail_msg("\"%s\" refused: %s", good[i], why);
  assert_int_equal(dp_devview_glob_check("[", why, sizeof(why)), -EINVAL);
  assert_string_equal(why, "a '[' has no closing ']': not a valid glob");
  assert_int_equal(dp_devview_glob_check("sd[a-", why, sizeof(why)), -EINVAL);
  assert_int_equal(dp_devview_glob_check("[]", why, sizeof(why)), -EINVAL);
  assert_int_equal(dp_devview_glob_check("[[:alpha]", why, sizeof(why)),
                   -EINVAL);
  assert_int_equal(dp_devview_glob_check("sda\\", why, sizeof(why)), -EINVAL);
  assert_non_null(strstr(why, "lone backslash"));
  assert_int_equal(dp_devview_glob_check("/dev/sda", why, sizeof(why)),
                   -EINVAL);
  assert_non_null(strstr(why, "a path"));
  assert_int_equal(dp_devview_glob_check("", why, sizeof(why)), -EINVAL);
  char lng[200];
  memset(lng, 'a', sizeof(lng) - 1);
  lng[sizeof(lng) - 1] = '\0';
  assert_int_equal(dp_devview_glob_check(lng, why, sizeof(why)), -ENAMETOOLONG);
}

static void test_reads_share_and_empty(void **state) {
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(snap, sizeof(snap), "%s/diskstats", dir);
  write_attr("class/block/vda/size", "2097152\n");
  write_attr("class/block/loop3/size", "0\n");
  char root[160];
  snprintf(root, sizeof(root), "%s/sys", dir);

  dp_devview_t *v;
  assert_int_equal(dp_devview_new(&v, snap, 16), 0);
  dp_devview_set_sysroot(v, root);
  const dp_diskstats_metrics_t *m;
  /* nothing watched: nothing read */
  assert_int_equal(dp_devview_read(v, 1000000000ull, counter_of, NULL, &m), 0);
  assert_int_equal(dp_devview_watch(v, "vda"), 0);
  assert_int_equal(dp_devview_watch(v, "loop*"), 0);
  assert_int_equal(dp_devview_watch(v, "vda"), 0); /* again: ignored */
  assert_int_equal(dp_devview_npatterns(v), 2);
  assert_int_equal(dp_devview_watch(v, "/dev/vda"), -EINVAL);
  assert_int_equal(dp_devview_watch(v, ""), -EINVAL);
  assert_int_equal(dp_devview_watch(v, "["), -EINVAL);

  write_snapshot(A);
  assert_int_equal(dp_devview_read(v, 2000000000ull, counter_of, NULL, &m), 0);
  /* the probes moved half of the device's (16,000 + 800) x 512 bytes */
  atomic_store(&probe_counter.ios, 550);
  atomic_store(&probe_counter.bytes, 4300800);
  write_snapshot(B);
  int n = dp_devview_read(v, 3000000000ull, counter_of, NULL, &m);
  assert_int_equal(n, 1); /* vda; loop3 is empty, sdb not watched */
  assert_string_equal(m[0].name, "vda");
  assert_true(fabs(m[0].reads_per_s - 1000) < 1e-9);
  assert_true(fabs(m[0].read_bytes_per_s - 8192000) < 1e-6);
  assert_true(fabs(m[0].probe_bytes_share - 0.5) < 1e-3);

  dp_devview_value_t dv[DP_DEVVIEW_VALUES_MAX];
  size_t nv = dp_devview_values(&m[0], dv);
  assert_int_equal(nv, 16); /* 12 + discards (2) + flushes (2) */
  assert_string_equal(dv[0].type, "operations_per_second");
  assert_string_equal(dv[0].type_instance, "read");
  assert_int_equal(dv[0].metric, DP_METRIC_DEV_READS);
  assert_int_equal(dv[15].metric, DP_METRIC_DEV_FLUSH_AWAIT);
  assert_string_equal(dv[15].type, "latency");
  assert_string_equal(dv[15].type_instance, "flush_await");
  assert_true(fabs(dv[11].value - 50.0) < 0.1); /* probe_share, percent */
  assert_string_equal(dv[11].type_instance, "probe_share");

  /* the loop device attached later (size > 0) comes back */
  write_attr("class/block/loop3/size", "2048\n");
  write_snapshot(A);
  n = dp_devview_read(v, 4000000000ull, counter_of, NULL, &m);
  assert_true(n >= 0);
  write_snapshot(B);
  n = dp_devview_read(v, 5000000000ull, counter_of, NULL, &m);
  int has_loop = 0;
  for (int i = 0; i < n; i++)
    has_loop |= strcmp(m[i].name, "loop3") == 0;
  assert_true(has_loop);
  dp_devview_free(v);

  /* an unreadable file is an error, not a crash */
  assert_int_equal(dp_devview_new(&v, "/nonexistent/diskstats", 4), 0);
  assert_int_equal(dp_devview_watch(v, "vda"), 0);
  assert_true(dp_devview_read(v, 1, NULL, NULL, &m) < 0);
  dp_devview_free(v);
  fixture_remove(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reads_share_and_empty),
      cmocka_unit_test(test_glob_check),
  };
  return cmocka_run_group_tests_name("devview", tests, NULL, NULL);
}
