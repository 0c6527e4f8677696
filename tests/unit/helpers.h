/*
 * helpers.h - what several unit suites need: fixture trees (a fake sysfs,
 * snapshot files) written under a test's own temporary directory.
 *
 * Every function fails the running cmocka test (with the path and the
 * cause) instead of returning an error; paths are at most PATH_MAX bytes.
 */
#ifndef DP_TEST_HELPERS_H
#define DP_TEST_HELPERS_H

#include <stddef.h>

/* Writes ROOT/REL with `content`, creating the missing directories (mode
 * 0755) first; content NULL creates only the directories above REL. */
void fixture_write(const char *root, const char *rel, const char *content);

/* Writes ROOT/REL with len bytes of data (binary: NULs allowed), creating
 * the missing directories first. */
void fixture_write_bytes(const char *root, const char *rel, const void *data,
                         size_t len);

/* Makes ROOT/REL a symlink to `target` (relative to REL's directory, as
 * sysfs's are), creating the directories above it. */
void fixture_symlink(const char *root, const char *rel, const char *target);

/* Removes the tree at `dir` (rm -rf); a missing one is fine. */
void fixture_remove(const char *dir);

#endif /* DP_TEST_HELPERS_H */
