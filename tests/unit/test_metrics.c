/*
 * test_metrics.c - the metric table (src/metrics.c): every series and type
 * sits at its id's index (the enums and the tables are written apart), a
 * fixed type_instance is given exactly where the rule asks for one, the
 * lookups, and write_prometheus' naming rule.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"

static void test_ids_and_fields(void **state) {
  (void)state;
  for (int i = 0; i < DP_METRIC_TYPE_COUNT; i++) {
    const dp_metric_type_t *t = dp_metric_type((dp_metric_type_id_t)i);
    assert_non_null(t);
    assert_int_equal(t->id, i);
    assert_true(t->nds >= 1 && t->nds <= DP_METRIC_DS_MAX);
    /* ours carry their types.db comment */
    assert_true(t->from_collectd || (t->doc != NULL && t->doc[0] != '\0'));
    for (size_t d = 0; d < t->nds; d++)
      assert_non_null(t->ds[d].name);
  }
  int used[DP_METRIC_TYPE_COUNT] = {0};
  for (int i = 0; i < DP_METRIC_COUNT; i++) {
    const dp_metric_t *m = dp_metric((dp_metric_id_t)i);
    assert_non_null(m);
    assert_int_equal(m->id, i);
    assert_non_null(m->type);
    used[m->type->id] = 1;
    assert_int_equal(m->type_instance_rule == DP_METRIC_TI_FIXED,
                     m->type_instance != NULL);
    assert_non_null(m->unit);
    assert_non_null(m->help);
    /* the device view's series are named by fixed strings, but for the
     * identity series, whose type instance is the disk's class */
    if (m->plugin_instance == DP_METRIC_PI_DEVICE)
      assert_int_equal(m->type_instance_rule, i == DP_METRIC_DEV_INFO
                                                  ? DP_METRIC_TI_CLASS
                                                  : DP_METRIC_TI_FIXED);
  }
  for (int i = 0; i < DP_METRIC_TYPE_COUNT; i++)
    assert_true(used[i]); /* no type without a series */
  assert_null(dp_metric(DP_METRIC_COUNT));
  assert_null(dp_metric_type(DP_METRIC_TYPE_COUNT));
}

static void test_series_names(void **state) {
  (void)state;
  const dp_metric_t *m = dp_metric(DP_METRIC_TARGET_STALL_DURATION);
  assert_string_equal(m->type->name, "duration");
  assert_string_equal(m->type_instance, "stalled");
  m = dp_metric(DP_METRIC_PEERS_FAILSLOW);
  assert_string_equal(m->type->name, "failslow");
  assert_int_equal(m->plugin_instance, DP_METRIC_PI_DEVICE);
  m = dp_metric(DP_METRIC_HEALTH_RULE);
  assert_string_equal(m->type->name, "target_health");
  assert_int_equal(m->type_instance_rule, DP_METRIC_TI_RULE);
}

static void test_find(void **state) {
  (void)state;
  const dp_metric_type_t *t = dp_metric_type_find("probe_latency");
  assert_non_null(t);
  assert_int_equal(t->id, DP_METRIC_TYPE_PROBE_LATENCY);
  assert_int_equal(t->nds, 7);
  assert_string_equal(t->ds[4].name, "p99");
  assert_false(t->from_collectd);
  t = dp_metric_type_find("queue_length");
  assert_non_null(t);
  assert_true(t->from_collectd);
  assert_null(dp_metric_type_find("health")); /* collectd's, not ours */
  assert_null(dp_metric_type_find(""));
}

static void test_prom_names(void **state) {
  (void)state;
  char b[128];
  const dp_metric_type_t *t = dp_metric_type(DP_METRIC_TYPE_STALLED);
  assert_true(dp_metric_prom_name(t, 0, b, sizeof(b)) > 0);
  assert_string_equal(b, "collectd_diskprobe_stalled"); /* "value" dropped */
  assert_int_equal(dp_metric_prom_name(t, 1, b, sizeof(b)), -1);
  t = dp_metric_type(DP_METRIC_TYPE_DURATION);
  dp_metric_prom_name(t, 0, b, sizeof(b));
  assert_string_equal(b, "collectd_diskprobe_duration_seconds");
  t = dp_metric_type(DP_METRIC_TYPE_PROBE_ERRORS);
  dp_metric_prom_name(t, 2, b, sizeof(b));
  assert_string_equal(b, "collectd_diskprobe_probe_errors_timeout_total");
  t = dp_metric_type(DP_METRIC_TYPE_PROBE_LATENCY);
  dp_metric_prom_name(t, 6, b, sizeof(b));
  assert_string_equal(b, "collectd_diskprobe_probe_latency_max");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ids_and_fields),
      cmocka_unit_test(test_series_names),
      cmocka_unit_test(test_find),
      cmocka_unit_test(test_prom_names),
  };
  return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
