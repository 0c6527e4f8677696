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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "DISKPROBE-FILE"
#define LAYOUT_CHUNK (1024u * 1024u)

typedef struct {
  char magic[16];
  uint32_t version;
  uint32_t header_bytes;
  uint64_t size_bytes;
  uint64_t data_offset;
  uint64_t created_unix;
  uint32_t complete;
} probe_header_t;

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

/* Reads a small sysfs attribute as an unsigned long; -1 if absent. */
static long long read_attr(const char *dir, const char *name) {
  char p[PATH_MAX];
  snprintf(p, sizeof(p), "%s/%s", dir, name);
  FILE *f = fopen(p, "re");
  if (f == NULL)
    return -1;
  long long v = -1;
  if (fscanf(f, "%lld", &v) != 1)
    v = -1;
  fclose(f);
  return v;
}

static int read_devnum(const char *dir, unsigned *maj, unsigned *min) {
  char p[PATH_MAX];
  snprintf(p, sizeof(p), "%s/dev", dir);
  FILE *f = fopen(p, "re");
  if (f == NULL)
    return -errno;
  int ok = fscanf(f, "%u:%u", maj, min) == 2;
  fclose(f);
  return ok ? 0 : -EINVAL;
}

/* The first (by name) device a stacked device (device-mapper, MD) is built
 * on, from <dir>/slaves/: 0 and its number, or -ENOENT for a device that
 * is not stacked. */
static int first_slave(const char *dir, unsigned *maj, unsigned *min) {
  char p[PATH_MAX], best[256] = "";
  snprintf(p, sizeof(p), "%s/slaves", dir);
  DIR *d = opendir(p);
  if (d == NULL)
    return -ENOENT;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (de->d_name[0] != '.' &&
        (best[0] == '\0' || strcmp(de->d_name, best) < 0))
      snprintf(best, sizeof(best), "%s", de->d_name);
  closedir(d);
  if (best[0] == '\0')
    return -ENOENT;
  char slave[PATH_MAX];
  snprintf(slave, sizeof(slave), "%s/slaves/%s", dir, best);
  return read_devnum(slave, maj, min);
}

static int resolve_depth(const char *sysroot, unsigned major, unsigned minor,
                         dp_device_t *out, int depth);

int dp_device_resolve_at(const char *sysroot, unsigned major, unsigned minor,
                         dp_device_t *out) {
  return resolve_depth(sysroot, major, minor, out, 0);
}

static int resolve_depth(const char *sysroot, unsigned major, unsigned minor,
                         dp_device_t *out, int depth) {
  memset(out, 0, sizeof(*out));
  out->rotational = -1;
  char link[PATH_MAX], real[PATH_MAX];
  snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sysroot, major, minor);
  if (realpath(link, real) == NULL)
    return errno == ENOENT ? -ENODEV : -errno;
  out->major = major;
  out->minor = minor;
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof(tmp), "%s", real);
  snprintf(out->name, sizeof(out->name), "%s", basename(tmp));

  char diskdir[PATH_MAX];
  out->partition = read_attr(real, "partition") > 0;
  if (out->partition) {
    snprintf(tmp, sizeof(tmp), "%s", real);
    snprintf(diskdir, sizeof(diskdir), "%s", dirname(tmp));
  } else {
    snprintf(diskdir, sizeof(diskdir), "%s", real);
  }
  snprintf(tmp, sizeof(tmp), "%s", diskdir);
  snprintf(out->disk, sizeof(out->disk), "%s", basename(tmp));
  if (read_devnum(diskdir, &out->disk_major, &out->disk_minor) < 0) {
    out->disk_major = major;
    out->disk_minor = minor;
  }
  /* A device-mapper/LVM/MD device: the physical disk is below it. */
  unsigned smaj, smin;
  dp_device_t below;
  if (depth < 8 && first_slave(diskdir, &smaj, &smin) == 0 &&
      resolve_depth(sysroot, smaj, smin, &below, depth + 1) == 0) {
    snprintf(out->disk, sizeof(out->disk), "%s", below.disk);
    out->disk_major = below.disk_major;
    out->disk_minor = below.disk_minor;
    out->stacked = 1;
  }
  char q[PATH_MAX];
  snprintf(q, sizeof(q), "%s/queue", diskdir);
  long long lbs = read_attr(q, "logical_block_size");
  out->logical_block_size = lbs > 0 ? (uint32_t)lbs : 0;
  long long rot = read_attr(q, "rotational");
  out->rotational = rot < 0 ? -1 : rot > 0;
  return 0;
}

