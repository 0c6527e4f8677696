/*
 * cmd_watch.c - `diskprobe watch`: the plugin's scheduler, on a terminal.
 *
 *   diskprobe watch [--interval 60s] [--count N] [--format text|json]
 *                   [--duty-cycle 2] [--splay] [probe and target flags]
 *                   TARGET...
 *
 * The same scheduler (scheduler.h) and option table as the collectd
 * plugin: one worker per disk, DutyCycle pacing, stall fencing. It prints
 * one line per probe per round per target (text, or one JSON object per
 * line with run's keys plus "time", "probe", "round", "interval_s"), and
 * the scheduler's events (open failures, I/O errors, stalls, a stretched
 * interval) as one line each on stderr. Without probe flags each target
 * runs the plugin's default probe set; with any, the one probe they
 * describe. Splay is off unless --splay: an operator wants the first line
 * now.
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
#include "cli.h"
#include "clock.h"
#include "events.h"
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
#include <time.h>
#include <unistd.h>

#define WATCH_OPERAND "[--count N] [--format text|json] TARGET..."
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
  pthread_mutex_t lock;   /* the fields below: events come from workers */
  char (*path)[PATH_MAX]; /* the probe file or device node, once opened */
  unsigned *failed;       /* rounds that failed (open, engine refused) */
  int *open_failed;       /* 1 once an open failed */
  int opened_any;
} watch_t;

/* A sample's finish time as Unix seconds (the scheduler's clock is
 * CLOCK_MONOTONIC). */
static double wall_of(uint64_t mono_ns) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  double now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  return now - (double)(dp_now_ns() - mono_ns) / 1e9;
}

/* Bookkeeping for the summary and the exit status, and the same line the
 * collectd plugin logs for the event (events.h). */
