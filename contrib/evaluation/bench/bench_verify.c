/*
 * bench_verify.c - what the per-round probe-file check costs: opens (laying
 * out if needed) the probe file at PATH of SIZE MiB and times
 * dp_target_verify N times, then each of its parts alone (the header read,
 * the FIEMAP walk). Prints microseconds per check (median, p90, max) and
 * the extent count. A benchmark: it prints figures, it never fails on one.
 *
 *   bench_verify PATH [SIZE_MIB] [N]
 */
#define _GNU_SOURCE
#include "clock.h"
#include "probefile.h"
#include "target.h"

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *ns, size_t n) {
  qsort(ns, n, sizeof(*ns), cmp_u64);
  printf("%-28s median %8.1f us  p90 %8.1f us  max %8.1f us  (%zu runs)\n",
         what, (double)ns[n / 2] / 1e3, (double)ns[n * 9 / 10] / 1e3,
         (double)ns[n - 1] / 1e3, n);
}

static unsigned extents(int fd, uint64_t size) {
  struct fiemap fm;
  memset(&fm, 0, sizeof(fm));
  fm.fm_length = size;
  fm.fm_extent_count = 0; /* count only */
  return ioctl(fd, FS_IOC_FIEMAP, &fm) == 0 ? fm.fm_mapped_extents : 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_verify PATH [SIZE_MIB] [N]\n");
    return 2;
  }
  uint64_t size = (argc > 2 ? strtoull(argv[2], NULL, 10) : 1024) << 20;
  size_t n = argc > 3 ? strtoul(argv[3], NULL, 10) : 1000;
  dp_target_t t;
  if (dp_target_open_file(argv[1], size, 0, &t) < 0) {
    fprintf(stderr, "bench_verify: %s: %s\n", argv[1], t.err);
    return 1;
  }
  printf("%s: %llu MiB, %u extents, FIEMAP %s\n", t.path,
         (unsigned long long)(size >> 20), extents(t.fd, size),
         t.no_extent_map ? "not supported (header only)" : "supported");
  uint64_t *ns = calloc(n, sizeof(*ns));
  char why[128];
  for (int part = 0; part < 3; part++) {
    for (size_t i = 0; i < n; i++) {
      uint64_t t0 = dp_now_ns();
      int rc = part == 0   ? dp_target_verify(&t)
               : part == 1 ? dp_probefile_header_verify(
                                 t.fd, size, t.data_offset, why, sizeof(why))
                           : dp_probefile_extents(t.fd, size, why, sizeof(why));
      ns[i] = dp_now_ns() - t0;
      if (rc < 0 && !(part == 2 && t.no_extent_map)) {
        fprintf(stderr, "bench_verify: check failed: %d %s\n", rc,
                part == 0 ? t.err : why);
        return 1;
      }
    }
    report(part == 0   ? "dp_target_verify (all)"
           : part == 1 ? "  header read (O_DIRECT)"
                       : "  extent map (FIEMAP)",
           ns, n);
  }
  free(ns);
  dp_target_close(&t);
  return 0;
}
