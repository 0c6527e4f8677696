/* conf.c - target and probe configuration model; see conf.h. */
#define _GNU_SOURCE
#include "conf.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NS_PER_S 1000000000ull

static int say(char *err, size_t len, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int say(char *err, size_t len, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return rc;
}

int dp_conf_name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n >= DP_NAME_MAX)
    return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)name[i];
    if (!isalnum(c) && c != '_' && c != '-' && c != '.')
      return 0;
  }
  return 1;
}

void dp_probe_conf_init(dp_probe_conf_t *p, const char *name) {
  memset(p, 0, sizeof(*p));
  snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
  p->pattern = DP_PATTERN_RANDREAD;
  p->block_size = 8192;
  p->queue_depth = 1;
  p->duration_ns = NS_PER_S;
}

void dp_target_conf_init(dp_target_conf_t *t, const char *name) {
  memset(t, 0, sizeof(*t));
  snprintf(t->name, sizeof(t->name), "%s", name ? name : "");
  t->file_size_bytes = 1ull << 30;
  t->interval_ns = 60 * NS_PER_S;
  t->timeout_ns = 10 * NS_PER_S;
}

/* A duration option in seconds (a bare number, or with a unit) in [lo, hi]. */
static int set_seconds(const char *key, const char *val, double lo, double hi,
                       uint64_t *out, char *err, size_t len) {
  uint64_t ns;
  if (dp_parse_duration(val, &ns) < 0 || (double)ns < lo * 1e9 ||
      (double)ns > hi * 1e9)
    return say(err, len, -EINVAL,
               "Option \"%s\": value \"%s\" is invalid: allowed %g to %g "
               "seconds (e.g. 60, 0.5, 500ms)",
               key, val, lo, hi);
  *out = ns;
  return 0;
}

/* A size in [lo, hi] that is a multiple of `multiple`, which `rule`
 * states in words for the message (", a multiple of 512"). */
static int set_size(const char *key, const char *val, uint64_t lo, uint64_t hi,
                    uint64_t multiple, const char *rule, uint64_t *out,
                    char *err, size_t len) {
  uint64_t v;
  char los[32], his[32];
  dp_format_size(lo, los, sizeof(los));
  dp_format_size(hi, his, sizeof(his));
  if (dp_parse_size(val, &v) < 0 || v < lo || v > hi || v % multiple)
    return say(err, len, -EINVAL,
               "Option \"%s\": value \"%s\" is invalid: allowed %s to %s%s "
               "(suffixes k, M, G, T)",
               key, val, los, his, rule);
  *out = v;
  return 0;
}

static int set_uint(const char *key, const char *val, uint64_t lo, uint64_t hi,
                    uint64_t *out, char *err, size_t len) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(val, &end, 10);
  if (errno || end == val || *end || val[0] == '-' || v < lo || v > hi)
    return say(err, len, -EINVAL,
               "Option \"%s\": value \"%s\" is invalid: allowed integers %llu "
               "to %llu",
               key, val, (unsigned long long)lo, (unsigned long long)hi);
  *out = v;
  return 0;
}

int dp_target_conf_set(dp_target_conf_t *t, const char *key, const char *val,
                       char *err, size_t errlen) {
  if (strcasecmp(key, "Path") == 0 || strcasecmp(key, "Device") == 0) {
    int dev = strcasecmp(key, "Device") == 0;
    if (t->has_path)
      return say(err, errlen, -EINVAL,
                 "Option \"%s\": the target already has a %s; give exactly "
                 "one Path or Device",
                 key, t->is_device ? "Device" : "Path");
    if (val[0] != '/' || strlen(val) >= sizeof(t->path) - 32)
      return say(err, errlen, -EINVAL,
                 "Option \"%s\": value \"%s\" is invalid: allowed an "
                 "absolute path",
                 key, val);
    snprintf(t->path, sizeof(t->path), "%s", val);
    t->is_device = dev;
    t->has_path = 1;
    return 0;
  }
  if (strcasecmp(key, "FileSize") == 0)
    return set_size("FileSize", val, 1ull << 20, 1ull << 40, 1ull << 20,
                    ", a whole number of MiB", &t->file_size_bytes, err,
                    errlen);
  if (strcasecmp(key, "ProbeInterval") == 0)
    return set_seconds("ProbeInterval", val, 1, 86400, &t->interval_ns, err,
                       errlen);
  if (strcasecmp(key, "Timeout") == 0)
    return set_seconds("Timeout", val, 0.01, 3600, &t->timeout_ns, err, errlen);
  return say(err, errlen, -ENOENT,
             "unknown option \"%s\" in Target: allowed Path, Device, "
             "FileSize, ProbeInterval, Timeout and <Probe> blocks",
             key);
}

