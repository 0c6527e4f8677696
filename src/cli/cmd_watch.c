/*
 * cmd_watch.c - `diskprobe watch`: the plugin's monitoring pipeline
 * (monitor.h), on a terminal.
 *
 *   diskprobe watch [--interval 60s] [--count N] [--format text|json]
 *                   [--duty-cycle 2] [--splay] [probe and target flags]
 *                   TARGET...
 *
 * The same monitor (monitor.h) and option table as the collectd plugin:
 * one worker per disk, DutyCycle pacing, stall fencing, the health
 * verdict, the device view and fail-slow among peers. It prints one line
 * per probe per round per target (text, or one JSON object per line with
 * run's keys plus "time", "device", "probe", "round", "interval_s"), then
 * the target's verdict of that round (text: "verdict" in the probe
 * column; JSON: an object with "round" and "verdict": level, rule, detail,
 * armed, slowdown, ceiling_s, media, model, message), and with --format
 * json every interval one object per device of the device view
 * ("device_view": the kernel name, the catalogue's figures named
 * type-type_instance, the disk's identity -- "class", "media", "model",
 * "firmware", "serial", "wwn", "capacity_bytes", the block sizes, a
 * stack's "members" -- and for disks in a peer group "failslow" and
 * "slowdown"; --class sets the targets' Class). The monitor's log lines (open
 * failures, I/O errors, stalls, probes shortened for DutyCycle) and
 * notifications (a verdict that changed, a stall) go to stderr, one line each.
 * Without probe flags each target runs the plugin's default probe set; with
 * any, the one probe they describe. Splay is off unless --splay: an operator
 * wants the first line now. No health state file is read or written.
 *
 * --count N stops once every target has had N rounds (a round that could
 * not open the target, or whose probe the engine refused, counts: it is
 * retried at the next interval as in the plugin). SIGINT/SIGTERM stop at
 * once. Either way a summary per target and probe goes to stderr.
 *
 * Exit status: 0 after --count rounds or a signal; 1 when no target could
 * ever be opened (it stops as soon as every target has failed once); 2 on
 * a usage error. Failures print one line on stderr.
 */
#define _GNU_SOURCE
#include "blockdev.h"
#include "cli.h"
#include "clock.h"
#include "devview.h"
#include "diskstats.h"
#include "health.h"
#include "monitor.h"
#include "peers.h"
#include "scheduler.h"
#include "units.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static const char *const watch_usage[] = {
    "[--count N] [--format text|json] TARGET...", NULL};
static const dp_cli_opt_help_t watch_opts[] = {
    {"--count N", "stop after N rounds of every target (default: until "
                  "Ctrl-C); a summary per target and probe goes to stderr"},
    {"--format text|json",
     "a line per probe per round and the round's verdict (text, the "
     "default), or JSON lines: probe results, verdicts and the device "
     "view"},
    {NULL, NULL}};
static const char *const watch_examples[] = {
    "diskprobe watch --count 2 --interval 5s --duty-cycle 100 /var/tmp/dp",
    "diskprobe watch --interval 10s --format json /var/tmp/dp > rounds.jsonl",
    NULL};
const dp_cli_help_t dp_cli_help_watch = {
    "watch",
    "probe rounds as the plugin runs them, with health verdicts",
    DP_CLI_WATCH,
    watch_usage,
    watch_opts,
    "Runs the plugin's monitoring pipeline: one worker per disk, DutyCycle "
    "pacing, the stall fence, the health verdict, the device view and "
    "fail-slow among peers. TARGET as for run. Without probe flags each "
    "target runs the plugin's default probe set (randread-qd1, "
    "randread-qd32, seqread); with any, the one probe they describe. "
    "Failures and the plugin's notifications go to stderr, one line each. "
    "Exit status: 0 after --count rounds or a signal, 1 when no target could "
    "be opened, 2 on a usage error.",
    watch_examples};
#define POLL_NS (100 * DP_NS_PER_MS)

static volatile sig_atomic_t watch_signalled;

static void watch_on_signal(int sig) { watch_signalled = sig; }

/* Per target and probe: what the summary needs. */
typedef struct {
  uint64_t rounds, stalls;
  double iops_sum, p99_max;
  double *p50; /* one per round */
  size_t np50, cap;
} stats_t;

