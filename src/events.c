/* events.c - see events.h. */
#include "events.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

/* A duration in the unit that shows it: "10 ms", "2 s", "1.5 s", "182 s",
 * "250 us" (a Timeout of 0.01 s once printed as "0.0 s"). */
static const char *dur(uint64_t ns, char *buf, size_t len) {
  double s = (double)ns / 1e9;
  if (s >= 100)
    snprintf(buf, len, "%.0f s", s);
  else if (s >= 1)
    snprintf(buf, len, "%.3g s", s);
  else if (s >= 1e-3)
    snprintf(buf, len, "%.3g ms", s * 1e3);
  else
    snprintf(buf, len, "%.3g us", s * 1e6);
  return buf;
}

/* Appends sentence s to buf: the first as it is, later ones after a space
 * and with a capital. */
static void sentence(char *buf, size_t len, const char *s) {
  size_t n = strlen(buf);
  if (n > 0 && n + 1 < len) {
    buf[n++] = ' ';
    buf[n] = '\0';
  }
  snprintf(buf + n, len - n, "%s", s);
  if (n > 0 && n < len)
    buf[n] = (char)toupper((unsigned char)buf[n]);
}

int dp_event_log_line(const dp_sched_event_t *ev, char *buf, size_t len) {
  const char *tn = ev->target_name, *path = ev->path;
  char d1[32], d2[32], d3[32];
  switch (ev->kind) {
  case DP_SCHED_WORKER_STARTED:
    snprintf(buf, len, "worker for disk %s probes %zu target(s).", ev->disk,
             ev->ntargets);
    return LOG_INFO;
  case DP_SCHED_OPENED: {
    if (!ev->laid_out && !ev->no_extent_map && ev->members == NULL)
      return -1;
    char body[768] = "", part[320], resumed[96] = "";
    if (ev->resumed_bytes > 0)
      snprintf(resumed, sizeof(resumed),
               ", resuming an interrupted layout at %llu bytes",
               (unsigned long long)ev->resumed_bytes);
    if (ev->laid_out) {
      snprintf(part, sizeof(part),
               "laid out probe file %s (%llu bytes%s) on device %s.", path,
               (unsigned long long)ev->size_bytes, resumed, ev->device);
      sentence(body, sizeof(body), part);
    }
    if (ev->members != NULL) {
      snprintf(part, sizeof(part),
               "its btrfs spans devices %s: probed as on %s (disk %s), the "
               "first; its reads may land on any of them.",
               ev->members, ev->device, ev->disk);
      sentence(body, sizeof(body), part);
    }
    if (ev->no_extent_map)
      sentence(body, sizeof(body),
               "its filesystem has no extent map (FIEMAP): each round "
               "checks the probe file's header, size and blocks only, so "
               "unwritten extents under an intact header go unseen.");
    snprintf(buf, len, "target \"%s\": %s", tn, body);
    return LOG_INFO;
  }
  case DP_SCHED_DISCARDED:
    snprintf(buf, len,
             "target \"%s\": %s; this round's figures are discarded (not "
             "a measurement).",
             tn, ev->msg);
    return LOG_WARNING;
  case DP_SCHED_OPEN_FAILED:
    snprintf(buf, len, "target \"%s\" (%s): %s", tn, path, ev->msg);
    return LOG_ERR;
  case DP_SCHED_PROBE_FAILED:
    if (ev->probe_name == NULL || ev->probe_name[0] == '\0')
      snprintf(buf, len, "target \"%s\" (%s): %s: %s", tn, path, ev->msg,
               strerror(-ev->err));
    else
      snprintf(buf, len, "target \"%s\" (%s): probe \"%s\" failed: %s", tn,
               path, ev->probe_name, ev->msg);
    return LOG_ERR;
  case DP_SCHED_IO_ERRORS:
    snprintf(buf, len,
             "target \"%s\" (%s): probe \"%s\" saw %llu I/O errors and %llu "
             "short transfers (%s)",
             tn, path, ev->probe_name, (unsigned long long)ev->result->err_io,
             (unsigned long long)ev->result->err_short,
             ev->err ? strerror(-ev->err) : "short read");
    return LOG_ERR;
  case DP_SCHED_NO_SPACE:
    snprintf(buf, len,
             "target \"%s\" (%s): probe \"%s\": %llu writes refused with "
             "ENOSPC (no space left on device): the filesystem is full (a "
             "copy-on-write filesystem or thin volume needs free space to "
             "overwrite); not a disk error",
             tn, path, ev->probe_name,
             (unsigned long long)ev->result->err_nospace);
    return LOG_WARNING;
  case DP_SCHED_STALL_BEGAN:
    snprintf(buf, len,
             "target \"%s\" (%s): device %s stalled: %u I/O outstanding for "
             "more than %s; no new probe on this disk until they "
             "complete.",
             tn, path, ev->device, ev->outstanding,
             dur(ev->timeout_ns, d1, sizeof(d1)));
    return LOG_ERR;
  case DP_SCHED_STALL_ENDED:
    snprintf(buf, len,
             "target \"%s\" (%s): device %s recovered after %s; probing "
             "resumes.",
             tn, path, ev->device, dur(ev->stall_ns, d1, sizeof(d1)));
    return LOG_NOTICE;
  case DP_SCHED_SHRUNK: {
    /* what follows depends on whether the probes could shrink enough */
    char then[96];
    if (ev->scale > 0)
      snprintf(then, sizeof(then),
               ": its probes now run for %.0f%% of "
               "their Duration;",
               ev->scale * 100);
    else
      snprintf(then, sizeof(then),
               ", even with its probes at their "
               "shortest;");
    snprintf(buf, len,
             "target \"%s\": a round kept disk %s busy for %.3g s, more "
             "than DutyCycle %g%% of its ProbeInterval %.3g s allows "
             "(%.3g s)%s ProbeInterval stays %.3g s%s",
             tn, ev->disk, (double)ev->busy_ns / 1e9, ev->duty_percent,
             (double)ev->configured_ns / 1e9, (double)ev->interval_ns / 1e9,
             then, (double)ev->configured_ns / 1e9,
             ev->scale > 0 ? "."
                           : " (the verdict is not delayed), the "
                             "budget is exceeded while the disk is "
                             "this slow.");
    return LOG_NOTICE;
  }
  case DP_SCHED_REGROUPED:
    snprintf(buf, len,
             "target \"%s\" (%s): its device is on disk %s now; the worker "
             "for that disk probes it.",
             tn, path, ev->disk);
    return LOG_INFO;
  case DP_SCHED_PROBE_SKIPPED:
    snprintf(buf, len,
             "target \"%s\" (%s): probe \"%s\" skipped: a single %s of "
             "probe \"%s\" took %.3g s this round (its p50, per queue slot), "
             "longer than its %.3g s budget; not putting %u more I/Os in "
             "flight on a disk this slow. It runs next round whatever the "
             "disk does.",
             tn, path, ev->probe_name,
             ev->result && dp_pattern_writes(ev->result->pattern) ? "write"
                                                                  : "read",
             ev->by_probe ? ev->by_probe : "?", (double)ev->busy_ns / 1e9,
             (double)ev->timeout_ns / 1e9, ev->outstanding);
    return LOG_WARNING;
  case DP_SCHED_TIMEOUT_SHORT:
    snprintf(buf, len,
             "target \"%s\" (%s): probe \"%s\" (QueueDepth %u): its I/O "
             "took up to %s, longer than Timeout %s, and all completed at the "
             "first check: Timeout is too short for this queue depth on this "
             "disk, not a stall. Such brief stalls are now only counted "
             "(probe_errors timeout), not reported; one still outstanding "
             "after %s is. Raise Timeout well above %s to measure without "
             "them.",
             tn, path, ev->probe_name, ev->outstanding,
             dur(ev->stall_ns, d1, sizeof(d1)),
             dur(ev->timeout_ns, d2, sizeof(d2)),
             dur(DP_SCHED_REAP_NS, d3, sizeof(d3)), d1);
    return LOG_WARNING;
  case DP_SCHED_WORKER_STUCK:
    snprintf(buf, len,
             "worker for disk %s did not stop in time (a hung disk?); "
             "leaving it behind.",
             ev->disk);
    return LOG_WARNING;
  }
  return -1;
}

int dp_event_notice(const dp_sched_event_t *ev, const char *host, char *buf,
                    size_t len) {
  const char *tn = ev->target_name, *dev = ev->device;
  char d1[32];
  switch (ev->kind) {
  case DP_SCHED_IO_ERRORS:
    snprintf(buf, len,
             "diskprobe: host %s, target %s, device %s: probe %s saw %llu I/O "
             "errors and %llu short transfers (%s)",
             host, tn, dev, ev->probe_name,
             (unsigned long long)ev->result->err_io,
             (unsigned long long)ev->result->err_short,
             ev->err ? strerror(-ev->err) : "short read");
    return 1;
  case DP_SCHED_STALL_BEGAN:
    snprintf(buf, len,
             "diskprobe: host %s, target %s, device %s: I/O stalled for more "
             "than %s (%u outstanding)",
             host, tn, dev, dur(ev->timeout_ns, d1, sizeof(d1)),
             ev->outstanding);
    return 1;
  case DP_SCHED_STALL_ENDED:
    snprintf(buf, len,
             "diskprobe: host %s, target %s, device %s: I/O completes again "
             "after a %s stall",
             host, tn, dev, dur(ev->stall_ns, d1, sizeof(d1)));
    return 0;
  default:
    return -1;
  }
}
