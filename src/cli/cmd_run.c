/*
 * cmd_run.c - `diskprobe run`: one probe against one target, printed as a
 * table or one JSON object.
 *
 * Exit status: 0 on success, 1 when the probe could not run or saw I/O
 * errors or a stall, 2 on a usage error. Failures print one line on stderr.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "engine.h"
#include "target.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_json(const dp_result_t *r, const dp_target_t *t) {
  printf("{\"target\":\"%s\",\"device\":\"%s\",\"pattern\":\"%s\","
         "\"block_size\":%u,\"queue_depth\":%u,",
         t->path, t->dev.name, dp_pattern_name(r->pattern), r->block_size,
         r->queue_depth);
  printf("\"ops\":%llu,\"bytes\":%llu,\"elapsed_s\":%.9f,\"iops\":%.3f,"
         "\"bytes_per_second\":%.1f,",
         (unsigned long long)r->ops, (unsigned long long)r->bytes, r->elapsed_s,
         r->iops, r->bytes_per_s);
  printf("\"latency_s\":{\"min\":%.9f,\"mean\":%.9f,\"p50\":%.9f,"
         "\"p90\":%.9f,\"p99\":%.9f,\"p99.9\":%.9f,\"max\":%.9f},",
         r->lat_min_s, r->lat_mean_s, r->lat_p50_s, r->lat_p90_s, r->lat_p99_s,
         r->lat_p999_s, r->lat_max_s);
  printf("\"achieved_queue_depth\":%.4f,", r->achieved_qd);
  printf("\"errors\":{\"io\":%llu,\"short\":%llu,\"timeout\":%llu},",
         (unsigned long long)r->err_io, (unsigned long long)r->err_short,
         (unsigned long long)r->err_timeout);
  printf("\"stalled\":%s,", r->stalled ? "true" : "false");
  printf("\"cpu_s\":{\"user\":%.6f,\"system\":%.6f},\"wall_s\":%.6f}\n",
         r->cpu_user_s, r->cpu_sys_s, r->wall_s);
}

static void print_text(const dp_result_t *r, const dp_target_t *t) {
  char bs[32];
  dp_format_size(r->block_size, bs, sizeof(bs));
  printf("target     %s (device %s%s%s)\n", t->path,
         t->dev.name[0] ? t->dev.name : "unknown",
         t->dev.partition ? " on " : "", t->dev.partition ? t->dev.disk : "");
  printf("job        %s, block %s, queue depth %u\n",
         dp_pattern_name(r->pattern), bs, r->queue_depth);
  printf("ops        %llu in %.3f s\n", (unsigned long long)r->ops,
         r->elapsed_s);
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

static int bad_arg(const char *opt, const char *val, const char *allowed) {
  fprintf(stderr, "diskprobe: invalid %s '%s': %s\n", opt, val, allowed);
  return 2;
}

int dp_cmd_run(int argc, char **argv) {
  static const struct option opts[] = {
      {"pattern", required_argument, NULL, 'p'},
      {"block-size", required_argument, NULL, 'b'},
      {"queue-depth", required_argument, NULL, 'q'},
      {"duration", required_argument, NULL, 'd'},
      {"ops", required_argument, NULL, 'n'},
      {"timeout", required_argument, NULL, 't'},
      {"file-size", required_argument, NULL, 's'},
      {"format", required_argument, NULL, 'f'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  dp_job_t job = {.pattern = DP_PATTERN_RANDREAD,
                  .block_size = 8192,
                  .queue_depth = 1,
                  .duration_ns = 2000000000ull,
                  .timeout_ns = 10000000000ull};
  uint64_t file_size = 1ull << 30, v;
  int json = 0, c;
  char *end;
  while ((c = getopt_long(argc, argv, "p:b:q:d:n:t:s:f:h", opts, NULL)) != -1) {
    switch (c) {
    case 'p':
      if (dp_pattern_parse(optarg, &job.pattern) < 0)
        return bad_arg(
            "--pattern", optarg,
            "one of randread, seqread, randwrite, seqwrite, syncwrite");
      break;
    case 'b':
      if (dp_parse_size(optarg, &v) < 0 || v < 512 || v > (64u << 20) ||
          v % 512)
        return bad_arg("--block-size", optarg,
                       "a multiple of 512 from 512 to 64M");
      job.block_size = (uint32_t)v;
      break;
    case 'q':
      errno = 0;
      v = strtoull(optarg, &end, 10);
      if (errno || *end || v < 1 || v > DP_QD_MAX)
        return bad_arg("--queue-depth", optarg, "an integer from 1 to 256");
      job.queue_depth = (uint32_t)v;
      break;
    case 'd':
      if (dp_parse_duration(optarg, &job.duration_ns) < 0)
        return bad_arg("--duration", optarg, "a duration such as 2s or 500ms");
      break;
    case 'n':
      errno = 0;
      job.max_ops = strtoull(optarg, &end, 10);
      if (errno || *end)
        return bad_arg("--ops", optarg, "a non-negative integer");
      break;
    case 't':
      if (dp_parse_duration(optarg, &job.timeout_ns) < 0 ||
          job.timeout_ns < 1000000)
        return bad_arg("--timeout", optarg, "a duration of at least 1ms");
      break;
    case 's':
      if (dp_parse_size(optarg, &file_size) < 0 ||
          file_size < DP_PROBE_FILE_MIN_BYTES)
        return bad_arg("--file-size", optarg, "a size of at least 1M");
      break;
    case 'f':
      if ((json = dp_cli_format(optarg)) < 0)
        return bad_arg("--format", optarg, "text or json");
      break;
    case 'h':
      dp_cli_usage(stdout);
      return 0;
    default:
      dp_cli_usage(stderr);
      return 2;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "diskprobe: run needs exactly one TARGET (see diskprobe "
                    "--help)\n");
    return 2;
  }
  if (job.duration_ns == 0 && job.max_ops == 0)
    return bad_arg("--duration", "0", "need a duration or --ops");
  const char *path = argv[optind];

  dp_target_t t;
  int rc = dp_target_open(path, file_size, &t);
  if (rc < 0) {
    fprintf(stderr, "diskprobe: %s: %s\n", path, t.err);
    return 1;
  }
  if (t.kind == DP_TARGET_BLOCK && dp_pattern_writes(job.pattern)) {
    fprintf(stderr,
            "diskprobe: %s: refusing %s on a block device: write probes only "
            "run inside a probe file\n",
            path, dp_pattern_name(job.pattern));
    dp_target_close(&t);
    return 2;
  }
  if (job.block_size % t.align || job.block_size > t.data_bytes) {
    fprintf(stderr,
            "diskprobe: %s: block size %u is not a multiple of the device's "
            "O_DIRECT alignment %u or exceeds the target\n",
            path, job.block_size, t.align);
    dp_target_close(&t);
    return 2;
  }
  job.region_offset = t.data_offset;
  job.region_bytes = t.data_bytes - t.data_bytes % job.block_size;

  dp_engine_t *e;
  rc = dp_engine_open(&e, t.fd, t.align, job.queue_depth, job.block_size);
  if (rc < 0) {
    fprintf(stderr, "diskprobe: %s: cannot set up AIO: %s\n", path,
            strerror(-rc));
    dp_target_close(&t);
    return 1;
  }
  dp_result_t r;
  rc = dp_engine_run(e, &job, &r);
  if (rc < 0 && rc != -EBUSY && r.ops == 0 && r.err_io == 0) {
    fprintf(stderr, "diskprobe: %s: probe failed: %s\n", path, strerror(-rc));
    dp_engine_close(e);
    dp_target_close(&t);
    return 1;
  }
  if (json)
    print_json(&r, &t);
  else
    print_text(&r, &t);
  int status = 0;
  if (r.stalled) {
    fprintf(stderr,
            "diskprobe: %s: stalled: %u I/O still outstanding after %.1f s\n",
            path, dp_engine_outstanding(e), (double)job.timeout_ns / 1e9);
    status = 1;
  } else if (r.err_io || r.err_short) {
    fprintf(stderr,
            "diskprobe: %s: %llu I/O errors, %llu short transfers%s%s\n", path,
            (unsigned long long)r.err_io, (unsigned long long)r.err_short,
            r.first_error ? ": " : "",
            r.first_error ? strerror(-r.first_error) : "");
    status = 1;
  }
  dp_engine_close(e);
  dp_target_close(&t);
  return status;
}
