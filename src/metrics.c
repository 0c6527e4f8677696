/* metrics.c - see metrics.h. */
#include "metrics.h"

#include "health.h"

#include <math.h>
#include <string.h>

#define U NAN
#define G(n, lo, hi)                                                           \
  { (n), DP_METRIC_GAUGE, (lo), (hi) }
#define D(n)                                                                   \
  { (n), DP_METRIC_DERIVE, 0, U }
#define VALUE(hi)                                                              \
  1, { G("value", 0, (hi)) }

static const dp_metric_type_t types[DP_METRIC_TYPE_COUNT] = {
    {DP_METRIC_TYPE_PROBE_LATENCY,
     "probe_latency",
     0,
     7,
     {G("min", 0, U), G("mean", 0, U), G("p50", 0, U), G("p90", 0, U),
      G("p99", 0, U), G("p999", 0, U), G("max", 0, U)},
     "one probe's latency distribution in seconds, one RRD file per probe; "
     "write_prometheus exports each as collectd_diskprobe_probe_latency_<ds>."},
    {DP_METRIC_TYPE_BYTES_PER_SECOND, "bytes_per_second", 0, VALUE(U),
     "collectd's \"bitrate\" caps at 2^32-1 (about 4.3 Gbit/s)."},
    {DP_METRIC_TYPE_PROBE_ERRORS,
     "probe_errors",
     0,
     3,
     {D("io"), D("short"), D("timeout")},
     "cumulative error counts of one probe, by kind."},
    {DP_METRIC_TYPE_STALLED, "stalled", 0, VALUE(1),
     "1 while an I/O of the target is older than its Timeout."},
    {DP_METRIC_TYPE_SATURATED, "saturated", 0, VALUE(1),
     "1 while the target's disk is >= 90 % busy with I/O that is mostly not "
     "diskprobe's own (probes still run; their latency is real)."},
    {DP_METRIC_TYPE_TARGET_DEVICE, "target_device", 0, VALUE(1),
     "always 1; its type_instance names the disk the target is on (an info "
     "series to join probe metrics with the device view)."},
    {DP_METRIC_TYPE_TARGET_HEALTH, "target_health", 0, VALUE(2),
     "a target's verdict (not \"health\": collectd's own types.db has one, "
     "for other plugins), 0 ok, 1 warning, 2 failure; type_instance "
     "\"level\" for the target, or a rule's name for that rule's own level."},
    {DP_METRIC_TYPE_SLOWDOWN, "slowdown", 0, VALUE(U),
     "against the target's healthy baseline (1 = as usual); per probe, and "
     "\"round\" for the round's figure the rules judge; \"peers\" for a disk "
     "of the device view against its peers."},
    {DP_METRIC_TYPE_PROBE_BASELINE,
     "probe_baseline",
     0,
     3,
     {G("p50", 0, U), G("mean", 0, U), G("iops", 0, U)},
     "a probe's healthy medians: p50 and mean latency (s), IOPS."},
    {DP_METRIC_TYPE_ARMED, "armed", 0, VALUE(1),
     "1 once the baseline holds ArmRounds rounds."},
    {DP_METRIC_TYPE_PEER_RATIO, "peer_ratio", 0, VALUE(U),
     "the first probe's p50 over the median of the same-class targets' "
     "(three or more on the host)."},
    {DP_METRIC_TYPE_FAILSLOW, "failslow", 0, VALUE(1),
     "1 while a disk of the device view is judged fail-slow against its "
     "peers (type_instance \"peers\"; the decision behind the "
     "notification)."},
    {DP_METRIC_TYPE_DISK_INFO, "disk_info", 0, VALUE(U),
     "an info series per disk of the device view: type_instance the "
     "disk's class (the target's Class, else its model), value its "
     "capacity in bytes."},
    {DP_METRIC_TYPE_OPERATIONS_PER_SECOND, "operations_per_second", 1, VALUE(U),
     NULL},
    {DP_METRIC_TYPE_QUEUE_LENGTH, "queue_length", 1, VALUE(U), NULL},
    {DP_METRIC_TYPE_DURATION, "duration", 1, 1, {G("seconds", 0, U)}, NULL},
    {DP_METRIC_TYPE_BYTES, "bytes", 1, VALUE(U), NULL},
    {DP_METRIC_TYPE_LATENCY, "latency", 1, VALUE(U), NULL},
    {DP_METRIC_TYPE_PERCENT, "percent", 1, VALUE(100.1), NULL},
    {DP_METRIC_TYPE_PENDING_OPERATIONS, "pending_operations", 1, VALUE(U),
     NULL},
};

