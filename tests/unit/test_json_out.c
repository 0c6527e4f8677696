/* test_json_out.c - the JSON the command writes (src/cli/json_out.c):
 * numbers print as the printf formats the commands used before jansson
 * did (no 0.10000000000000001), NaN and infinities as null, counters as
 * integers, strings escaped and read back by jansson as they were (bytes
 * that are not UTF-8 as U+FFFD), the three layouts, keys in the order
 * set, watch's Unix times with their microseconds, and a probe result's
 * keys in run's order. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"

/* What dp_cli_json_print writes for o in layout, without the newline. */
static char *printed(json_t *o, size_t layout) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  assert_int_equal(dp_cli_json_print(f, o, layout), 0);
  assert_int_equal(fclose(f), 0);
  assert_true(len > 0 && buf[len - 1] == '\n');
  buf[len - 1] = '\0';
  assert_null(strchr(buf, '\n'));
  return buf;
}

/* {"v":X} compact, X the value's text. */
static void expect_dump(json_t *v, const char *want) {
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "v", v);
  char *s = printed(o, DP_CLI_JSON_LINE), wants[256];
  snprintf(wants, sizeof(wants), "{\"v\":%s}", want);
  assert_string_equal(s, wants);
  free(s);
}

static void test_numbers(void **state) {
  (void)state;
  expect_dump(dp_cli_json_fixed(0.1, 9), "0.1");
  expect_dump(dp_cli_json_fixed(0.000061265, 9), "6.1265e-5");
  expect_dump(dp_cli_json_fixed(0.0000612654321, 9), "6.1265e-5");
  expect_dump(dp_cli_json_fixed(133526691.29, 1), "133526691.3");
  expect_dump(dp_cli_json_fixed(16299.6454, 3), "16299.645");
  expect_dump(dp_cli_json_fixed(1.0, 3), "1.0");
  expect_dump(dp_cli_json_fixed(0.300006535, 9), "0.300006535");
  expect_dump(dp_cli_json_sig(2.97849, 4), "2.978");
  expect_dump(dp_cli_json_num(1.0 / 3.0), "0.333333");
  expect_dump(dp_cli_json_num(1.24734e8 + 17), "124734000.0");
  expect_dump(dp_cli_json_num(4), "4");
  expect_dump(dp_cli_json_num(-0.0), "0");
  expect_dump(dp_cli_json_num(999999.7), "1000000.0");
  expect_dump(dp_cli_json_sig(1234567, 10), "1234567");
  expect_dump(dp_cli_json_sig(1.5, 1), "2");
  expect_dump(dp_cli_json_sig(0.1 + 0.2, 10), "0.3");
  expect_dump(dp_cli_json_sig(-0.5, 6), "-0.5");
  expect_dump(dp_cli_json_num(NAN), "null");
  expect_dump(dp_cli_json_fixed(INFINITY, 3), "null");
  expect_dump(dp_cli_json_sig(-INFINITY, 10), "null");
  expect_dump(dp_cli_json_uint(12427264), "12427264");
  expect_dump(dp_cli_json_uint(UINT64_MAX), "9223372036854775807");
  expect_dump(dp_cli_json_int(-1), "-1");
  expect_dump(dp_cli_json_bool(1), "true");
  expect_dump(dp_cli_json_bool(0), "false");
}

/* Every value a format prints reads back (jansson) as the value that its
 * printf text reads as: the figures are the formats', no more, no less,
 * up to the 15 significant digits every double holds (DBL_DIG; each key's
 * values have fewer, but for watch's times: test_timed). */
static void test_read_back(void **state) {
  (void)state;
  srand(7);
  for (int i = 0; i < 20000; i++) {
    double v = ldexp((double)rand() / RAND_MAX, (rand() % 80) - 50);
    int dec = rand() % 10, sig = 1 + rand() % 10;
    if (v >= 1 && (int)floor(log10(v)) + 1 + dec > 15)
      dec = 15 - ((int)floor(log10(v)) + 1);
    char want_f[512], want_g[64];
    snprintf(want_f, sizeof(want_f), "%.*f", dec, v);
    snprintf(want_g, sizeof(want_g), "%.*g", sig, v);
    json_t *a = dp_cli_json_array();
    dp_cli_json_append(a, dp_cli_json_fixed(v, dec));
    dp_cli_json_append(a, dp_cli_json_sig(v, sig));
    char *s = json_dumps(a, DP_CLI_JSON_LINE | DP_CLI_JSON_FLAGS);
    json_decref(a);
    json_t *back = json_loads(s, JSON_DECODE_ANY, NULL);
    assert_non_null(back);
    if (json_number_value(json_array_get(back, 0)) != strtod(want_f, NULL) ||
        json_number_value(json_array_get(back, 1)) != strtod(want_g, NULL))
      fail_msg("%.17g: %s, want %s and %s", v, s, want_f, want_g);
    json_decref(back);
    free(s);
  }
}

static void test_strings(void **state) {
  (void)state;
  const char *in = "we\"ird\\dir/\n\t\x01\x7f caf\xc3\xa9 \xe2\x82\xac";
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "s", dp_cli_json_str(in));
  char *s = printed(o, DP_CLI_JSON_LINE);
  assert_string_equal(s, "{\"s\":\"we\\\"ird\\\\dir/\\n\\t\\u0001\x7f "
                         "caf\xc3\xa9 \xe2\x82\xac\"}");
  json_t *back = json_loads(s, 0, NULL);
  assert_non_null(back);
  assert_string_equal(json_string_value(json_object_get(back, "s")), in);
  json_decref(back);
  free(s);
  /* not UTF-8: a lone continuation byte, a truncated sequence, an
   * overlong '/', a surrogate, 0xff */
  expect_dump(dp_cli_json_str("a\x80z"), "\"a\xef\xbf\xbdz\"");
  expect_dump(dp_cli_json_str("a\xc3"), "\"a\xef\xbf\xbd\"");
  expect_dump(dp_cli_json_str("\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  expect_dump(dp_cli_json_str("\xed\xa0\x80!"),
              "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!\"");
  expect_dump(dp_cli_json_str("\xff\xf0\x9f\x98\x80"),
              "\"\xef\xbf\xbd\xf0\x9f\x98\x80\"");
  expect_dump(dp_cli_json_str(NULL), "null");
}

