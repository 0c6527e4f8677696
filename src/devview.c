/* devview.c - see devview.h. */
#include "devview.h"
#include "blockdev.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char name[DP_DISKSTATS_NAME_MAX];
  uint64_t ios, bytes; /* the probe counter at the last read */
} baseline_t;

struct dp_devview {
  char path[256], sysroot[256];
  size_t cap;
  dp_diskstats_tracker_t tracker;
  dp_diskstats_slot_t *slots;
  dp_diskstats_metrics_t *metrics;
  baseline_t *base;
  size_t nbase;
  char **patterns;
  size_t npatterns;
  char *buf;
  size_t buf_cap;
};

int dp_devview_new(dp_devview_t **out, const char *path, size_t max_devices) {
  dp_devview_t *v = calloc(1, sizeof(*v));
  *out = NULL;
  if (v == NULL)
    return -ENOMEM;
  snprintf(v->path, sizeof(v->path), "%s", path);
  snprintf(v->sysroot, sizeof(v->sysroot), "%s", DP_SYSROOT_DEFAULT);
  v->cap = max_devices;
  v->slots = calloc(max_devices, sizeof(*v->slots));
  v->metrics = calloc(max_devices, sizeof(*v->metrics));
  v->base = calloc(max_devices, sizeof(*v->base));
  v->buf_cap = 64 * 1024;
  v->buf = malloc(v->buf_cap);
  if (!v->slots || !v->metrics || !v->base || !v->buf) {
    dp_devview_free(v);
    return -ENOMEM;
  }
  dp_diskstats_tracker_init(&v->tracker, v->slots, max_devices);
  *out = v;
  return 0;
}

/* The end of the bracket expression that opens at p ("[...]", fnmatch's
 * rules: a leading '!' or '^', then a ']' first is literal, "[:class:]"
 * inside), or NULL when it has no closing ']'. */
static const char *bracket_end(const char *p) {
  p++;
  if (*p == '!' || *p == '^')
    p++;
  if (*p == ']')
    p++;
  for (; *p && *p != ']'; p++)
    if (p[0] == '[' && p[1] == ':') {
      const char *e = strstr(p + 2, ":]");
      if (e == NULL)
        return NULL;
      p = e + 1;
    }
  return *p == ']' ? p : NULL;
}

int dp_devview_glob_check(const char *pattern, char *err, size_t errlen) {
  if (pattern[0] == '\0')
    return dp_errf(err, errlen, -EINVAL, "it is empty");
  if (strchr(pattern, '/') != NULL)
    return dp_errf(err, errlen, -EINVAL, "it is a path, not a device name");
  if (strlen(pattern) >= DP_DISKSTATS_NAME_MAX)
    return dp_errf(err, errlen, -ENAMETOOLONG,
                   "it is longer than %d characters",
                   DP_DISKSTATS_NAME_MAX - 1);
  for (const char *p = pattern; *p; p++) {
    if (*p == '\\') {
      if (*++p == '\0')
        return dp_errf(err, errlen, -EINVAL,
                       "it ends in a lone backslash: not a valid glob");
      continue;
    }
    if (*p == '[' && (p = bracket_end(p)) == NULL)
      return dp_errf(err, errlen, -EINVAL,
                     "a '[' has no closing ']': not a valid glob");
  }
  return 0;
}

int dp_devview_watch(dp_devview_t *v, const char *pattern) {
  char err[128];
  int rc = dp_devview_glob_check(pattern, err, sizeof(err));
  if (rc < 0)
    return rc;
  for (size_t i = 0; i < v->npatterns; i++)
    if (strcmp(v->patterns[i], pattern) == 0)
      return 0;
  char **np = realloc(v->patterns, (v->npatterns + 1) * sizeof(*np));
  if (np == NULL)
    return -ENOMEM;
  v->patterns = np;
  if ((np[v->npatterns] = strdup(pattern)) == NULL)
    return -ENOMEM;
  v->npatterns++;
  dp_diskstats_tracker_filter(&v->tracker, (const char *const *)v->patterns,
                              v->npatterns);
  return 0;
}

size_t dp_devview_npatterns(const dp_devview_t *v) { return v->npatterns; }

void dp_devview_set_sysroot(dp_devview_t *v, const char *sysroot) {
  snprintf(v->sysroot, sizeof(v->sysroot), "%s",
           sysroot ? sysroot : DP_SYSROOT_DEFAULT);
}

/* 1 when sysfs says the device has no sectors (size 0); a device sysfs
 * does not know is kept. */
static int empty_device(const dp_devview_t *v, const char *name) {
  uint64_t sectors;
  return dp_blockdev_sectors(v->sysroot, name, &sectors) == 0 && sectors == 0;
}

