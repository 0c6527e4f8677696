/*
 * cmd_compare.c - `diskprobe compare`: two sides' probe rounds side by
 * side, the table the seeds of this project drew with HD Tune, DiskTT and
 * Sandra -- access time, 8 KiB IOPS at queue depth 1 and 32, minimum,
 * average and maximum sequential MB/s -- with the ratio B/A, its 95 %
 * interval and a verdict per row: "different" or "within noise".
 *
 *   diskprobe compare [--format text|json] FILE_A FILE_B
 *   diskprobe compare --rrd DIR [--since 24h] [--format text|json] A B
 *   diskprobe compare --prometheus URL [--prometheus-limit SIZE] [--since 24h]
 *                     [--format text|json] A B
 *
 * Sides: two recordings of `diskprobe watch --format json` (its probe
 * lines, read as `diskprobe replay` reads them; every target of a file
 * counts; stalled rounds and probes that completed nothing are left out),
 * or, with --rrd, a central server's RRD tree (rrd_input.h) and
 * A, B each one of HOST (every target of the host), HOST/TARGET, or
 * class:NAME (every target whose disk is of that class), the rows between
 * now - since and now; or, with --prometheus, the same series from a
 * Prometheus-compatible HTTP API (prom_input.h), the same sides. A side of
 * several targets pools their rounds (in the tree's order either way).
 *
 * Per round: randread-qd1's and randread-qd32's IOPS, p50 and mean
 * latency, seqread's bytes/s (from a recording: "bytes_per_second", or in
 * older lines without it the IOPS times the default seqread block, 1 MiB).
 * The row's figure is the median of the rounds' p50s, the mean of the
 * other per-round values, the least and the largest sequential rate
 * (fleetstat.h: the interval is a circular block bootstrap over rounds,
 * blocks of n^(1/3) rounds because rounds on a shared disk are
 * autocorrelated; "different" when the whole interval lies beyond 10 %
 * either way; "too few rounds" under 5; the min and max rows' intervals
 * are rough).
 *
 * Text leads with what separates the sides: up to three rows "different",
 * the largest factor (ratio or its inverse) first, "IOPS at QD32: 96.8x
 * lower on B (495 vs 47,894 on A)", or a line saying no row is beyond
 * noise and the largest difference; then the table by probe depth. A
 * throttled volume (tests/fixtures/compare) keeps its QD1 p50 while its
 * IOPS and mean latency move 20x: the p50 ratio alone, the old first row,
 * said "within noise". QD32's latencies and the sequential min and max
 * are in the table but never lead (see rows[]). JSON: "rows" in their old
 * order with QD32's p50 and mean appended and each row's "probe", and
 * "separations", every row that may lead in that order.
 *
 * With --rrd, a file of the tree that is not a regular file or that
 * librrd cannot read is skipped with one line on stderr (rrd_input.h) and
 * the side is read without it; a side whose every file was skipped is an
 * error naming it ("A: no readable RRD file (N skipped)"). In text, the
 * sides' names and the paths are printed through dp_cli_visible (cli.h).
 *
 * Exit 0 when both sides were read, 2 on bad usage or unreadable input
 * (one line on stderr).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "fleetstat.h"
#include "jsonl.h"
#include "prom_input.h"
#include "replay_input.h"
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

#define CMD "compare"

typedef struct {
  const char *name;
  dp_rrdin_values_t s[DP_RRDIN_NSERIES];
} side_t;

/* The figures compared. JSON's "rows" keep this order (consumers index
 * them: add rows at the end); text shows them by group, in `show` order. */
enum { G_QD1, G_QD32, G_SEQ, NGROUPS };
enum { F_IOPS, F_MEAN, F_P50, F_SEQ }; /* what a row measures */

