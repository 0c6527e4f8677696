/*
 * test_target.c - the probe file on a real filesystem (layout fully
 * allocated and incompressible, reuse, re-layout of stale files, refusal of
 * symlinks, foreign files and unsafe directories), device resolution from a
 * fixture sysfs tree and from the live /sys, and the two error paths a real
 * filesystem here cannot produce on demand (O_DIRECT refused, injected with
 * --wrap=openat; no space, on a small tmpfs when we may mount one).
 *
 * Runs in $TMPDIR (default /var/tmp): it must support O_DIRECT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "target.h"

#define MiB (1024u * 1024u)

/* ---- openat wrapper: O_DIRECT refused on demand ------------------------- */
int __real_openat(int dfd, const char *path, int flags, ...);
static int refuse_odirect;
int __wrap_openat(int dfd, const char *path, int flags, ...) {
  mode_t mode = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (refuse_odirect && (flags & O_DIRECT)) {
    errno = EINVAL; /* what tmpfs before 6.6 and some FUSE answer */
    return -1;
  }
  return __real_openat(dfd, path, flags, mode);
}

/* ---- fixtures ----------------------------------------------------------- */
typedef struct {
  char dir[256];
  char probe[512];
} fx_t;

static int setup(void **state) {
  fx_t *f = calloc(1, sizeof(*f));
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
  snprintf(f->dir, sizeof(f->dir), "%s/dp-target-XXXXXX", tmp);
  if (mkdtemp(f->dir) == NULL)
    return -1;
  snprintf(f->probe, sizeof(f->probe), "%s/%s", f->dir, DP_PROBE_FILE_NAME);
  refuse_odirect = 0;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx_t *f = *state;
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
  if (system(cmd) != 0)
    return -1;
  free(f);
  return 0;
}

static void write_file(const char *p, const char *content) {
  FILE *fp = fopen(p, "w");
  assert_non_null(fp);
  fputs(content, fp);
  fclose(fp);
}

static char *read_file(const char *p, size_t *len) {
  FILE *fp = fopen(p, "r");
  assert_non_null(fp);
  static char buf[4096];
  *len = fread(buf, 1, sizeof(buf), fp);
  fclose(fp);
  return buf;
}

/* ---- probe file ---------------------------------------------------------- */

static void test_layout_fully_allocated_random(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  int rc = dp_target_open_file(f->dir, 8 * MiB, &t);
  if (rc == -EINVAL && strstr(t.err, "O_DIRECT"))
    skip(); /* TMPDIR on a filesystem without O_DIRECT */
  if (rc != 0)
    fail_msg("open: %s", t.err);
  assert_int_equal(t.laid_out, 1);
  assert_int_equal(t.kind, DP_TARGET_FILE);
  assert_string_equal(t.path, f->probe);
  assert_int_equal(t.size_bytes, 8 * MiB);
  assert_int_equal(t.data_offset, DP_PROBE_HEADER_BYTES);
  assert_true(t.align >= 512 && (t.align & (t.align - 1)) == 0);

  struct stat st;
  assert_int_equal(lstat(f->probe, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(st.st_size, 8 * MiB);
  assert_true((uint64_t)st.st_blocks * 512 >= 8 * MiB);
  assert_int_equal(lseek(t.fd, 0, SEEK_HOLE), 8 * MiB);

  /* Incompressible: every 4 KiB block of data differs and has no long run
   * of one byte value (zeros would mean an unwritten extent). */
  int fd = open(f->probe, O_RDONLY);
  static unsigned char a[4096], b[4096];
  for (off_t off = 4096; off < 8 * MiB; off += 1 * MiB) {
    assert_int_equal(pread(fd, a, 4096, off), 4096);
    assert_int_equal(pread(fd, b, 4096, off + 4096), 4096);
    assert_memory_not_equal(a, b, 4096);
    unsigned hist[256] = {0};
    for (int i = 0; i < 4096; i++)
      hist[a[i]]++;
    for (int v = 0; v < 256; v++)
      if (hist[v] > 64) /* expected 16 per value */
        fail_msg("byte 0x%02x appears %u times in 4 KiB at %lld", v, hist[v],
                 (long long)off);
  }
  close(fd);
  dp_target_close(&t);

  /* Second open reuses the file as it is. */
  assert_int_equal(dp_target_open_file(f->dir, 8 * MiB, &t), 0);
  assert_int_equal(t.laid_out, 0);
  assert_true(t.dev.name[0] != '\0' || t.dev.major == 0);
  dp_target_close(&t);

  /* Another size: ours, so laid out again. */
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, &t), 0);
  assert_int_equal(t.laid_out, 1);
  assert_int_equal(lstat(f->probe, &st), 0);
  assert_int_equal(st.st_size, 4 * MiB);
  dp_target_close(&t);
}

