/*
 * test_conf.c - the configuration model: defaults, every option's accepted
 * and refused values, and the whole-block checks. The messages are what an
 * operator reads in collectd's log, so the tests check that each names the
 * option, the value and what is allowed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf.h"

static char err[512];

static void test_defaults(void **state) {
  (void)state;
  dp_target_conf_t t;
  dp_target_conf_init(&t, "data");
  assert_int_equal(t.file_size_bytes, 1ull << 30);
  assert_int_equal(t.interval_ns, 60000000000ull);
  assert_int_equal(t.timeout_ns, 10000000000ull);
  assert_int_equal(t.layout_rate_bytes, 64ull << 20); /* LayoutRate 64M */
  assert_int_equal(
      dp_target_conf_set(&t, "Path", "/var/lib/x", err, sizeof(err)), 0);
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), 0);
  assert_int_equal(t.nprobes, 3);
  assert_string_equal(t.probes[0].name, "randread-qd1");
  assert_int_equal(t.probes[0].queue_depth, 1);
  assert_int_equal(t.probes[0].block_size, 8192);
  assert_string_equal(t.probes[1].name, "randread-qd32");
  assert_int_equal(t.probes[1].queue_depth, 32);
  assert_string_equal(t.probes[2].name, "seqread");
  assert_int_equal(t.probes[2].pattern, DP_PATTERN_SEQREAD);
  assert_int_equal(t.probes[2].block_size, 1 << 20);
}

static void test_target_options(void **state) {
  (void)state;
  dp_target_conf_t t;
  dp_target_conf_init(&t, "data");
  assert_int_equal(dp_target_conf_set(&t, "filesize", "256M", err, sizeof(err)),
                   0);
  assert_int_equal(t.file_size_bytes, 256u << 20);
  assert_int_equal(
      dp_target_conf_set(&t, "ProbeInterval", "10", err, sizeof(err)), 0);
  assert_int_equal(t.interval_ns, 10000000000ull);
  assert_int_equal(dp_target_conf_set(&t, "Timeout", "0.5", err, sizeof(err)),
                   0);
  assert_int_equal(t.timeout_ns, 500000000ull);
  assert_int_equal(dp_target_conf_set(&t, "LayoutRate", "0", err, sizeof(err)),
                   0);
  assert_int_equal(t.layout_rate_bytes, 0); /* unbounded */
  assert_int_equal(
      dp_target_conf_set(&t, "layoutrate", "512M", err, sizeof(err)), 0);
  assert_int_equal(t.layout_rate_bytes, 512ull << 20);
  assert_int_equal(
      dp_target_conf_set(&t, "Device", "/dev/loop0", err, sizeof(err)), 0);
  assert_true(t.is_device);
}

