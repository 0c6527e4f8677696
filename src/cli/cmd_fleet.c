/*
 * cmd_fleet.c - `diskprobe fleet`: every disk of a central collectd
 * server's RRD tree ranked against the other disks of its class, and the
 * fail-slow detector run over each host's device-view history.
 *
 *   diskprobe fleet [--since 24h] [--format text|json|html] [--out FILE]
 *                   (DIR | --prometheus URL [--prometheus-limit SIZE])
 *
 * DIR is collectd's rrdtool plugin's DataDir (rrd_input.h: the files read);
 * with --prometheus the same series come from a Prometheus-compatible HTTP
 * API (prom_input.h), the rest as below ("the tree" then the API; nothing
 * is skipped there: an answer is read whole or the run fails with one line
 * naming the URL, exit 2).
 * A target's disk is named by its target_device-DISK.rrd, the disk's class
 * by HOST/diskprobe-dev-DISK/disk_info-CLASS.rrd (the newest one; the
 * plugin's Class option, else the disk's model); a target without either
 * is in the class "unknown". Per target and figure (randread-qd1 p50
 * latency, randread-qd32 IOPS, seqread bytes/s) the median of the rows
 * between now - since and now; per class the median of those over its
 * targets; each target's slowdown against it (>1 worse, fleetstat.h) and
 * the worst of its three; the rows worst first. "age" is the time since
 * the newest update of the target's probe files.
 *
 * Fail-slow: per host, the device view's rows of the window (read and
 * write bytes/s, I/Os per second, awaits) through the detector `diskprobe
 * failslow` runs (its defaults scaled to the rows' step); a flagged disk is
 * listed with the time of its first flag. The detector needs an hour or
 * more of rows to score at all.
 *
 * Output: text (a table, then the fail-slow lines), json (one object:
 * {"since_s", "now", "disks": [{"rank", "host", "target", "disk",
 * "class", "class_targets", "worst", "age_s", "figures": {NAME: {"value",
 * "class_median", "slowdown"}}, "failslow"}], "failslow": [{"host",
 * "disk", "flagged", "first_flag_ts", "max_score"}]}; numbers that are not
 * one are null; a member per line, indented), or html (one self-contained page,
 * no external assets).
 * --out FILE writes there instead of standard output.
 *
 * A file of the tree that is not a regular file, or that librrd cannot
 * read (cut short, not an RRD file), is skipped (rrd_input.h): one line on
 * stderr "diskprobe fleet: PATH: skipped: WHY", and in the report: text
 * "skipped: PATH: WHY" lines at the end, JSON "skipped": [{"file",
 * "why"}], HTML a list under the table; the rest is reported. In text,
 * every name from the tree (host, target, disk, class, path) is printed
 * through dp_cli_visible (cli.h): a newline or an escape in a directory's
 * name is shown, not obeyed. Exit 0 when the report was written (a
 * target without any readable file is a row without figures); 2 on bad
 * usage, a tree that cannot be listed or has no target, a tree whose
 * every probe file was skipped (none readable), or output that cannot be
 * written (one line on stderr).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "fleetstat.h"
#include "prom_input.h"
#include "rrd_input.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CMD "fleet"

enum { OUT_TEXT, OUT_JSON, OUT_HTML };

/* What the detector found for one disk of a host. */
typedef struct {
  char host[256];
  char disk[DP_FAILSLOW_NAME_MAX];
  int64_t first; /* -1: never flagged */
  double max_score;
} fsres_t;

typedef struct {
  const char *root;      /* the tree, or the URL shown */
  dp_promin_conf_t prom; /* url NULL: the RRD tree */
  dp_promin_fleet_t pf;  /* what was read from it */
  char shown[1024];
  int format;
  const char *out;
  double since_s;
  time_t now;
  dp_rrdin_target_t *t;
  size_t nt;
  time_t *newest; /* per target */
  dp_fleetstat_row_t *rows;
  fsres_t *fs;
  size_t nfs;
  dp_rrdin_skips_t sk; /* files skipped */
} fleet_t;