static void test_explicit_probe_path_and_new_dir(void **state) {
  fx_t *f = *state;
  char p[600];
  snprintf(p, sizeof(p), "%s/mine.probe", f->dir);
  dp_target_t t;
  assert_int_equal(dp_target_open_file(p, 2 * MiB, &t), 0);
  assert_string_equal(t.path, p);
  dp_target_close(&t);
  snprintf(p, sizeof(p), "%s/newdir", f->dir);
  assert_int_equal(dp_target_open_file(p, 2 * MiB, &t), 0);
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  assert_true(S_ISDIR(st.st_mode));
  assert_int_equal(st.st_mode & 0777, 0700);
  dp_target_close(&t);
  /* Two levels missing: not created. */
  snprintf(p, sizeof(p), "%s/a/b", f->dir);
  assert_int_equal(dp_target_open_file(p, 2 * MiB, &t), -ENOENT);
  assert_non_null(strstr(t.err, "cannot create directory"));
}

static void test_refuses_symlink(void **state) {
  fx_t *f = *state;
  char victim[600];
  snprintf(victim, sizeof(victim), "%s/victim", f->dir);
  write_file(victim, "precious");
  assert_int_equal(symlink(victim, f->probe), 0);
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, &t), -ELOOP);
  assert_non_null(strstr(t.err, "symlink"));
  assert_int_equal(t.fd, -1);
  size_t n;
  char *c = read_file(victim, &n);
  assert_int_equal(n, 8);
  assert_memory_equal(c, "precious", 8);
}

static void test_refuses_foreign_file(void **state) {
  fx_t *f = *state;
  write_file(f->probe, "somebody else's data\n");
  chmod(f->probe, 0600);
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, &t), -EEXIST);
  assert_non_null(strstr(t.err, "not a diskprobe probe file"));
  size_t n;
  char *c = read_file(f->probe, &n);
  assert_int_equal(n, 21);
  assert_memory_equal(c, "somebody else's data\n", 21);
}

static void test_refuses_hardlinked_probe_file(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, &t), 0);
  dp_target_close(&t);
  char other[600];
  snprintf(other, sizeof(other), "%s/other", f->dir);
  assert_int_equal(link(f->probe, other), 0);
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, &t), -EEXIST);
  assert_non_null(strstr(t.err, "hard links"));
}

static void test_refuses_unsafe_directory(void **state) {
  fx_t *f = *state;
  assert_int_equal(chmod(f->dir, 0777), 0);
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, &t), -EPERM);
  assert_non_null(strstr(t.err, "world-writable"));
  assert_int_equal(access(f->probe, F_OK), -1);
  assert_int_equal(chmod(f->dir, 01777), 0); /* sticky, like /tmp: fine */
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, &t), 0);
  dp_target_close(&t);
}

static void test_relays_incomplete_or_holey_file(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, &t), 0);
  /* Punch a hole in the data: reads there would return zeros from no
   * media at all. The next open must notice and lay out again. */
  int fd = open(f->probe, O_RDWR);
  assert_true(fd >= 0);
  if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1 * MiB,
                1 * MiB) != 0) {
    close(fd);
    dp_target_close(&t);
    skip();
  }
  close(fd);
  dp_target_close(&t);
  assert_int_equal(lseek(open(f->probe, O_RDONLY), 0, SEEK_HOLE), 1 * MiB);
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, &t), 0);
  assert_int_equal(t.laid_out, 1);
  assert_int_equal(lseek(t.fd, 0, SEEK_HOLE), 4 * MiB);
  dp_target_close(&t);

  /* Unwritten (zero-range) extents: allocated, but still read as zeros
   * without touching the media. */
  fd = open(f->probe, O_RDWR);
  int zr = fallocate(fd, FALLOC_FL_ZERO_RANGE, 2 * MiB, 1 * MiB);
  close(fd);
  if (zr == 0) {
    assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, &t), 0);
    assert_int_equal(t.laid_out, 1);
    dp_target_close(&t);
  }

  /* Header left incomplete (a layout interrupted by a crash). */
  fd = open(f->probe, O_RDWR);
  uint32_t zero = 0;
  /* complete flag sits after magic[16], 2*u32, 3*u64 */
  assert_int_equal(pwrite(fd, &zero, 4, 16 + 8 + 24), 4);
  close(fd);
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, &t), 0);
  assert_int_equal(t.laid_out, 1);
  dp_target_close(&t);
}