/* Each bad value is refused with a message naming option, value, range. */
static void test_bad_values(void **state) {
  (void)state;
  const struct {
    int probe;
    const char *key, *val, *want1, *want2;
  } cases[] = {
      {0, "FileSize", "12", "\"FileSize\"", "1M to 1T"},
      {0, "FileSize", "2T", "\"2T\"", "1M to 1T"},
      {0, "FileSize", "1500k", "\"1500k\"", "whole number of MiB"},
      {0, "LayoutRate", "1500k", "\"LayoutRate\"", "0: unbounded"},
      {0, "LayoutRate", "11G", "\"11G\"", "0 to 10G"},
      {0, "ProbeInterval", "0", "\"ProbeInterval\"", "1 to 86400"},
      {0, "ProbeInterval", "abc", "\"abc\"", "seconds"},
      {0, "Timeout", "-1", "\"Timeout\"", "0.01 to 3600"},
      {0, "Path", "relative/dir", "\"Path\"", "absolute path"},
      {1, "QueueDepth", "0", "\"QueueDepth\"", "1 to 256"},
      {1, "QueueDepth", "257", "\"257\"", "1 to 256"},
      {1, "QueueDepth", "1.5", "\"1.5\"", "integers"},
      {1, "BlockSize", "1000", "\"BlockSize\"", "multiple of 512"},
      {1, "BlockSize", "128M", "\"128M\"", "512 to 64M"},
      {1, "Pattern", "randrw", "\"randrw\"", "randread, seqread"},
      {1, "Duration", "120", "\"Duration\"", "0.01 to 60"},
      {1, "MaxOps", "-3", "\"MaxOps\"", "0 to"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    dp_target_conf_t t;
    dp_probe_conf_t p;
    dp_target_conf_init(&t, "data");
    dp_probe_conf_init(&p, "p");
    err[0] = 0;
    int rc = cases[i].probe ? dp_probe_conf_set(&p, cases[i].key, cases[i].val,
                                                err, sizeof(err))
                            : dp_target_conf_set(&t, cases[i].key, cases[i].val,
                                                 err, sizeof(err));
    if (rc != -EINVAL)
      fail_msg("%s=%s: expected -EINVAL, got %d", cases[i].key, cases[i].val,
               rc);
    if (!strstr(err, cases[i].want1) || !strstr(err, cases[i].want2))
      fail_msg("%s=%s: message \"%s\" lacks \"%s\" or \"%s\"", cases[i].key,
               cases[i].val, err, cases[i].want1, cases[i].want2);
  }
}

static void test_unknown_keys(void **state) {
  (void)state;
  dp_target_conf_t t;
  dp_probe_conf_t p;
  dp_target_conf_init(&t, "data");
  dp_probe_conf_init(&p, "p");
  assert_int_equal(dp_target_conf_set(&t, "Pth", "/x", err, sizeof(err)),
                   -ENOENT);
  assert_non_null(strstr(err, "unknown option \"Pth\""));
  assert_non_null(strstr(err, "ProbeInterval"));
  assert_int_equal(dp_probe_conf_set(&p, "Depth", "4", err, sizeof(err)),
                   -ENOENT);
  assert_non_null(strstr(err, "QueueDepth"));
}

/* At `collectd -T`: a Device that is no block device, a StateDir that
 * is no directory, each named as what it is; a path not there yet is
 * left to the start. */
static void test_refuses_file_kinds(void **state) {
  (void)state;
  dp_target_conf_t t;
  dp_target_conf_init(&t, "d");
  assert_int_equal(
      dp_target_conf_set(&t, "Device", "/dev/null", err, sizeof(err)), -EINVAL);
  assert_string_equal(err, "Option \"Device\": value \"/dev/null\" is "
                           "invalid: it is a character device, not a block "
                           "device");
  assert_int_equal(t.has_path, 0);
  char dir[] = "/tmp/dp-conf-XXXXXX", fifo[64];
  assert_non_null(mkdtemp(dir));
  snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(dp_target_conf_set(&t, "Device", fifo, err, sizeof(err)),
                   -EINVAL);
  assert_non_null(strstr(err, "is a FIFO (named pipe), not a block device"));
  assert_int_equal(dp_target_conf_set(&t, "Device", dir, err, sizeof(err)),
                   -EINVAL);
  assert_non_null(strstr(err, "is a directory, not a block device"));
  /* a regular file, or not there (yet): the start says what it finds */
  char file[64];
  snprintf(file, sizeof(file), "%s/file", dir);
  FILE *fp = fopen(file, "w");
  assert_non_null(fp);
  fclose(fp);
  assert_int_equal(dp_target_conf_set(&t, "Device", file, err, sizeof(err)), 0);
  dp_target_conf_init(&t, "d");
  assert_int_equal(
      dp_target_conf_set(&t, "Device", "/dev/dp-no-such", err, sizeof(err)), 0);

  dp_plugin_conf_t c;
  dp_plugin_conf_init(&c);
  assert_int_equal(
      dp_plugin_conf_set(&c, "StateDir", "/dev/null", err, sizeof(err)),
      -EINVAL);
  assert_string_equal(err, "Option \"StateDir\": value \"/dev/null\" is "
                           "invalid: it is a character device, not a "
                           "directory");
  assert_int_equal(dp_plugin_conf_set(&c, "StateDir", fifo, err, sizeof(err)),
                   -EINVAL);
  assert_non_null(strstr(err, "is a FIFO (named pipe), not a directory"));
  assert_int_equal(dp_plugin_conf_set(&c, "StateDir", dir, err, sizeof(err)),
                   0);
  assert_string_equal(c.state_dir, dir);
  unlink(fifo);
  unlink(file);
  rmdir(dir);
}

/* The I/O buffer bound, for every front-end. */
static void test_probe_buffer_bound(void **state) {
  (void)state;
  dp_probe_conf_t p;
  dp_probe_conf_init(&p, "big");
  assert_int_equal(dp_probe_conf_set(&p, "QueueDepth", "256", err, sizeof(err)),
                   0);
  assert_int_equal(dp_probe_conf_set(&p, "BlockSize", "1M", err, sizeof(err)),
                   0);
  assert_int_equal(dp_probe_conf_check(&p, err, sizeof(err)), 0);
  assert_int_equal(dp_probe_conf_set(&p, "BlockSize", "64M", err, sizeof(err)),
                   0);
  assert_int_equal(dp_probe_conf_check(&p, err, sizeof(err)), -EINVAL);
  assert_string_equal(err, "Probe \"big\" QueueDepth 256 x BlockSize 67108864 "
                           "needs 16384 MiB of I/O buffers; allowed at most "
                           "256 MiB per probe (lower QueueDepth or BlockSize)");
}

static void test_block_checks(void **state) {
  (void)state;
  dp_target_conf_t t;
  dp_probe_conf_t p;

  dp_target_conf_init(&t, "data");
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "neither Path nor Device"));

  dp_target_conf_init(&t, "data");
  dp_target_conf_set(&t, "Path", "/a", err, sizeof(err));
  assert_int_equal(
      dp_target_conf_set(&t, "Device", "/dev/sdb", err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "exactly one Path or Device"));

  dp_target_conf_init(&t, "bad name!");
  dp_target_conf_set(&t, "Path", "/a", err, sizeof(err));
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "Target name \"bad name!\""));

  /* The device view's namespace: "dev-vda" would share its series. */
  dp_target_conf_init(&t, "dev-vda");
  dp_target_conf_set(&t, "Path", "/a", err, sizeof(err));
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "Target name \"dev-vda\" is reserved"));
  dp_target_conf_init(&t, "devices");
  dp_target_conf_set(&t, "Path", "/a", err, sizeof(err));
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), 0);

  /* No write probe on a block device, whatever else is said. */
  dp_target_conf_init(&t, "raw");
  dp_target_conf_set(&t, "Device", "/dev/sdb", err, sizeof(err));
  dp_probe_conf_init(&p, "w");
  assert_int_equal(
      dp_probe_conf_set(&p, "Pattern", "randwrite", err, sizeof(err)), 0);
  assert_int_equal(dp_target_conf_add_probe(&t, &p, err, sizeof(err)), 0);
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "Target \"raw\""));
  assert_non_null(strstr(err, "write probes only run inside a probe file"));

  /* Duplicate probe names. */
  dp_target_conf_init(&t, "data");
  dp_probe_conf_init(&p, "x");
  assert_int_equal(dp_target_conf_add_probe(&t, &p, err, sizeof(err)), 0);
  assert_int_equal(dp_target_conf_add_probe(&t, &p, err, sizeof(err)), -EEXIST);
  assert_non_null(strstr(err, "Probe \"x\" is defined twice"));

  /* Probes longer than the interval. */
  dp_target_conf_init(&t, "data");
  dp_target_conf_set(&t, "Path", "/a", err, sizeof(err));
  dp_target_conf_set(&t, "ProbeInterval", "2", err, sizeof(err));
  dp_probe_conf_init(&p, "long");
  dp_probe_conf_set(&p, "Duration", "3", err, sizeof(err));
  dp_target_conf_add_probe(&t, &p, err, sizeof(err));
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "ProbeInterval"));

  /* Block larger than half the probe file. */
  dp_target_conf_init(&t, "data");
  dp_target_conf_set(&t, "Path", "/a", err, sizeof(err));
  dp_target_conf_set(&t, "FileSize", "1M", err, sizeof(err));
  dp_probe_conf_init(&p, "big");
  dp_probe_conf_set(&p, "BlockSize", "1M", err, sizeof(err));
  dp_target_conf_add_probe(&t, &p, err, sizeof(err));
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "half the FileSize"));
}

