/* test_prom_input.c - the pieces of the Prometheus reader
 * (src/cli/prom_input.c) that make what goes out: a label value as a
 * PromQL string literal (a quote, a backslash, a newline or a control
 * character cannot end the literal early or inject a matcher; too small a
 * buffer is refused, not cut), the URL shown in messages (without
 * user:password@), and --prometheus-limit's parse (common.c: a size, 4k
 * to 64G). The answers
 * themselves are read from a real Prometheus in
 * tests/shell/fleet_prometheus.sh. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "prom_input.h"

static void test_quote(void **state) {
  (void)state;
  char b[64];
  assert_int_equal(dp_promin_quote("db1", b, sizeof(b)), 0);
  assert_string_equal(b, "\"db1\"");
  assert_int_equal(dp_promin_quote("a\"}or vector(1)#", b, sizeof(b)), 0);
  assert_string_equal(b, "\"a\\\"}or vector(1)#\"");
  assert_int_equal(dp_promin_quote("back\\slash", b, sizeof(b)), 0);
  assert_string_equal(b, "\"back\\\\slash\"");
  assert_int_equal(dp_promin_quote("nl\ntab\tcr\resc\x1b", b, sizeof(b)), 0);
  assert_string_equal(b, "\"nl\\ntab\\tcr\\resc\\x1b\"");
  assert_int_equal(dp_promin_quote("h\xc3\xa9te", b, sizeof(b)), 0);
  assert_string_equal(b, "\"h\xc3\xa9te\""); /* UTF-8 kept */
  assert_int_equal(dp_promin_quote("", b, sizeof(b)), 0);
  assert_string_equal(b, "\"\"");
  /* exactly fits: 3 bytes + 2 quotes + NUL */
  assert_int_equal(dp_promin_quote("abc", b, 6), 0);
  assert_string_equal(b, "\"abc\"");
  assert_int_equal(dp_promin_quote("abcd", b, 6), -1);
  assert_int_equal(dp_promin_quote("a\"", b, 5), -1); /* "a\"" needs 6 */
}

static void test_url_shown(void **state) {
  (void)state;
  char b[128];
  assert_string_equal(
      dp_promin_url_shown("http://u:pw@prom:9090/x", b, sizeof(b)),
      "http://prom:9090/x");
  assert_string_equal(dp_promin_url_shown("http://prom:9090", b, sizeof(b)),
                      "http://prom:9090");
  /* an @ in the path is not a user */
  assert_string_equal(dp_promin_url_shown("http://vm:8428/a@b", b, sizeof(b)),
                      "http://vm:8428/a@b");
}

static void test_limit(void **state) {
  (void)state;
  size_t v = 0;
  assert_int_equal(dp_cli_prometheus_limit("fleet", "64M", &v), 0);
  assert_int_equal(v, (size_t)64 << 20);
  assert_int_equal(dp_cli_prometheus_limit("fleet", "4k", &v), 0);
  assert_int_equal(v, 4096);
  assert_int_equal(dp_cli_prometheus_limit("fleet", "64G", &v), 0);
  assert_int_equal(v, (size_t)64 << 30);
  assert_int_equal(dp_cli_prometheus_limit("fleet", "4095", &v), -1);
  assert_int_equal(dp_cli_prometheus_limit("fleet", "65G", &v), -1);
  assert_int_equal(dp_cli_prometheus_limit("fleet", "-1", &v), -1);
  assert_int_equal(dp_cli_prometheus_limit("fleet", "10x", &v), -1);
  assert_int_equal(dp_cli_prometheus_limit("fleet", "", &v), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quote),
      cmocka_unit_test(test_url_shown),
      cmocka_unit_test(test_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
