/* replay_input.c - see replay_input.h. */
#define _GNU_SOURCE
#include "replay_input.h"
#include "jsonl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NOT_WATCH                                                              \
  "not a probe result, verdict or device-view line of `diskprobe watch "       \
  "--format json`"

/* A count: an integer 0 to 2^53, or null (then 0) or absent (then NaN). */
static int count(const json_t *o, const char *key, double *out, char *why,
                 size_t whylen) {
  return dp_jsonl_number(o, key, 0, DP_REPLAY_COUNT_MAX, 1, 1, NAN, out, why,
                         whylen);
}

static int latency(const json_t *o, const char *key, double *out, char *why,
                   size_t whylen) {
  return dp_jsonl_number(o, key, 0, DP_REPLAY_LATENCY_MAX_S, 0, 1, NAN, out,
                         why, whylen);
}

/* A refusal of a key inside object `in`: "\"KEY\": ..." becomes
 * "\"IN.KEY\": ...". Returns -1. */
static int nested(const char *in, char *why, size_t whylen) {
  char inner[256];
  snprintf(inner, sizeof(inner), "%s", why[0] == '"' ? why + 1 : why);
  snprintf(why, whylen, "\"%s.%s", in, inner);
  return -1;
}

/* A verdict line's media, model and ceiling. */
static int parse_verdict(const json_t *vd, dp_replay_rec_t *r, char *why,
                         size_t whylen) {
  if (!json_is_object(vd)) {
    snprintf(why, whylen, "\"verdict\": want an object");
    return -1;
  }
  r->verdict = 1;
  if (latency(vd, "ceiling_s", &r->ceiling_s, why, whylen) < 0 ||
      dp_jsonl_string(vd, "media", r->media, sizeof(r->media), why, whylen) <
          0 ||
      dp_jsonl_string(vd, "model", r->model, sizeof(r->model), why, whylen) < 0)
    return nested("verdict", why, whylen);
  return DP_REPLAY_LINE_VERDICT;
}

/* A probe line's figures. */
static int parse_probe(const json_t *o, dp_replay_rec_t *r, char *why,
                       size_t whylen) {
  int s = dp_jsonl_string(o, "probe", r->probe, sizeof(r->probe), why, whylen);
  if (s == 0 && r->probe[0] == '\0') {
    snprintf(why, whylen, "\"probe\": empty");
    return -1;
  }
  if (s != 0) {
    if (s > 0)
      snprintf(why, whylen, NOT_WATCH " (no \"probe\")");
    return -1;
  }
  const json_t *lat = json_object_get(o, "latency_s");
  if (!json_is_object(lat)) {
    snprintf(why, whylen, "\"latency_s\": want an object");
    return -1;
  }
  double ops;
  if (dp_jsonl_number(o, "time", 0, DP_REPLAY_TIME_MAX_S, 0, 0, 0, &r->time,
                      why, whylen) < 0 ||
      dp_jsonl_number(o, "iops", 0, DP_REPLAY_IOPS_MAX, 0, 1, NAN, &r->iops,
                      why, whylen) < 0 ||
      dp_jsonl_number(o, "bytes_per_second", 0, DP_REPLAY_BYTES_PER_S_MAX, 0, 1,
                      NAN, &r->bytes_per_s, why, whylen) < 0 ||
      count(o, "ops", &ops, why, whylen) < 0)
    return -1;
  double max;
  if (latency(lat, "p50", &r->p50, why, whylen) < 0 ||
      latency(lat, "mean", &r->mean, why, whylen) < 0 ||
      latency(lat, "p99", &r->p99, why, whylen) < 0 ||
      latency(lat, "max", &max, why, whylen) < 0)
    return nested("latency_s", why, whylen);
  /* older recordings have no "ops": a probe with IOPS did I/O */
  r->ops = !isnan(ops) ? (uint64_t)ops : r->iops > 0;
  r->tail_ops = !isnan(ops)                   ? (uint64_t)ops
                : r->p99 > 0 && r->p99 >= max ? 100
                                              : 0;
  const json_t *st = json_object_get(o, "stalled");
  if (st != NULL && !json_is_boolean(st)) {
    snprintf(why, whylen, "\"stalled\": want true or false");
    return -1;
  }
  r->stalled = json_is_true(st);
  const json_t *cf = json_object_get(o, "confirm");
  if (cf != NULL && !json_is_boolean(cf)) {
    snprintf(why, whylen, "\"confirm\": want true or false");
    return -1;
  }
  r->confirm = json_is_true(cf);
  const json_t *errs = json_object_get(o, "errors");
  if (errs != NULL) {
    double io, sh;
    if (!json_is_object(errs)) {
      snprintf(why, whylen, "\"errors\": want an object");
      return -1;
    }
    if (count(errs, "io", &io, why, whylen) < 0 ||
        count(errs, "short", &sh, why, whylen) < 0)
      return nested("errors", why, whylen);
    r->errors = (uint64_t)(isnan(io) ? 0 : io) + (uint64_t)(isnan(sh) ? 0 : sh);
  }
  return DP_REPLAY_LINE_PROBE;
}

