/*
 * cmd_failslow.c - `diskprobe failslow`: recorded per-disk throughput and
 * latency of the device view through the fail-slow detector the plugin
 * runs (failslow.h, fed as src/peers.c feeds it), in time order, as the
 * plugin would have seen it live.
 *
 *   diskprobe failslow [--format text|json] [--drives] [--trace] [tuning]
 *                      (--collectd-csv DIR | --devview-json FILE)...
 *
 * Inputs (each option may be given more than once; sources are run in
 * the order given). Every reader produces the same internal form
 * (failslow_input.h: per host, per disk, time-ordered samples of
 * throughput and average latency per I/O) and the detector runs only over
 * that:
 *
 *   --collectd-csv DIR: collectd's csv plugin's DataDir (or one host's
 *   directory in it). A host is a directory holding diskprobe-dev-DISK
 *   directories (the plugin's device view); in each, the series files
 *   TYPE-TYPE_INSTANCE-YYYY-MM-DD (any number of days) of
 *     bytes_per_second-read, bytes_per_second-write (bytes/s),
 *     operations_per_second-read, operations_per_second-write (I/Os/s),
 *     latency-read_await, latency-write_await (seconds),
 *   lines "epoch,value" (Unix seconds 0 to 1e11, fractions allowed; a
 *   first line not starting with a digit, collectd's "epoch,value", is a
 *   header; a value that is no number, e.g. "nan", is missing; a number
 *   outside the figure's range below is refused). Other files are
 *   ignored.
 *
 *   --devview-json FILE ("-": stdin): JSON lines, one object per disk and
 *   interval:
 *     {"time": 1658149215, "host": "node1", "device": "sda",
 *      "read_bytes_per_s": 1.2e7, "write_bytes_per_s": 3.4e6,
 *      "reads_per_s": 95.0, "writes_per_s": 20.5,
 *      "read_await_s": 0.0041, "write_await_s": 0.0009}
 *   (numbers, or null for a missing one; "host" defaults to "localhost";
 *   other keys are ignored, and a line with none of the six figures is
 *   skipped). `diskprobe watch --format json`'s output is read as it is:
 *   its device-view lines name the disk in "device_view" and the figures
 *   by the catalogue's names ("bytes_per_second-read", ...,
 *   "latency-write_await"), which are taken as the keys above; its probe
 *   and verdict lines carry none of them and are skipped. Parsed by
 *   jansson (jsonl.h): any key order and whitespace, an object over many
 *   lines as `jq .` prints it. Refused with the file and line (exit 2):
 *   anything but an object, duplicate keys, a figure under both names,
 *   a number jansson cannot hold (1e400), a figure that is no number or
 *   null ("nan", true) or out of range (bytes/s 0 to 1e15, I/Os per
 *   second 0 to 1e10, awaits 0 to 86400 s), a time outside 0 to 1e11, no
 *   "device".
 *
 *   Both readers take records (lines; a JSON object's lines) of at most
 *   1 MiB: a longer one is refused at the limit, "FILE: line N: longer
 *   than 1048576 bytes", without reading the rest.
 *
 * Per disk and time, as src/peers.c feeds the plugin's detector: the
 * throughput is read + write bytes/s; the latency the read and write
 * awaits weighted by reads/s and writes/s, or the one await given when the
 * other is missing (a side without I/O in the interval has none: the
 * operation counts are then not needed). Peer groups: without sysfs facts
 * (media class, model) a host's whole disks are one peer group; dm-*,
 * md* and partitions by name (sda1, vdb2, xvda1, nvme0n1p1, mmcblk0p2)
 * are left out, as peers.c leaves them out by sysfs. Disks are listed in
 * version order (sdb before sdaa, nvme2n1 before nvme10n1).
 *
 * Time: a host's samples are taken in time order; the interval is the
 * smallest step between its timestamps; a gap of up to a window is fed
 * as missing intervals (a window that closes in them is reported like any
 * other), a longer one (e.g. the public research data,
 * 13:00-16:00 of each day) is closed up: the detector keeps its state
 * across it, as a plugin that saw no samples overnight would.
 *
 * The public research dataset (Perseus, kratos-failslow) is not read
 * here: tests/oracles/failslow/perseus_to_csv.py converts it into a
 * --collectd-csv tree.
 *
 * Output: --format json prints one object per line for each disk when it
 * is first flagged, {"host":..., "disk":..., "first_flag_ts":...,
 * "slowdown":...}, and nothing else; text prints flags and clears in words
 * and a line per host (--drives: a line per disk with its largest score;
 * --trace: first a line per host "conf HOST step=S window_steps=N ...
 * flag_ratio=R ... day_ratio=R", the detector's parameters as it ran
 * (defaults scaled to the interval, then the flags), then at every window
 * closed a line per disk "trace HOST DISK TS WINDOW_SLOWDOWN SCORE
 * LONG_SCORE LONG_Z PERSIST DAY PEERS FLAGGED", the verdict's fields, for
 * studying the rules: contrib/evaluation/failslow/).
 * Exit 0 when the input was read, 2 on bad usage or unreadable input (one
 * line on stderr).
 *
 * Tuning flags (defaults are the detector's, failslow.h): --flag-ratio R,
 * --clear-ratio R, --window-steps N, --model-windows N, --score-windows N,
 * --min-score-windows N, --clear-windows N, --long-windows N,
 * --long-ratio R, --long-z Z, --persist-ratio R, --day-windows N,
 * --day-ratio R.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "failslow.h"
#include "failslow_input.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int json; /* --devview-json, else --collectd-csv */
  const char *path;
} source_t;

