/*
 * cmd_replay.c - `diskprobe replay`: recorded rounds through the health
 * rules the plugin runs (health.h), printing when each rule fires.
 *
 *   diskprobe replay [--format text|json] [--media CLASS] [--arm-rounds N]
 *                    [--horizon-rounds N] FILE...
 *
 * FILE holds JSON lines as `diskprobe watch --format json` prints them
 * (at least the keys target, probe, round, iops, latency_s.p50,
 * latency_s.mean, stalled; errors.io and errors.short if present); "-" is
 * standard input. Lines are taken in file order, a target's round ends
 * when its next round begins. Each target's probes are those of its first
 * round, in order.
 *
 * Output: one line (text) or object (json) per health transition, then a
 * summary per target: rounds, the round it armed at, warnings, failures,
 * rounds spent at warning or worse. Exit 0 when the input was read, 2 on
 * bad usage or unreadable input (one line on stderr).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "health.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLAY_TARGETS_MAX 64

typedef struct {
  char target[DP_NAME_MAX], probe[DP_NAME_MAX];
  uint64_t round;
  double time, iops, p50, mean;
  int stalled;
  uint64_t errors;
} rec_t;

typedef struct {
  char name[DP_NAME_MAX];
  char probes[DP_HEALTH_PROBES_MAX][DP_NAME_MAX];
  size_t nprobes;
  int probes_known; /* its first round has ended */
  uint64_t rounds, armed_at, warnings, failures, bad_rounds;
} tgt_t;

/* The number after "key": (first occurrence at or after from), or NaN. */
static double jnum(const char *line, const char *from, const char *key) {
  char pat[80];
  snprintf(pat, sizeof(pat), "\"%s\":", key);
  const char *p = strstr(from ? from : line, pat);
  if (p == NULL)
    return NAN;
  p += strlen(pat);
  if (strncmp(p, "null", 4) == 0)
    return NAN;
  char *end;
  double v = strtod(p, &end);
  return end == p ? NAN : v;
}

/* The string value of "key":"..." (escapes kept as the character after
 * the backslash), or -1. */
static int jstr(const char *line, const char *key, char *out, size_t len) {
  char pat[80];
  snprintf(pat, sizeof(pat), "\"%s\":\"", key);
  const char *p = strstr(line, pat);
  if (p == NULL)
    return -1;
  p += strlen(pat);
  size_t n = 0;
  for (; *p && *p != '"'; p++) {
    if (*p == '\\' && p[1])
      p++;
    if (n + 1 < len)
      out[n++] = *p;
  }
  out[n] = '\0';
  return *p == '"' ? 0 : -1;
}

static int parse_line(const char *line, rec_t *r) {
  memset(r, 0, sizeof(*r));
  if (jstr(line, "target", r->target, sizeof(r->target)) < 0 ||
      jstr(line, "probe", r->probe, sizeof(r->probe)) < 0)
    return -1;
  double round = jnum(line, NULL, "round");
  const char *lat = strstr(line, "\"latency_s\":{");
  if (!(round >= 0) || lat == NULL)
    return -1;
  r->round = (uint64_t)round;
  r->time = jnum(line, NULL, "time");
  r->iops = jnum(line, NULL, "iops");
  r->p50 = jnum(line, lat, "p50");
  r->mean = jnum(line, lat, "mean");
  r->stalled = strstr(line, "\"stalled\":true") != NULL;
  const char *errs = strstr(line, "\"errors\":{");
  if (errs != NULL) {
    double io = jnum(line, errs, "io"), sh = jnum(line, errs, "short");
    r->errors = (uint64_t)((io > 0 ? io : 0) + (sh > 0 ? sh : 0));
  }
  return 0;
}

