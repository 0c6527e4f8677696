/* cli.h - subcommands of the diskprobe command, one file each. */
#ifndef DP_CLI_H
#define DP_CLI_H

/* `diskprobe stat ...`: argv[0] is "stat". Returns the exit status. */
int dp_cmd_stat(int argc, char **argv);

#endif /* DP_CLI_H */
