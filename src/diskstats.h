/*
 * diskstats.h - /proc/diskstats parsing and the Perfmon / iostat -x metrics
 * derived from two snapshots.
 *
 * Line formats, told apart by counting fields (major, minor and name count):
 *
 *   fields  kernels      counters after the name
 *   14      < 4.18       F1..F11  reads .. weighted io ms
 *   18      4.18 .. 5.4  + F12..F15 discards, discards merged, sectors, ms
 *   20      >= 5.5       + F16..F17 flushes, flush ms
 *
 * More than 20 fields (a future kernel) parse as 20 with the rest ignored;
 * any other count (e.g. the 7-field partition lines of kernels before
 * 2.6.25) is a malformed line.
 *
 * Widths: the kernel prints the counts (F1-F3, F5-F7, F12-F14, F16) as
 * unsigned long, 64-bit on 64-bit kernels, and every millisecond field (F4,
 * F8, F10, F11, F15, F17) as a 32-bit unsigned int that wraps (F10 after
 * 49.7 days of busy time, F4/F8/F11 much sooner on a busy device). Deltas of
 * the millisecond fields are taken modulo 2^32; a 64-bit count that goes
 * backwards means the device was reset (detached and re-attached, hot
 * removed and re-added), and the interval is dropped instead of turned into
 * a spike. On a 32-bit kernel a count that wraps at 2^32 looks the same and
 * costs one interval. Sectors are always 512 bytes, whatever the device's
 * logical block size.
 *
 * Metrics over an interval dt (seconds, from CLOCK_MONOTONIC timestamps the
 * caller takes when it reads the file; never /proc/uptime), dX the delta of
 * field X, ios = reads + writes + discards + flushes completed:
 *
 *   metric                  formula                 Perfmon name
 *   reads_per_s             dF1 / dt                Disk Reads/sec
 *   writes_per_s            dF5 / dt                Disk Writes/sec
 *   read_bytes_per_s        dF3 * 512 / dt          Disk Read Bytes/sec
 *   write_bytes_per_s       dF7 * 512 / dt          Disk Write Bytes/sec
 *   avg_read_size_bytes     dF3 * 512 / dF1         Avg. Disk Bytes/Read
 *   avg_write_size_bytes    dF7 * 512 / dF5         Avg. Disk Bytes/Write
 *   read_await_s            dF4 / dF1 / 1000        Avg. Disk sec/Read
 *   write_await_s           dF8 / dF5 / 1000        Avg. Disk sec/Write
 *   await_s                 (dF4+dF8+dF15+dF17) / ios / 1000
 *                                                   Avg. Disk sec/Transfer
 *   iops                    ios / dt                Disk Transfers/sec
 *   avg_queue_length        dF11 / (1000 dt)        Avg. Disk Queue Length
 *   util_percent            100 dF10 / (1000 dt)    % Disk Time
 *   in_flight               F9 (of the newer sample) Current Disk Queue Length
 *   service_time_s          dF10 / ios / 1000       (none; see below)
 *
 * A ratio whose divisor is zero (no reads in the interval, say) is NaN, not
 * 0: "no reads" is not "reads took no time". util_percent is reported raw:
 * it can exceed 100 on kernels that credit a slow request's whole duration
 * to io_ticks when it completes (5.7's "more accurate approximation of
 * io_ticks for slow disks"), and F10 is only as fine as a jiffy.
 * service_time_s is the old iostat svctm: it assumes one request at a time,
 * so on any device that serves requests in parallel (SSDs, RAID, NVMe,
 * loop) it is meaningless, which is why sysstat removed it. It is kept for
 * readers who know that.
 *
 * Little's law (dp_diskstats_little): avg_queue_length vs iops * await_s.
 * The two are the same number from different counters:
 *   - from 5.7 ("block/diskstats: replace time_in_queue with sum of request
 *     times") the kernel prints F11 = floor(sum of the per-request read,
 *     write, discard and flush nanoseconds / 1e6), while F4, F8, F15 and F17
 *     are each floored separately. So in every snapshot
 *     0 <= F11 - (F4+F8+F15+F17) <= 3, and over an interval
 *     |dF11 - (dF4+dF8+dF15+dF17)| <= 3 ms: avg_queue_length and
 *     iops * await_s agree to within 3 / (1000 dt). This holds on partitions
 *     too. Both count the whole life of each request completed in the
 *     interval, including time before the interval began, and none of the
 *     requests still in flight at its end: a queue-length that lags.
 *   - before 5.7 F11 is the integral of F9 over time (updated at each
 *     request start and end and at each read of the file), the true mean
 *     queue length over the interval; it matches iops * await_s only up to
 *     the requests in flight at the two ends of the interval, so the
 *     identity is approximate and holds only over intervals much longer
 *     than a request.
 *
 * Device identity is major:minor plus name. A record whose identity differs
 * from its predecessor's, or whose 64-bit counts went backwards, starts a
 * new baseline: no metrics for that interval. The first sample of a device
 * emits nothing.
 *
 * Nothing here allocates, logs or keeps global state; only
 * dp_diskstats_read_file does I/O. Functions return 0 (or a count) or a
 * negative errno.
 */