#undef VALUE
#undef D
#undef G

#define T(x) (&types[DP_METRIC_TYPE_##x])
#define PROBE(id, type, unit, help)                                            \
  {                                                                            \
    DP_METRIC_PROBE_##id, T(type), DP_METRIC_PI_TARGET, DP_METRIC_TI_PROBE,    \
        NULL, DP_METRIC_GROUP_PROBE, unit, help                                \
  }
#define FIXED(id, type, ti, pi, group, unit, help)                             \
  { id, T(type), pi, DP_METRIC_TI_FIXED, ti, group, unit, help }
#define TARGET(id, type, ti, unit, help)                                       \
  FIXED(DP_METRIC_TARGET_##id, type, ti, DP_METRIC_PI_TARGET,                  \
        DP_METRIC_GROUP_TARGET, unit, help)
#define HEALTH(id, type, ti, unit, help)                                       \
  FIXED(DP_METRIC_HEALTH_##id, type, ti, DP_METRIC_PI_TARGET,                  \
        DP_METRIC_GROUP_HEALTH, unit, help)
#define HEALTH_PROBE(id, type, unit, help)                                     \
  {                                                                            \
    DP_METRIC_HEALTH_##id, T(type), DP_METRIC_PI_TARGET, DP_METRIC_TI_PROBE,   \
        NULL, DP_METRIC_GROUP_HEALTH, unit, help                               \
  }
#define DEV(id, type, ti, unit, help)                                          \
  FIXED(DP_METRIC_DEV_##id, type, ti, DP_METRIC_PI_DEVICE,                     \
        DP_METRIC_GROUP_DEVICE, unit, help)
#define PEERS(id, type, ti, unit, help)                                        \
  FIXED(DP_METRIC_PEERS_##id, type, ti, DP_METRIC_PI_DEVICE,                   \
        DP_METRIC_GROUP_PEERS, unit, help)

