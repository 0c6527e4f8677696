/*
 * health_state.c - the health tracker's state file (dp_health_save,
 * dp_health_load; see health.h): the baselines of every target and probe
 * as text,
 *
 *   diskprobe-health 2
 *   interval TARGET NS       (its ProbeInterval, where known; optional)
 *   probe TARGET PROBE KEY N
 *   p50 v1 ... vN
 *   mean v1 ... vN
 *   iops v1 ... vN
 *   shape TARGET PROBE KEY v1 ... vM   (optional: the tail rule's p99/p50)
 *   level TARGET LEVEL RULE  (optional: a target not OK -- warning or
 *                            failure -- and the rule that holds it: the
 *                            level last notified, so that a restart sends
 *                            its OKAY, or nothing while it lasts)
 *   stalled TARGET PROBE     (optional: a stall's FAILURE notified, its
 *                            OKAY not yet)
 *   ...
 *   sum HEX                  (FNV-1a, 64 bits, of every byte before this
 *                            line: a file changed by anything but a save
 *                            is refused)
 *   end
 *
 * Version 1 (no sum line) still loads. Restored baselines are on
 * probation (health.h): a disk many times faster than them drops them.
 * values oldest first. A load parses the whole file before it changes a
 * baseline, so a corrupt file changes nothing. The text is formatted into
 * and parsed from memory (dp_health_state_format / _parse); the file's I/O
 * around them is statefile.h's.
 */
#define _GNU_SOURCE
#include "health.h"
#include "health_internal.h"
#include "statefile.h"
#include "vocab.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const st_names[ST_COUNT] = {"p50", "mean", "iops"};

