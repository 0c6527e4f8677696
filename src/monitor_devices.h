/*
 * monitor_devices.h - the monitor's device view (monitor_devices.c): the
 * iostat view of the watched devices and every probed disk (and the disk
 * under a loop device), saturation and busy disks, fail-slow among peers,
 * each disk's identity and class. Part of the monitor, for monitor.c.
 */
#ifndef DP_MONITOR_DEVICES_H
#define DP_MONITOR_DEVICES_H

#include "monitor_emit.h"

int dp_mon_devview_init(dp_monitor_t *m, const dp_monitor_conf_t *c);
/* The device view's values, saturation, busy disks, peers, identities. */
void dp_mon_read_devices(dp_monitor_t *m, uint64_t wall_ns);
/* dp_monitor_disk_identity's. */
const dp_disk_identity_t *dp_mon_disk_identity(dp_monitor_t *m,
                                               const char *disk,
                                               const char **class_name);

#endif /* DP_MONITOR_DEVICES_H */
