/*
 * prom_input.h - what `diskprobe fleet --prometheus URL` and `diskprobe
 * compare --prometheus URL` read from a Prometheus-compatible HTTP API
 * (Prometheus, VictoriaMetrics): the figures rrd_input.h reads from an RRD
 * tree, from the series collectd's write_prometheus exports, scraped with
 * honor_labels (contrib/examples/prometheus-scrape.yml; without it the
 * host is in exported_instance, which is then read instead of instance):
 *
 *   collectd_diskprobe_probe_latency_p50{instance=HOST, diskprobe=TARGET,
 *     type=PROBE} (and _mean), collectd_diskprobe_operations_per_second,
 *   collectd_diskprobe_bytes_per_second: the probe series;
 *   collectd_diskprobe_target_device{type=DISK}: names the target's disk;
 *   collectd_diskprobe_disk_info{diskprobe="dev-DISK", type=CLASS}: the
 *     disk's class;
 *   collectd_diskprobe_{bytes_per_second,operations_per_second,latency}
 *     {diskprobe="dev-DISK", type=read|write|read_await|write_await}: the
 *     device view, for the fail-slow detector.
 *
 * Each is one GET of URL/api/v1/query?query=NAME{...}[Ns]&time=END: a
 * range selector at one instant, which returns the raw samples of the
 * window (END - N, END], one per value collectd dispatched (write_prometheus
 * exports each value with its own timestamp, so a sample scraped twice is
 * stored once), the values an RRD tree's rows hold at collectd's step. A
 * query_range would instead give one point per step, repeating a value
 * between rounds and shifting it to the step's grid. Series of one target
 * from several sources (a host whose scrape moved from one shard to
 * another: the same instance and diskprobe, another `shard` label) are
 * merged in time order, a sample of the same instant kept once. A label
 * value in a query is a PromQL string literal (dp_promin_quote): a host
 * name with a quote or a backslash is matched, never read as PromQL; the
 * query is URL-encoded by libcurl.
 *
 * Bounded: each request gives up after 10 s connecting and 120 s in all,
 * and an answer longer than the limit (dp_promin_conf_t) is not read on:
 * the window is asked for again in two halves, each split again while
 * over the limit, down to 60 s, where the answer is refused. The memory
 * held per answer is bounded so (jansson's tree is about 12 times the
 * JSON); the samples kept, 16 bytes each, grow with the window. Errors: one
 * line on stderr "diskprobe CMD: URL: WHY" (the URL without user:password@)
 * naming what failed: the connection (libcurl's message: "Failed to connect to
 * ... Connection refused"), an HTTP status with Prometheus's error or the start
 * of the body, an answer that is not JSON, a Prometheus error ("bad_data:
 * ..."), the size limit; return 2. Not thread-safe (libcurl's global init,
 * once).
 */
#ifndef DP_CLI_PROM_INPUT_H
#define DP_CLI_PROM_INPUT_H

#include "failslow_input.h"
#include "rrd_input.h"

#include <stddef.h>
#include <time.h>

/* Where and how much. */
typedef struct {
  const char *url;  /* http://prometheus:9090 (a path prefix is kept) */
  size_t max_bytes; /* the largest answer read */
} dp_promin_conf_t;

/* The default limit of one answer: 64 MiB (jansson's tree of it takes
 * about 12 times that, 800 MB; a day of one figure of a thousand targets
 * at a 10 s interval, 250 MB of JSON, is read as four windows of 6 h). */
#define DP_PROMIN_MAX_BYTES_DEFAULT ((size_t)64 << 20)

/* The targets read and their series: t[i] (host, target, disk, cls; dir
 * empty) sorted by host then target as an RRD tree's (strverscmp), s[i][k] its
 * values of series k (DP_RRDIN_*) in time order, newest[i] the time of its
 * newest probe sample (0: none). Free with dp_promin_fleet_free. */
typedef struct {
  dp_rrdin_target_t *t;
  dp_rrdin_values_t (*s)[DP_RRDIN_NSERIES];
  time_t *newest;
  size_t n;
} dp_promin_fleet_t;

void dp_promin_fleet_free(dp_promin_fleet_t *f);

/* Reads the targets with a sample between start and end, and the series k
 * of them with bit k of series_mask set (the others stay empty): every
 * target when host is NULL, else host's (and of them target's, when not
 * NULL). A target is one with a probe series or a target_device series in
 * the window; its disk the type of its newest target_device sample; its
 * class the type of the newest disk_info sample of that disk ("unknown"
 * without one). 0 (f->n may be 0), or 2 after one line. */
int dp_promin_read(const char *cmd, const dp_promin_conf_t *c, const char *host,
                   const char *target, unsigned series_mask, time_t start,
                   time_t end, dp_promin_fleet_t *f);

/* The device view of every host between start and end as the fail-slow
 * detector's input: *hosts (*n, sorted by name (strverscmp);
 * dp_fsinput_host_free each, then free the array), each whole disk's samples by
 * time, the figures of one instant in one sample. 0 or 2 after one line. */
int dp_promin_devview(const char *cmd, const dp_promin_conf_t *c, time_t start,
                      time_t end, dp_fsinput_host_t **hosts, size_t *n);

/* s as a PromQL string literal, quotes included, into out (len bytes):
 * backslash and double quote escaped, control characters as \n, \t, \r
 * or \xHH; other bytes kept. 0, or -1 when it does not fit. */
int dp_promin_quote(const char *s, char *out, size_t len);

/* url without a user:password@ part, for messages, into out (len). */
const char *dp_promin_url_shown(const char *url, char *out, size_t len);

#endif /* DP_CLI_PROM_INPUT_H */
