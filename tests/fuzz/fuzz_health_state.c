/*
 * fuzz_health_state.c - libFuzzer target for the health state file reader
 * (dp_health_load in src/health.c) and its round trip with dp_health_save.
 *
 * The input is written to a temporary file (in $TMPDIR, else /tmp; the
 * saves fsync, so a tmpfs is much faster) and loaded into a tracker of two
 * targets ("db": randread-qd1 and seqread; "logs": randread-qd1) with a
 * horizon of 40 rounds. Checked:
 *   - load returns 0, -EINVAL (with a message) or -ENOMEM;
 *   - a refused file changes nothing: saving the tracker then gives the
 *     same bytes as saving an untouched one;
 *   - an accepted file round-trips: its save loads back into a fresh
 *     tracker, whose save is byte for byte the same (also after a judged
 *     round has been learned on top of the loaded baselines);
 *   - the save loads into a tracker with a smaller horizon (8 rounds: a
 *     shorter BaselineHorizon after a restart), which keeps the newest.
 */
#include "health.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c))                                                                  \
      __builtin_trap();                                                        \
  } while (0)

static char dir[256], in_path[300], a_path[300], b_path[300];

static void cleanup(void) {
  unlink(in_path);
  unlink(a_path);
  unlink(b_path);
  rmdir(dir);
}

static void setup(void) {
  if (dir[0])
    return;
  const char *tmp = getenv("TMPDIR"); /* fuzz_smoke.sh: a tmpfs, cheap fsync */
  snprintf(dir, sizeof(dir), "%s/diskprobe-fuzz-health.XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  CHECK(mkdtemp(dir) != NULL);
  snprintf(in_path, sizeof(in_path), "%s/in", dir);
  snprintf(a_path, sizeof(a_path), "%s/a", dir);
  snprintf(b_path, sizeof(b_path), "%s/b", dir);
  atexit(cleanup);
}

static dp_health_t *tracker(unsigned horizon) {
  dp_health_conf_t c;
  dp_health_conf_init(&c);
  c.horizon_rounds = horizon;
  c.arm_rounds = horizon < 5 ? horizon : 5;
  dp_health_t *h = NULL;
  CHECK(dp_health_new(&h, &c, 2) == 0);
  static const char *const n0[] = {"randread-qd1", "seqread"};
  static const char *const k0[] = {"randread/8192/1", "seqread/1048576/4"};
  static const char *const n1[] = {"randread-qd1"};
  static const char *const k1[] = {"randread/8192/1"};
  CHECK(dp_health_set_target(h, 0, "db", 2, n0, k0, DP_MEDIA_SSD, "m", 0) == 0);
  CHECK(dp_health_set_target(h, 1, "logs", 1, n1, k1, DP_MEDIA_HDD, "", 0) ==
        0);
  return h;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "re");
  CHECK(f != NULL);
  size_t cap = 4096, n = 0;
  char *b = malloc(cap);
  CHECK(b != NULL);
  size_t r;
  while ((r = fread(b + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      cap *= 2;
      b = realloc(b, cap);
      CHECK(b != NULL);
    }
  }
  fclose(f);
  *len = n;
  return b;
}

static int same_file(const char *x, const char *y) {
  size_t nx, ny;
  char *a = slurp(x, &nx), *b = slurp(y, &ny);
  int same = nx == ny && memcmp(a, b, nx) == 0;
  free(a);
  free(b);
  return same;
}

static void load_ok(dp_health_t *h, const char *path) {
  char err[256] = "";
  int rc = dp_health_load(h, path, err, sizeof(err));
  if (rc != 0) {
    fprintf(stderr, "round trip: reloading %s failed (%d): %s\n", path, rc,
            err);
    CHECK(0);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup();
  int fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  CHECK(fd >= 0);
  CHECK(write(fd, data, size) == (ssize_t)size);
  close(fd);

  dp_health_t *h = tracker(40);
  char err[256] = "";
  int rc = dp_health_load(h, in_path, err, sizeof(err));
  CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
  CHECK(dp_health_save(h, a_path) == 0);
  if (rc != 0) {
    CHECK(rc != -EINVAL || err[0] != '\0');
    dp_health_t *fresh = tracker(40);
    CHECK(dp_health_save(fresh, b_path) == 0);
    CHECK(same_file(a_path, b_path)); /* a refused file changed nothing */
    dp_health_free(fresh);
    dp_health_free(h);
    return 0;
  }

  /* the round trip */
  dp_health_t *h2 = tracker(40);
  load_ok(h2, a_path);
  CHECK(dp_health_save(h2, b_path) == 0);
  CHECK(same_file(a_path, b_path));

  /* a shorter horizon keeps the newest values */
  dp_health_t *small = tracker(8);
  load_ok(small, a_path);
  dp_health_free(small);

  /* a round learned on top of the loaded baselines, then saved and loaded */
  dp_health_verdict_t v;
  dp_health_obs_t obs[2] = {{0.0002, 0.00025, 4000, 0, 0},
                            {0.004, 0.005, 250, 0, 0}};
  dp_health_round(h2, 0, obs, &v);
  dp_health_round(h2, 1, obs, &v);
  CHECK(dp_health_save(h2, a_path) == 0);
  dp_health_t *h3 = tracker(40);
  load_ok(h3, a_path);
  CHECK(dp_health_save(h3, b_path) == 0);
  CHECK(same_file(a_path, b_path));

  dp_health_free(h3);
  dp_health_free(h2);
  dp_health_free(h);
  return 0;
}
