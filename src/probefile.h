/*
 * probefile.h - the probe file's own format: its header, its layout (paced,
 * checkpointed, resumable), the checks that say an existing file is ours
 * and intact, and the lock that keeps a second prober off it. target.h
 * opens a target with these; the path rules are there.
 *
 * Layout (a header, then data to the end):
 *   header  magic "DISKPROBE-FILE", version (2), header size, size, data
 *           offset, a "complete" flag, laid_bytes (how far the layout
 *           has durably got) and a checksum (FNV-1a) of those fields;
 *           rest of the block random. Its size is DP_PROBE_HEADER_BYTES,
 *           or the O_DIRECT alignment where that is larger (16 KiB-sector
 *           devices); the data offset it records is where probes start,
 *           so files with a 4 KiB header stay readable (and are re-laid
 *           where that offset is not aligned)
 *   data    incompressible random bytes, written with O_DIRECT over the
 *           whole size, then fsync'ed
 * The header is written first with complete = 0 and rewritten with
 * complete = 1 after the data is durable, so an interrupted layout is
 * recognised as ours-but-incomplete.
 *
 * Resuming a layout: every DP_LAYOUT_CHECKPOINT_BYTES (and when a stop
 * interrupts it) the data written so far is fdatasync'ed and only then
 * the header is rewritten with laid_bytes = the end of that data and
 * fdatasync'ed again. So laid_bytes never claims data that is not on the
 * disk: after a shutdown, a crash or a power cut, [0, laid_bytes) is
 * ours and durable, and whatever lies beyond it is simply written again.
 * An incomplete file is resumed at laid_bytes (t->resumed_bytes) only if
 * all of these hold, else it is laid out again from byte 0: regular, ours
 * (owner euid, mode exactly 0600, one link, our name: DP_PROBE_FILE_NAME
 * or *.probe), the magic, version >= 2, the checksum right, the size
 * asked for, the header size and data offset this device needs, laid_bytes
 * aligned and within [data offset, size], st_size within [laid_bytes,
 * size], and [0, laid_bytes) fully allocated. A file whose whole
 * header block reads as zeros but is otherwise provably ours (our name,
 * regular, owned by us, mode 0600, one link, exactly the size asked for:
 * re-allocated under us by ftruncate + fallocate or a zeroed range) is
 * laid out again; with any of those missing it stays "not ours". A version-1
 * file (no laid_bytes) is laid out again. An interrupted layout keeps its file
 * (unless it had not written any data yet); one that failed (no space, an
 * I/O error) removes it, as before.
 *
 * Write rate: a layout writes at most `rate_bytes_per_s` on average
 * (dp_layout_conf_t; LayoutRate), one LAYOUT chunk (1 MiB) at a time:
 * after each chunk it waits until the bytes written since it started are
 * no more than the rate allows, in sleeps of at most DP_LAYOUT_SLEEP_NS
 * so a stop is seen within that (-ECANCELED).
 *
 * Units: bytes and nanoseconds, as the names say. fds are the caller's:
 * nothing here opens or closes one.
 * Errors: 0 (or a count, a class) or a negative errno, with a one-line
 * cause in err (errlen bytes) where a function takes one. Nothing here
 * logs.
 */
#ifndef DP_PROBEFILE_H
#define DP_PROBEFILE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DP_PROBE_FILE_NAME "diskprobe.probe"
#define DP_PROBE_HEADER_BYTES 4096u /* the smallest header; see Layout */
#define DP_PROBE_FILE_MIN_BYTES (1024u * 1024u)
#define DP_LAYOUT_CHECKPOINT_BYTES (64ull << 20) /* progress made durable */
#define DP_LAYOUT_SLEEP_NS (20 * 1000000ull)     /* longest pacing sleep */

/* How a layout runs. Zeroed: no stop, no rate bound, the real clock. */
typedef struct {
  /* nonzero (a shutdown): the layout stops within one chunk or one
   * pacing sleep, -ECANCELED; the file is kept for resuming (see
   * Resuming) unless no data had been written. NULL: never. */
  const atomic_int *stop;
  uint64_t rate_bytes_per_s; /* average write rate; 0: unbounded */
  /* If non-NULL, bumped after each chunk written and each pacing sleep: a
   * sign of life for whoever waits for the layout (the prober's daemon). */
  atomic_uint_fast64_t *progress;
  /* Test hooks: the clock pacing reads and the sleep it takes (which must
   * advance that clock); NULL: dp_now_ns and nanosleep. */
  uint64_t (*now_ns)(void *arg);
  void (*sleep_ns)(uint64_t ns, void *arg);
  void *clock_arg;
} dp_layout_conf_t;