static const int fig_series[DP_FLEETSTAT_NFIGURES] = {
    [DP_FLEETSTAT_QD1_P50_S] = DP_RRDIN_QD1_P50_S,
    [DP_FLEETSTAT_QD32_IOPS] = DP_RRDIN_QD32_IOPS,
    [DP_FLEETSTAT_SEQ_BPS] = DP_RRDIN_SEQ_BPS};

/* The figures of every target, ranked. 0 or 2. */
static int fleet_rank(fleet_t *fl) {
  fl->rows = calloc(fl->nt + 1, sizeof(*fl->rows));
  fl->newest = calloc(fl->nt + 1, sizeof(*fl->newest));
  if (fl->rows == NULL || fl->newest == NULL) {
    fprintf(stderr, "diskprobe " CMD ": out of memory\n");
    return 2;
  }
  time_t start = fl->now - (time_t)fl->since_s;
  for (size_t i = 0; i < fl->nt; i++) {
    dp_rrdin_values_t s[DP_RRDIN_NSERIES] = {{0}};
    int rc = 0;
    if (fl->prom.url != NULL) { /* read already: taken over */
      memcpy(s, fl->pf.s[i], sizeof(s));
      memset(fl->pf.s[i], 0, sizeof(s));
      fl->newest[i] = fl->pf.newest[i];
    } else {
      rc = dp_rrdin_target_values(CMD, &fl->t[i], start, fl->now, s,
                                  &fl->newest[i], &fl->sk);
    }
    dp_fleetstat_row_t *r = &fl->rows[i];
    r->id = i;
    r->cls = fl->t[i].cls;
    for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++) {
      dp_rrdin_values_t *v = &s[fig_series[f]];
      r->fig[f] = dp_fleetstat_summary(DP_FLEETSTAT_MEDIAN, v->v, v->n);
    }
    for (int k = 0; k < DP_RRDIN_NSERIES; k++)
      free(s[k].v);
    if (rc != 0)
      return rc;
  }
  if (fl->sk.read == 0 && fl->sk.n > 0) {
    fprintf(stderr, "diskprobe " CMD ": ");
    dp_cli_put_visible(stderr, fl->root);
    fprintf(stderr, ": no readable RRD file (%zu skipped)\n", fl->sk.n);
    return 2;
  }
  if (dp_fleetstat_rank(fl->rows, fl->nt) != 0) {
    fprintf(stderr, "diskprobe " CMD ": out of memory\n");
    return 2;
  }
  return 0;
}

/* Adds the detector's results over host's device view h (rc: how its
 * read went) to fl->fs. 0 or 2. */
static int fleet_failslow_host(fleet_t *fl, const char *host,
                               dp_fsinput_host_t h, int rc) {
  int64_t *first = calloc(h.ndisks + 1, sizeof(*first));
  double *maxs = calloc(h.ndisks + 1, sizeof(*maxs));
  fsres_t *fs = realloc(fl->fs, (fl->nfs + h.ndisks + 1) * sizeof(*fs));
  if (fs != NULL)
    fl->fs = fs;
  if (rc == 0 && (first == NULL || maxs == NULL || fs == NULL)) {
    fprintf(stderr, "diskprobe " CMD ": out of memory\n");
    rc = 2;
  }
  for (size_t i = 0; rc == 0 && i < h.ndisks; i++) {
    first[i] = -1;
    maxs[i] = NAN;
  }
  if (rc == 0)
    rc = dp_cli_failslow_scan(&h, first, maxs);
  for (size_t i = 0; rc == 0 && i < h.ndisks; i++) {
    fsres_t *r = &fl->fs[fl->nfs++];
    snprintf(r->host, sizeof(r->host), "%s", host);
    snprintf(r->disk, sizeof(r->disk), "%s", h.disks[i]);
    r->first = first[i];
    r->max_score = maxs[i];
  }
  free(first);
  free(maxs);
  dp_fsinput_host_free(&h);
  return rc;
}

/* The detector over every host of the tree or the API (targets are sorted
 * by host): a host's device view is read with its targets'. */