static int read_all(const char *path, rec_t **recs, size_t *n, size_t *cap) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
  if (f == NULL) {
    fprintf(stderr, "diskprobe replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  char *line = NULL;
  size_t llen = 0;
  unsigned long lineno = 0;
  int rc = 0;
  while (getline(&line, &llen, f) > 0) {
    lineno++;
    if (line[0] == '\n' || line[0] == '#')
      continue;
    if (*n == *cap) {
      size_t nc = *cap ? *cap * 2 : 4096;
      rec_t *nr = realloc(*recs, nc * sizeof(*nr));
      if (nr == NULL) {
        rc = -1;
        break;
      }
      *recs = nr;
      *cap = nc;
    }
    if (parse_line(line, &(*recs)[*n]) < 0) {
      fprintf(stderr,
              "diskprobe replay: %s: line %lu is not a probe result of "
              "`diskprobe watch --format json`\n",
              path, lineno);
      rc = -1;
      break;
    }
    (*n)++;
  }
  free(line);
  if (f != stdin)
    fclose(f);
  return rc;
}

static tgt_t *find_tgt(tgt_t *t, size_t *nt, const char *name) {
  for (size_t i = 0; i < *nt; i++)
    if (strcmp(t[i].name, name) == 0)
      return &t[i];
  if (*nt == REPLAY_TARGETS_MAX)
    return NULL;
  tgt_t *x = &t[(*nt)++];
  memset(x, 0, sizeof(*x));
  snprintf(x->name, sizeof(x->name), "%s", name);
  return x;
}

static void print_transition(int json, const tgt_t *t, const rec_t *r,
                             const dp_health_verdict_t *v, const char *words) {
  if (json) {
    printf("{\"round\":%llu,\"time\":%.3f,\"target\":",
           (unsigned long long)r->round, r->time);
    dp_cli_json_str(stdout, t->name);
    printf(
        ",\"level\":\"%s\",\"prev\":\"%s\",\"rule\":\"%s\",\"detail\":\"%s\"",
        dp_health_level_name(v->level), dp_health_level_name(v->prev_level),
        dp_health_rule_name(v->why), v->why_detail);
    if (v->slowdown == v->slowdown)
      printf(",\"slowdown\":%.4f", v->slowdown);
    printf(",\"message\":");
    dp_cli_json_str(stdout, words);
    printf("}\n");
  } else {
    printf("round %-6llu %s -> %s: %s\n", (unsigned long long)r->round,
           dp_health_level_name(v->prev_level), dp_health_level_name(v->level),
           words);
  }
}

int dp_cmd_replay(int argc, char **argv) {
  static const struct option opts[] = {
      {"format", required_argument, NULL, 'f'},
      {"media", required_argument, NULL, 'm'},
      {"arm-rounds", required_argument, NULL, 'a'},
      {"horizon-rounds", required_argument, NULL, 'H'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  static const char usage[] =
      "usage: diskprobe replay [--format text|json] [--media "
      "nvme|ssd|hdd|virtual|unknown]\n"
      "                        [--arm-rounds N] [--horizon-rounds N] FILE...\n";
  int json = 0, c;
  dp_media_t media = DP_MEDIA_UNKNOWN;
  dp_health_conf_t hc;
  dp_health_conf_init(&hc);
  uint64_t v;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
    switch (c) {
    case 'f':
      if ((json = dp_cli_format(optarg)) < 0) {
        fprintf(stderr, "diskprobe replay: --format: text or json\n");
        return 2;
      }
      break;
    case 'm': {
      int found = 0;
      for (int m = 0; m < DP_MEDIA_COUNT && !found; m++)
        if (strcmp(optarg, dp_media_name((dp_media_t)m)) == 0) {
          media = (dp_media_t)m;
          found = 1;
        }
      if (!found) {
        fprintf(stderr,
                "diskprobe replay: --media '%s': one of nvme, ssd, "
                "hdd, virtual, unknown\n",
                optarg);
        return 2;
      }
      break;
    }
    case 'a':
    case 'H':
      if (dp_parse_uint(optarg, &v) < 0 || v < 1 || v > DP_HEALTH_HORIZON_MAX) {
        fprintf(stderr, "diskprobe replay: --%s '%s': an integer 1 to %u\n",
                c == 'a' ? "arm-rounds" : "horizon-rounds", optarg,
                DP_HEALTH_HORIZON_MAX);
        return 2;
      }
      if (c == 'a')
        hc.arm_rounds = (unsigned)v;
      else
        hc.horizon_rounds = (unsigned)v;
      break;
    case 'h':
      fputs(usage, stdout);
      return 0;
    default:
      fputs(usage, stderr);
      return 2;
    }
  }
  if (optind >= argc) {
    fputs(usage, stderr);
    return 2;
  }
  rec_t *recs = NULL;
  size_t n = 0, cap = 0;
  for (int i = optind; i < argc; i++)
    if (read_all(argv[i], &recs, &n, &cap) < 0) {
      free(recs);
      return 2;
    }

  /* targets and their probes, from their first round */
  static tgt_t tg[REPLAY_TARGETS_MAX];
  size_t nt = 0;
  for (size_t i = 0; i < n; i++) {
    tgt_t *t = find_tgt(tg, &nt, recs[i].target);
    if (t == NULL) {
      fprintf(stderr, "diskprobe replay: more than %d targets\n",
              REPLAY_TARGETS_MAX);
      free(recs);
      return 2;
    }
    if (t->probes_known)
      continue;
    if (t->nprobes > 0 && recs[i].round != t->rounds) {
      t->probes_known = 1;
      continue;
    }
    t->rounds = recs[i].round;
    if (t->nprobes < DP_HEALTH_PROBES_MAX)
      snprintf(t->probes[t->nprobes++], DP_NAME_MAX, "%s", recs[i].probe);
  }
  dp_health_t *h;
  if (nt == 0 || dp_health_new(&h, &hc, nt) < 0) {
    fprintf(stderr, "diskprobe replay: %s\n",
            nt == 0 ? "no probe results in the input"
                    : "--arm-rounds is larger than --horizon-rounds");
    free(recs);
    return 2;
  }
  for (size_t i = 0; i < nt; i++) {
    const char *names[DP_HEALTH_PROBES_MAX];
    for (size_t k = 0; k < tg[i].nprobes; k++)
      names[k] = tg[i].probes[k];
    dp_health_set_target(h, i, tg[i].name, tg[i].nprobes, names, names, media,
                         "", 0);
    tg[i].rounds = 0;
  }

  /* feed: a line ends the previous round of its target when its round
   * number differs; the last round of each target ends at EOF */
  uint64_t cur[REPLAY_TARGETS_MAX] = {0};
  int open_round[REPLAY_TARGETS_MAX] = {0};
  const rec_t *last[REPLAY_TARGETS_MAX] = {0};
  for (size_t i = 0; i <= n; i++) {
    for (size_t ti = 0; ti < nt; ti++) {
      int ends = open_round[ti] &&
                 (i == n || (strcmp(recs[i].target, tg[ti].name) == 0 &&
                             recs[i].round != cur[ti]));
      if (!ends)
        continue;
      dp_health_verdict_t vd;
      dp_health_feed(h, ti, DP_HEALTH_PROBES_MAX, NAN, NAN, NAN, 0, 0, 1, &vd);
      tgt_t *t = &tg[ti];
      t->rounds++;
      if (vd.armed && !t->armed_at)
        t->armed_at = t->rounds;
      if (vd.level >= DP_HEALTH_WARNING)
        t->bad_rounds++;
      if (vd.changed) {
        if (vd.level == DP_HEALTH_WARNING && vd.prev_level == DP_HEALTH_OK)
          t->warnings++;
        if (vd.level == DP_HEALTH_FAILURE)
          t->failures++;
        char words[800];
        dp_health_describe(h, ti, &vd, words, sizeof(words));
        print_transition(json, t, last[ti], &vd, words);
      }
      open_round[ti] = 0;
    }
    if (i == n)
      break;
    tgt_t *t = find_tgt(tg, &nt, recs[i].target);
    size_t ti = (size_t)(t - tg), k = 0;
    while (k < t->nprobes && strcmp(t->probes[k], recs[i].probe) != 0)
      k++;
    cur[ti] = recs[i].round;
    open_round[ti] = 1;
    last[ti] = &recs[i];
    if (k < t->nprobes)
      dp_health_feed(h, ti, k, recs[i].p50, recs[i].mean, recs[i].iops,
                     recs[i].stalled, recs[i].errors, 0, NULL);
  }
  for (size_t i = 0; i < nt; i++) {
    const tgt_t *t = &tg[i];
    if (json) {
      printf("{\"summary\":true,\"target\":");
      dp_cli_json_str(stdout, t->name);
      printf(",\"rounds\":%llu,\"armed_at\":%llu,\"warnings\":%llu,"
             "\"failures\":%llu,\"bad_rounds\":%llu}\n",
             (unsigned long long)t->rounds, (unsigned long long)t->armed_at,
             (unsigned long long)t->warnings, (unsigned long long)t->failures,
             (unsigned long long)t->bad_rounds);
    } else {
      printf("target %s: %llu rounds, armed at round %llu, %llu warnings, "
             "%llu failures, %llu rounds at warning or worse\n",
             t->name, (unsigned long long)t->rounds,
             (unsigned long long)t->armed_at, (unsigned long long)t->warnings,
             (unsigned long long)t->failures,
             (unsigned long long)t->bad_rounds);
    }
  }
  dp_health_free(h);
  free(recs);
  return 0;
}
