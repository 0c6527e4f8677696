/* probefile.c - the probe file's header, layout and checks; see
 * probefile.h. */
#define _GNU_SOURCE
#include "probefile.h"
#include "clock.h"
#include "rng.h"
#include "vocab.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

uint32_t dp_probefile_header_bytes(uint32_t align) {
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

int dp_probefile_extents(int fd, uint64_t size, char *why, size_t whylen) {
  enum { N = 64 };
  size_t sz = sizeof(struct fiemap) + N * sizeof(struct fiemap_extent);
  struct fiemap *fm = calloc(1, sz);
  if (fm == NULL)
    return -ENOMEM;
  uint64_t start = 0; /* every byte below it is mapped and written */
  int rc = 0;
  while (start < size && rc == 0) {
    memset(fm, 0, sz);
    fm->fm_start = start;
    fm->fm_length = size - start;
    fm->fm_flags = FIEMAP_FLAG_SYNC;
    fm->fm_extent_count = N;
    if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
      rc = -EOPNOTSUPP; /* tmpfs, NFS, some FUSE: no extent map to read */
      break;
    }
    if (fm->fm_mapped_extents == 0) {
      snprintf(why, whylen, "hole at offset %llu", (unsigned long long)start);
      rc = -ENODATA;
    }
    for (unsigned i = 0; i < fm->fm_mapped_extents && rc == 0; i++) {
      const struct fiemap_extent *x = &fm->fm_extents[i];
      if (x->fe_logical > start) {
        snprintf(why, whylen, "hole at offset %llu", (unsigned long long)start);
        rc = -ENODATA;
      } else if (x->fe_flags &
                 (FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_DELALLOC |
                  FIEMAP_EXTENT_UNKNOWN)) {
        snprintf(why, whylen, "unwritten extent at offset %llu",
                 (unsigned long long)(x->fe_logical > start ? x->fe_logical
                                                            : start));
        rc = -ENODATA;
      } else if (x->fe_logical + x->fe_length > start) {
        start = x->fe_logical + x->fe_length;
      }
      if (rc == 0 && (x->fe_flags & FIEMAP_EXTENT_LAST) && start < size) {
        snprintf(why, whylen, "hole at offset %llu", (unsigned long long)start);
        rc = -ENODATA;
      }
    }
  }
  free(fm);
  return rc;
}

int dp_probefile_allocated(int fd, uint64_t size, char *why, size_t whylen) {
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
  int rc = dp_probefile_extents(fd, size, why, whylen);
  /* no FIEMAP here (e.g. tmpfs): st_blocks and SEEK_HOLE stand */
  return rc == -EOPNOTSUPP ? 0 : rc;
}

/* 1 if all `n` bytes at p are zero. */
static int all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0)
      return 0;
  return 1;
}

int dp_probefile_header_verify(int fd, uint64_t size, uint64_t data_offset,
                               char *why, size_t whylen) {
  if (data_offset < sizeof(probe_header_t) || data_offset > (1u << 20))
    return -EINVAL;
  size_t len = (size_t)data_offset;
  void *buf = NULL;
  if (posix_memalign(&buf, len, len) != 0)
    return -ENOMEM;
  ssize_t n = read_head(fd, buf, len);
  probe_header_t h;
  memset(&h, 0, sizeof(h));
  if (n > 0)
    memcpy(&h, buf, (size_t)n < sizeof(h) ? (size_t)n : sizeof(h));
  int zero = n > 0 && all_zero(buf, (size_t)n);
  free(buf);
  if (n < 0)
    return (int)n;
  int rc = -ENODATA;
  if ((size_t)n < len)
    snprintf(why, whylen, "header cut short (%zd of %zu bytes)", n, len);
  else if (zero)
    snprintf(why, whylen, "header reads as zeros");
  else if (memcmp(h.magic, MAGIC, sizeof(MAGIC)) != 0)
    snprintf(why, whylen, "header overwritten");
  else if (!h.complete || h.size_bytes != size ||
           h.data_offset != data_offset ||
           (h.version >= 2 && h.sum != header_sum(&h)))
    snprintf(why, whylen, "header no longer describes this file");
  else
    rc = 0;
  return rc;
}

/* ---- the layout: paced, checkpointed, resumable -------------------------- */

static uint64_t layout_now(const dp_layout_conf_t *lc) {
  return lc->now_ns ? lc->now_ns(lc->clock_arg) : dp_now_ns();
}

