/*
 * cmd_failslow.c - `diskprobe failslow`: recorded per-drive throughput and
 * latency through the fail-slow detector the plugin runs (failslow.h), in
 * time order, as the plugin would have seen it live.
 *
 *   diskprobe failslow [--format text|json] [--drives] [tuning] HOSTDIR...
 *
 * HOSTDIR holds one host's day files YYYY-MM-DD.csv (taken in name order)
 * in the Perseus format: a header naming the columns ts (Unix seconds),
 * disk_id, throughput (bytes/s) and latency (average per I/O, microseconds),
 * then rows, fields optionally in double quotes, an empty or non-numeric
 * value a missing sample. The drives of a host are one peer group. Rows
 * are taken in time order (a file may list one drive after another); the
 * interval is the smallest step between timestamps; a gap of up to a
 * window is fed as missing intervals, a longer one (the public subset
 * holds 13:00-16:00 of each day) is closed up: the detector keeps its
 * state across it, as a plugin that saw no samples overnight would.
 *
 * Output: --format json prints one object per line for each drive when it
 * is first flagged, {"host":..., "disk":..., "first_flag_ts":...,
 * "slowdown":...}, and nothing else; text prints flags and clears in words
 * and a line per host (--drives: a line per drive with its largest score;
 * --trace: first a line per host "conf HOST step=S window_steps=N ...
 * flag_ratio=R ... day_ratio=R", the detector's parameters as it ran
 * (defaults scaled to the interval, then the flags), then at every window
 * closed a line per drive "trace HOST DISK TS WINDOW_SLOWDOWN SCORE
 * LONG_SCORE LONG_Z PERSIST DAY PEERS FLAGGED", the verdict's fields, for
 * studying the rules: contrib/failslow/).
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

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int64_t ts;
  uint32_t dev, seq;
  double x, y; /* bytes/s, seconds */
} row_t;

typedef struct {
  row_t *rows;
  size_t n, cap;
  char (*names)[DP_FAILSLOW_NAME_MAX];
  size_t ndev, devcap;
  size_t last_dev;
} host_t;

typedef struct {
  int json, drives, trace;
  dp_failslow_conf_t conf;
  unsigned set_window, set_model, set_score, set_min_score, set_clear;
  double set_flag, set_clear_ratio, set_long_ratio, set_long_z, set_persist;
  double set_day_ratio;
  unsigned set_long, set_day;
} opts_t;

static int fail_line(const char *what) {
  fprintf(stderr, "diskprobe failslow: %s\n", what);
  return 2;
}

static int dev_index(host_t *h, const char *name, size_t *out) {
  if (h->last_dev < h->ndev && strcmp(h->names[h->last_dev], name) == 0) {
    *out = h->last_dev;
    return 0;
  }
  for (size_t i = 0; i < h->ndev; i++)
    if (strcmp(h->names[i], name) == 0) {
      *out = h->last_dev = i;
      return 0;
    }
  if (h->ndev >= DP_FAILSLOW_DEVICES_MAX)
    return -E2BIG;
  if (h->ndev == h->devcap) {
    size_t cap = h->devcap ? 2 * h->devcap : 16;
    void *p = realloc(h->names, cap * sizeof(*h->names));
    if (p == NULL)
      return -ENOMEM;
    h->names = p;
    h->devcap = cap;
  }
  snprintf(h->names[h->ndev], DP_FAILSLOW_NAME_MAX, "%s", name);
  *out = h->last_dev = h->ndev++;
  return 0;
}

/* Splits a CSV line into at most max fields (quotes stripped, in place). */
static size_t split_csv(char *line, char **f, size_t max) {
  size_t n = 0;
  char *p = line;
  while (n < max) {
    char *start;
    if (*p == '"') {
      start = ++p;
      while (*p && *p != '"')
        p++;
      if (*p == '"')
        *p++ = '\0';
      while (*p && *p != ',')
        p++;
    } else {
      start = p;
      while (*p && *p != ',')
        p++;
    }
    int more = *p == ',';
    if (*p)
      *p++ = '\0';
    f[n++] = start;
    if (!more)
      break;
  }
  return n;
}