typedef struct {
  char *const *args; /* the TARGET operands, as given */
  size_t ntargets;
  pthread_mutex_t lock;   /* the fields below: log lines come from workers */
  char (*path)[PATH_MAX]; /* the probe file or device node, once opened */
  unsigned *failed;       /* rounds that failed (open, engine refused) */
  int *open_failed;       /* 1 once an open failed */
  int opened_any;
  /* main thread only */
  int json, twidth, pwidth, printed_header;
  uint64_t count;        /* --count; 0: none */
  uint64_t *rounds;      /* per target: rounds shown */
  dp_monitor_t *monitor; /* the disks' identities, for the device lines */
  stats_t *st;           /* per target x DP_PROBES_MAX */
} watch_t;

static uint64_t wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * DP_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Bookkeeping for the summary and the exit status from the scheduler's
 * events, and the monitor's log line -- the one the plugin logs. */
static void watch_log(const dp_monitor_log_t *l, void *arg) {
  watch_t *w = arg;
  if (l->target >= 0) {
    size_t i = (size_t)l->target;
    pthread_mutex_lock(&w->lock);
    if (l->event == DP_SCHED_OPENED && l->path) {
      snprintf(w->path[i], PATH_MAX, "%s", l->path);
      w->opened_any = 1;
    } else if (l->event == DP_SCHED_OPEN_FAILED ||
               l->event == DP_SCHED_PROBE_FAILED) {
      w->failed[i]++;
      if (l->event == DP_SCHED_OPEN_FAILED)
        w->open_failed[i] = 1;
    }
    pthread_mutex_unlock(&w->lock);
  }
  /* an open is retried every round: say so the 1st, 2nd, 4th ... time;
   * the monitor's own notes (the disk's class, fail-slow groups, shut
   * down) are for a daemon's log, not a terminal */
  if (l->level >= LOG_DEBUG || l->event == DP_SCHED_WORKER_STARTED ||
      (l->event < 0 && l->level >= LOG_INFO) ||
      (l->repeated & (l->repeated - 1)) != 0)
    return;
  fprintf(stderr, "diskprobe watch: %s\n", l->line);
}

static void watch_notice(const dp_monitor_notice_t *n, void *arg) {
  (void)arg;
  static const char *const sev[] = {"OKAY", "WARNING", "FAILURE"};
  fprintf(stderr, "diskprobe watch: %s: %s\n", sev[n->severity], n->message);
}

static int usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "diskprobe watch: %s%s%s%s (see diskprobe watch --help)\n",
          msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
  return 2;
}

/* TARGET as an absolute path, without resolving symlinks (the scheduler
 * and target.c judge what is there). */
static int absolute(const char *arg, char *out, size_t len) {
  if (arg[0] == '/')
    return snprintf(out, len, "%s", arg) < (int)len ? 0 : -ENAMETOOLONG;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == NULL)
    return -errno;
  return snprintf(out, len, "%s/%s", cwd, arg) < (int)len ? 0 : -ENAMETOOLONG;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void account(stats_t *st, const dp_result_t *r) {
  st->rounds++;
  st->stalls += r->stalled ? 1 : 0;
  st->iops_sum += r->iops;
  if (isfinite(r->lat_p99_s) && r->lat_p99_s > st->p99_max)
    st->p99_max = r->lat_p99_s;
  if (!isfinite(r->lat_p50_s))
    return;
  if (st->np50 == st->cap) {
    size_t cap = st->cap ? st->cap * 2 : 16;
    double *p = realloc(st->p50, cap * sizeof(*p));
    if (p == NULL)
      return;
    st->p50 = p;
    st->cap = cap;
  }
  st->p50[st->np50++] = r->lat_p50_s;
}

