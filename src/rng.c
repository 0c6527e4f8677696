/* rng.c - see rng.h. */
#include "rng.h"

#include <string.h>

uint64_t dp_rng_next(uint64_t *s) {
  if (*s == 0)
    *s = UINT64_C(0x9E3779B97F4A7C15);
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * UINT64_C(2685821657736338717);
}

void dp_fill_random(void *buf, size_t len, uint64_t *state) {
  unsigned char *p = buf;
  while (len >= 8) {
    uint64_t v = dp_rng_next(state);
    memcpy(p, &v, 8);
    p += 8;
    len -= 8;
  }
  if (len) {
    uint64_t v = dp_rng_next(state);
    memcpy(p, &v, len);
  }
}
