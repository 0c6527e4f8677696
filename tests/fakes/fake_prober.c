/*
 * fake_prober - a prober program that misbehaves, for the tests of the
 * plugin's side of the prober (src/prober.h): run as DISKPROBE_PROBER, from
 * a copy named fake-prober-MODE (the mode), it re-executes itself with its
 * own path as argv[0], so that `pgrep -f` on that path finds it, then:
 *   hang   never answers the handshake (and ignores SIGTERM);
 *   flood  never answers, and writes garbage to its standard output and
 *          standard error as fast as it can;
 *   stall  answers the handshake, then nothing more (the open never ends);
 *   exit   says a line on its standard error and exits 3 at once;
 *   forge  a real prober whose probe results are forged: a million times
 *          the I/Os it did, a negative latency.
 * DP_FAKE_REAL_ON=N: the N-th start (counted in fake-prober.count beside
 * the copy) executes the real prober, $DP_FAKE_REAL, instead. With two
 * targets on one disk and N = 2, the first target opened gets a fake at
 * every attempt, the second the real prober, which it keeps.
 */
#define _GNU_SOURCE
#include "prober.h"

#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static void forge(char op, dp_result_t *res, void *arg) {
  (void)arg;
  if (op != 'R' || res->ops == 0)
    return;
  res->ops *= 1000000;
  res->bytes = res->ops * res->block_size;
  res->iops *= 1000000;
  res->lat_min_s = -0.001;
}

/* The how-many-th start this is (1, 2, ...), counted beside self. */
static long start_number(const char *self) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/fake-prober.count", dirname(strdupa(self)));
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return 1;
  flock(fd, LOCK_EX);
  char buf[32] = "";
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  long k = (n > 0 ? atol(buf) : 0) + 1;
  int len = snprintf(buf, sizeof(buf), "%ld\n", k);
  if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)len, 0) < 0)
    k = 1;
  close(fd);
  return k;
}

int main(int argc, char **argv) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    return 2;
  self[n] = '\0';
  const char *mode = strrchr(self, '-');
  mode = mode ? mode + 1 : "";
  if (argc < 2 || strcmp(argv[1], "fake") != 0) { /* as the plugin starts it */
    const char *real = getenv("DP_FAKE_REAL");
    const char *on = getenv("DP_FAKE_REAL_ON");
    if (on && real && start_number(self) == atol(on)) {
      char *rargv[] = {(char *)"diskprobe-prober", NULL};
      execv(real, rargv);
      return 2;
    }
    char *sargv[] = {self, (char *)"fake", NULL};
    execv(self, sargv);
    return 2;
  }
  signal(SIGTERM, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  if (strcmp(mode, "hang") == 0) {
    for (;;)
      pause();
  } else if (strcmp(mode, "flood") == 0) {
    static char junk[65536];
    for (size_t i = 0; i < sizeof(junk); i++)
      junk[i] = i % 64 == 63 ? '\n' : "garbage"[i % 7];
    for (;;) {
      if (write(1, junk, sizeof(junk)) < 0 && write(2, junk, 64) < 0)
        usleep(1000);
      (void)!write(2, junk, sizeof(junk));
    }
  } else if (strcmp(mode, "stall") == 0) {
    char c;
    if (read(4, &c, 1) == 1)
      (void)!write(4, &c, 1);
    for (;;)
      pause();
  } else if (strcmp(mode, "exit") == 0) {
    fprintf(stderr, "fake-prober: cannot open shared object libnothing.so\n");
    return 3;
  } else if (strcmp(mode, "forge") == 0) {
    return dp_prober_serve_with(3, 4, forge, NULL);
  }
  fprintf(stderr, "fake-prober: no such mode %s\n", mode);
  return 2;
}
