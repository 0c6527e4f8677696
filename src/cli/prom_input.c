/* prom_input.c - see prom_input.h. */
#define _GNU_SOURCE
#include "prom_input.h"
#include "build-config.h"
#include "cli.h"
#include "units.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEV_PREFIX "dev-"

/* ---- names and messages ------------------------------------------------- */

const char *dp_promin_url_shown(const char *url, char *out, size_t len) {
  const char *scheme = strstr(url, "://");
  const char *host = scheme ? scheme + 3 : url;
  const char *at = strchr(host, '@'), *slash = strchr(host, '/');
  if (at != NULL && (slash == NULL || at < slash))
    snprintf(out, len, "%.*s%s", (int)(host - url), url, at + 1);
  else
    snprintf(out, len, "%s", url);
  return out;
}

/* "diskprobe CMD: URL: WHAT" on stderr, escaped; returns 2. */
static int fail(const char *cmd, const dp_promin_conf_t *c, const char *what) {
  char u[1024];
  fprintf(stderr, "diskprobe %s: ", cmd);
  dp_cli_put_visible(stderr, dp_promin_url_shown(c->url, u, sizeof(u)));
  fputs(": ", stderr);
  dp_cli_put_visible(stderr, what);
  fputc('\n', stderr);
  return 2;
}

int dp_promin_quote(const char *s, char *out, size_t len) {
  size_t o = 0;
  char e[8];
  if (len < 1)
    return -1;
  out[o++] = '"';
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    const char *esc = e;
    switch (*p) {
    case '\\':
      esc = "\\\\";
      break;
    case '"':
      esc = "\\\"";
      break;
    case '\n':
      esc = "\\n";
      break;
    case '\t':
      esc = "\\t";
      break;
    case '\r':
      esc = "\\r";
      break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        snprintf(e, sizeof(e), "\\x%02x", *p);
      else
        snprintf(e, sizeof(e), "%c", *p);
    }
    size_t l = strlen(esc);
    if (o + l + 2 > len)
      return -1;
    memcpy(out + o, esc, l);
    o += l;
  }
  if (o + 2 > len)
    return -1;
  out[o++] = '"';
  out[o] = '\0';
  return 0;
}

/* ---- one query ---------------------------------------------------------- */

typedef struct {
  char *p;
  size_t n, max;
  int over; /* the answer passed max */
} body_t;

static size_t body_write(char *data, size_t size, size_t nmemb, void *user) {
  body_t *b = user;
  size_t n = size * nmemb;
  if (b->n + n > b->max) {
    b->over = 1;
    return 0;
  }
  char *p = realloc(b->p, b->n + n + 1);
  if (p == NULL)
    return 0;
  memcpy(p + b->n, data, n);
  b->p = p;
  b->n += n;
  b->p[b->n] = '\0';
  return n;
}

static CURL *handle(void) {
  static CURL *h;
  static int init;
  if (!init) {
    init = 1;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK)
      h = curl_easy_init();
  }
  return h;
}

/* Prometheus's error of an answer: "TYPE: ERROR" into why; 1 when it has
 * one. */
static int prom_error(json_t *doc, char *why, size_t len) {
  const char *t = json_string_value(json_object_get(doc, "errorType"));
  const char *e = json_string_value(json_object_get(doc, "error"));
  if (e == NULL)
    return 0;
  snprintf(why, len, "Prometheus error: %s%s%s", t ? t : "", t ? ": " : "", e);
  return 1;
}

/* The start of a body that is not what was asked for: its first line, at
 * most 80 bytes. */
static void body_start(const body_t *b, char *out, size_t len) {
  size_t l = 0;
  while (b->p && l < b->n && l < 80 && b->p[l] != '\n' && b->p[l] != '\r')
    l++;
  if (l == 0)
    snprintf(out, len, "(an empty body)");
  else
    snprintf(out, len, "\"%.*s%s\"", (int)l, b->p, l < b->n ? "..." : "");
}

/* An answer over the limit, before the window was split small enough. */
#define OVER_LIMIT 3

/* The shortest window an answer over the limit is split down to. */
#define SPLIT_MIN_S 60

/* GET URL/api/v1/query of promql at `at`; *result the answer's
 * data.result (a reference of the caller's). 0, 2 after one line, or
 * OVER_LIMIT (no line) when the answer passed the limit and `quiet`. */