static const dp_metric_t metrics[DP_METRIC_COUNT] = {
    PROBE(IOPS, OPERATIONS_PER_SECOND, "I/O/s",
          "completed I/Os per second of the probe's measured window; on "
          "a rate-capped volume over its throttle's whole slices (no value "
          "when the probe was skipped: unknown, not 0)"),
    PROBE(BYTES, BYTES_PER_SECOND, "bytes/s",
          "throughput (custom type: collectd's `bitrate` caps at 4.3 "
          "Gbit/s; no value when skipped)"),
    PROBE(LATENCY, PROBE_LATENCY, "seconds",
          "latency distribution of the counted I/Os; NaN when nothing "
          "completed"),
    PROBE(QUEUE, QUEUE_LENGTH, "I/Os",
          "achieved queue depth, IOPS × mean latency"),
    PROBE(ERRORS, PROBE_ERRORS, "count (DERIVE)",
          "cumulative I/O errors, short transfers, I/Os over `Timeout`"),
    PROBE(DURATION, DURATION, "seconds",
          "wall time of the probe (warm-up and drain included)"),

    TARGET(STALLED, STALLED, "stalled", "0/1",
           "1 while an I/O of the target is older than `Timeout`"),
    TARGET(STALL_DURATION, DURATION, "stalled", "seconds",
           "how long the current stall has lasted"),
    TARGET(INTERVAL, DURATION, "interval", "seconds",
           "the probe interval: ProbeInterval, as set (DutyCycle shortens "
           "the probes instead)"),
    TARGET(SATURATED, SATURATED, "saturated", "0/1",
           "1 while the target's disk was busier than `SaturationThreshold` "
           "(90 %) in the last interval with I/O that is mostly not "
           "diskprobe's"),
    {DP_METRIC_TARGET_DEVICE, T(TARGET_DEVICE), DP_METRIC_PI_TARGET,
     DP_METRIC_TI_DISK, NULL, DP_METRIC_GROUP_TARGET, "1",
     "info series: the kernel name of the disk the target is on (join with "
     "the device view)"},

    HEALTH(LEVEL, TARGET_HEALTH, "level", "0/1/2",
           "the target's verdict: 0 ok, 1 warning, 2 failure — the worst of "
           "its rules"),
    {DP_METRIC_HEALTH_RULE, T(TARGET_HEALTH), DP_METRIC_PI_TARGET,
     DP_METRIC_TI_RULE, NULL, DP_METRIC_GROUP_HEALTH, "0/1/2",
     "each rule's own level, so an alert or graph can say why"},
    HEALTH(ARMED, ARMED, "armed", "0/1",
           "1 once the baselines hold `ArmRounds` rounds: the relative rules "
           "judge from then on"),
    HEALTH(SLOWDOWN, SLOWDOWN, "round", "ratio",
           "the round's slowdown against the baseline, the figure the "
           "baseline rule judges (1 = as usual; NaN until armed)"),
    HEALTH_PROBE(PROBE_SLOWDOWN, SLOWDOWN, "ratio",
                 "one probe's slowdown: max(p50 ratio, min(mean-latency "
                 "ratio, IOPS ratio))"),
    HEALTH_PROBE(BASELINE, PROBE_BASELINE, "s, s, I/O/s",
                 "the probe's healthy medians over `BaselineHorizon`"),
    HEALTH_PROBE(PEER_RATIO, PEER_RATIO, "ratio",
                 "the first probe's p50 over the median of the host's other "
                 "targets of the same media class and model (NaN with fewer "
                 "than three)"),

    DEV(READS, OPERATIONS_PER_SECOND, "read", "I/O/s",
        "reads completed per second (iostat r/s)"),
    DEV(WRITES, OPERATIONS_PER_SECOND, "write", "I/O/s",
        "writes completed per second (iostat w/s)"),
    DEV(READ_BYTES, BYTES_PER_SECOND, "read", "bytes/s",
        "bytes read per second (iostat rkB/s)"),
    DEV(WRITE_BYTES, BYTES_PER_SECOND, "write", "bytes/s",
        "bytes written per second (iostat wkB/s)"),
    DEV(READ_SIZE, BYTES, "avg_read_size", "bytes",
        "average read size (iostat rareq-sz)"),
    DEV(WRITE_SIZE, BYTES, "avg_write_size", "bytes",
        "average write size (iostat wareq-sz)"),
    DEV(READ_AWAIT, LATENCY, "read_await", "seconds",
        "average read latency, queueing included (iostat r_await)"),
    DEV(WRITE_AWAIT, LATENCY, "write_await", "seconds",
        "average write latency, queueing included (iostat w_await)"),
    DEV(QUEUE, QUEUE_LENGTH, "average", "requests",
        "average queue length (iostat aqu-sz)"),
    DEV(UTILIZATION, PERCENT, "utilization", "%",
        "time the device was busy (iostat %util; raw, can exceed 100)"),
    DEV(IN_FLIGHT, PENDING_OPERATIONS, "in_flight", "requests",
        "requests in flight at the read"),
    DEV(PROBE_SHARE, PERCENT, "probe_share", "%",
        "diskprobe's completed bytes over the device's bytes (at most 100)"),
    DEV(DISCARDS, OPERATIONS_PER_SECOND, "discard", "I/O/s",
        "discards completed per second, where the kernel counts them"),
    DEV(DISCARD_AWAIT, LATENCY, "discard_await", "seconds",
        "average discard latency, where the kernel counts them"),
    DEV(FLUSHES, OPERATIONS_PER_SECOND, "flush", "I/O/s",
        "flushes completed per second, where the kernel counts them"),
    DEV(FLUSH_AWAIT, LATENCY, "flush_await", "seconds",
        "average flush latency, where the kernel counts them"),
    {DP_METRIC_DEV_INFO, T(DISK_INFO), DP_METRIC_PI_DEVICE, DP_METRIC_TI_CLASS,
     NULL, DP_METRIC_GROUP_DEVICE, "bytes",
     "info series: the disk's class as `type` (`Class`, else the model "
     "sanitised to `A-Z a-z 0-9 . _ -`, `unknown` without one), its "
     "capacity as the value; the fleet reference groups by it"},

    PEERS(SLOWDOWN, SLOWDOWN, "peers", "ratio",
          "fail-slow score: the disk's latency against its peers' at the "
          "same load (groups of three or more like disks; NaN until enough "
          "windows)"),
    PEERS(FAILSLOW, FAILSLOW, "peers", "0/1",
          "1 while the disk is judged fail-slow against its peers (the "
          "decision behind the `failslow` notification, with its hysteresis "
          "and all four rules; DiskProbeFailSlow alerts on it)"),
};

