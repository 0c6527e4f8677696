/*
 * fuzz_units.c - libFuzzer target for the number, size and duration
 * parsers (src/units.h).
 *
 * The input (up to 256 bytes, as a NUL-terminated string; an embedded NUL
 * ends it) goes through dp_parse_uint, dp_parse_real, dp_parse_size and
 * dp_parse_duration. Checked: only 0, -EINVAL or -ERANGE; an integer is
 * also a real and a size of the same value; a real is also a duration of
 * that many seconds (or out of range); dp_format_size of a parsed size
 * parses back to the same bytes; dp_seconds_to_ns agrees with the
 * duration parser.
 */
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c))                                                                  \
      __builtin_trap();                                                        \
  } while (0)

#define MAX_NS (10ull * 365 * 86400 * 1000000000ull)

static int ok_rc(int rc) { return rc == 0 || rc == -EINVAL || rc == -ERANGE; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char s[257];
  if (size > 256)
    size = 256;
  memcpy(s, data, size);
  s[size] = '\0';

  uint64_t u = 0, bytes = 0, ns = 0;
  double r = -1;
  int ru = dp_parse_uint(s, &u);
  int rr = dp_parse_real(s, &r);
  int rs = dp_parse_size(s, &bytes);
  int rd = dp_parse_duration(s, &ns);
  CHECK(ok_rc(ru) && ok_rc(rr) && ok_rc(rs) && ok_rc(rd));

  if (ru == 0) {
    CHECK(rr == 0 && rs == 0 && bytes == u);
    CHECK(fabs(r - (double)u) <= (double)u * 1e-15);
  }
  if (ru == -ERANGE)
    CHECK(rs == -ERANGE);
  if (rr == 0) {
    CHECK(isfinite(r) && r >= 0);
    /* a bare number is seconds */
    CHECK(rd == 0 || rd == -ERANGE);
    uint64_t ns2 = 0;
    int r2 = dp_seconds_to_ns(r, &ns2);
    CHECK(r2 == 0 || r2 == -ERANGE);
    if (rd == 0 && r2 == 0) {
      double diff = fabs((double)ns - (double)ns2);
      CHECK(diff <= 1.0 + (double)ns * 1e-12);
    }
  }
  if (rd == 0)
    CHECK(ns <= MAX_NS);
  if (rs == 0) {
    char f[32];
    uint64_t back = 0;
    dp_format_size(bytes, f, sizeof(f));
    CHECK(dp_parse_size(f, &back) == 0 && back == bytes);
    dp_format_size(bytes, f, 4); /* truncates, never overruns */
    CHECK(strlen(f) <= 3);
  }
  return 0;
}
