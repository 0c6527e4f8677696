/* cli.h - subcommands of the diskprobe command, one file each, and what
 * they share (common.c: flags from the option table, usage text;
 * json_out.c: the JSON they write). */
#ifndef DP_CLI_H
#define DP_CLI_H

#include "blockdev.h"
#include "conf.h"
#include "engine.h"
#include "failslow_input.h"
#include "options.h"

#include <getopt.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* --format: "text" -> 0, "json" -> 1, anything else -> -1. */
static inline int dp_cli_format(const char *s) {
  if (strcmp(s, "json") == 0)
    return 1;
  return strcmp(s, "text") == 0 ? 0 : -1;
}

/* ---- help: one layout for every subcommand (common.c) -----------------
 *
 * `diskprobe CMD --help` (and -h) prints, from the command's dp_cli_help_t:
 *
 *   diskprobe CMD: PURPOSE
 *
 *   usage: diskprobe CMD ...            (one line per form, wrapped)
 *
 *   options:
 *     --flag ARG          what it does   (the command's own, then -h)
 *
 *   probe and target options (...):     (run, watch: the option table)
 *     --queue-depth N     ... [QueueDepth: 1–256; default 1]
 *
 *   NOTES (operands, output), wrapped
 *
 *   examples:
 *     diskprobe CMD ...
 *
 * on stdout, exit 0; a usage error prints its one line and the usage
 * lines on stderr, exit 2. `diskprobe --help` lists every command with its
 * purpose (main.c). */

/* One of a command's own flags: "--since DURATION" and what it does. */
typedef struct {
  const char *flag;
  const char *help;
} dp_cli_opt_help_t;

typedef struct {
  const char *name;              /* "fleet" */
  const char *purpose;           /* one line: what the command is for */
  unsigned table;                /* option-table flags taken (DP_CLI_RUN...) */
  const char *const *usage;      /* own flags and operands per form; NULL-ended;
                                    the table's flags lead the first form */
  const dp_cli_opt_help_t *opts; /* own flags, {NULL} ended (-h added) */
  const char *notes;           /* operands, output; "\n\n" between paragraphs */
  const char *const *examples; /* NULL-ended, at least one */
} dp_cli_help_t;

/* The whole help text of h. */
void dp_cli_help(FILE *f, const dp_cli_help_t *h);

/* Only h's usage lines ("usage: diskprobe NAME ...", "       ..."). */
void dp_cli_help_usage(FILE *f, const dp_cli_help_t *h);

/* Every command's help (the cmd_*.c files; options: main.c). */
extern const dp_cli_help_t dp_cli_help_run, dp_cli_help_watch, dp_cli_help_stat,
    dp_cli_help_replay, dp_cli_help_failslow, dp_cli_help_fleet,
    dp_cli_help_compare, dp_cli_help_metrics;

/* The top-level usage: every command and its purpose (main.c). */
void dp_cli_usage(FILE *f);

/* ---- figures for people (common.c) -----------------------------------
 *
 * Text and HTML output write figures with these (JSON keeps machine
 * numbers): three significant figures, thousands grouped with ",", no
 * exponent; "-" when v is not finite. Each returns buf. */

/* A count or rate of operations: 55,820 (>= 1000: the whole number),
 * 812, 81.2, 8.12. */
const char *dp_cli_fmt_count(double v, char *buf, size_t len);

/* A latency given in seconds: 45.8 µs, 1.23 ms, 2.05 s. */
const char *dp_cli_fmt_latency(double s, char *buf, size_t len);

/* A throughput given in bytes/s, in MB/s (10^6): 1,250 MB/s, 512 MB/s,
 * 45.3 MB/s. With unit 0 the number alone (a column titled MB/s). */
const char *dp_cli_fmt_mbps(double bytes_per_s, int unit, char *buf,
                            size_t len);

/* A ratio: 24.1, 1.50, 0.0415 (three significant figures). */
const char *dp_cli_fmt_ratio(double r, char *buf, size_t len);

/* Prints s padded with blanks to width display columns (UTF-8: "µ" is
 * one column): right-aligned for width > 0, left for width < 0. */
void dp_cli_pad(FILE *f, const char *s, int width);

