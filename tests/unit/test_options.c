/*
 * test_options.c - the option table itself: every row is consistent (one
 * key per scope, one flag per command, a default inside its own range,
 * storage that fits), every range's ends are accepted and the values just
 * outside refused with the key and range in the message, and the
 * generated reference names every option.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "conf.h"
#include "options.h"
#include "units.h"

static char err[512];

/* A struct big enough for any scope, zeroed. */
typedef union {
  dp_plugin_conf_t plugin;
  dp_target_conf_t target;
  dp_probe_conf_t probe;
} any_conf_t;

static size_t scope_size(dp_opt_scope_t s) {
  return s == DP_SCOPE_PLUGIN   ? sizeof(dp_plugin_conf_t)
         : s == DP_SCOPE_TARGET ? sizeof(dp_target_conf_t)
                                : sizeof(dp_probe_conf_t);
}

static void test_rows_consistent(void **state) {
  (void)state;
  size_t n;
  const dp_option_t *t = dp_options(&n);
  assert_true(n >= 15);
  for (size_t i = 0; i < n; i++) {
    const dp_option_t *o = &t[i];
    assert_non_null(o->key);
    if (o->help == NULL || o->help[0] == '\0')
      fail_msg("%s: no help text", o->key);
    assert_ptr_equal(dp_option_find(o->scope, o->key), o);
    for (size_t j = i + 1; j < n; j++) {
      if (t[j].scope == o->scope && strcasecmp(t[j].key, o->key) == 0)
        fail_msg("%s declared twice in one scope", o->key);
      if (o->flag && t[j].flag && strcmp(o->flag, t[j].flag) == 0 &&
          (o->cli & t[j].cli))
        fail_msg("flag --%s used by %s and %s", o->flag, o->key, t[j].key);
    }
    if (o->flag && o->cli == 0)
      fail_msg("%s: flag --%s for no command", o->key, o->flag);
    int stored = o->kind == DP_OPT_SIZE || o->kind == DP_OPT_DURATION ||
                 o->kind == DP_OPT_INTEGER || o->kind == DP_OPT_REAL ||
                 o->kind == DP_OPT_BOOL || o->kind == DP_OPT_ENUM;
    if (stored) {
      if (o->def == NULL)
        fail_msg("%s: no default", o->key);
      if (o->offset + o->size > scope_size(o->scope))
        fail_msg("%s: storage outside its struct", o->key);
      if (o->kind == DP_OPT_REAL && o->size != sizeof(double))
        fail_msg("%s: a real stored in %zu bytes", o->key, o->size);
      if ((o->kind == DP_OPT_SIZE || o->kind == DP_OPT_INTEGER ||
           o->kind == DP_OPT_DURATION) &&
          o->size != 4 && o->size != 8)
        fail_msg("%s: storage of %zu bytes", o->key, o->size);
      if (o->size == 4 && o->max > 4294967295.0)
        fail_msg("%s: max %g does not fit 32 bits", o->key, o->max);
      if ((o->kind == DP_OPT_BOOL || o->kind == DP_OPT_ENUM) &&
          (o->choices == NULL || o->size != sizeof(int)))
        fail_msg("%s: choices or storage", o->key);
      any_conf_t c;
      memset(&c, 0, sizeof(c));
      if (dp_option_set(o, &c, o->def, err, sizeof(err)) != 0)
        fail_msg("%s: its default \"%s\" is refused: %s", o->key, o->def, err);
    } else if (o->kind == DP_OPT_PATH || o->kind == DP_OPT_TEXT) {
      assert_non_null(o->set);
    }
  }
}

