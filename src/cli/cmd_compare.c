/*
 * cmd_compare.c - `diskprobe compare`: two sides' probe rounds side by
 * side, the table the seeds of this project drew with HD Tune, DiskTT and
 * Sandra -- access time, 8 KiB IOPS at queue depth 1 and 32, minimum,
 * average and maximum sequential MB/s -- with the ratio B/A, its 95 %
 * interval and a verdict per row: "different" or "within noise".
 *
 *   diskprobe compare [--format text|json] FILE_A FILE_B
 *   diskprobe compare --rrd DIR [--since 24h] [--format text|json] A B
 *
 * Sides: two recordings of `diskprobe watch --format json` (its probe
 * lines, read as `diskprobe replay` reads them; every target of a file
 * counts; stalled rounds and probes that completed nothing are left out),
 * or, with --rrd, a central server's RRD tree (rrd_input.h) and
 * A, B each one of HOST (every target of the host), HOST/TARGET, or
 * class:NAME (every target whose disk is of that class), the rows between
 * now - since and now. A side of several targets pools their rounds.
 *
 * Per round: randread-qd1's p50 and mean latency and IOPS, randread-qd32's
 * IOPS, seqread's bytes/s (from a recording: "bytes_per_second", or in
 * older lines without it the IOPS times the default seqread block, 1 MiB). The
 * row's figure is the median of the rounds' p50s, the mean of the other
 * per-round values, the least and the largest sequential rate (fleetstat.h: the
 * interval is a circular block bootstrap over rounds, blocks of
 * n^(1/3) rounds because rounds on a shared disk are autocorrelated;
 * "different" when the whole interval lies beyond 10 % either way; "too
 * few rounds" under 5; the min and max rows' intervals are rough).
 *
 * Exit 0 when both sides were read, 2 on bad usage or unreadable input
 * (one line on stderr).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "fleetstat.h"
#include "jsonl.h"
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

static const struct {
  const char *key, *label, *unit;
  int series;
  dp_fleetstat_kind_t kind;
  double scale; /* into the displayed unit */
  const char *shown;
} rows[] = {
    {"qd1_p50_s", "access time, QD1 p50", "s", DP_RRDIN_QD1_P50_S,
     DP_FLEETSTAT_MEDIAN, 1e3, "ms"},
    {"qd1_mean_s", "access time, QD1 mean", "s", DP_RRDIN_QD1_MEAN_S,
     DP_FLEETSTAT_MEAN, 1e3, "ms"},
    {"qd1_iops", "8 KiB IOPS, QD1", "1/s", DP_RRDIN_QD1_IOPS, DP_FLEETSTAT_MEAN,
     1, "I/O/s"},
    {"qd32_iops", "8 KiB IOPS, QD32", "1/s", DP_RRDIN_QD32_IOPS,
     DP_FLEETSTAT_MEAN, 1, "I/O/s"},
    {"seq_min_bytes_per_s", "sequential, min", "bytes/s", DP_RRDIN_SEQ_BPS,
     DP_FLEETSTAT_MIN, 1e-6, "MB/s"},
    {"seq_avg_bytes_per_s", "sequential, avg", "bytes/s", DP_RRDIN_SEQ_BPS,
     DP_FLEETSTAT_MEAN, 1e-6, "MB/s"},
    {"seq_max_bytes_per_s", "sequential, max", "bytes/s", DP_RRDIN_SEQ_BPS,
     DP_FLEETSTAT_MAX, 1e-6, "MB/s"},
};
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
                         time_t end) {
  size_t matched = 0;
  for (size_t i = 0; i < nt; i++) {
    if (!spec_has(sd->name, &t[i]))
      continue;
    time_t newest;
    int rc = dp_rrdin_target_values(CMD, &t[i], start, end, sd->s, &newest);
    if (rc != 0)
      return rc;
    matched++;
  }
  if (matched == 0) {
    fprintf(stderr,
            "diskprobe " CMD ": %s: no such HOST, HOST/TARGET or class:NAME "
            "in %s\n",
            sd->name, root);
    return 2;
  }
  return 0;
}

