/*
 * cmd_replay.c - `diskprobe replay`: recorded rounds through the judging
 * part of the plugin's pipeline (monitor.h: dp_monitor_feed, the same
 * call the plugin and `watch` make for every probe result), printing when
 * the verdict changes.
 *
 *   diskprobe replay [--format text|json] [--every-round] [--media CLASS]
 *                    [--arm-rounds N] [--horizon-rounds N] FILE...
 *
 * FILE holds JSON lines as `diskprobe watch --format json` prints them
 * (probe lines: the keys target, probe, round and latency_s; iops,
 * latency_s.p50, latency_s.mean, stalled, time, ops, errors.io and
 * errors.short if present); "-" is standard input. Watch's verdict lines
 * give a target's media class, model and ceiling (else --media, no model,
 * the class's ceiling); its device-view lines are skipped, and so are
 * blank lines and lines starting with '#'. Lines are taken in file order,
 * a target's round ends when its next round begins. Each target's probes
 * are those of its first round, in order.
 *
 * The reader (replay_input.c over jsonl.c, jansson): one JSON object per
 * line, or one object over many lines as `jq .` prints it; any key order
 * and whitespace; a record of at most 1 MiB (a longer one, /dev/zero, is
 * refused at the limit without reading on). Refused with the file and
 * line, exit 2: anything but an object, duplicate keys, a number jansson
 * cannot hold (1e400), and values out of range or of the wrong type:
 * round and the counts (ops, errors.io, errors.short) integers 0 to 2^53;
 * time 0 to 1e10 (Unix seconds, absent: 0); iops 0 to 1e10; latencies and
 * the verdict's ceiling_s 0 to 86400 s; stalled true or false; strings
 * longer than their field (target PATH_MAX - 1, probe 63, media 15, model
 * 63 bytes); a 65th target. null (watch's NaN) or an absent figure is
 * missing. A record keeps its target as an index into the input's names
 * (a few hundred bytes a line, not PATH_MAX).
 *
 * Output: one line (text) or object (json) per health transition (with
 * --every-round, per round), then a summary per target: rounds, the round
 * it armed at, warnings, failures, rounds spent at warning or worse. Exit 0
 * when the input was read, 2 on bad usage or unreadable input (one line on
 * stderr).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "health.h"
#include "jsonl.h"
#include "monitor.h"
#include "replay_input.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLAY_TARGETS_MAX DP_REPLAY_TARGETS_MAX

typedef dp_replay_rec_t rec_t;

/* The input's targets: a record names its own by index. */
static dp_replay_names_t names;
#define TARGET(r) (names.name[(r)->target])

typedef struct {
  char name[PATH_MAX];
  char probes[DP_HEALTH_PROBES_MAX][DP_NAME_MAX];
  size_t nprobes;
  int probes_known; /* its first round has ended */
  int described;    /* media, model and ceiling from a verdict line */
  dp_media_t media;
  char model[64];
  double ceiling_s;
  uint64_t rounds, armed_at, warnings, failures, bad_rounds;
} tgt_t;

/* Appends path's probe and verdict lines ("-": standard input). 0, or -1
 * after one line on stderr. */