/* min and max are accepted; just outside is refused with key and range. */
static void test_range_ends(void **state) {
  (void)state;
  size_t n;
  const dp_option_t *t = dp_options(&n);
  for (size_t i = 0; i < n; i++) {
    const dp_option_t *o = &t[i];
    char lo[64], hi[64], below[64], above[64];
    switch (o->kind) {
    case DP_OPT_SIZE:
      snprintf(lo, sizeof(lo), "%.0f", o->min);
      snprintf(hi, sizeof(hi), "%.0f", o->max);
      snprintf(below, sizeof(below), "%.0f", o->min - (double)o->multiple);
      snprintf(above, sizeof(above), "%.0f", o->max + (double)o->multiple);
      break;
    case DP_OPT_INTEGER:
      snprintf(lo, sizeof(lo), "%.0f", o->min);
      snprintf(hi, sizeof(hi), "%.0f", o->max);
      snprintf(below, sizeof(below), "%s", o->min > 0 ? "0" : "-1");
      snprintf(above, sizeof(above), "%.0f", o->max + 1);
      break;
    case DP_OPT_DURATION:
    case DP_OPT_REAL:
      snprintf(lo, sizeof(lo), "%g", o->min);
      snprintf(hi, sizeof(hi), "%g", o->max);
      if (o->min > 0)
        snprintf(below, sizeof(below), "%g", o->min * 0.5);
      else /* 0 allowed: a negative number is what is below */
        snprintf(below, sizeof(below), "-1");
      snprintf(above, sizeof(above), "%g", o->max * 1.5);
      break;
    default:
      continue;
    }
    any_conf_t c;
    memset(&c, 0, sizeof(c));
    if (dp_option_set(o, &c, lo, err, sizeof(err)) != 0)
      fail_msg("%s=%s (min) refused: %s", o->key, lo, err);
    if (dp_option_set(o, &c, hi, err, sizeof(err)) != 0)
      fail_msg("%s=%s (max) refused: %s", o->key, hi, err);
    const char *bad[] = {below, above, "", " 1", "1 ", "x"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
      err[0] = '\0';
      char want[128];
      snprintf(want, sizeof(want), "Option \"%s\": value \"%s\" is invalid",
               o->key, bad[k]);
      if (dp_option_set(o, &c, bad[k], err, sizeof(err)) != -EINVAL ||
          strstr(err, want) == NULL || strstr(err, "allowed") == NULL)
        fail_msg("%s=\"%s\": expected -EINVAL and \"%s\", got \"%s\"", o->key,
                 bad[k], want, err);
    }
  }
}

static void test_defaults_applied(void **state) {
  (void)state;
  dp_probe_conf_t p;
  dp_probe_conf_init(&p, "p");
  assert_int_equal(p.pattern, DP_PATTERN_RANDREAD);
  assert_int_equal(p.block_size, 8192);
  assert_int_equal(p.queue_depth, 1);
  assert_int_equal(p.duration_ns, 1000000000ull);
  assert_int_equal(p.max_ops, 0);
  dp_plugin_conf_t c;
  dp_plugin_conf_init(&c);
  assert_true(c.duty_cycle_percent == 2.0);
  assert_int_equal(c.splay, 1);
  assert_true(c.saturation_percent == 90.0);
  assert_int_equal(c.failslow_window_ns, 300000000000ull);
  assert_int_equal(
      dp_plugin_conf_set(&c, "FailSlowWindow", "3", err, sizeof(err)), 0);
  assert_int_equal(c.failslow_window_ns, 3000000000ull);
  assert_int_equal(
      dp_plugin_conf_set(&c, "FailSlowWindow", "500ms", err, sizeof(err)),
      -EINVAL);
  assert_string_equal(err, "Option \"FailSlowWindow\": value \"500ms\" is "
                           "invalid: allowed 1 to 3600 seconds (e.g. 60, "
                           "0.5, 500ms)");
  /* the table's row is what the setter reads */
  const dp_option_t *qd = dp_option_find(DP_SCOPE_PROBE, "queuedepth");
  assert_non_null(qd);
  assert_string_equal(qd->flag, "queue-depth");
  assert_int_equal(dp_probe_conf_set(&p, "QueueDepth", "257", err, sizeof(err)),
                   -EINVAL);
  assert_string_equal(err, "Option \"QueueDepth\": value \"257\" is invalid: "
                           "allowed integers 1 to 256");
  assert_int_equal(dp_probe_conf_set(&p, "MaxOps", "", err, sizeof(err)),
                   -EINVAL);
  assert_int_equal(dp_probe_conf_set(&p, "MaxOps", "-1", err, sizeof(err)),
                   -EINVAL);
  assert_int_equal(
      dp_probe_conf_set(&p, "MaxOps", "4294967296", err, sizeof(err)), 0);
  assert_int_equal(p.max_ops, 4294967296ull);
}