static const struct {
  const char *key, *unit;
  int series;
  dp_fleetstat_kind_t kind;
  int group, what;
  const char *label; /* in the table, under its group */
  const char *name;  /* in a separation line: "IOPS at QD32" */
  /* may lead the output: not the rough min and max, nor QD32's latencies
   * (at a fixed depth the mean is the IOPS restated, depth / IOPS, and
   * the p50 under a throttle the throttle's queue) */
  int headline;
} rows[] = {
    {"qd1_p50_s", "s", DP_RRDIN_QD1_P50_S, DP_FLEETSTAT_MEDIAN, G_QD1, F_P50,
     "latency p50", "p50 latency at QD1", 1},
    {"qd1_mean_s", "s", DP_RRDIN_QD1_MEAN_S, DP_FLEETSTAT_MEAN, G_QD1, F_MEAN,
     "latency mean", "mean latency at QD1", 1},
    {"qd1_iops", "1/s", DP_RRDIN_QD1_IOPS, DP_FLEETSTAT_MEAN, G_QD1, F_IOPS,
     "IOPS", "IOPS at QD1", 1},
    {"qd32_iops", "1/s", DP_RRDIN_QD32_IOPS, DP_FLEETSTAT_MEAN, G_QD32, F_IOPS,
     "IOPS", "IOPS at QD32", 1},
    {"seq_min_bytes_per_s", "bytes/s", DP_RRDIN_SEQ_BPS, DP_FLEETSTAT_MIN,
     G_SEQ, F_SEQ, "MB/s, least round", "least sequential MB/s", 0},
    {"seq_avg_bytes_per_s", "bytes/s", DP_RRDIN_SEQ_BPS, DP_FLEETSTAT_MEAN,
     G_SEQ, F_SEQ, "MB/s, mean", "sequential MB/s", 1},
    {"seq_max_bytes_per_s", "bytes/s", DP_RRDIN_SEQ_BPS, DP_FLEETSTAT_MAX,
     G_SEQ, F_SEQ, "MB/s, largest round", "largest sequential MB/s", 0},
    {"qd32_p50_s", "s", DP_RRDIN_QD32_P50_S, DP_FLEETSTAT_MEDIAN, G_QD32, F_P50,
     "latency p50", "p50 latency at QD32", 0},
    {"qd32_mean_s", "s", DP_RRDIN_QD32_MEAN_S, DP_FLEETSTAT_MEAN, G_QD32,
     F_MEAN, "latency mean", "mean latency at QD32", 0},
};
static const char *const group_title[NGROUPS] = {
    "QD1 random reads (randread-qd1)", "QD32 random reads (randread-qd32)",
    "sequential reads (seqread)"};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static int oom(void) {
  fprintf(stderr, "diskprobe " CMD ": out of memory\n");
  return 2;
}

/* ---- a side from a recording -------------------------------------------- */

/* seqread's default block, bytes: a recording's bytes/s is IOPS x this. */
static double seq_block_bytes(void) {
  dp_probe_conf_t p[DP_PROBES_MAX];
  size_t n = dp_options_default_probes(p);
  for (size_t i = 0; i < n; i++)
    if (strcmp(p[i].name, "seqread") == 0)
      return (double)p[i].block_size;
  return 1048576;
}

/* Adds one probe line's figures to the side. 0 or -1. */
static int add_record(side_t *sd, const dp_replay_rec_t *r, double seq_block) {
  int e = 0;
  double v[DP_RRDIN_NSERIES];
  for (int k = 0; k < DP_RRDIN_NSERIES; k++)
    v[k] = NAN;
  if (strcmp(r->probe, "randread-qd1") == 0) {
    v[DP_RRDIN_QD1_P50_S] = r->p50;
    v[DP_RRDIN_QD1_MEAN_S] = r->mean;
    v[DP_RRDIN_QD1_IOPS] = r->iops;
  } else if (strcmp(r->probe, "randread-qd32") == 0) {
    v[DP_RRDIN_QD32_P50_S] = r->p50;
    v[DP_RRDIN_QD32_MEAN_S] = r->mean;
    v[DP_RRDIN_QD32_IOPS] = r->iops;
  } else if (strcmp(r->probe, "seqread") == 0) {
    v[DP_RRDIN_SEQ_BPS] =
        isnan(r->bytes_per_s) ? r->iops * seq_block : r->bytes_per_s;
  }
  for (int k = 0; k < DP_RRDIN_NSERIES && e == 0; k++)
    if (isfinite(v[k]))
      e = dp_rrdin_push(&sd->s[k], v[k]);
  return e;
}

