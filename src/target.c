/* target.c - probe files and block-device targets; see target.h. */
#define _GNU_SOURCE
#include "target.h"
#include "clock.h"
#include "engine.h"
#include "rng.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define DP_HAVE_OPENAT2 1
#endif

#define MAGIC "DISKPROBE-FILE"
#define LAYOUT_CHUNK (1024u * 1024u)

typedef struct {
  char magic[16];
  uint32_t version; /* 2; 1: before laid_bytes and sum */
  uint32_t header_bytes;
  uint64_t size_bytes;
  uint64_t data_offset;
  uint64_t created_unix;
  uint32_t complete;
  uint32_t reserved;
  uint64_t laid_bytes; /* [0, laid_bytes) written and fdatasync'ed */
  uint64_t sum;        /* FNV-1a of the fields above */
} probe_header_t;

#define HEADER_VERSION 2

static uint64_t header_sum(const probe_header_t *h) {
  const unsigned char *p = (const unsigned char *)h;
  uint64_t x = 14695981039346656037ull;
  for (size_t i = 0; i < offsetof(probe_header_t, sum); i++)
    x = (x ^ p[i]) * 1099511628211ull;
  return x;
}

static int fail(dp_target_t *t, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(dp_target_t *t, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->err, sizeof(t->err), fmt, ap);
  va_end(ap);
  return err;
}

static void target_init(dp_target_t *t) {
  memset(t, 0, sizeof(*t));
  t->fd = -1;
  t->dev.rotational = -1;
}

void dp_target_close(dp_target_t *t) {
  if (t->fd >= 0)
    close(t->fd);
  t->fd = -1;
}

static void resolve_dev(dp_target_t *t, dev_t d) {
  t->st_dev = d;
  /* unresolvable: only the number is known (dp_blockdev_unknown) */
  (void)dp_blockdev_resolve_at(DP_SYSROOT_DEFAULT, major(d), minor(d), &t->dev);
}

int dp_target_open_block(const char *path, dp_target_t *t) {
  target_init(t);
  t->kind = DP_TARGET_BLOCK;
  snprintf(t->path, sizeof(t->path), "%s", path);
  int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == EINVAL)
      return fail(t, -EINVAL, "device does not support O_DIRECT");
    return fail(t, -e, "cannot open device read-only: %s", strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode)) {
    close(fd);
    return fail(t, -ENOTBLK, "not a block device");
  }
  uint64_t size = 0;
  int lbs = 0;
  if (ioctl(fd, BLKGETSIZE64, &size) < 0 || ioctl(fd, BLKSSZGET, &lbs) < 0) {
    int e = errno;
    close(fd);
    return fail(t, -e, "cannot read device geometry: %s", strerror(e));
  }
  if (size < DP_PROBE_FILE_MIN_BYTES) {
    close(fd);
    return fail(t, -EINVAL, "device is smaller than 1 MiB (%llu bytes)",
                (unsigned long long)size);
  }
  t->fd = fd;
  t->size_bytes = size;
  t->data_offset = 0;
  t->data_bytes = size;
  t->align = lbs >= 512 ? (uint32_t)lbs : 512;
  resolve_dev(t, st.st_rdev);
  return 0;
}

/* O_DIRECT alignment of an open file: statx STATX_DIOALIGN where the kernel
 * knows it, else the device's logical block size, else 4096. */
static uint32_t dio_align(int fd, const dp_blockdev_t *dev) {
#ifdef STATX_DIOALIGN
  struct statx sx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
      (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align >= 512) {
    uint32_t a = sx.stx_dio_offset_align;
    if (sx.stx_dio_mem_align > a)
      a = sx.stx_dio_mem_align;
    return a;
  }
#endif
  (void)fd;
  if (dev->logical_block_size >= 512)
    return dev->logical_block_size;
  return 4096;
}

/* ---- the path: split, normalised, walked without symlinks --------------- */

/* Splits a configured path into the directory and the probe file name. */
static int split_path(dp_target_t *t, const char *path, char *dir,
                      size_t dirlen, char *file, size_t filelen,
                      int *is_dir_target) {
  size_t n = strlen(path);
  if (n == 0)
    return fail(t, -EINVAL, "empty path");
  if (n >= PATH_MAX - sizeof(DP_PROBE_FILE_NAME) - 2)
    return fail(t, -ENAMETOOLONG, "path too long (%zu bytes, at most %zu)", n,
                (size_t)(PATH_MAX - sizeof(DP_PROBE_FILE_NAME) - 3));
  const char *ext = ".probe";
  size_t el = strlen(ext);
  *is_dir_target = !(n > el && strcmp(path + n - el, ext) == 0);
  if (*is_dir_target) {
    snprintf(dir, dirlen, "%s", path);
    snprintf(file, filelen, "%s", DP_PROBE_FILE_NAME);
    return 0;
  }
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  if (strlen(base) > NAME_MAX)
    return fail(t, -ENAMETOOLONG,
                "probe file name is %zu bytes long, more than the %d a file "
                "name may have",
                strlen(base), NAME_MAX);
  snprintf(file, filelen, "%s", base);
  if (slash == NULL)
    snprintf(dir, dirlen, ".");
  else if (slash == path)
    snprintf(dir, dirlen, "/");
  else
    snprintf(dir, dirlen, "%.*s", (int)(slash - path), path);
  return 0;
}

