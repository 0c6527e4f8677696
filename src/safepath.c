/* safepath.c - directories reached without symlinks; see safepath.h. */
#define _GNU_SOURCE
#include "safepath.h"
#include "vocab.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define DP_HAVE_OPENAT2 1
#endif

/* `dir` made absolute (against the cwd) with "", "." and ".." components
 * resolved lexically. Since no component may be a symlink, that is the
 * directory the kernel would resolve. */
static int normalise(const char *dir, char *out, size_t len, char *err,
                     size_t errlen) {
  char full[PATH_MAX];
  if (dir[0] == '/') {
    if (snprintf(full, sizeof(full), "%s", dir) >= (int)sizeof(full))
      return dp_errf(err, errlen, -ENAMETOOLONG, "path too long");
  } else {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL)
      return dp_errf(err, errlen, -errno,
                     "cannot find the current directory: %s", strerror(errno));
    if (snprintf(full, sizeof(full), "%s/%s", cwd, dir) >= (int)sizeof(full))
      return dp_errf(err, errlen, -ENAMETOOLONG, "path too long");
  }
  size_t o = 0;
  out[0] = '\0';
  for (char *save = NULL, *c = strtok_r(full, "/", &save); c != NULL;
       c = strtok_r(NULL, "/", &save)) {
    if (strcmp(c, ".") == 0)
      continue;
    if (strcmp(c, "..") == 0) {
      char *up = strrchr(out, '/');
      o = up ? (size_t)(up - out) : 0;
      out[o] = '\0';
      continue;
    }
    size_t cl = strlen(c);
    if (o + 1 + cl + 1 > len)
      return dp_errf(err, errlen, -ENAMETOOLONG, "path too long");
    out[o++] = '/';
    memcpy(out + o, c, cl + 1);
    o += cl;
  }
  if (o == 0)
    snprintf(out, len, "/");
  return 0;
}

/* One component below `dirfd`, never through a symlink: openat2 with
 * RESOLVE_NO_SYMLINKS where the kernel has it (checked once, at run time),
 * else openat with O_NOFOLLOW | O_DIRECTORY. O_PATH: only search permission
 * is needed. The fd or -errno. */
static int open_component(int dirfd, const char *name) {
  const int flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#ifdef DP_HAVE_OPENAT2
  static atomic_int no_openat2;
  if (!atomic_load_explicit(&no_openat2, memory_order_relaxed)) {
    struct open_how how;
    memset(&how, 0, sizeof(how));
    how.flags = (uint64_t)flags;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
    if (fd >= 0)
      return (int)fd;
    if (errno != ENOSYS && errno != E2BIG && errno != EPERM && errno != EINVAL)
      return -errno;
    if (errno == ENOSYS || errno == E2BIG) /* kernel before 5.6 */
      atomic_store_explicit(&no_openat2, 1, memory_order_relaxed);
  }
#endif
  int fd = openat(dirfd, name, flags);
  return fd >= 0 ? fd : -errno;
}

/* Someone other than root and us who could write `st` (a directory), or
 * own it, could swap what it holds for a symlink to anywhere. A sticky
 * directory (like /tmp) only lets them remove their own entries, and every
 * component below it must be ours or root's anyway. */
static int check_dir(char *err, size_t errlen, const struct stat *st,
                     const char *real, const char *what) {
  if (st->st_uid != 0 && st->st_uid != geteuid())
    return dp_errf(err, errlen, -EPERM,
                   "directory %s is owned by uid %u, not by root or us: that "
                   "user could redirect %s",
                   real, (unsigned)st->st_uid, what);
  if (!(st->st_mode & S_ISVTX) && (st->st_mode & S_IWOTH))
    return dp_errf(err, errlen, -EPERM,
                   "directory %s is world-writable without the sticky bit: "
                   "anyone could redirect %s",
                   real, what);
  if (!(st->st_mode & S_ISVTX) && (st->st_mode & S_IWGRP))
    return dp_errf(err, errlen, -EPERM,
                   "directory %s is group-writable without the sticky bit: "
                   "group %u could redirect %s",
                   real, (unsigned)st->st_gid, what);
  return 0;
}