#ifndef DP_DISKSTATS_H
#define DP_DISKSTATS_H

#include <stddef.h>
#include <stdint.h>

#define DP_DISKSTATS_SECTOR_BYTES 512u
#define DP_DISKSTATS_NAME_MAX 64 /* bytes including the NUL */

/* One line of /proc/diskstats. Counters the line does not carry are 0. */
typedef struct {
  unsigned major, minor;
  char name[DP_DISKSTATS_NAME_MAX];
  unsigned fields; /* fields on the line: 14, 18, 20 (or more) */
  /* F1-F4: reads completed, merged, sectors read, ms spent reading */
  uint64_t reads, reads_merged, read_sectors, read_ms;
  /* F5-F8: the same for writes */
  uint64_t writes, writes_merged, write_sectors, write_ms;
  /* F9-F11: requests in flight now, ms with at least one request in flight
   * (io_ticks), weighted ms (time_in_queue; see the header comment) */
  uint64_t in_flight, io_ms, weighted_ms;
  /* F12-F15 (18+ fields): discards completed, merged, sectors, ms */
  uint64_t discards, discards_merged, discard_sectors, discard_ms;
  /* F16-F17 (20+ fields): flushes completed, ms spent flushing */
  uint64_t flushes, flush_ms;
} dp_diskstats_rec_t;

/*
 * Parses one line (without or with its trailing newline; len bytes, no NUL
 * needed). Returns 0 and fills *out, -ENODATA for an empty or blank line,
 * -EINVAL for a malformed one: a field count other than 14, 18 or >= 20, a
 * number that is not a decimal integer or does not fit 64 bits (major and
 * minor: 32 bits), a name longer than DP_DISKSTATS_NAME_MAX - 1 bytes.
 */
int dp_diskstats_parse_line(const char *line, size_t len,
                            dp_diskstats_rec_t *out);

/*
 * Parses a whole /proc/diskstats text of len bytes into recs[0..cap).
 * Blank lines are ignored; malformed lines are skipped and counted in
 * *bad_lines (may be NULL). Returns the number of good lines, which can be
 * more than cap (then only the first cap are stored: call again with a
 * larger array), or -EINVAL for NULL buf or recs with cap > 0.
 */
int dp_diskstats_parse(const char *buf, size_t len, dp_diskstats_rec_t *recs,
                       size_t cap, size_t *bad_lines);

/*
 * Reads a whole file (normally "/proc/diskstats") into buf[0..cap), looping
 * over short reads. Returns 0 with *len set, -ENOBUFS if the file does not
 * fit in cap - 1 bytes (buf is NUL-terminated on success), or the errno of
 * open/read negated.
 */
int dp_diskstats_read_file(const char *path, char *buf, size_t cap,
                           size_t *len);

/* Bits of dp_diskstats_metrics_t.flags. */
#define DP_DISKSTATS_HAVE_DISCARDS 0x1u /* both samples had >= 18 fields */
#define DP_DISKSTATS_HAVE_FLUSHES 0x2u  /* both samples had >= 20 fields */