static void beat(const dp_layout_conf_t *lc) {
  if (lc->progress != NULL)
    atomic_fetch_add_explicit(lc->progress, 1, memory_order_relaxed);
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
    beat(lc);
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

int dp_probefile_lay_out(int fd, uint64_t size, uint32_t hdr, uint64_t from,
                         const dp_layout_conf_t *lc, uint64_t *resume_bytes,
                         char *err, size_t errlen) {
  uint64_t rng = dp_now_ns() | 1;
  int rc;
  if (from < hdr) {
    from = hdr;
    rc = write_header(fd, size, hdr, 0, hdr, &rng);
    if (rc < 0)
      return dp_errf(err, errlen, rc, "cannot write probe file header: %s",
                     strerror(-rc));
  }
  void *buf = NULL;
  if (posix_memalign(&buf, hdr, LAYOUT_CHUNK) != 0)
    return dp_errf(err, errlen, -ENOMEM, "out of memory");
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
        return dp_errf(err, errlen, -ENOSPC,
                       "no space left while laying out the probe file "
                       "(%llu of %llu bytes written)",
                       (unsigned long long)off, (unsigned long long)size);
      return dp_errf(err, errlen, -e,
                     "write failed while laying out the probe file: %s",
                     strerror(e));
    }
    off += (uint64_t)n;
    beat(lc);
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
    *resume_bytes = recorded; /* how far the next open resumes */
    return dp_errf(err, errlen, -ECANCELED,
                   "laying out the probe file was interrupted at %llu of %llu "
                   "bytes (shutting down); the next start resumes there",
                   (unsigned long long)recorded, (unsigned long long)size);
  }
  if (rc < 0)
    return dp_errf(err, errlen, rc,
                   "cannot record the probe file layout's progress: %s",
                   strerror(-rc));
  if (fsync(fd) < 0)
    return dp_errf(err, errlen, -errno, "fsync of the probe file failed: %s",
                   strerror(errno));
  rc = write_header(fd, size, hdr, 1, size, &rng);
  if (rc == 0 && fsync(fd) < 0)
    rc = -errno;
  if (rc < 0)
    return dp_errf(err, errlen, rc, "cannot complete probe file header: %s",
                   strerror(-rc));
  return 0;
}

int dp_probefile_not_regular(mode_t m, const char *path, char *err,
                             size_t errlen) {
  if (S_ISLNK(m))
    return dp_errf(err, errlen, -ELOOP,
                   "probe file path is a symlink: not following (%s)", path);
  return dp_errf(err, errlen, -EINVAL,
                 "probe file path exists and is %s, not a regular file: not "
                 "touching it",
                 dp_file_kind(m));
}

int dp_probefile_lock(int fd, int writable_fd, const char *path, char *err,
                      size_t errlen) {
  struct flock l;
  memset(&l, 0, sizeof(l));
  l.l_type = writable_fd ? F_WRLCK : F_RDLCK;
  l.l_whence = SEEK_SET;
  int busy = 0;
  if (fcntl(fd, F_OFD_SETLK, &l) < 0) {
    if (errno != EAGAIN && errno != EACCES)
      return dp_errf(err, errlen, -errno, "cannot lock the probe file %s: %s",
                     path, strerror(errno));
    busy = 1;
  }
  if (!busy && !writable_fd) {
    memset(&l, 0, sizeof(l));
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &l) < 0)
      return dp_errf(err, errlen, -errno, "cannot lock the probe file %s: %s",
                     path, strerror(errno));
    busy = l.l_type != F_UNLCK;
  }
  if (busy)
    return dp_errf(
        err, errlen, -EBUSY,
        "probe file %s is held by another process (another collectd, "
        "or `collectd -T`?): not touching it",
        path);
  return 0;
}

/* A probe file's name: DP_PROBE_FILE_NAME or *.probe. */
static int our_name(const char *file) {
  size_t fl = strlen(file);
  return strcmp(file, DP_PROBE_FILE_NAME) == 0 ||
         (fl > 6 && strcmp(file + fl - 6, ".probe") == 0);
}

/* A file too short to hold a header that is provably ours: the one we
 * create (regular, owned by us, mode 0600, one link, our name), empty or
 * holding the start of our header. A crash between create and the first
 * header write, or `: > diskprobe.probe`, leaves one. */
static int ours_but_short(const struct stat *st, const char *file,
                          const char *head, ssize_t n, size_t hdr) {
  size_t cmp = (size_t)n < sizeof(MAGIC) ? (size_t)n : sizeof(MAGIC);
  return our_name(file) && (st->st_mode & 07777) == 0600 &&
         (uint64_t)st->st_size < hdr && memcmp(head, MAGIC, cmp) == 0;
}