/* Why `name` below `dirfd` could not be walked into (`real` is its path). */
static int walk_failed(char *err, size_t errlen, int dirfd, const char *name,
                       const char *real, int e) {
  struct stat st;
  if ((e == ELOOP || e == ENOTDIR) &&
      fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      char to[PATH_MAX], safe[256];
      ssize_t n = readlinkat(dirfd, name, to, sizeof(to) - 1);
      to[n > 0 ? n : 0] = '\0';
      /* whoever made the link chose its text: escaped, it cannot forge a
       * log line */
      return dp_errf(err, errlen, -ELOOP,
                     "%s is a symlink (to %s): not following; configure the "
                     "real path",
                     real, dp_escape(to, safe, sizeof(safe)));
    }
    if (!S_ISDIR(st.st_mode))
      return dp_errf(err, errlen, -ENOTDIR, "%s is not a directory", real);
  }
  return dp_errf(err, errlen, -e, "cannot open directory %s: %s", real,
                 strerror(e));
}

/* Opens the directory (for a probe file: the one that holds it), creating the
 * last level (mode 0700) when `create`: from "/", one component at a time, no
 * symlink followed, and every directory on the way checked (check_dir). Returns
 * an O_PATH fd; `real` gets the directory's real absolute path. */
int dp_safepath_open_dir_for(const char *dir, int create, const char *what,
                             char *real, size_t reallen, char *err,
                             size_t errlen) {
  char norm[PATH_MAX];
  int rc = normalise(dir, norm, sizeof(norm), err, errlen);
  if (rc < 0)
    return rc;
  int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0)
    return dp_errf(err, errlen, -errno, "cannot open /: %s", strerror(errno));
  struct stat st;
  if (fstat(cur, &st) < 0 ||
      (rc = check_dir(err, errlen, &st, "/", what)) < 0) {
    close(cur);
    return rc < 0 ? rc : dp_errf(err, errlen, -errno, "cannot stat /");
  }
  snprintf(real, reallen, "/");
  char walk[PATH_MAX];
  snprintf(walk, sizeof(walk), "%s", norm);
  size_t rl = 0;
  for (char *save = NULL, *c = strtok_r(walk, "/", &save); c != NULL;
       c = strtok_r(NULL, "/", &save)) {
    int last = norm[(size_t)(c - walk) + strlen(c)] == '\0';
    rl += (size_t)snprintf(real + rl, reallen - rl, "/%s", c);
    int next = open_component(cur, c);
    if (next == -ENOENT && create) {
      if (!last || (mkdirat(cur, c, 0700) < 0 && errno != EEXIST)) {
        int e = last ? errno : ENOENT;
        close(cur);
        return dp_errf(err, errlen, -e, "cannot create directory %s: %s", norm,
                       strerror(e));
      }
      next = open_component(cur, c);
    }
    if (next < 0) {
      rc = walk_failed(err, errlen, cur, c, real, -next);
      close(cur);
      return rc;
    }
    close(cur);
    cur = next;
    if (fstat(cur, &st) < 0) {
      int e = errno;
      close(cur);
      return dp_errf(err, errlen, -e, "cannot stat directory %s: %s", real,
                     strerror(e));
    }
    if ((rc = check_dir(err, errlen, &st, real, what)) < 0) {
      close(cur);
      return rc;
    }
  }
  return cur;
}

int dp_safepath_open_dir(const char *dir, int create, char *real,
                         size_t reallen, char *err, size_t errlen) {
  return dp_safepath_open_dir_for(dir, create, "the probe file", real, reallen,
                                  err, errlen);
}

int dp_path_join(char *out, size_t len, const char *dir, const char *name) {
  int n =
      snprintf(out, len, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
  return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
