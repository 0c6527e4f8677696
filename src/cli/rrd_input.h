/*
 * rrd_input.h - what `diskprobe fleet` and `diskprobe compare` read from a
 * central collectd server's RRD tree (collectd's rrdtool plugin, DataDir):
 *
 *   DIR/HOST/diskprobe-TARGET/operations_per_second-PROBE.rrd  (value)
 *   DIR/HOST/diskprobe-TARGET/probe_latency-PROBE.rrd  (min mean p50 ...)
 *   DIR/HOST/diskprobe-TARGET/bytes_per_second-PROBE.rrd  (value)
 *   DIR/HOST/diskprobe-TARGET/target_device-DISK.rrd  (names the disk)
 *   DIR/HOST/diskprobe-dev-DISK/disk_info-CLASS.rrd  (names the class;
 *     value the capacity in bytes)
 *   DIR/HOST/diskprobe-dev-DISK/bytes_per_second-read.rrd ... (the device
 *     view, for the fail-slow detector)
 *
 * Read with librrd (`rrd_fetch_r`, AVERAGE, the finest archive that covers
 * the window), by the command only: the library and the plugin do not link
 * librrd. Errors: one line on stderr "diskprobe CMD: PATH: WHY" and a
 * non-zero return. Not thread-safe (librrd's error string is global).
 *
 * The tree is anyone's who can write to the central server's DataDir, so
 * one file never stops the whole read. A file of the names above that is
 * not a regular file (a FIFO would block the read forever, a device node
 * has effects when opened) is skipped without being opened; one librrd
 * cannot read (cut short, not an RRD file, no such data source) is
 * skipped with librrd's error. Each skip is one line on stderr "diskprobe
 * CMD: PATH: skipped: WHY" (names escaped, cli.h) and a note in a
 * dp_rrdin_skips_t for the report. A file is checked with stat (a symlink
 * is followed, as collectd's trees are sometimes linked together; what it
 * leads to must be a regular file), opened O_NONBLOCK, checked again with
 * fstat (a regular file, the same one), and librrd reads that open file
 * through /proc/self/fd/N, so a file swapped after the check is never the
 * one read.
 *
 * Time: a regular file on a filesystem that answers is read in time
 * bounded by its size (librrd reads the header, checks the file is as
 * long as the header says, and reads the window's rows of one archive).
 * A filesystem that does not answer (a hard NFS mount whose server is
 * gone) blocks the read in the kernel, uninterruptibly: no timer in this
 * process ends that, nor would a child with a deadline (it could be
 * abandoned, not ended, and every further file of that mount would hang
 * a child of its own). Bound the whole run from outside: `timeout 10m
 * diskprobe fleet DIR` (exit 124), and mount the tree soft or local.
 */
#ifndef DP_CLI_RRD_INPUT_H
#define DP_CLI_RRD_INPUT_H

#include "failslow_input.h"

#include <limits.h>
#include <stddef.h>
#include <time.h>

/* A target of the tree. */
typedef struct {
  char host[256];
  char target[256]; /* the plugin_instance after "diskprobe-" */
  char disk[64];    /* from target_device-DISK.rrd; "" when none */
  char cls[64];     /* from disk_info-CLASS.rrd; "unknown" when none */
  char dir[PATH_MAX];
} dp_rrdin_target_t;

/* The per-round series compare and fleet read of a target. */
enum {
  DP_RRDIN_QD1_P50_S,   /* probe_latency-randread-qd1 p50, seconds */
  DP_RRDIN_QD1_MEAN_S,  /* probe_latency-randread-qd1 mean, seconds */
  DP_RRDIN_QD1_IOPS,    /* operations_per_second-randread-qd1 */
  DP_RRDIN_QD32_IOPS,   /* operations_per_second-randread-qd32 */
  DP_RRDIN_SEQ_BPS,     /* bytes_per_second-seqread, bytes/s */
  DP_RRDIN_QD32_P50_S,  /* probe_latency-randread-qd32 p50, seconds */
  DP_RRDIN_QD32_MEAN_S, /* probe_latency-randread-qd32 mean, seconds */
  DP_RRDIN_NSERIES
};

/* Values of one series, in time order (malloc'd; free v): finite and
 * positive (0 IOPS is a probe that completed nothing: not measured). */
typedef struct {
  double *v;
  size_t n, cap;
} dp_rrdin_values_t;

/* Appends x to s. 0 or -1 (out of memory). */
int dp_rrdin_push(dp_rrdin_values_t *s, double x);

/* What the reads skipped, for the report: file[i] (its path) and why[i]
 * (librrd's error, or "not a regular file (a FIFO)"), and how many files
 * were read. Zeroed to begin; dp_rrdin_skips_free. */
typedef struct {
  char **file, **why;
  size_t n;
  size_t read;
} dp_rrdin_skips_t;

void dp_rrdin_skips_free(dp_rrdin_skips_t *k);

/* The targets of the tree at root (every HOST/diskprobe-TARGET directory
 * that is not a device view), sorted by host then target, into *out (*n;
 * free it); a target_device or disk_info file skipped is noted in sk. 0,
 * or 2 after one line naming cmd. */
int dp_rrdin_scan(const char *cmd, const char *root, dp_rrdin_target_t **out,
                  size_t *n, dp_rrdin_skips_t *sk);

/* Appends t's series' finite positive values between start and end to s (each
 * of DP_RRDIN_NSERIES) and sets *newest to the latest update of its probe files
 * (0: none). A missing file adds nothing; one skipped (above) is noted in
 * sk and adds nothing. 0, or 2 after one line (out of memory). */
int dp_rrdin_target_values(const char *cmd, const dp_rrdin_target_t *t,
                           time_t start, time_t end,
                           dp_rrdin_values_t s[DP_RRDIN_NSERIES],
                           time_t *newest, dp_rrdin_skips_t *sk);

/* The device view of host (root/host) between start and end as the
 * fail-slow detector's input (h empty, zeroed): every diskprobe-dev-DISK
 * directory's read/write bytes/s, I/Os per second and awaits; a file
 * skipped is noted in sk. 0, or 2. */
int dp_rrdin_devview(const char *cmd, const char *root, const char *host,
                     time_t start, time_t end, dp_fsinput_host_t *h,
                     dp_rrdin_skips_t *sk);

#endif /* DP_CLI_RRD_INPUT_H */
