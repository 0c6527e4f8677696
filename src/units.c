/* units.c - numbers, sizes and durations; see units.h. */
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_NS (10ull * 365 * 86400 * 1000000000ull)

/* The one scan of digits: one or more of [0-9] from s into *v, *end after
 * them. -EINVAL if s does not start with a digit, -ERANGE on overflow. */
static int scan_digits(const char *s, uint64_t *v, const char **end) {
  uint64_t x = 0;
  const char *p = s;
  if (*p < '0' || *p > '9')
    return -EINVAL;
  int over = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (x > (UINT64_MAX - d) / 10)
      over = 1;
    else
      x = x * 10 + d;
  }
  *end = p;
  if (over)
    return -ERANGE;
  *v = x;
  return 0;
}

/* A number from s: digits (frac == 0), or a decimal "12", "1.5", ".5",
 * "2." (frac == 1) as integer part ip and fraction num / den (den a power
 * of ten, at most 10^18; further digits are read and dropped). *end after
 * the number. */
typedef struct {
  uint64_t ip, num, den;
} decimal_t;

static int scan_number(const char *s, int frac, decimal_t *d,
                       const char **end) {
  const char *p = s;
  d->ip = 0;
  d->num = 0;
  d->den = 1;
  if (s == NULL)
    return -EINVAL;
  int have = 0;
  if (*p >= '0' && *p <= '9') {
    int rc = scan_digits(p, &d->ip, &p);
    if (rc < 0)
      return rc;
    have = 1;
  }
  if (frac && *p == '.') {
    for (p++; *p >= '0' && *p <= '9'; p++) {
      have = 1;
      if (d->den < 1000000000000000000ull) {
        d->num = d->num * 10 + (uint64_t)(*p - '0');
        d->den *= 10;
      }
    }
  }
  if (!have)
    return -EINVAL;
  *end = p;
  return 0;
}

/* A number that is the whole string. */
static int scan_whole(const char *s, int frac, decimal_t *d) {
  const char *end;
  int rc = scan_number(s, frac, d, &end);
  return rc < 0 ? rc : *end != '\0' ? -EINVAL : 0;
}

int dp_parse_uint(const char *s, uint64_t *out) {
  decimal_t d;
  int rc = scan_whole(s, 0, &d);
  if (rc == 0)
    *out = d.ip;
  return rc;
}

int dp_parse_real(const char *s, double *out) {
  decimal_t d;
  int rc = scan_whole(s, 1, &d);
  if (rc == 0)
    *out = (double)d.ip + (double)d.num / (double)d.den;
  return rc;
}

int dp_parse_size(const char *s, uint64_t *out_bytes) {
  const char *end;
  decimal_t d;
  int rc = scan_number(s, 0, &d, &end);
  if (rc < 0)
    return rc;
  uint64_t v = d.ip;
  static const char suffixes[] = "kmgt";
  unsigned shift = 0;
  if (*end != '\0') {
    const char *u = strchr(suffixes, *end | 0x20);
    if (u == NULL)
      return -EINVAL;
    shift = 10 * (unsigned)(u - suffixes + 1);
    end++;
    if (*end != '\0' && strcasecmp(end, "iB") != 0 && strcasecmp(end, "B") != 0)
      return -EINVAL;
  }
  if (shift && v > (UINT64_MAX >> shift))
    return -ERANGE;
  *out_bytes = v << shift;
  return 0;
}

int dp_seconds_to_ns(double s, uint64_t *out_ns) {
  if (!(s >= 0) || isnan(s))
    return -EINVAL;
  double ns = s * 1e9;
  if (ns > (double)MAX_NS)
    return -ERANGE;
  *out_ns = (uint64_t)llround(ns);
  return 0;
}

int dp_parse_duration(const char *s, uint64_t *out_ns) {
  static const struct {
    const char *suffix;
    uint64_t ns;
  } units[] = {
      {"", 1000000000ull},     {"s", 1000000000ull},   {"ms", 1000000ull},
      {"us", 1000ull},         {"ns", 1ull},           {"m", 60000000000ull},
      {"min", 60000000000ull}, {"h", 3600000000000ull}};
  decimal_t d;
  const char *end;
  int rc = scan_number(s, 1, &d, &end);
  if (rc < 0)
    return rc;
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
    if (strcmp(end, units[i].suffix) != 0)
      continue;
    unsigned __int128 ns =
        (unsigned __int128)d.ip * units[i].ns +
        ((unsigned __int128)d.num * units[i].ns + d.den / 2) / d.den;
    if (ns > MAX_NS)
      return -ERANGE;
    *out_ns = (uint64_t)ns;
    return 0;
  }
  return -EINVAL;
}

void dp_format_size(uint64_t bytes, char *buf, size_t len) {
  static const char units[] = "kMGT";
  int u = -1;
  uint64_t v = bytes;
  while (v >= 1024 && v % 1024 == 0 && u < 3) {
    v /= 1024;
    u++;
  }
  if (u < 0)
    snprintf(buf, len, "%llu", (unsigned long long)bytes);
  else
    snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
}