typedef struct {
  int json, drives, trace;
  dp_failslow_conf_t conf;
  unsigned set_window, set_model, set_score, set_min_score, set_clear;
  double set_flag, set_clear_ratio, set_long_ratio, set_long_z, set_persist;
  double set_day_ratio;
  unsigned set_long, set_day;
  source_t *src;
  size_t nsrc;
  int quiet;         /* print nothing (with json set) ... */
  int64_t *to_first; /* ... and hand over the first flags */
  double *to_maxs;   /* and the largest scores */
} opts_t;

static int fail_line(const char *what) {
  fprintf(stderr, "diskprobe failslow: %s\n", what);
  return 2;
}

static void fmt_utc(int64_t ts, char *buf, size_t len) {
  time_t t = (time_t)ts;
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* The interval: the smallest step between h's (sorted) timestamps; 15 s
 * when there is none. */
static double host_step(const dp_fsinput_host_t *h) {
  double step = 0;
  for (size_t i = 1; i < h->n; i++) {
    double dt = h->s[i].t_s - h->s[i - 1].t_s;
    if (dt > 0 && (step == 0 || dt < step))
      step = dt;
  }
  return step > 0 ? step : 15;
}

/* The detector's parameters for a host: the defaults scaled to its
 * interval, then the flags. 0, or 2 after one line. */
static int host_conf(const opts_t *o, double step, dp_failslow_conf_t *c) {
  *c = o->conf;
  if (dp_failslow_conf_for_interval(c, step) != 0)
    return fail_line("interval out of range");
  if (o->set_window) {
    c->window_steps = o->set_window;
    c->min_valid_steps = (c->window_steps + 1) / 2;
  }
  if (o->set_model)
    c->model_windows = o->set_model;
  if (o->set_score)
    c->score_windows = o->set_score;
  if (o->set_min_score)
    c->min_score_windows = o->set_min_score;
  if (o->set_clear)
    c->clear_windows = o->set_clear;
  if (o->set_flag > 0)
    c->flag_ratio = o->set_flag;
  if (o->set_clear_ratio > 0)
    c->clear_ratio = o->set_clear_ratio;
  if (o->set_long)
    c->long_windows = o->set_long;
  if (o->set_long_ratio > 0)
    c->long_ratio = o->set_long_ratio;
  if (o->set_long_z > 0)
    c->long_z = o->set_long_z;
  if (o->set_persist > 0)
    c->persist_ratio = o->set_persist;
  if (o->set_day)
    c->day_windows = o->set_day;
  if (o->set_day_ratio > 0)
    c->day_ratio = o->set_day_ratio;
  if (c->min_score_windows > c->score_windows)
    c->min_score_windows = c->score_windows;
  return 0;
}

/* One host's run: its detector, the last verdicts and what is reported. */
typedef struct {
  const opts_t *o;
  const dp_fsinput_host_t *h;
  dp_failslow_t *d;
  dp_failslow_verdict_t *v;
  int64_t *first; /* first flag, Unix seconds; -1: never */
  double *maxs;   /* largest score */
  unsigned flagged;
  uint64_t steps;
} run_t;

/* A host's or disk's name in text: escaped (cli.h). */
#define VIS(s, buf) dp_cli_visible((s), (buf), sizeof(buf))

static void print_conf(const run_t *r, const dp_failslow_conf_t *c,
                       double step) {
  char host[DP_CLI_VISIBLE_NAME];
  printf("conf %s step=%g window_steps=%u score_windows=%u "
         "long_windows=%u day_windows=%u flag_ratio=%g clear_ratio=%g "
         "long_ratio=%g long_z=%g persist_ratio=%g day_ratio=%g\n",
         VIS(r->h->name, host), step, c->window_steps, c->score_windows,
         c->long_windows, c->day_windows, c->flag_ratio, c->clear_ratio,
         c->long_ratio, c->long_z, c->persist_ratio, c->day_ratio);
}

/* A first flag in JSON. */
static void print_flag_json(const run_t *r, size_t i, int64_t ts) {
  const dp_failslow_verdict_t *v = &r->v[i];
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "host", dp_cli_json_str(r->h->name));
  dp_cli_json_set(o, "disk", dp_cli_json_str(r->h->disks[i]));
  dp_cli_json_set(o, "first_flag_ts", dp_cli_json_int(ts));
  dp_cli_json_set(o, "slowdown",
                  dp_cli_json_sig(v->rule == DP_FAILSLOW_RULE_SUSTAINED
                                      ? v->slowdown_long
                                      : v->slowdown,
                                  4));
  dp_cli_json_print(stdout, o, DP_CLI_JSON_SPACED);
}

