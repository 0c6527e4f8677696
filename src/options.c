/* options.c - the option table and what reads it; see options.h. */
#define _GNU_SOURCE
#include "options.h"
#include "blockdev.h"
#include "conftypes.h"
#include "reaper.h"
#include "units.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define NS_PER_S 1000000000.0

typedef struct {
  int rc; /* 0, or -errno of stat */
  unsigned mode;
} kind_answer_t;

static void stat_kind(void *arg, void *out, size_t len) {
  kind_answer_t *a = out;
  struct stat st;
  (void)len;
  a->rc = stat(arg, &st) == 0 ? 0 : -errno;
  a->mode = a->rc == 0 ? (unsigned)st.st_mode : 0;
}

/* A path that exists and is not of the file type `want` (S_IFBLK,
 * S_IFDIR): refused now, at `collectd -T`, with what it is. A path not
 * there yet, and a regular file when `files_later` (a Device: the start
 * refuses it, collectd_faults.sh's run-time case), are left to the
 * start. The stat runs in a child, DP_CONF_ANSWER_NS at most: a path on
 * a hung disk must not hold collectd's configuration; one that does not
 * answer is left to the start too (which says so). 0 or -EINVAL + err. */
static int refuse_kind(const dp_option_t *o, const char *val, unsigned want,
                       int files_later, const char *what, char *err,
                       size_t len) {
  kind_answer_t a;
  if (dp_reaper_call(stat_kind, (void *)val, &a, sizeof(a),
                     DP_CONF_ANSWER_NS) != 0 ||
      a.rc != 0 || (a.mode & S_IFMT) == want ||
      (files_later && S_ISREG(a.mode)))
    return 0;
  return dp_errf(err, len, -EINVAL,
                 "Option \"%s\": value \"%s\" is invalid: it is %s, not a %s",
                 o->key, val, dp_file_kind(a.mode), what);
}

/* Path and Device: exactly one per target, absolute; a Device that
 * exists is a block device. */
static int set_path(const dp_option_t *o, void *conf, const char *val,
                    char *err, size_t len) {
  dp_target_conf_t *t = conf;
  int rc;
  if (t->has_path)
    return dp_errf(err, len, -EINVAL,
                   "Option \"%s\": the target already has a %s; give "
                   "exactly one Path or Device",
                   o->key, t->is_device ? "Device" : "Path");
  if (val[0] != '/' || strlen(val) >= sizeof(t->path) - 32)
    return dp_errf(err, len, -EINVAL,
                   "Option \"%s\": value \"%s\" is invalid: allowed "
                   "an absolute path",
                   o->key, val);
  int device = strcasecmp(o->key, "Device") == 0;
  if (device &&
      (rc = refuse_kind(o, val, S_IFBLK, 1, "block device", err, len)) < 0)
    return rc;
  snprintf(t->path, sizeof(t->path), "%s", val);
  t->is_device = device;
  t->has_path = 1;
  return 0;
}

static int set_state_dir(const dp_option_t *o, void *conf, const char *val,
                         char *err, size_t len) {
  dp_plugin_conf_t *c = conf;
  if (val[0] != '/' || strlen(val) >= sizeof(c->state_dir) - 32)
    return dp_errf(err, len, -EINVAL,
                   "Option \"%s\": value \"%s\" is invalid: allowed "
                   "an absolute path",
                   o->key, val);
  int rc = refuse_kind(o, val, S_IFDIR, 0, "directory", err, len);
  if (rc < 0)
    return rc;
  snprintf(c->state_dir, sizeof(c->state_dir), "%s", val);
  return 0;
}

/* Class: a name as the disk_info series carries it, refused (not
 * rewritten) when it is not one, so what is configured is what is shown. */
static int set_class(const dp_option_t *o, void *conf, const char *val,
                     char *err, size_t len) {
  dp_target_conf_t *t = conf;
  if (dp_blockdev_class_check(val) != 0)
    return dp_errf(err, len, -EINVAL,
                   "Option \"%s\": value \"%s\" is invalid: allowed 1 to "
                   "63 characters of A-Z a-z 0-9 _ . -",
                   o->key, val);
  snprintf(t->class_name, sizeof(t->class_name), "%s", val);
  return 0;
}