/* ---- the table ---------------------------------------------------------- */

static void print_text(const side_t *a, const side_t *b,
                       const dp_fleetstat_ratio_t *r) {
  printf("A: %s\nB: %s\n", a->name, b->name);
  printf("%-24s %12s %12s %8s %17s  %s\n", "", "A", "B", "B/A", "95% interval",
         "verdict");
  for (size_t i = 0; i < NROWS; i++) {
    char label[64], ci[40];
    snprintf(label, sizeof(label), "%s (%s)", rows[i].label, rows[i].shown);
    if (isfinite(r[i].lo))
      snprintf(ci, sizeof(ci), "%.3f - %.3f", r[i].lo, r[i].hi);
    else
      snprintf(ci, sizeof(ci), "-");
    printf("%-24s %12.4g %12.4g %8.3f %17s  %s\n", label,
           r[i].a * rows[i].scale, r[i].b * rows[i].scale, r[i].ratio, ci,
           dp_fleetstat_verdict_name(r[i].verdict));
  }
  printf("rounds: A %zu, B %zu (randread-qd1); interval: circular block "
         "bootstrap over rounds (blocks of %zu and %zu rounds), "
         "\"different\" when it lies wholly beyond 10 %% either way\n",
         r[0].na, r[0].nb, r[0].block_a, r[0].block_b);
}

static void print_json(const side_t *a, const side_t *b,
                       const dp_fleetstat_ratio_t *r) {
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
    dp_cli_json_append(rs, x);
  }
  dp_cli_json_set(o, "rows", rs);
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
  double since_s;
} opts_t;

static const char *const compare_usage[] = {
    "[--format text|json] FILE_A FILE_B",
    "--rrd DIR [--since 24h] [--format text|json] A B", NULL};
static const dp_cli_opt_help_t compare_opts[] = {
    {"--rrd DIR",
     "read the sides from a central collectd server's RRD tree; A and B are "
     "each HOST, HOST/TARGET or class:NAME"},
    {"--since DURATION", "with --rrd: the window up to now (default 24h)"},
    {"--format text|json",
     "the largest separations first, then the table (text, the default), or "
     "one JSON object"},
    {NULL, NULL}};
static const char *const compare_examples[] = {
    "diskprobe compare before.jsonl after.jsonl",
    "diskprobe compare --rrd /var/lib/collectd/rrd --since 6h db1/data "
    "db2/data",
    "diskprobe compare --rrd /var/lib/collectd/rrd class:SSD-A db3", NULL};
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
    "Exit status: 0 when both sides were read, 2 on bad usage or unreadable "
    "input.",
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
  static const struct option opts[] = {{"since", required_argument, NULL, 's'},
                                       {"format", required_argument, NULL, 'f'},
                                       {"rrd", required_argument, NULL, 'r'},
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
    case 'h':
      return usage(stdout, 0) + 1;
    default:
      return usage(stderr, 2) + 1;
    }
  }
  if (optind != argc - 2)
    return usage(stderr, 2) + 1;
  return 0;
}

static void side_free(side_t *sd) {
  for (int k = 0; k < DP_RRDIN_NSERIES; k++)
    free(sd->s[k].v);
}

int dp_cmd_compare(int argc, char **argv) {
  opts_t o = {.since_s = 86400};
  int rc = compare_options(argc, argv, &o);
  if (rc != 0)
    return rc - 1;
  side_t a = {.name = argv[optind]}, b = {.name = argv[optind + 1]};
  if (o.rrd != NULL) {
    dp_rrdin_target_t *t = NULL;
    size_t nt = 0;
    time_t now = time(NULL), start = now - (time_t)o.since_s;
    rc = dp_rrdin_scan(CMD, o.rrd, &t, &nt);
    if (rc == 0)
      rc = side_from_rrd(&a, o.rrd, t, nt, start, now);
    if (rc == 0)
      rc = side_from_rrd(&b, o.rrd, t, nt, start, now);
    free(t);
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
