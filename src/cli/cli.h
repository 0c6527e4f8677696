/* cli.h - subcommands of the diskprobe command, one file each. */
#ifndef DP_CLI_H
#define DP_CLI_H

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

#endif /* DP_CLI_H */
