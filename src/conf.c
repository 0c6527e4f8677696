/* conf.c - target and probe configuration model; see conf.h. */
#define _GNU_SOURCE
#include "conf.h"
#include "options.h"
#include "reaper.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define say dp_errf

int dp_conf_name_check(const char *what, const char *name, char *err,
                       size_t errlen) {
  size_t n = strlen(name);
  if (n >= DP_NAME_MAX)
    return say(err, errlen, -EINVAL,
               "%s name \"%s\" is %zu characters long: allowed 1 to %d "
               "characters of A-Z a-z 0-9 _ . - (a longer name is refused, "
               "never cut)",
               what, name, n, DP_NAME_MAX - 1);
  if (!dp_conf_name_ok(name))
    return say(err, errlen, -EINVAL,
               "%s name \"%s\" is invalid: allowed 1 to %d characters of "
               "A-Z a-z 0-9 _ . -",
               what, name, DP_NAME_MAX - 1);
  return 0;
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

/* Defaults, ranges and messages of every option are in options.c. */
void dp_probe_conf_init(dp_probe_conf_t *p, const char *name) {
  memset(p, 0, sizeof(*p));
  snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
  p->name_too_long = name != NULL && strlen(name) >= sizeof(p->name);
  dp_options_defaults(DP_SCOPE_PROBE, p);
}

void dp_target_conf_init(dp_target_conf_t *t, const char *name) {
  memset(t, 0, sizeof(*t));
  snprintf(t->name, sizeof(t->name), "%s", name ? name : "");
  t->name_too_long = name != NULL && strlen(name) >= sizeof(t->name);
  dp_options_defaults(DP_SCOPE_TARGET, t);
}

void dp_plugin_conf_init(dp_plugin_conf_t *c) {
  memset(c, 0, sizeof(*c));
  dp_options_defaults(DP_SCOPE_PLUGIN, c);
}

/* One option of a scope from the table; where, for the unknown-key
 * message, names the block (" in Target"). */
static int conf_set(dp_opt_scope_t scope, void *conf, const char *where,
                    const char *key, const char *val, char *err,
                    size_t errlen) {
  const dp_option_t *o = dp_option_find(scope, key);
  if (o == NULL) {
    char keys[256];
    dp_options_keys(scope, keys, sizeof(keys));
    return say(err, errlen, -ENOENT, "unknown option \"%s\"%s: allowed %s", key,
               where, keys);
  }
  return dp_option_set(o, conf, val, err, errlen);
}

int dp_target_conf_set(dp_target_conf_t *t, const char *key, const char *val,
                       char *err, size_t errlen) {
  return conf_set(DP_SCOPE_TARGET, t, " in Target", key, val, err, errlen);
}

int dp_probe_conf_set(dp_probe_conf_t *p, const char *key, const char *val,
                      char *err, size_t errlen) {
  char where[DP_NAME_MAX + 16];
  snprintf(where, sizeof(where), " in Probe \"%s\"", p->name);
  return conf_set(DP_SCOPE_PROBE, p, where, key, val, err, errlen);
}

int dp_plugin_conf_set(dp_plugin_conf_t *c, const char *key, const char *val,
                       char *err, size_t errlen) {
  return conf_set(DP_SCOPE_PLUGIN, c, "", key, val, err, errlen);
}

int dp_target_conf_add_probe(dp_target_conf_t *t, const dp_probe_conf_t *p,
                             char *err, size_t errlen) {
  if (p->name_too_long)
    return say(err, errlen, -EINVAL,
               "Probe name \"%s...\" is longer than %d characters: a longer "
               "name is refused, never cut",
               p->name, DP_NAME_MAX - 1);
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
  t->nprobes = dp_options_default_probes(t->probes);
}

int dp_probe_conf_check(const dp_probe_conf_t *p, char *err, size_t errlen) {
  uint64_t bytes = (uint64_t)p->queue_depth * p->block_size;
  if (bytes > DP_PROBE_BUFFER_MAX_BYTES)
    return say(err, errlen, -EINVAL,
               "Probe \"%s\" QueueDepth %u x BlockSize %u needs %llu MiB of "
               "I/O buffers; allowed at most %llu MiB per probe (lower "
               "QueueDepth or BlockSize)",
               p->name, p->queue_depth, p->block_size,
               (unsigned long long)(bytes >> 20),
               (unsigned long long)(DP_PROBE_BUFFER_MAX_BYTES >> 20));
  return 0;
}

int dp_target_conf_finish(dp_target_conf_t *t, char *err, size_t errlen) {
  if (t->name_too_long)
    return say(err, errlen, -EINVAL,
               "Target name \"%s...\" is longer than %d characters: a longer "
               "name is refused, never cut",
               t->name, DP_NAME_MAX - 1);
  if (!dp_conf_name_ok(t->name))
    return say(err, errlen, -EINVAL,
               "Target name \"%s\" is invalid: allowed 1 to %d characters of "
               "A-Z a-z 0-9 _ . -",
               t->name, DP_NAME_MAX - 1);
  if (strncmp(t->name, DP_DEVVIEW_PREFIX, strlen(DP_DEVVIEW_PREFIX)) == 0)
    return say(err, errlen, -EINVAL,
               "Target name \"%s\" is reserved: names beginning with "
               "\"" DP_DEVVIEW_PREFIX "\" are the device view's",
               t->name);
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
    char why[256];
    if (dp_probe_conf_check(p, why, sizeof(why)) < 0)
      return say(err, errlen, -EINVAL, "Target \"%s\": %s", t->name, why);
    total_ns += p->duration_ns;
  }
  if (total_ns >= t->interval_ns)
    return say(err, errlen, -EINVAL,
               "Target \"%s\": its probes take %.2f s but ProbeInterval is "
               "%.2f s: lengthen ProbeInterval or shorten Duration",
               t->name, (double)total_ns / 1e9, (double)t->interval_ns / 1e9);
  return 0;
}

