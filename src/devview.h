/*
 * devview.h - the device view: the iostat/Perfmon metrics of the watched
 * devices from successive reads of /proc/diskstats, with how much of each
 * device's traffic was the probes' own. Free of collectd; the plugin
 * dispatches what it returns.
 *
 * A view owns its buffer (grown when a host lists very many devices), the
 * tracker's slots and the metrics array; reading allocates nothing except
 * that growth. The first read of a device yields nothing (there is no
 * interval yet). Not thread-safe: one reader.
 */
#ifndef DP_DEVVIEW_H
#define DP_DEVVIEW_H

#include "diskstats.h"
#include "metrics.h"
#include "vocab.h"

#include <stddef.h>
#include <stdint.h>

typedef struct dp_devview dp_devview_t;

/* A view over `path` (normally "/proc/diskstats") of at most max_devices
 * devices. -ENOMEM. */
int dp_devview_new(dp_devview_t **out, const char *path, size_t max_devices);

/* Where sysfs is (DP_SYSROOT_DEFAULT unless set, or set to NULL; a fixture
 * tree in tests): a watched
 * device whose /sys/class/block/NAME/size is 0 (an unattached loop device,
 * an empty card reader) is left out -- its metrics would all be NaN
 * (dp_blockdev_sectors). */
void dp_devview_set_sysroot(dp_devview_t *v, const char *sysroot);

/* Watches the devices matching a kernel-name glob ("sda", "nvme*n1");
 * a pattern already watched is ignored. -EINVAL for "", a path (a '/')
 * or a glob fnmatch would not read as one (a '[' without its ']', a
 * trailing backslash), -ENAMETOOLONG, -ENOMEM. */
int dp_devview_watch(dp_devview_t *v, const char *pattern);
/* The same checks without watching: 0, or -EINVAL / -ENAMETOOLONG with
 * the reason in err ("a '[' has no closing ']': not a valid glob"). */
int dp_devview_glob_check(const char *pattern, char *err, size_t errlen);
size_t dp_devview_npatterns(const dp_devview_t *v);

/* Where the probes' completed I/O on device `name` is counted (live
 * counters), or NULL when no probe runs on it. */
typedef const dp_io_counter_t *(*dp_devview_counter_fn)(const char *name,
                                                        void *arg);

/*
 * Reads a snapshot taken at now_ns (CLOCK_MONOTONIC) and derives the
 * metrics of every watched device seen twice; sets each one's probe share
 * from its counter's growth since the last read (0 without a counter:
 * none of that device's I/O was a probe's).
 * *out points to the metrics, valid until the next read. Returns how many,
 * or a negative errno when the file cannot be read (nothing watched: 0).
 */
int dp_devview_read(dp_devview_t *v, uint64_t now_ns,
                    dp_devview_counter_fn counter_of, void *arg,
                    const dp_diskstats_metrics_t **out);

/* Device values are named with DP_DEVVIEW_PREFIX (vocab.h). */

/* One value of a device's view: its series in the metric table
 * (metrics.h, one of DP_METRIC_DEV_*) and, from there, its collectd type
 * and type instance (static strings). */
typedef struct {
  dp_metric_id_t metric;
  const char *type, *type_instance;
  double value;
} dp_devview_value_t;
#define DP_DEVVIEW_VALUES_MAX 16

/* The catalogue's values of one device's metrics, in catalogue order:
 * reads/writes per second, bytes per second, average sizes, awaits, queue
 * length, utilisation, in flight, probe share (bytes, percent, at most
 * 100), then discards and flushes where the kernel counts them. Returns
 * how many were written to out. */
size_t dp_devview_values(const dp_diskstats_metrics_t *m,
                         dp_devview_value_t out[DP_DEVVIEW_VALUES_MAX]);

void dp_devview_free(dp_devview_t *v);

#endif /* DP_DEVVIEW_H */
