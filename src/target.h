/*
 * target.h - what a probe runs against: a probe file the tool owns, or a
 * block device it only reads; and which block device backs either.
 *
 * Probe file
 *   Path rule: a path ending in ".probe" names the probe file itself (its
 *   name at most NAME_MAX bytes); any other path names a directory
 *   (created, one level, mode 0700, if it is missing) that holds the probe
 *   file DP_PROBE_FILE_NAME. A relative path is taken from the cwd.
 *
 *   Path safety (safepath.h): the directory is reached from "/" one
 *   component at a time without following any symlink, through
 *   directories owned by root or the effective uid that nobody else can
 *   write. Otherwise -ELOOP or -EPERM, with the real path of the offending
 *   component in t->err.
 *   A directory on tmpfs, devtmpfs or ramfs is refused (-EMEDIUMTYPE): a
 *   probe file in RAM measures memory, not a disk.
 *
 *   Layout, resuming an interrupted one, and its write rate: probefile.h.
 *
 *   A file is reused only if it is still ours and intact: a regular file,
 *   not a symlink (O_NOFOLLOW), owned by the effective uid, no group/other
 *   permission bits, one link, the magic and complete flag set, the size
 *   asked for, and fully allocated (st_blocks, SEEK_HOLE, and FIEMAP shows no
 *   unwritten or delayed extents). Ours but incomplete: resumed where that
 *   is provably safe (probefile.h, Resuming), else laid out again, as is a file
 * of ours of the wrong size. So is a file shorter than a header that is
 * provably ours: regular, owned by us, mode 0600, one link, our name, and empty
 * or holding the start of our header (a crash before the first header write, or
 * `: > diskprobe.probe`). Not ours: refused, never touched. A FIFO, socket or
 * device at the path is refused (-EINVAL) without being opened for I/O, and
 * named.
 *
 *   Lock: while open, the file holds an OFD lock (fcntl F_OFD_SETLK) taken
 *   before it is checked, laid out or removed: F_WRLCK on a writable fd; a
 *   read-only fd cannot take F_WRLCK, so it takes F_RDLCK and refuses if
 *   F_OFD_GETLK shows anyone else holding any lock. A file another process
 *   (or another open in this one) holds is refused with -EBUSY and never
 *   touched. A layout done for a read-only target hands the lock over
 *   (downgraded, never released) to the read-only fd.
 *   Reads of holes or unwritten extents return zeros without touching the
 *   media, which is why "fully allocated" is checked and not assumed.
 *
 *   The device under a probe file on btrfs or overlayfs (st_dev an
 *   anonymous number) is found through the mount table
 *   (dp_blockdev_resolve_mount_at): t->dev is the disk, and a btrfs over
 *   several devices names them all in t->dev_members.
 *
 * Block device
 *   Opened O_RDONLY | O_DIRECT and only ever read; nothing here writes to it.
 *
 * Errors: functions return 0 or a negative errno, and on failure leave a
 * one-line human cause (without the target's name, which the caller adds)
 * in t->err. Nothing here logs.
 */
#ifndef DP_TARGET_H
#define DP_TARGET_H

#include "blockdev.h"
#include "probefile.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum { DP_TARGET_FILE = 0, DP_TARGET_BLOCK = 1 } dp_target_kind_t;

typedef struct {
  dp_target_kind_t kind;
  int fd;               /* O_DIRECT; O_RDONLY for a block device */
  char path[PATH_MAX];  /* the probe file or the device node */
  uint64_t size_bytes;  /* whole file or device */
  uint64_t data_offset; /* first byte probes may touch */
  uint64_t data_bytes;  /* bytes probes may touch from data_offset */
  uint32_t align;       /* O_DIRECT offset/length/buffer alignment, bytes */
  int laid_out;         /* 1 if this open created or re-laid the file */
  dev_t st_dev;         /* device id that serialises probes */
  dp_blockdev_t dev;    /* resolved device; dev.name "" if unresolvable */
  /* a multi-device btrfs: all its devices (dev is the first), else "" */
  char dev_members[DP_BLOCKDEV_MEMBERS_LEN];
  char err[256]; /* cause of the last failure */
  int writable;  /* 1: fd is O_RDWR (a probe file opened writable) */
  /* the probe file as it was opened, for dp_target_verify */
  dev_t file_dev;
  ino_t file_ino;
  blkcnt_t file_blocks;
  int no_extent_map; /* 1: no FIEMAP here; verify reads the header only */
  /* laid_out: where an interrupted layout was resumed; 0: from byte 0.
   * After -ECANCELED: where the next open will resume. */
  uint64_t resumed_bytes;
} dp_target_t;