static const char *const patterns[] = {"randread", "seqread",   "randwrite",
                                       "seqwrite", "syncwrite", NULL};
static const char *const bools[] = {"true", "false", NULL};

#define AT(type, member)                                                       \
  .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)

static const dp_option_t table[] = {
    /* plugin-wide */
    {.key = "DutyCycle",
     .flag = "duty-cycle",
     .cli = DP_CLI_WATCH,
     .scope = DP_SCOPE_PLUGIN,
     .kind = DP_OPT_REAL,
     .def = "2",
     .min = 0.01,
     .max = 100,
     .rule = " (percent of wall time)",
     .unit = "%",
     .help = "share of wall time the probes may keep one disk busy. Each "
             "target on a disk gets an equal share; probes that do not fit "
             "run shorter (said at start, and once more if a slow disk "
             "shortens them further), never less often: ProbeInterval stays "
             "as set",
     AT(dp_plugin_conf_t, duty_cycle_percent)},
    {.key = "Splay",
     .flag = "splay",
     .cli = DP_CLI_WATCH,
     .scope = DP_SCOPE_PLUGIN,
     .kind = DP_OPT_BOOL,
     .def = "true",
     .choices = bools,
     .help = "start each target's first round at a random point of its "
             "interval (`diskprobe watch`: off unless `--splay`)",
     AT(dp_plugin_conf_t, splay)},
    {.key = "SaturationThreshold",
     .scope = DP_SCOPE_PLUGIN,
     .kind = DP_OPT_REAL,
     .def = "90",
     .min = 1,
     .max = 1000,
     .rule = " (percent utilisation)",
     .unit = "%",
     .help = "utilisation above which a disk busy mostly with other I/O is "
             "marked `saturated`",
     AT(dp_plugin_conf_t, saturation_percent)},
    {.key = "ArmRounds",
     .scope = DP_SCOPE_PLUGIN,
     .kind = DP_OPT_INTEGER,
     .def = "20",
     .min = 1,
     .max = 1000,
     .help = "rounds of history a target's baseline needs before the "
             "relative health rules judge it (`armed`)",
     AT(dp_plugin_conf_t, arm_rounds)},
    {.key = "BaselineHorizon",
     .scope = DP_SCOPE_PLUGIN,
     .kind = DP_OPT_DURATION,
     .def = "86400",
     .min = 60,
     .max = 7 * 86400,
     .unit = "s",
     .help = "how far back the health baselines reach (medians of the "
             "healthy rounds of this long, at most 2880 rounds)",
     AT(dp_plugin_conf_t, baseline_horizon_ns)},
    {.key = "StateDir",
     .scope = DP_SCOPE_PLUGIN,
     .kind = DP_OPT_PATH,
     .allowed_doc = "absolute path of a directory that only root or "
                    "collectd's user can write, reached without symlinks",
     .default_doc = "collectd's `BaseDir`",
     .help = "where the health baselines are kept across restarts "
             "(`diskprobe-health.state`). Like `Path`'s directory, it and "
             "every directory above it must be owned by root or collectd's "
             "user and not writable by group or others unless sticky; "
             "otherwise `collectd -T` refuses it (the default: no state "
             "file, said at start). Only a regular file of ours, not "
             "group/other-writable, of at most 64 MiB, whose checksum "
             "matches, is read. It keeps each target's baselines and what "
             "its last notice said, so a WARNING before a restart gets its "
             "OKAY after it, once; baselines its disk's first rounds run 10x "
             "faster than are learned afresh, said. Saved every 10 minutes, "
             "soon after each health or stall notice and at stop, off the "
             "read thread, through a new temporary file renamed over it; the "
             "stop waits 2 s for the save, then says \"health state not "
             "saved\". `collectd -T` never writes it. One that does not answer "
             "within 2 s at start (a hung disk, a dead mount) is said in one "
             "line and keeps no state file; collectd starts all the same",
     .set = set_state_dir},
    {.key = "DeviceStats",
     .scope = DP_SCOPE_PLUGIN,
     .kind = DP_OPT_LIST,
     .allowed_doc = "one or more kernel device names or globs (`\"sd*\"`, "
                    "`\"nvme*n1\"`)",
     .help = "also dispatch the iostat view of these devices; the disks "
             "under the targets are always included, and for a loop device "
             "the disk under its backing file"},
    {.key = "FailSlowWindow",
     .scope = DP_SCOPE_PLUGIN,
     .kind = DP_OPT_DURATION,
     .def = "300",
     .min = 1,
     .max = 3600,
     .unit = "s",
     .help = "the fail-slow detector's window over the device view's disks "
             "(at least 3 `Interval`s). Its other horizons are counted in "
             "windows and scale with it: at 300 s the model spans 1 h, the "
             "score 2 h (flagged after 1 h at the earliest), clearing 30 min, "
             "the long score 12 h, the day-long rule 24 h. Shorter windows "
             "are for tests and demos: "
             "they judge on fewer samples and no longer sit between the "
             "tuned figures (README, \"Fail-slow drives among their peers\")",
     AT(dp_plugin_conf_t, failslow_window_ns)},
    {.key = "Target",
     .scope = DP_SCOPE_PLUGIN,
     .kind = DP_OPT_BLOCK,
     .allowed_doc = "any number",
     .help = "one per disk to watch (options below)"},
    /* a target */
    {.key = "Path",
     .scope = DP_SCOPE_TARGET,
     .kind = DP_OPT_PATH,
     .allowed_doc = "absolute path",
     .help = "directory (created, one level, 0700) holding "
             "`diskprobe.probe`, or a path ending in `.probe`. Two targets "
             "may not share a probe file, however the paths are spelled "
             "(`x/../x`, a symlink). One that does not answer within 2 s at "
             "start (a hung disk, a dead mount) is said in one line and "
             "probed once it answers; the other targets start",
     .set = set_path},
    {.key = "Device",
     .scope = DP_SCOPE_TARGET,
     .kind = DP_OPT_PATH,
     .allowed_doc = "absolute path of a block device",
     .help = "probe the device itself, read-only",
     .set = set_path},
    {.key = "FileSize",
     .flag = "file-size",
     .cli = DP_CLI_RUN | DP_CLI_WATCH,
     .scope = DP_SCOPE_TARGET,
     .kind = DP_OPT_SIZE,
     .def = "1G",
     .min = 1048576.0,
     .max = 1099511627776.0,
     .multiple = 1048576,
     .rule = ", a whole number of MiB",
     .help = "size of the probe file (ignored for `Device`)",
     AT(dp_target_conf_t, file_size_bytes)},
    {.key = "LayoutRate",
     .flag = "layout-rate",
     .cli = DP_CLI_RUN | DP_CLI_WATCH,
     .scope = DP_SCOPE_TARGET,
     .kind = DP_OPT_SIZE,
     .def = "64M",
     .min = 0,
     .max = 10737418240.0,
     .multiple = 1048576,
     .rule = " per second, a whole number of MiB; 0: unbounded",
     .help = "the most a probe file's layout writes per second, on average. "
             "The default, 64 MiB/s, lays out the default 1 GiB file in "
             "16 s, well inside the first interval, at half a cloud "
             "volume's baseline (125 MiB/s) and a third of a disk's "
             "sequential rate, so a fleet restarted together (each layout "
             "also starts at its splayed first round) does not flood shared "
             "storage. An interrupted layout resumes where it stopped",
     AT(dp_target_conf_t, layout_rate_bytes)},
    {.key = "ProbeInterval",
     .flag = "interval",
     .cli = DP_CLI_WATCH,
     .scope = DP_SCOPE_TARGET,
     .kind = DP_OPT_DURATION,
     .def = "60",
     .min = 1,
     .max = 86400,
     .unit = "s",
     .help = "time between the starts of two probe rounds",
     AT(dp_target_conf_t, interval_ns)},
    {.key = "Timeout",
     .flag = "timeout",
     .cli = DP_CLI_RUN | DP_CLI_WATCH,
     .scope = DP_SCOPE_TARGET,
     .kind = DP_OPT_DURATION,
     .def = "10",
     .min = 0.01,
     .max = 3600,
     .unit = "s",
     .help = "an I/O older than this marks the target stalled",
     AT(dp_target_conf_t, timeout_ns)},
    {.key = "LatencyCeiling",
     .scope = DP_SCOPE_TARGET,
     .kind = DP_OPT_DURATION,
     .def = "0",
     .min = 0,
     .max = 60,
     .unit = "s",
     .default_doc = "`0`: by media class",
     .help =
         "the first probe's p50 above this for 3 rounds in a row is a "
         "WARNING (`target_health` rule `ceiling`), armed or not. Defaults: "
         "NVMe 2 ms, SSD 5 ms, virtual or network disk 20 ms, HDD and "
         "unknown 50 ms",
     AT(dp_target_conf_t, ceiling_ns)},
    {.key = "Class",
     .flag = "class",
     .cli = DP_CLI_WATCH,
     .scope = DP_SCOPE_TARGET,
     .kind = DP_OPT_TEXT,
     .allowed_doc = "1–63 characters of `A-Z a-z 0-9 _ . -`",
     .default_doc = "the disk's model",
     .help = "the class the fleet compares this target's disk with: the "
             "`type` label of its `disk_info` series (dashboards/README.md, "
             "\"Disk identity and the fleet reference\"). Set it where the "
             "model says nothing (`QEMU_HARDDISK`, a cloud volume type such "
             "as `gp3`); a model is sanitised the same way (other characters "
             "become `_`), a disk without one is `unknown`. Targets on one "
             "disk should agree (the first that sets it wins)",
     .set = set_class},
    {.key = "Probe",
     .scope = DP_SCOPE_TARGET,
     .kind = DP_OPT_BLOCK,
     .allowed_doc = "up to 16",
     .default_doc = "the default set",
     .help = "one probe of the round; NAME becomes the `type_instance`"},
    /* a probe */
    {.key = "Pattern",
     .flag = "pattern",
     .cli = DP_CLI_RUN | DP_CLI_WATCH,
     .scope = DP_SCOPE_PROBE,
     .kind = DP_OPT_ENUM,
     .def = "randread",
     .choices = patterns,
     .help = "access pattern; write patterns only on `Path` targets. "
             "`syncwrite` makes every write durable before it completes "
             "(RWF_DSYNC: FUA or a cache flush), so its latency is what a "
             "database commit waits for — it is what catches a RAID "
             "controller that lost its write-back cache",
     AT(dp_probe_conf_t, pattern)},
    {.key = "BlockSize",
     .flag = "block-size",
     .cli = DP_CLI_RUN | DP_CLI_WATCH,
     .scope = DP_SCOPE_PROBE,
     .kind = DP_OPT_SIZE,
     .def = "8k",
     .min = 512,
     .max = 67108864.0,
     .multiple = 512,
     .rule = ", a multiple of 512",
     .help = "bytes per I/O; also a multiple of the device's O_DIRECT "
             "alignment",
     AT(dp_probe_conf_t, block_size)},
    {.key = "QueueDepth",
     .flag = "queue-depth",
     .cli = DP_CLI_RUN | DP_CLI_WATCH,
     .scope = DP_SCOPE_PROBE,
     .kind = DP_OPT_INTEGER,
     .def = "1",
     .min = 1,
     .max = DP_QD_MAX,
     .help = "I/Os kept in flight",
     AT(dp_probe_conf_t, queue_depth)},
    {.key = "Duration",
     .flag = "duration",
     .cli = DP_CLI_RUN | DP_CLI_WATCH,
     .scope = DP_SCOPE_PROBE,
     .kind = DP_OPT_DURATION,
     .def = "1",
     .min = 0.01,
     .max = 60,
     .unit = "s",
     .help = "measured time of the probe",
     AT(dp_probe_conf_t, duration_ns)},
    {.key = "MaxOps",
     .flag = "ops",
     .cli = DP_CLI_RUN | DP_CLI_WATCH,
     .scope = DP_SCOPE_PROBE,
     .kind = DP_OPT_INTEGER,
     .def = "0",
     .min = 0,
     .max = 4294967296.0,
     .default_doc = "`0` (none)",
     .help = "stop after this many counted I/Os (or at `Duration`, whichever "
             "comes first); 0: no op budget",
     AT(dp_probe_conf_t, max_ops)},
};

