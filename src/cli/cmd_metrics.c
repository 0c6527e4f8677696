/* cmd_metrics.c - `diskprobe metrics`: the metric table (src/metrics.c)
 * as the files generated from it: plugin/diskprobe.types.db, README's
 * metric catalogue, and the names write_prometheus exports (for
 * tests/shell/metrics_table.sh). */
#include "cli.h"
#include "metrics.h"

#include <stdio.h>
#include <string.h>

static int metrics_usage(FILE *f) {
  fprintf(f,
          "%susage: diskprobe metrics --types-db | --collectd-types | "
          "--markdown | --prometheus (the metric table as types.db, the "
          "types taken from collectd's, the README's catalogue, the "
          "Prometheus names)\n",
          f == stderr ? "diskprobe: " : "");
  return f == stderr ? 2 : 0;
}

int dp_cmd_metrics(int argc, char **argv) {
  if (argc != 2)
    return metrics_usage(stderr);
  if (strcmp(argv[1], "--help") == 0)
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
