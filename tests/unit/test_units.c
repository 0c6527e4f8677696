/* test_units.c - the one number parser and the size and duration parsers
 * built on it, shared by the CLI and the plugin: what each accepts, and
 * every rejection (empty, signs, spaces, suffixes, overflow). */
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
  const char *bad[] = {"",   "k",  "-1", "8x",  "1.5G", "8 k",  "8kk",
                       " 8", "8 ", "+8", "8k ", "0x10", "8kiBx"};
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
            {".25s", 250000000ull}, {"1h", 3600000000000ull},
            {"10ns", 10ull},        {"1min", 60000000000ull},
            {"0.1", 100000000ull},  {"0.10000000000000001", 100000000ull},
            {"1.5ms", 1500000ull}};
  for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    uint64_t v = 1;
    if (dp_parse_duration(ok[i].in, &v) != 0 || v != ok[i].want)
      fail_msg("'%s': expected %llu ns, got %llu", ok[i].in,
               (unsigned long long)ok[i].want, (unsigned long long)v);
  }
  const char *bad[] = {"",    "s",   "-1",  "2x",  "2 s", "nan", "1e400",
                       "1e3", " 1s", "1s ", "+1s", ".",   "inf", "1.5.5s"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    uint64_t v;
    if (dp_parse_duration(bad[i], &v) >= 0)
      fail_msg("'%s' should be rejected", bad[i]);
  }
  uint64_t v;
  assert_int_equal(dp_parse_duration("99999999999999999999", &v), -ERANGE);
  assert_int_equal(dp_parse_duration("3650d", &v), -EINVAL);
  assert_int_equal(dp_parse_duration("88000h", &v), -ERANGE); /* > 10 y */
}

static void test_uint(void **state) {
  (void)state;
  const struct {
    const char *in;
    uint64_t want;
  } ok[] = {{"0", 0},
            {"1", 1},
            {"007", 7},
            {"256", 256},
            {"18446744073709551615", UINT64_MAX}};
  for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    uint64_t v = 1;
    if (dp_parse_uint(ok[i].in, &v) != 0 || v != ok[i].want)
      fail_msg("'%s': expected %llu, got %llu", ok[i].in,
               (unsigned long long)ok[i].want, (unsigned long long)v);
  }
  /* each a separate rejection: empty, sign, spaces, suffix, base, decimal */
  const char *bad[] = {"",    "-1",  "+1",  " 1",  "1 ",  "1x",  "0x10",
                       "1.5", "1e3", "\t1", "1\n", "--1", "one", " "};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    uint64_t v = 42;
    int rc = dp_parse_uint(bad[i], &v);
    if (rc != -EINVAL || v != 42)
      fail_msg("'%s': expected -EINVAL and no store, got %d (%llu)", bad[i], rc,
               (unsigned long long)v);
  }
  uint64_t v;
  assert_int_equal(dp_parse_uint("18446744073709551616", &v), -ERANGE);
  assert_int_equal(dp_parse_uint("99999999999999999999999", &v), -ERANGE);
  assert_int_equal(dp_parse_uint(NULL, &v), -EINVAL);
}

static void test_real(void **state) {
  (void)state;
  const struct {
    const char *in;
    double want;
  } ok[] = {{"2", 2}, {"0.01", 0.01}, {".5", 0.5}, {"100.", 100}, {"90", 90}};
  for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    double v = -1;
    if (dp_parse_real(ok[i].in, &v) != 0 || v != ok[i].want)
      fail_msg("'%s': expected %g, got %g", ok[i].in, ok[i].want, v);
  }
  const char *bad[] = {"",    "-1",  "+1",  " 1",    "1 ",  "1x", ".",
                       "1e3", "nan", "inf", "1.2.3", "0x1", "1,5"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    double v;
    if (dp_parse_real(bad[i], &v) != -EINVAL)
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
      cmocka_unit_test(test_uint),   cmocka_unit_test(test_real),
      cmocka_unit_test(test_sizes),  cmocka_unit_test(test_durations),
      cmocka_unit_test(test_format),
  };
  return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