const dp_option_t *dp_options(size_t *n) {
  *n = sizeof(table) / sizeof(table[0]);
  return table;
}

const dp_option_t *dp_option_find(dp_opt_scope_t scope, const char *key) {
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
    if (table[i].scope == scope && strcasecmp(table[i].key, key) == 0)
      return &table[i];
  return NULL;
}

static void store(const dp_option_t *o, void *conf, uint64_t v) {
  char *p = (char *)conf + o->offset;
  if (o->size == sizeof(uint64_t)) {
    uint64_t x = v;
    memcpy(p, &x, sizeof(x));
  } else {
    uint32_t x = (uint32_t)v; /* 32-bit members: ranges keep it exact */
    memcpy(p, &x, sizeof(x));
  }
}

static int choice_index(const dp_option_t *o, const char *val) {
  for (int i = 0; o->choices[i] != NULL; i++)
    if (o->kind == DP_OPT_BOOL ? strcasecmp(val, o->choices[i]) == 0
                               : strcmp(val, o->choices[i]) == 0)
      return i;
  return -1;
}

static void join_choices(const dp_option_t *o, const char *sep,
                         const char *last, const char *quote, char *buf,
                         size_t len) {
  size_t off = 0;
  buf[0] = '\0';
  for (int i = 0; o->choices[i] != NULL && off < len; i++)
    off += (size_t)snprintf(buf + off, len - off, "%s%s%s%s",
                            i == 0                      ? ""
                            : o->choices[i + 1] == NULL ? last
                                                        : sep,
                            quote, o->choices[i], quote);
}