/* `dir` made absolute (against the cwd) with "", "." and ".." components
 * resolved lexically. Since no component may be a symlink, that is the
 * directory the kernel would resolve. */
static int normalise(dp_target_t *t, const char *dir, char *out, size_t len) {
  char full[PATH_MAX];
  if (dir[0] == '/') {
    snprintf(full, sizeof(full), "%s", dir);
  } else {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL)
      return fail(t, -errno, "cannot find the current directory: %s",
                  strerror(errno));
    if (snprintf(full, sizeof(full), "%s/%s", cwd, dir) >= (int)sizeof(full))
      return fail(t, -ENAMETOOLONG, "path too long");
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
      return fail(t, -ENAMETOOLONG, "path too long");
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
static int check_dir(dp_target_t *t, const struct stat *st, const char *real) {
  if (st->st_uid != 0 && st->st_uid != geteuid())
    return fail(t, -EPERM,
                "directory %s is owned by uid %u, not by root or us: that "
                "user could redirect the probe file",
                real, (unsigned)st->st_uid);
  if (!(st->st_mode & S_ISVTX) && (st->st_mode & S_IWOTH))
    return fail(t, -EPERM,
                "directory %s is world-writable without the sticky bit: "
                "anyone could redirect the probe file",
                real);
  if (!(st->st_mode & S_ISVTX) && (st->st_mode & S_IWGRP))
    return fail(t, -EPERM,
                "directory %s is group-writable without the sticky bit: "
                "group %u could redirect the probe file",
                real, (unsigned)st->st_gid);
  return 0;
}

/* Why `name` below `dirfd` could not be walked into (`real` is its path). */
static int walk_failed(dp_target_t *t, int dirfd, const char *name,
                       const char *real, int e) {
  struct stat st;
  if ((e == ELOOP || e == ENOTDIR) &&
      fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      char to[PATH_MAX];
      ssize_t n = readlinkat(dirfd, name, to, sizeof(to) - 1);
      to[n > 0 ? n : 0] = '\0';
      return fail(t, -ELOOP,
                  "%s is a symlink (to %s): not following; configure the "
                  "real path",
                  real, to);
    }
    if (!S_ISDIR(st.st_mode))
      return fail(t, -ENOTDIR, "%s is not a directory", real);
  }
  return fail(t, -e, "cannot open directory %s: %s", real, strerror(e));
}

/* Opens the directory that holds the probe file, creating the last level
 * (mode 0700) when `create`: from "/", one component at a time, no symlink
 * followed, and every directory on the way checked (check_dir). Returns an
 * O_PATH fd; `real` gets the directory's real absolute path. */
static int open_dir(dp_target_t *t, const char *dir, int create, char *real,
                    size_t reallen) {
  char norm[PATH_MAX];
  int rc = normalise(t, dir, norm, sizeof(norm));
  if (rc < 0)
    return rc;
  int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0)
    return fail(t, -errno, "cannot open /: %s", strerror(errno));
  struct stat st;
  if (fstat(cur, &st) < 0 || (rc = check_dir(t, &st, "/")) < 0) {
    close(cur);
    return rc < 0 ? rc : fail(t, -errno, "cannot stat /");
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
        return fail(t, -e, "cannot create directory %s: %s", norm, strerror(e));
      }
      next = open_component(cur, c);
    }
    if (next < 0) {
      rc = walk_failed(t, cur, c, real, -next);
      close(cur);
      return rc;
    }
    close(cur);
    cur = next;
    if (fstat(cur, &st) < 0) {
      int e = errno;
      close(cur);
      return fail(t, -e, "cannot stat directory %s: %s", real, strerror(e));
    }
    if ((rc = check_dir(t, &st, real)) < 0) {
      close(cur);
      return rc;
    }
  }
  return cur;
}

/* ---- the probe file ------------------------------------------------------ */

