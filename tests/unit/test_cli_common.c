/* test_cli_common.c - what the subcommands share (src/cli/common.c): the
 * figures for people (three significant figures, thousands grouped, µs,
 * ms and s, MB/s, never an exponent, "-" for what is not a number),
 * padding by display columns, and the one help layout every subcommand's
 * --help prints (purpose, usage, options with -h, the option table's
 * rows, notes, examples; nothing past 80 columns). */
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

static void test_count(void **state) {
  (void)state;
  char b[64];
  assert_string_equal(dp_cli_fmt_count(55820.4, b, sizeof(b)), "55,820");
  assert_string_equal(dp_cli_fmt_count(1234567.0, b, sizeof(b)), "1,234,567");
  assert_string_equal(dp_cli_fmt_count(999.4, b, sizeof(b)), "999");
  assert_string_equal(dp_cli_fmt_count(999.6, b, sizeof(b)), "1,000");
  assert_string_equal(dp_cli_fmt_count(812.2, b, sizeof(b)), "812");
  assert_string_equal(dp_cli_fmt_count(81.24, b, sizeof(b)), "81.2");
  assert_string_equal(dp_cli_fmt_count(8.124, b, sizeof(b)), "8.12");
  assert_string_equal(dp_cli_fmt_count(0.0415, b, sizeof(b)), "0.0415");
  assert_string_equal(dp_cli_fmt_count(0, b, sizeof(b)), "0");
  assert_string_equal(dp_cli_fmt_count(NAN, b, sizeof(b)), "-");
  assert_string_equal(dp_cli_fmt_count(INFINITY, b, sizeof(b)), "-");
}

static void test_latency(void **state) {
  (void)state;
  char b[64];
  assert_string_equal(dp_cli_fmt_latency(45.83e-6, b, sizeof(b)), "45.8 µs");
  assert_string_equal(dp_cli_fmt_latency(397e-6, b, sizeof(b)), "397 µs");
  assert_string_equal(dp_cli_fmt_latency(999.7e-6, b, sizeof(b)), "1.00 ms");
  assert_string_equal(dp_cli_fmt_latency(1.234e-3, b, sizeof(b)), "1.23 ms");
  assert_string_equal(dp_cli_fmt_latency(64.7e-3, b, sizeof(b)), "64.7 ms");
  assert_string_equal(dp_cli_fmt_latency(2.05, b, sizeof(b)), "2.05 s");
  assert_string_equal(dp_cli_fmt_latency(1500, b, sizeof(b)), "1,500 s");
  assert_string_equal(dp_cli_fmt_latency(120e-9, b, sizeof(b)), "120 ns");
  assert_string_equal(dp_cli_fmt_latency(0, b, sizeof(b)), "0 ns");
  assert_string_equal(dp_cli_fmt_latency(NAN, b, sizeof(b)), "-");
}

static void test_mbps_ratio(void **state) {
  (void)state;
  char b[64];
  assert_string_equal(dp_cli_fmt_mbps(1.25e9, 1, b, sizeof(b)), "1,250 MB/s");
  assert_string_equal(dp_cli_fmt_mbps(5.12e8, 1, b, sizeof(b)), "512 MB/s");
  assert_string_equal(dp_cli_fmt_mbps(4.53e7, 0, b, sizeof(b)), "45.3");
  assert_string_equal(dp_cli_fmt_mbps(NAN, 1, b, sizeof(b)), "-");
  assert_string_equal(dp_cli_fmt_ratio(24.13, b, sizeof(b)), "24.1");
  assert_string_equal(dp_cli_fmt_ratio(1.5, b, sizeof(b)), "1.50");
  assert_string_equal(dp_cli_fmt_ratio(0.0103, b, sizeof(b)), "0.0103");
  assert_string_equal(dp_cli_fmt_ratio(0.00965, b, sizeof(b)), "0.00965");
  assert_string_equal(dp_cli_fmt_ratio(179.4, b, sizeof(b)), "179");
  /* no exponent however large or small */
  assert_null(strchr(dp_cli_fmt_count(3e12, b, sizeof(b)), 'e'));
  assert_null(strchr(dp_cli_fmt_ratio(1e-7, b, sizeof(b)), 'e'));
}

/* What f(FILE *) wrote, NUL-terminated (free it). */
__attribute__((noinline)) static char *captured(void (*f)(FILE *, const void *),
                                                const void *arg) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  assert_non_null(m);
  f(m, arg);
  assert_int_equal(fclose(m), 0);
  return buf;
}

static void pad_cell(FILE *f, const void *arg) {
  dp_cli_pad(f, (const char *)arg, 8);
  fputc('|', f);
  dp_cli_pad(f, (const char *)arg, -8);
  fputc('|', f);
}

static void test_pad(void **state) {
  (void)state;
  char *s = captured(pad_cell, "45.8 µs");
  assert_string_equal(s, " 45.8 µs|45.8 µs |"); /* µ is one column */
  free(s);
  s = captured(pad_cell, "too long a cell");
  assert_string_equal(s, "too long a cell|too long a cell|");
  free(s);
}

