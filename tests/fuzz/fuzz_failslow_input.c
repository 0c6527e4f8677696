/*
 * fuzz_failslow_input.c - libFuzzer target for `diskprobe failslow`: its
 * readers of the device view (src/cli/failslow_input.c: collectd csv
 * series files and JSON lines) and, behind them, the fail-slow detector
 * (src/failslow.c) fed whatever a reader accepted (NaN, infinities,
 * negative and huge throughputs and latencies, duplicate and out-of-order
 * timestamps, gaps, many drives).
 *
 * The first byte chooses the reader. Odd: the rest is a JSON lines file
 * run with --devview-json. Even: the rest, cut at NUL bytes into up to 18
 * parts, is a collectd csv host directory (in $TMPDIR, else /tmp): part k
 * the day file of series k / 3 (dp_fsinput_series: bytes read, bytes
 * written, reads/s, writes/s, read await, write await) of disk
 * sd(a + k % 3), run with --collectd-csv. Both with --format json and
 * short windows (so that a few dozen samples reach the model and the
 * scores), stdout captured in a file. Checked:
 *   - the exit status is 0 (read, nothing on stderr) or 2 (refused, with
 *     exactly one line on stderr);
 *   - stdout holds only what the JSON format promises: lines
 *     {"host": "h", "disk": "...", "first_flag_ts": N, "slowdown": X}
 *     with an integer N and a finite X; nothing when the input was refused;
 *   - a drive is reported at most once.
 * The second byte-identical run (the detector is deterministic) must print
 * the same bytes.
 */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/failslow_input.h"
#include "fuzz_check.h"

#include <fcntl.h>
#include <math.h>
#include <sanitizer/common_interface_defs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPARTS (3 * DP_FSINPUT_NFIELDS)

static char dir[256], host[300], jsonl[300], out_a[300], out_b[300], err[300];
static char disks[3][340], parts[NPARTS][420];
static int report_fd = -1; /* the real stderr, for sanitizer reports */

static void remove_input(void) {
  for (int k = 0; k < NPARTS; k++)
    unlink(parts[k]);
  for (int i = 0; i < 3; i++)
    rmdir(disks[i]);
  rmdir(host);
  unlink(jsonl);
}

static void cleanup(void) {
  remove_input();
  unlink(out_a);
  unlink(out_b);
  unlink(err);
  rmdir(dir);
}

static void setup(void) {
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof(dir), "%s/fz-failslow.XXXXXX", t && *t ? t : "/tmp");
  CHECK(mkdtemp(dir) != NULL);
  snprintf(host, sizeof(host), "%s/h", dir);
  snprintf(jsonl, sizeof(jsonl), "%s/h.jsonl", dir);
  for (int i = 0; i < 3; i++)
    snprintf(disks[i], sizeof(disks[i]), "%s/diskprobe-dev-sd%c", host,
             'a' + i);
  for (int k = 0; k < NPARTS; k++)
    snprintf(parts[k], sizeof(parts[k]), "%s/%s-2024-01-01", disks[k % 3],
             dp_fsinput_series[k / 3]);
  snprintf(out_a, sizeof(out_a), "%s/a.out", dir);
  snprintf(out_b, sizeof(out_b), "%s/b.out", dir);
  snprintf(err, sizeof(err), "%s/err", dir);
  atexit(cleanup);
  /* The command's stderr goes to a file (its one-line contract is
   * checked); a sanitizer's report must still reach the fuzzer's log. */
  report_fd = dup(2);
  CHECK(report_fd >= 0);
  __sanitizer_set_report_fd((void *)(intptr_t)report_fd);
}

