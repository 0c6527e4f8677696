/* jsonl.c - see jsonl.h. */
#define _GNU_SOURCE
#include "jsonl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void dp_jsonl_init(dp_jsonl_t *r, FILE *f, const char *cmd, const char *path,
                   int objects) {
  memset(r, 0, sizeof(*r));
  r->objects = objects;
  r->next_line = 1;
  r->f = f;
  r->cmd = cmd;
  r->path = path;
  r->max = DP_JSONL_LINE_MAX;
}

void dp_jsonl_free(dp_jsonl_t *r) {
  free(r->buf);
  r->buf = NULL;
}

int dp_jsonl_fail(const dp_jsonl_t *r, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "diskprobe %s: %s: line %zu: ", r->cmd, r->path, r->lineno);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return -1;
}

int dp_jsonl_next(dp_jsonl_t *r, size_t *len) {
  if (r->buf == NULL && (r->buf = malloc(r->max + 1)) == NULL) {
    fprintf(stderr, "diskprobe %s: %s: out of memory\n", r->cmd, r->path);
    return -1;
  }
  size_t n = 0, lines = 0;
  r->lineno = r->next_line;
  int c, first = 0, depth = 0, in_str = 0, esc = 0;
  /* byte by byte into the fixed buffer: input without end (/dev/zero)
   * stops at the limit, NUL bytes included */
  while ((c = getc_unlocked(r->f)) != EOF) {
    if (c == '\n') {
      lines++;
      /* an object or array still open (jq's pretty print) goes on */
      if (!(r->objects && depth > 0 && !in_str))
        break;
    }
    if (n == r->max)
      return dp_jsonl_fail(r, "longer than %zu bytes", r->max);
    r->buf[n++] = (char)c;
    if (!first && c != ' ' && c != '\t' && c != '\r' && c != '\n')
      first = c;
    if (first != '{' && first != '[')
      continue; /* brackets are counted in an object or array only */
    if (in_str) {
      if (esc)
        esc = 0;
      else if (c == '\\')
        esc = 1;
      else if (c == '"')
        in_str = 0;
    } else if (c == '"') {
      in_str = 1;
    } else if (c == '{' || c == '[') {
      depth++;
    } else if (c == '}' || c == ']') {
      depth--;
    }
  }
  if (c == EOF && ferror(r->f)) {
    fprintf(stderr, "diskprobe %s: %s: %s\n", r->cmd, r->path, strerror(errno));
    return -1;
  }
  if (c == EOF && n == 0 && lines == 0)
    return 0;
  r->next_line += lines > 0 ? lines : 1;
  if (n > 0 && r->buf[n - 1] == '\r')
    n--;
  r->buf[n] = '\0';
  *len = n;
  return 1;
}

json_t *dp_jsonl_object(const char *line, size_t len, char *why,
                        size_t whylen) {
  json_error_t e;
  json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e);
  if (o == NULL) {
    snprintf(why, whylen, "not a JSON object: %s at column %d", e.text,
             e.column);
    return NULL;
  }
  if (!json_is_object(o)) {
    json_decref(o);
    snprintf(why, whylen, "not a JSON object");
    return NULL;
  }
  return o;
}

/* A value in a message: at most 40 bytes of its JSON text. */
static void show(const json_t *v, char *buf, size_t len) {
  char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
  if (s == NULL) {
    snprintf(buf, len, "that");
    return;
  }
  snprintf(buf, len, "%.40s%s", s, strlen(s) > 40 ? "..." : "");
  free(s);
}

int dp_jsonl_number(const json_t *obj, const char *key, double lo, double hi,
                    int integral, int null_ok, double absent, double *out,
                    char *why, size_t whylen) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL) {
    *out = absent;
    return 0;
  }
  if (json_is_null(v) && null_ok) {
    *out = NAN;
    return 0;
  }
  double x = json_is_number(v) ? json_number_value(v) : NAN;
  if (x >= lo && x <= hi && (!integral || x == floor(x))) {
    *out = x;
    return 0;
  }
  char val[64];
  show(v, val, sizeof(val));
  snprintf(why, whylen, "\"%s\": want %s from %.16g to %.16g%s, not %s", key,
           integral ? "an integer" : "a number", lo, hi,
           null_ok ? " or null" : "", val);
  return -1;
}

int dp_jsonl_string(const json_t *obj, const char *key, char *out, size_t len,
                    char *why, size_t whylen) {
  json_t *v = json_object_get(obj, key);
  out[0] = '\0';
  if (v == NULL)
    return 1;
  if (!json_is_string(v)) {
    char val[64];
    show(v, val, sizeof(val));
    snprintf(why, whylen, "\"%s\": want a string, not %s", key, val);
    return -1;
  }
  size_t n = json_string_length(v);
  if (n >= len || memchr(json_string_value(v), '\0', n) != NULL) {
    snprintf(why, whylen, "\"%s\": want a string of at most %zu bytes", key,
             len - 1);
    return -1;
  }
  memcpy(out, json_string_value(v), n + 1);
  return 0;
}
