/*
 * statefile.h - a small file of ours (the health state file) kept in a
 * directory reached as safely as the probe file's (safepath.h), read and
 * replaced without following anything another user placed there, and
 * written off the caller's thread with a bounded wait at the end.
 *
 * The directory: reached with dp_safepath_open_dir (no symlink on the way;
 * it and every ancestor owned by root or us and not group/other-writable
 * unless sticky); never created here.
 * Reading: only a regular file owned by the effective uid, not group- or
 * world-writable, of at most max_bytes, opened O_NOFOLLOW | O_NONBLOCK (a
 * FIFO or a device there answers at once, refused with what it is).
 * Writing: a new temporary file NAME.tmp.PID.RANDOM created O_EXCL, mode
 * 0600, in the verified directory fd, written, fsynced and renamed over
 * NAME with renameat on that same fd (a path component swapped meanwhile
 * cannot redirect it), then the directory fsynced. Nothing existing is
 * written through; a temporary file left by a crash is never reused.
 *
 * Errors: 0 or a negative errno, with a one-line cause naming the file or
 * directory written into err (errlen bytes). Nothing here logs.
 */
#ifndef DP_STATEFILE_H
#define DP_STATEFILE_H

#include <stddef.h>
#include <stdint.h>

/* The file NAME in directory DIR into *text (malloc'd, NUL-terminated,
 * the caller's to free; *len bytes without the NUL). -ENOENT no such file
 * (err says so), -EPERM not ours or writable by others, -EINVAL not a
 * regular file, -EFBIG larger than max_bytes, -ELOOP a symlink, others
 * from the system or safepath.h. */
int dp_statefile_read(const char *dir, const char *name, size_t max_bytes,
                      char **text, size_t *len, char *err, size_t errlen);

/* dp_statefile_read in a child process (as the saver writes), after
 * dp_statefile_clean there if `clean`, waiting at most wait_ns for it:
 * -ETIMEDOUT ("DIR did not answer within N s" in err) when the
 * directory's disk does not answer in time (a hung disk, a dead network
 * mount) -- the child is left behind on it, never the caller (collectd's
 * config or init). Else as dp_statefile_read. */
int dp_statefile_read_bounded(const char *dir, const char *name,
                              size_t max_bytes, int clean, uint64_t wait_ns,
                              char **text, size_t *len, char *err,
                              size_t errlen);

/* dp_statefile_check_dir in a child process, bounded as above. */
int dp_statefile_check_dir_bounded(const char *dir, uint64_t wait_ns, char *err,
                                   size_t errlen);

/* Replaces DIR/NAME with text[0..len) as above. -errno. */
int dp_statefile_write(const char *dir, const char *name, const char *text,
                       size_t len, char *err, size_t errlen);

/* Checks DIR as dp_statefile_read and _write will reach it (for config
 * checks and the start). 0 or -errno + err. */
int dp_statefile_check_dir(const char *dir, char *err, size_t errlen);

/* Removes the temporary files of NAME that a crashed writer left: regular
 * files of ours named NAME.tmp.PID.* whose PID no longer runs (or NAME.tmp,
 * the name before). Anything else is left alone. How many were removed,
 * or -errno + err. */
int dp_statefile_clean(const char *dir, const char *name, char *err,
                       size_t errlen);

/*
 * The saver: one thread that writes DIR/NAME with dp_statefile_write, one
 * save at a time, so that the caller (collectd's read thread) never waits
 * on a slow or hung disk. Each write runs in a short-lived child process
 * (fork; it keeps no fd of the daemon's and default signal handling):
 * the kernel waits for a thread blocked in an I/O it does not interrupt (a
 * hung disk's fsync) before the process can exit, so that I/O must not be
 * the daemon's. On a hung disk that child stays behind, alone.
 */
typedef struct dp_statefile_saver dp_statefile_saver_t;

/* Starts the saver's thread. 0, -ENAMETOOLONG, -ENOMEM, -errno of
 * pthread_create. */
int dp_statefile_saver_new(dp_statefile_saver_t **out, const char *dir,
                           const char *name);

/*
 * Hands text (malloc'd; taken over in every case) to the saver. 0: it
 * will be written; -EBUSY: a save is still running or waiting, so this one
 * is skipped (and counted, dp_statefile_saver_skipped) -- unless `replace`
 * is set: then it waits in place of any waiting one, after the running
 * one (the last state at shutdown).
 */
int dp_statefile_saver_submit(dp_statefile_saver_t *s, char *text, size_t len,
                              int replace);

/* 1 and the result of the save that finished since the last call (rc,
 * and its cause in err), else 0. */
int dp_statefile_saver_result(dp_statefile_saver_t *s, int *rc, char *err,
                              size_t errlen);

/* Saves skipped because the one before was still running. */
unsigned long dp_statefile_saver_skipped(dp_statefile_saver_t *s);

/*
 * Waits at most wait_ns (CLOCK_MONOTONIC) for the running and waiting saves
 * to finish, then ends the saver. 0: all done (their last result, if not
 * fetched, in *rc/err; rc may be NULL); -ETIMEDOUT: still writing: the
 * thread is left behind (detached) and frees what it holds when -- if --
 * the write returns. s is gone either way.
 */
int dp_statefile_saver_close(dp_statefile_saver_t *s, uint64_t wait_ns, int *rc,
                             char *err, size_t errlen);

#endif /* DP_STATEFILE_H */
