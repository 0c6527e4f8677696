/* target.c - probe files and block-device targets; see target.h. */
#define _GNU_SOURCE
#include "target.h"
#include "blockdev.h"
#include "probefile.h"
#include "safepath.h"
#include "vocab.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

/* The cause of a failure into t->err; returns rc. */
#define fail(t, rc, ...) dp_errf((t)->err, sizeof((t)->err), (rc), __VA_ARGS__)

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
  t->dev_members[0] = '\0';
  /* btrfs, overlayfs: no block device behind the number; the mount table
   * says which (a file's path, t->path, has no symlink in it) */
  if (dp_blockdev_resolve_at(DP_SYSROOT_DEFAULT, major(d), minor(d), &t->dev) ==
          -ENODEV &&
      t->kind == DP_TARGET_FILE &&
      dp_blockdev_resolve_mount_at(DP_SYSROOT_DEFAULT, NULL, t->path, &t->dev,
                                   t->dev_members, sizeof(t->dev_members)) < 0)
    /* unresolvable: only the number is known (dp_blockdev_unknown) */
    dp_blockdev_unknown(&t->dev, major(d), minor(d));
}

int dp_target_open_block(const char *path, dp_target_t *t) {
  target_init(t);
  t->kind = DP_TARGET_BLOCK;
  snprintf(t->path, sizeof(t->path), "%s", path);
  /* O_NONBLOCK: a FIFO at the path would block open() until a writer
   * came, a character device may too; neither is opened for long. */
  int fd = open(path, O_RDONLY | O_DIRECT | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0) {
    int e = errno;
    if (e == EINVAL && stat(path, &st) == 0 && !S_ISBLK(st.st_mode))
      return fail(t, -ENOTBLK, "%s is %s, not a block device", path,
                  dp_file_kind(st.st_mode));
    if (e == EINVAL)
      return fail(t, -EINVAL, "device does not support O_DIRECT");
    return fail(t, -e, "cannot open device read-only: %s", strerror(e));
  }
  if (fstat(fd, &st) < 0) {
    int e = errno;
    close(fd);
    return fail(t, -e, "cannot stat device: %s", strerror(e));
  }
  if (!S_ISBLK(st.st_mode)) {
    close(fd);
    return fail(t, -ENOTBLK, "%s is %s, not a block device", path,
                dp_file_kind(st.st_mode));
  }
  /* a block device: reads wait for their data (the engine's are AIO) */
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
    int e = errno;
    close(fd);
    return fail(t, -e, "cannot clear O_NONBLOCK: %s", strerror(e));
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

/* ---- the path: split into the directory and the probe file ------------- */

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
  /* each piece fits its buffer (checked above and here: a build whose
   * inlining hides the bound must not be able to cut one) */
  int kd, kf;
  if (*is_dir_target) {
    kd = snprintf(dir, dirlen, "%s", path);
    kf = snprintf(file, filelen, "%s", DP_PROBE_FILE_NAME);
  } else {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strlen(base) > NAME_MAX)
      return fail(t, -ENAMETOOLONG,
                  "probe file name is %zu bytes long, more than the %d a file "
                  "name may have",
                  strlen(base), NAME_MAX);
    kf = snprintf(file, filelen, "%s", base);
    if (slash == NULL)
      kd = snprintf(dir, dirlen, ".");
    else if (slash == path)
      kd = snprintf(dir, dirlen, "/");
    else
      kd = snprintf(dir, dirlen, "%.*s", (int)(slash - path), path);
  }
  if (kd < 0 || (size_t)kd >= dirlen || kf < 0 || (size_t)kf >= filelen)
    return fail(t, -ENAMETOOLONG, "path too long: %s", path);
  return 0;
}

static int not_regular(dp_target_t *t, mode_t m) {
  return dp_probefile_not_regular(m, t->path, t->err, sizeof(t->err));
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
  uint32_t hdr = dp_probefile_header_bytes(t->align);
  int rc = dp_probefile_lay_out(fd, size, hdr, from, lc, &t->resumed_bytes,
                                t->err, sizeof(t->err));
  char why[128] = "";
  if (rc == 0) {
    rc = dp_probefile_allocated(fd, size, why, sizeof(why));
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
  int dfd = dp_safepath_open_dir(dir, is_dir, real, sizeof(real), t->err,
                                 sizeof(t->err));
  if (dfd < 0)
    return dfd;
  if (dp_path_join(t->path, sizeof(t->path), real, file) < 0) {
    close(dfd);
    t->path[0] = '\0';
    return fail(t, -ENAMETOOLONG,
                "path too long: %s/%s has more than %zu bytes", real, file,
                sizeof(t->path) - 1);
  }

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
    if ((rc = dp_probefile_lock(fd, rw, t->path, t->err, sizeof(t->err))) < 0) {
      close(fd);
      break;
    }
    uint64_t from = 0;
    if (!created) {
      int ok =
          dp_probefile_check(fd, t->path, file, size_bytes, t->align,
                             &t->data_offset, &from, t->err, sizeof(t->err));
      if (ok < 0) {
        close(fd);
        rc = ok;
        break;
      }
      if (ok == DP_PROBEFILE_RESUME && !rw) {
        /* resumable, but opened read-only: look again, writable */
        close(fd);
        want_rw = 1;
        continue;
      }
      if (ok == DP_PROBEFILE_RELAY) {
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
    char why[128];
    t->no_extent_map =
        dp_probefile_extents(fd, size_bytes, why, sizeof(why)) == -EOPNOTSUPP;
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

/* 1 if rc, one check of what the probes' reads would hit, says the file
 * changed (-ENODATA, the cause in its why), else 0: a read error is the
 * probes' to count, not a change, and -EOPNOTSUPP (no FIEMAP here) sets
 * t->no_extent_map. */
static int content_changed(dp_target_t *t, int rc) {
  if (rc == -EOPNOTSUPP)
    t->no_extent_map = 1;
  return rc == -ENODATA;
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
  /* In order, each only if the ones before passed: the size, the
   * allocated blocks (holes punched, a truncation re-extended), the header
   * (zeros: the whole file re-allocated), the extent map (unwritten:
   * re-allocated, a zeroed range). */
  char why[128] = "";
  int resized = (uint64_t)now.st_size != t->size_bytes;
  int shrunk = !resized && now.st_blocks < t->file_blocks;
  int changed = !resized && !shrunk &&
                (content_changed(t, dp_probefile_header_verify(
                                        t->fd, t->size_bytes, t->data_offset,
                                        why, sizeof(why))) ||
                 (!t->no_extent_map &&
                  content_changed(t, dp_probefile_extents(t->fd, t->size_bytes,
                                                          why, sizeof(why)))));
  /* Still our inode at our path, but damaged: it was ours a round ago and
   * we hold its lock, so it goes, and opening again lays out a new one
   * (a truncated and re-extended file has no header left to prove it). */
  if (resized || shrunk || changed)
    unlinkat(AT_FDCWD, t->path, 0);
  if (resized)
    return fail(t, -ESTALE,
                "probe file %s changed size under us (%llu bytes, was "
                "%llu): checking it again",
                t->path, (unsigned long long)now.st_size,
                (unsigned long long)t->size_bytes);
  if (changed)
    return fail(t, -ESTALE,
                "probe file %s was re-allocated under us (%s: reads would "
                "return zeros without touching the disk): laying it out "
                "again",
                t->path, why);
  if (shrunk)
    return fail(t, -ESTALE,
                "probe file %s lost allocated blocks under us (%llu bytes "
                "allocated, was %llu: holes punched or the file "
                "re-allocated?): checking it again",
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