int dp_probe_conf_set(dp_probe_conf_t *p, const char *key, const char *val,
                      char *err, size_t errlen) {
  uint64_t v;
  if (strcasecmp(key, "Pattern") == 0) {
    if (dp_pattern_parse(val, &p->pattern) < 0)
      return say(err, errlen, -EINVAL,
                 "Option \"Pattern\": value \"%s\" is invalid: allowed "
                 "randread, seqread, randwrite, seqwrite, syncwrite",
                 val);
    return 0;
  }
  if (strcasecmp(key, "BlockSize") == 0) {
    if (set_size("BlockSize", val, 512, 64ull << 20, 512, ", a multiple of 512",
                 &v, err, errlen) < 0)
      return -EINVAL;
    p->block_size = (uint32_t)v;
    return 0;
  }
  if (strcasecmp(key, "QueueDepth") == 0) {
    if (set_uint("QueueDepth", val, 1, DP_QD_MAX, &v, err, errlen) < 0)
      return -EINVAL;
    p->queue_depth = (uint32_t)v;
    return 0;
  }
  if (strcasecmp(key, "Duration") == 0)
    return set_seconds("Duration", val, 0.01, 60, &p->duration_ns, err, errlen);
  if (strcasecmp(key, "MaxOps") == 0)
    return set_uint("MaxOps", val, 0, 1ull << 32, &p->max_ops, err, errlen);
  return say(err, errlen, -ENOENT,
             "unknown option \"%s\" in Probe \"%s\": allowed Pattern, "
             "BlockSize, QueueDepth, Duration, MaxOps",
             key, p->name);
}

int dp_target_conf_add_probe(dp_target_conf_t *t, const dp_probe_conf_t *p,
                             char *err, size_t errlen) {
  if (!dp_conf_name_ok(p->name))
    return say(err, errlen, -EINVAL,
               "Probe name \"%s\" is invalid: allowed 1 to %d characters of "
               "A-Z a-z 0-9 _ . -",
               p->name, DP_NAME_MAX - 1);
  for (size_t i = 0; i < t->nprobes; i++)
    if (strcmp(t->probes[i].name, p->name) == 0)
      return say(err, errlen, -EEXIST,
                 "Probe \"%s\" is defined twice in Target \"%s\"", p->name,
                 t->name);
  if (t->nprobes >= DP_PROBES_MAX)
    return say(err, errlen, -ENOSPC,
               "Target \"%s\" has more than %d Probe blocks", t->name,
               DP_PROBES_MAX);
  t->probes[t->nprobes++] = *p;
  return 0;
}

void dp_target_conf_default_probes(dp_target_conf_t *t) {
  static const struct {
    const char *name;
    dp_pattern_t pattern;
    uint32_t bs, qd;
    uint64_t dur_ms;
  } defs[] = {{"randread-qd1", DP_PATTERN_RANDREAD, 8192, 1, 500},
              {"randread-qd32", DP_PATTERN_RANDREAD, 8192, 32, 250},
              {"seqread", DP_PATTERN_SEQREAD, 1u << 20, 4, 250}};
  t->nprobes = 0;
  for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
    dp_probe_conf_t *p = &t->probes[t->nprobes++];
    dp_probe_conf_init(p, defs[i].name);
    p->pattern = defs[i].pattern;
    p->block_size = defs[i].bs;
    p->queue_depth = defs[i].qd;
    p->duration_ns = defs[i].dur_ms * 1000000ull;
  }
}