static void resolve_dev(dp_target_t *t, dev_t d) {
  t->st_dev = d;
  if (dp_device_resolve_at("/sys", major(d), minor(d), &t->dev) < 0) {
    memset(&t->dev, 0, sizeof(t->dev));
    t->dev.rotational = -1;
    t->dev.major = major(d);
    t->dev.minor = minor(d);
  }
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
static uint32_t dio_align(int fd, const dp_device_t *dev) {
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

/* Splits a configured path into the directory and the probe file name. */
static int split_path(const char *path, char *dir, size_t dirlen, char *file,
                      size_t filelen, int *is_dir_target) {
  size_t n = strlen(path);
  if (n == 0 || n >= PATH_MAX - sizeof(DP_PROBE_FILE_NAME) - 2)
    return -ENAMETOOLONG;
  const char *ext = ".probe";
  size_t el = strlen(ext);
  *is_dir_target = !(n > el && strcmp(path + n - el, ext) == 0);
  if (*is_dir_target) {
    snprintf(dir, dirlen, "%s", path);
    snprintf(file, filelen, "%s", DP_PROBE_FILE_NAME);
  } else {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", path);
    snprintf(dir, dirlen, "%s", dirname(tmp));
    snprintf(tmp, sizeof(tmp), "%s", path);
    snprintf(file, filelen, "%s", basename(tmp));
  }
  return 0;
}

static int read_header(int fd, probe_header_t *h) {
  void *buf = NULL;
  if (posix_memalign(&buf, 4096, DP_PROBE_HEADER_BYTES) != 0)
    return -ENOMEM;
  ssize_t n = pread(fd, buf, DP_PROBE_HEADER_BYTES, 0);
  int rc = 0;
  if (n < 0)
    rc = -errno;
  else if ((size_t)n < sizeof(*h))
    rc = -ENODATA;
  else
    memcpy(h, buf, sizeof(*h));
  free(buf);
  return rc;
}

static int write_header(int fd, uint64_t size, int complete, uint64_t *rng) {
  void *buf = NULL;
  if (posix_memalign(&buf, 4096, DP_PROBE_HEADER_BYTES) != 0)
    return -ENOMEM;
  dp_fill_random(buf, DP_PROBE_HEADER_BYTES, rng);
  probe_header_t h;
  memset(&h, 0, sizeof(h));
  memcpy(h.magic, MAGIC, sizeof(MAGIC));
  h.version = 1;
  h.header_bytes = DP_PROBE_HEADER_BYTES;
  h.size_bytes = size;
  h.data_offset = DP_PROBE_HEADER_BYTES;
  h.created_unix = (uint64_t)time(NULL);
  h.complete = (uint32_t)complete;
  memcpy(buf, &h, sizeof(h));
  ssize_t n = pwrite(fd, buf, DP_PROBE_HEADER_BYTES, 0);
  int rc = n == (ssize_t)DP_PROBE_HEADER_BYTES ? 0 : (n < 0 ? -errno : -EIO);
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

/* Writes incompressible data over the whole file, then makes it durable. */
static int lay_out(dp_target_t *t, int fd, uint64_t size) {
  uint64_t rng = dp_now_ns() | 1;
  int rc = write_header(fd, size, 0, &rng);
  if (rc < 0)
    return fail(t, rc, "cannot write probe file header: %s", strerror(-rc));
  void *buf = NULL;
  if (posix_memalign(&buf, 4096, LAYOUT_CHUNK) != 0)
    return fail(t, -ENOMEM, "out of memory");
  for (uint64_t off = DP_PROBE_HEADER_BYTES; off < size;) {
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
  }
  free(buf);
  if (fsync(fd) < 0)
    return fail(t, -errno, "fsync of the probe file failed: %s",
                strerror(errno));
  rc = write_header(fd, size, 1, &rng);
  if (rc == 0 && fsync(fd) < 0)
    rc = -errno;
  if (rc < 0)
    return fail(t, rc, "cannot complete probe file header: %s", strerror(-rc));
  return 0;
}

/* Opens the directory that holds the probe file, creating one level. */
static int open_dir(dp_target_t *t, const char *dir, int create) {
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 && errno == ENOENT && create) {
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
      return fail(t, -errno, "cannot create directory %s: %s", dir,
                  strerror(errno));
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (dfd < 0) {
    int e = errno;
    if (e == ENOTDIR)
      return fail(t, -ENOTDIR, "%s is not a directory", dir);
    return fail(t, -e, "cannot open directory %s: %s", dir, strerror(e));
  }
  struct stat st;
  if (fstat(dfd, &st) < 0) {
    close(dfd);
    return fail(t, -errno, "cannot stat %s", dir);
  }
  /* Anyone could swap files in a world-writable, non-sticky directory. */
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
    close(dfd);
    return fail(t, -EPERM,
                "directory %s is world-writable without the sticky bit", dir);
  }
  return dfd;
}

/* Checks an existing file: 1 ours and intact, 0 ours but to be laid out
 * again, negative: refuse (t->err set). */
static int check_existing(dp_target_t *t, int fd, uint64_t size) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return fail(t, -errno, "cannot stat probe file");
  if (!S_ISREG(st.st_mode))
    return fail(t, -EINVAL, "probe file path exists and is not a regular file");
  if (st.st_uid != geteuid())
    return fail(t, -EEXIST,
                "existing file is owned by uid %u, not by us: not touching it",
                (unsigned)st.st_uid);
  if (st.st_nlink != 1)
    return fail(t, -EEXIST, "existing file has %lu hard links: not touching it",
                (unsigned long)st.st_nlink);
  probe_header_t h;
  int rc = read_header(fd, &h);
  if (rc < 0 && rc != -ENODATA) /* the disk failed, not the ownership test */
    return fail(t, rc, "cannot read the probe file header: %s", strerror(-rc));
  if (rc < 0 || memcmp(h.magic, MAGIC, sizeof(MAGIC)) != 0)
    return fail(t, -EEXIST,
                "existing file is not a diskprobe probe file: not touching it");
  if (st.st_mode & 077)
    return fail(t, -EPERM, "probe file mode %03o allows group/other access",
                (unsigned)(st.st_mode & 0777));
  if (!h.complete || h.size_bytes != size || (uint64_t)st.st_size != size)
    return 0;
  char why[128] = "";
  rc = check_allocated(fd, size, why, sizeof(why));
  if (rc == -ENODATA)
    return 0;
  if (rc < 0)
    return fail(t, rc, "cannot check probe file allocation: %s", strerror(-rc));
  return 1;
}

int dp_target_open_file(const char *path, uint64_t size_bytes, dp_target_t *t) {
  target_init(t);
  t->kind = DP_TARGET_FILE;
  size_bytes -= size_bytes % DP_PROBE_FILE_MIN_BYTES;
  if (size_bytes < DP_PROBE_FILE_MIN_BYTES)
    return fail(t, -EINVAL, "probe file size must be at least 1 MiB");

  char dir[PATH_MAX], file[NAME_MAX + 1];
  int is_dir;
  if (split_path(path, dir, sizeof(dir), file, sizeof(file), &is_dir) < 0)
    return fail(t, -ENAMETOOLONG, "path too long");
  snprintf(t->path, sizeof(t->path), "%s/%s", dir, file);

  int dfd = open_dir(t, dir, is_dir);
  if (dfd < 0)
    return dfd;

  for (int attempt = 0; attempt < 2; attempt++) {
    int flags = O_RDWR | O_DIRECT | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(dfd, file, flags);
    int created = 0;
    if (fd < 0 && errno == ENOENT) {
      fd = openat(dfd, file, flags | O_CREAT | O_EXCL, 0600);
      created = fd >= 0;
    }
    if (fd < 0) {
      int e = errno;
      close(dfd);
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
    int ok = 0;
    if (!created) {
      ok = check_existing(t, fd, size_bytes);
      if (ok < 0) {
        close(fd);
        close(dfd);
        return ok;
      }
    }
    if (ok == 0 && !created) {
      /* Ours, but incomplete or resized: start over with a fresh file. */
      close(fd);
      if (unlinkat(dfd, file, 0) < 0) {
        int e = errno;
        close(dfd);
        return fail(t, -e, "cannot replace stale probe file: %s", strerror(e));
      }
      continue;
    }
    if (created) {
      struct statvfs vfs;
      if (fstatvfs(fd, &vfs) == 0 &&
          (uint64_t)vfs.f_bavail * vfs.f_frsize < size_bytes) {
        close(fd);
        unlinkat(dfd, file, 0);
        close(dfd);
        return fail(t, -ENOSPC,
                    "no space for a %llu-byte probe file (%llu bytes free)",
                    (unsigned long long)size_bytes,
                    (unsigned long long)vfs.f_bavail * vfs.f_frsize);
      }
      int rc = lay_out(t, fd, size_bytes);
      char why[128] = "";
      if (rc == 0) {
        rc = check_allocated(fd, size_bytes, why, sizeof(why));
        if (rc < 0)
          fail(t, rc == -ENODATA ? -EIO : rc,
               "probe file not fully allocated after layout: %s", why);
        if (rc == -ENODATA)
          rc = -EIO;
      }
      if (rc < 0) {
        close(fd);
        unlinkat(dfd, file, 0);
        close(dfd);
        return rc;
      }
      t->laid_out = 1;
    }
    close(dfd);
    struct stat st;
    fstat(fd, &st);
    t->fd = fd;
    t->size_bytes = size_bytes;
    t->data_offset = DP_PROBE_HEADER_BYTES;
    t->data_bytes = size_bytes - DP_PROBE_HEADER_BYTES;
    resolve_dev(t, st.st_dev);
    t->align = dio_align(fd, &t->dev);
    return 0;
  }
  close(dfd);
  return fail(t, -EAGAIN, "probe file keeps changing under us");
}

int dp_target_open(const char *path, uint64_t file_size_bytes, dp_target_t *t) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISBLK(st.st_mode))
    return dp_target_open_block(path, t);
  return dp_target_open_file(path, file_size_bytes, t);
}