/* FNV-1a, 64 bits: the state file's checksum. */
static uint64_t fnv1a(const char *p, size_t n) {
  uint64_t x = UINT64_C(14695981039346656037);
  for (size_t i = 0; i < n; i++)
    x = (x ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
  return x;
}

/* ---- save ---------------------------------------------------------------- */

/* The file's text, after the version line. */
static void save_probes(const dp_health_t *h, FILE *f) {
  for (size_t i = 0; i < h->n; i++) {
    const target_t *t = &h->t[i];
    if (!t->set)
      continue;
    if (t->interval_ns > 0)
      fprintf(f, "interval %s %llu\n", t->name,
              (unsigned long long)t->interval_ns);
    for (size_t k = 0; k < t->nprobes; k++) {
      const probe_t *p = &t->probes[k];
      fprintf(f, "probe %s %s %s %u\n", t->name, p->name, p->key,
              p->st[ST_P50].n);
      for (int s = 0; s < ST_COUNT; s++) {
        const ring_t *r = &p->st[s];
        fprintf(f, "%s", st_names[s]);
        for (unsigned j = 0; j < r->n; j++)
          fprintf(f, " %.6g",
                  (double)r->v[(r->head + j) % h->c.horizon_rounds]);
        fprintf(f, "\n");
      }
      const ring_t *r = &p->shape; /* the tail rule's baseline */
      if (r->n == 0)
        continue;
      fprintf(f, "shape %s %s %s", t->name, p->name, p->key);
      for (unsigned j = 0; j < r->n; j++)
        fprintf(f, " %.6g", (double)r->v[(r->head + j) % h->c.horizon_rounds]);
      fprintf(f, "\n");
    }
    if (t->level != DP_HEALTH_OK)
      fprintf(f, "level %s %s %s\n", t->name, dp_health_level_name(t->level),
              dp_health_rule_name(t->held_why));
    if (t->stall_open[0])
      fprintf(f, "stalled %s %s\n", t->name, t->stall_open);
  }
}

int dp_health_state_format(const dp_health_t *h, char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  FILE *f = open_memstream(text, len);
  if (f == NULL)
    return -errno;
  fprintf(f, "diskprobe-health 2\n");
  save_probes(h, f);
  int bad = fflush(f) != 0; /* *text and *len hold what was written */
  if (!bad)
    fprintf(f, "sum %016llx\nend\n", (unsigned long long)fnv1a(*text, *len));
  if (fclose(f) != 0 || bad) {
    free(*text);
    *text = NULL;
    *len = 0;
    return -ENOMEM;
  }
  return 0;
}

/* path's directory (".": none given) and file name; -ENAMETOOLONG + err
 * when it names no file. */
static int split_path(const char *path, char *dir, size_t dirlen,
                      const char **name, char *err, size_t errlen) {
  const char *slash = strrchr(path, '/');
  *name = slash ? slash + 1 : path;
  size_t dl = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
  if (dl + 1 > dirlen || **name == '\0')
    return dp_errf(err, errlen, -ENAMETOOLONG, "%s: not a file's path", path);
  if (dl == 0)
    snprintf(dir, dirlen, ".");
  else
    snprintf(dir, dirlen, "%.*s", (int)dl, path);
  return 0;
}

int dp_health_save(const dp_health_t *h, const char *path, char *err,
                   size_t errlen) {
  char dir[4096];
  const char *name;
  char *text;
  size_t len;
  int rc = split_path(path, dir, sizeof(dir), &name, err, errlen);
  if (rc < 0)
    return rc;
  if ((rc = dp_health_state_format(h, &text, &len)) < 0)
    return dp_errf(err, errlen, rc, "cannot format the state: %s",
                   strerror(-rc));
  rc = dp_statefile_write(dir, name, text, len, err, errlen);
  free(text);
  return rc;
}

/* ---- load ---------------------------------------------------------------- */

/* A probe's values as read, applied once the whole file parsed. */
typedef struct {
  probe_t *p; /* NULL: no such target, probe or key now */
  unsigned n;
  float *v[ST_COUNT];
} pending_t;

typedef struct {
  dp_health_t *h;
  FILE *f;
  char *line; /* cap bytes */
  size_t cap;
  unsigned lineno;
  char *err;
  size_t errlen;
  pending_t *pend; /* the probes to restore */
  size_t npend, maxpend;
  pending_t *shapes; /* their tail baselines (v[0]) */
  size_t nshapes;
  pending_t pe; /* the probe being read */
} loader_t;

/* Writes "line N: ..." to err; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) static int
load_bad(loader_t *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(L->err, L->errlen, fmt, ap);
  va_end(ap);
  return -EINVAL;
}

static int load_alloc(loader_t *L) {
  /* a line of the longest file we may meet, whatever our own horizon: one
   * saved with a longer one (a longer BaselineHorizon before a restart)
   * loads, keeping the newest values */
  L->cap = 64 + 32 * (size_t)DP_HEALTH_HORIZON_MAX;
  L->line = malloc(L->cap);
  for (size_t i = 0; i < L->h->n; i++)
    L->maxpend += L->h->t[i].nprobes;
  L->pend = calloc(L->maxpend + 1, sizeof(*L->pend));
  L->shapes = calloc(L->maxpend + 1, sizeof(*L->shapes));
  return L->line == NULL || L->pend == NULL || L->shapes == NULL ? -ENOMEM : 0;
}

static void load_free(loader_t *L) {
  for (int s = 0; s < ST_COUNT; s++)
    free(L->pe.v[s]); /* a probe cut short by an error */
  for (size_t j = 0; L->pend && j < L->npend; j++)
    for (int s = 0; s < ST_COUNT; s++)
      free(L->pend[j].v[s]);
  free(L->pend);
  for (size_t j = 0; L->shapes && j < L->nshapes; j++)
    free(L->shapes[j].v[0]);
  free(L->shapes);
  free(L->line);
}

static int load_header(loader_t *L) {
  if (!fgets(L->line, (int)L->cap, L->f) ||
      (strcmp(L->line, "diskprobe-health 1\n") != 0 &&
       strcmp(L->line, "diskprobe-health 2\n") != 0))
    return load_bad(L, "line 1: not a diskprobe health state file of "
                       "version 1 or 2");
  L->lineno = 1;
  return 0;
}

/* Version 2: its "sum" line, the last before "end", matches every byte
 * before it. 0, or -EINVAL with the cause in err. */