/* Header bytes of a new probe file: 4 KiB, or the O_DIRECT alignment where
 * that is larger (a 16 KiB-sector device). */
static uint32_t header_size(uint32_t align) {
  return align > DP_PROBE_HEADER_BYTES ? align : DP_PROBE_HEADER_BYTES;
}

/* Reads the first `len` bytes (a multiple of the alignment) into `buf`; the
 * count read or -errno. */
static ssize_t read_head(int fd, void *buf, size_t len) {
  ssize_t n;
  do
    n = pread(fd, buf, len, 0);
  while (n < 0 && errno == EINTR);
  return n < 0 ? -errno : n;
}

static int write_header(int fd, uint64_t size, uint32_t hdr, int complete,
                        uint64_t laid, uint64_t *rng) {
  void *buf = NULL;
  if (posix_memalign(&buf, hdr, hdr) != 0)
    return -ENOMEM;
  dp_fill_random(buf, hdr, rng);
  probe_header_t h;
  memset(&h, 0, sizeof(h));
  memcpy(h.magic, MAGIC, sizeof(MAGIC));
  h.version = HEADER_VERSION;
  h.header_bytes = hdr;
  h.size_bytes = size;
  h.data_offset = hdr;
  h.created_unix = (uint64_t)time(NULL);
  h.complete = (uint32_t)complete;
  h.laid_bytes = laid;
  h.sum = header_sum(&h);
  memcpy(buf, &h, sizeof(h));
  ssize_t n = pwrite(fd, buf, hdr, 0);
  int rc = n == (ssize_t)hdr ? 0 : (n < 0 ? -errno : -EIO);
  free(buf);
  return rc;
}

/* Every byte of [0, size) backed by written blocks: no holes, no
 * unwritten or delayed-allocation extents. */
static int check_allocated(int fd, uint64_t size, char *why, size_t whylen) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return -errno;
  if ((uint64_t)st.st_blocks * 512 < size) {
    snprintf(why, whylen, "only %llu of %llu bytes allocated",
             (unsigned long long)st.st_blocks * 512, (unsigned long long)size);
    return -ENODATA;
  }
  off_t hole = lseek(fd, 0, SEEK_HOLE);
  if (hole >= 0 && (uint64_t)hole < size) {
    snprintf(why, whylen, "hole at offset %lld", (long long)hole);
    return -ENODATA;
  }
  enum { N = 64 };
  size_t sz = sizeof(struct fiemap) + N * sizeof(struct fiemap_extent);
  struct fiemap *fm = calloc(1, sz);
  if (fm == NULL)
    return -ENOMEM;
  uint64_t start = 0;
  int rc = 0;
  while (start < size) {
    memset(fm, 0, sz);
    fm->fm_start = start;
    fm->fm_length = size - start;
    fm->fm_flags = FIEMAP_FLAG_SYNC;
    fm->fm_extent_count = N;
    if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0)
      break; /* no FIEMAP here (e.g. tmpfs): st_blocks and SEEK_HOLE stand */
    if (fm->fm_mapped_extents == 0)
      break;
    for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
      struct fiemap_extent *x = &fm->fm_extents[i];
      if (x->fe_flags & (FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_DELALLOC |
                         FIEMAP_EXTENT_UNKNOWN)) {
        snprintf(why, whylen, "unwritten extent at offset %llu",
                 (unsigned long long)x->fe_logical);
        rc = -ENODATA;
        goto out;
      }
      start = x->fe_logical + x->fe_length;
      if (x->fe_flags & FIEMAP_EXTENT_LAST)
        start = size;
    }
  }
out:
  free(fm);
  return rc;
}

/* ---- the layout: paced, checkpointed, resumable -------------------------- */

static uint64_t layout_now(const dp_layout_conf_t *lc) {
  return lc->now_ns ? lc->now_ns(lc->clock_arg) : dp_now_ns();
}

static int stopped(const dp_layout_conf_t *lc) {
  return lc->stop != NULL &&
         atomic_load_explicit(lc->stop, memory_order_acquire) != 0;
}

/* Waits until `until` (layout clock) in sleeps of at most
 * DP_LAYOUT_SLEEP_NS, so that a stop is seen promptly: 0 or -ECANCELED. */
static int pace_until(const dp_layout_conf_t *lc, uint64_t until) {
  for (;;) {
    if (stopped(lc))
      return -ECANCELED;
    uint64_t now = layout_now(lc);
    if (now >= until)
      return 0;
    uint64_t d =
        until - now < DP_LAYOUT_SLEEP_NS ? until - now : DP_LAYOUT_SLEEP_NS;
    if (lc->sleep_ns != NULL) {
      lc->sleep_ns(d, lc->clock_arg);
    } else {
      struct timespec ts;
      dp_ns_to_timespec(d, &ts);
      nanosleep(&ts, NULL);
    }
  }
}