/* The index of target in names, added when new. -1 when names is full. */
static int intern(dp_replay_names_t *names, const char *target, uint32_t *out) {
  for (size_t i = 0; i < names->n; i++)
    if (strcmp(names->name[i], target) == 0) {
      *out = (uint32_t)i;
      return 0;
    }
  if (names->n == DP_REPLAY_TARGETS_MAX)
    return -1;
  snprintf(names->name[names->n], PATH_MAX, "%s", target);
  *out = (uint32_t)names->n++;
  return 0;
}

static int parse_object(const json_t *o, dp_replay_names_t *names,
                        dp_replay_rec_t *r, char *why, size_t whylen) {
  if (json_object_get(o, "device_view") != NULL)
    return DP_REPLAY_LINE_SKIP;
  char target[PATH_MAX];
  int s = dp_jsonl_string(o, "target", target, sizeof(target), why, whylen);
  if (s == 0 && target[0] == '\0') {
    snprintf(why, whylen, "\"target\": empty");
    return -1;
  }
  if (s != 0) {
    if (s > 0)
      snprintf(why, whylen, NOT_WATCH " (no \"target\")");
    return -1;
  }
  if (intern(names, target, &r->target) < 0) {
    snprintf(why, whylen, "more than %d targets", DP_REPLAY_TARGETS_MAX);
    return -1;
  }
  double round;
  if (dp_jsonl_number(o, "round", 0, DP_REPLAY_COUNT_MAX, 1, 0, NAN, &round,
                      why, whylen) < 0)
    return -1;
  if (isnan(round)) {
    snprintf(why, whylen, NOT_WATCH " (no \"round\")");
    return -1;
  }
  r->round = (uint64_t)round;
  const json_t *vd = json_object_get(o, "verdict");
  return vd != NULL ? parse_verdict(vd, r, why, whylen)
                    : parse_probe(o, r, why, whylen);
}

int dp_replay_parse_line(const char *line, size_t len, dp_replay_names_t *names,
                         dp_replay_rec_t *r, char *why, size_t whylen) {
  memset(r, 0, sizeof(*r));
  r->iops = r->bytes_per_s = r->p50 = r->mean = r->ceiling_s = NAN;
  size_t i = 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t'))
    i++;
  if (i == len || line[i] == '#')
    return DP_REPLAY_LINE_SKIP;
  json_t *o = dp_jsonl_object(line, len, why, whylen);
  if (o == NULL)
    return -1;
  int kind = parse_object(o, names, r, why, whylen);
  json_decref(o);
  return kind;
}

int dp_replay_read(FILE *f, const char *cmd, const char *path, size_t max,
                   dp_replay_names_t *names, dp_replay_rec_t **recs, size_t *n,
                   size_t *cap) {
  dp_jsonl_t rd;
  dp_jsonl_init(&rd, f, cmd, path, 1);
  rd.max = max;
  size_t len;
  int rc = 0, got = 0;
  while (rc == 0 && (got = dp_jsonl_next(&rd, &len)) > 0) {
    if (*n == *cap) {
      size_t nc = *cap ? *cap * 2 : 64;
      dp_replay_rec_t *nr = realloc(*recs, nc * sizeof(*nr));
      if (nr == NULL) {
        rc = dp_jsonl_fail(&rd, "out of memory");
        break;
      }
      *recs = nr;
      *cap = nc;
    }
    char why[256];
    int kind = dp_replay_parse_line(rd.buf, len, names, &(*recs)[*n], why,
                                    sizeof(why));
    if (kind < 0)
      rc = dp_jsonl_fail(&rd, "%s", why);
    else if (kind != DP_REPLAY_LINE_SKIP)
      (*n)++;
  }
  if (got < 0)
    rc = -1;
  dp_jsonl_free(&rd);
  return rc;
}