/*
 * Opens (creating and laying out when needed) the probe file for `path`
 * with size `size_bytes` (>= DP_PROBE_FILE_MIN_BYTES; rounded down to a
 * multiple of 1 MiB). `writable`: 1 if a write probe will run on it. On
 * success t->fd is open O_DIRECT, O_RDWR if `writable`, else O_RDONLY (a
 * layout opens the file for writing once, then reopens it read-only), so
 * read-only probes do not keep the filesystem from being remounted
 * read-only; t->writable says which, and t->fd holds the lock above.
 * Errors: -EINVAL empty path, size below 1 MiB, O_DIRECT unsupported or
 * not a regular file; -ENAMETOOLONG; -ELOOP a symlink in the path; -EPERM
 * an unsafe directory; -EEXIST a file that is not ours; -EBUSY held by
 * another process; -EMEDIUMTYPE in RAM; -ENOSPC; -EACCES; -EROFS; -EIO;
 * others from the system.
 */
int dp_target_open_file(const char *path, uint64_t size_bytes, int writable,
                        dp_target_t *t);

/* dp_target_open_file, with the layout (if one is needed) run as lc says;
 * lc may be NULL. */
int dp_target_open_file_layout(const char *path, uint64_t size_bytes,
                               int writable, const dp_layout_conf_t *lc,
                               dp_target_t *t);

/* The same with only a stop flag (may be NULL). */
int dp_target_open_file_stop(const char *path, uint64_t size_bytes,
                             int writable, const atomic_int *stop,
                             dp_target_t *t);

/* Opens a block device read-only with O_DIRECT. -ENOTBLK if path is not
 * a block device. */
int dp_target_open_block(const char *path, dp_target_t *t);

/* Opens `path` as a block device if it is one (read-only whatever
 * `writable` says), else as a probe file with its layout (if one is
 * needed) run as lc says (dp_target_open_file_layout; lc may be NULL). */
int dp_target_open(const char *path, uint64_t file_size_bytes, int writable,
                   const dp_layout_conf_t *lc, dp_target_t *t);

/*
 * Checks, cheaply, that an open probe file is still the one that was
 * opened and still fully allocated: the path still names the same inode,
 * with one link, the size asked for and at least the allocated blocks it
 * had (one fstat and one fstatat).
 * When those hold it reads the header (one O_DIRECT read of data_offset
 * bytes: dp_probefile_header_verify) and the extent map
 * (dp_probefile_extents; where the filesystem has none, t->no_extent_map
 * is set and the header alone stands).
 * A changed file -- deleted or replaced (another inode at the path, or no
 * link left), truncated or extended, holes punched, re-allocated (a
 * zeroed header, unwritten extents: ftruncate + fallocate, a zeroed
 * range) -- returns -ESTALE
 * with the cause in t->err; the caller closes the target and opens it
 * again. A damaged file that is still our inode at our path (we laid it
 * out or checked it, and hold its lock) is unlinked first, so that open
 * lays out a new one; anything else at the path is judged afresh. Reads of
 * holes return zeros without touching the media: a probe file with holes would
 * report fake IOPS. Block devices: 0.
 */
int dp_target_verify(dp_target_t *t);

/* Closes the fd (never unlinks). Safe on a closed target. */
void dp_target_close(dp_target_t *t);

#endif /* DP_TARGET_H */
