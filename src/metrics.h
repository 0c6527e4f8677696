/*
 * metrics.h - the metric catalogue as code: every series diskprobe
 * dispatches, declared once. The plugin names its value lists from here,
 * `diskprobe metrics --types-db` prints plugin/diskprobe.types.db and
 * `diskprobe metrics --markdown` README's catalogue from it, and
 * tests/shell/metrics_table.sh checks both files, the dashboards' metric
 * names and collectd's own types.db against it.
 *
 * Two tables: the collectd types (data sources as types.db writes them,
 * and which types.db declares them), and the series (a type with a
 * plugin_instance and type_instance rule, a unit and one line of help),
 * each with an id. A series is what the plugin dispatches one value list
 * for: "slowdown-round" and "slowdown-PROBE" are two series of one type.
 * Everything here is static const data: no allocation, thread-safe.
 */
#ifndef DP_METRICS_H
#define DP_METRICS_H

#include <stddef.h>
#include <stdio.h>

/* A data source's kind, as collectd's types.db names them. */
typedef enum { DP_METRIC_GAUGE, DP_METRIC_DERIVE } dp_metric_kind_t;

/* One data source: "name:KIND:min:max" in types.db; NAN is "U". */
typedef struct {
  const char *name; /* "value", "p99", "seconds" ... */
  dp_metric_kind_t kind;
  double min, max;
} dp_metric_ds_t;

#define DP_METRIC_DS_MAX 7

/* The collectd types diskprobe dispatches; ours first, in types.db order
 * (the plugin checks they are known in this order: probe_latency first). */
typedef enum {
  DP_METRIC_TYPE_PROBE_LATENCY = 0,
  DP_METRIC_TYPE_BYTES_PER_SECOND,
  DP_METRIC_TYPE_PROBE_ERRORS,
  DP_METRIC_TYPE_STALLED,
  DP_METRIC_TYPE_SATURATED,
  DP_METRIC_TYPE_TARGET_DEVICE,
  DP_METRIC_TYPE_TARGET_HEALTH,
  DP_METRIC_TYPE_SLOWDOWN,
  DP_METRIC_TYPE_PROBE_BASELINE,
  DP_METRIC_TYPE_ARMED,
  DP_METRIC_TYPE_PEER_RATIO,
  DP_METRIC_TYPE_FAILSLOW,
  DP_METRIC_TYPE_DISK_INFO,
  /* collectd's own types.db */
  DP_METRIC_TYPE_OPERATIONS_PER_SECOND,
  DP_METRIC_TYPE_QUEUE_LENGTH,
  DP_METRIC_TYPE_DURATION,
  DP_METRIC_TYPE_BYTES,
  DP_METRIC_TYPE_LATENCY,
  DP_METRIC_TYPE_PERCENT,
  DP_METRIC_TYPE_PENDING_OPERATIONS,
  DP_METRIC_TYPE_COUNT
} dp_metric_type_id_t;

/* A collectd type. */
typedef struct {
  dp_metric_type_id_t id;
  const char *name;  /* collectd type: value_list_t.type */
  int from_collectd; /* 1: collectd's own types.db has it; 0: ours ships it */
  size_t nds;        /* data sources, in value_list_t.values order */
  dp_metric_ds_t ds[DP_METRIC_DS_MAX];
  const char *doc; /* ours: the comment above its types.db line */
} dp_metric_type_t;

/* Where a series' plugin_instance comes from. */
typedef enum {
  DP_METRIC_PI_TARGET, /* the target's name */
  DP_METRIC_PI_DEVICE  /* DP_DEVVIEW_PREFIX and the disk's kernel name */
} dp_metric_pi_t;

/* Where a series' type_instance comes from. */
typedef enum {
  DP_METRIC_TI_FIXED, /* dp_metric_t.type_instance */
  DP_METRIC_TI_PROBE, /* the probe's name */
  DP_METRIC_TI_RULE,  /* a health rule's name (dp_health_rule_name) */
  DP_METRIC_TI_DISK,  /* the kernel name of the target's disk */
  DP_METRIC_TI_CLASS  /* the disk's class (blockdev.h, dp_blockdev_class) */
} dp_metric_ti_t;

/* When a series is dispatched (and the catalogue's section). */
typedef enum {
  DP_METRIC_GROUP_PROBE,  /* per probe, after each run of it */
  DP_METRIC_GROUP_TARGET, /* per target, every read */
  DP_METRIC_GROUP_HEALTH, /* per target, after each round: the verdict */
  DP_METRIC_GROUP_DEVICE, /* per disk of the device view, every read */
  DP_METRIC_GROUP_PEERS,  /* per disk of the device view in a peer group */
  DP_METRIC_GROUP_COUNT
} dp_metric_group_t;