/* Makes [0, laid) durable and says so in the header: the data first, then
 * the header that claims it. */
static int checkpoint(int fd, uint64_t size, uint32_t hdr, uint64_t laid,
                      uint64_t *rng) {
  if (fdatasync(fd) < 0)
    return -errno;
  int rc = write_header(fd, size, hdr, 0, laid, rng);
  if (rc == 0 && fdatasync(fd) < 0)
    rc = -errno;
  return rc;
}

/* Writes incompressible data over [from, size) after a header of `hdr`
 * bytes (from == 0: a new file, the header first), at most
 * lc->rate_bytes_per_s, recording progress every DP_LAYOUT_CHECKPOINT_BYTES,
 * then makes it durable and marks it complete. A stop: -ECANCELED after a
 * last checkpoint. */
static int lay_out(dp_target_t *t, int fd, uint64_t size, uint32_t hdr,
                   uint64_t from, const dp_layout_conf_t *lc) {
  uint64_t rng = dp_now_ns() | 1;
  int rc;
  if (from < hdr) {
    from = hdr;
    rc = write_header(fd, size, hdr, 0, hdr, &rng);
    if (rc < 0)
      return fail(t, rc, "cannot write probe file header: %s", strerror(-rc));
  }
  void *buf = NULL;
  if (posix_memalign(&buf, hdr, LAYOUT_CHUNK) != 0)
    return fail(t, -ENOMEM, "out of memory");
  uint64_t t0 = layout_now(lc), start = from, recorded = from;
  uint64_t off = from;
  rc = 0;
  while (off < size) {
    if (stopped(lc)) {
      rc = -ECANCELED;
      break;
    }
    size_t len =
        size - off < LAYOUT_CHUNK ? (size_t)(size - off) : LAYOUT_CHUNK;
    dp_fill_random(buf, len, &rng);
    ssize_t n = pwrite(fd, buf, len, (off_t)off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int e = n < 0 ? errno : ENOSPC;
      free(buf);
      if (e == ENOSPC || e == EDQUOT)
        return fail(t, -ENOSPC,
                    "no space left while laying out the probe file "
                    "(%llu of %llu bytes written)",
                    (unsigned long long)off, (unsigned long long)size);
      return fail(t, -e, "write failed while laying out the probe file: %s",
                  strerror(e));
    }
    off += (uint64_t)n;
    if (off - recorded >= DP_LAYOUT_CHECKPOINT_BYTES && off < size) {
      off -= off % hdr; /* a short write: resume on the alignment */
      if ((rc = checkpoint(fd, size, hdr, off, &rng)) < 0)
        break;
      recorded = off;
    }
    if (lc->rate_bytes_per_s > 0 && off < size) {
      double ns = (double)(off - start) * 1e9 / (double)lc->rate_bytes_per_s;
      if ((rc = pace_until(lc, t0 + (uint64_t)ns)) < 0)
        break;
    }
  }
  free(buf);
  if (rc == -ECANCELED) {
    off -= off % hdr;
    if (off > recorded && checkpoint(fd, size, hdr, off, &rng) == 0)
      recorded = off;
    t->resumed_bytes = recorded; /* how far the next open resumes */
    return fail(t, -ECANCELED,
                "laying out the probe file was interrupted at %llu of %llu "
                "bytes (shutting down); the next start resumes there",
                (unsigned long long)recorded, (unsigned long long)size);
  }
  if (rc < 0)
    return fail(t, rc, "cannot record the probe file layout's progress: %s",
                strerror(-rc));
  if (fsync(fd) < 0)
    return fail(t, -errno, "fsync of the probe file failed: %s",
                strerror(errno));
  rc = write_header(fd, size, hdr, 1, size, &rng);
  if (rc == 0 && fsync(fd) < 0)
    rc = -errno;
  if (rc < 0)
    return fail(t, rc, "cannot complete probe file header: %s", strerror(-rc));
  return 0;
}

/* What a non-regular file at the probe path is, in words. */
static const char *file_kind(mode_t m) {
  if (S_ISFIFO(m))
    return "a FIFO (named pipe)";
  if (S_ISSOCK(m))
    return "a socket";
  if (S_ISCHR(m))
    return "a character device";
  if (S_ISBLK(m))
    return "a block device";
  if (S_ISDIR(m))
    return "a directory";
  if (S_ISLNK(m))
    return "a symlink";
  return "of an unknown type";
}