int dp_option_set(const dp_option_t *o, void *conf, const char *val, char *err,
                  size_t len) {
  char a[64], b[64];
  uint64_t v;
  double d;
  if (o->set != NULL)
    return o->set(o, conf, val, err, len);
  switch (o->kind) {
  case DP_OPT_SIZE:
    if (dp_parse_size(val, &v) < 0 || (double)v < o->min ||
        (double)v > o->max || v % o->multiple) {
      dp_format_size((uint64_t)o->min, a, sizeof(a));
      dp_format_size((uint64_t)o->max, b, sizeof(b));
      return dp_errf(err, len, -EINVAL,
                     "Option \"%s\": value \"%s\" is invalid: allowed "
                     "%s to %s%s (suffixes k, M, G, T)",
                     o->key, val, a, b, o->rule ? o->rule : "");
    }
    store(o, conf, v);
    return 0;
  case DP_OPT_DURATION:
    if (dp_parse_duration(val, &v) < 0 || (double)v < o->min * NS_PER_S ||
        (double)v > o->max * NS_PER_S)
      return dp_errf(err, len, -EINVAL,
                     "Option \"%s\": value \"%s\" is invalid: allowed "
                     "%g to %g seconds (e.g. 60, 0.5, 500ms)",
                     o->key, val, o->min, o->max);
    store(o, conf, v);
    return 0;
  case DP_OPT_INTEGER:
    if (dp_parse_uint(val, &v) < 0 || (double)v < o->min || (double)v > o->max)
      return dp_errf(err, len, -EINVAL,
                     "Option \"%s\": value \"%s\" is invalid: allowed "
                     "integers %.0f to %.0f",
                     o->key, val, o->min, o->max);
    store(o, conf, v);
    return 0;
  case DP_OPT_REAL:
    if (dp_parse_real(val, &d) < 0 || !(d >= o->min && d <= o->max))
      return dp_errf(err, len, -EINVAL,
                     "Option \"%s\": value \"%s\" is invalid: allowed "
                     "%g to %g%s",
                     o->key, val, o->min, o->max, o->rule ? o->rule : "");
    memcpy((char *)conf + o->offset, &d, sizeof(d));
    return 0;
  case DP_OPT_BOOL:
  case DP_OPT_ENUM: {
    int i = choice_index(o, val);
    if (i < 0) {
      char list[256];
      join_choices(o, ", ", o->kind == DP_OPT_BOOL ? " or " : ", ", "", list,
                   sizeof(list));
      return dp_errf(err, len, -EINVAL,
                     "Option \"%s\": value \"%s\" is invalid: allowed "
                     "%s",
                     o->key, val, list);
    }
    int x = o->kind == DP_OPT_BOOL ? i == 0 : i;
    memcpy((char *)conf + o->offset, &x, sizeof(x));
    return 0;
  }
  case DP_OPT_LIST:
  case DP_OPT_BLOCK:
  case DP_OPT_PATH:
  case DP_OPT_TEXT:
    break;
  }
  return dp_errf(err, len, -EINVAL,
                 "Option \"%s\" is %s, read by the plugin itself", o->key,
                 o->kind == DP_OPT_BLOCK ? "a block" : "a list");
}

