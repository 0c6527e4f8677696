/* cli.h - subcommands of the diskprobe command, one file each, and what
 * they share (common.c): flags from the option table, usage text, JSON. */
#ifndef DP_CLI_H
#define DP_CLI_H

#include "blockdev.h"
#include "conf.h"
#include "engine.h"
#include "options.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* --format: "text" -> 0, "json" -> 1, anything else -> -1. */
static inline int dp_cli_format(const char *s) {
  if (strcmp(s, "json") == 0)
    return 1;
  return strcmp(s, "text") == 0 ? 0 : -1;
}

/* The usage text of every subcommand. */
void dp_cli_usage(FILE *f);

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

/* Prints "usage: diskprobe NAME [--flag ARG]... extra" wrapped, from the
 * table's flags for cmd; extra holds the command's own flags and operands.
 * With details, one line per flag with its key, range and default. */
void dp_cli_synopsis(FILE *f, const char *lead, const char *name, unsigned cmd,
                     const char *extra, int details);

/* One line on stderr for a getopt error (':' missing value, '?' unknown
 * option); returns 2. */
int dp_cli_getopt_error(const char *cmdname, int ch, char **argv);

/* A JSON string with its quotes: '"', '\\' and control characters escaped. */
void dp_cli_json_str(FILE *f, const char *s);

/* A disk's identity as JSON keys, without braces, each after a comma:
 * ,"class":...,"media":...,"model":...,"firmware":...,"serial":...,
 * "wwn":...,"capacity_bytes":N,"logical_block_bytes":N,
 * "physical_block_bytes":N, and "members":[...] for a dm/md stack. */
void dp_cli_json_identity(FILE *f, const dp_disk_identity_t *id,
                          const char *class_name);

/* The result's keys (run's JSON), comma-separated, without braces:
 * "pattern":...,"wall_s":... */
void dp_cli_json_result(FILE *f, const dp_result_t *r);

#endif /* DP_CLI_H */
