/*
 * replay_input.h - what `diskprobe replay` reads: the JSON lines `diskprobe
 * watch --format json` prints (formats and limits: cmd_replay.c's header),
 * one line at a time through jansson (jsonl.h), checked.
 *
 * Not thread-safe.
 */
#ifndef DP_CLI_REPLAY_INPUT_H
#define DP_CLI_REPLAY_INPUT_H

#include "vocab.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The limits of a probe line's figures (a latency over a day is no
 * latency; watch prints Unix seconds). */
#define DP_REPLAY_IOPS_MAX 1e10
#define DP_REPLAY_BYTES_PER_S_MAX 1e15
#define DP_REPLAY_LATENCY_MAX_S 86400.0
#define DP_REPLAY_TIME_MAX_S 1e10 /* the year 2286: nanoseconds fit 64 bits */
#define DP_REPLAY_COUNT_MAX 9007199254740992.0 /* 2^53: exact in a double */

/* The targets named in the input, in order of first appearance: a record
 * names its target by index (a path is PATH_MAX bytes, a record a few
 * hundred). At most DP_REPLAY_TARGETS_MAX; zero it before the first line. */
#define DP_REPLAY_TARGETS_MAX 64
typedef struct {
  char name[DP_REPLAY_TARGETS_MAX][PATH_MAX];
  size_t n;
} dp_replay_names_t;

/* One line of the input. */
typedef enum {
  DP_REPLAY_LINE_SKIP,    /* a device-view line, blank line or # comment */
  DP_REPLAY_LINE_PROBE,   /* a probe result */
  DP_REPLAY_LINE_VERDICT, /* a verdict: media, model, ceiling */
} dp_replay_kind_t;

typedef struct {
  uint32_t target; /* index into dp_replay_names_t */
  char probe[DP_NAME_MAX];
  uint64_t round, ops;
  uint64_t tail_ops;  /* the I/Os behind its p99, for health.h's obs.ops:
                         "ops" when given; without it 0 (not known), or
                         100 when p99 equals max (a p99 that is the round's
                         slowest I/O comes from 100 I/Os or fewer) */
  double time;        /* Unix seconds, 0 to 1e10; 0 when absent */
  double iops;        /* 0 to 1e10; NaN: null or absent */
  double bytes_per_s; /* "bytes_per_second", 0 to 1e15; NaN: null, absent */
  double p50, mean;   /* seconds, 0 to 86400; NaN: null or absent */
  double p99;         /* seconds, as p50; NaN when absent (no tail rule) */
  int stalled;        /* true; false or absent: 0 */
  int confirm;        /* "confirm": true, a confirmation round's line */
  uint64_t errors;    /* errors.io + errors.short */
  int verdict;        /* a verdict line: media, model, ceiling below */
  char media[16], model[64];
  double ceiling_s; /* 0 to 86400; NaN: null or absent */
} dp_replay_rec_t;

/* One line (len bytes, newline cut off) into *r, its target added to
 * names when new: its kind, or -1 with why filled (one phrase, no file or
 * line number; "more than 64 targets" when names is full). */
int dp_replay_parse_line(const char *line, size_t len, dp_replay_names_t *names,
                         dp_replay_rec_t *r, char *why, size_t whylen);

/* Appends the probe and verdict lines of f (named path in messages, lines
 * at most max bytes) to *recs (*n used of *cap; free it). 0, or -1 after
 * one line on stderr "diskprobe CMD: PATH: line N: WHY" (cmd: "replay",
 * "compare"). */
int dp_replay_read(FILE *f, const char *cmd, const char *path, size_t max,
                   dp_replay_names_t *names, dp_replay_rec_t **recs, size_t *n,
                   size_t *cap);

#endif /* DP_CLI_REPLAY_INPUT_H */