void dp_options_defaults(dp_opt_scope_t scope, void *conf) {
  char err[256];
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
    if (table[i].scope == scope && table[i].def != NULL)
      (void)dp_option_set(&table[i], conf, table[i].def, err, sizeof(err));
}

void dp_options_keys(dp_opt_scope_t scope, char *buf, size_t len) {
  size_t off = 0, nkeys = 0, i, n = sizeof(table) / sizeof(table[0]);
  buf[0] = '\0';
  for (i = 0; i < n; i++)
    if (table[i].scope == scope && table[i].kind != DP_OPT_BLOCK)
      nkeys++;
  size_t k = 0;
  for (i = 0; i < n && off < len; i++)
    if (table[i].scope == scope && table[i].kind != DP_OPT_BLOCK)
      off += (size_t)snprintf(buf + off, len - off, "%s%s",
                              k++ == 0 ? "" : ", ", table[i].key);
  for (i = 0; i < n && off < len; i++)
    if (table[i].scope == scope && table[i].kind == DP_OPT_BLOCK)
      off += (size_t)snprintf(buf + off, len - off, " and <%s> blocks",
                              table[i].key);
}

void dp_option_allowed(const dp_option_t *o, char *buf, size_t len) {
  char a[64], b[64];
  if (o->allowed_doc != NULL) {
    snprintf(buf, len, "%s", o->allowed_doc);
    return;
  }
  switch (o->kind) {
  case DP_OPT_SIZE:
    dp_format_size((uint64_t)o->min, a, sizeof(a));
    dp_format_size((uint64_t)o->max, b, sizeof(b));
    snprintf(buf, len, "%s–%s%s", a, b, o->rule ? o->rule : "");
    return;
  case DP_OPT_BOOL:
  case DP_OPT_ENUM:
    join_choices(o, ", ", ", ", "`", buf, len);
    return;
  case DP_OPT_REAL:
    snprintf(buf, len, "%g–%g%s", o->min, o->max, o->rule ? o->rule : "");
    return;
  default:
    snprintf(buf, len, "%.10g–%.10g%s%s", o->min, o->max, o->unit ? " " : "",
             o->unit ? o->unit : "");
    return;
  }
}