static int not_regular(dp_target_t *t, mode_t m) {
  if (S_ISLNK(m))
    return fail(t, -ELOOP, "probe file path is a symlink: not following (%s)",
                t->path);
  return fail(t, -EINVAL,
              "probe file path exists and is %s, not a regular file: not "
              "touching it",
              file_kind(m));
}

/*
 * The lock that keeps a second process (another collectd, `collectd -T`,
 * `diskprobe run`) off a probe file: an OFD lock, owned by this open file
 * description and released when it is closed. A writable fd takes F_WRLCK.
 * F_WRLCK needs a writable fd, so a read-only one takes F_RDLCK and then
 * asks (F_OFD_GETLK) whether anyone else holds any lock on the file: as
 * exclusive as F_WRLCK, without opening the file for writing.
 */
static int lock_file(dp_target_t *t, int fd, int writable_fd) {
  struct flock l;
  memset(&l, 0, sizeof(l));
  l.l_type = writable_fd ? F_WRLCK : F_RDLCK;
  l.l_whence = SEEK_SET;
  int busy = 0;
  if (fcntl(fd, F_OFD_SETLK, &l) < 0) {
    if (errno != EAGAIN && errno != EACCES)
      return fail(t, -errno, "cannot lock the probe file %s: %s", t->path,
                  strerror(errno));
    busy = 1;
  }
  if (!busy && !writable_fd) {
    memset(&l, 0, sizeof(l));
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &l) < 0)
      return fail(t, -errno, "cannot lock the probe file %s: %s", t->path,
                  strerror(errno));
    busy = l.l_type != F_UNLCK;
  }
  if (busy)
    return fail(t, -EBUSY,
                "probe file %s is held by another process (another collectd, "
                "or `collectd -T`?): not touching it",
                t->path);
  return 0;
}

/* A file too short to hold a header that is provably ours: the one we
 * create (regular, owned by us, mode 0600, one link, our name), empty or
 * holding the start of our header. A crash between create and the first
 * header write, or `: > diskprobe.probe`, leaves one. */
static int our_name(const char *file) {
  size_t fl = strlen(file);
  return strcmp(file, DP_PROBE_FILE_NAME) == 0 ||
         (fl > 6 && strcmp(file + fl - 6, ".probe") == 0);
}

static int ours_but_short(const struct stat *st, const char *file,
                          const char *head, ssize_t n, size_t hdr) {
  size_t cmp = (size_t)n < sizeof(MAGIC) ? (size_t)n : sizeof(MAGIC);
  return our_name(file) && (st->st_mode & 07777) == 0600 &&
         (uint64_t)st->st_size < hdr && memcmp(head, MAGIC, cmp) == 0;
}

/* An incomplete layout of ours that can go on where it stopped (target.h,
 * Resuming): the byte to resume at, or 0 to lay out from the start. */
static uint64_t resume_point(const dp_target_t *t, int fd,
                             const struct stat *st, const char *file,
                             const probe_header_t *h, uint64_t size) {
  uint64_t hdr = header_size(t->align), laid = h->laid_bytes;
  if (h->complete || h->version < 2 || h->sum != header_sum(h) ||
      !our_name(file) || (st->st_mode & 07777) != 0600 ||
      h->size_bytes != size || h->header_bytes != hdr ||
      h->data_offset != hdr || laid < hdr || laid > size || laid % hdr ||
      (uint64_t)st->st_size < laid || (uint64_t)st->st_size > size)
    return 0;
  char why[128];
  return check_allocated(fd, laid, why, sizeof(why)) == 0 ? laid : 0;
}

/* Checks an existing file: 1 ours and intact (t->data_offset set), 0 ours
 * but to be laid out again, 2 ours and an interrupted layout to resume at
 * *resume, negative: refuse (t->err set). */