static int side_from_file(side_t *sd) {
  FILE *f = strcmp(sd->name, "-") == 0 ? stdin : fopen(sd->name, "r");
  if (f == NULL) {
    fprintf(stderr, "diskprobe " CMD ": %s: %s\n", sd->name, strerror(errno));
    return 2;
  }
  dp_replay_names_t *names = calloc(1, sizeof(*names));
  dp_replay_rec_t *recs = NULL;
  size_t n = 0, cap = 0;
  int rc = names == NULL ? oom() : 0;
  if (rc == 0 && dp_replay_read(f, CMD, sd->name, DP_JSONL_LINE_MAX, names,
                                &recs, &n, &cap) != 0)
    rc = 2;
  if (f != stdin)
    fclose(f);
  double seq_block = seq_block_bytes();
  for (size_t i = 0; i < n && rc == 0; i++)
    if (!recs[i].verdict && !recs[i].stalled && recs[i].ops > 0 &&
        add_record(sd, &recs[i], seq_block) != 0)
      rc = oom();
  free(recs);
  free(names);
  return rc;
}

/* ---- a side from an RRD tree -------------------------------------------- */

/* Does target t belong to side spec? */
static int spec_has(const char *spec, const dp_rrdin_target_t *t) {
  if (strncmp(spec, "class:", 6) == 0)
    return strcmp(spec + 6, t->cls) == 0;
  const char *slash = strchr(spec, '/');
  if (slash == NULL)
    return strcmp(spec, t->host) == 0;
  return strlen(t->host) == (size_t)(slash - spec) &&
         strncmp(spec, t->host, (size_t)(slash - spec)) == 0 &&
         strcmp(slash + 1, t->target) == 0;
}

static int side_from_rrd(side_t *sd, const char *root,
                         const dp_rrdin_target_t *t, size_t nt, time_t start,
                         time_t end, dp_rrdin_skips_t *sk) {
  size_t matched = 0, read0 = sk->read, skipped0 = sk->n;
  for (size_t i = 0; i < nt; i++) {
    if (!spec_has(sd->name, &t[i]))
      continue;
    time_t newest;
    int rc = dp_rrdin_target_values(CMD, &t[i], start, end, sd->s, &newest, sk);
    if (rc != 0)
      return rc;
    matched++;
  }
  if (matched == 0 || (sk->read == read0 && sk->n > skipped0)) {
    fputs("diskprobe " CMD ": ", stderr);
    dp_cli_put_visible(stderr, sd->name);
    if (matched == 0) {
      fputs(": no such HOST, HOST/TARGET or class:NAME in ", stderr);
      dp_cli_put_visible(stderr, root);
      fputc('\n', stderr);
    } else {
      fprintf(stderr, ": no readable RRD file (%zu skipped)\n",
              sk->n - skipped0);
    }
    return 2;
  }
  return 0;
}

/* ---- a side from a Prometheus HTTP API ---------------------------------- */

/* Appends the series of f's targets that belong to sd (taken over), as
 * side_from_rrd does. 0 or 2. */
static int side_from_prom(side_t *sd, const char *url, dp_promin_fleet_t *f) {
  size_t matched = 0;
  for (size_t i = 0; i < f->n; i++) {
    if (!spec_has(sd->name, &f->t[i]))
      continue;
    matched++;
    for (int k = 0; k < DP_RRDIN_NSERIES; k++)
      for (size_t j = 0; j < f->s[i][k].n; j++)
        if (dp_rrdin_push(&sd->s[k], f->s[i][k].v[j]) != 0)
          return oom();
  }
  if (matched > 0)
    return 0;
  fputs("diskprobe " CMD ": ", stderr);
  dp_cli_put_visible(stderr, sd->name);
  fputs(": no such HOST, HOST/TARGET or class:NAME at ", stderr);
  dp_cli_put_visible(stderr, url);
  fputs(" in the window\n", stderr);
  return 2;
}

/* Both sides from the API: a class side needs every target's class, so
 * then the whole fleet is read once; a HOST or HOST/TARGET side reads
 * only its own series (instance="HOST"), or the whole fleet when there are
 * none. 0 or 2. */