size_t dp_options_default_probes(dp_probe_conf_t out[DP_PROBES_MAX]) {
  /* in config terms, through the same table as a Probe block */
  static const char *const defs[][5] = {
      /* name, Pattern, BlockSize, QueueDepth, Duration */
      {"randread-qd1", "randread", "8k", "1", "0.5"},
      {"randread-qd32", "randread", "8k", "32", "0.25"},
      {"seqread", "seqread", "1M", "4", "0.25"}};
  static const char *const keys[] = {"Pattern", "BlockSize", "QueueDepth",
                                     "Duration"};
  char err[256];
  size_t n = sizeof(defs) / sizeof(defs[0]);
  for (size_t i = 0; i < n; i++) {
    dp_probe_conf_t *p = &out[i];
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", defs[i][0]);
    dp_options_defaults(DP_SCOPE_PROBE, p);
    for (size_t k = 0; k < 4; k++)
      (void)dp_option_set(dp_option_find(DP_SCOPE_PROBE, keys[k]), p,
                          defs[i][k + 1], err, sizeof(err));
  }
  return n;
}

/* The default probe set in words, from dp_options_default_probes. */
static void print_default_probes(FILE *f) {
  dp_target_conf_t t;
  memset(&t, 0, sizeof(t));
  dp_options_defaults(DP_SCOPE_TARGET, &t);
  t.nprobes = dp_options_default_probes(t.probes);
  fprintf(f, "A target without `<Probe>` blocks runs the default set: ");
  uint64_t total_ns = 0;
  for (size_t i = 0; i < t.nprobes; i++) {
    char bs[32];
    const dp_probe_conf_t *p = &t.probes[i];
    dp_format_size(p->block_size, bs, sizeof(bs));
    fprintf(f, "%s`%s` (%s %s, QD %u, %g s)", i == 0 ? "" : ", ", p->name,
            dp_pattern_name(p->pattern), bs, p->queue_depth,
            (double)p->duration_ns / NS_PER_S);
    total_ns += p->duration_ns;
  }
  fprintf(f,
          " — about %g s of disk time per %g s round, %.1f %% (within the "
          "default DutyCycle).\n",
          (double)total_ns / NS_PER_S, (double)t.interval_ns / NS_PER_S,
          100.0 * (double)total_ns / (double)t.interval_ns);
}

