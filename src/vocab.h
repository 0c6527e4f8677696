/*
 * vocab.h - the words every layer shares: I/O patterns, the queue-depth
 * ceiling, the live I/O counter, media classes and the name limit. Plain
 * enums, constants and name functions, nothing that does I/O, so that the
 * configuration model, the device view and the verdict can use them
 * without the probe engine, sysfs or each other (the layering is written
 * down in tests/shell/layering.sh).
 *
 * Name functions return static strings (never free them); parse functions
 * return 0 or -EINVAL. Nothing here logs or allocates.
 */
#ifndef DP_VOCAB_H
#define DP_VOCAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* How the library reports a failure in words: writes the message into
 * err (len bytes, always terminated) and returns rc, a negative errno. */
int dp_errf(char *err, size_t len, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Text read from the filesystem (a symlink's target, a sysfs model or
 * serial string), made safe to put into a log line or a message: control
 * characters and bytes that are not printable ASCII become \xNN, a
 * backslash becomes \\, so no such text can end a line or forge one.
 * Writes at most outlen bytes into out (always terminated; a cut falls
 * between two escapes, never inside one) and returns out. */
char *dp_escape(const char *in, char *out, size_t outlen);

/* What a file of mode m is, in words: "a FIFO (named pipe)", "a socket",
 * "a character device", "a block device", "a directory", "a symlink",
 * "a regular file" or "of an unknown type". */
const char *dp_file_kind(unsigned mode);

/* A target's, probe's or disk's name: at most DP_NAME_MAX - 1 bytes. */
#define DP_NAME_MAX 64

typedef enum {
  DP_PATTERN_RANDREAD = 0,
  DP_PATTERN_SEQREAD,
  DP_PATTERN_RANDWRITE,
  DP_PATTERN_SEQWRITE,
  /* Random writes each made durable before it completes (RWF_DSYNC on the
   * iocb: the kernel adds FUA or a cache flush), so its latency is the
   * flush latency a database commit sees. */
  DP_PATTERN_SYNCWRITE,
  DP_PATTERN_COUNT
} dp_pattern_t;

/* The deepest queue a probe may keep. */
#define DP_QD_MAX 256

/* "randread" etc.; NULL for an out-of-range value. */
const char *dp_pattern_name(dp_pattern_t p);
/* 0 and *out set, or -EINVAL for an unknown name. */
int dp_pattern_parse(const char *name, dp_pattern_t *out);
/* Nonzero for the write patterns (randwrite, seqwrite, syncwrite). */
int dp_pattern_writes(dp_pattern_t p);

/* Completed I/Os and bytes, counted live by running probes so another
 * thread (the plugin's /proc/diskstats reader) can tell how much of a
 * device's traffic was the probe's own. Relaxed atomics; never reset. */
typedef struct {
  _Atomic uint64_t ios, bytes;
} dp_io_counter_t;

/* What kind of medium a disk is (blockdev.h says how it is told). */
typedef enum {
  DP_MEDIA_UNKNOWN = 0,
  DP_MEDIA_NVME,
  DP_MEDIA_SSD,
  DP_MEDIA_HDD,
  DP_MEDIA_VIRTUAL, /* virtio, xen, iSCSI, network block devices */
  DP_MEDIA_COUNT
} dp_media_t;
/* "unknown", "nvme", "ssd", "hdd", "virtual"; "?" out of range. */
const char *dp_media_name(dp_media_t m);

/* The namespace of the device view. A target's values are named by the
 * target ("diskprobe-root/operations_per_second-randread-qd1"), a device's
 * by this prefix and its kernel name ("diskprobe-dev-vda/
 * operations_per_second-read"); target names may not begin with it
 * (conf.h's dp_target_conf_finish refuses them), so a Target "vda" with a probe
 * "read" and the device view of vda cannot write the same series. */
#define DP_DEVVIEW_PREFIX "dev-"

#endif /* DP_VOCAB_H */