/* A flag or a clear in words. */
static void print_change_text(const run_t *r, size_t i, int64_t ts) {
  char when[64], desc[512], host[DP_CLI_VISIBLE_NAME],
      disk[DP_CLI_VISIBLE_NAME];
  fmt_utc(ts, when, sizeof(when));
  dp_failslow_describe(r->d, i, &r->v[i], desc, sizeof(desc));
  printf("%s %s: %s at %s (%.1f h after the host's first sample): %s\n",
         VIS(r->h->name, host), VIS(r->h->disks[i], disk),
         r->v[i].flagged ? "FLAGGED" : "cleared", when,
         ((double)ts - r->h->s[0].t_s) / 3600.0, desc);
}

/* What a closed window shows: trace lines, the largest scores, flags and
 * clears. */
static void report_window(run_t *r, double t) {
  const opts_t *o = r->o;
  const dp_fsinput_host_t *h = r->h;
  int64_t ts = (int64_t)llround(t);
  char host[DP_CLI_VISIBLE_NAME], disk[DP_CLI_VISIBLE_NAME];
  if (o->trace && !o->json)
    for (size_t i = 0; i < h->ndisks; i++) {
      const dp_failslow_verdict_t *v = &r->v[i];
      printf("trace %s %s %lld %.4f %.4f %.4f %.2f %.4f %.4f %u %d\n",
             VIS(h->name, host), VIS(h->disks[i], disk), (long long)ts,
             v->window_slowdown, v->slowdown, v->slowdown_long, v->z_long,
             v->slowdown_persist, v->slowdown_day, v->peers, v->flagged);
    }
  for (size_t i = 0; i < h->ndisks; i++) {
    const dp_failslow_verdict_t *v = &r->v[i];
    if (!isnan(v->slowdown) && !(v->slowdown <= r->maxs[i]))
      r->maxs[i] = v->slowdown;
    if (!v->changed)
      continue;
    if (v->flagged && r->first[i] < 0) {
      r->first[i] = ts;
      r->flagged++;
      if (o->json && !o->quiet)
        print_flag_json(r, i, ts);
    }
    if (!o->json)
      print_change_text(r, i, ts);
  }
}