/*
 * The derived view of one device over one interval. Rates are per second,
 * sizes bytes, times seconds. NaN marks a ratio over an interval without the
 * I/O it divides by, the discard metrics when !(flags & HAVE_DISCARDS), the
 * flush metrics when !(flags & HAVE_FLUSHES), and the probe shares until
 * dp_diskstats_probe_share sets them.
 */
typedef struct dp_diskstats_metrics {
  unsigned major, minor;
  char name[DP_DISKSTATS_NAME_MAX];
  unsigned flags; /* DP_DISKSTATS_HAVE_* */
  uint64_t interval_ns;
  double interval_s;

  /* Raw deltas over the interval (millisecond ones already unwrapped). */
  uint64_t d_reads, d_reads_merged, d_read_sectors, d_read_ms;
  uint64_t d_writes, d_writes_merged, d_write_sectors, d_write_ms;
  uint64_t d_io_ms, d_weighted_ms;
  uint64_t d_discards, d_discards_merged, d_discard_sectors, d_discard_ms;
  uint64_t d_flushes, d_flush_ms;
  uint64_t d_ios; /* reads + writes + discards + flushes */

  double reads_per_s, writes_per_s;
  double reads_merged_per_s, writes_merged_per_s;
  double read_bytes_per_s, write_bytes_per_s;
  double avg_read_size_bytes, avg_write_size_bytes; /* NaN without I/O */
  double read_await_s, write_await_s;               /* NaN without I/O */
  double iops;    /* all completed requests per second */
  double await_s; /* mean time per completed request; NaN without I/O */
  double avg_queue_length;
  double util_percent;   /* raw; may exceed 100 */
  double service_time_s; /* dF10 / ios; unreliable, see above; NaN w/o I/O */
  uint64_t in_flight;    /* F9 of the newer sample */

  double discards_per_s, discards_merged_per_s, discard_bytes_per_s;
  double avg_discard_size_bytes, discard_await_s;
  double flushes_per_s, flush_await_s;

  /* Fraction of the device's requests / bytes (reads + writes) in the
   * interval that were the probe's own; see dp_diskstats_probe_share. */
  double probe_ios_share, probe_bytes_share;
} dp_diskstats_metrics_t;

/*
 * Derives the metrics of one device from its previous and current record
 * taken interval_ns apart. Returns 0 and fills *out; -ESTALE when cur does
 * not continue prev (identity differs, a 64-bit count went backwards, or
 * F10 went backwards: its delta modulo 2^32 is 2^31 ms or more, which no
 * interval shorter than 24.8 days can produce by wrapping): the caller
 * re-baselines on cur and *out is untouched; -EINVAL for NULL pointers or
 * interval_ns == 0.
 */
int dp_diskstats_derive(const dp_diskstats_rec_t *prev,
                        const dp_diskstats_rec_t *cur, uint64_t interval_ns,
                        dp_diskstats_metrics_t *out);

/*
 * Sets m->probe_ios_share = probe_ios / (d_reads + d_writes) and
 * m->probe_bytes_share = probe_bytes / ((d_read_sectors + d_write_sectors)
 * * 512), given the requests and bytes the caller's own probe completed on
 * this device during the same interval. Each is NaN when the device
 * completed no request (no bytes) in the interval. Reported raw: the
 * request share can exceed 1 when the block layer splits a probe request
 * (block size above max_sectors_kb) and falls short when it merges them;
 * both can be off by the probe requests that straddle a sample boundary.
 * The bytes share is the robust one.
 */
void dp_diskstats_probe_share(dp_diskstats_metrics_t *m, uint64_t probe_ios,
                              uint64_t probe_bytes);

/*
 * Saturation: 1 when the device was busy at least threshold_percent of the
 * interval (utilisation) mostly with I/O that was not the probe's own (its
 * bytes share below one half, or unknown). Probes still run on a saturated
 * device -- their latency is what users see then, and DutyCycle bounds what
 * they add -- and the flag says why latency is high.
 */
int dp_diskstats_saturated(const dp_diskstats_metrics_t *m,
                           double threshold_percent);