int dp_target_conf_finish(dp_target_conf_t *t, char *err, size_t errlen) {
  if (!dp_conf_name_ok(t->name))
    return say(err, errlen, -EINVAL,
               "Target name \"%s\" is invalid: allowed 1 to %d characters of "
               "A-Z a-z 0-9 _ . -",
               t->name, DP_NAME_MAX - 1);
  if (!t->has_path)
    return say(err, errlen, -EINVAL,
               "Target \"%s\" has neither Path nor Device: give exactly one",
               t->name);
  if (t->nprobes == 0)
    dp_target_conf_default_probes(t);
  uint64_t total_ns = 0;
  for (size_t i = 0; i < t->nprobes; i++) {
    const dp_probe_conf_t *p = &t->probes[i];
    if (t->is_device && dp_pattern_writes(p->pattern))
      return say(err, errlen, -EINVAL,
                 "Target \"%s\": Probe \"%s\" has Pattern %s, but the target "
                 "is a Device: write probes only run inside a probe file "
                 "(use Path)",
                 t->name, p->name, dp_pattern_name(p->pattern));
    if (!t->is_device && p->block_size > t->file_size_bytes / 2)
      return say(err, errlen, -EINVAL,
                 "Target \"%s\": Probe \"%s\" BlockSize %u is larger than "
                 "half the FileSize",
                 t->name, p->name, p->block_size);
    total_ns += p->duration_ns;
  }
  if (total_ns >= t->interval_ns)
    return say(err, errlen, -EINVAL,
               "Target \"%s\": its probes take %.2f s but ProbeInterval is "
               "%.2f s: lengthen ProbeInterval or shorten Duration",
               t->name, (double)total_ns / 1e9, (double)t->interval_ns / 1e9);
  return 0;
}

void dp_plugin_conf_init(dp_plugin_conf_t *c) {
  c->duty_cycle_percent = 2.0;
  c->splay = 1;
  c->saturation_percent = 90.0;
}

int dp_plugin_conf_set(dp_plugin_conf_t *c, const char *key, const char *val,
                       char *err, size_t errlen) {
  if (strcasecmp(key, "DutyCycle") == 0) {
    char *end;
    double v = strtod(val, &end);
    if (end == val || *end || !(v >= 0.01 && v <= 100))
      return say(err, errlen, -EINVAL,
                 "Option \"DutyCycle\": value \"%s\" is invalid: allowed "
                 "0.01 to 100 (percent of wall time)",
                 val);
    c->duty_cycle_percent = v;
    return 0;
  }
  if (strcasecmp(key, "SaturationThreshold") == 0) {
    char *end;
    double v = strtod(val, &end);
    if (end == val || *end || !(v >= 1 && v <= 1000))
      return say(err, errlen, -EINVAL,
                 "Option \"SaturationThreshold\": value \"%s\" is invalid: "
                 "allowed 1 to 1000 (percent utilisation)",
                 val);
    c->saturation_percent = v;
    return 0;
  }
  if (strcasecmp(key, "Splay") == 0) {
    if (strcasecmp(val, "true") == 0)
      c->splay = 1;
    else if (strcasecmp(val, "false") == 0)
      c->splay = 0;
    else
      return say(err, errlen, -EINVAL,
                 "Option \"Splay\": value \"%s\" is invalid: allowed true "
                 "or false",
                 val);
    return 0;
  }
  return say(err, errlen, -ENOENT,
             "unknown option \"%s\": allowed DutyCycle, Splay, "
             "SaturationThreshold, DeviceStats and <Target> blocks",
             key);
}

uint64_t dp_duty_interval_ns(uint64_t configured_ns, uint64_t busy_ns,
                             double duty_percent, unsigned sharing) {
  if (duty_percent <= 0 || sharing == 0)
    return configured_ns;
  double need = (double)busy_ns * sharing * 100.0 / duty_percent;
  if (need > 86400e9 * 30)
    need = 86400e9 * 30;
  return need > (double)configured_ns ? (uint64_t)need : configured_ns;
}