/* The probe file a Path names: the path itself when it ends in ".probe",
 * else DIR/diskprobe.probe (target.h's rule), with trailing slashes gone. */
static void probe_file_of(const dp_target_conf_t *t, char *buf, size_t len) {
  size_t n = strlen(t->path);
  while (n > 1 && t->path[n - 1] == '/')
    n--;
  if (t->is_device || (n > 6 && strncmp(t->path + n - 6, ".probe", 6) == 0))
    snprintf(buf, len, "%.*s", (int)n, t->path);
  else
    snprintf(buf, len, "%.*s/diskprobe.probe", (int)n, t->path);
}

void dp_conf_path_normalise(const char *path, char *buf, size_t len) {
  size_t out = 0;
  const char *p = path;
  if (len == 0)
    return;
  while (*p != '\0') {
    while (*p == '/')
      p++;
    const char *e = strchrnul(p, '/');
    size_t n = (size_t)(e - p);
    if (n == 0 || (n == 1 && p[0] == '.')) {
      /* nothing: "//", "/./" */
    } else if (n == 2 && p[0] == '.' && p[1] == '.') {
      while (out > 0 && buf[out - 1] != '/')
        out--;
      if (out > 0)
        out--; /* the slash before the component dropped */
    } else if (out + 1 + n < len) {
      buf[out++] = '/';
      memcpy(buf + out, p, n);
      out += n;
    }
    p = e;
  }
  if (out == 0)
    buf[out++] = '/';
  buf[out] = '\0';
}

/* What the kernel says a probe file or device is, for the duplicate
 * check: a Device's device number; a Path's probe file as its directory
 * (st_dev, st_ino) and its name, and the file's own if it exists (a hard
 * link, a bind mount, a symlinked directory). Looked at in a child
 * (reaper.h): a path on a hung disk is not compared, never waited for. */
