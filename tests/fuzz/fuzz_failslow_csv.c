/*
 * fuzz_failslow_csv.c - libFuzzer target for `diskprobe failslow`: the
 * Perseus CSV reader in src/cli/cmd_failslow.c and, behind it, the
 * fail-slow detector (src/failslow.c) fed whatever the reader accepted
 * (NaN, infinities, negative and huge throughputs and latencies, duplicate
 * and out-of-order timestamps, gaps, hundreds of drives).
 *
 * The input is written as the one day file of a host directory (in
 * $TMPDIR, else /tmp) and run through dp_cmd_failslow with --format json
 * and short windows (so that a few dozen rows reach the model and the
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

#include <fcntl.h>
#include <math.h>
#include <sanitizer/common_interface_defs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c))                                                                  \
      __builtin_trap();                                                        \
  } while (0)

static char dir[256], host[300], day[340], out_a[300], out_b[300], err[300];
static int report_fd = -1; /* the real stderr, for sanitizer reports */

static void cleanup(void) {
  unlink(day);
  unlink(out_a);
  unlink(out_b);
  unlink(err);
  rmdir(host);
  rmdir(dir);
}

static void setup(void) {
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof(dir), "%s/fz-failslow.XXXXXX", t && *t ? t : "/tmp");
  CHECK(mkdtemp(dir) != NULL);
  snprintf(host, sizeof(host), "%s/h", dir);
  CHECK(mkdir(host, 0700) == 0);
  snprintf(day, sizeof(day), "%s/2024-01-01.csv", host);
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
static int run(const char *out) {
  char *argv[] = {"failslow", "--format",
                  "json",     "--window-steps",
                  "4",        "--model-windows",
                  "4",        "--score-windows",
                  "3",        "--min-score-windows",
                  "2",        "--clear-windows",
                  "2",        "--long-windows",
                  "6",        host,
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

/* One JSON line as cmd_failslow prints it; the disk name is copied out. */
static void check_line(const char *l, char *disk, size_t disklen) {
  static const char head[] = "{\"host\": \"h\", \"disk\": \"";
  CHECK(strncmp(l, head, sizeof(head) - 1) == 0);
  const char *p = l + sizeof(head) - 1;
  size_t k = 0;
  while (*p && *p != '"') {
    if (*p == '\\') {
      p++;
      CHECK(*p == '"' || *p == '\\' || *p == 'n' || *p == 't' || *p == 'r' ||
            *p == 'u' || *p == 'b' || *p == 'f' || *p == '/');
    } else {
      CHECK((unsigned char)*p >= 0x20);
    }
    if (k + 1 < disklen)
      disk[k++] = *p;
    p++;
  }
  disk[k] = '\0';
  CHECK(*p == '"');
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
  FILE *f = fopen(day, "w");
  CHECK(f != NULL);
  CHECK(fwrite(data, 1, size, f) == size);
  CHECK(fclose(f) == 0);

  int rc = run(out_a);
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
  char seen[64][80];
  size_t nseen = 0;
  for (char *l = a, *nl; *l; l = nl + 1) {
    nl = strchr(l, '\n');
    CHECK(nl != NULL); /* every line ends */
    *nl = '\0';
    char disk[80];
    check_line(l, disk, sizeof(disk));
    for (size_t i = 0; i < nseen && i < 64; i++)
      CHECK(strcmp(seen[i], disk) != 0);
    if (nseen < 64)
      snprintf(seen[nseen], sizeof(seen[nseen]), "%s", disk);
    nseen++;
    *nl = '\n';
  }

  CHECK(run(out_b) == rc);
  char *b = slurp(out_b, &lb);
  CHECK(la == lb && memcmp(a, b, la) == 0);
  free(a);
  free(b);
  return 0;
}