static int check_existing(dp_target_t *t, int fd, const char *file,
                          uint64_t size, uint64_t *resume) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return fail(t, -errno, "cannot stat probe file");
  if (!S_ISREG(st.st_mode))
    return not_regular(t, st.st_mode);
  if (st.st_uid != geteuid())
    return fail(t, -EEXIST,
                "existing file is owned by uid %u, not by us: not touching it",
                (unsigned)st.st_uid);
  if (st.st_nlink != 1)
    return fail(t, -EEXIST, "existing file has %lu hard links: not touching it",
                (unsigned long)st.st_nlink);
  size_t len = header_size(t->align);
  void *buf = NULL;
  if (posix_memalign(&buf, len, len) != 0)
    return fail(t, -ENOMEM, "out of memory");
  ssize_t n = read_head(fd, buf, len);
  probe_header_t h;
  memset(&h, 0, sizeof(h));
  if (n > 0)
    memcpy(&h, buf, (size_t)n < sizeof(h) ? (size_t)n : sizeof(h));
  int short_ours = n >= 0 && ours_but_short(&st, file, buf, n, len);
  free(buf);
  if (n < 0) /* the disk failed, not the ownership test */
    return fail(t, (int)n, "cannot read the probe file header: %s",
                strerror((int)-n));
  if (short_ours)
    return 0;
  if ((size_t)n < sizeof(h) || memcmp(h.magic, MAGIC, sizeof(MAGIC)) != 0)
    return fail(t, -EEXIST,
                "existing file is not a diskprobe probe file: not touching it");
  if (st.st_mode & 077)
    return fail(t, -EPERM, "probe file mode %03o allows group/other access",
                (unsigned)(st.st_mode & 0777));
  if (!h.complete)
    return (*resume = resume_point(t, fd, &st, file, &h, size)) > 0 ? 2 : 0;
  if (h.size_bytes != size || (uint64_t)st.st_size != size)
    return 0;
  /* Files of other devices (4 KiB header on a 16 KiB-sector disk): the
   * data must start on the alignment. */
  if (h.data_offset < sizeof(h) || h.data_offset % t->align != 0 ||
      h.data_offset >= size || h.header_bytes != h.data_offset)
    return 0;
  char why[128] = "";
  int rc = check_allocated(fd, size, why, sizeof(why));
  if (rc == -ENODATA)
    return 0;
  if (rc < 0)
    return fail(t, rc, "cannot check probe file allocation: %s", strerror(-rc));
  t->data_offset = h.data_offset;
  return 1;
}

/* A probe file in RAM measures memory: refused. Space for a new file is
 * checked first (a filesystem that does not report its size, like ramfs,
 * is not judged on it). */
static int check_fs(dp_target_t *t, int dfd, const char *real, int exists,
                    uint64_t size) {
  struct statvfs vfs;
  if (!exists && fstatvfs(dfd, &vfs) == 0 && vfs.f_blocks > 0 &&
      (uint64_t)vfs.f_bavail * vfs.f_frsize < size)
    return fail(t, -ENOSPC,
                "no space for a %llu-byte probe file (%llu bytes free)",
                (unsigned long long)size,
                (unsigned long long)vfs.f_bavail * vfs.f_frsize);
  struct statfs fs;
  if (fstatfs(dfd, &fs) == 0 &&
      (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC))
    return fail(t, -EMEDIUMTYPE,
                "%s is on %s: a probe file in RAM measures memory, not a disk",
                real,
                fs.f_type == TMPFS_MAGIC ? "tmpfs (or devtmpfs)" : "ramfs");
  return 0;
}

/* Why opening the probe file failed. A FIFO, socket or device swapped in
 * after fstatat also answers EINVAL to O_DIRECT: say what it is. */
static int open_failed(dp_target_t *t, int dfd, const char *file, int e) {
  struct stat st;
  if ((e == EINVAL || e == ELOOP) &&
      fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
    return not_regular(t, st.st_mode);
  if (e == ELOOP)
    return fail(t, -ELOOP, "probe file path is a symlink: not following");
  if (e == EINVAL)
    return fail(t, -EINVAL, "filesystem does not support O_DIRECT");
  if (e == EROFS)
    return fail(t, -EROFS, "filesystem is read-only");
  if (e == EACCES || e == EPERM)
    return fail(t, -e, "permission denied");
  if (e == ENOSPC || e == EDQUOT)
    return fail(t, -ENOSPC, "no space to create the probe file");
  return fail(t, -e, "cannot open probe file: %s", strerror(e));
}

/* Opens `file` in `dfd` (O_DIRECT, never following a symlink, never
 * blocking on a FIFO) and checks it is a regular file; O_NONBLOCK is then
 * cleared. Creates it (O_EXCL, 0600) when `create`. fd or negative. */
static int open_probe(dp_target_t *t, int dfd, const char *file, int acc,
                      int create) {
  int flags = acc | O_DIRECT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = create ? openat(dfd, file, flags | O_CREAT | O_EXCL, 0600)
                  : openat(dfd, file, flags);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT || e == EEXIST)
      return -EAGAIN; /* changed between fstatat and open: look again */
    if (create && e == EINVAL) {
      /* created, then refused O_DIRECT: remove the empty file we made */
      struct stat st;
      if (fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISREG(st.st_mode) && st.st_size == 0 && st.st_uid == geteuid())
        unlinkat(dfd, file, 0);
    }
    return open_failed(t, dfd, file, e);
  }
  struct stat st;
  int rc = fstat(fd, &st) < 0     ? fail(t, -errno, "cannot stat probe file")
           : !S_ISREG(st.st_mode) ? not_regular(t, st.st_mode)
                                  : 0;
  if (rc < 0) {
    close(fd);
    return rc;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
    int e = errno;
    close(fd);
    return fail(t, -e, "cannot set up the probe file: %s", strerror(e));
  }
  resolve_dev(t, st.st_dev);
  t->align = dio_align(fd, &t->dev);
  return fd;
}