static void test_names(void **state) {
  (void)state;
  assert_true(dp_conf_name_ok("randread-qd1"));
  assert_true(dp_conf_name_ok("a_b.c"));
  assert_false(dp_conf_name_ok(""));
  assert_false(dp_conf_name_ok("a b"));
  assert_false(dp_conf_name_ok("a/b"));
  char longname[80];
  memset(longname, 'a', sizeof(longname) - 1);
  longname[79] = 0;
  assert_false(dp_conf_name_ok(longname));
}

static void test_plugin_options_and_duty(void **state) {
  (void)state;
  dp_plugin_conf_t c;
  dp_plugin_conf_init(&c);
  assert_true(c.duty_cycle_percent == 2.0);
  assert_int_equal(c.splay, 1);
  assert_int_equal(dp_plugin_conf_set(&c, "dutycycle", "5", err, sizeof(err)),
                   0);
  assert_true(c.duty_cycle_percent == 5.0);
  assert_int_equal(dp_plugin_conf_set(&c, "Splay", "false", err, sizeof(err)),
                   0);
  assert_int_equal(c.splay, 0);
  assert_int_equal(dp_plugin_conf_set(&c, "DutyCycle", "0", err, sizeof(err)),
                   -EINVAL);
  assert_non_null(strstr(
      err, "\"DutyCycle\": value \"0\" is invalid: allowed 0.01 to 100"));
  assert_int_equal(dp_plugin_conf_set(&c, "Splay", "maybe", err, sizeof(err)),
                   -EINVAL);
  assert_int_equal(dp_plugin_conf_set(&c, "Duty", "1", err, sizeof(err)),
                   -ENOENT);
  assert_true(c.saturation_percent == 90.0);
  assert_int_equal(
      dp_plugin_conf_set(&c, "SaturationThreshold", "75", err, sizeof(err)), 0);
  assert_true(c.saturation_percent == 75.0);
  assert_int_equal(
      dp_plugin_conf_set(&c, "SaturationThreshold", "0", err, sizeof(err)),
      -EINVAL);
  assert_non_null(strstr(err, "allowed 1 to 1000"));
}