static int fleet_failslow(fleet_t *fl) {
  time_t start = fl->now - (time_t)fl->since_s;
  dp_fsinput_host_t *ph = NULL;
  size_t nph = 0, k = 0;
  int rc = 0;
  if (fl->prom.url != NULL)
    rc = dp_promin_devview(CMD, &fl->prom, start, fl->now, &ph, &nph);
  for (size_t i = 0; i < fl->nt && rc == 0; i++) {
    if (i > 0 && strcmp(fl->t[i].host, fl->t[i - 1].host) == 0)
      continue;
    dp_fsinput_host_t h;
    memset(&h, 0, sizeof(h));
    int r = 0;
    if (fl->prom.url == NULL) {
      r = dp_rrdin_devview(CMD, fl->root, fl->t[i].host, start, fl->now, &h,
                           &fl->sk);
    } else { /* both sorted by host: taken over */
      while (k < nph && strverscmp(ph[k].name, fl->t[i].host) < 0)
        k++;
      if (k < nph && strcmp(ph[k].name, fl->t[i].host) == 0) {
        h = ph[k];
        memset(&ph[k], 0, sizeof(ph[k]));
      }
    }
    rc = fleet_failslow_host(fl, fl->t[i].host, h, r);
  }
  for (size_t i = 0; i < nph; i++)
    dp_fsinput_host_free(&ph[i]);
  free(ph);
  return rc;
}

static const fsres_t *fs_of(const fleet_t *fl, const dp_rrdin_target_t *t) {
  for (size_t i = 0; i < fl->nfs; i++)
    if (strcmp(fl->fs[i].host, t->host) == 0 &&
        strcmp(fl->fs[i].disk, t->disk) == 0)
      return &fl->fs[i];
  return NULL;
}

/* ---- output ------------------------------------------------------------- */

/* A figure for people (common.c): 101 µs, 55,820 (IOPS), 512 MB/s. */
static const char *display(int f, double v, char *buf, size_t len) {
  if (f == DP_FLEETSTAT_QD1_P50_S)
    return dp_cli_fmt_latency(v, buf, len);
  if (f == DP_FLEETSTAT_SEQ_BPS)
    return dp_cli_fmt_mbps(v, 1, buf, len);
  return dp_cli_fmt_count(v, buf, len);
}

static const char *const fig_title[DP_FLEETSTAT_NFIGURES] = {
    "QD1 p50", "QD32 IOPS", "seq read"};

static double age_s(const fleet_t *fl, size_t id) {
  return fl->newest[id] > 0 ? difftime(fl->now, fl->newest[id]) : NAN;
}

static void fmt_age(double s, char *buf, size_t len) {
  if (!isfinite(s))
    snprintf(buf, len, "-");
  else if (s < 120)
    snprintf(buf, len, "%.0fs", s);
  else if (s < 7200)
    snprintf(buf, len, "%.0fmin", s / 60);
  else
    snprintf(buf, len, "%.1fh", s / 3600);
}

static void fmt_utc(int64_t ts, char *buf, size_t len) {
  time_t t = (time_t)ts;
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%d %H:%M UTC", &tm);
}

/* "55,820 (x1.05)", "101 µs (x4.00)" or "-". */
static void fmt_cell(const dp_fleetstat_row_t *r, int f, char *buf,
                     size_t len) {
  char v[32];
  if (!isfinite(r->fig[f]))
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%s (x%.2f)", display(f, r->fig[f], v, sizeof(v)),
             r->slowdown[f]);
}

/* The worst slowdown, or "-" for a target without any figure. */
static void fmt_worst(double w, char *buf, size_t len) {
  if (isfinite(w))
    snprintf(buf, len, "%.2f", w);
  else
    snprintf(buf, len, "-");
}

/* The figures' cells, each padded to 20 display columns ("µs"). */
static void text_cells(FILE *o, const char *const c[DP_FLEETSTAT_NFIGURES]) {
  for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++) {
    fputc(' ', o);
    dp_cli_pad(o, c[f], -20);
  }
}

/* A name from the tree for a text column: escaped (cli.h). */
#define VIS(s, buf) dp_cli_visible((s), (buf), sizeof(buf))