static void print_summary(const watch_t *w, const dp_target_conf_t *tc,
                          stats_t *st, size_t nprobes) {
  fprintf(stderr, "--- diskprobe watch summary ---\n");
  fprintf(stderr, "%-24s %-16s %6s %10s %12s %12s %6s\n", "target", "probe",
          "rounds", "mean_iops", "median_p50", "max_p99", "stalls");
  for (size_t i = 0; i < w->ntargets; i++)
    for (size_t j = 0; j < tc[i].nprobes; j++) {
      stats_t *s = &st[i * nprobes + j];
      double med = NAN;
      if (s->np50) {
        qsort(s->p50, s->np50, sizeof(double), cmp_double);
        med = s->np50 % 2 ? s->p50[s->np50 / 2]
                          : (s->p50[s->np50 / 2 - 1] + s->p50[s->np50 / 2]) / 2;
      }
      if (s->rounds == 0) {
        fprintf(stderr, "%-24s %-16s %6d %10s %12s %12s %6d\n", w->args[i],
                tc[i].probes[j].name, 0, "-", "-", "-", 0);
        continue;
      }
      fprintf(stderr, "%-24s %-16s %6llu %10.1f %9.1f us %9.1f us %6llu\n",
              w->args[i], tc[i].probes[j].name, (unsigned long long)s->rounds,
              s->iops_sum / (double)s->rounds, med * 1e6, s->p99_max * 1e6,
              (unsigned long long)s->stalls);
    }
}

static void print_text_header(int twidth, int pwidth) {
  printf("%-8s  %-*s  %-*s  %10s  %10s  %10s  %s\n", "time", twidth, "target",
         pwidth, "probe", "iops", "p50_us", "p99_us", "stalled");
}

static const char *clock_text(uint64_t wall, char *buf, size_t len) {
  time_t t = (time_t)(wall / DP_NS_PER_S);
  struct tm tm;
  strftime(buf, len, "%H:%M:%S", localtime_r(&t, &tm));
  return buf;
}

static void print_text(const dp_sched_sample_t *smp, uint64_t wall,
                       const char *who, int twidth, int pwidth) {
  char ts[16];
  printf("%-8s  %-*s  %-*s  %10.1f  %10.1f  %10.1f  %d\n",
         clock_text(wall, ts, sizeof(ts)), twidth, who, pwidth, smp->probe_name,
         smp->r.iops, smp->r.lat_p50_s * 1e6, smp->r.lat_p99_s * 1e6,
         smp->r.stalled);
}

static void print_json(const dp_sched_sample_t *smp, uint64_t wall,
                       const char *path, const char *device) {
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "target", dp_cli_json_str(path));
  dp_cli_json_set(o, "device", dp_cli_json_str(device));
  dp_cli_json_set(o, "probe", dp_cli_json_str(smp->probe_name));
  dp_cli_json_set(o, "round", dp_cli_json_uint(smp->round));
  if (smp->confirm)
    dp_cli_json_set(o, "confirm", dp_cli_json_bool(1));
  dp_cli_json_set(o, "interval_s",
                  dp_cli_json_fixed((double)smp->interval_ns / 1e9, 3));
  dp_cli_json_result(o, &smp->r);
  dp_cli_json_print_timed(stdout, "time", (double)wall / 1e9, 6, o);
}

static void target_path(watch_t *w, size_t i, char *buf, size_t len) {
  pthread_mutex_lock(&w->lock);
  snprintf(buf, len, "%s", w->path[i]);
  pthread_mutex_unlock(&w->lock);
}

/* A target is done once it has had --count rounds (failed ones count). */
static int target_done(watch_t *w, size_t i) {
  pthread_mutex_lock(&w->lock);
  uint64_t failed = w->failed[i];
  pthread_mutex_unlock(&w->lock);
  return w->count && w->rounds[i] + failed >= w->count;
}

static void watch_sample(const dp_sched_sample_t *smp, uint64_t wall,
                         const dp_sched_target_state_t *ts, void *arg) {
  watch_t *w = arg;
  size_t i = smp->target;
  if (target_done(w, i))
    return; /* this target is done: at most N rounds each */
  if (!w->printed_header && !w->json)
    print_text_header(w->twidth, w->pwidth);
  w->printed_header = 1;
  if (!smp->confirm) /* the summary is of the regular rounds */
    account(&w->st[i * DP_PROBES_MAX + smp->probe], &smp->r);
  if (w->json) {
    char path[PATH_MAX];
    target_path(w, i, path, sizeof(path));
    print_json(smp, wall, path, ts->device);
  } else {
    print_text(smp, wall, w->args[i], w->twidth, w->pwidth);
  }
}

/* The round's verdict, after its last probe's line; the round is then
 * counted. */