static double num_or_nan(const char *s) {
  if (*s == '\0')
    return NAN;
  char *end;
  double v = strtod(s, &end);
  return (end == s || *end != '\0') ? NAN : v;
}

static void chomp(char *s) {
  size_t l = strlen(s);
  while (l > 0 && (s[l - 1] == '\n' || s[l - 1] == '\r'))
    s[--l] = '\0';
}

/* Reads one day file into h. 0, or 2 after one line on stderr. */
static int read_day(host_t *h, const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "diskprobe failslow: %s: %s\n", path, strerror(errno));
    return 2;
  }
  char *line = NULL;
  size_t cap = 0, lineno = 0;
  int col[4] = {-1, -1, -1, -1}, ncol = 0, rc = 0;
  static const char *const want[4] = {"ts", "disk_id", "throughput", "latency"};
  while (getline(&line, &cap, f) >= 0) {
    lineno++;
    chomp(line);
    char *fld[16];
    size_t nf = split_csv(line, fld, 16);
    if (lineno == 1) {
      ncol = (int)nf;
      for (size_t k = 0; k < nf; k++)
        for (int c = 0; c < 4; c++)
          if (strcmp(fld[k], want[c]) == 0)
            col[c] = (int)k;
      for (int c = 0; c < 4; c++)
        if (col[c] < 0) {
          fprintf(stderr,
                  "diskprobe failslow: %s: line 1: no column '%s' (want a "
                  "header ts,disk_id,throughput,latency)\n",
                  path, want[c]);
          rc = 2;
          goto out;
        }
      continue;
    }
    if (nf == 1 && fld[0][0] == '\0')
      continue; /* blank line */
    if ((int)nf < ncol) {
      fprintf(stderr, "diskprobe failslow: %s: line %zu: %zu fields, want %d\n",
              path, lineno, nf, ncol);
      rc = 2;
      goto out;
    }
    char *end;
    double ts = strtod(fld[col[0]], &end);
    /* Unix seconds up to the year 5138: beyond, llround would overflow */
    if (end == fld[col[0]] || *end != '\0' || !(ts >= 0 && ts <= 1e11) ||
        fld[col[1]][0] == '\0') {
      fprintf(stderr,
              "diskprobe failslow: %s: line %zu: bad ts '%s' (want Unix "
              "seconds, 0 to 1e11) or empty disk_id\n",
              path, lineno, fld[col[0]]);
      rc = 2;
      goto out;
    }
    size_t dev;
    int e = dev_index(h, fld[col[1]], &dev);
    if (e != 0) {
      fprintf(stderr, "diskprobe failslow: %s: line %zu: %s\n", path, lineno,
              e == -E2BIG ? "too many drives in one host" : strerror(-e));
      rc = 2;
      goto out;
    }
    if (h->n == h->cap) {
      size_t nc = h->cap ? 2 * h->cap : 65536;
      void *p = realloc(h->rows, nc * sizeof(row_t));
      if (p == NULL) {
        rc = fail_line("out of memory");
        goto out;
      }
      h->rows = p;
      h->cap = nc;
    }
    row_t *r = &h->rows[h->n];
    r->ts = (int64_t)llround(ts);
    r->dev = (uint32_t)dev;
    r->seq = (uint32_t)h->n;
    r->x = num_or_nan(fld[col[2]]);
    r->y = num_or_nan(fld[col[3]]) * 1e-6;
    h->n++;
  }
  if (ferror(f)) {
    fprintf(stderr, "diskprobe failslow: %s: %s\n", path, strerror(errno));
    rc = 2;
  } else if (lineno == 0) {
    fprintf(stderr, "diskprobe failslow: %s: empty file\n", path);
    rc = 2;
  }
out:
  free(line);
  fclose(f);
  return rc;
}