#undef PEERS
#undef DEV
#undef HEALTH_PROBE
#undef HEALTH
#undef TARGET
#undef FIXED
#undef PROBE
#undef T

const dp_metric_t *dp_metric(dp_metric_id_t id) {
  return (unsigned)id < DP_METRIC_COUNT ? &metrics[id] : NULL;
}

const dp_metric_type_t *dp_metric_type(dp_metric_type_id_t id) {
  return (unsigned)id < DP_METRIC_TYPE_COUNT ? &types[id] : NULL;
}

const dp_metric_type_t *dp_metric_type_find(const char *name) {
  for (size_t i = 0; i < DP_METRIC_TYPE_COUNT; i++)
    if (strcmp(types[i].name, name) == 0)
      return &types[i];
  return NULL;
}

int dp_metric_prom_name(const dp_metric_type_t *t, size_t ds, char *buf,
                        size_t len) {
  if (ds >= t->nds)
    return -1;
  const dp_metric_ds_t *d = &t->ds[ds];
  int value = strcmp(d->name, "value") == 0;
  return snprintf(buf, len, "collectd_diskprobe_%s%s%s%s", t->name,
                  value ? "" : "_", value ? "" : d->name,
                  d->kind == DP_METRIC_DERIVE ? "_total" : "");
}

/* ---- types.db ------------------------------------------------------------ */

static void print_limit(FILE *f, double x) {
  if (isnan(x))
    fputc('U', f);
  else
    fprintf(f, "%g", x);
}

static void print_type_line(FILE *f, const dp_metric_type_t *t) {
  fprintf(f, "%-23s", t->name);
  for (size_t i = 0; i < t->nds; i++) {
    const dp_metric_ds_t *d = &t->ds[i];
    fprintf(f, "%s%s:%s:", i ? ", " : " ", d->name,
            d->kind == DP_METRIC_DERIVE ? "DERIVE" : "GAUGE");
    print_limit(f, d->min);
    fputc(':', f);
    print_limit(f, d->max);
  }
  fputc('\n', f);
}

/* "# name: doc", wrapped before column 76. */
static void print_comment(FILE *f, const char *name, const char *doc) {
  size_t col = (size_t)fprintf(f, "# %s:", name);
  const char *p = doc;
  while (*p) {
    size_t w = strcspn(p, " ");
    if (col + 1 + w > 75) {
      fputs("\n#", f);
      col = 1;
    }
    col += (size_t)fprintf(f, " %.*s", (int)w, p);
    p += w;
    p += strspn(p, " ");
  }
  fputc('\n', f);
}

void dp_metric_types_db(FILE *f, int from_collectd) {
  if (!from_collectd)
    fputs("# diskprobe.types.db - types diskprobe dispatches that collectd's "
          "own\n"
          "# types.db does not have. Name both files in collectd.conf:\n"
          "#   TypesDB \"/usr/share/collectd/types.db\"\n"
          "#   TypesDB \"/usr/share/collectd/diskprobe.types.db\"\n"
          "#\n"
          "# Generated by `diskprobe metrics --types-db` from the table in\n"
          "# src/metrics.c: edit it there, then regenerate this file\n"
          "# (tests/shell/metrics_table.sh compares the two).\n"
          "#\n",
          f);
  for (size_t i = 0; i < DP_METRIC_TYPE_COUNT; i++) {
    const dp_metric_type_t *t = &types[i];
    if (t->from_collectd != from_collectd)
      continue;
    if (!from_collectd)
      print_comment(f, t->name, t->doc);
    print_type_line(f, t);
  }
}

/* ---- markdown and Prometheus names -------------------------------------- */

/* The type_instance as the catalogue writes it: the string, or a
 * placeholder in capitals. */
static const char *ti_doc(const dp_metric_t *m) {
  switch (m->type_instance_rule) {
  case DP_METRIC_TI_PROBE:
    return "PROBE";
  case DP_METRIC_TI_RULE:
    return "RULE";
  case DP_METRIC_TI_DISK:
    return "DISK";
  case DP_METRIC_TI_CLASS:
    return "CLASS";
  default:
    return m->type_instance;
  }
}