static void print_text(const fleet_t *fl, FILE *o) {
  fprintf(o, "%-4s %-12s %-12s %-8s %-16s %3s", "rank", "host", "target",
          "disk", "class", "n");
  text_cells(o, fig_title);
  fprintf(o, " %6s %7s\n", "worst", "age");
  for (size_t i = 0; i < fl->nt; i++) {
    const dp_fleetstat_row_t *r = &fl->rows[i];
    const dp_rrdin_target_t *t = &fl->t[r->id];
    char c[DP_FLEETSTAT_NFIGURES][48], age[32], worst[32];
    for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++)
      fmt_cell(r, f, c[f], sizeof(c[f]));
    fmt_age(age_s(fl, r->id), age, sizeof(age));
    fmt_worst(r->worst, worst, sizeof(worst));
    const char *cells[DP_FLEETSTAT_NFIGURES] = {c[0], c[1], c[2]};
    char host[DP_CLI_VISIBLE_NAME], target[DP_CLI_VISIBLE_NAME],
        disk[DP_CLI_VISIBLE_NAME], cls[DP_CLI_VISIBLE_NAME];
    fprintf(o, "%-4zu %-12s %-12s %-8s %-16s %3zu", i + 1, VIS(t->host, host),
            VIS(t->target, target), t->disk[0] ? VIS(t->disk, disk) : "-",
            VIS(t->cls, cls), r->class_n);
    text_cells(o, cells);
    fprintf(o, " %6s %7s\n", worst, age);
  }
  fprintf(o, "(x: slowdown against the class's median, >1 slower; n: "
             "targets in the class)\n");
  size_t flagged = 0;
  for (size_t i = 0; i < fl->nfs; i++) {
    const fsres_t *s = &fl->fs[i];
    if (s->first < 0)
      continue;
    char when[64], host[DP_CLI_VISIBLE_NAME], disk[DP_CLI_VISIBLE_NAME];
    fmt_utc(s->first, when, sizeof(when));
    fprintf(o, "fail-slow: %s %s flagged at %s (largest score %.2f)\n",
            VIS(s->host, host), VIS(s->disk, disk), when, s->max_score);
    flagged++;
  }
  fprintf(o, "fail-slow: %zu disks of the device view checked, %zu flagged\n",
          fl->nfs, flagged);
  for (size_t i = 0; i < fl->sk.n; i++) {
    fputs("skipped: ", o);
    dp_cli_put_visible(o, fl->sk.file[i]);
    fputs(": ", o);
    dp_cli_put_visible(o, fl->sk.why[i]);
    fputc('\n', o);
  }
}

static json_t *fs_json(const fsres_t *s) {
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "host", dp_cli_json_str(s->host));
  dp_cli_json_set(o, "disk", dp_cli_json_str(s->disk));
  dp_cli_json_set(o, "flagged", dp_cli_json_bool(s->first >= 0));
  dp_cli_json_set(o, "first_flag_ts",
                  s->first >= 0 ? dp_cli_json_int(s->first) : json_null());
  dp_cli_json_set(o, "max_score", dp_cli_json_num(s->max_score));
  return o;
}

static json_t *row_json(const fleet_t *fl, size_t i) {
  const dp_fleetstat_row_t *r = &fl->rows[i];
  const dp_rrdin_target_t *t = &fl->t[r->id];
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "rank", dp_cli_json_uint(i + 1));
  dp_cli_json_set(o, "host", dp_cli_json_str(t->host));
  dp_cli_json_set(o, "target", dp_cli_json_str(t->target));
  dp_cli_json_set(o, "disk", dp_cli_json_str(t->disk));
  dp_cli_json_set(o, "class", dp_cli_json_str(t->cls));
  dp_cli_json_set(o, "class_targets", dp_cli_json_uint(r->class_n));
  dp_cli_json_set(o, "worst", dp_cli_json_num(r->worst));
  dp_cli_json_set(o, "age_s", dp_cli_json_num(age_s(fl, r->id)));
  json_t *figs = dp_cli_json_object();
  for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++) {
    json_t *x = dp_cli_json_object();
    dp_cli_json_set(x, "value", dp_cli_json_num(r->fig[f]));
    dp_cli_json_set(x, "class_median", dp_cli_json_num(r->median[f]));
    dp_cli_json_set(x, "slowdown", dp_cli_json_num(r->slowdown[f]));
    dp_cli_json_set(figs, dp_fleetstat_figure_name((dp_fleetstat_figure_t)f),
                    x);
  }
  dp_cli_json_set(o, "figures", figs);
  const fsres_t *s = fs_of(fl, t);
  dp_cli_json_set(o, "failslow", s != NULL ? fs_json(s) : json_null());
  return o;
}

