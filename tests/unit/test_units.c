/* test_units.c - size and duration parsing shared by the CLI and plugin. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "units.h"

static void test_sizes(void **state) {
  (void)state;
  const struct {
    const char *in;
    uint64_t want;
  } ok[] = {{"4096", 4096},       {"8k", 8192},       {"8K", 8192},
            {"8KiB", 8192},       {"1M", 1048576},    {"1m", 1048576},
            {"1G", 1073741824},   {"2T", 2ull << 40}, {"0", 0},
            {"512kB", 512 * 1024}};
  for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    uint64_t v = 1;
    if (dp_parse_size(ok[i].in, &v) != 0 || v != ok[i].want)
      fail_msg("'%s': expected %llu, got %llu", ok[i].in,
               (unsigned long long)ok[i].want, (unsigned long long)v);
  }
  const char *bad[] = {"", "k", "-1", "8x", "1.5G", "8 k", "8kk", " 8"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    uint64_t v;
    if (dp_parse_size(bad[i], &v) != -EINVAL)
      fail_msg("'%s' should be rejected", bad[i]);
  }
  uint64_t v;
  assert_int_equal(dp_parse_size("99999999999999999999", &v), -ERANGE);
  assert_int_equal(dp_parse_size("17179869184G", &v), -ERANGE);
}

static void test_durations(void **state) {
  (void)state;
  const struct {
    const char *in;
    uint64_t want;
  } ok[] = {{"2", 2000000000ull},   {"2s", 2000000000ull},
            {"0.5", 500000000ull},  {"500ms", 500000000ull},
            {"100us", 100000ull},   {"1m", 60000000000ull},
            {".25s", 250000000ull}, {"1h", 3600000000000ull}};
  for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    uint64_t v = 1;
    if (dp_parse_duration(ok[i].in, &v) != 0 || v != ok[i].want)
      fail_msg("'%s': expected %llu ns, got %llu", ok[i].in,
               (unsigned long long)ok[i].want, (unsigned long long)v);
  }
  const char *bad[] = {"", "s", "-1", "2x", "2 s", "nan", "1e400"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    uint64_t v;
    if (dp_parse_duration(bad[i], &v) >= 0)
      fail_msg("'%s' should be rejected", bad[i]);
  }
}

static void test_format(void **state) {
  (void)state;
  char b[32];
  dp_format_size(8192, b, sizeof(b));
  assert_string_equal(b, "8k");
  dp_format_size(1 << 20, b, sizeof(b));
  assert_string_equal(b, "1M");
  dp_format_size(1000, b, sizeof(b));
  assert_string_equal(b, "1000");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_durations),
      cmocka_unit_test(test_format),
  };
  return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