/*
 * Little's law self-check on derived metrics: *lhs = avg_queue_length,
 * *rhs = iops * await_s (0 when the interval had no I/O), and the return
 * value is the largest |lhs - rhs| the kernel's rounding allows on kernels
 * from 5.7 with 20-field lines: 3 ms / interval, i.e. 0.003 / interval_s.
 * On older kernels the identity is approximate (see the header comment).
 * lhs or rhs may be NULL.
 */
double dp_diskstats_little(const dp_diskstats_metrics_t *m, double *lhs,
                           double *rhs);

/*
 * Tracker: the previous sample of every device, so that whole snapshots go
 * in and metrics come out. The caller provides the slot array (capacity =
 * the most devices tracked at once); feeding a snapshot allocates nothing.
 * Devices are kept in the order the kernel lists them; a device missing
 * from a snapshot is forgotten, so when it comes back its first sample
 * emits nothing. Not thread-safe: one caller at a time.
 */
typedef struct {
  dp_diskstats_rec_t rec;
  uint64_t ts_ns; /* CLOCK_MONOTONIC of the snapshot rec came from */
  uint64_t gen;   /* snapshot generation that last saw this device */
} dp_diskstats_slot_t;

typedef struct {
  dp_diskstats_slot_t *slots; /* caller-owned, cap entries */
  size_t cap, n;
  size_t cursor; /* where the next lookup starts (kernel order is stable) */
  uint64_t gen;  /* snapshots fed so far */
  uint64_t last_ns;
  const char *const *patterns; /* caller-owned; NULL/0 = every device */
  size_t n_patterns;
  /* Of the last snapshot fed: */
  size_t dropped;   /* devices not tracked or not reported for lack of room
                       (slots or out), or listed twice in one snapshot */
  size_t rebased;   /* devices re-baselined (reset / identity change) */
  size_t bad_lines; /* malformed lines skipped (dp_diskstats_tracker_feed) */
} dp_diskstats_tracker_t;

/* Starts an empty tracker over slots[0..cap). Every device passes the
 * filter until dp_diskstats_tracker_filter says otherwise. */
void dp_diskstats_tracker_init(dp_diskstats_tracker_t *t,
                               dp_diskstats_slot_t *slots, size_t cap);

/*
 * Tracks only devices whose name matches one of patterns[0..n) (fnmatch(3)
 * globs: "sda", "nvme*n1", "loop[0-3]"); n == 0 tracks every device. The
 * array and its strings are borrowed and must outlive the tracker. Devices
 * already tracked that no longer match are forgotten at the next feed.
 */
void dp_diskstats_tracker_filter(dp_diskstats_tracker_t *t,
                                 const char *const *patterns, size_t n);

/* Nonzero if name passes the tracker's filter. */
int dp_diskstats_tracker_wants(const dp_diskstats_tracker_t *t,
                               const char *name);

/*
 * Feeds one snapshot of n records read at now_ns (CLOCK_MONOTONIC). For
 * every record that passes the filter and continues a tracked sample,
 * writes its metrics to out[0..out_cap) in kernel order; every such record
 * then becomes the device's new previous sample. Returns the number of
 * metrics written, or -EINVAL when now_ns is not after the previous feed's
 * (nothing is changed then) or for NULL pointers with nonzero sizes.
 */
int dp_diskstats_tracker_update(dp_diskstats_tracker_t *t,
                                const dp_diskstats_rec_t *recs, size_t n,
                                uint64_t now_ns, dp_diskstats_metrics_t *out,
                                size_t out_cap);

/* The same, parsing the text of /proc/diskstats line by line (no record
 * array needed); malformed lines are counted in t->bad_lines. */
int dp_diskstats_tracker_feed(dp_diskstats_tracker_t *t, const char *buf,
                              size_t len, uint64_t now_ns,
                              dp_diskstats_metrics_t *out, size_t out_cap);

/* The tracked previous record of a device by name, or NULL. */
const dp_diskstats_rec_t *
dp_diskstats_tracker_find(const dp_diskstats_tracker_t *t, const char *name);

#endif /* DP_DISKSTATS_H */