static void test_odirect_refused(void **state) {
  fx_t *f = *state;
  refuse_odirect = 1;
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, &t), -EINVAL);
  assert_string_equal(t.err, "filesystem does not support O_DIRECT");
  refuse_odirect = 0;
}

static void test_no_space(void **state) {
  fx_t *f = *state;
  char mnt[600];
  snprintf(mnt, sizeof(mnt), "%s/small", f->dir);
  assert_int_equal(mkdir(mnt, 0700), 0);
  if (mount("dp-test", mnt, "tmpfs", 0, "size=4m,mode=0700") != 0)
    skip(); /* not root: cannot make a small filesystem here */
  dp_target_t t;
  int rc = dp_target_open_file(mnt, 16 * MiB, &t);
  if (rc == -EINVAL && strstr(t.err, "O_DIRECT")) {
    umount(mnt);
    skip(); /* tmpfs without O_DIRECT (kernels before 6.6) */
  }
  assert_int_equal(rc, -ENOSPC);
  assert_non_null(strstr(t.err, "no space"));
  char p[700];
  snprintf(p, sizeof(p), "%s/%s", mnt, DP_PROBE_FILE_NAME);
  assert_int_equal(access(p, F_OK), -1); /* nothing left behind */
  umount(mnt);
}

static void test_missing_path_and_file_as_dir(void **state) {
  fx_t *f = *state;
  char p[600];
  snprintf(p, sizeof(p), "%s/plain", f->dir);
  write_file(p, "x");
  char q[700];
  snprintf(q, sizeof(q), "%s/sub", p);
  dp_target_t t;
  assert_true(dp_target_open_file(q, 2 * MiB, &t) < 0);
  assert_true(strlen(t.err) > 0);
  assert_int_equal(dp_target_open_file(f->dir, 1000, &t), -EINVAL);
}

/* ---- device resolution -------------------------------------------------- */

static void mk(const char *root, const char *rel, const char *content) {
  char p[1024];
  snprintf(p, sizeof(p), "%s/%s", root, rel);
  char cmd[1200];
  snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
  assert_int_equal(system(cmd), 0);
  if (content)
    write_file(p, content);
}

static void test_resolve_fixture_sysfs(void **state) {
  fx_t *f = *state;
  char root[600];
  snprintf(root, sizeof(root), "%s/sys", f->dir);
  mk(root, "devices/pci0/block/sda/dev", "8:0\n");
  mk(root, "devices/pci0/block/sda/queue/logical_block_size", "4096\n");
  mk(root, "devices/pci0/block/sda/queue/rotational", "1\n");
  mk(root, "devices/pci0/block/sda/sda2/dev", "8:2\n");
  mk(root, "devices/pci0/block/sda/sda2/partition", "2\n");
  mk(root, "dev/block/x", NULL);
  char l[800];
  snprintf(l, sizeof(l), "%s/dev/block/8:2", root);
  assert_int_equal(symlink("../../devices/pci0/block/sda/sda2", l), 0);
  snprintf(l, sizeof(l), "%s/dev/block/8:0", root);
  assert_int_equal(symlink("../../devices/pci0/block/sda", l), 0);

  dp_device_t d;
  assert_int_equal(dp_device_resolve_at(root, 8, 2, &d), 0);
  assert_string_equal(d.name, "sda2");
  assert_string_equal(d.disk, "sda");
  assert_int_equal(d.partition, 1);
  assert_int_equal(d.disk_major, 8);
  assert_int_equal(d.disk_minor, 0);
  assert_int_equal(d.logical_block_size, 4096);
  assert_int_equal(d.rotational, 1);

  assert_int_equal(dp_device_resolve_at(root, 8, 0, &d), 0);
  assert_string_equal(d.name, "sda");
  assert_string_equal(d.disk, "sda");
  assert_int_equal(d.partition, 0);

  assert_int_equal(dp_device_resolve_at(root, 0, 45, &d), -ENODEV);
}

/* Two logical volumes (dm-0 on sda2, dm-1 on a crypt dm-2 on sda3) and a
 * partition all resolve to sda, so one worker probes them all. */
