/*
 * cmd_run.c - `diskprobe run`: one probe against one target, printed as a
 * table or one JSON object.
 *
 * Flags, their defaults and ranges come from the option table (the same
 * as the plugin's Probe and Target options) and are checked by the same
 * setters; the job is built by dp_job_build, as the scheduler's is.
 *
 * Exit status: 0 on success, 1 when the probe could not run or saw I/O
 * errors, writes refused for want of space or a stall, 2 on a usage
 * error. Failures print one line on stderr.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "engine.h"
#include "job.h"
#include "target.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void print_json(const dp_result_t *r, const dp_target_t *t) {
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "target", dp_cli_json_str(t->path));
  dp_cli_json_set(o, "device", dp_cli_json_str(t->dev.name));
  dp_cli_json_result(o, r);
  dp_cli_json_print(stdout, o, DP_CLI_JSON_LINE);
}

static void print_text(const dp_result_t *r, const dp_target_t *t) {
  char bs[32];
  dp_format_size(r->block_size, bs, sizeof(bs));
  printf("target     %s (device %s%s%s)\n", t->path,
         t->dev.name[0] ? t->dev.name : "unknown",
         t->dev.partition ? " on " : "", t->dev.partition ? t->dev.disk : "");
  printf("job        %s, block %s, queue depth %u\n",
         dp_pattern_name(r->pattern), bs, r->queue_depth);
  if (r->stepped)
    printf("ops        %llu; the rate over %llu in %.3f s, whole steps of a "
           "throttle%s\n",
           (unsigned long long)r->ops, (unsigned long long)r->window_ops,
           r->elapsed_s, r->burst_ops >= 1 ? "" : " (no burst at the start)");
  else
    printf("ops        %llu in %.3f s\n", (unsigned long long)r->ops,
           r->elapsed_s);
  if (r->stepped && r->burst_ops >= 1)
    printf("burst      %.0f I/Os at the start beyond the rate (credit left "
           "by earlier I/O)\n",
           r->burst_ops);
  printf("iops       %.1f\n", r->iops);
  printf("throughput %.2f MiB/s\n", r->bytes_per_s / (1024.0 * 1024.0));
  printf("latency    min %.1f  mean %.1f  p50 %.1f  p90 %.1f  p99 %.1f  "
         "p99.9 %.1f  max %.1f (us)\n",
         r->lat_min_s * 1e6, r->lat_mean_s * 1e6, r->lat_p50_s * 1e6,
         r->lat_p90_s * 1e6, r->lat_p99_s * 1e6, r->lat_p999_s * 1e6,
         r->lat_max_s * 1e6);
  printf("queue      achieved depth %.2f (IOPS x mean latency)\n",
         r->achieved_qd);
  printf("errors     io %llu, short %llu, timeout %llu%s\n",
         (unsigned long long)r->err_io, (unsigned long long)r->err_short,
         (unsigned long long)r->err_timeout, r->stalled ? " (STALLED)" : "");
  printf("cpu        user %.3f s, system %.3f s\n", r->cpu_user_s,
         r->cpu_sys_s);
}

static const char *const run_usage[] = {"[--format text|json] TARGET", NULL};
static const dp_cli_opt_help_t run_opts[] = {
    {"--format text|json",
     "a table (text, the default) or one JSON object with every figure"},
    {NULL, NULL}};
static const char *const run_examples[] = {
    "diskprobe run /var/tmp/dp",
    "diskprobe run --queue-depth 32 --duration 2s /var/tmp/dp",
    "diskprobe run --pattern seqread --block-size 1M --format json /dev/sdb",
    NULL};
const dp_cli_help_t dp_cli_help_run = {
    "run",
    "one probe of a disk or probe file: IOPS, MiB/s, latency",
    DP_CLI_RUN,
    run_usage,
    run_opts,
    "TARGET is a block device (opened read-only; write patterns are "
    "refused) or a probe-file path: a directory that holds diskprobe.probe, "
    "or a path ending in .probe (created on first use). Exit status: 0, 1 "
    "when the probe could not run, saw I/O errors or stalled, 2 on a usage "
    "error.",
    run_examples};

/* What the command line asks for. */
typedef struct {
  dp_cli_conf_t c;
  int json;
  const char *path; /* TARGET */
} run_args_t;

/* Reads the flags and TARGET into *a: -1 to go on, else the exit status
 * (0 after --help, 2 after a usage error's line). */