/* Feeds h's samples in time order, one interval per distinct time: a
 * short gap as missing intervals, a long one closed up. */
static void feed_samples(run_t *r, double step, unsigned window_steps) {
  const dp_fsinput_host_t *h = r->h;
  double prev = h->s[0].t_s;
  for (size_t k = 0; k < h->n;) {
    double ts = h->s[k].t_s;
    /* whole steps in the gap (a hundredth of one tolerated: jitter) */
    int64_t gap = (int64_t)floor((ts - prev) / step + 0.01) - 1;
    /* a window that closes in the gap is reported like any other: a
     * drive flagged there would otherwise never be printed */
    if (gap > 0 && gap <= (int64_t)window_steps)
      for (int64_t g = 0; g < gap; g++) {
        double tg = prev + (double)(g + 1) * step;
        r->steps++;
        if (dp_failslow_step(r->d, tg, r->v))
          report_window(r, tg);
      }
    for (; k < h->n && h->s[k].t_s == ts; k++)
      dp_failslow_feed(r->d, h->s[k].disk, h->s[k].throughput_bps,
                       h->s[k].latency_s);
    prev = ts;
    r->steps++;
    if (dp_failslow_step(r->d, ts, r->v))
      report_window(r, ts);
  }
}

static void print_summary(run_t *r) {
  const dp_fsinput_host_t *h = r->h;
  char host[DP_CLI_VISIBLE_NAME], disk[DP_CLI_VISIBLE_NAME];
  if (r->o->drives)
    for (size_t i = 0; i < h->ndisks; i++) {
      dp_failslow_verdict(r->d, i, &r->v[i]);
      printf("  %s %s: largest score %.3f, last %.3f, %s\n", VIS(h->name, host),
             VIS(h->disks[i], disk), r->maxs[i], r->v[i].slowdown,
             r->first[i] >= 0 ? "flagged" : "not flagged");
    }
  printf("%s: %zu drives, %llu intervals, %u flagged\n", VIS(h->name, host),
         h->ndisks, (unsigned long long)r->steps, r->flagged);
}

/* Runs the detector over h in time order, printing as it goes. 0 or 2. */
static int run_host(const opts_t *o, dp_fsinput_host_t *h) {
  dp_fsinput_sort(h);
  double step = host_step(h);
  dp_failslow_conf_t c;
  if (host_conf(o, step, &c) != 0)
    return 2;
  run_t r = {.o = o, .h = h};
  int e = dp_failslow_new(&r.d, &c, h->ndisks);
  if (e != 0)
    return fail_line(e == -ENOMEM ? "out of memory"
                                  : "invalid detector parameters");
  for (size_t i = 0; i < h->ndisks; i++)
    dp_failslow_set_device(r.d, i, h->disks[i]);
  r.v = calloc(h->ndisks, sizeof(*r.v));
  r.first = malloc(h->ndisks * sizeof(*r.first));
  r.maxs = malloc(h->ndisks * sizeof(*r.maxs));
  int rc = 0;
  if (r.v == NULL || r.first == NULL || r.maxs == NULL) {
    rc = fail_line("out of memory");
  } else {
    for (size_t i = 0; i < h->ndisks; i++) {
      r.first[i] = -1;
      r.maxs[i] = NAN;
    }
    if (o->trace && !o->json)
      print_conf(&r, &c, step);
    feed_samples(&r, step, c.window_steps);
    if (!o->json)
      print_summary(&r);
    fflush(stdout);
    if (o->quiet) {
      memcpy(o->to_first, r.first, h->ndisks * sizeof(*r.first));
      memcpy(o->to_maxs, r.maxs, h->ndisks * sizeof(*r.maxs));
    }
  }
  free(r.v);
  free(r.first);
  free(r.maxs);
  dp_failslow_free(r.d);
  return rc;
}