static int check_sum(const char *text, size_t len, char *err, size_t errlen) {
  static const char v2[] = "diskprobe-health 2\n";
  if (len < sizeof(v2) - 1 || memcmp(text, v2, sizeof(v2) - 1) != 0)
    return 0; /* version 1, or no state file: load_header says */
  if (len < 4 || memcmp(text + len - 4, "end\n", 4) != 0)
    return 0; /* no "end": the loader says the file is truncated */
  size_t end = len - 4, at = end; /* the sum line: [at, end) */
  if (end > 0 && text[end - 1] == '\n')
    for (at = end - 1; at > 0 && text[at - 1] != '\n'; at--)
      ;
  unsigned long long want;
  char tail;
  if (end - at < 5 || memcmp(text + at, "sum ", 4) != 0 ||
      sscanf(text + at, "sum %16llx%c", &want, &tail) != 2 || tail != '\n')
    return dp_errf(err, errlen, -EINVAL,
                   "no checksum line before \"end\" (a truncated or edited "
                   "file)");
  if (fnv1a(text, at) != (uint64_t)want)
    return dp_errf(err, errlen, -EINVAL,
                   "its checksum does not match: the file was changed by "
                   "something other than diskprobe (or damaged)");
  return 0;
}

static target_t *find_target(dp_health_t *h, const char *name) {
  for (size_t i = 0; i < h->n; i++)
    if (h->t[i].set && strcmp(h->t[i].name, name) == 0)
      return &h->t[i];
  return NULL;
}

/* The probe of target tname with that name and key, or NULL. */
static probe_t *find_probe(dp_health_t *h, const char *tname, const char *pname,
                           const char *key) {
  target_t *t = find_target(h, tname);
  for (size_t k = 0; t && k < t->nprobes; k++)
    if (strcmp(t->probes[k].name, pname) == 0 &&
        strcmp(t->probes[k].key, key) == 0)
      return &t->probes[k];
  return NULL;
}

/* One "<stat> v v v" line into vals (at most max), or -1. */
static int parse_values(char *line, const char *want, float *vals,
                        unsigned max) {
  char *save = NULL, *tok = strtok_r(line, " \n", &save);
  if (tok == NULL || strcmp(tok, want) != 0)
    return -1;
  unsigned n = 0;
  while ((tok = strtok_r(NULL, " \n", &save)) != NULL) {
    char *end;
    double x = strtod(tok, &end);
    /* and as the float it is kept as: 1e300 or 1e-50 would be kept as inf
     * or 0, which the next save writes and the next load refuses */
    if (*end != '\0' || !(x > 0) || !(x <= FLT_MAX) || n >= max ||
        !((float)x > 0))
      return -1;
    vals[n++] = (float)x;
  }
  return (int)n;
}

/* The three value lines of the probe being read into L->pe. */
static int load_values(loader_t *L) {
  unsigned n = L->pe.n;
  for (int s = 0; s < ST_COUNT; s++) {
    L->lineno++;
    if (!fgets(L->line, (int)L->cap, L->f))
      return load_bad(L, "line %u: the file ends inside a probe", L->lineno);
    if (strchr(L->line, '\n') == NULL)
      return load_bad(L, "line %u: too long", L->lineno);
    if ((L->pe.v[s] = malloc((n ? n : 1) * sizeof(float))) == NULL)
      return -ENOMEM;
    if (parse_values(L->line, st_names[s], L->pe.v[s], n) != (int)n)
      return load_bad(L, "line %u: expected %u positive values of %s",
                      L->lineno, n, st_names[s]);
  }
  return 0;
}

/* A "probe TARGET PROBE KEY N" line (in L->line) and its values: kept
 * when the probe exists now, else dropped. */
static int load_probe(loader_t *L) {
  char tname[NAME_MAX_], pname[NAME_MAX_], key[KEY_MAX_];
  unsigned n;
  if (sscanf(L->line, "probe %63s %63s %63s %u", tname, pname, key, &n) != 4)
    return load_bad(L, "line %u: expected \"probe TARGET PROBE KEY N\"",
                    L->lineno);
  if (n > DP_HEALTH_HORIZON_MAX)
    return load_bad(L, "line %u: %u values, more than %u", L->lineno, n,
                    DP_HEALTH_HORIZON_MAX);
  L->pe = (pending_t){.p = find_probe(L->h, tname, pname, key), .n = n};
  int rc = load_values(L);
  if (rc != 0)
    return rc; /* L->pe's values: freed by load_free */
  if (L->pe.p != NULL && L->npend < L->maxpend)
    L->pend[L->npend++] = L->pe;
  else
    for (int s = 0; s < ST_COUNT; s++)
      free(L->pe.v[s]);
  L->pe = (pending_t){0};
  return 0;
}