/* After a layout on a writable fd, the read-only fd probes will use: the
 * lock is downgraded and handed over without ever being let go. */
static int reopen_read_only(dp_target_t *t, int dfd, const char *file, int fd) {
  struct flock l;
  memset(&l, 0, sizeof(l));
  l.l_type = F_RDLCK;
  l.l_whence = SEEK_SET;
  if (fcntl(fd, F_OFD_SETLK, &l) < 0) /* downgrade: cannot conflict */
    return fail(t, -errno, "cannot lock the probe file %s: %s", t->path,
                strerror(errno));
  int ro = open_probe(t, dfd, file, O_RDONLY, 0);
  if (ro == -EAGAIN)
    ro = fail(t, -EAGAIN, "probe file %s vanished after layout", t->path);
  if (ro < 0)
    return ro;
  struct stat a, b;
  if (fstat(fd, &a) < 0 || fstat(ro, &b) < 0 || a.st_ino != b.st_ino ||
      a.st_dev != b.st_dev) {
    close(ro);
    return fail(t, -EAGAIN, "probe file %s was replaced after layout", t->path);
  }
  if (fcntl(ro, F_OFD_SETLK, &l) < 0) {
    int e = errno;
    close(ro);
    return fail(t, -e, "cannot lock the probe file %s: %s", t->path,
                strerror(e));
  }
  return ro;
}

int dp_target_open_file(const char *path, uint64_t size_bytes, int writable,
                        dp_target_t *t) {
  return dp_target_open_file_layout(path, size_bytes, writable, NULL, t);
}

int dp_target_open_file_stop(const char *path, uint64_t size_bytes,
                             int writable, const atomic_int *stop,
                             dp_target_t *t) {
  dp_layout_conf_t lc = {.stop = stop};
  return dp_target_open_file_layout(path, size_bytes, writable, &lc, t);
}

/* Lays out the probe file on `fd` (writable, locked) from `from` (0: a new
 * file), checks the result, and for a read-only target swaps fd for the
 * read-only one: that fd, or negative (the file removed unless a stop
 * interrupted a layout that had got somewhere, to be resumed). */
static int layout_file(dp_target_t *t, int dfd, const char *file, int fd,
                       uint64_t size, uint64_t from, int writable,
                       const dp_layout_conf_t *lc) {
  uint32_t hdr = header_size(t->align);
  int rc = lay_out(t, fd, size, hdr, from, lc);
  char why[128] = "";
  if (rc == 0) {
    rc = check_allocated(fd, size, why, sizeof(why));
    if (rc < 0)
      rc = fail(t, rc == -ENODATA ? -EIO : rc,
                "probe file not fully allocated after layout: %s", why);
  }
  if (rc == 0 && !writable) {
    int ro = reopen_read_only(t, dfd, file, fd);
    rc = ro < 0 ? ro : 0;
    if (ro >= 0) {
      close(fd);
      fd = ro;
    }
  }
  if (rc < 0) {
    close(fd);
    if (rc != -ECANCELED || t->resumed_bytes <= hdr)
      unlinkat(dfd, file, 0);
    return rc;
  }
  t->data_offset = hdr;
  t->laid_out = 1;
  t->resumed_bytes = from > hdr ? from : 0;
  return fd;
}