/* A file whose header reads as zeros (`wiped`: the whole header block)
 * but is otherwise provably ours: our name, regular, owned by us, mode
 * 0600, one link (checked before), exactly the size asked for. Re-allocated
 * under us (ftruncate + fallocate, a zeroed range) while we were not
 * running: laid out again rather than refused forever. */
static int wiped_ours(const struct stat *st, const char *file, int wiped,
                      uint64_t size) {
  return wiped && our_name(file) && (st->st_mode & 07777) == 0600 &&
         (uint64_t)st->st_size == size;
}

/* An incomplete layout of ours that can go on where it stopped (probefile.h,
 * Resuming): the byte to resume at, or 0 to lay out from the start. */
static uint64_t resume_point(uint32_t align, int fd, const struct stat *st,
                             const char *file, const probe_header_t *h,
                             uint64_t size) {
  uint64_t hdr = dp_probefile_header_bytes(align), laid = h->laid_bytes;
  if (h->complete || h->version < 2 || h->sum != header_sum(h) ||
      !our_name(file) || (st->st_mode & 07777) != 0600 ||
      h->size_bytes != size || h->header_bytes != hdr ||
      h->data_offset != hdr || laid < hdr || laid > size || laid % hdr ||
      (uint64_t)st->st_size < laid || (uint64_t)st->st_size > size)
    return 0;
  char why[128];
  return dp_probefile_allocated(fd, laid, why, sizeof(why)) == 0 ? laid : 0;
}

int dp_probefile_check(int fd, const char *path, const char *file,
                       uint64_t size, uint32_t align, uint64_t *data_offset,
                       uint64_t *resume, char *err, size_t errlen) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return dp_errf(err, errlen, -errno, "cannot stat probe file");
  if (!S_ISREG(st.st_mode))
    return dp_probefile_not_regular(st.st_mode, path, err, errlen);
  if (st.st_uid != geteuid())
    return dp_errf(
        err, errlen, -EEXIST,
        "existing file is owned by uid %u, not by us: not touching it",
        (unsigned)st.st_uid);
  if (st.st_nlink != 1)
    return dp_errf(err, errlen, -EEXIST,
                   "existing file has %lu hard links: not touching it",
                   (unsigned long)st.st_nlink);
  size_t len = dp_probefile_header_bytes(align);
  void *buf = NULL;
  if (posix_memalign(&buf, len, len) != 0)
    return dp_errf(err, errlen, -ENOMEM, "out of memory");
  ssize_t n = read_head(fd, buf, len);
  probe_header_t h;
  memset(&h, 0, sizeof(h));
  if (n > 0)
    memcpy(&h, buf, (size_t)n < sizeof(h) ? (size_t)n : sizeof(h));
  int short_ours = n >= 0 && ours_but_short(&st, file, buf, n, len);
  int wiped = n == (ssize_t)len && all_zero(buf, len);
  free(buf);
  if (n < 0) /* the disk failed, not the ownership test */
    return dp_errf(err, errlen, (int)n, "cannot read the probe file header: %s",
                   strerror((int)-n));
  if (short_ours || (n >= 0 && wiped_ours(&st, file, wiped, size)))
    return DP_PROBEFILE_RELAY;
  if ((size_t)n < sizeof(h) || memcmp(h.magic, MAGIC, sizeof(MAGIC)) != 0)
    return dp_errf(
        err, errlen, -EEXIST,
        "existing file is not a diskprobe probe file: not touching it");
  if (st.st_mode & 077)
    return dp_errf(err, errlen, -EPERM,
                   "probe file mode %03o allows group/other access",
                   (unsigned)(st.st_mode & 0777));
  if (!h.complete)
    return (*resume = resume_point(align, fd, &st, file, &h, size)) > 0
               ? DP_PROBEFILE_RESUME
               : DP_PROBEFILE_RELAY;
  if (h.size_bytes != size || (uint64_t)st.st_size != size)
    return DP_PROBEFILE_RELAY;
  /* Files of other devices (4 KiB header on a 16 KiB-sector disk): the
   * data must start on the alignment. */
  if (h.data_offset < sizeof(h) || h.data_offset % align != 0 ||
      h.data_offset >= size || h.header_bytes != h.data_offset)
    return DP_PROBEFILE_RELAY;
  char why[128] = "";
  int rc = dp_probefile_allocated(fd, size, why, sizeof(why));
  if (rc == -ENODATA)
    return DP_PROBEFILE_RELAY;
  if (rc < 0)
    return dp_errf(err, errlen, rc, "cannot check probe file allocation: %s",
                   strerror(-rc));
  *data_offset = h.data_offset;
  return DP_PROBEFILE_INTACT;
}
