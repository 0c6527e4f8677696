/* cmd_stat.c - placeholder until the diskstats module lands (issue 4). */
#include "cli.h"

#include <stdio.h>

int dp_cmd_stat(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "diskprobe: stat is not implemented yet\n");
  return 2;
}