static int parse_unsigned(const char *flag, const char *arg, unsigned *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(arg, &end, 10);
  if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 || v < 1 ||
      v > DP_FAILSLOW_WINDOW_MAX) {
    fprintf(stderr, "diskprobe failslow: invalid %s '%s' (1 to %d)\n", flag,
            arg, DP_FAILSLOW_WINDOW_MAX);
    return -1;
  }
  *out = (unsigned)v;
  return 0;
}

static int parse_ratio(const char *flag, const char *arg, double *out) {
  char *end;
  double v = strtod(arg, &end);
  if (end == arg || *end != '\0' || !(v >= 1.0) || v > 100) {
    fprintf(stderr, "diskprobe failslow: invalid %s '%s' (1 to 100)\n", flag,
            arg);
    return -1;
  }
  *out = v;
  return 0;
}

static const char *const fs_usage[] = {
    "[--format text|json] [--drives] [--trace] [tuning] "
    "(--collectd-csv DIR | --devview-json FILE)...",
    NULL};
static const dp_cli_opt_help_t fs_opts[] = {
    {"--collectd-csv DIR",
     "collectd's csv DataDir (or a host's directory in it) with the device "
     "view's series: diskprobe-dev-DISK/ bytes_per_second-*, "
     "operations_per_second-*, latency-*"},
    {"--devview-json FILE",
     "JSON lines {time, host, device, read_bytes_per_s, write_bytes_per_s, "
     "reads_per_s, writes_per_s, read_await_s, write_await_s}, or watch's "
     "device-view lines as they are (- for standard input)"},
    {"--format text|json",
     "flags and clears in words and a line per host (text, the default), or "
     "one JSON object per disk when it is first flagged"},
    {"--drives", "text: a line per disk with its largest score"},
    {"--trace", "text: the detector's parameters, then every window's "
                "verdict per disk"},
    {"--flag-ratio R", "tuning: flag at this 2-hour score (1.9)"},
    {"--clear-ratio R", "clear below this score (1.4)"},
    {"--window-steps N", "intervals per window (20, scaled to 5 min)"},
    {"--model-windows N", "windows of peers' points for the model (12)"},
    {"--score-windows N", "windows in the 2-hour score's median (24)"},
    {"--min-score-windows N", "valid windows before a score (12)"},
    {"--clear-windows N", "windows below --clear-ratio to clear (6)"},
    {"--long-windows N", "windows in the long score (144)"},
    {"--long-ratio R", "the sustained rule's long score (1.1)"},
    {"--long-z Z", "and robust deviations above the peers (40)"},
    {"--persist-ratio R", "the persistent rule: every block's median (1.25)"},
    {"--day-windows N", "the persistent rule's day horizon (288)"},
    {"--day-ratio R", "every block of it at least this (1.14)"},
    {NULL, NULL}};
static const char *const fs_examples[] = {
    "diskprobe failslow --collectd-csv /var/lib/collectd/csv",
    "diskprobe watch --format json /dev/sdb | diskprobe failslow "
    "--devview-json -",
    "diskprobe failslow --drives --flag-ratio 1.5 --devview-json view.jsonl",
    NULL};
const dp_cli_help_t dp_cli_help_failslow = {
    "failslow",
    "recorded per-disk series through the fail-slow detector",
    0,
    fs_usage,
    fs_opts,
    "Each input may be given more than once; a host's whole disks (not "
    "partitions, dm or md) are one peer group. Defaults of the tuning flags "
    "are the detector's (src/failslow.h), scaled to the data's interval. "
    "Exit status: 0 when the input was read, 2 on bad usage or unreadable "
    "input.",
    fs_examples};