static void watch_event(const dp_sched_event_t *ev, void *arg) {
  watch_t *w = arg;
  pthread_mutex_lock(&w->lock);
  if (ev->kind == DP_SCHED_OPENED) {
    snprintf(w->path[ev->target], PATH_MAX, "%s", ev->path);
    w->opened_any = 1;
  } else if (ev->kind == DP_SCHED_OPEN_FAILED ||
             ev->kind == DP_SCHED_PROBE_FAILED) {
    w->failed[ev->target]++;
    if (ev->kind == DP_SCHED_OPEN_FAILED)
      w->open_failed[ev->target] = 1;
  }
  pthread_mutex_unlock(&w->lock);
  /* an open is retried every round: say so the 1st, 2nd, 4th ... time */
  if (ev->kind == DP_SCHED_WORKER_STARTED ||
      (ev->kind == DP_SCHED_OPEN_FAILED &&
       (ev->repeated & (ev->repeated - 1)) != 0))
    return;
  char line[1024];
  if (ev->kind == DP_SCHED_OPENED && ev->recovered && !ev->laid_out)
    snprintf(line, sizeof(line), "target \"%s\" (%s) is probing again.",
             ev->target_name, ev->path);
  else if (dp_event_log_line(ev, line, sizeof(line)) < 0)
    return;
  fprintf(stderr, "diskprobe watch: %s\n", line);
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

static void print_text(const dp_sched_sample_t *smp, const char *who,
                       int twidth, int pwidth) {
  char ts[16];
  time_t t = (time_t)wall_of(smp->done_ns);
  struct tm tm;
  strftime(ts, sizeof(ts), "%H:%M:%S", localtime_r(&t, &tm));
  printf("%-8s  %-*s  %-*s  %10.1f  %10.1f  %10.1f  %d\n", ts, twidth, who,
         pwidth, smp->probe_name, smp->r.iops, smp->r.lat_p50_s * 1e6,
         smp->r.lat_p99_s * 1e6, smp->r.stalled);
}

static void print_json(const dp_sched_sample_t *smp, const char *path,
                       const char *device) {
  printf("{\"time\":%.6f,\"target\":", wall_of(smp->done_ns));
  dp_cli_json_str(stdout, path);
  printf(",\"device\":");
  dp_cli_json_str(stdout, device);
  printf(",\"probe\":");
  dp_cli_json_str(stdout, smp->probe_name);
  printf(",\"round\":%llu,\"interval_s\":%.3f,", (unsigned long long)smp->round,
         (double)smp->interval_ns / 1e9);
  dp_cli_json_result(stdout, &smp->r);
  printf("}\n");
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

int dp_cmd_watch(int argc, char **argv) {
  static const struct option own[] = {{"count", required_argument, NULL, 'c'},
                                      {"format", required_argument, NULL, 'f'},
                                      {"help", no_argument, NULL, 'h'},
                                      {NULL, 0, NULL, 0}};
  struct option opts[DP_CLI_OPTS_MAX];
  dp_cli_longopts(DP_CLI_WATCH, own, opts);
  dp_cli_conf_t c;
  dp_cli_conf_init(&c, "probe");
  c.plugin.splay = 0; /* watch: the first line now; --splay sets it */
  uint64_t count = 0;
  int json = 0, ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    if (ch >= DP_CLI_OPT_BASE) {
      if (dp_cli_apply(&c, "watch", ch, optarg) < 0)
        return 2;
      continue;
    }
    switch (ch) {
    case 'c':
      if (dp_parse_uint(optarg, &count) < 0 || count == 0)
        return usage_error("invalid --count", optarg);
      break;
    case 'f':
      if ((json = dp_cli_format(optarg)) < 0)
        return usage_error("invalid --format (text or json)", optarg);
      break;
    case 'h':
      dp_cli_synopsis(stdout, "usage: ", "watch", DP_CLI_WATCH, WATCH_OPERAND,
                      1);
      return 0;
    default:
      return dp_cli_getopt_error("watch", ch, argv);
    }
  }
  if (optind >= argc)
    return usage_error("no TARGET given", NULL);
  if (c.probe_set)
    snprintf(c.probe.name, sizeof(c.probe.name), "%s-qd%u",
             dp_pattern_name(c.probe.pattern), c.probe.queue_depth);

  size_t n = (size_t)(argc - optind);
  watch_t w = {.args = argv + optind, .ntargets = n};
  pthread_mutex_init(&w.lock, NULL);
  dp_target_conf_t *tc = calloc(n, sizeof(*tc));
  w.path = calloc(n, sizeof(*w.path));
  w.failed = calloc(n, sizeof(*w.failed));
  w.open_failed = calloc(n, sizeof(*w.open_failed));
  stats_t *st = calloc(n * DP_PROBES_MAX, sizeof(*st));
  uint64_t *rounds = calloc(n, sizeof(*rounds));
  dp_sched_t *s = NULL;
  int status = 2, twidth = 6, pwidth = 5;
  if (!tc || !w.path || !w.failed || !w.open_failed || !st || !rounds) {
    fprintf(stderr, "diskprobe watch: out of memory\n");
    status = 1;
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    if (target_conf(&c, w.args[i], i, &tc[i]) != 0)
      goto done;
    snprintf(w.path[i], PATH_MAX, "%s", tc[i].path);
    if ((int)strlen(w.args[i]) > twidth)
      twidth = (int)strlen(w.args[i]);
    for (size_t j = 0; j < tc[i].nprobes; j++)
      if ((int)strlen(tc[i].probes[j].name) > pwidth)
        pwidth = (int)strlen(tc[i].probes[j].name);
  }

  char err[PATH_MAX + 256];
  if (dp_conf_check_duplicates(tc, n, err, sizeof(err)) != 0) {
    fprintf(stderr, "diskprobe watch: %s\n", err);
    goto done;
  }
  dp_sched_conf_t sc;
  dp_sched_conf_init(&sc);
  sc.duty_cycle_percent = c.plugin.duty_cycle_percent;
  sc.splay = c.plugin.splay;
  sc.queue_len = 16;
  sc.on_event = watch_event;
  sc.event_arg = &w;
  status = 1;
  int rc = dp_sched_new(&s, &sc, tc, n);
  if (rc < 0) {
    fprintf(stderr, "diskprobe watch: cannot set up the scheduler: %s\n",
            strerror(-rc));
    goto done;
  }

  /* The scheduler's workers block SIGINT/SIGTERM (every asynchronous
   * signal): only this thread stops on them, and probes never see EINTR
   * from a Ctrl-C. */
  rc = dp_sched_start(s);
  struct sigaction sa = {.sa_handler = watch_on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (rc < 0) {
    fprintf(stderr, "diskprobe watch: cannot start the scheduler: %s\n",
            strerror(-rc));
    goto stop;
  }

  size_t max = dp_sched_max_samples(s);
  dp_sched_sample_t *buf = calloc(max ? max : 1, sizeof(*buf));
  if (buf == NULL)
    goto stop;
  int ran = 0;
  while (!watch_signalled) {
    dp_sched_wait(s, dp_now_ns() + POLL_NS);
    size_t got = dp_sched_take(s, buf, max);
    for (size_t k = 0; k < got; k++) {
      const dp_sched_sample_t *smp = &buf[k];
      size_t i = smp->target;
      pthread_mutex_lock(&w.lock);
      uint64_t failed = w.failed[i];
      pthread_mutex_unlock(&w.lock);
      if (count && rounds[i] + failed >= count)
        continue; /* this target is done: at most N rounds each */
      if (smp->last_in_round)
        rounds[i]++;
      if (!ran && !json)
        print_text_header(twidth, pwidth);
      ran = 1;
      account(&st[i * DP_PROBES_MAX + smp->probe], &smp->r);
      if (json) {
        dp_sched_target_state_t ts;
        char path[PATH_MAX];
        dp_sched_target_state(s, i, &ts);
        pthread_mutex_lock(&w.lock);
        snprintf(path, sizeof(path), "%s", w.path[i]);
        pthread_mutex_unlock(&w.lock);
        print_json(smp, path, ts.device);
      } else {
        print_text(smp, w.args[i], twidth, pwidth);
      }
    }
    fflush(stdout);
    pthread_mutex_lock(&w.lock);
    int all_failed = !w.opened_any, done = count > 0;
    for (size_t i = 0; i < n; i++) {
      all_failed = all_failed && w.open_failed[i];
      done = done && rounds[i] + w.failed[i] >= count;
    }
    pthread_mutex_unlock(&w.lock);
    if (all_failed) {
      fprintf(stderr, "diskprobe watch: no target could be opened\n");
      break;
    }
    if (done) {
      status = 0;
      break;
    }
  }
  if (watch_signalled)
    status = w.opened_any ? 0 : 1;
  free(buf);
  if (ran)
    print_summary(&w, tc, st, DP_PROBES_MAX);
stop:
  dp_sched_stop(s);
done:
  dp_sched_free(s);
  if (st)
    for (size_t i = 0; i < n * DP_PROBES_MAX; i++)
      free(st[i].p50);
  free(st);
  free(rounds);
  free(tc);
  free(w.path);
  free(w.failed);
  free(w.open_failed);
  pthread_mutex_destroy(&w.lock);
  return status;
}