static int query(const char *cmd, const dp_promin_conf_t *c, const char *promql,
                 time_t at, int quiet, json_t **result) {
  CURL *h = handle();
  if (h == NULL)
    return fail(cmd, c, "libcurl could not be initialised");
  char *q = curl_easy_escape(h, promql, 0);
  size_t ul = strlen(c->url);
  while (ul > 0 && c->url[ul - 1] == '/')
    ul--;
  char *url = NULL;
  if (q == NULL || asprintf(&url, "%.*s/api/v1/query?query=%s&time=%lld",
                            (int)ul, c->url, q, (long long)at) < 0) {
    curl_free(q);
    return fail(cmd, c, "out of memory");
  }
  curl_free(q);
  body_t b = {.max = c->max_bytes};
  char err[CURL_ERROR_SIZE] = "", why[512];
  curl_easy_reset(h);
  curl_easy_setopt(h, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_bytes);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "diskprobe/" PACKAGE_VERSION);
  CURLcode cc = curl_easy_perform(h);
  free(url);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  int rc = 0;
  json_t *doc = NULL;
  if ((b.over || cc == CURLE_FILESIZE_EXCEEDED) && quiet) {
    rc = OVER_LIMIT;
  } else if (b.over || cc == CURLE_FILESIZE_EXCEEDED) {
    char lim[32];
    dp_format_size(c->max_bytes, lim, sizeof(lim));
    snprintf(why, sizeof(why),
             "answer larger than %s even for %d s of one figure: refused "
             "(--prometheus-limit)",
             lim, SPLIT_MIN_S);
    rc = fail(cmd, c, why);
  } else if (cc != CURLE_OK) {
    rc = fail(cmd, c, err[0] ? err : curl_easy_strerror(cc));
  } else {
    json_error_t je;
    doc = json_loadb(b.p ? b.p : "", b.n, 0, &je);
    char start[128];
    body_start(&b, start, sizeof(start));
    if (status < 200 || status > 299) {
      char pe[400];
      if (doc != NULL && prom_error(doc, pe, sizeof(pe)))
        snprintf(why, sizeof(why), "HTTP status %ld: %s", status, pe);
      else
        snprintf(why, sizeof(why), "HTTP status %ld: %s", status, start);
      rc = fail(cmd, c, why);
    } else if (!json_is_object(doc)) {
      snprintf(why, sizeof(why), "answer is not JSON (%s): %s",
               doc ? "not an object" : je.text, start);
      rc = fail(cmd, c, why);
    } else if (prom_error(doc, why, sizeof(why))) {
      rc = fail(cmd, c, why);
    } else {
      const char *st = json_string_value(json_object_get(doc, "status"));
      json_t *data = json_object_get(doc, "data");
      json_t *res = json_object_get(data, "result");
      const char *type = json_string_value(json_object_get(data, "resultType"));
      if (st == NULL || strcmp(st, "success") != 0 || !json_is_array(res)) {
        snprintf(why, sizeof(why),
                 "answer is not a Prometheus API answer (no \"status\": "
                 "\"success\" with data.result): %s",
                 start);
        rc = fail(cmd, c, why);
      } else if (type == NULL || strcmp(type, "matrix") != 0) {
        snprintf(why, sizeof(why), "answer of type \"%s\", not a matrix",
                 type ? type : "?");
        rc = fail(cmd, c, why);
      } else {
        *result = json_incref(res);
      }
    }
  }
  json_decref(doc);
  free(b.p);
  return rc;
}

/* ---- samples ------------------------------------------------------------ */

typedef struct {
  double t, v;
} tv_t;

/* One series of an answer: which query (kind), its labels, its samples. */
typedef struct {
  char *host, *target, *type;
  int kind;
  tv_t *p;
  size_t n;
} pseries_t;

typedef struct {
  pseries_t *s;
  size_t n, cap;
} plist_t;

static void plist_free(plist_t *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->s[i].host);
    free(l->s[i].target);
    free(l->s[i].type);
    free(l->s[i].p);
  }
  free(l->s);
  memset(l, 0, sizeof(*l));
}

static const char *label(json_t *metric, const char *name) {
  const char *v = json_string_value(json_object_get(metric, name));
  return v ? v : "";
}