enum {
  O_FMT = 1,
  O_DRIVES,
  O_TRACE,
  O_FR,
  O_CR,
  O_WS,
  O_MW,
  O_SW,
  O_MSW,
  O_CW,
  O_LW,
  O_LR,
  O_LZ,
  O_PR,
  O_DW,
  O_DR,
  O_CSV,
  O_JSONL
};

static int add_source(opts_t *o, int json, const char *path) {
  void *p = realloc(o->src, (o->nsrc + 1) * sizeof(*o->src));
  if (p == NULL)
    return fail_line("out of memory");
  o->src = p;
  o->src[o->nsrc++] = (source_t){json, path};
  return 0;
}

/* One option getopt returned into o: 0, -1 for --help (usage printed), or
 * the exit status 2 after one line. */
static int apply_option(opts_t *o, int ch, char **argv) {
  int bad = 0;
  switch (ch) {
  case O_FMT:
    o->json = dp_cli_format(optarg);
    if (o->json < 0) {
      fprintf(stderr,
              "diskprobe failslow: invalid --format '%s' (text or json)\n",
              optarg);
      return 2;
    }
    return 0;
  case O_DRIVES:
    o->drives = 1;
    return 0;
  case O_TRACE:
    o->trace = 1;
    return 0;
  case O_CSV:
  case O_JSONL:
    return add_source(o, ch == O_JSONL, optarg);
  case O_FR:
    bad = parse_ratio("--flag-ratio", optarg, &o->set_flag);
    break;
  case O_CR:
    bad = parse_ratio("--clear-ratio", optarg, &o->set_clear_ratio);
    break;
  case O_WS:
    bad = parse_unsigned("--window-steps", optarg, &o->set_window);
    break;
  case O_MW:
    bad = parse_unsigned("--model-windows", optarg, &o->set_model);
    break;
  case O_SW:
    bad = parse_unsigned("--score-windows", optarg, &o->set_score);
    break;
  case O_MSW:
    bad = parse_unsigned("--min-score-windows", optarg, &o->set_min_score);
    break;
  case O_CW:
    bad = parse_unsigned("--clear-windows", optarg, &o->set_clear);
    break;
  case O_LW:
    bad = parse_unsigned("--long-windows", optarg, &o->set_long);
    break;
  case O_LR:
    bad = parse_ratio("--long-ratio", optarg, &o->set_long_ratio);
    break;
  case O_LZ:
    bad = parse_ratio("--long-z", optarg, &o->set_long_z);
    break;
  case O_PR:
    bad = parse_ratio("--persist-ratio", optarg, &o->set_persist);
    break;
  case O_DW:
    bad = parse_unsigned("--day-windows", optarg, &o->set_day);
    break;
  case O_DR:
    bad = parse_ratio("--day-ratio", optarg, &o->set_day_ratio);
    break;
  case 'h':
    dp_cli_help(stdout, &dp_cli_help_failslow);
    return -1;
  default:
    return dp_cli_getopt_error("failslow", ch, argv);
  }
  return bad ? 2 : 0;
}

/* Step 1: the options into o. 0, -1 after --help, or the exit status. */
static int parse_options(opts_t *o, int argc, char **argv) {
  static const struct option lo[] = {
      {"format", required_argument, NULL, O_FMT},
      {"drives", no_argument, NULL, O_DRIVES},
      {"trace", no_argument, NULL, O_TRACE},
      {"collectd-csv", required_argument, NULL, O_CSV},
      {"devview-json", required_argument, NULL, O_JSONL},
      {"flag-ratio", required_argument, NULL, O_FR},
      {"clear-ratio", required_argument, NULL, O_CR},
      {"window-steps", required_argument, NULL, O_WS},
      {"model-windows", required_argument, NULL, O_MW},
      {"score-windows", required_argument, NULL, O_SW},
      {"min-score-windows", required_argument, NULL, O_MSW},
      {"clear-windows", required_argument, NULL, O_CW},
      {"long-windows", required_argument, NULL, O_LW},
      {"long-ratio", required_argument, NULL, O_LR},
      {"long-z", required_argument, NULL, O_LZ},
      {"persist-ratio", required_argument, NULL, O_PR},
      {"day-windows", required_argument, NULL, O_DW},
      {"day-ratio", required_argument, NULL, O_DR},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  optind = 1;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    int rc = apply_option(o, ch, argv);
    if (rc != 0)
      return rc;
  }
  return 0;
}

