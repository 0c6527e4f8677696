/*
 * json_out.c - the JSON the command writes, built as jansson values and
 * dumped by jansson (see cli.h): strings escaped by the library that
 * reads them back, numbers rounded to the figures each key has always
 * had, NaN and infinities as null, one place for the dump flags.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Set when a value or a member could not be made (out of memory): the
 * object is then incomplete and is not printed. One flag per thread: an
 * object is built and printed by one. */
static _Thread_local int json_failed;

/* The length of the valid UTF-8 sequence at p (at most n bytes), 0 when
 * none starts there (RFC 3629: no overlong form, no surrogate, nothing
 * past U+10FFFF). */
static size_t utf8_len(const unsigned char *p, size_t n) {
  size_t len;
  uint32_t cp;
  if (p[0] < 0x80)
    return 1;
  if (p[0] >= 0xc2 && p[0] <= 0xdf) {
    len = 2;
    cp = p[0] & 0x1fu;
  } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
    len = 3;
    cp = p[0] & 0x0fu;
  } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
    len = 4;
    cp = p[0] & 0x07u;
  } else {
    return 0;
  }
  if (len > n)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (p[i] & 0x3fu);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
    return 0;
  return len;
}

static json_t *made(json_t *v) {
  if (v == NULL)
    json_failed = 1;
  return v;
}

json_t *dp_cli_json_str(const char *s) {
  if (s == NULL)
    return made(json_null());
  json_t *v = json_string(s);
  if (v != NULL)
    return v;
  /* not UTF-8 (a path or a name from sysfs can hold any byte): each byte
   * that starts no valid sequence becomes U+FFFD */
  size_t n = strlen(s), k = 0;
  char *buf = malloc(3 * n + 1);
  if (buf == NULL)
    return made(NULL);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t len = utf8_len(p, n - (size_t)(p - (const unsigned char *)s));
    if (len == 0) {
      memcpy(buf + k, "\xef\xbf\xbd", 3);
      k += 3;
      p++;
    } else {
      memcpy(buf + k, p, len);
      k += len;
      p += len;
    }
  }
  v = json_stringn(buf, k);
  free(buf);
  return made(v);
}

json_t *dp_cli_json_fixed(double v, int decimals) {
  if (!isfinite(v))
    return made(json_null());
  char buf[512]; /* %.9f of DBL_MAX: 320 bytes */
  snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return made(json_real(strtod(buf, NULL)));
}

json_t *dp_cli_json_sig(double v, int digits) {
  if (!isfinite(v))
    return made(json_null());
  char buf[64];
  snprintf(buf, sizeof(buf), "%.*g", digits, v);
  /* "%g" wrote an integral figure below 10^digits as an integer ("3",
   * not "3.0"): a JSON integer, as readers (python's json) always got */
  if (strspn(buf, "-0123456789") == strlen(buf))
    return made(json_integer(strtoll(buf, NULL, 10)));
  return made(json_real(strtod(buf, NULL)));
}

json_t *dp_cli_json_num(double v) { return dp_cli_json_sig(v, 6); }

json_t *dp_cli_json_uint(uint64_t v) {
  return made(json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v));
}

json_t *dp_cli_json_int(int64_t v) { return made(json_integer(v)); }

json_t *dp_cli_json_bool(int v) { return made(json_boolean(v)); }

json_t *dp_cli_json_object(void) { return made(json_object()); }

json_t *dp_cli_json_array(void) { return made(json_array()); }

void dp_cli_json_set(json_t *o, const char *key, json_t *v) {
  if (json_object_set_new(o, key, v) != 0)
    json_failed = 1;
}

void dp_cli_json_append(json_t *a, json_t *v) {
  if (json_array_append_new(a, v) != 0)
    json_failed = 1;
}

/* Writes line and a newline to f, and frees it. 0, or -1 after one line
 * on stderr when it or a value in it could not be made (out of memory). */
static int put_line(FILE *f, char *line) {
  int ok = line != NULL && !json_failed;
  json_failed = 0;
  if (ok)
    fprintf(f, "%s\n", line);
  else
    fprintf(stderr, "diskprobe: cannot write JSON: out of memory\n");
  free(line);
  return ok ? 0 : -1;
}

int dp_cli_json_print(FILE *f, json_t *o, size_t layout) {
  char *s = json_dumps(o, layout | DP_CLI_JSON_FLAGS);
  json_decref(o);
  return put_line(f, s);
}

int dp_cli_json_print_timed(FILE *f, const char *key, double t, int decimals,
                            json_t *rest) {
  json_t *head = dp_cli_json_object();
  json_t *tv = dp_cli_json_fixed(t, decimals);
  /* the significant digits of the rounded time: 16 for a Unix time in
   * microseconds, where the others' 15 would drop the last */
  int prec = 15;
  double r = json_is_real(tv) ? fabs(json_real_value(tv)) : 0;
  if (r >= 1) {
    int need = (int)floor(log10(r)) + 1 + decimals;
    prec = need > 17 ? 17 : need > 15 ? need : 15;
  }
  dp_cli_json_set(head, key, tv);
  /* both without their braces (JSON_EMBED), joined into one object */
  char *h =
      json_dumps(head, JSON_EMBED | DP_CLI_JSON_LINE | JSON_PRESERVE_ORDER |
                           JSON_REAL_PRECISION(prec));
  char *s = json_dumps(rest, JSON_EMBED | DP_CLI_JSON_LINE | DP_CLI_JSON_FLAGS);
  json_decref(head);
  json_decref(rest);
  char *line = NULL;
  if (h != NULL && s != NULL &&
      asprintf(&line, "{%s%s%s}", h, *s ? "," : "", s) < 0)
    line = NULL;
  free(h);
  free(s);
  return put_line(f, line);
}