static int run_parse(int argc, char **argv, run_args_t *a) {
  static const struct option own[] = {{"format", required_argument, NULL, 'f'},
                                      {"help", no_argument, NULL, 'h'},
                                      {NULL, 0, NULL, 0}};
  struct option opts[DP_CLI_OPTS_MAX];
  dp_cli_longopts(DP_CLI_RUN, own, opts);
  dp_cli_conf_init(&a->c, "run");
  a->json = 0;
  int ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    if (ch >= DP_CLI_OPT_BASE) {
      if (dp_cli_apply(&a->c, "run", ch, optarg) < 0)
        return 2;
      continue;
    }
    switch (ch) {
    case 'f':
      if ((a->json = dp_cli_format(optarg)) < 0) {
        fprintf(stderr, "diskprobe run: invalid --format '%s': text or json\n",
                optarg);
        return 2;
      }
      break;
    case 'h':
      dp_cli_help(stdout, &dp_cli_help_run);
      return 0;
    default:
      return dp_cli_getopt_error("run", ch, argv);
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "diskprobe: run needs exactly one TARGET (see diskprobe "
                    "--help)\n");
    return 2;
  }
  a->path = argv[optind];
  char err[512];
  if (dp_probe_conf_check(&a->c.probe, err, sizeof(err)) < 0) {
    fprintf(stderr, "diskprobe run: %s\n", err);
    return 2;
  }
  return -1;
}

/* Opens the target and builds the probe's job: 0, or the exit status
 * after one line (the target closed again). */
static int run_open(run_args_t *a, dp_target_t *t, dp_job_t *job) {
  /* a probe file's layout paced as the plugin's (LayoutRate) */
  dp_layout_conf_t lc = {.rate_bytes_per_s = a->c.target.layout_rate_bytes};
  int rc = dp_target_open(a->path, a->c.target.file_size_bytes,
                          dp_pattern_writes(a->c.probe.pattern), &lc, t);
  if (rc < 0) {
    fprintf(stderr, "diskprobe: %s: %s\n", a->path, t->err);
    return 1;
  }
  char err[256];
  if (dp_job_build(&a->c.probe, t, a->c.target.timeout_ns, job, err,
                   sizeof(err)) < 0) {
    fprintf(stderr, "diskprobe: %s: %s\n", a->path, err);
    dp_target_close(t);
    return 2;
  }
  return 0;
}

/* Runs the job on an engine of its own: 0 with *e open and *r filled, or
 * 1 after one line (no engine left open). */
static int run_probe(const char *path, const dp_target_t *t,
                     const dp_job_t *job, dp_engine_t **e, dp_result_t *r) {
  int rc =
      dp_engine_open(e, t->fd, t->align, job->queue_depth, job->block_size);
  if (rc < 0) {
    fprintf(stderr, "diskprobe: %s: cannot set up AIO: %s\n", path,
            strerror(-rc));
    return 1;
  }
  rc = dp_engine_run(*e, job, r);
  if (rc < 0 && rc != -EBUSY && r->ops == 0 && r->err_io == 0) {
    fprintf(stderr, "diskprobe: %s: probe failed: %s\n", path, strerror(-rc));
    dp_engine_close(*e);
    return 1;
  }
  return 0;
}

/* The exit status of a probe that ran: 1, with a line, after a stall or
 * I/O errors. */
static int run_status(const char *path, const dp_result_t *r,
                      const dp_engine_t *e, const dp_job_t *job) {
  if (r->stalled) {
    fprintf(stderr,
            "diskprobe: %s: stalled: %u I/O still outstanding after %.1f s\n",
            path, dp_engine_outstanding(e), (double)job->timeout_ns / 1e9);
    return 1;
  }
  if (r->err_io || r->err_short) {
    fprintf(stderr,
            "diskprobe: %s: %llu I/O errors, %llu short transfers%s%s\n", path,
            (unsigned long long)r->err_io, (unsigned long long)r->err_short,
            r->first_error ? ": " : "",
            r->first_error ? strerror(-r->first_error) : "");
    return 1;
  }
  if (r->err_nospace) {
    fprintf(stderr,
            "diskprobe: %s: %llu writes refused with ENOSPC (no space left "
            "on device): the filesystem is full, not a disk error\n",
            path, (unsigned long long)r->err_nospace);
    return 1;
  }
  return 0;
}

int dp_cmd_run(int argc, char **argv) {
  run_args_t a;
  int rc = run_parse(argc, argv, &a);
  if (rc >= 0)
    return rc;
  dp_target_t t;
  dp_job_t job;
  if ((rc = run_open(&a, &t, &job)) != 0)
    return rc;
  dp_engine_t *e;
  dp_result_t r;
  if ((rc = run_probe(a.path, &t, &job, &e, &r)) == 0) {
    if (a.json)
      print_json(&r, &t);
    else
      print_text(&r, &t);
    rc = run_status(a.path, &r, e, &job);
    dp_engine_close(e);
  }
  dp_target_close(&t);
  return rc;
}