static int read_all(const char *path, rec_t **recs, size_t *n, size_t *cap) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
  if (f == NULL) {
    fprintf(stderr, "diskprobe replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  int rc = dp_replay_read(f, "replay", path, DP_JSONL_LINE_MAX, &names, recs, n,
                          cap);
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

typedef struct {
  int json, every_round;
  tgt_t *t;
} replay_t;

/* Every judged round: counted; printed when the verdict changed (or with
 * --every-round). */
static void replay_verdict(const dp_monitor_verdict_t *mv, void *arg) {
  replay_t *rp = arg;
  tgt_t *t = &rp->t[mv->target];
  const dp_health_verdict_t *v = mv->v;
  if (!mv->confirm) /* a confirmation is not a round */
    t->rounds++;
  if (v->armed && !t->armed_at)
    t->armed_at = t->rounds;
  if (v->level >= DP_HEALTH_WARNING)
    t->bad_rounds++;
  if (v->changed && v->level == DP_HEALTH_WARNING &&
      v->prev_level == DP_HEALTH_OK)
    t->warnings++;
  if (v->changed && v->level == DP_HEALTH_FAILURE)
    t->failures++;
  if (!v->changed && !rp->every_round)
    return;
  if (rp->json) {
    json_t *o = dp_cli_json_object();
    dp_cli_json_set(o, "round", dp_cli_json_uint(mv->round));
    if (mv->confirm)
      dp_cli_json_set(o, "confirm", dp_cli_json_bool(1));
    dp_cli_json_set(o, "time", dp_cli_json_fixed((double)mv->time_ns / 1e9, 3));
    dp_cli_json_set(o, "target", dp_cli_json_str(t->name));
    dp_cli_json_set(o, "level",
                    dp_cli_json_str(dp_health_level_name(v->level)));
    dp_cli_json_set(o, "prev",
                    dp_cli_json_str(dp_health_level_name(v->prev_level)));
    dp_cli_json_set(o, "rule", dp_cli_json_str(dp_health_rule_name(v->why)));
    dp_cli_json_set(o, "detail", dp_cli_json_str(v->why_detail));
    if (isfinite(v->slowdown))
      dp_cli_json_set(o, "slowdown", dp_cli_json_fixed(v->slowdown, 4));
    dp_cli_json_set(o, "message", dp_cli_json_str(mv->words));
    dp_cli_json_print(stdout, o, DP_CLI_JSON_LINE);
  } else {
    /* the words name the target, as the recording spells it (cli.h) */
    printf("round %-6llu %s -> %s: ", (unsigned long long)mv->round,
           dp_health_level_name(v->prev_level), dp_health_level_name(v->level));
    dp_cli_put_visible(stdout, mv->words);
    putchar('\n');
  }
}

static int media_of(const char *name, dp_media_t *out) {
  for (int m = 0; m < DP_MEDIA_COUNT; m++)
    if (strcmp(name, dp_media_name((dp_media_t)m)) == 0) {
      *out = (dp_media_t)m;
      return 0;
    }
  return -1;
}

static const char *const replay_usage[] = {
    "[--format text|json] [--every-round] "
    "[--media nvme|ssd|hdd|virtual|unknown] [--arm-rounds N] "
    "[--horizon-rounds N] FILE...",
    NULL};
static const dp_cli_opt_help_t replay_opts[] = {
    {"--format text|json",
     "a line (text, the default) or JSON object per health transition, then "
     "a summary per target"},
    {"--every-round", "a line per round, not only per transition"},
    {"--media nvme|ssd|hdd|virtual|unknown",
     "the targets' media class when the recording has no verdict lines "
     "(sets the p50 ceiling; default unknown)"},
    {"--arm-rounds N", "rounds of baseline before a target is judged "
                       "(the plugin's default 20)"},
    {"--horizon-rounds N", "rounds in the baseline's medians (default 1440)"},
    {NULL, NULL}};
static const char *const replay_examples[] = {
    "diskprobe replay rounds.jsonl",
    "zcat day.jsonl.gz | diskprobe replay --every-round --format json -", NULL};
const dp_cli_help_t dp_cli_help_replay = {
    "replay",
    "recorded watch rounds through the plugin's health rules",
    0,
    replay_usage,
    replay_opts,
    "FILE holds diskprobe watch --format json lines (- for standard input); "
    "its verdict lines give a target its media class, model and ceiling. "
    "Exit status: 0 when the input was read, 2 on bad usage or unreadable "
    "input.",
    replay_examples};

/* Options; 0 to go on, else the exit status + 1. */
static int replay_options(int argc, char **argv, replay_t *rp,
                          dp_media_t *media, dp_health_conf_t *hc) {
  static const struct option opts[] = {
      {"format", required_argument, NULL, 'f'},
      {"every-round", no_argument, NULL, 'e'},
      {"media", required_argument, NULL, 'm'},
      {"arm-rounds", required_argument, NULL, 'a'},
      {"horizon-rounds", required_argument, NULL, 'H'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c;
  uint64_t v;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
    switch (c) {
    case 'f':
      if ((rp->json = dp_cli_format(optarg)) < 0) {
        fprintf(stderr, "diskprobe replay: --format: text or json\n");
        return 3;
      }
      break;
    case 'e':
      rp->every_round = 1;
      break;
    case 'm':
      if (media_of(optarg, media) < 0) {
        fprintf(stderr,
                "diskprobe replay: --media '%s': one of nvme, ssd, "
                "hdd, virtual, unknown\n",
                optarg);
        return 3;
      }
      break;
    case 'a':
    case 'H':
      if (dp_parse_uint(optarg, &v) < 0 || v < 1 || v > DP_HEALTH_HORIZON_MAX) {
        fprintf(stderr, "diskprobe replay: --%s '%s': an integer 1 to %u\n",
                c == 'a' ? "arm-rounds" : "horizon-rounds", optarg,
                DP_HEALTH_HORIZON_MAX);
        return 3;
      }
      if (c == 'a')
        hc->arm_rounds = (unsigned)v;
      else
        hc->horizon_rounds = (unsigned)v;
      break;
    case 'h':
      dp_cli_help(stdout, &dp_cli_help_replay);
      return 1;
    default:
      dp_cli_help_usage(stderr, &dp_cli_help_replay);
      return 3;
    }
  }
  if (optind >= argc) {
    dp_cli_help_usage(stderr, &dp_cli_help_replay);
    return 3;
  }
  return 0;
}

/* Targets and their probes, from their first round; media, model and
 * ceiling from their first verdict line. -1 past REPLAY_TARGETS_MAX. */
static int replay_targets(const rec_t *recs, size_t n, tgt_t *tg, size_t *nt,
                          dp_media_t media) {
  for (size_t i = 0; i < n; i++) {
    tgt_t *t = find_tgt(tg, nt, TARGET(&recs[i]));
    if (t == NULL) {
      fprintf(stderr, "diskprobe replay: more than %d targets\n",
              REPLAY_TARGETS_MAX);
      return -1;
    }
    if (!t->described)
      t->media = media;
    if (recs[i].verdict) {
      if (!t->described && media_of(recs[i].media, &t->media) == 0) {
        snprintf(t->model, sizeof(t->model), "%s", recs[i].model);
        t->ceiling_s = isfinite(recs[i].ceiling_s) ? recs[i].ceiling_s : 0;
      }
      t->described = 1;
      continue;
    }
    if (t->probes_known || recs[i].confirm)
      continue;
    if (t->nprobes > 0 && recs[i].round != t->rounds) {
      t->probes_known = 1;
      continue;
    }
    t->rounds = recs[i].round;
    if (t->nprobes < DP_HEALTH_PROBES_MAX)
      snprintf(t->probes[t->nprobes++], DP_NAME_MAX, "%s", recs[i].probe);
  }
  return 0;
}

/* Feeds the probe results: a line ends the previous round of its target
 * when its round number differs; the last round of each target ends at
 * the end of the input. */
static void replay_feed(dp_monitor_t *m, const rec_t *recs, size_t n, tgt_t *tg,
                        size_t nt) {
  uint64_t cur[REPLAY_TARGETS_MAX] = {0};
  int open_round[REPLAY_TARGETS_MAX] = {0};
  const rec_t *last[REPLAY_TARGETS_MAX] = {0};
  const dp_monitor_obs_t end = {.probe = DP_HEALTH_PROBES_MAX,
                                .p50_s = NAN,
                                .mean_s = NAN,
                                .iops = NAN,
                                .last_in_round = 1};
  for (size_t i = 0; i <= n; i++) {
    if (i < n && recs[i].verdict)
      continue;
    for (size_t ti = 0; ti < nt; ti++) {
      int ends = open_round[ti] &&
                 (i == n || (strcmp(TARGET(&recs[i]), tg[ti].name) == 0 &&
                             recs[i].round != cur[ti]));
      if (!ends)
        continue;
      dp_monitor_feed(m, ti, &end, cur[ti], (uint64_t)(last[ti]->time * 1e9), 0,
                      NULL);
      open_round[ti] = 0;
    }
    if (i == n)
      break;
    tgt_t *t = find_tgt(tg, &nt, TARGET(&recs[i]));
    size_t ti = (size_t)(t - tg), k = 0;
    if (recs[i].confirm) { /* a round of its own: the first probe alone */
      if (open_round[ti])
        dp_monitor_feed(m, ti, &end, cur[ti], (uint64_t)(last[ti]->time * 1e9),
                        0, NULL);
      open_round[ti] = 0;
      const rec_t *r = &recs[i];
      dp_monitor_obs_t o = dp_monitor_obs(0, r->ops, r->stalled, r->iops,
                                          r->p50, r->mean, r->errors, 1);
      o.p99_s = r->p99;
      o.ops = r->tail_ops;
      o.confirm = 1;
      dp_monitor_feed(m, ti, &o, r->round, (uint64_t)(r->time * 1e9), 0, NULL);
      continue;
    }
    while (k < t->nprobes && strcmp(t->probes[k], recs[i].probe) != 0)
      k++;
    cur[ti] = recs[i].round;
    open_round[ti] = 1;
    last[ti] = &recs[i];
    if (k < t->nprobes) {
      const rec_t *r = &recs[i];
      dp_monitor_obs_t o = dp_monitor_obs(k, r->ops, r->stalled, r->iops,
                                          r->p50, r->mean, r->errors, 0);
      o.p99_s = r->p99;
      o.ops = r->tail_ops;
      dp_monitor_feed(m, ti, &o, r->round, (uint64_t)(r->time * 1e9), 0, NULL);
    }
  }
}

static void replay_summary(int json, const tgt_t *tg, size_t nt) {
  for (size_t i = 0; i < nt; i++) {
    const tgt_t *t = &tg[i];
    if (json) {
      json_t *o = dp_cli_json_object();
      dp_cli_json_set(o, "summary", dp_cli_json_bool(1));
      dp_cli_json_set(o, "target", dp_cli_json_str(t->name));
      dp_cli_json_set(o, "rounds", dp_cli_json_uint(t->rounds));
      dp_cli_json_set(o, "armed_at", dp_cli_json_uint(t->armed_at));
      dp_cli_json_set(o, "warnings", dp_cli_json_uint(t->warnings));
      dp_cli_json_set(o, "failures", dp_cli_json_uint(t->failures));
      dp_cli_json_set(o, "bad_rounds", dp_cli_json_uint(t->bad_rounds));
      dp_cli_json_print(stdout, o, DP_CLI_JSON_LINE);
    } else {
      fputs("target ", stdout);
      dp_cli_put_visible(stdout, t->name);
      printf(": %llu rounds, armed at round %llu, %llu warnings, "
             "%llu failures, %llu rounds at warning or worse\n",
             (unsigned long long)t->rounds, (unsigned long long)t->armed_at,
             (unsigned long long)t->warnings, (unsigned long long)t->failures,
             (unsigned long long)t->bad_rounds);
    }
  }
}

int dp_cmd_replay(int argc, char **argv) {
  replay_t rp = {0};
  dp_media_t media = DP_MEDIA_UNKNOWN;
  dp_health_conf_t hc;
  dp_health_conf_init(&hc);
  int rc = replay_options(argc, argv, &rp, &media, &hc);
  if (rc != 0)
    return rc - 1;
  rec_t *recs = NULL;
  size_t n = 0, cap = 0;
  for (int i = optind; i < argc; i++)
    if (read_all(argv[i], &recs, &n, &cap) < 0) {
      free(recs);
      return 2;
    }
  static tgt_t tg[REPLAY_TARGETS_MAX];
  size_t nt = 0;
  if (replay_targets(recs, n, tg, &nt, media) < 0) {
    free(recs);
    return 2;
  }
  dp_monitor_offline_target_t ot[REPLAY_TARGETS_MAX];
  const char *names[REPLAY_TARGETS_MAX][DP_HEALTH_PROBES_MAX];
  size_t with_probes = 0;
  for (size_t i = 0; i < nt; i++) {
    for (size_t k = 0; k < tg[i].nprobes; k++)
      names[i][k] = tg[i].probes[k];
    ot[i] = (dp_monitor_offline_target_t){.name = tg[i].name,
                                          .nprobes = tg[i].nprobes,
                                          .probe_names = names[i],
                                          .media = tg[i].media,
                                          .model = tg[i].model,
                                          .ceiling_s = tg[i].ceiling_s};
    tg[i].rounds = 0;
    with_probes += tg[i].nprobes > 0;
  }
  rp.t = tg;
  dp_monitor_sink_t sink = {.arg = &rp, .verdict = replay_verdict};
  dp_monitor_t *m = NULL;
  if (nt == 0 || with_probes < nt ||
      dp_monitor_new_offline(&m, &hc, ot, nt, "replay", &sink) < 0) {
    fprintf(stderr, "diskprobe replay: %s\n",
            with_probes < nt ? "no probe results in the input"
            : nt == 0        ? "no probe results in the input"
                             : "--arm-rounds is larger than --horizon-rounds");
    free(recs);
    return 2;
  }
  replay_feed(m, recs, n, tg, nt);
  replay_summary(rp.json, tg, nt);
  dp_monitor_free(m);
  free(recs);
  return 0;
}