static int sides_from_prom(side_t *a, side_t *b, const dp_promin_conf_t *c,
                           time_t start, time_t end) {
  char url[1024];
  dp_promin_url_shown(c->url, url, sizeof(url));
  side_t *sd[2] = {a, b};
  int any_class =
      strncmp(a->name, "class:", 6) == 0 || strncmp(b->name, "class:", 6) == 0;
  dp_promin_fleet_t f = {0};
  int rc = 0;
  if (any_class)
    rc = dp_promin_read(CMD, c, NULL, NULL, ~0u, start, end, &f);
  for (int i = 0; i < 2 && rc == 0; i++) {
    if (!any_class) {
      const char *slash = strchr(sd[i]->name, '/');
      char *host = slash ? strndup(sd[i]->name, (size_t)(slash - sd[i]->name))
                         : strdup(sd[i]->name);
      if (host == NULL)
        return oom();
      dp_promin_fleet_free(&f);
      rc = dp_promin_read(CMD, c, host, slash ? slash + 1 : NULL, ~0u, start,
                          end, &f);
      free(host);
      /* none with instance=HOST: scraped without honor_labels, the host
       * is in exported_instance, which only the whole read looks at */
      if (rc == 0 && f.n == 0)
        rc = dp_promin_read(CMD, c, NULL, NULL, ~0u, start, end, &f);
    }
    if (rc == 0)
      rc = side_from_prom(sd[i], url, &f);
  }
  dp_promin_fleet_free(&f);
  return rc;
}

/* ---- what separates the sides ------------------------------------------ */

/* How far apart a row's sides are, as a factor >= 1; 0 without a ratio. */
static double factor(const dp_fleetstat_ratio_t *r) {
  if (!isfinite(r->ratio) || r->ratio <= 0)
    return 0;
  return r->ratio >= 1 ? r->ratio : 1 / r->ratio;
}

/* The rows that may lead, the largest separation first: rows whose
 * difference is beyond noise before the others, then by factor. Returns
 * how many are in order[]. */
static size_t separations(const dp_fleetstat_ratio_t *r, size_t *order) {
  size_t n = 0;
  for (size_t i = 0; i < NROWS; i++)
    if (rows[i].headline && factor(&r[i]) > 0)
      order[n++] = i;
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0; j--) {
      const dp_fleetstat_ratio_t *x = &r[order[j - 1]], *y = &r[order[j]];
      int dx = x->verdict == DP_FLEETSTAT_DIFFERENT;
      int dy = y->verdict == DP_FLEETSTAT_DIFFERENT;
      if (dx > dy || (dx == dy && factor(x) >= factor(y)))
        break;
      size_t t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  return n;
}

/* Is B lower than A on this row? */
static int b_lower(const dp_fleetstat_ratio_t *r) { return r->ratio < 1; }

/* One side's figure for people: 11,422 (IOPS), 93.0 µs, 512 MB/s. */
static const char *figure(size_t i, double v, char *buf, size_t len) {
  if (rows[i].what == F_IOPS)
    return dp_cli_fmt_count(v, buf, len);
  if (rows[i].what == F_SEQ)
    return dp_cli_fmt_mbps(v, 1, buf, len);
  return dp_cli_fmt_latency(v, buf, len);
}

/* "IOPS at QD32: 24.1x lower on B (500 vs 12,050 on A)", and the verdict
 * when it is not "different". */
static void print_separation(size_t i, const dp_fleetstat_ratio_t *r) {
  char f[48], a[32], b[32];
  double x = factor(r);
  if (x < 1.005)
    snprintf(f, sizeof(f), "the same");
  else
    snprintf(f, sizeof(f), x >= 10 ? "%.1fx %s" : "%.2fx %s", x,
             b_lower(r) ? "lower" : "higher");
  printf("%s: %s on B (%s vs %s on A)%s%s\n", rows[i].name, f,
         figure(i, r->b, b, sizeof(b)), figure(i, r->a, a, sizeof(a)),
         r->verdict == DP_FLEETSTAT_DIFFERENT ? "" : ", ",
         r->verdict == DP_FLEETSTAT_DIFFERENT
             ? ""
             : dp_fleetstat_verdict_name(r->verdict));
}

/* ---- the table ---------------------------------------------------------- */

