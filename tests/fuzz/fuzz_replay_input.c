/*
 * fuzz_replay_input.c - libFuzzer target for `diskprobe replay`'s reader
 * (src/cli/replay_input.c over src/cli/jsonl.c and jansson): the bounded
 * record reader and the per-line parse of watch's JSON lines.
 *
 * The first byte chooses the longest record (16 to 4111 bytes, so that
 * the over-long path is reached at libFuzzer's input sizes); the rest is
 * the input file, read from memory. Checked:
 *   - dp_replay_read returns 0 (nothing on stderr) or -1 (exactly one line
 *     on stderr, "diskprobe replay: fuzz: ..."), and on 0 every record it
 *     kept is within the documented limits: a target (and a probe on a
 *     probe line) not empty, time 0 to 1e10, IOPS 0 to 1e10 or NaN,
 *     latencies and the ceiling 0 to 86400 or NaN, stalled 0 or 1;
 *   - dp_replay_parse_line on every newline-separated piece of the input
 *     gives a kind or -1 with a reason, the same twice, and any record it
 *     accepts is within the same limits.
 */
#define _GNU_SOURCE
#include "cli/replay_input.h"
#include "fuzz_check.h"

#include <fcntl.h>
#include <math.h>
#include <sanitizer/common_interface_defs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[300];
static int report_fd = -1; /* the real stderr, for sanitizer reports */

static void cleanup(void) { unlink(err); }

static void setup(void) {
  const char *t = getenv("TMPDIR");
  snprintf(err, sizeof(err), "%s/fz-replay.%d.err", t && *t ? t : "/tmp",
           (int)getpid());
  atexit(cleanup);
  report_fd = dup(2);
  CHECK(report_fd >= 0);
  __sanitizer_set_report_fd((void *)(intptr_t)report_fd);
}

static int in(double x, double lo, double hi) { return x >= lo && x <= hi; }

/* the targets of the whole input and of single lines */
static dp_replay_names_t names, line_names;

static void check_rec(const dp_replay_names_t *nm, const dp_replay_rec_t *r,
                      int kind) {
  CHECK(nm->n <= DP_REPLAY_TARGETS_MAX && r->target < nm->n);
  CHECK(memchr(nm->name[r->target], '\0', PATH_MAX) != NULL);
  CHECK(memchr(r->probe, '\0', sizeof(r->probe)) != NULL);
  CHECK(memchr(r->media, '\0', sizeof(r->media)) != NULL);
  CHECK(memchr(r->model, '\0', sizeof(r->model)) != NULL);
  CHECK(nm->name[r->target][0] != '\0');
  CHECK(r->round <= (uint64_t)DP_REPLAY_COUNT_MAX);
  if (kind == DP_REPLAY_LINE_VERDICT) {
    CHECK(r->verdict == 1);
    CHECK(isnan(r->ceiling_s) || in(r->ceiling_s, 0, DP_REPLAY_LATENCY_MAX_S));
    return;
  }
  CHECK(r->verdict == 0 && r->probe[0] != '\0');
  CHECK(in(r->time, 0, DP_REPLAY_TIME_MAX_S));
  CHECK(isnan(r->iops) || in(r->iops, 0, DP_REPLAY_IOPS_MAX));
  CHECK(isnan(r->p50) || in(r->p50, 0, DP_REPLAY_LATENCY_MAX_S));
  CHECK(isnan(r->mean) || in(r->mean, 0, DP_REPLAY_LATENCY_MAX_S));
  CHECK(r->stalled == 0 || r->stalled == 1);
  CHECK(r->ops <= (uint64_t)DP_REPLAY_COUNT_MAX);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  char *buf = malloc(65536);
  CHECK(buf != NULL);
  *len = fread(buf, 1, 65535, f);
  buf[*len] = '\0';
  fclose(f);
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (err[0] == '\0')
    setup();
  if (size == 0)
    return 0;
  size_t max = 16 + (size_t)data[0] * 16;
  const char *text = (const char *)data + 1;
  size_t tlen = size - 1;

  /* the reader over the whole input, stderr to a file */
  FILE *f = fmemopen((void *)text, tlen ? tlen : 1, "r");
  CHECK(f != NULL);
  if (tlen == 0)
    fgetc(f); /* fmemopen needs a size; an empty input is read to its end */
  fflush(stderr);
  int se = dup(2), fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK(se >= 0 && fd >= 0);
  dup2(fd, 2);
  close(fd);
  dp_replay_rec_t *recs = NULL;
  size_t n = 0, cap = 0;
  names.n = 0;
  int rc = dp_replay_read(f, "replay", "fuzz", max, &names, &recs, &n, &cap);
  fflush(stderr);
  dup2(se, 2);
  close(se);
  fclose(f);
  CHECK(rc == 0 || rc == -1);
  size_t le;
  char *e = slurp(err, &le);
  if (rc == 0) {
    CHECK(le == 0);
    for (size_t i = 0; i < n; i++)
      check_rec(&names, &recs[i],
                recs[i].verdict ? DP_REPLAY_LINE_VERDICT
                                : DP_REPLAY_LINE_PROBE);
  } else {
    CHECK(le > 1 && strchr(e, '\n') == e + le - 1);
    CHECK(strncmp(e, "diskprobe replay: fuzz: ", 24) == 0);
  }
  free(e);
  free(recs);

  /* the per-line parse on every piece between newlines */
  for (const char *p = text, *end = text + tlen; p <= end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    char *line = malloc(len + 1);
    CHECK(line != NULL);
    memcpy(line, p, len);
    line[len] = '\0';
    dp_replay_rec_t a, b;
    char why[256] = "", why2[256] = "";
    line_names.n = 0;
    int ka = dp_replay_parse_line(line, len, &line_names, &a, why, sizeof(why));
    int kb =
        dp_replay_parse_line(line, len, &line_names, &b, why2, sizeof(why2));
    CHECK(ka == kb && (ka <= 0 || (a.target == b.target && a.target == 0 &&
                                   line_names.n == 1)));
    CHECK(ka >= -1 && ka <= DP_REPLAY_LINE_VERDICT);
    if (ka < 0)
      CHECK(why[0] != '\0' && strcmp(why, why2) == 0);
    else if (ka != DP_REPLAY_LINE_SKIP)
      check_rec(&line_names, &a, ka);
    free(line);
    if (nl == NULL)
      break;
    p = nl + 1;
  }
  return 0;
}