/* QueueDepth x BlockSize is bounded per probe; the message names both. */
static void test_buffer_bound(void **state) {
  (void)state;
  char err[512];
  dp_target_conf_t t;
  dp_target_conf_init(&t, "big");
  assert_int_equal(dp_target_conf_set(&t, "Path", "/srv/p", err, 512), 0);
  dp_probe_conf_t p;
  dp_probe_conf_init(&p, "huge");
  assert_int_equal(dp_probe_conf_set(&p, "QueueDepth", "256", err, 512), 0);
  assert_int_equal(dp_probe_conf_set(&p, "BlockSize", "64M", err, 512), 0);
  assert_int_equal(dp_target_conf_add_probe(&t, &p, err, 512), 0);
  assert_int_equal(dp_target_conf_set(&t, "FileSize", "1T", err, 512), 0);
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "QueueDepth 256 x BlockSize 67108864"));
  assert_non_null(strstr(err, "at most 256 MiB"));
  /* 64 x 4M is exactly the bound: accepted */
  dp_target_conf_init(&t, "deep");
  assert_int_equal(dp_target_conf_set(&t, "Path", "/srv/p", err, 512), 0);
  dp_probe_conf_init(&p, "seq");
  assert_int_equal(dp_probe_conf_set(&p, "QueueDepth", "64", err, 512), 0);
  assert_int_equal(dp_probe_conf_set(&p, "BlockSize", "4M", err, 512), 0);
  assert_int_equal(dp_target_conf_add_probe(&t, &p, err, 512), 0);
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), 0);
}

/* Two targets on one probe file (a directory and its diskprobe.probe, a
 * trailing slash) or one device are refused; distinct ones pass. */
static void test_duplicate_targets(void **state) {
  (void)state;
  char err[512];
  dp_target_conf_t t[3];
  const char *paths[][3] = {{"/srv/a", "/srv/a/diskprobe.probe", "/srv/b"},
                            {"/srv/a/", "/srv/c", "/srv/a"},
                            {"/srv/a", "/srv/b", "/srv/a/x.probe"}};
  const int want[] = {-EINVAL, -EINVAL, 0};
  for (int c = 0; c < 3; c++) {
    for (int i = 0; i < 3; i++) {
      char name[8];
      snprintf(name, sizeof(name), "t%d", i);
      dp_target_conf_init(&t[i], name);
      assert_int_equal(dp_target_conf_set(&t[i], "Path", paths[c][i], err, 512),
                       0);
    }
    err[0] = '\0';
    int rc = dp_conf_check_duplicates(t, 3, err, sizeof(err));
    if (rc != want[c])
      fail_msg("case %d: expected %d, got %d (%s)", c, want[c], rc, err);
    if (rc)
      assert_non_null(strstr(err, "/srv/a/diskprobe.probe"));
  }
}

/* A name that does not fit is refused, never cut: two long names sharing
 * their first 63 characters would be one series and one RRD directory. */
