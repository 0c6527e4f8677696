/* units.c - sizes and durations; see units.h. */
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int dp_parse_size(const char *s, uint64_t *out_bytes) {
  if (s == NULL || *s < '0' || *s > '9')
    return -EINVAL;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno == ERANGE)
    return -ERANGE;
  unsigned shift = 0;
  switch (*end) {
  case '\0':
    break;
  case 'k':
  case 'K':
    shift = 10;
    end++;
    break;
  case 'm':
  case 'M':
    shift = 20;
    end++;
    break;
  case 'g':
  case 'G':
    shift = 30;
    end++;
    break;
  case 't':
  case 'T':
    shift = 40;
    end++;
    break;
  default:
    return -EINVAL;
  }
  if (shift && strcasecmp(end, "") != 0 && strcasecmp(end, "iB") != 0 &&
      strcasecmp(end, "B") != 0)
    return -EINVAL;
  if (shift && v > (UINT64_MAX >> shift))
    return -ERANGE;
  *out_bytes = (uint64_t)v << shift;
  return 0;
}

#define MAX_NS (10.0 * 365 * 86400 * 1e9)

int dp_seconds_to_ns(double s, uint64_t *out_ns) {
  if (!(s >= 0) || isnan(s))
    return -EINVAL;
  double ns = s * 1e9;
  if (ns > MAX_NS)
    return -ERANGE;
  *out_ns = (uint64_t)llround(ns);
  return 0;
}

int dp_parse_duration(const char *s, uint64_t *out_ns) {
  if (s == NULL || ((*s < '0' || *s > '9') && *s != '.'))
    return -EINVAL;
  char *end;
  double v = strtod(s, &end);
  if (end == s)
    return -EINVAL;
  double mult;
  if (*end == '\0' || strcmp(end, "s") == 0)
    mult = 1;
  else if (strcmp(end, "ms") == 0)
    mult = 1e-3;
  else if (strcmp(end, "us") == 0)
    mult = 1e-6;
  else if (strcmp(end, "ns") == 0)
    mult = 1e-9;
  else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
    mult = 60;
  else if (strcmp(end, "h") == 0)
    mult = 3600;
  else
    return -EINVAL;
  return dp_seconds_to_ns(v * mult, out_ns);
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