/* The counter's growth since the last read of device `name`. */
static void probe_delta(dp_devview_t *v, const char *name,
                        const dp_io_counter_t *c, uint64_t *ios,
                        uint64_t *bytes) {
  uint64_t now_ios = atomic_load_explicit(&c->ios, memory_order_relaxed);
  uint64_t now_bytes = atomic_load_explicit(&c->bytes, memory_order_relaxed);
  baseline_t *b = NULL;
  for (size_t i = 0; i < v->nbase && b == NULL; i++)
    if (strcmp(v->base[i].name, name) == 0)
      b = &v->base[i];
  if (b == NULL && v->nbase < v->cap) {
    b = &v->base[v->nbase++];
    snprintf(b->name, sizeof(b->name), "%s", name);
    b->ios = b->bytes = 0; /* counters start at 0 with the process */
  }
  *ios = b ? now_ios - b->ios : 0;
  *bytes = b ? now_bytes - b->bytes : 0;
  if (b) {
    b->ios = now_ios;
    b->bytes = now_bytes;
  }
}

int dp_devview_read(dp_devview_t *v, uint64_t now_ns,
                    dp_devview_counter_fn counter_of, void *arg,
                    const dp_diskstats_metrics_t **out) {
  *out = v->metrics;
  if (v->npatterns == 0)
    return 0;
  size_t len = 0;
  int rc;
  while ((rc = dp_diskstats_read_file(v->path, v->buf, v->buf_cap, &len)) ==
             -ENOBUFS &&
         v->buf_cap < (64u << 20)) {
    char *nb = realloc(v->buf, v->buf_cap * 4);
    if (nb == NULL)
      return -ENOMEM;
    v->buf = nb;
    v->buf_cap *= 4;
  }
  if (rc < 0)
    return rc;
  int n = dp_diskstats_tracker_feed(&v->tracker, v->buf, len, now_ns,
                                    v->metrics, v->cap);
  int kept = 0;
  for (int i = 0; i < n; i++) {
    if (empty_device(v, v->metrics[i].name))
      continue;
    if (kept != i)
      v->metrics[kept] = v->metrics[i];
    dp_diskstats_metrics_t *m = &v->metrics[kept++];
    const dp_io_counter_t *c = counter_of ? counter_of(m->name, arg) : NULL;
    uint64_t ios = 0, bytes = 0;
    if (c == NULL) { /* no probe runs there: none of it is ours */
      m->probe_ios_share = m->probe_bytes_share = 0;
      continue;
    }
    probe_delta(v, m->name, c, &ios, &bytes);
    dp_diskstats_probe_share(m, ios, bytes);
  }
  return kept;
}

/* The value of series id, named from the metric table. */
static dp_devview_value_t devview_value(dp_metric_id_t id, double value) {
  const dp_metric_t *m = dp_metric(id);
  return (dp_devview_value_t){id, m->type->name, m->type_instance, value};
}

size_t dp_devview_values(const dp_diskstats_metrics_t *m,
                         dp_devview_value_t out[DP_DEVVIEW_VALUES_MAX]) {
  size_t n = 0;
#define V(id, val) out[n++] = devview_value(DP_METRIC_DEV_##id, (val))
  V(READS, m->reads_per_s);
  V(WRITES, m->writes_per_s);
  V(READ_BYTES, m->read_bytes_per_s);
  V(WRITE_BYTES, m->write_bytes_per_s);
  V(READ_SIZE, m->avg_read_size_bytes);
  V(WRITE_SIZE, m->avg_write_size_bytes);
  V(READ_AWAIT, m->read_await_s);
  V(WRITE_AWAIT, m->write_await_s);
  V(QUEUE, m->avg_queue_length);
  V(UTILIZATION, m->util_percent);
  V(IN_FLIGHT, (double)m->in_flight);
  /* Probe I/O straddling a read boundary can make the raw share exceed
   * 100 %; all of the device's I/O is the most it can be. */
  V(PROBE_SHARE,
    m->probe_bytes_share > 1 ? 100.0 : 100.0 * m->probe_bytes_share);
  if (m->flags & DP_DISKSTATS_HAVE_DISCARDS) {
    V(DISCARDS, m->discards_per_s);
    V(DISCARD_AWAIT, m->discard_await_s);
  }
  if (m->flags & DP_DISKSTATS_HAVE_FLUSHES) {
    V(FLUSHES, m->flushes_per_s);
    V(FLUSH_AWAIT, m->flush_await_s);
  }
#undef V
  return n;
}

void dp_devview_free(dp_devview_t *v) {
  if (v == NULL)
    return;
  for (size_t i = 0; i < v->npatterns; i++)
    free(v->patterns[i]);
  free(v->patterns);
  free(v->slots);
  free(v->metrics);
  free(v->base);
  free(v->buf);
  free(v);
}