static void watch_verdict(const dp_monitor_verdict_t *mv, void *arg) {
  watch_t *w = arg;
  const dp_health_verdict_t *v = mv->v;
  if (target_done(w, mv->target))
    return;
  /* a confirmation is not a round of --count, nor is the verdict of a
   * target that is not probing (round 0: no round ran) */
  if (!mv->confirm && mv->round > 0)
    w->rounds[mv->target]++;
  if (!w->json) {
    char ts[16];
    printf("%-8s  %-*s  %-*s  %s: %s\n",
           clock_text(mv->time_ns, ts, sizeof(ts)), w->twidth,
           w->args[mv->target], w->pwidth, "verdict",
           dp_health_level_name(v->level), mv->words);
    return;
  }
  char path[PATH_MAX];
  target_path(w, mv->target, path, sizeof(path));
  json_t *o = dp_cli_json_object(), *jv = dp_cli_json_object();
  dp_cli_json_set(o, "target", dp_cli_json_str(path));
  dp_cli_json_set(o, "device", dp_cli_json_str(mv->device));
  dp_cli_json_set(o, "round", dp_cli_json_uint(mv->round));
  if (mv->confirm)
    dp_cli_json_set(o, "confirm", dp_cli_json_bool(1));
  dp_cli_json_set(jv, "level", dp_cli_json_str(dp_health_level_name(v->level)));
  dp_cli_json_set(jv, "rule", dp_cli_json_str(dp_health_rule_name(v->why)));
  dp_cli_json_set(jv, "detail", dp_cli_json_str(v->why_detail));
  dp_cli_json_set(jv, "armed", dp_cli_json_bool(v->armed));
  dp_cli_json_set(jv, "slowdown", dp_cli_json_num(v->slowdown));
  dp_cli_json_set(jv, "ceiling_s", dp_cli_json_num(v->ceiling_s));
  if (mv->busy.busy) { /* its disk busy with other I/O (monitor.h) */
    dp_cli_json_set(jv, "busy", dp_cli_json_bool(1));
    dp_cli_json_set(jv, "util_percent", dp_cli_json_num(mv->busy.util_percent));
    dp_cli_json_set(jv, "probe_share", dp_cli_json_num(mv->busy.probe_share));
  }
  dp_cli_json_set(jv, "media", dp_cli_json_str(dp_media_name(mv->media)));
  dp_cli_json_set(jv, "model", dp_cli_json_str(mv->model));
  dp_cli_json_set(jv, "message", dp_cli_json_str(mv->words));
  dp_cli_json_set(o, "verdict", jv);
  dp_cli_json_print_timed(stdout, "time", (double)mv->time_ns / 1e9, 6, o);
}

/* JSON only: the device view, every interval. */
static void watch_device(const dp_diskstats_metrics_t *d,
                         const dp_peers_disk_t *peer, uint64_t wall,
                         void *arg) {
  const watch_t *w = arg;
  if (!w->json)
    return;
  dp_devview_value_t dv[DP_DEVVIEW_VALUES_MAX];
  size_t n = dp_devview_values(d, dv);
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "device_view", dp_cli_json_str(d->name));
  const char *cls;
  const dp_disk_identity_t *id =
      w->monitor ? dp_monitor_disk_identity(w->monitor, d->name, &cls) : NULL;
  if (id != NULL)
    dp_cli_json_identity(o, id, cls);
  for (size_t k = 0; k < n; k++) {
    char key[128];
    snprintf(key, sizeof(key), "%s%s%s", dv[k].type,
             dv[k].type_instance[0] ? "-" : "", dv[k].type_instance);
    dp_cli_json_set(o, key, dp_cli_json_num(dv[k].value));
  }
  if (peer != NULL) {
    dp_cli_json_set(o, "failslow", dp_cli_json_bool(peer->v.flagged));
    dp_cli_json_set(o, "slowdown", dp_cli_json_num(peer->v.slowdown));
  }
  dp_cli_json_print_timed(stdout, "time", (double)wall / 1e9, 6, o);
}

