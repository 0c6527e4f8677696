/* helpers.c - shared unit-test fixtures; see helpers.h. */
#define _GNU_SOURCE
#include "helpers.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* mkdir -p of every directory above the last component of path. */
static void make_parents(const char *path) {
  char p[PATH_MAX];
  snprintf(p, sizeof(p), "%s", path);
  for (char *s = strchr(p + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
    *s = '\0';
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
      fail_msg("mkdir %s: %s", p, strerror(errno));
    *s = '/';
  }
}

static void join(char *out, size_t len, const char *root, const char *rel) {
  if (snprintf(out, len, "%s/%s", root, rel) >= (int)len)
    fail_msg("fixture path too long: %s/%s", root, rel);
}

void fixture_write_bytes(const char *root, const char *rel, const void *data,
                         size_t len) {
  char p[PATH_MAX];
  join(p, sizeof(p), root, rel);
  make_parents(p);
  if (data == NULL)
    return;
  FILE *f = fopen(p, "w");
  if (f == NULL)
    fail_msg("cannot write %s: %s", p, strerror(errno));
  size_t wrote = fwrite(data, 1, len, f);
  if (fclose(f) != 0 || wrote != len)
    fail_msg("cannot write %s: %s", p, strerror(errno));
}

void fixture_write(const char *root, const char *rel, const char *content) {
  fixture_write_bytes(root, rel, content, content ? strlen(content) : 0);
}

void fixture_symlink(const char *root, const char *rel, const char *target) {
  char p[PATH_MAX];
  join(p, sizeof(p), root, rel);
  make_parents(p);
  if (symlink(target, p) != 0)
    fail_msg("symlink %s -> %s: %s", p, target, strerror(errno));
}

void fixture_remove(const char *dir) {
  char cmd[PATH_MAX + 16];
  if (strchr(dir, '\'') != NULL)
    fail_msg("refusing to remove a path with a quote: %s", dir);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fail_msg("%s failed", cmd);
}
