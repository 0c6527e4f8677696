/*
 * bench_failslow.c - what the fail-slow detector costs the plugin: CPU per
 * interval and memory, for one peer group of N devices at the plugin's
 * settings (dp_failslow_conf_for_interval at collectd's Interval, or the
 * plugin's own path through peers.c with --peers). Built and run by
 * contrib/evaluation/bench/failslow_cost.sh; a benchmark, not a test: it prints
 * figures and never fails on a number.
 *
 *   bench_failslow [--peers SYSROOT] NDEV INTERVALS INTERVAL_S [WINDOW_S]
 *
 * A generated host: every interval each device gets a throughput around a
 * common load with a daily swing (each device its own share, +-20 %
 * noise) and an average latency on a curve of that load (+-25 % noise),
 * one device in 100 missing a sample, device 7 twice as slow as the rest.
 * Without --peers the detector is fed directly (dp_failslow_feed x N,
 * dp_failslow_step); with --peers, SYSROOT is a fake sysfs holding
 * block/NAME for the N disks (one model) and the feed goes through
 * dp_peers_feed with device-view records, as the plugin's read callback
 * does (the disks looked up by name, each disk's verdict handed out every
 * interval; the callbacks do nothing).
 *
 * Memory: the bytes the code under test asked malloc/calloc/realloc for
 * (counted by wrapping them at link time: -Wl,--wrap=...), the heap in use
 * after construction as glibc counts it (mallinfo2: arena and mmapped
 * blocks, with its overhead),
 * and the allocations made while feeding (should be 0). CPU: process CPU
 * time per interval over the whole run, split into the intervals that close
 * a window (the model, scores and decision) and those that do not (the
 * feed), with the worst closing interval.
 */
#define _GNU_SOURCE
#include "failslow.h"
#include "peers.h"

#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- counting allocator ------------------------------------------------ */
void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
static size_t alloc_bytes, alloc_calls;
void *__wrap_malloc(size_t n) {
  alloc_bytes += n;
  alloc_calls++;
  return __real_malloc(n);
}
void *__wrap_calloc(size_t k, size_t n) {
  alloc_bytes += k * n;
  alloc_calls++;
  return __real_calloc(k, n);
}
void *__wrap_realloc(void *p, size_t n) {
  alloc_bytes += n;
  alloc_calls++;
  return __real_realloc(p, n);
}

