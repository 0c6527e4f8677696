/*
 * main.c - the diskprobe command: dispatches to one file per subcommand.
 *
 *   diskprobe run [options] TARGET     one probe, a table or JSON (cmd_run.c)
 *   diskprobe stat [options] DEVICE... the iostat -x view (cmd_stat.c)
 *
 * Exit status: 0 on success, 1 when the probe could not run or saw I/O
 * errors or a stall, 2 on a usage error. Failures print one line on stderr.
 */
#define _GNU_SOURCE
#include "build-config.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>

void dp_cli_usage(FILE *f) {
  fprintf(
      f,
      "usage: diskprobe run [--pattern "
      "randread|seqread|randwrite|seqwrite|syncwrite]\n"
      "                     [--block-size 8k] [--queue-depth N] "
      "[--duration 2s]\n"
      "                     [--ops N] [--timeout 10s] [--file-size 1g]\n"
      "                     [--format text|json] TARGET\n"
      "       diskprobe stat [--interval 1s] [--count N] "
      "[--format text|json] DEVICE...\n"
      "       diskprobe --version\n"
      "\n"
      "TARGET is a block device (opened read-only) or a probe-file path:\n"
      "a directory that holds diskprobe.probe, or a path ending in .probe.\n");
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
  fprintf(stderr, "diskprobe: unknown command '%s' (see diskprobe --help)\n",
          argv[1]);
  return 2;
}