/* A "shape TARGET PROBE KEY v..." line: kept when the probe exists now. */
static int load_shape(loader_t *L) {
  char *save = NULL, *tok[4];
  for (int q = 0; q < 4; q++)
    tok[q] = strtok_r(q ? NULL : L->line, " \n", &save);
  if (tok[3] == NULL)
    return load_bad(L, "line %u: expected \"shape TARGET PROBE KEY V...\"",
                    L->lineno);
  probe_t *p = find_probe(L->h, tok[1], tok[2], tok[3]);
  float *v = malloc(DP_HEALTH_HORIZON_MAX * sizeof(float));
  if (v == NULL)
    return -ENOMEM;
  unsigned n = 0;
  for (char *t; (t = strtok_r(NULL, " \n", &save)) != NULL;) {
    char *end;
    double x = strtod(t, &end);
    if (*end != '\0' || !(x > 0) || !(x <= FLT_MAX) ||
        n >= DP_HEALTH_HORIZON_MAX || !((float)x > 0)) {
      free(v);
      return load_bad(L, "line %u: expected positive shape values", L->lineno);
    }
    v[n++] = (float)x;
  }
  if (p == NULL || L->nshapes >= L->maxpend) {
    free(v);
    return 0;
  }
  L->shapes[L->nshapes++] = (pending_t){.p = p, .n = n, .v = {v}};
  return 0;
}

/* An "interval TARGET NS" line: kept for a target that exists now (it
 * changes no baseline, so it needs no pending copy). */
static int load_interval(loader_t *L) {
  char tname[NAME_MAX_];
  unsigned long long ns;
  char extra;
  if (sscanf(L->line, "interval %63s %llu %c", tname, &ns, &extra) != 2 ||
      ns == 0)
    return load_bad(L, "line %u: expected \"interval TARGET NS\"", L->lineno);
  target_t *t = find_target(L->h, tname);
  if (t != NULL)
    t->saved_interval_ns = (uint64_t)ns;
  return 0;
}

/* A "level TARGET LEVEL RULE" line: the level last notified, restored
 * for a target that exists now once the whole file parsed. */
static int load_level(loader_t *L) {
  char tname[NAME_MAX_], lname[16], rname[32], extra;
  if (sscanf(L->line, "level %63s %15s %31s %c", tname, lname, rname, &extra) !=
      3)
    return load_bad(L, "line %u: expected \"level TARGET LEVEL RULE\"",
                    L->lineno);
  int lv = -1, rule = -1;
  for (int l = DP_HEALTH_WARNING; l <= DP_HEALTH_FAILURE; l++)
    if (strcmp(lname, dp_health_level_name((dp_health_level_t)l)) == 0)
      lv = l;
  for (int k = 0; k < DP_RULE_COUNT; k++)
    if (strcmp(rname, dp_health_rule_name((dp_health_rule_t)k)) == 0)
      rule = k;
  if (lv < 0 || rule < 0)
    return load_bad(L, "line %u: no level \"%s\" or rule \"%s\"", L->lineno,
                    lname, rname);
  target_t *t = find_target(L->h, tname);
  if (t != NULL) {
    t->restore_set = 1;
    t->restore_level = (dp_health_level_t)lv;
    t->restore_why = (dp_health_rule_t)rule;
  }
  return 0;
}

/* A "stalled TARGET PROBE" line: restored likewise. */
static int load_stalled(loader_t *L) {
  char tname[NAME_MAX_], pname[NAME_MAX_], extra;
  if (sscanf(L->line, "stalled %63s %63s %c", tname, pname, &extra) != 2)
    return load_bad(L, "line %u: expected \"stalled TARGET PROBE\"", L->lineno);
  target_t *t = find_target(L->h, tname);
  if (t != NULL)
    snprintf(t->restore_stall, sizeof(t->restore_stall), "%s", pname);
  return 0;
}

