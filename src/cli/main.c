/*
 * main.c - the diskprobe command: dispatches to one file per subcommand.
 *
 *   diskprobe run [options] TARGET     one probe, a table or JSON (cmd_run.c)
 *   diskprobe stat [options] DEVICE... the iostat -x view (cmd_stat.c)
 *   diskprobe watch [options] TARGET... the plugin's scheduler, a line per
 *                                      probe per round (cmd_watch.c)
 *   diskprobe replay [options] FILE... recorded rounds through the health
 *                                      rules (cmd_replay.c)
 *   diskprobe failslow [options] --collectd-csv DIR | --devview-json FILE
 *                                      the recorded device view through the
 *                                      fail-slow detector (cmd_failslow.c)
 *   diskprobe fleet [options] DIR      every disk of a central server's RRD
 *                                      tree against its class (cmd_fleet.c)
 *   diskprobe compare [options] A B    two targets, hosts or classes side by
 *                                      side, with a verdict (cmd_compare.c)
 *   diskprobe options --markdown       (hidden) the configuration reference
 *                                      that README.md holds, from the table
 *   diskprobe metrics --types-db ...   (hidden) types.db, README's metric
 *                                      catalogue... from src/metrics.c
 *
 * Exit status: 0 on success, 1 when the probe could not run or saw I/O
 * errors or a stall, 2 on a usage error. Failures print one line on stderr.
 */
#define _GNU_SOURCE
#include "build-config.h"
#include "cli.h"
#include "options.h"

#include <stdio.h>
#include <string.h>

static const char *const options_usage[] = {"--markdown", NULL};
static const dp_cli_opt_help_t options_opts[] = {
    {"--markdown", "the reference of every collectd option, as README.md "
                   "holds it"},
    {NULL, NULL}};
static const char *const options_examples[] = {"diskprobe options --markdown",
                                               NULL};
static const dp_cli_help_t help_options = {
    "options",
    "the configuration reference as Markdown, from the table",
    0,
    options_usage,
    options_opts,
    "For developers: generated from the option table (src/options.c), the "
    "one the plugin, run and watch read.",
    options_examples};

/* `diskprobe options --markdown` */
static int cmd_options(int argc, char **argv) {
  if (argc == 2 &&
      (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    dp_cli_help(stdout, &help_options);
    return 0;
  }
  if (argc != 2 || strcmp(argv[1], "--markdown") != 0) {
    fputs("diskprobe: ", stderr);
    dp_cli_help_usage(stderr, &help_options);
    return 2;
  }
  dp_options_markdown(stdout);
  return 0;
}

static const struct {
  const dp_cli_help_t *help;
  int (*run)(int argc, char **argv);
  int dev; /* a developers' command */
} cmds[] = {
    {&dp_cli_help_run, dp_cmd_run, 0},
    {&dp_cli_help_watch, dp_cmd_watch, 0},
    {&dp_cli_help_stat, dp_cmd_stat, 0},
    {&dp_cli_help_replay, dp_cmd_replay, 0},
    {&dp_cli_help_failslow, dp_cmd_failslow, 0},
    {&dp_cli_help_fleet, dp_cmd_fleet, 0},
    {&dp_cli_help_compare, dp_cmd_compare, 0},
    {&dp_cli_help_metrics, dp_cmd_metrics, 1},
    {&help_options, cmd_options, 1},
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

void dp_cli_usage(FILE *f) {
  fprintf(f, "diskprobe: measure disks as the collectd plugin does, and "
             "read what it recorded\n\n"
             "usage: diskprobe COMMAND [OPTION]... ARG...\n"
             "       diskprobe COMMAND --help   (its options and examples)\n"
             "       diskprobe --version\n");
  for (int dev = 0; dev <= 1; dev++) {
    fprintf(f, "\n%s:\n", dev ? "for developers" : "commands");
    for (size_t i = 0; i < NCMDS; i++)
      if (cmds[i].dev == dev)
        fprintf(f, "  diskprobe %-9s %s\n", cmds[i].help->name,
                cmds[i].help->purpose);
  }
  fprintf(f, "\n"
             "TARGET (run, watch) is a block device (opened read-only) or a "
             "probe-file path:\n"
             "a directory that holds diskprobe.probe, or a path ending in "
             ".probe.\n"
             "Exit status: 0 on success, 1 when a probe could not run or saw "
             "I/O errors or\na stall, 2 on a usage error.\n"
             "\n"
             "examples:\n"
             "  diskprobe run /var/tmp/dp\n"
             "  diskprobe watch --count 5 --interval 10s /var/tmp/dp\n"
             "  diskprobe fleet --since 24h /var/lib/collectd/rrd\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    dp_cli_usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("diskprobe %s\n", DP_VERSION);
    return 0;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    dp_cli_usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < NCMDS; i++)
    if (strcmp(argv[1], cmds[i].help->name) == 0)
      return cmds[i].run(argc - 1, argv + 1);
  fprintf(stderr, "diskprobe: unknown command '%s' (see diskprobe --help)\n",
          argv[1]);
  return 2;
}
