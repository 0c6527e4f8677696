/* cmd_metrics.c - `diskprobe metrics`: the metric table (src/metrics.c)
 * as the files generated from it: plugin/diskprobe.types.db, README's
 * metric catalogue, and the names write_prometheus exports (for
 * tests/shell/metrics_table.sh). */
#include "cli.h"
#include "metrics.h"

#include <stdio.h>
#include <string.h>

static const char *const metrics_usage_lines[] = {
    "--types-db | --collectd-types | --markdown | --prometheus", NULL};
static const dp_cli_opt_help_t metrics_opts[] = {
    {"--types-db", "plugin/diskprobe.types.db: the plugin's own types"},
    {"--collectd-types", "the types taken from collectd's types.db"},
    {"--markdown", "the README's metric catalogue"},
    {"--prometheus", "the names write_prometheus exports"},
    {NULL, NULL}};
static const char *const metrics_examples[] = {
    "diskprobe metrics --types-db > plugin/diskprobe.types.db", NULL};
const dp_cli_help_t dp_cli_help_metrics = {
    "metrics",
    "the metric table as types.db, Markdown, Prometheus names",
    0,
    metrics_usage_lines,
    metrics_opts,
    "For developers: the files generated from src/metrics.c "
    "(tests/shell/metrics_table.sh checks them).",
    metrics_examples};

static int metrics_usage(FILE *f) {
  if (f == stdout) {
    dp_cli_help(f, &dp_cli_help_metrics);
    return 0;
  }
  fputs("diskprobe: ", f);
  dp_cli_help_usage(f, &dp_cli_help_metrics);
  return 2;
}

int dp_cmd_metrics(int argc, char **argv) {
  if (argc != 2)
    return metrics_usage(stderr);
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
    return metrics_usage(stdout);
  if (strcmp(argv[1], "--types-db") == 0)
    dp_metric_types_db(stdout, 0);
  else if (strcmp(argv[1], "--collectd-types") == 0)
    dp_metric_types_db(stdout, 1);
  else if (strcmp(argv[1], "--markdown") == 0)
    dp_metric_markdown(stdout);
  else if (strcmp(argv[1], "--prometheus") == 0)
    dp_metric_prometheus(stdout);
  else
    return metrics_usage(stderr);
  return fflush(stdout) == 0 ? 0 : 1;
}