static void print_json(const fleet_t *fl, FILE *o) {
  json_t *doc = dp_cli_json_object();
  /* whole seconds (dp_cli_since), an integer as it always was */
  dp_cli_json_set(doc, "since_s", dp_cli_json_int(llround(fl->since_s)));
  dp_cli_json_set(doc, "now", dp_cli_json_int(fl->now));
  json_t *disks = dp_cli_json_array();
  for (size_t i = 0; i < fl->nt; i++)
    dp_cli_json_append(disks, row_json(fl, i));
  dp_cli_json_set(doc, "disks", disks);
  json_t *fs = dp_cli_json_array();
  for (size_t i = 0; i < fl->nfs; i++)
    dp_cli_json_append(fs, fs_json(&fl->fs[i]));
  dp_cli_json_set(doc, "failslow", fs);
  json_t *sk = dp_cli_json_array();
  for (size_t i = 0; i < fl->sk.n; i++) {
    json_t *x = dp_cli_json_object();
    dp_cli_json_set(x, "file", dp_cli_json_str(fl->sk.file[i]));
    dp_cli_json_set(x, "why", dp_cli_json_str(fl->sk.why[i]));
    dp_cli_json_append(sk, x);
  }
  dp_cli_json_set(doc, "skipped", sk);
  dp_cli_json_print(o, doc, DP_CLI_JSON_INDENTED);
}

static void html_str(FILE *o, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<':
      fputs("&lt;", o);
      break;
    case '>':
      fputs("&gt;", o);
      break;
    case '&':
      fputs("&amp;", o);
      break;
    case '"':
      fputs("&quot;", o);
      break;
    case '\'':
      fputs("&#39;", o);
      break;
    default:
      fputc(*s, o);
    }
  }
}

/* The row's colour: red from 2x its class, amber from 1.3x. */
static const char *html_level(double worst) {
  if (worst >= 2)
    return "bad";
  return worst >= 1.3 ? "warn" : "ok";
}

static void print_html_row(const fleet_t *fl, FILE *o, size_t i) {
  const dp_fleetstat_row_t *r = &fl->rows[i];
  const dp_rrdin_target_t *t = &fl->t[r->id];
  const fsres_t *s = fs_of(fl, t);
  char age[32], worst[32];
  fmt_age(age_s(fl, r->id), age, sizeof(age));
  fmt_worst(r->worst, worst, sizeof(worst));
  fprintf(o, "<tr class=\"%s\"><td>%zu</td><td>", html_level(r->worst), i + 1);
  const char *cells[] = {t->host, t->target, t->disk[0] ? t->disk : "-",
                         t->cls};
  for (size_t k = 0; k < 4; k++) {
    fputs(k ? "</td><td>" : "", o);
    html_str(o, cells[k]);
  }
  fprintf(o, "</td><td>%zu</td>", r->class_n);
  for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++) {
    char c[48];
    fmt_cell(r, f, c, sizeof(c));
    fprintf(o, "<td>%s</td>", c);
  }
  fprintf(o, "<td><b>%s</b></td><td>%s</td><td>%s</td></tr>\n", worst, age,
          s == NULL       ? "-"
          : s->first >= 0 ? "FLAGGED"
                          : "no");
}