/* Adds the answer's series to l as kind. 0, or 2 after one line. */
static int collect(const char *cmd, const dp_promin_conf_t *c, json_t *res,
                   int kind, plist_t *l) {
  size_t i;
  json_t *x;
  json_array_foreach(res, i, x) {
    json_t *m = json_object_get(x, "metric"),
           *vals = json_object_get(x, "values");
    if (!json_is_array(vals) || json_array_size(vals) == 0)
      continue;
    if (l->n == l->cap) {
      size_t nc = l->cap ? 2 * l->cap : 64;
      pseries_t *p = realloc(l->s, nc * sizeof(*p));
      if (p == NULL)
        return fail(cmd, c, "out of memory");
      l->s = p;
      l->cap = nc;
    }
    pseries_t *s = &l->s[l->n];
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    /* scraped without honor_labels, the host is in exported_instance and
     * instance is the collector's address, the same for every host */
    const char *host = label(m, "exported_instance");
    s->host = strdup(host[0] ? host : label(m, "instance"));
    s->target = strdup(label(m, "diskprobe"));
    s->type = strdup(label(m, "type"));
    s->p = malloc(json_array_size(vals) * sizeof(*s->p));
    l->n++;
    if (!s->host || !s->target || !s->type || !s->p)
      return fail(cmd, c, "out of memory");
    size_t j;
    json_t *pt;
    json_array_foreach(vals, j, pt) {
      json_t *t = json_array_get(pt, 0);
      const char *v = json_string_value(json_array_get(pt, 1));
      if (!json_is_number(t) || v == NULL)
        continue;
      s->p[s->n].t = json_number_value(t);
      s->p[s->n++].v = strtod(v, NULL);
    }
  }
  return 0;
}

/* NAME{type="TYPE",SEL}[Ns] at end (N = end - start) into l as kind; an
 * answer over the limit is asked for again as two halves of the window,
 * down to SPLIT_MIN_S (the halves share their edge's samples: merged()
 * keeps one). 0 or 2. */
static int fetch(const char *cmd, const dp_promin_conf_t *c, const char *name,
                 const char *type, const char *sel, time_t start, time_t end,
                 int kind, plist_t *l) {
  char qt[1024], *promql = NULL;
  if (type != NULL && dp_promin_quote(type, qt, sizeof(qt)) != 0)
    return fail(cmd, c, "a type too long for a query");
  long long range = (long long)(end - start);
  if (asprintf(&promql, "%s{%s%s%s%s}[%llds]", name, type ? "type=" : "",
               type ? qt : "", type && sel[0] ? "," : "", sel,
               range > 0 ? range : 1) < 0)
    return fail(cmd, c, "out of memory");
  json_t *res = NULL;
  int split = end - start >= 2 * SPLIT_MIN_S;
  int rc = query(cmd, c, promql, end, split, &res);
  free(promql);
  if (rc == 0)
    rc = collect(cmd, c, res, kind, l);
  json_decref(res);
  if (rc == OVER_LIMIT) {
    time_t mid = start + (end - start) / 2;
    rc = fetch(cmd, c, name, type, sel, start, mid, kind, l);
    if (rc == 0)
      rc = fetch(cmd, c, name, type, sel, mid, end, kind, l);
  }
  return rc;
}

static int by_t(const void *a, const void *b) {
  double x = ((const tv_t *)a)->t, y = ((const tv_t *)b)->t;
  return (x > y) - (x < y);
}

/* Hosts, then targets, in the order an RRD tree's are listed (versionsort:
 * h9 before h10), so that a side pooling several has their rounds in the
 * same order either way. */
static int by_series(const void *a, const void *b) {
  const pseries_t *x = a, *y = b;
  int d = strverscmp(x->host, y->host);
  if (d == 0)
    d = strverscmp(x->target, y->target);
  return d != 0 ? d : (x->kind > y->kind) - (x->kind < y->kind);
}

/* The samples of l->s[from, to) (one target's one kind, maybe from several
 * sources) merged in time order, one per instant, into *out (*n; free). 0
 * or -1. */
static int merged(const plist_t *l, size_t from, size_t to, tv_t **out,
                  size_t *n) {
  size_t total = 0;
  for (size_t i = from; i < to; i++)
    total += l->s[i].n;
  tv_t *p = malloc((total + 1) * sizeof(*p));
  if (p == NULL)
    return -1;
  size_t k = 0;
  for (size_t i = from; i < to; i++) {
    memcpy(p + k, l->s[i].p, l->s[i].n * sizeof(*p));
    k += l->s[i].n;
  }
  qsort(p, k, sizeof(*p), by_t);
  size_t m = 0;
  for (size_t i = 0; i < k; i++)
    if (m == 0 || p[i].t != p[m - 1].t)
      p[m++] = p[i];
  *out = p;
  *n = m;
  return 0;
}