/* The separations (up to three beyond noise, else the largest), then the
 * table by probe depth. */
static void print_text(const side_t *a, const side_t *b,
                       const dp_fleetstat_ratio_t *r) {
  size_t order[NROWS], n = separations(r, order), shown = 0;
  for (size_t k = 0; k < n && k < 3; k++)
    if (r[order[k]].verdict == DP_FLEETSTAT_DIFFERENT) {
      print_separation(order[k], &r[order[k]]);
      shown++;
    }
  if (shown == 0 && n > 0) {
    printf("no figure separates B from A beyond noise; the largest "
           "difference:\n");
    print_separation(order[0], &r[order[0]]);
  } else if (n == 0) {
    printf("no figure measured on both sides\n");
  }
  printf("\nA: ");
  dp_cli_put_visible(stdout, a->name);
  printf("\nB: ");
  dp_cli_put_visible(stdout, b->name);
  putchar('\n');
  printf("%-24s %10s %10s %8s %17s  %s\n", "", "A", "B", "B/A", "95% interval",
         "verdict");
  static const int shown_as[] = {F_IOPS, F_MEAN, F_P50, F_SEQ};
  for (int g = 0; g < NGROUPS; g++) {
    printf("%s\n", group_title[g]);
    for (size_t k = 0; k < NROWS * 4; k++) { /* rows by what, then in order */
      size_t i = k % NROWS;
      if (rows[i].group != g || rows[i].what != shown_as[k / NROWS])
        continue;
      char va[32], vb[32], ratio[32], lo[32], hi[32], ci[72];
      figure(i, r[i].a, va, sizeof(va));
      figure(i, r[i].b, vb, sizeof(vb));
      if (rows[i].what == F_SEQ) { /* the column says MB/s */
        dp_cli_fmt_mbps(r[i].a, 0, va, sizeof(va));
        dp_cli_fmt_mbps(r[i].b, 0, vb, sizeof(vb));
      }
      if (isfinite(r[i].lo))
        snprintf(ci, sizeof(ci), "%s - %s",
                 dp_cli_fmt_ratio(r[i].lo, lo, sizeof(lo)),
                 dp_cli_fmt_ratio(r[i].hi, hi, sizeof(hi)));
      else
        snprintf(ci, sizeof(ci), "-");
      printf("  %-22s ", rows[i].label);
      dp_cli_pad(stdout, va, 10);
      putchar(' ');
      dp_cli_pad(stdout, vb, 10);
      printf(" %8s %17s  %s\n",
             dp_cli_fmt_ratio(r[i].ratio, ratio, sizeof(ratio)), ci,
             dp_fleetstat_verdict_name(r[i].verdict));
    }
  }
  printf("rounds: A %zu, B %zu (randread-qd1). IOPS and latency mean: the "
         "mean of the\nrounds', p50: their median. Interval: circular block "
         "bootstrap over rounds\n(blocks of %zu and %zu rounds); "
         "\"different\" when it lies wholly beyond 10 %%\neither way.\n",
         r[0].na, r[0].nb, r[0].block_a, r[0].block_b);
}