static void print_html(const fleet_t *fl, FILE *o) {
  char when[64];
  fmt_utc(fl->now, when, sizeof(when));
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
        "<title>diskprobe fleet</title>\n<style>\n"
        "body{font-family:sans-serif;margin:1.5em}"
        "table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
        "td:nth-child(-n+5){text-align:left}"
        "tr.bad{background:#f8d0d0}tr.warn{background:#fbe8c0}\n"
        "</style></head><body>\n<h1>diskprobe fleet: ",
        o);
  html_str(o, fl->root);
  fprintf(o,
          "</h1>\n<p><b>Window:</b> the %.1f h before %s. Every target "
          "against the median of its class, worst first; x = slowdown, "
          "&gt;1 slower (latency over the median, the median's IOPS and "
          "MB/s over the disk's).</p>\n<table>\n<tr><th>rank</th><th>host"
          "</th><th>target</th><th>disk</th><th>class</th><th>n</th>",
          fl->since_s / 3600, when);
  for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++)
    fprintf(o, "<th>%s (x)</th>", fig_title[f]);
  fputs("<th>worst</th><th>age</th><th>fail-slow</th></tr>\n", o);
  for (size_t i = 0; i < fl->nt; i++)
    print_html_row(fl, o, i);
  fputs("</table>\n", o);
  if (fl->sk.n > 0) {
    fprintf(o, "<p><b>Skipped</b> (%zu files not read):</p>\n<ul>\n", fl->sk.n);
    for (size_t i = 0; i < fl->sk.n; i++) {
      fputs("<li>", o);
      html_str(o, fl->sk.file[i]);
      fputs(": ", o);
      html_str(o, fl->sk.why[i]);
      fputs("</li>\n", o);
    }
    fputs("</ul>\n", o);
  }
  fputs("</body></html>\n", o);
}

/* ---- options ------------------------------------------------------------ */

static const char *const fleet_usage[] = {
    "[--since 24h] [--format text|json|html] [--out FILE] "
    "(DIR | --prometheus URL)",
    NULL};
static const dp_cli_opt_help_t fleet_opts[] = {
    {"--prometheus URL",
     "read the series from a Prometheus-compatible HTTP API (Prometheus, "
     "VictoriaMetrics) instead of an RRD tree: http://prom:9090"},
    {"--prometheus-limit SIZE",
     "with --prometheus: the largest answer read; a larger one is asked "
     "for again in parts of the window (default 64M)"},
    {"--since DURATION",
     "the window up to now (default 24h, at least 1s; 90min, 7d)"},
    {"--format text|json|html",
     "a table worst first and the fail-slow lines (text, the default), one "
     "JSON object, or one self-contained HTML page"},
    {"--out FILE", "write there instead of standard output"},
    {NULL, NULL}};
static const char *const fleet_examples[] = {
    "diskprobe fleet /var/lib/collectd/rrd",
    "diskprobe fleet --since 7d --format html --out fleet.html /srv/rrd",
    "diskprobe fleet --prometheus http://prometheus:9090 --since 6h",
    "diskprobe fleet --prometheus http://vm:8428 --prometheus-limit 512M",
    NULL};
const dp_cli_help_t dp_cli_help_fleet = {
    "fleet",
    "rank each disk against its class (RRD tree, Prometheus)",
    0,
    fleet_usage,
    fleet_opts,
    "DIR is collectd's rrdtool DataDir on the central server. Per target: "
    "the window's median QD1 p50 latency, QD32 IOPS and sequential MB/s, each "
    "against the median of the disk's class (x: slowdown, >1 slower), the "
    "worst first; then the fail-slow detector over each host's device view. "
    "A file that is not a regular file (a FIFO, a device) or that librrd "
    "cannot read is skipped with a line on stderr and a note in the report; "
    "names from the tree are printed with control characters escaped (\\n, "
    "\\x1b). Exit status: 0 when the report was written, 2 on bad usage, a "
    "tree that cannot be listed, has no target or no readable probe file, or "
    "output that cannot be written. With --prometheus the same figures come "
    "from the raw samples of collectd_diskprobe_* (write_prometheus scraped "
    "with honor_labels: instance is the host, diskprobe the target); an "
    "answer that cannot be had (refused, HTTP status, not JSON, Prometheus's "
    "error, over the limit) is one line naming the URL and exit 2.",
    fleet_examples};

static int usage(FILE *f, int rc) {
  if (f == stdout)
    dp_cli_help(f, &dp_cli_help_fleet);
  else
    dp_cli_help_usage(f, &dp_cli_help_fleet);
  return rc;
}