void dp_cli_json_result(json_t *o, const dp_result_t *r) {
  dp_cli_json_set(o, "pattern", dp_cli_json_str(dp_pattern_name(r->pattern)));
  dp_cli_json_set(o, "block_size", dp_cli_json_uint(r->block_size));
  dp_cli_json_set(o, "queue_depth", dp_cli_json_uint(r->queue_depth));
  dp_cli_json_set(o, "ops", dp_cli_json_uint(r->ops));
  dp_cli_json_set(o, "bytes", dp_cli_json_uint(r->bytes));
  dp_cli_json_set(o, "elapsed_s", dp_cli_json_fixed(r->elapsed_s, 9));
  dp_cli_json_set(o, "iops", dp_cli_json_fixed(r->iops, 3));
  dp_cli_json_set(o, "bytes_per_second", dp_cli_json_fixed(r->bytes_per_s, 1));
  dp_cli_json_set(o, "window_ops", dp_cli_json_uint(r->window_ops));
  dp_cli_json_set(o, "throttled", dp_cli_json_bool(r->throttled));
  dp_cli_json_set(o, "stepped", dp_cli_json_bool(r->stepped));
  dp_cli_json_set(o, "burst_ops", dp_cli_json_fixed(r->burst_ops, 1));
  json_t *lat = dp_cli_json_object();
  dp_cli_json_set(lat, "min", dp_cli_json_fixed(r->lat_min_s, 9));
  dp_cli_json_set(lat, "mean", dp_cli_json_fixed(r->lat_mean_s, 9));
  dp_cli_json_set(lat, "p50", dp_cli_json_fixed(r->lat_p50_s, 9));
  dp_cli_json_set(lat, "p90", dp_cli_json_fixed(r->lat_p90_s, 9));
  dp_cli_json_set(lat, "p99", dp_cli_json_fixed(r->lat_p99_s, 9));
  dp_cli_json_set(lat, "p99.9", dp_cli_json_fixed(r->lat_p999_s, 9));
  dp_cli_json_set(lat, "max", dp_cli_json_fixed(r->lat_max_s, 9));
  dp_cli_json_set(o, "latency_s", lat);
  dp_cli_json_set(o, "achieved_queue_depth",
                  dp_cli_json_fixed(r->achieved_qd, 4));
  json_t *err = dp_cli_json_object();
  dp_cli_json_set(err, "io", dp_cli_json_uint(r->err_io));
  dp_cli_json_set(err, "short", dp_cli_json_uint(r->err_short));
  dp_cli_json_set(err, "timeout", dp_cli_json_uint(r->err_timeout));
  dp_cli_json_set(o, "errors", err);
  dp_cli_json_set(o, "stalled", dp_cli_json_bool(r->stalled));
  json_t *cpu = dp_cli_json_object();
  dp_cli_json_set(cpu, "user", dp_cli_json_fixed(r->cpu_user_s, 6));
  dp_cli_json_set(cpu, "system", dp_cli_json_fixed(r->cpu_sys_s, 6));
  dp_cli_json_set(o, "cpu_s", cpu);
  dp_cli_json_set(o, "wall_s", dp_cli_json_fixed(r->wall_s, 6));
}

void dp_cli_json_identity(json_t *o, const dp_disk_identity_t *id,
                          const char *class_name) {
  dp_cli_json_set(o, "class", dp_cli_json_str(class_name));
  dp_cli_json_set(o, "media", dp_cli_json_str(dp_media_name(id->media)));
  dp_cli_json_set(o, "model", dp_cli_json_str(id->model));
  dp_cli_json_set(o, "firmware", dp_cli_json_str(id->firmware));
  dp_cli_json_set(o, "serial", dp_cli_json_str(id->serial));
  dp_cli_json_set(o, "wwn", dp_cli_json_str(id->wwn));
  dp_cli_json_set(o, "capacity_bytes", dp_cli_json_uint(id->capacity_bytes));
  dp_cli_json_set(o, "logical_block_bytes",
                  dp_cli_json_uint(id->logical_block_bytes));
  dp_cli_json_set(o, "physical_block_bytes",
                  dp_cli_json_uint(id->physical_block_bytes));
  if (id->nmembers == 0)
    return;
  json_t *m = dp_cli_json_array();
  for (size_t i = 0; i < id->nmembers && i < DP_BLOCKDEV_MEMBERS_MAX; i++)
    dp_cli_json_append(m, dp_cli_json_str(id->members[i]));
  dp_cli_json_set(o, "members", m);
}