typedef struct {
  int dir_ok, file_ok, dev_ok;
  dev_t dir_dev, file_dev, rdev;
  ino_t dir_ino, file_ino;
  char base[NAME_MAX + 1];
} ident_t;

typedef struct {
  char file[PATH_MAX + 32];
  int is_device;
} ident_arg_t;

static void ident_of(void *arg, void *out, size_t len) {
  const ident_arg_t *a = arg;
  ident_t *id = out;
  struct stat st;
  (void)len;
  if (a->is_device) {
    id->dev_ok = stat(a->file, &st) == 0 && S_ISBLK(st.st_mode);
    id->rdev = id->dev_ok ? st.st_rdev : 0;
    return;
  }
  if (stat(a->file, &st) == 0 && S_ISREG(st.st_mode)) {
    id->file_ok = 1;
    id->file_dev = st.st_dev;
    id->file_ino = st.st_ino;
  }
  char dir[PATH_MAX + 32];
  snprintf(dir, sizeof(dir), "%s", a->file);
  char *slash = strrchr(dir, '/');
  if (slash == NULL)
    return;
  snprintf(id->base, sizeof(id->base), "%s", slash + 1);
  if (slash == dir)
    slash[1] = '\0';
  else
    *slash = '\0';
  if (stat(dir, &st) == 0) {
    id->dir_ok = 1;
    id->dir_dev = st.st_dev;
    id->dir_ino = st.st_ino;
  }
}

static int same_ident(const ident_t *a, const ident_t *b) {
  if (a->dev_ok && b->dev_ok)
    return a->rdev == b->rdev;
  if (a->file_ok && b->file_ok)
    return a->file_dev == b->file_dev && a->file_ino == b->file_ino;
  return a->dir_ok && b->dir_ok && a->dir_dev == b->dir_dev &&
         a->dir_ino == b->dir_ino && strcmp(a->base, b->base) == 0;
}

int dp_conf_check_duplicates(const dp_target_conf_t *t, size_t n, char *err,
                             size_t errlen) {
  if (n < 2)
    return 0;
  ident_arg_t *args = calloc(n, sizeof(*args));
  ident_t *ids = calloc(n, sizeof(*ids));
  int *rcs = calloc(n, sizeof(*rcs));
  char(*norm)[PATH_MAX + 32] = calloc(n, sizeof(*norm));
  if (args == NULL || ids == NULL || rcs == NULL || norm == NULL) {
    free(args);
    free(ids);
    free(rcs);
    free(norm);
    return say(err, errlen, -ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    probe_file_of(&t[i], args[i].file, sizeof(args[i].file));
    args[i].is_device = t[i].is_device;
    dp_conf_path_normalise(args[i].file, norm[i], sizeof(norm[i]));
  }
  /* as the kernel resolves them, when they answer: bounded, in children */
  dp_reaper_call_many(ident_of, args, sizeof(*args), ids, sizeof(*ids), n,
                      DP_CONF_ANSWER_NS, rcs);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < n; i++)
    for (size_t j = i + 1; rc == 0 && j < n; j++) {
      int lexical = strcmp(norm[i], norm[j]) == 0;
      if (!lexical &&
          !(rcs[i] == 0 && rcs[j] == 0 && t[i].is_device == t[j].is_device &&
            same_ident(&ids[i], &ids[j])))
        continue;
      if (strcmp(args[i].file, args[j].file) == 0)
        rc = say(err, errlen, -EINVAL,
                 "Targets \"%s\" and \"%s\" both use %s: each target needs "
                 "its own probe file or device",
                 t[i].name, t[j].name, args[i].file);
      else
        rc = say(err, errlen, -EINVAL,
                 "Targets \"%s\" and \"%s\" both use %s: %s and %s are %s: "
                 "each target needs its own probe file or device",
                 t[i].name, t[j].name, norm[i], args[i].file, args[j].file,
                 lexical ? "one path" : "one file");
    }
  free(args);
  free(ids);
  free(rcs);
  free(norm);
  return rc;
}