/* Runs the command with stdout to `out` and stderr to err; its status. */
static int run(const char *out, int json) {
  char *argv[] = {"failslow",
                  "--format",
                  "json",
                  "--window-steps",
                  "4",
                  "--model-windows",
                  "4",
                  "--score-windows",
                  "3",
                  "--min-score-windows",
                  "2",
                  "--clear-windows",
                  "2",
                  "--long-windows",
                  "6",
                  json ? "--devview-json" : "--collectd-csv",
                  json ? jsonl : host,
                  NULL};
  int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
  fflush(stdout);
  fflush(stderr);
  int so = dup(1), se = dup(2);
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int nul = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK(so >= 0 && se >= 0 && fd >= 0 && nul >= 0);
  dup2(fd, 1);
  dup2(nul, 2);
  optind = 0; /* a fresh getopt for every call (glibc) */
  int rc = dp_cmd_failslow(argc, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(so, 1);
  dup2(se, 2);
  close(so);
  close(se);
  close(fd);
  close(nul);
  return rc;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  char *buf = NULL;
  size_t cap = 0;
  *len = 0;
  for (;;) {
    if (*len + 4096 + 1 > cap) {
      cap = cap ? 2 * cap : 8192;
      buf = realloc(buf, cap);
      CHECK(buf != NULL);
    }
    size_t n = fread(buf + *len, 1, 4096, f);
    *len += n;
    if (n == 0)
      break;
  }
  fclose(f);
  buf[*len] = '\0';
  return buf;
}

/* A JSON string as dp_cli_json_str prints it, from p (after its opening
 * quote) to its closing quote (returned), copied to buf. */
static const char *check_string(const char *p, char *buf, size_t len) {
  size_t k = 0;
  while (*p && *p != '"') {
    if (*p == '\\') {
      p++;
      CHECK(*p == '"' || *p == '\\' || *p == 'n' || *p == 't' || *p == 'r' ||
            *p == 'u' || *p == 'b' || *p == 'f' || *p == '/');
    } else {
      CHECK((unsigned char)*p >= 0x20);
    }
    if (k + 1 < len)
      buf[k++] = *p;
    p++;
  }
  buf[k] = '\0';
  CHECK(*p == '"');
  return p;
}

/* One JSON line as cmd_failslow prints it; "host/disk" is copied out. */
static void check_line(const char *l, char *name, size_t len) {
  static const char head[] = "{\"host\": \"";
  CHECK(strncmp(l, head, sizeof(head) - 1) == 0);
  char h[80], disk[80];
  const char *p = check_string(l + sizeof(head) - 1, h, sizeof(h));
  static const char dk[] = "\", \"disk\": \"";
  CHECK(strncmp(p, dk, sizeof(dk) - 1) == 0);
  p = check_string(p + sizeof(dk) - 1, disk, sizeof(disk));
  snprintf(name, len, "%s/%s", h, disk);
  static const char ts[] = "\", \"first_flag_ts\": ";
  CHECK(strncmp(p, ts, sizeof(ts) - 1) == 0);
  p += sizeof(ts) - 1;
  char *end;
  (void)strtoll(p, &end, 10);
  CHECK(end != p);
  static const char sd[] = ", \"slowdown\": ";
  CHECK(strncmp(end, sd, sizeof(sd) - 1) == 0);
  p = end + sizeof(sd) - 1;
  double x = strtod(p, &end);
  CHECK(end != p && isfinite(x));
  CHECK(strcmp(end, "}") == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (dir[0] == '\0')
    setup();
  remove_input();
  int json = size > 0 && (data[0] & 1);
  if (json) {
    FILE *f = fopen(jsonl, "w");
    CHECK(f != NULL);
    CHECK(fwrite(data + 1, 1, size - 1, f) == size - 1);
    CHECK(fclose(f) == 0);
  } else {
    CHECK(mkdir(host, 0700) == 0);
    for (int i = 0; i < 3; i++)
      CHECK(mkdir(disks[i], 0700) == 0);
    const uint8_t *p = data + (size > 0), *end = data + size;
    for (int k = 0; k < NPARTS && p < end; k++) {
      const uint8_t *z = memchr(p, '\0', (size_t)(end - p));
      size_t n = z ? (size_t)(z - p) : (size_t)(end - p);
      FILE *f = fopen(parts[k], "w");
      CHECK(f != NULL);
      CHECK(fwrite(p, 1, n, f) == n);
      CHECK(fclose(f) == 0);
      p += n + (z != NULL);
    }
  }

  int rc = run(out_a, json);
  CHECK(rc == 0 || rc == 2);
  size_t la, lb;
  char *a = slurp(out_a, &la);
  if (rc == 2)
    CHECK(la == 0);
  size_t le;
  char *e = slurp(err, &le);
  if (rc == 0)
    CHECK(le == 0);
  else
    CHECK(le > 1 && strchr(e, '\n') == e + le - 1);
  free(e);

  /* Line by line: the promised shape, each drive once. */
  char seen[64][170];
  size_t nseen = 0;
  for (char *l = a, *nl; *l; l = nl + 1) {
    nl = strchr(l, '\n');
    CHECK(nl != NULL); /* every line ends */
    *nl = '\0';
    char disk[170];
    check_line(l, disk, sizeof(disk));
    for (size_t i = 0; i < nseen && i < 64; i++)
      CHECK(strcmp(seen[i], disk) != 0);
    if (nseen < 64)
      snprintf(seen[nseen], sizeof(seen[nseen]), "%s", disk);
    nseen++;
    *nl = '\n';
  }

  CHECK(run(out_b, json) == rc);
  char *b = slurp(out_b, &lb);
  CHECK(la == lb && memcmp(a, b, la) == 0);
  free(a);
  free(b);
  return 0;
}