static void print_json(const side_t *a, const side_t *b,
                       const dp_fleetstat_ratio_t *r) {
  static const char *const probe[NGROUPS] = {"randread-qd1", "randread-qd32",
                                             "seqread"};
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "a", dp_cli_json_str(a->name));
  dp_cli_json_set(o, "b", dp_cli_json_str(b->name));
  json_t *rs = dp_cli_json_array();
  for (size_t i = 0; i < NROWS; i++) {
    json_t *x = dp_cli_json_object();
    dp_cli_json_set(x, "figure", dp_cli_json_str(rows[i].key));
    dp_cli_json_set(x, "unit", dp_cli_json_str(rows[i].unit));
    dp_cli_json_set(x, "a", dp_cli_json_num(r[i].a));
    dp_cli_json_set(x, "b", dp_cli_json_num(r[i].b));
    dp_cli_json_set(x, "ratio", dp_cli_json_num(r[i].ratio));
    json_t *ci = dp_cli_json_array();
    dp_cli_json_append(ci, dp_cli_json_num(r[i].lo));
    dp_cli_json_append(ci, dp_cli_json_num(r[i].hi));
    dp_cli_json_set(x, "ci95", ci);
    dp_cli_json_set(x, "rounds_a", dp_cli_json_uint(r[i].na));
    dp_cli_json_set(x, "rounds_b", dp_cli_json_uint(r[i].nb));
    dp_cli_json_set(x, "verdict",
                    dp_cli_json_str(dp_fleetstat_verdict_name(r[i].verdict)));
    dp_cli_json_set(x, "probe", dp_cli_json_str(probe[rows[i].group]));
    dp_cli_json_append(rs, x);
  }
  dp_cli_json_set(o, "rows", rs);
  size_t order[NROWS], n = separations(r, order);
  json_t *sep = dp_cli_json_array();
  for (size_t k = 0; k < n; k++) {
    const dp_fleetstat_ratio_t *x = &r[order[k]];
    json_t *e = dp_cli_json_object();
    dp_cli_json_set(e, "figure", dp_cli_json_str(rows[order[k]].key));
    dp_cli_json_set(e, "factor", dp_cli_json_num(factor(x)));
    dp_cli_json_set(e, "b_is",
                    dp_cli_json_str(b_lower(x) ? "lower" : "higher"));
    dp_cli_json_set(e, "verdict",
                    dp_cli_json_str(dp_fleetstat_verdict_name(x->verdict)));
    dp_cli_json_append(sep, e);
  }
  dp_cli_json_set(o, "separations", sep);
  dp_cli_json_set(o, "method",
                  dp_cli_json_str("circular block bootstrap of the ratio, "
                                  "blocks of n^(1/3) rounds, 2000 resamples, "
                                  "fixed seed; different beyond 10%"));
  dp_cli_json_print(stdout, o, DP_CLI_JSON_INDENTED);
}

static int compare_sides(int json, side_t *a, side_t *b) {
  dp_fleetstat_ratio_t r[NROWS];
  for (size_t i = 0; i < NROWS; i++) {
    const dp_rrdin_values_t *x = &a->s[rows[i].series];
    const dp_rrdin_values_t *y = &b->s[rows[i].series];
    if (dp_fleetstat_compare(NULL, rows[i].kind, x->v, x->n, y->v, y->n,
                             &r[i]) != 0)
      return oom();
  }
  if (json)
    print_json(a, b, r);
  else
    print_text(a, b, r);
  return fflush(stdout) == 0 ? 0 : 2;
}

/* ---- options ------------------------------------------------------------ */

typedef struct {
  int json;
  const char *rrd;
  dp_promin_conf_t prom;
  double since_s;
} opts_t;

static const char *const compare_usage[] = {
    "[--format text|json] FILE_A FILE_B",
    "--rrd DIR [--since 24h] [--format text|json] A B",
    "--prometheus URL [--prometheus-limit SIZE] [--since 24h] [--format ...] "
    "A B",
    NULL};
static const dp_cli_opt_help_t compare_opts[] = {
    {"--rrd DIR",
     "read the sides from a central collectd server's RRD tree; A and B are "
     "each HOST, HOST/TARGET or class:NAME"},
    {"--prometheus URL",
     "read the sides from a Prometheus-compatible HTTP API instead (the "
     "series fleet reads); A and B as with --rrd"},
    {"--prometheus-limit SIZE",
     "with --prometheus: the largest answer read; a larger one is asked "
     "for again in parts of the window (default 64M)"},
    {"--since DURATION",
     "with --rrd or --prometheus: the window up to now (default 24h)"},
    {"--format text|json",
     "the largest separations first, then the table (text, the default), or "
     "one JSON object"},
    {NULL, NULL}};
static const char *const compare_examples[] = {
    "diskprobe compare before.jsonl after.jsonl",
    "diskprobe compare --rrd /var/lib/collectd/rrd --since 6h db1/data "
    "db2/data",
    "diskprobe compare --rrd /var/lib/collectd/rrd class:SSD-A db3",
    "diskprobe compare --prometheus http://prometheus:9090 db1/data db2/data",
    "diskprobe compare --prometheus http://vm:8428 class:SSD-A db3",
    NULL};
