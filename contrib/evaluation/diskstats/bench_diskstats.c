/*
 * bench_diskstats.c - cost of one /proc/diskstats parse + derive pass.
 * Built and run by contrib/evaluation/diskstats/bench_diskstats.sh; not a test.
 *
 *   bench_diskstats A B [PASSES]
 *
 * A and B are two snapshots of the same devices, B one second after A. Each
 * pass feeds A into a tracker (untimed: the baseline), then times feeding B
 * (parse every line, look the device up, derive every metric). Also timed
 * on their own: parsing B into records (parse only) and deriving from
 * parsed records (derive only). For scale, the same number of reads of this
 * host's live /proc/diskstats are timed: what the kernel spends printing a
 * line, against what we spend reading one. Prints medians and ratios.
 */
#define _GNU_SOURCE
#include "diskstats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char *slurp(const char *path, size_t *len) {
  size_t cap = 1 << 20;
  char *buf = malloc(cap);
  while (buf) {
    int rc = dp_diskstats_read_file(path, buf, cap, len);
    if (rc == 0)
      return buf;
    free(buf);
    buf = NULL;
    if (rc != -ENOBUFS) {
      fprintf(stderr, "bench_diskstats: %s: %s\n", path, strerror(-rc));
      exit(1);
    }
    cap *= 2;
    buf = malloc(cap);
  }
  fprintf(stderr, "bench_diskstats: out of memory\n");
  exit(1);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n) {
  qsort(v, n, sizeof(v[0]), cmp_u64);
  return v[n / 2];
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_diskstats A B [PASSES]\n");
    return 2;
  }
  size_t passes = argc > 3 ? strtoul(argv[3], NULL, 10) : 2000;
  if (passes < 10)
    passes = 10;
  size_t la, lb;
  char *a = slurp(argv[1], &la), *b = slurp(argv[2], &lb);
  int ndev = dp_diskstats_parse(b, lb, NULL, 0, NULL);
  if (ndev <= 0) {
    fprintf(stderr, "bench_diskstats: no devices in %s\n", argv[2]);
    return 1;
  }
  size_t n = (size_t)ndev;
  dp_diskstats_slot_t *slots = calloc(n, sizeof(*slots));
  dp_diskstats_metrics_t *out = calloc(n, sizeof(*out));
  dp_diskstats_rec_t *ra = calloc(n, sizeof(*ra)), *rb = calloc(n, sizeof(*rb));
  uint64_t *full = calloc(passes, 8), *parse = calloc(passes, 8),
           *derive = calloc(passes, 8);
  if (!slots || !out || !ra || !rb || !full || !parse || !derive) {
    fprintf(stderr, "bench_diskstats: out of memory\n");
    return 1;
  }
  dp_diskstats_parse(a, la, ra, n, NULL);
  dp_diskstats_parse(b, lb, rb, n, NULL);

  dp_diskstats_tracker_t t;
  uint64_t ts = 1000000000u, emitted = 0;
  volatile double sink = 0;
  for (size_t i = 0; i < passes; i++) {
    /* parse + derive: the pass a collectd read callback makes */
    dp_diskstats_tracker_init(&t, slots, n);
    dp_diskstats_tracker_feed(&t, a, la, ts, out, n);
    uint64_t t0 = now_ns();
    int got = dp_diskstats_tracker_feed(&t, b, lb, ts + 1000000000u, out, n);
    uint64_t t1 = now_ns();
    full[i] = t1 - t0;
    emitted += got > 0 ? (uint64_t)got : 0;
    sink += out[n / 2].util_percent;

    /* parse only */
    t0 = now_ns();
    dp_diskstats_parse(b, lb, rb, n, NULL);
    t1 = now_ns();
    parse[i] = t1 - t0;

    /* derive only, from records already parsed */
    t0 = now_ns();
    for (size_t k = 0; k < n; k++)
      dp_diskstats_derive(&ra[k], &rb[k], 1000000000u, &out[k]);
    t1 = now_ns();
    derive[i] = t1 - t0;
    sink += out[0].avg_queue_length;
    ts += 10000000000u;
  }
  if (emitted != passes * n) {
    fprintf(stderr,
            "bench_diskstats: expected %zu metrics per pass, got %.1f on "
            "average: the fixture is not two samples of the same devices\n",
            n, (double)emitted / (double)passes);
    return 1;
  }
  uint64_t mf = median(full, passes), mp = median(parse, passes),
           md = median(derive, passes);

  /* the kernel's side: reading the live file (a different device count) */
  static char live[1 << 20];
  size_t llen = 0;
  int nlive = 0;
  uint64_t mk = 0;
  if (dp_diskstats_read_file("/proc/diskstats", live, sizeof(live), &llen) ==
      0) {
    nlive = dp_diskstats_parse(live, llen, NULL, 0, NULL);
    for (size_t i = 0; i < passes; i++) {
      uint64_t t0 = now_ns();
      dp_diskstats_read_file("/proc/diskstats", live, sizeof(live), &llen);
      full[i] = now_ns() - t0;
    }
    mk = median(full, passes);
  }
  printf("devices                 %zu (%zu bytes per snapshot)\n", n, lb);
  printf("passes                  %zu (median reported)\n", passes);
  printf("parse+derive pass       %10.1f us   %7.1f ns/device\n", mf / 1e3,
         (double)mf / (double)n);
  printf("  parse only            %10.1f us   %7.1f ns/device  (%4.1f%% of "
         "the pass)\n",
         mp / 1e3, (double)mp / (double)n, 100.0 * (double)mp / (double)mf);
  printf("  derive only           %10.1f us   %7.1f ns/device  (%4.1f%% of "
         "the pass)\n",
         md / 1e3, (double)md / (double)n, 100.0 * (double)md / (double)mf);
  if (nlive > 0)
    printf("kernel: open+read+close of the live /proc/diskstats %.1f us for %d "
           "devices, %.1f ns/device;\n  our pass per device is %.2fx that\n",
           mk / 1e3, nlive, (double)mk / nlive,
           ((double)mf / (double)n) / ((double)mk / nlive));
  printf("CPU share of one core   %.5f%% at a 10 s interval, %.4f%% at 1 s\n",
         100.0 * (double)mf / 10e9, 100.0 * (double)mf / 1e9);
  (void)sink;
  return 0;
}