/* The probes up to the "end" line. */
static int load_body(loader_t *L) {
  while (fgets(L->line, (int)L->cap, L->f) != NULL) {
    L->lineno++;
    if (strchr(L->line, '\n') == NULL)
      return load_bad(L, "line %u: too long", L->lineno);
    if (strcmp(L->line, "end\n") == 0)
      return 0;
    if (strncmp(L->line, "sum ", 4) == 0) /* checked before (check_sum) */
      continue;
    int rc = strncmp(L->line, "interval ", 9) == 0  ? load_interval(L)
             : strncmp(L->line, "shape ", 6) == 0   ? load_shape(L)
             : strncmp(L->line, "level ", 6) == 0   ? load_level(L)
             : strncmp(L->line, "stalled ", 8) == 0 ? load_stalled(L)
                                                    : load_probe(L);
    if (rc != 0)
      return rc;
  }
  return load_bad(L, "line %u: no \"end\" line (a truncated file)", L->lineno);
}

/* All of it parsed: only now change the baselines. */
static void load_apply(loader_t *L) {
  unsigned cap_r = L->h->c.horizon_rounds;
  for (size_t i = 0; i < L->h->n; i++)
    L->h->t[i].probation = L->h->t[i].probation_fast = 0;
  for (size_t j = 0; j < L->npend; j++) {
    const pending_t *pe = &L->pend[j];
    if (pe->n > 0) /* restored: on probation (health.h) */
      for (size_t i = 0; i < L->h->n; i++)
        for (size_t k = 0; k < L->h->t[i].nprobes; k++)
          if (&L->h->t[i].probes[k] == pe->p)
            L->h->t[i].probation = DP_HEALTH_PROBATION_ROUNDS;
    unsigned skip = pe->n > cap_r ? pe->n - cap_r : 0; /* keep the newest */
    for (int s = 0; s < ST_COUNT; s++) {
      ring_t *r = &pe->p->st[s];
      r->head = r->n = 0;
      for (unsigned q = skip; q < pe->n; q++)
        dp_health_ring_add(r, cap_r, pe->v[s][q]);
    }
  }
  for (size_t j = 0; j < L->nshapes; j++) {
    const pending_t *pe = &L->shapes[j];
    unsigned skip = pe->n > cap_r ? pe->n - cap_r : 0;
    ring_t *r = &pe->p->shape;
    r->head = r->n = 0;
    for (unsigned q = skip; q < pe->n; q++)
      dp_health_ring_add(r, cap_r, pe->v[0][q]);
  }
  /* the level last notified: the target is held there, so its first
   * rounds send the OKAY through the recovery (or, unarmed, at once) --
   * or nothing while the fault lasts */
  for (size_t i = 0; i < L->h->n; i++) {
    target_t *t = &L->h->t[i];
    if (t->restore_set) {
      t->level = t->restore_level;
      t->held_why = t->restore_why;
      t->held_detail = dp_health_rule_name(t->restore_why);
      t->clear_run = 0;
    }
    snprintf(t->stall_open, sizeof(t->stall_open), "%s", t->restore_stall);
  }
}

int dp_health_state_parse(dp_health_t *h, const char *text, size_t len,
                          char *err, size_t errlen) {
  loader_t L = {.h = h, .err = err, .errlen = errlen};
  /* read only: fmemopen's "r" never writes the buffer; it wants a size,
   * and an empty text read as one NUL byte has no header either */
  static char empty[1];
  L.f = fmemopen(len ? (char *)text : empty, len ? len : 1, "r");
  int rc = L.f == NULL ? -errno : check_sum(text, len, err, errlen);
  if (rc == 0)
    rc = load_alloc(&L);
  if (rc == 0)
    rc = load_header(&L);
  if (rc == 0)
    rc = load_body(&L);
  if (rc == 0)
    load_apply(&L);
  for (size_t i = 0; i < h->n; i++) {
    target_t *t = &h->t[i];
    if (rc != 0) /* a corrupt file says nothing: not even its intervals */
      t->saved_interval_ns = 0;
    t->restore_set = 0;
    t->restore_stall[0] = '\0';
  }
  load_free(&L);
  if (L.f != NULL)
    fclose(L.f);
  return rc;
}

int dp_health_load(dp_health_t *h, const char *path, char *err, size_t errlen) {
  char dir[4096];
  const char *name;
  char *text;
  size_t len;
  int rc = split_path(path, dir, sizeof(dir), &name, err, errlen);
  if (rc == 0)
    rc = dp_statefile_read(dir, name, DP_HEALTH_STATE_MAX_BYTES, &text, &len,
                           err, errlen);
  if (rc < 0)
    return rc;
  rc = dp_health_state_parse(h, text, len, err, errlen);
  free(text);
  return rc;
}