const dp_cli_help_t dp_cli_help_compare = {
    "compare",
    "what separates two disks, hosts or classes, beyond noise",
    0,
    compare_usage,
    compare_opts,
    "Without --rrd, FILE_A and FILE_B are recordings of diskprobe watch "
    "--format json (- for standard input). The first lines name the figures "
    "that separate B from A most (IOPS, mean and p50 latency at QD1 and "
    "QD32, sequential MB/s), largest first; the table then gives per probe "
    "depth each side's figure, the ratio B/A, its 95 % interval (a block "
    "bootstrap over rounds) and a verdict: different (the whole interval "
    "beyond 10 % either way), within noise, or too few rounds (under 5). "
    "With --rrd, a file that is not a regular file or that librrd cannot "
    "read is skipped with a line on stderr; a side with no readable file is "
    "an error. With --prometheus, an answer that cannot be had is one line "
    "naming the URL and why. Exit status: 0 when both sides were read, 2 on "
    "bad usage or unreadable input.",
    compare_examples};

static int usage(FILE *f, int rc) {
  if (f == stdout)
    dp_cli_help(f, &dp_cli_help_compare);
  else
    dp_cli_help_usage(f, &dp_cli_help_compare);
  return rc;
}

/* Options; 0 to go on, else the exit status + 1. */
static int compare_options(int argc, char **argv, opts_t *o) {
  static const struct option opts[] = {
      {"since", required_argument, NULL, 's'},
      {"format", required_argument, NULL, 'f'},
      {"rrd", required_argument, NULL, 'r'},
      {"prometheus", required_argument, NULL, 'p'},
      {"prometheus-limit", required_argument, NULL, 'l'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      if (dp_cli_since(CMD, optarg, &o->since_s) != 0)
        return 3;
      break;
    case 'f':
      if ((o->json = dp_cli_format(optarg)) < 0) {
        fprintf(stderr, "diskprobe " CMD ": --format: text or json\n");
        return 3;
      }
      break;
    case 'r':
      o->rrd = optarg;
      break;
    case 'p':
      o->prom.url = optarg;
      break;
    case 'l':
      if (dp_cli_prometheus_limit(CMD, optarg, &o->prom.max_bytes) != 0)
        return 3;
      break;
    case 'h':
      return usage(stdout, 0) + 1;
    default:
      return usage(stderr, 2) + 1;
    }
  }
  if (optind != argc - 2)
    return usage(stderr, 2) + 1;
  if (o->rrd != NULL && o->prom.url != NULL) {
    fprintf(stderr, "diskprobe " CMD ": --rrd or --prometheus, not both\n");
    return 3;
  }
  return 0;
}

static void side_free(side_t *sd) {
  for (int k = 0; k < DP_RRDIN_NSERIES; k++)
    free(sd->s[k].v);
}

int dp_cmd_compare(int argc, char **argv) {
  opts_t o = {.since_s = 86400,
              .prom = {.max_bytes = DP_PROMIN_MAX_BYTES_DEFAULT}};
  int rc = compare_options(argc, argv, &o);
  if (rc != 0)
    return rc - 1;
  side_t a = {.name = argv[optind]}, b = {.name = argv[optind + 1]};
  if (o.rrd != NULL) {
    dp_rrdin_target_t *t = NULL;
    dp_rrdin_skips_t sk = {0};
    size_t nt = 0;
    time_t now = time(NULL), start = now - (time_t)o.since_s;
    rc = dp_rrdin_scan(CMD, o.rrd, &t, &nt, &sk);
    if (rc == 0)
      rc = side_from_rrd(&a, o.rrd, t, nt, start, now, &sk);
    if (rc == 0)
      rc = side_from_rrd(&b, o.rrd, t, nt, start, now, &sk);
    free(t);
    dp_rrdin_skips_free(&sk);
  } else if (o.prom.url != NULL) {
    time_t now = time(NULL);
    rc = sides_from_prom(&a, &b, &o.prom, now - (time_t)o.since_s, now);
  } else {
    rc = side_from_file(&a);
    if (rc == 0)
      rc = side_from_file(&b);
  }
  if (rc == 0)
    rc = compare_sides(o.json, &a, &b);
  side_free(&a);
  side_free(&b);
  return rc;
}