static void help_of(FILE *f, const void *h) { dp_cli_help(f, h); }
static void usage_of(FILE *f, const void *h) { dp_cli_help_usage(f, h); }

/* names from the input: every control character, C1 and byte that is not
 * UTF-8 shown escaped, the rest kept; cut short at a whole escape */
static void test_visible(void **state) {
  (void)state;
  char b[64];
  assert_string_equal(dp_cli_visible("sda", b, sizeof(b)), "sda");
  assert_string_equal(dp_cli_visible("a\nb\tc\r\a\b\f\v", b, sizeof(b)),
                      "a\\nb\\tc\\r\\a\\b\\f\\v");
  assert_string_equal(dp_cli_visible("\x1b[31mred\x7f", b, sizeof(b)),
                      "\\x1b[31mred\\x7f");
  assert_string_equal(dp_cli_visible("back\\slash", b, sizeof(b)),
                      "back\\\\slash");
  /* UTF-8 kept; C1 (U+009B, CSI) and a lone 0x9b escaped; an overlong
   * NUL and a truncated sequence escaped byte by byte */
  assert_string_equal(dp_cli_visible("µs é ✓ \xf0\x9f\x92\xbe", b, sizeof(b)),
                      "µs é ✓ \xf0\x9f\x92\xbe");
  assert_string_equal(dp_cli_visible("\xc2\x9b"
                                     "2J\x9b",
                                     b, sizeof(b)),
                      "\\xc2\\x9b2J\\x9b");
  assert_string_equal(dp_cli_visible("\xc0\x80"
                                     "a\xe2\x9c",
                                     b, sizeof(b)),
                      "\\xc0\\x80a\\xe2\\x9c");
  /* what fits whole, else whole escapes then "..." */
  assert_string_equal(dp_cli_visible("abc", b, 4), "abc");
  assert_string_equal(dp_cli_visible("abcd", b, 4), "...");
  assert_string_equal(dp_cli_visible("abcdefgh", b, 8), "abcd...");
  assert_string_equal(dp_cli_visible("ab\ncdefgh", b, 8), "ab\\n...");
  assert_string_equal(dp_cli_visible("abc\ndefgh", b, 8), "abc...");
  char *m = NULL;
  size_t ml = 0;
  FILE *f = open_memstream(&m, &ml);
  assert_non_null(f);
  dp_cli_put_visible(f, "h\n\x1b"
                        "1");
  fclose(f);
  assert_string_equal(m, "h\\n\\x1b1");
  free(m);
}

static void test_help_layout(void **state) {
  (void)state;
  static const char *const usage[] = {"[--since 24h] DIR", "--other A B", NULL};
  static const dp_cli_opt_help_t opts[] = {
      {"--since DURATION", "the window up to now"},
      {"--a-very-long-flag-name VALUE", "its text on the next line"},
      {NULL, NULL}};
  static const char *const ex[] = {"diskprobe thing /srv/rrd", NULL};
  const dp_cli_help_t h = {"thing", "what it is for",
                           0,       usage,
                           opts,    "First paragraph.\n\nSecond one.",
                           ex};
  char *s = captured(help_of, &h);
  assert_non_null(strstr(s, "diskprobe thing: what it is for\n\n"
                            "usage: diskprobe thing [--since 24h] DIR\n"
                            "       diskprobe thing --other A B\n\n"
                            "options:\n"
                            "  --since DURATION      the window up to now\n"
                            "  --a-very-long-flag-name VALUE\n"
                            "                        its text on the next "
                            "line\n"
                            "  -h, --help            this help\n\n"
                            "First paragraph.\n\nSecond one.\n\n"
                            "example:\n  diskprobe thing /srv/rrd\n"));
  free(s);
  s = captured(usage_of, &h);
  assert_string_equal(s, "usage: diskprobe thing [--since 24h] DIR\n"
                         "       diskprobe thing --other A B\n");
  free(s);
}

/* run's help: the table's flags lead the usage, its rows follow the
 * command's own options, every line within 80 columns. */
static void test_help_table(void **state) {
  (void)state;
  char *s = captured(help_of, &dp_cli_help_run);
  assert_true(strncmp(s, "diskprobe run: ", 15) == 0);
  assert_non_null(strstr(s, "\nusage: diskprobe run [--pattern "));
  const char *own = strstr(s, "\noptions:\n  --format text|json ");
  const char *table = strstr(s, "\nprobe and target options (");
  assert_non_null(own);
  assert_non_null(table);
  assert_true(own < table);
  assert_non_null(strstr(table, "\n  --queue-depth N       I/Os kept in "
                                "flight [QueueDepth: 1–256; default 1]\n"));
  assert_null(strchr(table, '`'));
  assert_non_null(strstr(s, "\nexamples:\n  diskprobe run "));
  for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
    size_t cols = 0;
    for (const char *c = line; *c; c++)
      cols += ((unsigned char)*c & 0xC0) != 0x80;
    assert_true(cols <= 80);
  }
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_count),       cmocka_unit_test(test_latency),
      cmocka_unit_test(test_mbps_ratio),  cmocka_unit_test(test_pad),
      cmocka_unit_test(test_help_layout), cmocka_unit_test(test_help_table),
      cmocka_unit_test(test_visible),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