/* ---- names from the input, in text (common.c) ------------------------
 *
 * A name that comes from what the command reads (a host's directory in a
 * central tree, a target, a disk, a class, a file's path, a library's
 * error that quotes one) is printed in text output through these, never
 * raw: anyone who can name a directory chooses it, and a newline or a
 * terminal escape in it would forge lines or drive the terminal. Every
 * C0 control character, DEL, C1 (U+0080-U+009F) and every byte that is
 * not part of valid UTF-8 is shown as an escape: \n, \t, \r, \a, \b,
 * \f, \v, else \xHH per byte (ESC: \x1b); a backslash as \\. Other
 * UTF-8 is kept. JSON output keeps the name (jansson escapes it); HTML
 * escapes its own way. */

/* s escaped into buf (len bytes; cut short at a whole escape, ending
 * "..." when it does not fit). Returns buf. */
const char *dp_cli_visible(const char *s, char *buf, size_t len);

/* s escaped, written to f whole. */
void dp_cli_put_visible(FILE *f, const char *s);

/* What a file that is not a regular file is, for "not a regular file
 * (a FIFO)": "a FIFO", "a character device", "a block device", "a
 * socket", "a directory", "of another kind". */
const char *dp_cli_file_kind(mode_t mode);

/* Room for a name of 255 bytes escaped (4 bytes out per byte in). */
#define DP_CLI_VISIBLE_NAME (4 * 256)

/* `diskprobe run ...`: argv[0] is "run". Returns the exit status. */
int dp_cmd_run(int argc, char **argv);

/* `diskprobe stat ...`: argv[0] is "stat". Returns the exit status. */
int dp_cmd_stat(int argc, char **argv);

/* `diskprobe watch ...`: argv[0] is "watch". Returns the exit status. */
int dp_cmd_watch(int argc, char **argv);

/* `diskprobe replay ...`: recorded rounds through the health rules. */
int dp_cmd_replay(int argc, char **argv);

/* `diskprobe failslow ...`: recorded drive series through the fail-slow
 * detector (cmd_failslow.c). */
int dp_cmd_failslow(int argc, char **argv);

/* The fail-slow detector with its defaults (scaled to h's interval) over h
 * (sorted here), printing nothing: per disk of h, first[i] the Unix time it
 * was first flagged (-1: never) and maxs[i] its largest 2-hour score (NaN:
 * none); both untouched when h has no samples. 0, or 2 after one line
 * (cmd_failslow.c). */
int dp_cli_failslow_scan(dp_fsinput_host_t *h, int64_t *first, double *maxs);

/* `diskprobe fleet DIR ...`: every disk of a central server's RRD tree
 * ranked against its class (cmd_fleet.c). */
int dp_cmd_fleet(int argc, char **argv);

/* `diskprobe compare A B ...`: two targets, hosts or classes side by side
 * with the ratio's interval and a verdict (cmd_compare.c). */
int dp_cmd_compare(int argc, char **argv);

/* `diskprobe metrics --types-db|--collectd-types|--markdown|--prometheus`:
 * the files generated from the metric table (cmd_metrics.c). */
int dp_cmd_metrics(int argc, char **argv);

/* ---- common.c ---------------------------------------------------------- */

/* What the table's flags fill in, with the plugin's defaults. */
typedef struct {
  dp_plugin_conf_t plugin;
  dp_target_conf_t target;
  dp_probe_conf_t probe;
  int probe_set; /* a probe option was given */
} dp_cli_conf_t;

void dp_cli_conf_init(dp_cli_conf_t *c, const char *probe_name);

/* getopt_long's val for the table's flags: DP_CLI_OPT_BASE + row. */
#define DP_CLI_OPT_BASE 256
#define DP_CLI_OPTS_MAX 48

/* Fills out (DP_CLI_OPTS_MAX entries) with the table's flags that command
 * `cmd` (DP_CLI_RUN, DP_CLI_WATCH) takes, then `extra` (the command's own
 * flags, ended by a zero entry), then the terminating zero entry. */
void dp_cli_longopts(unsigned cmd, const struct option *extra,
                     struct option *out);

/* Applies getopt's result `val` (>= DP_CLI_OPT_BASE) through the conf
 * setters. 0, or -1 after printing one line on stderr. */
int dp_cli_apply(dp_cli_conf_t *c, const char *cmdname, int val,
                 const char *arg);

/* One line on stderr for a getopt error (':' missing value, '?' unknown
 * option); returns 2. */