/* Options into fl; 0 to go on, else the exit status + 1. */
static int fleet_options(int argc, char **argv, fleet_t *fl) {
  static const struct option opts[] = {
      {"since", required_argument, NULL, 's'},
      {"format", required_argument, NULL, 'f'},
      {"out", required_argument, NULL, 'o'},
      {"prometheus", required_argument, NULL, 'p'},
      {"prometheus-limit", required_argument, NULL, 'l'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      if (dp_cli_since(CMD, optarg, &fl->since_s) != 0)
        return 3;
      break;
    case 'f':
      if (strcmp(optarg, "html") == 0)
        fl->format = OUT_HTML;
      else if ((fl->format = dp_cli_format(optarg)) < 0) {
        fprintf(stderr, "diskprobe " CMD ": --format: text, json or html\n");
        return 3;
      }
      break;
    case 'o':
      fl->out = optarg;
      break;
    case 'p':
      fl->prom.url = optarg;
      break;
    case 'l':
      if (dp_cli_prometheus_limit(CMD, optarg, &fl->prom.max_bytes) != 0)
        return 3;
      break;
    case 'h':
      return usage(stdout, 0) + 1;
    default:
      return usage(stderr, 2) + 1;
    }
  }
  if (optind != argc - (fl->prom.url != NULL ? 0 : 1))
    return usage(stderr, 2) + 1;
  fl->root = fl->prom.url != NULL ? dp_promin_url_shown(fl->prom.url, fl->shown,
                                                        sizeof(fl->shown))
                                  : argv[optind];
  return 0;
}

/* The targets and their figures from the API, as from a tree. 0 or 2. */
static int fleet_read_prom(fleet_t *fl) {
  unsigned mask = 0;
  for (int f = 0; f < DP_FLEETSTAT_NFIGURES; f++)
    mask |= 1u << fig_series[f];
  int rc = dp_promin_read(CMD, &fl->prom, NULL, NULL, mask,
                          fl->now - (time_t)fl->since_s, fl->now, &fl->pf);
  if (rc == 0 && fl->pf.n == 0) {
    fprintf(stderr, "diskprobe " CMD ": ");
    dp_cli_put_visible(stderr, fl->root);
    fprintf(stderr, ": no diskprobe targets in the window (want "
                    "collectd_diskprobe_* series with labels instance and "
                    "diskprobe: write_prometheus scraped with honor_labels)\n");
    rc = 2;
  }
  fl->t = fl->pf.t;
  fl->nt = fl->pf.n;
  return rc;
}

static int fleet_print(const fleet_t *fl) {
  FILE *o = fl->out ? fopen(fl->out, "w") : stdout;
  if (o == NULL) {
    fprintf(stderr, "diskprobe " CMD ": %s: %s\n", fl->out, strerror(errno));
    return 2;
  }
  if (fl->format == OUT_JSON)
    print_json(fl, o);
  else if (fl->format == OUT_HTML)
    print_html(fl, o);
  else
    print_text(fl, o);
  int bad = fl->out ? fclose(o) != 0 : fflush(o) != 0;
  if (bad) {
    fprintf(stderr, "diskprobe " CMD ": %s: %s\n",
            fl->out ? fl->out : "standard output", strerror(errno));
    return 2;
  }
  return 0;
}

int dp_cmd_fleet(int argc, char **argv) {
  fleet_t fl = {.since_s = 86400,
                .format = OUT_TEXT,
                .prom = {.max_bytes = DP_PROMIN_MAX_BYTES_DEFAULT}};
  int rc = fleet_options(argc, argv, &fl);
  if (rc != 0)
    return rc - 1;
  fl.now = time(NULL);
  if (fl.prom.url != NULL)
    rc = fleet_read_prom(&fl);
  else
    rc = dp_rrdin_scan(CMD, fl.root, &fl.t, &fl.nt, &fl.sk);
  if (rc == 0)
    rc = fleet_rank(&fl);
  if (rc == 0)
    rc = fleet_failslow(&fl);
  if (rc == 0)
    rc = fleet_print(&fl);
  if (fl.prom.url != NULL)
    dp_promin_fleet_free(&fl.pf);
  else
    free(fl.t);
  free(fl.rows);
  free(fl.newest);
  free(fl.fs);
  dp_rrdin_skips_free(&fl.sk);
  return rc;
}
