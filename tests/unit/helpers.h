/*
 * helpers.h - what several unit suites need: fixture trees (a fake sysfs,
 * snapshot files) written under a test's own temporary directory.
 *
 * Every function fails the running cmocka test (with the path and the
 * cause) instead of returning an error; paths are at most PATH_MAX bytes.
 */
#ifndef DP_TEST_HELPERS_H
#define DP_TEST_HELPERS_H

/* Writes ROOT/REL with `content`, creating the missing directories (mode
 * 0755) first; content NULL creates only the directories above REL. */
void fixture_write(const char *root, const char *rel, const char *content);

/* Makes ROOT/REL a symlink to `target` (relative to REL's directory, as
 * sysfs's are), creating the directories above it. */
void fixture_symlink(const char *root, const char *rel, const char *target);

/* Removes the tree at `dir` (rm -rf); a missing one is fine. */
void fixture_remove(const char *dir);

#endif /* DP_TEST_HELPERS_H */