/* The type of the newest sample among l->s[from, to) into out; *when its
 * time (-1: none). */
static void newest_type(const plist_t *l, size_t from, size_t to, char *out,
                        size_t len, double *when) {
  *when = -1;
  out[0] = '\0';
  for (size_t i = from; i < to; i++)
    for (size_t j = 0; j < l->s[i].n; j++)
      if (l->s[i].p[j].t > *when) {
        *when = l->s[i].p[j].t;
        snprintf(out, len, "%s", l->s[i].type);
      }
}

/* ---- the probe series --------------------------------------------------- */

enum { K_TD = DP_RRDIN_NSERIES, K_DI }; /* target_device, disk_info */

static const struct {
  const char *name, *type;
} probe_series[DP_RRDIN_NSERIES] = {
    [DP_RRDIN_QD1_P50_S] = {"collectd_diskprobe_probe_latency_p50",
                            "randread-qd1"},
    [DP_RRDIN_QD1_MEAN_S] = {"collectd_diskprobe_probe_latency_mean",
                             "randread-qd1"},
    [DP_RRDIN_QD1_IOPS] = {"collectd_diskprobe_operations_per_second",
                           "randread-qd1"},
    [DP_RRDIN_QD32_IOPS] = {"collectd_diskprobe_operations_per_second",
                            "randread-qd32"},
    [DP_RRDIN_SEQ_BPS] = {"collectd_diskprobe_bytes_per_second", "seqread"},
    [DP_RRDIN_QD32_P50_S] = {"collectd_diskprobe_probe_latency_p50",
                             "randread-qd32"},
    [DP_RRDIN_QD32_MEAN_S] = {"collectd_diskprobe_probe_latency_mean",
                              "randread-qd32"},
};

void dp_promin_fleet_free(dp_promin_fleet_t *f) {
  for (size_t i = 0; f->s != NULL && i < f->n; i++)
    for (int k = 0; k < DP_RRDIN_NSERIES; k++)
      free(f->s[i][k].v);
  free(f->t);
  free(f->s);
  free(f->newest);
  memset(f, 0, sizeof(*f));
}

/* The selector of host's (target's) series, quoted, into sel. 0 or 2. */
static int selector(const char *cmd, const dp_promin_conf_t *c,
                    const char *host, const char *target, char *sel,
                    size_t len) {
  char qh[1100], qt[1100];
  if ((host && dp_promin_quote(host, qh, sizeof(qh)) != 0) ||
      (target && dp_promin_quote(target, qt, sizeof(qt)) != 0))
    return fail(cmd, c, "a host or target name too long");
  snprintf(sel, len, "%s%s%s%s%s", host ? "instance=" : "", host ? qh : "",
           host ? "," : "", target ? "diskprobe=" : "diskprobe!~",
           target ? qt : "\"" DEV_PREFIX ".*\"");
  return 0;
}

/* Makes the targets of l (sorted) into f, with the series asked for. 0 or
 * 2. */