static void print_rules(FILE *f) {
  for (int k = 0; k < DP_RULE_COUNT; k++)
    fprintf(f, "%s%s", k ? ", " : "", dp_health_rule_name((dp_health_rule_t)k));
}

static void print_row(FILE *f, const dp_metric_t *m) {
  const dp_metric_type_t *t = m->type;
  char name[128];
  fprintf(f, "| `%s-%s`", t->name, ti_doc(m));
  if (t->nds > 1)
    for (size_t i = 0; i < t->nds; i++)
      fprintf(f, "%s%s", i ? ", " : " (", t->ds[i].name);
  if (m->type_instance_rule == DP_METRIC_TI_RULE) {
    fputs(" (", f);
    print_rules(f);
  }
  fputs(t->nds > 1 || m->type_instance_rule == DP_METRIC_TI_RULE ? ") |" : " |",
        f);
  for (size_t i = 0; i < t->nds; i++) {
    dp_metric_prom_name(t, i, name, sizeof(name));
    fprintf(f, "%s`%s", i ? ", " : " ", name);
    if (t->nds == 1)
      fprintf(f, "{type=\"%s\"}", ti_doc(m));
    fputc('`', f);
  }
  if (t->nds > 1)
    fprintf(f, " (`type=\"%s\"`)", ti_doc(m));
  fprintf(f, " | %s | %s |\n", m->unit, m->help);
}

void dp_metric_markdown(FILE *f) {
  static const char *const intro[DP_METRIC_GROUP_COUNT] = {
      "Per probe, after each run of it (plugin instance = the target's "
      "name, type instance = the probe's):",
      "Per target, dispatched every read:",
      "Per target, after each round — the health verdict (see \"Health: "
      "when diskprobe warns\"):",
      "Per disk of the device view (plugin instance = `dev-DISK`), every "
      "read; see \"The device view\" below:",
      "Per disk of the device view in a peer group of three or more like "
      "disks (plugin instance = `dev-DISK`), every read:"};
  fputs("<!-- generated by `diskprobe metrics --markdown` from "
        "src/metrics.c: edit the table there -->\n",
        f);
  for (int g = 0; g < DP_METRIC_GROUP_COUNT; g++) {
    fprintf(f, "\n%s\n\n", intro[g]);
    fputs("| collectd identifier | Prometheus | unit | meaning |\n"
          "|---|---|---|---|\n",
          f);
    for (size_t i = 0; i < DP_METRIC_COUNT; i++)
      if ((int)metrics[i].group == g)
        print_row(f, &metrics[i]);
  }
}

/* The type label values of series m, space-separated. */
static void print_label_values(FILE *f, const dp_metric_t *m) {
  switch (m->type_instance_rule) {
  case DP_METRIC_TI_PROBE:
    fputs(" <probe>", f);
    break;
  case DP_METRIC_TI_DISK:
  case DP_METRIC_TI_CLASS:
    fputs(" <any>", f);
    break;
  case DP_METRIC_TI_RULE:
    for (int k = 0; k < DP_RULE_COUNT; k++)
      fprintf(f, " %s", dp_health_rule_name((dp_health_rule_t)k));
    break;
  default:
    fprintf(f, " %s", m->type_instance);
  }
}

void dp_metric_prometheus(FILE *f) {
  char name[128];
  for (size_t i = 0; i < DP_METRIC_TYPE_COUNT; i++) {
    const dp_metric_type_t *t = &types[i];
    for (size_t d = 0; d < t->nds; d++) {
      dp_metric_prom_name(t, d, name, sizeof(name));
      fputs(name, f);
      for (size_t k = 0; k < DP_METRIC_COUNT; k++) {
        const dp_metric_t *m = &metrics[k];
        /* the first series of its kind says "<probe>" once */
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++)
          dup = metrics[j].type == t &&
                metrics[j].type_instance_rule == DP_METRIC_TI_PROBE &&
                m->type_instance_rule == DP_METRIC_TI_PROBE;
        if (m->type == t && !dup)
          print_label_values(f, m);
      }
      fputc('\n', f);
    }
  }
}
