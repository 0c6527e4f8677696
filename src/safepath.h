/*
 * safepath.h - reaching a directory without following a symlink, and only
 * through directories nobody else could redirect.
 *
 * The directory is reached from "/" one component at a time without
 * following any symlink (openat2 RESOLVE_NO_SYMLINKS where the kernel has
 * it, else openat O_NOFOLLOW | O_DIRECTORY); a relative path is taken from
 * the cwd, and "", "." and ".." are resolved lexically, which is what the
 * kernel would do without symlinks. The
 * directory and every ancestor must be owned by root or the effective uid
 * and not group/other-writable unless sticky (/tmp, /var/tmp are fine;
 * what is below them must be ours or root's).
 *
 * Errors: 0 / an fd, or a negative errno with a one-line cause (naming the
 * real path of the offending component) written into err (errlen bytes).
 * Paths are at most PATH_MAX bytes. Nothing here logs; a returned fd is the
 * caller's to close.
 */
#ifndef DP_SAFEPATH_H
#define DP_SAFEPATH_H

#include <stddef.h>

/* Opens `dir` as above, creating its last level (mode 0700) when it is
 * missing and `create` is set. Returns an O_PATH directory fd; `real`
 * (reallen bytes) gets the directory's real absolute path. -ELOOP a
 * symlink on the way, -EPERM a directory someone else could redirect,
 * -ENOTDIR, -ENOENT, -ENAMETOOLONG, others from the system. */
int dp_safepath_open_dir(const char *dir, int create, char *real,
                         size_t reallen, char *err, size_t errlen);

/* The same for a directory holding `what` ("the state file"), which the
 * causes in err name (dp_safepath_open_dir: "the probe file"). */
int dp_safepath_open_dir_for(const char *dir, int create, const char *what,
                             char *real, size_t reallen, char *err,
                             size_t errlen);

/* `dir` "/" `name` into out (len bytes); a dir of "/" gives "/name".
 * 0, or -ENAMETOOLONG when the path does not fit (out then holds a
 * truncated string that is not to be used). */
int dp_path_join(char *out, size_t len, const char *dir, const char *name);

#endif /* DP_SAFEPATH_H */