static void test_layouts(void **state) {
  (void)state;
  const size_t layouts[] = {DP_CLI_JSON_LINE, DP_CLI_JSON_SPACED,
                            DP_CLI_JSON_INDENTED};
  const char *want[] = {"{\"z\":1,\"a\":[0.5,null],\"m\":{}}",
                        "{\"z\": 1, \"a\": [0.5, null], \"m\": {}}",
                        ("{\n  \"z\": 1,\n  \"a\": [\n    0.5,\n    null\n  "
                         "],\n  \"m\": {}\n}")};
  for (size_t i = 0; i < 3; i++) {
    json_t *o = dp_cli_json_object(), *a = dp_cli_json_array();
    dp_cli_json_set(o, "z", dp_cli_json_uint(1));
    dp_cli_json_append(a, dp_cli_json_num(0.5));
    dp_cli_json_append(a, dp_cli_json_num(NAN));
    dp_cli_json_set(o, "a", a);
    dp_cli_json_set(o, "m", dp_cli_json_object());
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(dp_cli_json_print(f, o, layouts[i]), 0);
    fclose(f);
    assert_true(len > 0 && buf[len - 1] == '\n');
    buf[len - 1] = '\0';
    assert_string_equal(buf, want[i]);
    free(buf);
  }
}

/* The time first with all its figures, the rest as the others are. */
static void test_timed(void **state) {
  (void)state;
  struct {
    double t;
    int dec;
    const char *want;
  } c[] = {
      {1796285384.9905761, 6, "{\"time\":1796285384.990576,\"x\":0.1}"},
      {1796285384.1, 6, "{\"time\":1796285384.1,\"x\":0.1}"},
      {1700000000.0, 6, "{\"time\":1700000000.0,\"x\":0.1}"},
      {9.3, 6, "{\"time\":9.3,\"x\":0.1}"},
      {0.0000015, 6, "{\"time\":2e-6,\"x\":0.1}"},
      {NAN, 6, "{\"time\":null,\"x\":0.1}"},
  };
  for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
    json_t *rest = dp_cli_json_object();
    dp_cli_json_set(rest, "x", dp_cli_json_fixed(0.1, 9));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(dp_cli_json_print_timed(f, "time", c[i].t, c[i].dec, rest),
                     0);
    fclose(f);
    char want[128];
    snprintf(want, sizeof(want), "%s\n", c[i].want);
    assert_string_equal(buf, want);
    free(buf);
  }
  /* nothing but the time */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(
      dp_cli_json_print_timed(f, "time", 12.5, 3, dp_cli_json_object()), 0);
  fclose(f);
  assert_string_equal(buf, "{\"time\":12.5}\n");
  free(buf);
}

static void test_result(void **state) {
  (void)state;
  dp_result_t r;
  memset(&r, 0, sizeof(r));
  r.pattern = DP_PATTERN_RANDREAD;
  r.block_size = 8192;
  r.queue_depth = 1;
  r.ops = 4890;
  r.bytes = 4890ull * 8192;
  r.elapsed_s = 0.3000065351;
  r.iops = 16299.6454;
  r.bytes_per_s = 133526691.29;
  r.window_ops = 4000; /* stepped: whole steps of a throttle */
  r.throttled = 1;
  r.stepped = 1;
  r.burst_ops = 12.34;
  r.lat_min_s = 0.0000339312;
  r.lat_mean_s = 0.000061265;
  r.lat_p50_s = 0.000059136;
  r.lat_p90_s = 0.000068096;
  r.lat_p99_s = 0.000098816;
  r.lat_p999_s = NAN;
  r.lat_max_s = 0.001896077;
  r.achieved_qd = 0.99864;
  r.stalled = 1;
  r.cpu_user_s = 0.00735;
  r.cpu_sys_s = 0.122069;
  r.wall_s = 0.300139;
  json_t *o = dp_cli_json_object();
  dp_cli_json_result(o, &r);
  char *s = printed(o, DP_CLI_JSON_LINE);
  assert_string_equal(
      s, "{\"pattern\":\"randread\",\"block_size\":8192,\"queue_depth\":1,"
         "\"ops\":4890,\"bytes\":40058880,\"elapsed_s\":0.300006535,"
         "\"iops\":16299.645,\"bytes_per_second\":133526691.3,"
         "\"window_ops\":4000,\"throttled\":true,\"stepped\":true,\"burst_"
         "ops\":12.3,"
         "\"latency_s\":{\"min\":3.3931e-5,\"mean\":6.1265e-5,"
         "\"p50\":5.9136e-5,\"p90\":6.8096e-5,\"p99\":9.8816e-5,"
         "\"p99.9\":null,\"max\":0.001896077},\"achieved_queue_depth\":0.9986,"
         "\"errors\":{\"io\":0,\"short\":0,\"timeout\":0},\"stalled\":true,"
         "\"cpu_s\":{\"user\":0.00735,\"system\":0.122069},"
         "\"wall_s\":0.300139}");
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_numbers), cmocka_unit_test(test_read_back),
      cmocka_unit_test(test_strings), cmocka_unit_test(test_layouts),
      cmocka_unit_test(test_timed),   cmocka_unit_test(test_result),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
