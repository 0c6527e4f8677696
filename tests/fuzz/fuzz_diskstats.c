/*
 * fuzz_diskstats.c - libFuzzer target for the /proc/diskstats parser and
 * tracker (src/diskstats.h).
 *
 * The input is up to two snapshots of /proc/diskstats text separated by a
 * line "--" (without one, the input is both snapshots). An optional first
 * line "@N" sets the interval between them in nanoseconds (default 1 s, at
 * most 2^63).
 * Every line goes through dp_diskstats_parse_line, the whole text through
 * dp_diskstats_parse (with a small and an ample array), and both snapshots
 * through two trackers (one with room for 4 devices and 2 metrics and a
 * name filter, one with ample room), then a third feed at the same time
 * must be refused without a change. Checked: counts agree between the
 * parsers, metrics stay within the output arrays, derived values are sane.
 */
#include "diskstats.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c))                                                                  \
      __builtin_trap();                                                        \
  } while (0)

#define BIG 256

static void check_metrics(const dp_diskstats_metrics_t *m, int n) {
  for (int i = 0; i < n; i++) {
    CHECK(m[i].interval_ns > 0);
    CHECK(m[i].interval_s > 0);
    CHECK(memchr(m[i].name, '\0', sizeof(m[i].name)) != NULL);
    CHECK(m[i].d_ios ==
          m[i].d_reads + m[i].d_writes + m[i].d_discards + m[i].d_flushes);
    CHECK(m[i].reads_per_s >= 0 && m[i].iops >= 0);
    CHECK(!(m[i].util_percent < 0));
    CHECK(!(m[i].avg_queue_length < 0));
    /* the 32-bit millisecond fields never unwrap to more than 2^32 */
    CHECK(m[i].d_read_ms <= UINT32_MAX && m[i].d_io_ms < (UINT64_C(1) << 32));
    dp_diskstats_metrics_t c = m[i];
    dp_diskstats_probe_share(&c, c.d_reads, c.d_read_sectors * 512);
    CHECK(!(c.probe_ios_share > 1.0000001));
    (void)dp_diskstats_saturated(&c, 90);
    double lhs, rhs;
    (void)dp_diskstats_little(&c, &lhs, &rhs);
  }
}

static void feed(dp_diskstats_tracker_t *t, const char *a, size_t alen,
                 const char *b, size_t blen, uint64_t ivl,
                 dp_diskstats_metrics_t *out, size_t out_cap) {
  uint64_t t0 = 1000000000ull;
  int n = dp_diskstats_tracker_feed(t, a, alen, t0, out, out_cap);
  CHECK(n == 0); /* a first sample emits nothing */
  CHECK(t->n <= t->cap);
  n = dp_diskstats_tracker_feed(t, b, blen, t0 + ivl, out, out_cap);
  CHECK(n >= 0 && (size_t)n <= out_cap && (size_t)n <= t->n);
  check_metrics(out, n);
  for (size_t i = 0; i < t->n; i++) {
    const dp_diskstats_rec_t *r =
        dp_diskstats_tracker_find(t, t->slots[i].rec.name);
    CHECK(r != NULL);
  }
  /* not after the previous feed: refused, nothing changed */
  size_t before = t->n;
  CHECK(dp_diskstats_tracker_feed(t, b, blen, t0 + ivl, out, out_cap) ==
        -EINVAL);
  CHECK(t->n == before);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *buf = (const char *)data, *end = buf + size;
  uint64_t ivl = 1000000000ull;
  if (size > 1 && buf[0] == '@') {
    const char *nl = memchr(buf, '\n', size);
    if (nl != NULL) {
      uint64_t v = 0;
      for (const char *p = buf + 1; p < nl && *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
      ivl = v ? v : 1;
      /* the harness's own t0 + ivl must not wrap (a wrapped time is
       * earlier than t0 and rightly refused, which is not the check) */
      if (ivl > UINT64_MAX / 2)
        ivl = UINT64_MAX / 2;
      buf = nl + 1;
    }
  }
  size_t len = (size_t)(end - buf);

  /* line by line, and the whole text, agree */
  size_t good = 0, bad = 0;
  for (const char *p = buf; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t ll = (size_t)((nl ? nl : end) - p);
    dp_diskstats_rec_t r;
    int rc = dp_diskstats_parse_line(p, ll, &r);
    CHECK(rc == 0 || rc == -EINVAL || rc == -ENODATA);
    if (rc == 0) {
      good++;
      CHECK(r.fields == 14 || r.fields == 18 || r.fields >= 20);
      CHECK(strlen(r.name) < DP_DISKSTATS_NAME_MAX);
    } else if (rc == -EINVAL) {
      bad++;
    }
    p = nl ? nl + 1 : end;
  }
  static dp_diskstats_rec_t recs[BIG];
  size_t bad2 = 0;
  int n = dp_diskstats_parse(buf, len, recs, 3, &bad2);
  CHECK(n >= 0 && (size_t)n == good && bad2 == bad);
  n = dp_diskstats_parse(buf, len, recs, BIG, NULL);
  CHECK((size_t)n == good);
  CHECK(dp_diskstats_parse(buf, len, NULL, 0, NULL) == n);

  /* the two snapshots */
  const char *a = buf, *b = buf;
  size_t alen = len, blen = len;
  for (const char *p = buf; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t ll = (size_t)((nl ? nl : end) - p);
    if (ll == 2 && p[0] == '-' && p[1] == '-') {
      alen = (size_t)(p - buf);
      b = nl ? nl + 1 : end;
      blen = (size_t)(end - b);
      break;
    }
    p = nl ? nl + 1 : end;
  }

  static dp_diskstats_slot_t slots[BIG];
  static dp_diskstats_metrics_t out[BIG];
  dp_diskstats_tracker_t t;
  dp_diskstats_tracker_init(&t, slots, 4);
  static const char *const pats[] = {"sd*", "loop[0-9]*", "nvme*n[0-9]"};
  dp_diskstats_tracker_filter(&t, pats, 3);
  feed(&t, a, alen, b, blen, ivl, out, 2);

  dp_diskstats_tracker_init(&t, slots, BIG);
  feed(&t, a, alen, b, blen, ivl, out, BIG);
  return 0;
}