static int make_targets(const char *cmd, const dp_promin_conf_t *c,
                        const plist_t *l, dp_promin_fleet_t *f) {
  size_t cap = 0;
  for (size_t i = 0; i < l->n;) {
    size_t j = i;
    while (j < l->n && strcmp(l->s[j].host, l->s[i].host) == 0 &&
           strcmp(l->s[j].target, l->s[i].target) == 0)
      j++;
    const pseries_t *s = &l->s[i];
    size_t from = i;
    i = j;
    if (s->kind == K_DI || s->target[0] == '\0' ||
        strncmp(s->target, DEV_PREFIX, strlen(DEV_PREFIX)) == 0)
      continue;
    if (f->n == cap) {
      cap = cap ? 2 * cap : 32;
      dp_rrdin_target_t *t = realloc(f->t, cap * sizeof(*t));
      if (t != NULL)
        f->t = t;
      dp_rrdin_values_t(*v)[DP_RRDIN_NSERIES] =
          t ? realloc(f->s, cap * sizeof(*v)) : NULL;
      if (v != NULL)
        f->s = v;
      time_t *nw = v ? realloc(f->newest, cap * sizeof(*nw)) : NULL;
      if (nw == NULL)
        return fail(cmd, c, "out of memory");
      f->newest = nw;
    }
    dp_rrdin_target_t *t = &f->t[f->n];
    memset(t, 0, sizeof(*t));
    memset(f->s[f->n], 0, sizeof(f->s[f->n]));
    f->newest[f->n] = 0;
    f->n++;
    snprintf(t->host, sizeof(t->host), "%s", s->host);
    snprintf(t->target, sizeof(t->target), "%s", s->target);
    double td;
    for (size_t a = from; a < j;) {
      size_t b = a;
      while (b < j && l->s[b].kind == l->s[a].kind)
        b++;
      int k = l->s[a].kind;
      if (k == K_TD) {
        newest_type(l, a, b, t->disk, sizeof(t->disk), &td);
      } else {
        tv_t *p;
        size_t n;
        if (merged(l, a, b, &p, &n) != 0)
          return fail(cmd, c, "out of memory");
        for (size_t m = 0; m < n; m++) {
          /* 0: nothing completed in the probe (as over RRD) */
          if (isfinite(p[m].v) && p[m].v > 0 &&
              dp_rrdin_push(&f->s[f->n - 1][k], p[m].v) != 0) {
            free(p);
            return fail(cmd, c, "out of memory");
          }
        }
        if (n > 0 && (time_t)p[n - 1].t > f->newest[f->n - 1])
          f->newest[f->n - 1] = (time_t)p[n - 1].t;
        free(p);
      }
      a = b;
    }
  }
  return 0;
}

/* Each target's class: the newest disk_info of its disk in l (sorted). */
static void set_classes(const plist_t *l, dp_promin_fleet_t *f) {
  for (size_t i = 0; i < f->n; i++) {
    dp_rrdin_target_t *t = &f->t[i];
    if (t->disk[0] != '\0') {
      char dev[sizeof(DEV_PREFIX) + sizeof(t->disk)];
      snprintf(dev, sizeof(dev), DEV_PREFIX "%s", t->disk);
      pseries_t key = {.host = t->host, .target = dev, .kind = K_DI};
      pseries_t *hit = bsearch(&key, l->s, l->n, sizeof(*l->s), by_series);
      if (hit != NULL) {
        size_t a = (size_t)(hit - l->s), b = a;
        while (a > 0 && by_series(&l->s[a - 1], &key) == 0)
          a--;
        while (b < l->n && by_series(&l->s[b], &key) == 0)
          b++;
        double when;
        newest_type(l, a, b, t->cls, sizeof(t->cls), &when);
      }
    }
    if (t->cls[0] == '\0')
      snprintf(t->cls, sizeof(t->cls), "unknown");
  }
}

int dp_promin_read(const char *cmd, const dp_promin_conf_t *c, const char *host,
                   const char *target, unsigned series_mask, time_t start,
                   time_t end, dp_promin_fleet_t *f) {
  memset(f, 0, sizeof(*f));
  plist_t l = {0};
  char sel[2400], dsel[1200];
  int rc = selector(cmd, c, host, target, sel, sizeof(sel));
  for (int k = 0; rc == 0 && k < DP_RRDIN_NSERIES; k++)
    if (series_mask & (1u << k))
      rc = fetch(cmd, c, probe_series[k].name, probe_series[k].type, sel, start,
                 end, k, &l);
  if (rc == 0)
    rc = fetch(cmd, c, "collectd_diskprobe_target_device", NULL, sel, start,
               end, K_TD, &l);
  if (rc == 0)
    rc = selector(cmd, c, host, NULL, dsel, sizeof(dsel));
  if (rc == 0) { /* the disks' series: diskprobe="dev-DISK" */
    char *neg = strstr(dsel, "diskprobe!~");
    snprintf(neg, sizeof(dsel) - (size_t)(neg - dsel),
             "diskprobe=~\"" DEV_PREFIX ".+\"");
    rc = fetch(cmd, c, "collectd_diskprobe_disk_info", NULL, dsel, start, end,
               K_DI, &l);
  }
  if (rc == 0) {
    qsort(l.s, l.n, sizeof(*l.s), by_series);
    rc = make_targets(cmd, c, &l, f);
  }
  if (rc == 0)
    set_classes(&l, f);
  plist_free(&l);
  if (rc != 0)
    dp_promin_fleet_free(f);
  return rc;
}

/* ---- the device view ---------------------------------------------------- */