static int is_day_file(const char *n) {
  /* YYYY-MM-DD.csv */
  if (strlen(n) != 14 || strcmp(n + 10, ".csv") != 0)
    return 0;
  for (int i = 0; i < 10; i++)
    if (i == 4 || i == 7 ? n[i] != '-' : (n[i] < '0' || n[i] > '9'))
      return 0;
  return 1;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_row(const void *a, const void *b) {
  const row_t *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static const char *base_name(const char *path, char *buf, size_t len) {
  size_t l = strlen(path);
  while (l > 1 && path[l - 1] == '/')
    l--;
  size_t s = l;
  while (s > 0 && path[s - 1] != '/')
    s--;
  snprintf(buf, len, "%.*s", (int)(l - s), path + s);
  return buf;
}

/* Reads every day file of dir into h. 0, or 2 after one line. */
static int read_host(host_t *h, const char *dir) {
  DIR *dp = opendir(dir);
  if (dp == NULL) {
    fprintf(stderr, "diskprobe failslow: %s: %s\n", dir, strerror(errno));
    return 2;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  int rc = 0;
  errno = 0;
  while ((de = readdir(dp)) != NULL) {
    if (!is_day_file(de->d_name))
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 32;
      void *p = realloc(names, cap * sizeof(*names));
      if (p == NULL) {
        rc = fail_line("out of memory");
        goto out;
      }
      names = p;
    }
    names[n] = strdup(de->d_name);
    if (names[n] == NULL) {
      rc = fail_line("out of memory");
      goto out;
    }
    n++;
  }
  if (n == 0) {
    fprintf(stderr, "diskprobe failslow: %s: no day files (YYYY-MM-DD.csv)\n",
            dir);
    rc = 2;
    goto out;
  }
  qsort(names, n, sizeof(*names), cmp_str);
  for (size_t i = 0; i < n && rc == 0; i++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    rc = read_day(h, path);
  }
  if (rc == 0 && h->n == 0) {
    fprintf(stderr, "diskprobe failslow: %s: no samples\n", dir);
    rc = 2;
  }
out:
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
  closedir(dp);
  return rc;
}

static void fmt_utc(int64_t ts, char *buf, size_t len) {
  time_t t = (time_t)ts;
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* Runs the detector over h in time order, printing as it goes. */
static int run_host(const opts_t *o, host_t *h, const char *dir) {
  char host[256];
  base_name(dir, host, sizeof(host));
  qsort(h->rows, h->n, sizeof(row_t), cmp_row);
  /* the interval: the smallest step between timestamps */
  int64_t step = 0;
  for (size_t i = 1; i < h->n; i++) {
    int64_t dt = h->rows[i].ts - h->rows[i - 1].ts;
    if (dt > 0 && (step == 0 || dt < step))
      step = dt;
  }
  if (step == 0)
    step = 15;
  dp_failslow_conf_t c = o->conf;
  if (dp_failslow_conf_for_interval(&c, (double)step) != 0)
    return fail_line("interval out of range");
  if (o->set_window) {
    c.window_steps = o->set_window;
    c.min_valid_steps = (c.window_steps + 1) / 2;
  }
  if (o->set_model)
    c.model_windows = o->set_model;
  if (o->set_score)
    c.score_windows = o->set_score;
  if (o->set_min_score)
    c.min_score_windows = o->set_min_score;
  if (o->set_clear)
    c.clear_windows = o->set_clear;
  if (o->set_flag > 0)
    c.flag_ratio = o->set_flag;
  if (o->set_clear_ratio > 0)
    c.clear_ratio = o->set_clear_ratio;
  if (o->set_long)
    c.long_windows = o->set_long;
  if (o->set_long_ratio > 0)
    c.long_ratio = o->set_long_ratio;
  if (o->set_long_z > 0)
    c.long_z = o->set_long_z;
  if (o->set_persist > 0)
    c.persist_ratio = o->set_persist;
  if (o->set_day)
    c.day_windows = o->set_day;
  if (o->set_day_ratio > 0)
    c.day_ratio = o->set_day_ratio;
  if (c.min_score_windows > c.score_windows)
    c.min_score_windows = c.score_windows;
  dp_failslow_t *d;
  int e = dp_failslow_new(&d, &c, h->ndev);
  if (e != 0)
    return fail_line(e == -ENOMEM ? "out of memory"
                                  : "invalid detector parameters");
  for (size_t i = 0; i < h->ndev; i++)
    dp_failslow_set_device(d, i, h->names[i]);
  dp_failslow_verdict_t *v = calloc(h->ndev, sizeof(*v));
  int64_t *first = malloc(h->ndev * sizeof(int64_t));
  double *maxs = malloc(h->ndev * sizeof(double));
  if (v == NULL || first == NULL || maxs == NULL) {
    free(v);
    free(first);
    free(maxs);
    dp_failslow_free(d);
    return fail_line("out of memory");
  }
  for (size_t i = 0; i < h->ndev; i++) {
    first[i] = -1;
    maxs[i] = NAN;
  }
  if (o->trace && !o->json)
    printf("conf %s step=%lld window_steps=%u score_windows=%u "
           "long_windows=%u day_windows=%u flag_ratio=%g clear_ratio=%g "
           "long_ratio=%g long_z=%g persist_ratio=%g day_ratio=%g\n",
           host, (long long)step, c.window_steps, c.score_windows,
           c.long_windows, c.day_windows, c.flag_ratio, c.clear_ratio,
           c.long_ratio, c.long_z, c.persist_ratio, c.day_ratio);
  int64_t t0 = h->rows[0].ts, prev = t0;
  unsigned flagged = 0;
  uint64_t steps = 0;
  for (size_t r = 0; r < h->n;) {
    int64_t ts = h->rows[r].ts;
    /* a short gap: missing intervals; a long one: closed up */
    int64_t gap = (ts - prev) / step - 1;
    if (gap > 0 && gap <= (int64_t)c.window_steps)
      for (int64_t g = 0; g < gap; g++) {
        dp_failslow_step(d, (double)(prev + (g + 1) * step), NULL);
        steps++;
      }
    for (; r < h->n && h->rows[r].ts == ts; r++)
      dp_failslow_feed(d, h->rows[r].dev, h->rows[r].x, h->rows[r].y);
    prev = ts;
    steps++;
    if (!dp_failslow_step(d, (double)ts, v))
      continue;
    if (o->trace && !o->json)
      for (size_t i = 0; i < h->ndev; i++)
        printf("trace %s %s %lld %.4f %.4f %.4f %.2f %.4f %.4f %u %d\n", host,
               h->names[i], (long long)ts, v[i].window_slowdown, v[i].slowdown,
               v[i].slowdown_long, v[i].z_long, v[i].slowdown_persist,
               v[i].slowdown_day, v[i].peers, v[i].flagged);
    for (size_t i = 0; i < h->ndev; i++) {
      if (!isnan(v[i].slowdown) && !(v[i].slowdown <= maxs[i]))
        maxs[i] = v[i].slowdown;
      if (!v[i].changed)
        continue;
      if (v[i].flagged && first[i] < 0) {
        first[i] = ts;
        flagged++;
        if (o->json) {
          printf("{\"host\": ");
          dp_cli_json_str(stdout, host);
          printf(", \"disk\": ");
          dp_cli_json_str(stdout, h->names[i]);
          printf(", \"first_flag_ts\": %lld, \"slowdown\": %.4g}\n",
                 (long long)ts,
                 v[i].rule == DP_FAILSLOW_RULE_SUSTAINED ? v[i].slowdown_long
                                                         : v[i].slowdown);
        }
      }
      if (!o->json) {
        char when[64], desc[512];
        fmt_utc(ts, when, sizeof(when));
        dp_failslow_describe(d, i, &v[i], desc, sizeof(desc));
        printf("%s %s: %s at %s (%.1f h after the host's first sample): %s\n",
               host, h->names[i], v[i].flagged ? "FLAGGED" : "cleared", when,
               (double)(ts - t0) / 3600.0, desc);
      }
    }
  }
  if (!o->json) {
    if (o->drives)
      for (size_t i = 0; i < h->ndev; i++) {
        dp_failslow_verdict(d, i, &v[i]);
        printf("  %s %s: largest score %.3f, last %.3f, %s\n", host,
               h->names[i], maxs[i], v[i].slowdown,
               first[i] >= 0 ? "flagged" : "not flagged");
      }
    printf("%s: %zu drives, %llu intervals, %u flagged\n", host, h->ndev,
           (unsigned long long)steps, flagged);
  }
  fflush(stdout);
  free(v);
  free(first);
  free(maxs);
  dp_failslow_free(d);
  return 0;
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

int dp_cmd_failslow(int argc, char **argv) {
  opts_t o;
  memset(&o, 0, sizeof(o));
  dp_failslow_conf_init(&o.conf);
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
    O_DR
  };
  static const struct option lo[] = {
      {"format", required_argument, NULL, O_FMT},
      {"drives", no_argument, NULL, O_DRIVES},
      {"trace", no_argument, NULL, O_TRACE},
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
    int bad = 0;
    switch (ch) {
    case O_FMT:
      o.json = dp_cli_format(optarg);
      if (o.json < 0) {
        fprintf(stderr,
                "diskprobe failslow: invalid --format '%s' (text or json)\n",
                optarg);
        return 2;
      }
      break;
    case O_DRIVES:
      o.drives = 1;
      break;
    case O_TRACE:
      o.trace = 1;
      break;
    case O_FR:
      bad = parse_ratio("--flag-ratio", optarg, &o.set_flag);
      break;
    case O_CR:
      bad = parse_ratio("--clear-ratio", optarg, &o.set_clear_ratio);
      break;
    case O_WS:
      bad = parse_unsigned("--window-steps", optarg, &o.set_window);
      break;
    case O_MW:
      bad = parse_unsigned("--model-windows", optarg, &o.set_model);
      break;
    case O_SW:
      bad = parse_unsigned("--score-windows", optarg, &o.set_score);
      break;
    case O_MSW:
      bad = parse_unsigned("--min-score-windows", optarg, &o.set_min_score);
      break;
    case O_CW:
      bad = parse_unsigned("--clear-windows", optarg, &o.set_clear);
      break;
    case O_LW:
      bad = parse_unsigned("--long-windows", optarg, &o.set_long);
      break;
    case O_LR:
      bad = parse_ratio("--long-ratio", optarg, &o.set_long_ratio);
      break;
    case O_LZ:
      bad = parse_ratio("--long-z", optarg, &o.set_long_z);
      break;
    case O_PR:
      bad = parse_ratio("--persist-ratio", optarg, &o.set_persist);
      break;
    case O_DW:
      bad = parse_unsigned("--day-windows", optarg, &o.set_day);
      break;
    case O_DR:
      bad = parse_ratio("--day-ratio", optarg, &o.set_day_ratio);
      break;
    case 'h':
      printf("usage: diskprobe failslow [--format text|json] [--drives] "
             "[--flag-ratio R] [--clear-ratio R]\n"
             "         [--window-steps N] [--model-windows N] "
             "[--score-windows N]\n"
             "         [--min-score-windows N] [--clear-windows N] "
             "[--long-windows N]\n"
             "         [--long-ratio R] [--long-z Z] [--persist-ratio R] "
             "[--day-windows N]\n"
             "         [--day-ratio R] [--trace] HOSTDIR...\n"
             "HOSTDIR holds one host's day files YYYY-MM-DD.csv "
             "(ts,disk_id,throughput,latency in us).\n");
      return 0;
    default:
      return dp_cli_getopt_error("failslow", ch, argv);
    }
    if (bad)
      return 2;
  }
  if (o.set_flag > 0 && o.set_clear_ratio == 0 &&
      o.set_flag < o.conf.clear_ratio)
    o.set_clear_ratio = o.set_flag;
  if (o.set_flag > 0 && o.set_clear_ratio > o.set_flag)
    return fail_line("--clear-ratio must not exceed --flag-ratio");
  if (optind >= argc)
    return fail_line("usage: diskprobe failslow [--format text|json] "
                     "HOSTDIR... (no HOSTDIR)");
  /* every HOSTDIR must open before anything is printed */
  for (int i = optind; i < argc; i++) {
    DIR *dp = opendir(argv[i]);
    if (dp == NULL) {
      fprintf(stderr, "diskprobe failslow: %s: %s\n", argv[i], strerror(errno));
      return 2;
    }
    closedir(dp);
  }
  for (int i = optind; i < argc; i++) {
    host_t h;
    memset(&h, 0, sizeof(h));
    int rc = read_host(&h, argv[i]);
    if (rc == 0)
      rc = run_host(&o, &h, argv[i]);
    free(h.rows);
    free(h.names);
    if (rc != 0)
      return rc;
  }
  return 0;
}
