/*
 * peers.h - a host's disks in peer groups, each judged by the fail-slow
 * detector (failslow.h) from the device view (devview.h): the glue
 * between "the devices DeviceStats watches" and "one detector per group of
 * like disks", free of collectd.
 *
 * Groups: whole disks only (partitions and device-mapper/MD devices are
 * not peers of anything: dp_blockdev_is_whole_disk), grouped by media
 * class and model from sysfs (dp_blockdev_info, blockdev.h); a group of fewer
 * than three disks is not judged (there is no majority to compare with). The
 * disks are those of the first device-view read that has any; disks that appear
 * later are not added until a restart (said by dp_peers_ndevices staying the
 * same). Each interval a disk contributes its throughput (read + write bytes/s)
 * and its average latency per I/O (reads and writes, seconds).
 * Not thread-safe: one caller (the plugin's read callback).
 */
#ifndef DP_PEERS_H
#define DP_PEERS_H

#include "diskstats.h"
#include "failslow.h"
#include "vocab.h"

#include <stddef.h>

typedef struct dp_peers dp_peers_t;

/* Peer groups over the devices named in m[0..n) (a device-view read),
 * for a read interval of interval_s and detector windows of about
 * window_s (dp_failslow_conf_for_window; 300: the tuned default), sysfs
 * under sysroot (NULL: DP_SYSROOT_DEFAULT). 0 (also
 * when no group has three disks: nothing is judged), -EINVAL (interval or
 * window out of range), -ENOMEM. */
int dp_peers_new(dp_peers_t **out, const dp_diskstats_metrics_t *m, size_t n,
                 const char *sysroot, double interval_s, double window_s);
void dp_peers_free(dp_peers_t *p);

/* Disks being judged (in groups of three or more). */
size_t dp_peers_ndevices(const dp_peers_t *p);

/* What a caller learns about one judged disk after an interval. */
typedef struct dp_peers_disk {
  const char *device, *model, *serial; /* "" when sysfs has none */
  dp_media_t media;
  size_t group_size;
  dp_failslow_verdict_t v;
  char words[256]; /* dp_failslow_describe; "" between windows */
} dp_peers_disk_t;

typedef void (*dp_peers_fn)(const dp_peers_disk_t *d, void *arg);

/* Feeds one interval's metrics (any subset, in any order) and ends the
 * interval at ts (seconds). Calls each(d) for every judged disk at every
 * interval, with its verdict as of the last closed window (so a value
 * dispatched from it is fresh every interval, not once per window; score
 * NaN until there is one), and changed(d) for each whose verdict changed
 * at a window that closed now; either may be NULL. */
void dp_peers_feed(dp_peers_t *p, const dp_diskstats_metrics_t *m, size_t n,
                   double ts, dp_peers_fn each, dp_peers_fn changed, void *arg);

#endif /* DP_PEERS_H */
