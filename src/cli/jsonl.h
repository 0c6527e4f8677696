/*
 * jsonl.h - the offline readers' input (`diskprobe replay`, `diskprobe
 * failslow`): lines of bounded length, and JSON lines parsed by jansson
 * into one object each, with strict numbers. Every refusal names the file
 * and the line: "diskprobe CMD: FILE: line N: WHY".
 *
 * Used by the command only: the library (src/) and the plugin do not
 * depend on jansson. Not thread-safe.
 */
#ifndef DP_CLI_JSONL_H
#define DP_CLI_JSONL_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* The longest line a reader takes, in bytes (newline not counted). */
#define DP_JSONL_LINE_MAX (1024 * 1024)

/* A line reader over an open stream. */
typedef struct {
  FILE *f;
  const char *cmd;  /* "replay": messages start "diskprobe replay: " */
  const char *path; /* for messages ("-": standard input) */
  size_t max;       /* the longest record, bytes (DP_JSONL_LINE_MAX) */
  int objects;      /* a JSON object or array goes on to its last line */
  size_t lineno;    /* the first line of the record last returned */
  size_t next_line; /* the first line of the next record */
  char *buf;        /* max + 1 bytes, allocated on first use */
} dp_jsonl_t;

/* A reader of f (not closed by it) with the default limit. objects: a
 * line that opens a JSON object or array (its first byte other than
 * blanks is '{' or '[') and does not close it goes on until it is closed,
 * as `jq .` prints one object over many lines; else a record is a line. */
void dp_jsonl_init(dp_jsonl_t *r, FILE *f, const char *cmd, const char *path,
                   int objects);

/* The next record (a line, or the lines of one object) into r->buf,
 * without its last newline (and a '\r' before it), NUL-terminated; *len
 * its length (it may hold NUL bytes). 1 for a record, 0 at the end of the
 * input, -1 after one line on stderr: a record longer than r->max bytes
 * ("diskprobe CMD: PATH: line N: longer than MAX bytes", N its first line;
 * the rest of it is not read), a read error ("diskprobe CMD: PATH:
 * strerror"), out of memory. */
int dp_jsonl_next(dp_jsonl_t *r, size_t *len);

/* Frees the buffer (the stream stays open). */
void dp_jsonl_free(dp_jsonl_t *r);

/* Prints "diskprobe CMD: PATH: line N: " and the formatted rest, then a
 * newline, on stderr. Returns -1. */
int dp_jsonl_fail(const dp_jsonl_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* line (len bytes) as one JSON object: the object (json_decref it), or
 * NULL with why filled ("not a JSON object: jansson's message at column
 * C"). Duplicate keys are refused; any key order and whitespace taken. */
json_t *dp_jsonl_object(const char *line, size_t len, char *why, size_t whylen);

/* The number at key in obj, checked: a JSON number from lo to hi (an
 * integer when integral is set). Absent: *out = absent and 0. null: *out =
 * NaN when null_ok, else refused. Refused (-1, why filled: "\"KEY\": want
 * a number from LO to HI, not VALUE"): a string, true, false, an object, an
 * array, a number out of range. */
int dp_jsonl_number(const json_t *obj, const char *key, double lo, double hi,
                    int integral, int null_ok, double absent, double *out,
                    char *why, size_t whylen);

/* The string at key into out (len bytes). 0; 1 when absent (out empty); -1
 * with why filled when it is no string, longer than len - 1 bytes or holds
 * a NUL. */
int dp_jsonl_string(const json_t *obj, const char *key, char *out, size_t len,
                    char *why, size_t whylen);

#endif /* DP_CLI_JSONL_H */