void dp_options_markdown(FILE *f) {
  static const char *const intro[DP_SCOPE_COUNT] = {
      "Plugin-wide options (inside `<Plugin diskprobe>`, outside any "
      "target):",
      "`<Target \"NAME\">` options. NAME is 1–63 characters of "
      "`A-Z a-z 0-9 _ . -`, not beginning with `dev-` (the device view's "
      "namespace); it becomes the `plugin_instance` of every value. A "
      "longer name is refused, never cut. Exactly one of `Path` and "
      "`Device`; the probes of a round must take less than "
      "`ProbeInterval`. Each option at most once per block (a repeated "
      "key is refused, naming both values); `<Probe>` blocks and "
      "`DeviceStats` lists may repeat.",
      "`<Probe \"NAME\">` options:"};
  size_t n = sizeof(table) / sizeof(table[0]);
  fprintf(f, "<!-- generated by `diskprobe options --markdown` from "
             "src/options.c: edit the table there -->\n");
  for (int s = 0; s < DP_SCOPE_COUNT; s++) {
    fprintf(f, "\n%s\n\n", intro[s]);
    fprintf(f, "| option | `diskprobe` flag | default | allowed | meaning "
               "|\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
      const dp_option_t *o = &table[i];
      char allowed[256], def[64];
      if ((int)o->scope != s)
        continue;
      dp_option_allowed(o, allowed, sizeof(allowed));
      if (o->default_doc)
        snprintf(def, sizeof(def), "%s", o->default_doc);
      else if (o->def)
        snprintf(def, sizeof(def), "`%s`", o->def);
      else
        snprintf(def, sizeof(def), "—");
      if (o->kind == DP_OPT_BLOCK)
        fprintf(f, "| `<%s \"NAME\">` |", o->key);
      else
        fprintf(f, "| `%s` |", o->key);
      if (o->flag)
        fprintf(f, " `--%s`%s |", o->flag,
                o->cli == DP_CLI_WATCH ? " (watch)" : "");
      else
        fprintf(f, " — |");
      fprintf(f, " %s | %s | %s |\n", def, allowed, o->help);
    }
  }
  fprintf(f, "\n");
  print_default_probes(f);
}