static void test_keys_and_reference(void **state) {
  (void)state;
  char keys[256];
  dp_options_keys(DP_SCOPE_TARGET, keys, sizeof(keys));
  assert_string_equal(keys, "Path, Device, FileSize, LayoutRate, "
                            "ProbeInterval, Timeout, LatencyCeiling, Class "
                            "and <Probe> blocks");
  dp_options_keys(DP_SCOPE_PROBE, keys, sizeof(keys));
  assert_string_equal(keys, "Pattern, BlockSize, QueueDepth, Duration, MaxOps");
  dp_options_keys(DP_SCOPE_PLUGIN, keys, sizeof(keys));
  assert_string_equal(keys, "DutyCycle, Splay, SaturationThreshold, "
                            "ArmRounds, BaselineHorizon, StateDir, "
                            "DeviceStats, FailSlowWindow and <Target> "
                            "blocks");

  char *md = NULL;
  size_t mdlen = 0;
  FILE *f = open_memstream(&md, &mdlen);
  assert_non_null(f);
  dp_options_markdown(f);
  fclose(f);
  size_t n;
  const dp_option_t *t = dp_options(&n);
  for (size_t i = 0; i < n; i++) {
    char cell[80];
    snprintf(cell, sizeof(cell),
             t[i].kind == DP_OPT_BLOCK ? "| `<%s " : "| `%s` |", t[i].key);
    if (strstr(md, cell) == NULL)
      fail_msg("reference lacks a row for %s", t[i].key);
  }
  assert_non_null(
      strstr(md, "| `QueueDepth` | `--queue-depth` | `1` | 1–256 |"));
  assert_non_null(strstr(md, "`randread-qd1` (randread 8k, QD 1, 0.5 s)"));
  free(md);
}

/* Class: a class name is stored as given; anything the disk_info series
 * could not carry unchanged is refused with the key, value and rule. */
static void test_class_option(void **state) {
  (void)state;
  const dp_option_t *o = dp_option_find(DP_SCOPE_TARGET, "class");
  assert_non_null(o);
  dp_target_conf_t t;
  memset(&t, 0, sizeof(t));
  assert_int_equal(dp_option_set(o, &t, "gp3-1000iops", err, sizeof(err)), 0);
  assert_string_equal(t.class_name, "gp3-1000iops");
  static const char *const bad[] = {
      "", "QEMU HARDDISK", "a/b", "x\"y",
      "0123456789012345678901234567890123456789012345678901234567890123"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    if (dp_option_set(o, &t, bad[i], err, sizeof(err)) != -EINVAL)
      fail_msg("Class \"%s\": expected -EINVAL", bad[i]);
    if (strstr(err, "Option \"Class\"") == NULL ||
        strstr(err, "A-Z a-z 0-9 _ . -") == NULL)
      fail_msg("Class \"%s\": message lacks key or rule: %s", bad[i], err);
  }
  assert_string_equal(t.class_name, "gp3-1000iops"); /* kept */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_consistent),
      cmocka_unit_test(test_range_ends),
      cmocka_unit_test(test_defaults_applied),
      cmocka_unit_test(test_keys_and_reference),
      cmocka_unit_test(test_class_option),
  };
  return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