static void test_long_names(void **state) {
  (void)state;
  char n63[64], n64[65], n70[71];
  memset(n63, 'a', 63);
  n63[63] = '\0';
  memset(n64, 'a', 64);
  n64[64] = '\0';
  memset(n70, 'a', 70);
  n70[70] = '\0';
  dp_target_conf_t t;
  dp_target_conf_init(&t, n63);
  dp_target_conf_set(&t, "Path", "/a", err, sizeof(err));
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), 0);
  dp_target_conf_init(&t, n64);
  dp_target_conf_set(&t, "Path", "/a", err, sizeof(err));
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "is longer than 63 characters"));
  dp_probe_conf_t p;
  dp_target_conf_init(&t, "data");
  dp_probe_conf_init(&p, n70);
  assert_int_equal(dp_target_conf_add_probe(&t, &p, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "Probe name"));
  assert_non_null(strstr(err, "longer than 63"));
  char big[256];
  snprintf(big, sizeof(big), "Target name \"%s\" is 70 characters long", n70);
  assert_int_equal(dp_conf_name_check("Target", n70, err, sizeof(err)),
                   -EINVAL);
  assert_non_null(strstr(err, big));
  assert_int_equal(dp_conf_name_check("Target", n63, err, sizeof(err)), 0);
  assert_int_equal(dp_conf_name_check("Probe", "a b", err, sizeof(err)),
                   -EINVAL);
  assert_non_null(strstr(err, "Probe name \"a b\" is invalid"));
}

static void test_path_normalise(void **state) {
  (void)state;
  const char *cases[][2] = {{"/x/y", "/x/y"},
                            {"/x/y/", "/x/y"},
                            {"//x///y//", "/x/y"},
                            {"/x/./y/.", "/x/y"},
                            {"/x/y/../y", "/x/y"},
                            {"/x/y/..", "/x"},
                            {"/..", "/"},
                            {"/../x/../../y", "/y"},
                            {"/", "/"},
                            {"/x/..y/z", "/x/..y/z"}};
  char buf[64];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    dp_conf_path_normalise(cases[i][0], buf, sizeof(buf));
    if (strcmp(buf, cases[i][1]) != 0)
      fail_msg("%s: expected %s, got %s", cases[i][0], cases[i][1], buf);
  }
}

/* Two targets named differently that reach one probe file: lexically
 * ("x/../x") and as the kernel resolves them (a symlinked directory). */
static void test_duplicates_resolved(void **state) {
  (void)state;
  char dir[] = "/tmp/test_conf.XXXXXX", a[128], b[128], link[128];
  assert_non_null(mkdtemp(dir));
  snprintf(a, sizeof(a), "%s/x", dir);
  snprintf(b, sizeof(b), "%s/y", dir);
  snprintf(link, sizeof(link), "%s/l", dir);
  assert_int_equal(mkdir(a, 0700), 0);
  assert_int_equal(mkdir(b, 0700), 0);
  assert_int_equal(symlink(a, link), 0);
  char paths[3][2][160];
  snprintf(paths[0][0], 160, "%s", a);
  snprintf(paths[0][1], 160, "%s/../x/", a);
  snprintf(paths[1][0], 160, "%s", a);
  snprintf(paths[1][1], 160, "%s", link);
  snprintf(paths[2][0], 160, "%s", a);
  snprintf(paths[2][1], 160, "%s", b);
  const int want[] = {-EINVAL, -EINVAL, 0};
  const char *why[] = {"are one path", "are one file", ""};
  dp_target_conf_t t[2];
  for (int c = 0; c < 3; c++) {
    dp_target_conf_init(&t[0], "first");
    dp_target_conf_init(&t[1], "second");
    assert_int_equal(dp_target_conf_set(&t[0], "Path", paths[c][0], err, 512),
                     0);
    assert_int_equal(dp_target_conf_set(&t[1], "Path", paths[c][1], err, 512),
                     0);
    err[0] = '\0';
    int rc = dp_conf_check_duplicates(t, 2, err, sizeof(err));
    if (rc != want[c])
      fail_msg("case %d: expected %d, got %d (%s)", c, want[c], rc, err);
    if (rc) {
      assert_non_null(strstr(err, "Targets \"first\" and \"second\""));
      assert_non_null(strstr(err, why[c]));
    }
  }
  unlink(link);
  rmdir(a);
  rmdir(b);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_refuses_file_kinds),
      cmocka_unit_test(test_probe_buffer_bound),
      cmocka_unit_test(test_target_options),
      cmocka_unit_test(test_bad_values),
      cmocka_unit_test(test_unknown_keys),
      cmocka_unit_test(test_block_checks),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_plugin_options_and_duty),
      cmocka_unit_test(test_buffer_bound),
      cmocka_unit_test(test_duplicate_targets),
      cmocka_unit_test(test_long_names),
      cmocka_unit_test(test_path_normalise),
      cmocka_unit_test(test_duplicates_resolved),
  };
  return cmocka_run_group_tests_name("conf", tests, NULL, NULL);
}