/* Builds one target's config from the flags. 0, or 2 after one line. */
static int target_conf(const dp_cli_conf_t *c, const char *arg, size_t i,
                       dp_target_conf_t *tc) {
  char abs[PATH_MAX], err[512];
  *tc = c->target;
  snprintf(tc->name, sizeof(tc->name), "target%zu", i + 1);
  int rc = absolute(arg, abs, sizeof(abs));
  if (rc < 0) {
    fprintf(stderr, "diskprobe watch: %s: %s\n", arg, strerror(-rc));
    return 2;
  }
  struct stat st;
  const char *key =
      stat(abs, &st) == 0 && S_ISBLK(st.st_mode) ? "Device" : "Path";
  if (dp_target_conf_set(tc, key, abs, err, sizeof(err)) < 0 ||
      (c->probe_set &&
       dp_target_conf_add_probe(tc, &c->probe, err, sizeof(err)) < 0) ||
      dp_target_conf_finish(tc, err, sizeof(err)) < 0) {
    fprintf(stderr, "diskprobe watch: %s: %s\n", arg, err);
    return 2;
  }
  return 0;
}

/* 1 when watch should stop: every target failed to open (status 1), or
 * each has had --count rounds (status 0). */
static int watch_finished(watch_t *w, int *status) {
  pthread_mutex_lock(&w->lock);
  int all_failed = !w->opened_any, done = w->count > 0;
  for (size_t i = 0; i < w->ntargets; i++) {
    all_failed = all_failed && w->open_failed[i];
    done = done && w->rounds[i] + w->failed[i] >= w->count;
  }
  pthread_mutex_unlock(&w->lock);
  if (all_failed) {
    fprintf(stderr, "diskprobe watch: no target could be opened\n");
    *status = 1;
    return 1;
  }
  if (done)
    *status = 0;
  return done;
}

/* The plugin's read (monitor.h), run whenever a sample is queued and at
 * least every POLL_NS: samples and their verdicts as they come, the device
 * view and the targets that are not probing every read interval. Returns
 * the exit status. */
static int watch_loop(watch_t *w, dp_monitor_t *m) {
  int status = 1;
  while (!watch_signalled) {
    dp_monitor_read(m, wall_ns());
    fflush(stdout);
    if (watch_finished(w, &status))
      return status;
    dp_monitor_wait(m, dp_now_ns() + POLL_NS);
  }
  return w->opened_any ? 0 : 1;
}

/* The targets' configs from the operands and flags, and the columns'
 * widths. 0, or 2 after one line. */
static int watch_targets(watch_t *w, const dp_cli_conf_t *c,
                         dp_target_conf_t *tc) {
  w->twidth = 6;
  w->pwidth = 7; /* "verdict" */
  for (size_t i = 0; i < w->ntargets; i++) {
    if (target_conf(c, w->args[i], i, &tc[i]) != 0)
      return 2;
    snprintf(w->path[i], PATH_MAX, "%s", tc[i].path);
    if ((int)strlen(w->args[i]) > w->twidth)
      w->twidth = (int)strlen(w->args[i]);
    for (size_t j = 0; j < tc[i].nprobes; j++)
      if ((int)strlen(tc[i].probes[j].name) > w->pwidth)
        w->pwidth = (int)strlen(tc[i].probes[j].name);
  }
  return 0;
}

/* Options into c; 0 to go on, else the exit status + 1 (--help: 1). */
static int watch_options(int argc, char **argv, dp_cli_conf_t *c, watch_t *w) {
  static const struct option own[] = {{"count", required_argument, NULL, 'c'},
                                      {"format", required_argument, NULL, 'f'},
                                      {"help", no_argument, NULL, 'h'},
                                      {NULL, 0, NULL, 0}};
  struct option opts[DP_CLI_OPTS_MAX];
  dp_cli_longopts(DP_CLI_WATCH, own, opts);
  int ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    if (ch >= DP_CLI_OPT_BASE) {
      if (dp_cli_apply(c, "watch", ch, optarg) < 0)
        return 3;
      continue;
    }
    switch (ch) {
    case 'c':
      if (dp_parse_uint(optarg, &w->count) < 0 || w->count == 0)
        return usage_error("invalid --count", optarg) + 1;
      break;
    case 'f':
      if ((w->json = dp_cli_format(optarg)) < 0)
        return usage_error("invalid --format (text or json)", optarg) + 1;
      break;
    case 'h':
      dp_cli_help(stdout, &dp_cli_help_watch);
      return 1;
    default:
      return dp_cli_getopt_error("watch", ch, argv) + 1;
    }
  }
  if (optind >= argc)
    return usage_error("no TARGET given", NULL) + 1;
  if (c->probe_set)
    snprintf(c->probe.name, sizeof(c->probe.name), "%s-qd%u",
             dp_pattern_name(c->probe.pattern), c->probe.queue_depth);
  return 0;
}