/* ---- the generated host ------------------------------------------------- */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static double uniform(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void) {
  return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

typedef struct {
  double share; /* the device's fixed part of the host's load */
} host_dev_t;

/* Device i's sample at interval t (throughput bytes/s, latency s); NaN
 * latency for a missing one. */
static void sample(size_t i, long t, double ivl, const host_dev_t *d,
                   double *thr, double *lat) {
  double day = 1 + 0.5 * sin(2 * M_PI * (double)t * ivl / 86400);
  *thr = 4e6 * day * d[i].share * exp(0.2 * gauss());
  *lat = 200e-6 * pow(*thr / 1e6, 0.3) * exp(0.25 * gauss()) *
         (i == 7 ? 2.0 : 1.0);
  if (uniform() < 0.01)
    *lat = NAN;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Flagged at the end: device 7 ("sdah" on the --peers path), the others. */
static size_t flagged7, flagged_others;
static void on_each(const dp_peers_disk_t *d, void *arg) {
  (void)d; /* the plugin dispatches two values here: collectd's cost */
  (void)arg;
}
static void on_changed(const dp_peers_disk_t *d, void *arg) {
  (void)arg;
  size_t *c = strcmp(d->device, "sdah") == 0 ? &flagged7 : &flagged_others;
  *c = d->v.flagged ? *c + 1 : *c - 1;
}

int main(int argc, char **argv) {
  const char *sysroot = NULL;
  if (argc > 2 && strcmp(argv[1], "--peers") == 0) {
    sysroot = argv[2];
    argc -= 2;
    argv += 2;
  }
  if (argc < 4) {
    fprintf(stderr, "usage: bench_failslow [--peers SYSROOT] NDEV INTERVALS "
                    "INTERVAL_S [WINDOW_S]\n");
    return 2;
  }
  size_t n = strtoul(argv[1], NULL, 10);
  long steps = strtol(argv[2], NULL, 10);
  double ivl = strtod(argv[3], NULL),
         win = argc > 4 ? strtod(argv[4], NULL) : 300;
  host_dev_t *dv = __real_calloc(n, sizeof(*dv));
  dp_diskstats_metrics_t *m = __real_calloc(n, sizeof(*m));
  dp_failslow_verdict_t *v = __real_calloc(n, sizeof(*v));
  for (size_t i = 0; i < n; i++) {
    dv[i].share = exp(0.3 * gauss());
    snprintf(m[i].name, sizeof(m[i].name), "sd%c%c", 'a' + (int)(i / 26),
             'a' + (int)(i % 26));
  }
  dp_failslow_conf_t c;
  dp_failslow_conf_init(&c);
  if (dp_failslow_conf_for_window(&c, ivl, win) != 0) {
    fprintf(stderr,
            "bench_failslow: interval %g s / window %g s out of "
            "range\n",
            ivl, win);
    return 2;
  }

  struct mallinfo2 mi0 = mallinfo2();
  alloc_bytes = alloc_calls = 0;
  dp_failslow_t *d = NULL;
  dp_peers_t *p = NULL;
  int rc = sysroot ? dp_peers_new(&p, m, n, sysroot, ivl, win)
                   : dp_failslow_new(&d, &c, n);
  if (rc != 0 || (sysroot && dp_peers_ndevices(p) != n)) {
    fprintf(stderr, "bench_failslow: setup failed (rc %d, %zu disks judged)\n",
            rc, sysroot ? dp_peers_ndevices(p) : 0);
    return 1;
  }
  struct mallinfo2 mi1 = mallinfo2();
  size_t new_bytes = alloc_bytes, new_calls = alloc_calls;
  alloc_bytes = alloc_calls = 0;

  double t_close = 0, t_open = 0, worst = 0;
  long n_close = 0, n_open = 0;
  for (long t = 0; t < steps; t++) {
    double a = cpu_s();
    int closed;
    if (sysroot) {
      for (size_t i = 0; i < n; i++) {
        double thr, lat;
        sample(i, t, ivl, dv, &thr, &lat);
        uint64_t ios = (uint64_t)(thr / 65536 * ivl) + 1;
        m[i].d_reads = isnan(lat) ? 0 : ios;
        m[i].d_read_ms = isnan(lat) ? 0 : (uint64_t)(lat * 1e3 * ios + 0.5);
        m[i].read_bytes_per_s = thr;
      }
      a = cpu_s(); /* the generator's cost is not the plugin's */
      dp_peers_feed(p, m, n, 1e9 + ivl * t, on_each, on_changed, NULL);
      closed = (t + 1) % c.window_steps == 0;
    } else {
      double thr[DP_FAILSLOW_DEVICES_MAX], lat[DP_FAILSLOW_DEVICES_MAX];
      for (size_t i = 0; i < n; i++)
        sample(i, t, ivl, dv, &thr[i], &lat[i]);
      a = cpu_s();
      for (size_t i = 0; i < n; i++)
        dp_failslow_feed(d, i, thr[i], lat[i]);
      closed = dp_failslow_step(d, 1e9 + ivl * t, v) == 1;
    }
    double b = cpu_s() - a;
    if (closed) {
      t_close += b;
      n_close++;
      if (b > worst)
        worst = b;
    } else {
      t_open += b;
      n_open++;
    }
  }
  if (!sysroot)
    for (size_t i = 0; i < n; i++) {
      dp_failslow_verdict(d, i, &v[i]);
      if (v[i].flagged)
        i == 7 ? flagged7++ : flagged_others++;
    }

  printf("settings: %zu devices, Interval %g s, window %u intervals (%g s), "
         "model %u / score %u / long %u / day %u windows\n",
         n, ivl, c.window_steps, c.window_steps * ivl, c.model_windows,
         c.score_windows, c.long_windows, c.day_windows);
  printf("path: %s\n", sysroot ? "dp_peers_feed (the plugin's read callback)"
                               : "dp_failslow_feed + dp_failslow_step");
  printf("memory: %zu bytes asked of malloc in %zu calls at setup = %.0f "
         "bytes per device; heap in use +%zu bytes (glibc: arena and mmap, "
         "with overhead); "
         "%zu allocations while feeding %ld intervals\n",
         new_bytes, new_calls, (double)new_bytes / (double)n,
         (size_t)(mi1.uordblks + mi1.hblkhd - mi0.uordblks - mi0.hblkhd),
         alloc_calls, steps);
  double per = (t_open + t_close) / (double)steps;
  printf("cpu: %.2f us per interval on average over %ld intervals (%ld "
         "closing a window: %.1f us mean, %.1f us worst; others %.2f us "
         "mean) = %.3f us per device per interval; %.5f %% of a core at "
         "Interval %g s\n",
         per * 1e6, steps, n_close, n_close ? t_close / n_close * 1e6 : 0,
         worst * 1e6, n_open ? t_open / n_open * 1e6 : 0, per * 1e6 / (double)n,
         100 * per / ivl, ivl);
  printf("sanity: the 2x slower device %s at the end; %zu of the %zu "
         "others flagged\n",
         flagged7 ? "flagged" : "NOT flagged", flagged_others, n - 1);
  dp_failslow_free(d);
  dp_peers_free(p);
  return 0;
}