/* One sample of one field, for the merge by instant. */
typedef struct {
  double t, v;
  int field;
} fv_t;

static int by_fv(const void *a, const void *b) {
  const fv_t *x = a, *y = b;
  if (x->t != y->t)
    return (x->t > y->t) - (x->t < y->t);
  return (x->field > y->field) - (x->field < y->field);
}

/* One disk's fields (l->s[from, to), kinds = fields) into h. 0 or 2. */
static int devview_disk(const char *cmd, const dp_promin_conf_t *c,
                        const plist_t *l, size_t from, size_t to,
                        dp_fsinput_host_t *h) {
  size_t total = 0;
  for (size_t i = from; i < to; i++)
    total += l->s[i].n;
  fv_t *p = malloc((total + 1) * sizeof(*p));
  if (p == NULL)
    return fail(cmd, c, "out of memory");
  size_t k = 0;
  for (size_t i = from; i < to; i++)
    for (size_t j = 0; j < l->s[i].n; j++)
      p[k++] = (fv_t){l->s[i].p[j].t, l->s[i].p[j].v, l->s[i].kind};
  qsort(p, k, sizeof(*p), by_fv);
  const char *disk = l->s[from].target + strlen(DEV_PREFIX);
  int rc = 0;
  for (size_t i = 0; i < k && rc == 0;) {
    double v[DP_FSINPUT_NFIELDS];
    for (int f = 0; f < DP_FSINPUT_NFIELDS; f++)
      v[f] = NAN;
    size_t j = i;
    for (; j < k && p[j].t == p[i].t; j++)
      v[p[j].field] = p[j].v;
    int e = dp_fsinput_add_sample(h, disk, p[i].t, v);
    if (e != 0)
      rc = fail(cmd, c, e == -E2BIG ? "too many disks" : "out of memory");
    i = j;
  }
  free(p);
  return rc;
}

static int by_disk(const void *a, const void *b) {
  const pseries_t *x = a, *y = b;
  int d = strverscmp(x->host, y->host);
  return d != 0 ? d : strverscmp(x->target, y->target);
}

int dp_promin_devview(const char *cmd, const dp_promin_conf_t *c, time_t start,
                      time_t end, dp_fsinput_host_t **hosts, size_t *n) {
  *hosts = NULL;
  *n = 0;
  plist_t l = {0};
  int rc = 0;
  for (int f = 0; rc == 0 && f < DP_FSINPUT_NFIELDS; f++) {
    /* "bytes_per_second-read" -> collectd_diskprobe_bytes_per_second,
     * type="read" */
    const char *s = dp_fsinput_series[f], *dash = strchr(s, '-');
    char name[128];
    snprintf(name, sizeof(name), "collectd_diskprobe_%.*s", (int)(dash - s), s);
    rc = fetch(cmd, c, name, dash + 1, "diskprobe=~\"" DEV_PREFIX ".+\"", start,
               end, f, &l);
  }
  if (rc == 0)
    qsort(l.s, l.n, sizeof(*l.s), by_disk);
  size_t cap = 0;
  for (size_t i = 0; rc == 0 && i < l.n;) {
    size_t j = i;
    while (j < l.n && by_disk(&l.s[j], &l.s[i]) == 0)
      j++;
    if (!dp_fsinput_whole_disk(l.s[i].target + strlen(DEV_PREFIX)) ||
        l.s[i].host[0] == '\0') {
      i = j;
      continue;
    }
    if (*n == 0 || strcmp((*hosts)[*n - 1].name, l.s[i].host) != 0) {
      if (*n == cap) {
        cap = cap ? 2 * cap : 16;
        dp_fsinput_host_t *p = realloc(*hosts, cap * sizeof(*p));
        if (p == NULL) {
          rc = fail(cmd, c, "out of memory");
          break;
        }
        *hosts = p;
      }
      dp_fsinput_host_t *h = &(*hosts)[(*n)++];
      memset(h, 0, sizeof(*h));
      snprintf(h->name, sizeof(h->name), "%s", l.s[i].host);
    }
    rc = devview_disk(cmd, c, &l, i, j, &(*hosts)[*n - 1]);
    i = j;
  }
  plist_free(&l);
  if (rc != 0) {
    for (size_t i = 0; i < *n; i++)
      dp_fsinput_host_free(&(*hosts)[i]);
    free(*hosts);
    *hosts = NULL;
    *n = 0;
  }
  return rc;
}