/* Every series, in catalogue order. */
typedef enum {
  /* per probe run: plugin_instance target, type_instance probe */
  DP_METRIC_PROBE_IOPS = 0, /* operations_per_second-PROBE */
  DP_METRIC_PROBE_BYTES,    /* bytes_per_second-PROBE */
  DP_METRIC_PROBE_LATENCY,  /* probe_latency-PROBE (7 ds) */
  DP_METRIC_PROBE_QUEUE,    /* queue_length-PROBE */
  DP_METRIC_PROBE_ERRORS,   /* probe_errors-PROBE (3 DERIVE ds) */
  DP_METRIC_PROBE_DURATION, /* duration-PROBE */
  /* per target, every read */
  DP_METRIC_TARGET_STALLED,        /* stalled-stalled */
  DP_METRIC_TARGET_STALL_DURATION, /* duration-stalled */
  DP_METRIC_TARGET_INTERVAL,       /* duration-interval */
  DP_METRIC_TARGET_SATURATED,      /* saturated-saturated */
  DP_METRIC_TARGET_DEVICE,         /* target_device-DISK */
  /* per target, after each round */
  DP_METRIC_HEALTH_LEVEL,          /* target_health-level */
  DP_METRIC_HEALTH_RULE,           /* target_health-RULE, one per rule */
  DP_METRIC_HEALTH_ARMED,          /* armed-armed */
  DP_METRIC_HEALTH_SLOWDOWN,       /* slowdown-round */
  DP_METRIC_HEALTH_PROBE_SLOWDOWN, /* slowdown-PROBE */
  DP_METRIC_HEALTH_BASELINE,       /* probe_baseline-PROBE (3 ds) */
  DP_METRIC_HEALTH_PEER_RATIO,     /* peer_ratio-PROBE (the first probe) */
  /* per disk of the device view, every read; plugin_instance dev-DISK */
  DP_METRIC_DEV_READS,         /* operations_per_second-read */
  DP_METRIC_DEV_WRITES,        /* operations_per_second-write */
  DP_METRIC_DEV_READ_BYTES,    /* bytes_per_second-read */
  DP_METRIC_DEV_WRITE_BYTES,   /* bytes_per_second-write */
  DP_METRIC_DEV_READ_SIZE,     /* bytes-avg_read_size */
  DP_METRIC_DEV_WRITE_SIZE,    /* bytes-avg_write_size */
  DP_METRIC_DEV_READ_AWAIT,    /* latency-read_await */
  DP_METRIC_DEV_WRITE_AWAIT,   /* latency-write_await */
  DP_METRIC_DEV_QUEUE,         /* queue_length-average */
  DP_METRIC_DEV_UTILIZATION,   /* percent-utilization */
  DP_METRIC_DEV_IN_FLIGHT,     /* pending_operations-in_flight */
  DP_METRIC_DEV_PROBE_SHARE,   /* percent-probe_share */
  DP_METRIC_DEV_DISCARDS,      /* operations_per_second-discard */
  DP_METRIC_DEV_DISCARD_AWAIT, /* latency-discard_await */
  DP_METRIC_DEV_FLUSHES,       /* operations_per_second-flush */
  DP_METRIC_DEV_FLUSH_AWAIT,   /* latency-flush_await */
  DP_METRIC_DEV_INFO,          /* disk_info-CLASS: capacity in bytes */
  /* per disk in a peer group, every read; plugin_instance dev-DISK */
  DP_METRIC_PEERS_SLOWDOWN, /* slowdown-peers */
  DP_METRIC_PEERS_FAILSLOW, /* failslow-peers */
  DP_METRIC_COUNT
} dp_metric_id_t;

/* One series. */
typedef struct dp_metric {
  dp_metric_id_t id;
  const dp_metric_type_t *type;
  dp_metric_pi_t plugin_instance;
  dp_metric_ti_t type_instance_rule;
  const char *type_instance; /* DP_METRIC_TI_FIXED: the string; else NULL */
  dp_metric_group_t group;
  const char *unit; /* "seconds", "I/O/s", "0/1" ... */
  const char *help; /* one line, markdown */
} dp_metric_t;

/* The series `id`; NULL when id is not below DP_METRIC_COUNT. Iterate
 * with for (id = 0; id < DP_METRIC_COUNT; id++). */
const dp_metric_t *dp_metric(dp_metric_id_t id);

/* The type `id`; NULL when id is not below DP_METRIC_TYPE_COUNT. */
const dp_metric_type_t *dp_metric_type(dp_metric_type_id_t id);

/* The type named `name` ("probe_latency"), or NULL. */
const dp_metric_type_t *dp_metric_type_find(const char *name);

/* The name write_prometheus gives data source `ds` of type t dispatched by
 * plugin "diskprobe": collectd_diskprobe_<type>, then _<ds name> unless it
 * is "value", then _total for a DERIVE. Returns snprintf's length, or -1
 * when ds is out of range. */
int dp_metric_prom_name(const dp_metric_type_t *t, size_t ds, char *buf,
                        size_t len);

/* Prints types.db lines: with from_collectd 0 our whole types.db (header,
 * a comment and a line per type collectd's own types.db lacks); with 1 the
 * lines we expect collectd's own types.db to hold, without comments. */
void dp_metric_types_db(FILE *f, int from_collectd);

/* Prints the metric catalogue (markdown tables) README.md holds. */
void dp_metric_markdown(FILE *f);

/* Prints one line per Prometheus metric name of the table, then the type
 * label values it is exported with: fixed strings, the health rules'
 * names, "<probe>" for any probe name, "<any>" for any disk name. */
void dp_metric_prometheus(FILE *f);

#endif /* DP_METRICS_H */