static void test_resolve_stacked_sysfs(void **state) {
  fx_t *f = *state;
  char root[600];
  snprintf(root, sizeof(root), "%s/sys", f->dir);
  mk(root, "devices/pci0/block/sda/dev", "8:0\n");
  mk(root, "devices/pci0/block/sda/sda2/dev", "8:2\n");
  mk(root, "devices/pci0/block/sda/sda2/partition", "2\n");
  mk(root, "devices/pci0/block/sda/sda3/dev", "8:3\n");
  mk(root, "devices/pci0/block/sda/sda3/partition", "3\n");
  mk(root, "devices/virtual/block/dm-0/dev", "253:0\n");
  mk(root, "devices/virtual/block/dm-0/queue/rotational", "0\n");
  mk(root, "devices/virtual/block/dm-0/slaves/x", NULL);
  mk(root, "devices/virtual/block/dm-1/dev", "253:1\n");
  mk(root, "devices/virtual/block/dm-1/slaves/x", NULL);
  mk(root, "devices/virtual/block/dm-2/dev", "253:2\n");
  mk(root, "devices/virtual/block/dm-2/slaves/x", NULL);
  mk(root, "devices/virtual/block/dm-3/dev", "253:3\n");
  mk(root, "dev/block/x", NULL);
  static const char *const links[][2] = {
      {"dev/block/8:0", "../../devices/pci0/block/sda"},
      {"dev/block/8:2", "../../devices/pci0/block/sda/sda2"},
      {"dev/block/8:3", "../../devices/pci0/block/sda/sda3"},
      {"dev/block/253:0", "../../devices/virtual/block/dm-0"},
      {"dev/block/253:1", "../../devices/virtual/block/dm-1"},
      {"dev/block/253:2", "../../devices/virtual/block/dm-2"},
      {"dev/block/253:3", "../../devices/virtual/block/dm-3"},
      {"devices/virtual/block/dm-0/slaves/sda2",
       "../../../../pci0/block/sda/sda2"},
      {"devices/virtual/block/dm-1/slaves/dm-2", "../../dm-2"},
      {"devices/virtual/block/dm-2/slaves/sda3",
       "../../../../pci0/block/sda/sda3"},
  };
  for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
    char l[800];
    snprintf(l, sizeof(l), "%s/%s", root, links[i][0]);
    if (symlink(links[i][1], l) != 0)
      fail_msg("symlink %s: %s", l, strerror(errno));
  }
  dp_device_t d;
  assert_int_equal(dp_device_resolve_at(root, 253, 0, &d), 0);
  assert_string_equal(d.name, "dm-0");
  assert_string_equal(d.disk, "sda");
  assert_int_equal(d.disk_major, 8);
  assert_int_equal(d.disk_minor, 0);
  assert_int_equal(d.stacked, 1);
  assert_int_equal(d.rotational, 0); /* the dm device's own queue */
  assert_int_equal(dp_device_resolve_at(root, 253, 1, &d), 0);
  assert_string_equal(d.name, "dm-1");
  assert_string_equal(d.disk, "sda");
  assert_int_equal(d.disk_minor, 0);
  /* a dm device with no slaves (e.g. dm-zero) is its own disk */
  assert_int_equal(dp_device_resolve_at(root, 253, 3, &d), 0);
  assert_string_equal(d.disk, "dm-3");
  assert_int_equal(d.stacked, 0);
  assert_int_equal(dp_device_resolve_at(root, 8, 2, &d), 0);
  assert_int_equal(d.stacked, 0);
  assert_string_equal(d.disk, "sda");
}

static void test_resolve_live(void **state) {
  fx_t *f = *state;
  struct stat st;
  assert_int_equal(stat(f->dir, &st), 0);
  dp_device_t d;
  int rc = dp_device_resolve_at("/sys", major(st.st_dev), minor(st.st_dev), &d);
  if (rc == -ENODEV)
    skip(); /* btrfs/overlay: no block device behind st_dev */
  assert_int_equal(rc, 0);
  assert_true(strlen(d.name) > 0 && strlen(d.disk) > 0);
  assert_true(d.logical_block_size >= 512);
  char p[300];
  snprintf(p, sizeof(p), "/sys/block/%s", d.disk);
  assert_int_equal(access(p, F_OK), 0);
}

int main(void) {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(test_layout_fully_allocated_random),
      T(test_explicit_probe_path_and_new_dir),
      T(test_refuses_symlink),
      T(test_refuses_foreign_file),
      T(test_refuses_hardlinked_probe_file),
      T(test_refuses_unsafe_directory),
      T(test_relays_incomplete_or_holey_file),
      T(test_odirect_refused),
      T(test_no_space),
      T(test_missing_path_and_file_as_dir),
      T(test_resolve_fixture_sysfs),
      T(test_resolve_stacked_sysfs),
      T(test_resolve_live),
  };
  return cmocka_run_group_tests_name("target", tests, NULL, NULL);
}