int dp_target_open_file_layout(const char *path, uint64_t size_bytes,
                               int writable, const dp_layout_conf_t *lc,
                               dp_target_t *t) {
  static const dp_layout_conf_t none;
  if (lc == NULL)
    lc = &none;
  target_init(t);
  t->kind = DP_TARGET_FILE;
  size_bytes -= size_bytes % DP_PROBE_FILE_MIN_BYTES;
  if (size_bytes < DP_PROBE_FILE_MIN_BYTES)
    return fail(t, -EINVAL, "probe file size must be at least 1 MiB");

  char dir[PATH_MAX], file[NAME_MAX + 1], real[PATH_MAX];
  int is_dir, rc;
  if ((rc = split_path(t, path, dir, sizeof(dir), file, sizeof(file),
                       &is_dir)) < 0)
    return rc;
  int dfd = open_dir(t, dir, is_dir, real, sizeof(real));
  if (dfd < 0)
    return dfd;
  snprintf(t->path, sizeof(t->path), "%s%s%s", real,
           strcmp(real, "/") == 0 ? "" : "/", file);

  int want_rw = writable; /* a layout to resume needs a writable fd */
  for (int attempt = 0; attempt < 5; attempt++) {
    struct stat lst;
    int exists = fstatat(dfd, file, &lst, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists && errno != ENOENT) {
      rc = fail(t, -errno, "cannot stat %s: %s", t->path, strerror(errno));
      break;
    }
    if (exists && !S_ISREG(lst.st_mode)) {
      rc = not_regular(t, lst.st_mode);
      break;
    }
    if ((rc = check_fs(t, dfd, real, exists, size_bytes)) < 0)
      break;
    int created = !exists, rw = want_rw || created;
    int fd = open_probe(t, dfd, file, rw ? O_RDWR : O_RDONLY, created);
    if (fd == -EAGAIN)
      continue;
    if (fd < 0) {
      rc = fd;
      break;
    }
    if ((rc = lock_file(t, fd, rw)) < 0) {
      close(fd);
      break;
    }
    uint64_t from = 0;
    if (!created) {
      int ok = check_existing(t, fd, file, size_bytes, &from);
      if (ok < 0) {
        close(fd);
        rc = ok;
        break;
      }
      if (ok == 2 && !rw) {
        /* resumable, but opened read-only: look again, writable */
        close(fd);
        want_rw = 1;
        continue;
      }
      if (ok == 0) {
        /* Ours, but incomplete, resized or of another device: start over
         * with a fresh file (still holding the lock on this one). */
        if (unlinkat(dfd, file, 0) < 0) {
          rc = fail(t, -errno, "cannot replace stale probe file: %s",
                    strerror(errno));
          close(fd);
          break;
        }
        close(fd);
        continue;
      }
    }
    if (created || from > 0) {
      fd = layout_file(t, dfd, file, fd, size_bytes, from, writable, lc);
      if (fd < 0) {
        rc = fd;
        break;
      }
    }
    close(dfd);
    struct stat st;
    fstat(fd, &st);
    t->file_dev = st.st_dev;
    t->file_ino = st.st_ino;
    t->file_blocks = st.st_blocks;
    t->fd = fd;
    t->writable = writable;
    t->size_bytes = size_bytes;
    t->data_bytes = size_bytes - t->data_offset;
    resolve_dev(t, st.st_dev);
    return 0;
  }
  if (rc == 0)
    rc = fail(t, -EAGAIN, "probe file keeps changing under us");
  close(dfd);
  return rc;
}

int dp_target_verify(dp_target_t *t) {
  if (t->kind != DP_TARGET_FILE || t->fd < 0)
    return 0;
  struct stat now, at;
  if (fstat(t->fd, &now) < 0)
    return fail(t, -ESTALE, "cannot fstat the probe file: %s", strerror(errno));
  if (fstatat(AT_FDCWD, t->path, &at, AT_SYMLINK_NOFOLLOW) < 0 ||
      at.st_dev != t->file_dev || at.st_ino != t->file_ino || now.st_nlink == 0)
    return fail(t, -ESTALE,
                "probe file %s was deleted or replaced under us: opening "
                "it again",
                t->path);
  /* Still our inode at our path, but damaged: it was ours a round ago and
   * we hold its lock, so it goes, and opening again lays out a new one
   * (a truncated and re-extended file has no header left to prove it). */
  int damaged =
      (uint64_t)now.st_size != t->size_bytes || now.st_blocks < t->file_blocks;
  if (damaged)
    unlinkat(AT_FDCWD, t->path, 0);
  if ((uint64_t)now.st_size != t->size_bytes)
    return fail(t, -ESTALE,
                "probe file %s changed size under us (%llu bytes, was "
                "%llu): checking it again",
                t->path, (unsigned long long)now.st_size,
                (unsigned long long)t->size_bytes);
  if (now.st_blocks < t->file_blocks)
    return fail(t, -ESTALE,
                "probe file %s lost allocated blocks under us (%llu bytes "
                "allocated, was %llu: holes punched?): checking it again",
                t->path, (unsigned long long)now.st_blocks * 512,
                (unsigned long long)t->file_blocks * 512);
  return 0;
}

int dp_target_open(const char *path, uint64_t file_size_bytes, int writable,
                   const dp_layout_conf_t *lc, dp_target_t *t) {
  struct stat st;
  if (path[0] != '\0' && stat(path, &st) == 0 && S_ISBLK(st.st_mode))
    return dp_target_open_block(path, t);
  return dp_target_open_file_layout(path, file_size_bytes, writable, lc, t);
}
