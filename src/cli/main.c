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

void dp_cli_usage(FILE *f) {
  dp_cli_synopsis(f, "usage: ", "run", DP_CLI_RUN,
                  "[--format text|json] TARGET", 0);
  dp_cli_synopsis(f, "       ", "watch", DP_CLI_WATCH,
                  "[--count N] [--format text|json] TARGET...", 0);
  fprintf(f, "       diskprobe stat [--interval 1s] [--count N] "
             "[--format text|json] DEVICE...\n"
             "       diskprobe replay [--format text|json] [--media CLASS] "
             "FILE...\n"
             "       diskprobe failslow [--format text|json] "
             "(--collectd-csv DIR | --devview-json FILE)...\n"
             "       diskprobe fleet [--since 24h] [--format text|json|html] "
             "[--out FILE] DIR\n"
             "       diskprobe compare [--rrd DIR] [--since 24h] "
             "[--format text|json] A B\n"
             "       diskprobe metrics --types-db | --markdown | --prometheus "
             "| --collectd-types\n"
             "       diskprobe options --markdown\n"
             "       diskprobe --version\n"
             "\n"
             "TARGET is a block device (opened read-only) or a probe-file "
             "path:\n"
             "a directory that holds diskprobe.probe, or a path ending in "
             ".probe.\n"
             "Defaults and ranges are the collectd plugin's: diskprobe "
             "run --help,\n"
             "diskprobe watch --help.\n");
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
  if (strcmp(argv[1], "run") == 0)
    return dp_cmd_run(argc - 1, argv + 1);
  if (strcmp(argv[1], "stat") == 0)
    return dp_cmd_stat(argc - 1, argv + 1);
  if (strcmp(argv[1], "watch") == 0)
    return dp_cmd_watch(argc - 1, argv + 1);
  if (strcmp(argv[1], "replay") == 0)
    return dp_cmd_replay(argc - 1, argv + 1);
  if (strcmp(argv[1], "failslow") == 0)
    return dp_cmd_failslow(argc - 1, argv + 1);
  if (strcmp(argv[1], "fleet") == 0)
    return dp_cmd_fleet(argc - 1, argv + 1);
  if (strcmp(argv[1], "compare") == 0)
    return dp_cmd_compare(argc - 1, argv + 1);
  if (strcmp(argv[1], "metrics") == 0)
    return dp_cmd_metrics(argc - 1, argv + 1);
  if (strcmp(argv[1], "options") == 0) {
    int help = argc == 3 && strcmp(argv[2], "--help") == 0;
    if (help || argc != 3 || strcmp(argv[2], "--markdown") != 0) {
      fprintf(help ? stdout : stderr,
              "%susage: diskprobe options --markdown (the configuration "
              "reference, from the option table)\n",
              help ? "" : "diskprobe: ");
      return help ? 0 : 2;
    }
    dp_options_markdown(stdout);
    return 0;
  }
  fprintf(stderr, "diskprobe: unknown command '%s' (see diskprobe --help)\n",
          argv[1]);
  return 2;
}