/* Step 2: the options together. 0, or 2 after one line. */
static int check_options(opts_t *o, int argc, char **argv) {
  if (o->set_flag > 0 && o->set_clear_ratio == 0 &&
      o->set_flag < o->conf.clear_ratio)
    o->set_clear_ratio = o->set_flag;
  if (o->set_flag > 0 && o->set_clear_ratio > o->set_flag)
    return fail_line("--clear-ratio must not exceed --flag-ratio");
  if (optind < argc) {
    fprintf(stderr,
            "diskprobe failslow: unexpected argument '%s' (inputs come "
            "with --collectd-csv DIR or --devview-json FILE; the research "
            "layout: tests/oracles/failslow/perseus_to_csv.py)\n",
            argv[optind]);
    return 2;
  }
  if (o->nsrc == 0)
    return fail_line("usage: diskprobe failslow [--format text|json] "
                     "(--collectd-csv DIR | --devview-json FILE)... (no "
                     "input)");
  return 0;
}

/* Step 3: every input must open before anything is printed. 0 or 2. */
static int check_sources(const opts_t *o) {
  for (size_t i = 0; i < o->nsrc; i++) {
    const char *p = o->src[i].path;
    if (o->src[i].json && strcmp(p, "-") == 0)
      continue;
    FILE *f = fopen(p, "r");
    if (f == NULL) {
      fprintf(stderr, "diskprobe failslow: %s: %s\n", p, strerror(errno));
      return 2;
    }
    fclose(f);
  }
  return 0;
}

/* Step 4a: each host of a collectd csv tree, read and run in turn. */
static int run_collectd(const opts_t *o, const char *dir) {
  char **hosts;
  size_t n;
  int rc = dp_fsinput_collectd_hosts(dir, &hosts, &n);
  for (size_t i = 0; i < n; i++) {
    dp_fsinput_host_t h;
    memset(&h, 0, sizeof(h));
    if (rc == 0)
      rc = dp_fsinput_read_collectd(&h, hosts[i]);
    if (rc == 0)
      rc = run_host(o, &h);
    dp_fsinput_host_free(&h);
    free(hosts[i]);
  }
  free(hosts);
  return rc;
}

/* Step 4b: the hosts of a JSON lines file, read whole, run in turn. */
static int run_json(const opts_t *o, const char *path) {
  dp_fsinput_host_t *hosts;
  size_t n;
  int rc = dp_fsinput_read_json(path, &hosts, &n);
  for (size_t i = 0; i < n; i++) {
    if (rc == 0)
      rc = run_host(o, &hosts[i]);
    dp_fsinput_host_free(&hosts[i]);
  }
  free(hosts);
  return rc;
}

int dp_cli_failslow_scan(dp_fsinput_host_t *h, int64_t *first, double *maxs) {
  opts_t o = {.json = 1, .quiet = 1, .to_first = first, .to_maxs = maxs};
  dp_failslow_conf_init(&o.conf);
  if (h->n == 0 || h->ndisks == 0)
    return 0;
  return run_host(&o, h);
}

int dp_cmd_failslow(int argc, char **argv) {
  opts_t o;
  memset(&o, 0, sizeof(o));
  dp_failslow_conf_init(&o.conf);
  int rc = parse_options(&o, argc, argv);
  if (rc == 0)
    rc = check_options(&o, argc, argv);
  if (rc == 0)
    rc = check_sources(&o);
  for (size_t i = 0; i < o.nsrc && rc == 0; i++)
    rc = o.src[i].json ? run_json(&o, o.src[i].path)
                       : run_collectd(&o, o.src[i].path);
  free(o.src);
  return rc < 0 ? 0 : rc;
}