/* Header bytes of a new probe file: DP_PROBE_HEADER_BYTES, or the O_DIRECT
 * alignment where that is larger (a 16 KiB-sector device). */
uint32_t dp_probefile_header_bytes(uint32_t align);

/* The extent map (FIEMAP) of [0, size) of fd: every byte in a written
 * extent -- no hole, no unwritten (fallocated, zeroed), delayed or unknown
 * extent, where reads would return zeros without touching the media. 0;
 * -ENODATA with what and where in why; -EOPNOTSUPP where the filesystem
 * has no FIEMAP (tmpfs, NFS, some FUSE); -ENOMEM. One ioctl per 64
 * extents: cheap enough to run every round. */
int dp_probefile_extents(int fd, uint64_t size, char *why, size_t whylen);

/* The header of the open probe file fd still says what it said when the
 * file was judged ours and intact: the magic, complete, `size` bytes, data
 * at `data_offset` (the header's length, read at once), the checksum. 0;
 * -ENODATA with what is wrong in why (zeros, overwritten, cut short, no
 * longer this file); -EINVAL a data_offset no header has; -errno a read
 * error. One O_DIRECT read of data_offset bytes. */
int dp_probefile_header_verify(int fd, uint64_t size, uint64_t data_offset,
                               char *why, size_t whylen);

/* Every byte of [0, size) of fd backed by written blocks: no holes, no
 * unwritten or delayed-allocation extents (st_blocks, SEEK_HOLE, FIEMAP
 * where the filesystem has it). 0; -ENODATA with where in why; -errno. */
int dp_probefile_allocated(int fd, uint64_t size, char *why, size_t whylen);

/*
 * Lays out the file on fd (writable, O_DIRECT, locked): incompressible
 * data over [from, size) after a header of `hdr` bytes (from 0: a new
 * file, the header first), at most lc->rate_bytes_per_s, progress made
 * durable every DP_LAYOUT_CHECKPOINT_BYTES; then made durable and marked
 * complete. lc may not be NULL (zeroed: no stop, no bound). A stop:
 * -ECANCELED after a last checkpoint, *resume_bytes where the next open
 * resumes; -ENOSPC, -ENOMEM, -EIO, -errno.
 */
int dp_probefile_lay_out(int fd, uint64_t size, uint32_t hdr, uint64_t from,
                         const dp_layout_conf_t *lc, uint64_t *resume_bytes,
                         char *err, size_t errlen);

/* Refuses a non-regular file at the probe path (`path`, for the message):
 * -ELOOP for a symlink, else -EINVAL. */
int dp_probefile_not_regular(mode_t m, const char *path, char *err,
                             size_t errlen);

/*
 * The lock that keeps a second process (another collectd, `collectd -T`,
 * `diskprobe run`) off a probe file: an OFD lock, owned by this open file
 * description and released when it is closed. A writable fd takes F_WRLCK.
 * F_WRLCK needs a writable fd, so a read-only one takes F_RDLCK and then
 * asks (F_OFD_GETLK) whether anyone else holds any lock on the file: as
 * exclusive as F_WRLCK, without opening the file for writing. 0, -EBUSY
 * (held elsewhere; path names it in err), -errno.
 */
int dp_probefile_lock(int fd, int writable_fd, const char *path, char *err,
                      size_t errlen);

/* What an existing file at the probe path is (dp_probefile_check). */
enum {
  DP_PROBEFILE_RELAY = 0,  /* ours, but to be laid out again */
  DP_PROBEFILE_INTACT = 1, /* ours and intact: *data_offset set */
  DP_PROBEFILE_RESUME = 2, /* ours, an interrupted layout: resume at *resume */
};

/* Judges the open file fd (named `file` in its directory, `path` in
 * full; O_DIRECT with alignment `align`) against a probe file of `size`
 * bytes: one of the above, or negative to refuse it untouched (-EEXIST
 * not ours, -EPERM group/other access, -EINVAL not a regular file,
 * -errno). */
int dp_probefile_check(int fd, const char *path, const char *file,
                       uint64_t size, uint32_t align, uint64_t *data_offset,
                       uint64_t *resume, char *err, size_t errlen);

#endif /* DP_PROBEFILE_H */
