/*
 * failslow_input.h - what `diskprobe failslow` runs the detector over: one
 * internal form (per host, per disk, samples of throughput and average
 * latency per I/O) that every reader produces, and the readers, of the
 * device view as collectd's csv plugin writes it and as JSON lines
 * (formats: cmd_failslow.c's header).
 *
 * A reader prints one line on stderr ("diskprobe failslow: ...") and
 * returns 2 when it refuses its input, else 0. Not thread-safe.
 */
#ifndef DP_CLI_FAILSLOW_INPUT_H
#define DP_CLI_FAILSLOW_INPUT_H

#include "failslow.h"

#include <stddef.h>
#include <stdint.h>

/* One disk's sample of one interval. */
typedef struct {
  double t_s;            /* Unix seconds */
  uint32_t disk;         /* index into the host's disks */
  uint32_t seq;          /* order of arrival: ties keep it */
  double throughput_bps; /* read + write bytes/s; NaN: missing */
  double latency_s;      /* average per I/O, reads and writes; NaN */
} dp_fsinput_sample_t;

/* One host: its disks (one peer group) and their samples. */
typedef struct {
  char name[256];
  char (*disks)[DP_FAILSLOW_NAME_MAX];
  size_t ndisks, diskcap;
  dp_fsinput_sample_t *s;
  size_t n, cap;
} dp_fsinput_host_t;

/* The device-view figures behind one sample (NaN: not given), in the order
 * of dp_fsinput_fields. */
enum {
  DP_FSINPUT_READ_BPS,
  DP_FSINPUT_WRITE_BPS,
  DP_FSINPUT_READS_PS,
  DP_FSINPUT_WRITES_PS,
  DP_FSINPUT_READ_AWAIT,
  DP_FSINPUT_WRITE_AWAIT,
  DP_FSINPUT_NFIELDS
};

/* The figures' names: collectd's type-type_instance of the device view
 * (devview.h) and the JSON keys, each in field order. */
extern const char *const dp_fsinput_series[DP_FSINPUT_NFIELDS];
extern const char *const dp_fsinput_keys[DP_FSINPUT_NFIELDS];
/* The largest value each figure may have (the smallest is 0), in field
 * order: bytes/s 1e15, I/Os per second 1e10, awaits 86400 s. */
extern const double dp_fsinput_max[DP_FSINPUT_NFIELDS];

/* The detector's two figures from the device view's, as src/peers.c takes
 * them from diskstats: throughput read + write bytes/s; latency the awaits
 * weighted by reads/s and writes/s, or the one await given when the other
 * is NaN (a side without I/O has none). */
void dp_fsinput_combine(const double f[DP_FSINPUT_NFIELDS], double *tp_bps,
                        double *lat_s);

/* The hosts of a collectd csv DataDir (or one host's directory): the
 * directories under dir holding diskprobe-dev-* directories, sorted, or
 * dir itself when it holds them. *out (free each, then the array) gets
 * their paths. 0, or 2 after one line. */
int dp_fsinput_collectd_hosts(const char *dir, char ***out, size_t *n);

/* Reads one collectd host directory into h (empty, zeroed): every whole
 * disk's device-view series files TYPE-TYPE_INSTANCE-YYYY-MM-DD. 0 or 2. */
int dp_fsinput_read_collectd(dp_fsinput_host_t *h, const char *hostdir);

/* Reads JSON lines of the device view from path ("-": stdin) into *hosts
 * (*n of them, in order of first appearance; dp_fsinput_host_free each,
 * then free the array). 0 or 2. */
int dp_fsinput_read_json(const char *path, dp_fsinput_host_t **hosts,
                         size_t *n);

/* A whole disk by its kernel name, without sysfs: not a device-mapper or
 * MD device and not a partition (sda1, vdb2, xvda1, nvme0n1p1, mmcblk0p2),
 * as src/peers.c keeps them with sysfs. 1 or 0. */
int dp_fsinput_whole_disk(const char *name);

/* Appends disk's sample at t (Unix seconds) from the device-view figures f
 * (NaN: missing), the disk added to h when new. 0, -E2BIG (more than
 * DP_FAILSLOW_DEVICES_MAX disks), -ENOMEM. */
int dp_fsinput_add_sample(dp_fsinput_host_t *h, const char *disk, double t,
                          const double f[DP_FSINPUT_NFIELDS]);

/* Sorts h's samples by time, then disk, then arrival. */
void dp_fsinput_sort(dp_fsinput_host_t *h);

void dp_fsinput_host_free(dp_fsinput_host_t *h);

#endif /* DP_CLI_FAILSLOW_INPUT_H */