int dp_cli_getopt_error(const char *cmdname, int ch, char **argv);

/* --since: a duration of at least 1 s ("24h", "90min") into *out_s, whole
 * seconds. 0, or -1 after one line "diskprobe CMD: --since 'ARG': ...". */
int dp_cli_since(const char *cmd, const char *arg, double *out_s);

/* --prometheus-limit: a size (dp_parse_size: 64M, 512k), 4k to 64G, into
 * *out bytes. 0, or -1 after one line "diskprobe CMD: --prometheus-limit
 * 'ARG': ...". */
int dp_cli_prometheus_limit(const char *cmd, const char *arg, size_t *out);

/* ---- json_out.c: the JSON the command writes -------------------------
 *
 * Every object is built as jansson values and dumped by jansson, the
 * library that reads JSON back (jsonl.h): keys in the order they were set
 * (JSON_PRESERVE_ORDER), each number rounded to the figures its key has
 * (dp_cli_json_fixed, _sig) and printed with 15 significant digits, which
 * gives back those figures (0.1, not 0.10000000000000001). Non-finite
 * numbers are null; counters are JSON integers. The makers below never
 * return NULL to a caller that checks: a value or member that could not be
 * made (out of memory) marks the object, and its print fails instead. */

/* The dump flags every output shares; one of the layouts below is added. */
#define DP_CLI_JSON_FLAGS (JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
/* One line, no blanks: {"a":1,"b":[1,2]} (JSON lines: run, watch, stat,
 * replay). */
#define DP_CLI_JSON_LINE JSON_COMPACT
/* One line, ", " and ": " between members: {"a": 1, "b": [1, 2]}
 * (failslow's lines). */
#define DP_CLI_JSON_SPACED 0
/* A member per line, indented by two spaces (fleet, compare: one object
 * per run). */
#define DP_CLI_JSON_INDENTED JSON_INDENT(2)

/* A string; bytes that are not UTF-8 (a path can hold any) each become
 * U+FFFD; NULL becomes null. */
json_t *dp_cli_json_str(const char *s);

/* v rounded as printf's "%.{decimals}f" would print it; null when not
 * finite. */
json_t *dp_cli_json_fixed(double v, int decimals);

/* v rounded to `digits` significant digits ("%.{digits}g"); null when not
 * finite; an integer when "%g" prints it as one (3, not 3.0; 1e+06 stays
 * a real), as the printf writers did. */
json_t *dp_cli_json_sig(double v, int digits);

/* dp_cli_json_sig(v, 6): the figures of fleet, compare and watch's
 * verdict and device view. */
json_t *dp_cli_json_num(double v);

/* An integer (a counter; clamped at INT64_MAX). */
json_t *dp_cli_json_uint(uint64_t v);
json_t *dp_cli_json_int(int64_t v);
json_t *dp_cli_json_bool(int v);
json_t *dp_cli_json_object(void);
json_t *dp_cli_json_array(void);

/* Sets o[key] = v, or appends v to a; v's reference is taken. */
void dp_cli_json_set(json_t *o, const char *key, json_t *v);
void dp_cli_json_append(json_t *a, json_t *v);

/* Prints o in `layout` (DP_CLI_JSON_LINE, _SPACED, _INDENTED) and a
 * newline, in one write, and releases o. Not flushed. 0, or -1 after one
 * line on stderr when the object could not be made. */
int dp_cli_json_print(FILE *f, json_t *o, size_t layout);

/* Prints {"KEY":T,...rest's members...} on one line (DP_CLI_JSON_LINE)
 * and releases rest: T rounded to `decimals` and dumped with as many
 * significant digits as it has (watch's Unix times in microseconds need
 * 16), the rest as dp_cli_json_print does. 0, or -1 as there. */
int dp_cli_json_print_timed(FILE *f, const char *key, double t, int decimals,
                            json_t *rest);

/* A disk's identity into o: "class", "media", "model", "firmware",
 * "serial", "wwn", "capacity_bytes", "logical_block_bytes",
 * "physical_block_bytes", and "members" (an array) for a dm/md stack. */
void dp_cli_json_identity(json_t *o, const dp_disk_identity_t *id,
                          const char *class_name);

/* A probe's result into o (run's JSON): "pattern", ..., "wall_s". */
void dp_cli_json_result(json_t *o, const dp_result_t *r);

#endif /* DP_CLI_H */