static void watch_free(watch_t *w, dp_target_conf_t *tc) {
  if (w->st)
    for (size_t i = 0; i < w->ntargets * DP_PROBES_MAX; i++)
      free(w->st[i].p50);
  free(w->st);
  free(w->rounds);
  free(tc);
  free(w->path);
  free(w->failed);
  free(w->open_failed);
  pthread_mutex_destroy(&w->lock);
}

/* The prober program, as the plugin runs it (a hung disk then holds
 * neither the plugin's nor watch's exit): $DISKPROBE_PROBER, the one
 * beside this program (a build tree), else the installed one; NULL (in
 * process) when there is none. */
static const char *watch_prober(char *buf, size_t len) {
  const char *env = getenv("DISKPROBE_PROBER");
  if (env != NULL && env[0] != '\0')
    return env;
  char self[PATH_MAX];
  ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (k > 0) {
    self[k] = '\0';
    char *slash = strrchr(self, '/');
    if (slash != NULL) {
      *slash = '\0';
      int n = snprintf(buf, len, "%s/diskprobe-prober", self);
      if (n >= 0 && (size_t)n < len && access(buf, X_OK) == 0)
        return buf;
    }
  }
  const char *installed = dp_monitor_default_prober();
  return access(installed, X_OK) == 0 ? installed : NULL;
}

int dp_cmd_watch(int argc, char **argv) {
  dp_cli_conf_t c;
  dp_cli_conf_init(&c, "probe");
  c.plugin.splay = 0; /* watch: the first line now; --splay sets it */
  watch_t w = {0};
  optind = 1;
  int rc = watch_options(argc, argv, &c, &w);
  if (rc != 0)
    return rc - 1;
  size_t n = (size_t)(argc - optind);
  w.args = argv + optind;
  w.ntargets = n;
  pthread_mutex_init(&w.lock, NULL);
  dp_target_conf_t *tc = calloc(n, sizeof(*tc));
  w.path = calloc(n, sizeof(*w.path));
  w.failed = calloc(n, sizeof(*w.failed));
  w.open_failed = calloc(n, sizeof(*w.open_failed));
  w.st = calloc(n * DP_PROBES_MAX, sizeof(*w.st));
  w.rounds = calloc(n, sizeof(*w.rounds));
  dp_monitor_t *m = NULL;
  int status = 2;
  if (!tc || !w.path || !w.failed || !w.open_failed || !w.st || !w.rounds) {
    fprintf(stderr, "diskprobe watch: out of memory\n");
    status = 1;
    goto done;
  }
  if (watch_targets(&w, &c, tc) != 0)
    goto done;
  char prober[PATH_MAX];
  dp_monitor_conf_t mc = {.plugin = &c.plugin,
                          .targets = tc,
                          .ntargets = n,
                          .host = "localhost",
                          .queue_len = 16,
                          .prober = watch_prober(prober, sizeof(prober))};
  dp_monitor_sink_t sink = {.arg = &w,
                            .log = watch_log,
                            .notice = watch_notice,
                            .sample = watch_sample,
                            .verdict = watch_verdict,
                            .device = watch_device};
  if (dp_monitor_new(&m, &mc, &sink) < 0)
    goto done; /* the cause is on stderr already */
  w.monitor = m;
  status = 1;
  /* The workers block SIGINT/SIGTERM (every asynchronous signal): only
   * this thread stops on them, and probes never see EINTR from a Ctrl-C. */
  rc = dp_monitor_start(m);
  struct sigaction sa = {.sa_handler = watch_on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (rc == 0)
    status = watch_loop(&w, m);
  if (w.printed_header)
    print_summary(&w, tc, w.st, DP_PROBES_MAX);
  dp_monitor_stop(m);
done:
  dp_monitor_free(m);
  watch_free(&w, tc);
  return status;
}
