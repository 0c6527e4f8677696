/*
 * test_target.c - the probe file on a real filesystem (layout fully
 * allocated and incompressible, reuse, re-layout of stale files, refusal of
 * symlinks, foreign files and unsafe directories), device resolution from a
 * fixture sysfs tree and from the live /sys, and the two error paths a real
 * filesystem here cannot produce on demand (O_DIRECT refused, injected with
 * --wrap=openat; no space, on a small tmpfs when we may mount one).
 * The hardening cases: a Path redirected through a directory another user owns,
 * the lock against a second process, read-only opens, truncated own files, 4
 * KiB and 16 KiB-sector devices (loop devices, as root), FIFOs, sockets and
 * devices at the probe path, empty and over-long names, RAM filesystems.
 *
 * Runs in $TMPDIR (default /var/tmp): it must support O_DIRECT and be a
 * real path (no symlink in it) that only root or we can write.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "safepath.h"
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
  char cmd[1200];
  /* what a failed test left mounted or attached under the directory */
  snprintf(cmd, sizeof(cmd),
           "awk -v d='%s/' 'index($2, d) == 1 {print $2}' /proc/mounts | "
           "sort -r | xargs -r -n1 umount -l; for i in '%s'/*.img; do "
           "[ -e \"$i\" ] && losetup -j \"$i\" | cut -d: -f1 | "
           "xargs -r -n1 losetup -d; done; rm -rf '%s'",
           f->dir, f->dir, f->dir);
  if (system(cmd) != 0)
    return -1;
  free(f);
  return 0;
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
  int rc = dp_target_open_file(f->dir, 8 * MiB, 1, &t);
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
  assert_int_equal(dp_target_open_file(f->dir, 8 * MiB, 1, &t), 0);
  assert_int_equal(t.laid_out, 0);
  assert_true(t.dev.name[0] != '\0' || t.dev.major == 0);
  dp_target_close(&t);

  /* Another size: ours, so laid out again. */
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 1, &t), 0);
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
  assert_int_equal(dp_target_open_file(p, 2 * MiB, 1, &t), 0);
  assert_string_equal(t.path, p);
  dp_target_close(&t);
  snprintf(p, sizeof(p), "%s/newdir", f->dir);
  assert_int_equal(dp_target_open_file(p, 2 * MiB, 1, &t), 0);
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  assert_true(S_ISDIR(st.st_mode));
  assert_int_equal(st.st_mode & 0777, 0700);
  dp_target_close(&t);
  /* Two levels missing: not created. */
  snprintf(p, sizeof(p), "%s/a/b", f->dir);
  assert_int_equal(dp_target_open_file(p, 2 * MiB, 1, &t), -ENOENT);
  assert_non_null(strstr(t.err, "cannot create directory"));
}

/* A Device at a FIFO or a character device: refused at once, named as
 * what it is (opened without O_NONBLOCK, a FIFO blocked open() until a
 * writer came: here a child, so a hang fails the test instead of it). */
static void test_device_not_block(void **state) {
  fx_t *f = *state;
  char fifo[600];
  snprintf(fifo, sizeof(fifo), "%s/fifo", f->dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  const char *paths[] = {fifo, "/dev/null"};
  const char *says[] = {"is a FIFO (named pipe), not a block device",
                        "is a character device, not a block device"};
  for (size_t i = 0; i < 2; i++) {
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      dp_target_t t;
      alarm(5); /* open() blocked: killed */
      int rc = dp_target_open_block(paths[i], &t);
      int ok = rc == -ENOTBLK && t.fd == -1 && strstr(t.err, says[i]) &&
               strstr(t.err, paths[i]);
      if (write(pfd[1], t.err, strlen(t.err)) < 0)
        _exit(2);
      _exit(ok ? 0 : 1);
    }
    close(pfd[1]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char msg[300] = "";
    ssize_t n = read(pfd[0], msg, sizeof(msg) - 1);
    msg[n > 0 ? n : 0] = '\0';
    close(pfd[0]);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      fail_msg("%s: expected at once -ENOTBLK and '%s', got %s: %s", paths[i],
               says[i], WIFEXITED(st) ? "a refusal" : "a hang", msg);
  }
}

/* A symlink's text is the link maker's: a newline in it could forge a
 * log line; the message escapes it. */
static void test_symlink_text_escaped(void **state) {
  fx_t *f = *state;
  char link[600];
  snprintf(link, sizeof(link), "%s/lnk", f->dir);
  assert_int_equal(symlink("x\n[2026-12-01] forged", link), 0);
  dp_target_t t;
  assert_int_equal(dp_target_open_file(link, 2 * MiB, 1, &t), -ELOOP);
  if (strchr(t.err, '\n') != NULL ||
      strstr(t.err, "(to x\\x0a[2026-12-01] forged)") == NULL)
    fail_msg("expected the link's text escaped on one line, got: %s", t.err);
}

static void test_refuses_symlink(void **state) {
  fx_t *f = *state;
  char victim[600];
  snprintf(victim, sizeof(victim), "%s/victim", f->dir);
  fixture_write(f->dir, "victim", "precious");
  assert_int_equal(symlink(victim, f->probe), 0);
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), -ELOOP);
  assert_non_null(strstr(t.err, "symlink"));
  assert_int_equal(t.fd, -1);
  size_t n;
  char *c = read_file(victim, &n);
  assert_int_equal(n, 8);
  assert_memory_equal(c, "precious", 8);
}

static void test_refuses_foreign_file(void **state) {
  fx_t *f = *state;
  fixture_write(f->dir, DP_PROBE_FILE_NAME, "somebody else's data\n");
  chmod(f->probe, 0600);
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), -EEXIST);
  assert_non_null(strstr(t.err, "not a diskprobe probe file"));
  size_t n;
  char *c = read_file(f->probe, &n);
  assert_int_equal(n, 21);
  assert_memory_equal(c, "somebody else's data\n", 21);
}

static void test_refuses_hardlinked_probe_file(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), 0);
  dp_target_close(&t);
  char other[600];
  snprintf(other, sizeof(other), "%s/other", f->dir);
  assert_int_equal(link(f->probe, other), 0);
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), -EEXIST);
  assert_non_null(strstr(t.err, "hard links"));
}

static void test_refuses_unsafe_directory(void **state) {
  fx_t *f = *state;
  assert_int_equal(chmod(f->dir, 0777), 0);
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), -EPERM);
  assert_non_null(strstr(t.err, "world-writable"));
  assert_int_equal(access(f->probe, F_OK), -1);
  assert_int_equal(chmod(f->dir, 01777), 0); /* sticky, like /tmp: fine */
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), 0);
  dp_target_close(&t);
}

static void test_relays_incomplete_or_holey_file(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 1, &t), 0);
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
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 1, &t), 0);
  assert_int_equal(t.laid_out, 1);
  assert_int_equal(lseek(t.fd, 0, SEEK_HOLE), 4 * MiB);
  dp_target_close(&t);

  /* Unwritten (zero-range) extents: allocated, but still read as zeros
   * without touching the media. */
  fd = open(f->probe, O_RDWR);
  int zr = fallocate(fd, FALLOC_FL_ZERO_RANGE, 2 * MiB, 1 * MiB);
  close(fd);
  if (zr == 0) {
    assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 1, &t), 0);
    assert_int_equal(t.laid_out, 1);
    dp_target_close(&t);
  }

  /* Header left incomplete (a layout interrupted by a crash). */
  fd = open(f->probe, O_RDWR);
  uint32_t zero = 0;
  /* complete flag sits after magic[16], 2*u32, 3*u64 */
  assert_int_equal(pwrite(fd, &zero, 4, 16 + 8 + 24), 4);
  close(fd);
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 1, &t), 0);
  assert_int_equal(t.laid_out, 1);
  dp_target_close(&t);
}

static void test_odirect_refused(void **state) {
  fx_t *f = *state;
  refuse_odirect = 1;
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), -EINVAL);
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
  int rc = dp_target_open_file(mnt, 16 * MiB, 1, &t);
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
  fixture_write(f->dir, "plain", "x");
  char q[700];
  snprintf(q, sizeof(q), "%s/sub", p);
  dp_target_t t;
  assert_true(dp_target_open_file(q, 2 * MiB, 1, &t) < 0);
  assert_true(strlen(t.err) > 0);
  assert_int_equal(dp_target_open_file(f->dir, 1000, 1, &t), -EINVAL);
}

/* ---- the hardening cases: unsafe paths, locks, odd files and devices ---- */

static int nobody(uid_t *uid, gid_t *gid) {
  struct passwd *pw = getpwnam("nobody");
  if (pw == NULL || pw->pw_uid == 0)
    return -1;
  *uid = pw->pw_uid;
  *gid = pw->pw_gid;
  return 0;
}

static int entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
  closedir(d);
  return n;
}

/* The scenario: root's Path in a directory another user owns, and
 * that user swaps the probe directory for a symlink to a victim directory. */
static void test_refuses_redirected_parent(void **state) {
  fx_t *f = *state;
  uid_t nob = 0;
  gid_t nog = 0;
  if (geteuid() != 0 || nobody(&nob, &nog) < 0)
    skip(); /* needs root and a user "nobody" */
  char victim[600], u[600], dp[700];
  snprintf(victim, sizeof(victim), "%s/victim", f->dir);
  snprintf(u, sizeof(u), "%s/u", f->dir);
  snprintf(dp, sizeof(dp), "%s/dp", u);
  assert_int_equal(mkdir(victim, 0700), 0);
  assert_int_equal(mkdir(u, 0755), 0);
  assert_int_equal(chown(u, nob, nog), 0);
  assert_int_equal(symlink(victim, dp), 0);
  assert_int_equal(lchown(dp, nob, nog), 0); /* as nobody made it */
  dp_target_t t;
  int rc = dp_target_open_file(dp, 2 * MiB, 1, &t);
  if (rc == 0)
    dp_target_close(&t);
  assert_int_equal(entries(victim), 0); /* nothing laid out there */
  assert_int_equal(rc, -EPERM);
  char want[700];
  snprintf(want, sizeof(want), "directory %s is owned by uid %u", u,
           (unsigned)nob);
  if (strstr(t.err, want) == NULL)
    fail_msg("expected '%s' in: %s", want, t.err);

  /* In a directory only root can write: the symlink is still not followed,
   * and the message names it. */
  assert_int_equal(chown(u, 0, 0), 0);
  assert_int_equal(dp_target_open_file(dp, 2 * MiB, 1, &t), -ELOOP);
  assert_non_null(strstr(t.err, dp));
  assert_non_null(strstr(t.err, "is a symlink (to "));
  assert_int_equal(entries(victim), 0);

  /* An ancestor group-writable, world-writable without the sticky bit. */
  char g[600], sub[700];
  snprintf(g, sizeof(g), "%s/g", f->dir);
  snprintf(sub, sizeof(sub), "%s/sub", g);
  assert_int_equal(mkdir(g, 0700), 0);
  assert_int_equal(chmod(g, 0770), 0);
  assert_int_equal(dp_target_open_file(sub, 2 * MiB, 1, &t), -EPERM);
  snprintf(want, sizeof(want), "directory %s is group-writable", g);
  assert_non_null(strstr(t.err, want));
  assert_int_equal(chmod(g, 0777), 0);
  assert_int_equal(dp_target_open_file(sub, 2 * MiB, 1, &t), -EPERM);
  snprintf(want, sizeof(want),
           "directory %s is world-writable without the sticky bit", g);
  assert_non_null(strstr(t.err, want));
  assert_int_equal(access(sub, F_OK), -1); /* nothing created below it */
  /* Sticky, like /tmp: fine while what is below belongs to root or us... */
  assert_int_equal(chmod(g, 01777), 0);
  assert_int_equal(dp_target_open_file(sub, 2 * MiB, 1, &t), 0);
  dp_target_close(&t);
  /* ...and not where another user made the directory below it. */
  char n[700], nx[800];
  snprintf(n, sizeof(n), "%s/n", g);
  snprintf(nx, sizeof(nx), "%s/x", n);
  assert_int_equal(mkdir(n, 0755), 0);
  assert_int_equal(chown(n, nob, nog), 0);
  assert_int_equal(dp_target_open_file(nx, 2 * MiB, 1, &t), -EPERM);
  assert_non_null(strstr(t.err, "owned by uid"));
  assert_int_equal(access(nx, F_OK), -1);
}

/* A relative path and ".." resolve to the real path, said in t->path. */
static void test_relative_path_is_resolved(void **state) {
  fx_t *f = *state;
  char want[700], cwd[PATH_MAX];
  assert_non_null(getcwd(cwd, sizeof(cwd)));
  assert_int_equal(chdir(f->dir), 0);
  assert_int_equal(mkdir("a", 0700), 0);
  dp_target_t t;
  int rc = dp_target_open_file("a/../b/", 2 * MiB, 1, &t);
  assert_int_equal(chdir(cwd), 0);
  assert_int_equal(rc, 0);
  snprintf(want, sizeof(want), "%s/b/%s", f->dir, DP_PROBE_FILE_NAME);
  assert_string_equal(t.path, want);
  dp_target_close(&t);
}

/* Another process (a fork()ed child here) holding the probe file: refused,
 * and the file is not re-laid under it, whatever size is asked for. */
static void test_refuses_file_held_by_another_process(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), 0);
  dp_target_close(&t);
  int go[2], done[2];
  assert_int_equal(pipe(go), 0);
  assert_int_equal(pipe(done), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) { /* holds the file read-only, the subtle case */
    dp_target_t c;
    char b = dp_target_open_file(f->dir, 2 * MiB, 0, &c) == 0 ? 'y' : 'n';
    if (write(go[1], &b, 1) != 1 || read(done[0], &b, 1) < 0)
      _exit(1);
    _exit(0);
  }
  char b = 0;
  assert_int_equal(read(go[0], &b, 1), 1);
  assert_int_equal(b, 'y');
  struct stat before, after;
  assert_int_equal(stat(f->probe, &before), 0);
  int rc_ro = dp_target_open_file(f->dir, 2 * MiB, 0, &t);
  if (rc_ro == 0)
    dp_target_close(&t);
  char err[256];
  snprintf(err, sizeof(err), "%s", t.err);
  int rc_rw = dp_target_open_file(f->dir, 2 * MiB, 1, &t);
  if (rc_rw == 0)
    dp_target_close(&t);
  int rc_size = dp_target_open_file(f->dir, 4 * MiB, 1, &t);
  if (rc_size == 0)
    dp_target_close(&t);
  assert_int_equal(stat(f->probe, &after), 0);
  assert_int_equal(write(done[1], "x", 1), 1);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_int_equal(rc_ro, -EBUSY);
  char want[700];
  snprintf(want, sizeof(want),
           "probe file %s is held by another process (another collectd, or "
           "`collectd -T`?)",
           f->probe);
  if (strstr(err, want) == NULL)
    fail_msg("expected '%s' in: %s", want, err);
  assert_int_equal(rc_rw, -EBUSY);
  assert_int_equal(rc_size, -EBUSY);
  assert_int_equal(after.st_ino, before.st_ino); /* not re-laid */
  assert_int_equal(after.st_size, 2 * MiB);
  /* The child gone, the file is free; a second open in this process
   * (another description) is refused too while the first is open. */
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 0, &t), 0);
  dp_target_t t2;
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 0, &t2), -EBUSY);
  dp_target_close(&t);
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 1, &t2), 0);
  dp_target_close(&t2);
}

/* Read probes only: the file is O_RDONLY (a layout writes it once), so it
 * works on, and does not keep busy, a filesystem that goes read-only. */
static void test_read_only_unless_writable(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 0, &t), 0);
  assert_int_equal(t.laid_out, 1);
  int fl = fcntl(t.fd, F_GETFL);
  assert_int_equal(fl & O_ACCMODE, O_RDONLY);
  assert_true(fl & O_DIRECT);
  assert_int_equal(t.writable, 0);
  dp_target_close(&t);
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 0, &t), 0);
  assert_int_equal(t.laid_out, 0);
  assert_int_equal(fcntl(t.fd, F_GETFL) & O_ACCMODE, O_RDONLY);
  dp_target_close(&t);
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), 0);
  assert_int_equal(fcntl(t.fd, F_GETFL) & O_ACCMODE, O_RDWR);
  assert_int_equal(t.writable, 1);
  dp_target_close(&t);

  char ro[600];
  snprintf(ro, sizeof(ro), "%s/ro", f->dir);
  assert_int_equal(mkdir(ro, 0700), 0);
  if (mount(f->dir, ro, NULL, MS_BIND, NULL) != 0)
    skip(); /* not root: no read-only bind mount */
  if (mount(NULL, ro, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) {
    umount(ro);
    skip();
  }
  int rc_ro = dp_target_open_file(ro, 2 * MiB, 0, &t);
  int laid = t.laid_out;
  if (rc_ro == 0)
    dp_target_close(&t);
  int rc_rw = dp_target_open_file(ro, 2 * MiB, 1, &t);
  umount(ro);
  assert_int_equal(rc_ro, 0);
  assert_int_equal(laid, 0);
  assert_int_equal(rc_rw, -EROFS);
}

/* The file at f->probe, otherwise provably ours, is refused untouched
 * (-EEXIST) with a second name, and (as root) once owned by someone else:
 * it stays theirs. */
static void refused_not_ours(fx_t *f, uint64_t size) {
  dp_target_t t;
  char other[600];
  snprintf(other, sizeof(other), "%s/other", f->dir);
  assert_int_equal(link(f->probe, other), 0);
  assert_int_equal(dp_target_open_file(f->dir, size, 1, &t), -EEXIST);
  assert_non_null(strstr(t.err, "hard links"));
  assert_int_equal(unlink(other), 0);
  uid_t nob = 0;
  gid_t nog = 0;
  if (geteuid() == 0 && nobody(&nob, &nog) == 0) {
    assert_int_equal(chown(f->probe, nob, nog), 0);
    assert_int_equal(dp_target_open_file(f->dir, size, 1, &t), -EEXIST);
    assert_non_null(strstr(t.err, "owned by uid"));
  }
}

/* Ours but truncated (empty, or shorter than a header): laid out again.
 * Not provably ours: still refused. */
static void test_relays_truncated_own_file(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  struct stat st;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), 0);
  dp_target_close(&t);
  assert_int_equal(truncate(f->probe, 0), 0); /* `: > diskprobe.probe` */
  if (dp_target_open_file(f->dir, 2 * MiB, 1, &t) != 0)
    fail_msg("empty own file: %s", t.err);
  assert_int_equal(t.laid_out, 1);
  assert_int_equal(stat(f->probe, &st), 0);
  assert_int_equal(st.st_size, 2 * MiB);
  dp_target_close(&t);
  assert_int_equal(truncate(f->probe, 100), 0); /* a header's first bytes */
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 0, &t), 0);
  assert_int_equal(t.laid_out, 1);
  dp_target_close(&t);
  /* a crash between create and the first header write */
  assert_int_equal(unlink(f->probe), 0);
  int fd = open(f->probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), 0);
  assert_int_equal(t.laid_out, 1);
  dp_target_close(&t);
  char p[600];
  snprintf(p, sizeof(p), "%s/mine.probe", f->dir);
  fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
  close(fd);
  assert_int_equal(dp_target_open_file(p, 2 * MiB, 1, &t), 0);
  assert_int_equal(t.laid_out, 1);
  dp_target_close(&t);

  /* empty, but not a mode we create */
  assert_int_equal(truncate(f->probe, 0), 0);
  assert_int_equal(chmod(f->probe, 0644), 0);
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), -EEXIST);
  assert_non_null(strstr(t.err, "not a diskprobe probe file"));
  assert_int_equal(chmod(f->probe, 0600), 0);
  /* empty, but with a second name, or someone else's */
  refused_not_ours(f, 2 * MiB);
  assert_int_equal(stat(f->probe, &st), 0);
  assert_int_equal(st.st_size, 0); /* none of them touched */
}

/* The header says where the data starts: a file laid out where the
 * O_DIRECT alignment was 8 KiB is read with its own offset. */
static void test_header_records_data_offset(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), 0);
  dp_target_close(&t);
  int fd = open(f->probe, O_RDWR);
  uint32_t hdr = 8192;
  uint64_t off = 8192;
  /* magic[16], version, header_bytes (20), size (24), data_offset (32) */
  assert_int_equal(pwrite(fd, &hdr, 4, 20), 4);
  assert_int_equal(pwrite(fd, &off, 8, 32), 8);
  assert_int_equal(fsync(fd), 0);
  close(fd);
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 0, &t), 0);
  assert_int_equal(t.laid_out, 0);
  assert_int_equal(t.data_offset, 8192);
  assert_int_equal(t.data_bytes, 2 * MiB - 8192);
  dp_target_close(&t);
}

/* A loop device with `sector` bytes per logical block, formatted by
 * `mkfs` and mounted in the fixture directory: 0, or -1 to skip. */
static int loop_fs(fx_t *f, unsigned sector, const char *mkfs, char *mnt,
                   size_t mntlen) {
  char img[600], cmd[1600], dev[64] = "";
  snprintf(img, sizeof(img), "%s/lbs%u.img", f->dir, sector);
  snprintf(mnt, mntlen, "%s/m%u", f->dir, sector);
  snprintf(cmd, sizeof(cmd),
           "truncate -s 512M '%s' && losetup -f --show --sector-size %u '%s' "
           "2>/dev/null",
           img, sector, img);
  FILE *p = popen(cmd, "r");
  if (p == NULL)
    return -1;
  int got = fgets(dev, sizeof(dev), p) != NULL;
  pclose(p);
  dev[strcspn(dev, "\n")] = '\0';
  if (!got || dev[0] != '/')
    return -1;
  snprintf(cmd, sizeof(cmd),
           "%s '%s' >/dev/null 2>&1 && mkdir -p '%s' && mount '%s' '%s' "
           "2>/dev/null",
           mkfs, dev, mnt, dev, mnt);
  return system(cmd) == 0 ? 0 : -1;
}

static void check_sector(const char *mnt, unsigned sector) {
  char p[700];
  snprintf(p, sizeof(p), "%s/dp", mnt);
  dp_target_t t;
  if (dp_target_open_file(p, 8 * MiB, 1, &t) != 0)
    fail_msg("%u-byte sectors: %s", sector, t.err);
  uint32_t hdr =
      sector > DP_PROBE_HEADER_BYTES ? sector : DP_PROBE_HEADER_BYTES;
  assert_int_equal(t.align, sector);
  assert_int_equal(t.data_offset, hdr);
  assert_int_equal(t.data_bytes, 8 * MiB - hdr);
  void *buf = NULL;
  assert_int_equal(posix_memalign(&buf, sector, sector), 0);
  assert_int_equal(pread(t.fd, buf, sector, (off_t)t.data_offset), sector);
  dp_target_close(&t);
  assert_int_equal(dp_target_open_file(p, 8 * MiB, 0, &t), 0);
  assert_int_equal(t.laid_out, 0);
  assert_int_equal(t.data_offset, hdr);
  assert_int_equal(pread(t.fd, buf, sector, (off_t)t.data_offset), sector);
  dp_target_close(&t);
  free(buf);
}

static void test_large_sector_devices(void **state) {
  fx_t *f = *state;
  char mnt[600];
  if (geteuid() != 0 || loop_fs(f, 4096, "mkfs.ext4 -q -F", mnt, sizeof(mnt)))
    skip(); /* needs root, loop devices and mkfs.ext4 */
  check_sector(mnt, 4096);
  /* 16 KiB: ext4 cannot mount blocks over the page size; XFS can (Linux
   * 6.12 and later), where mkfs.xfs is installed. */
  if (loop_fs(f, 16384, "mkfs.xfs -q -f -b size=16384 -s size=16384", mnt,
              sizeof(mnt)) != 0) {
    fprintf(stderr, "    (no 16 KiB-sector XFS here: 4 KiB tested only)\n");
    skip();
  }
  check_sector(mnt, 16384);
  /* A file with a 4 KiB header here (copied from another disk): its data
   * offset is not aligned, so it is laid out again. */
  char p[700];
  snprintf(p, sizeof(p), "%s/dp/%s", mnt, DP_PROBE_FILE_NAME);
  int fd = open(p, O_RDWR);
  uint32_t hdr = 4096;
  uint64_t off = 4096;
  assert_int_equal(pwrite(fd, &hdr, 4, 20), 4);
  assert_int_equal(pwrite(fd, &off, 8, 32), 8);
  assert_int_equal(fsync(fd), 0);
  close(fd);
  snprintf(p, sizeof(p), "%s/dp", mnt);
  dp_target_t t;
  assert_int_equal(dp_target_open_file(p, 8 * MiB, 0, &t), 0);
  assert_int_equal(t.laid_out, 1);
  assert_int_equal(t.data_offset, 16384);
  dp_target_close(&t);
}

/* A FIFO, a socket, a character device at the probe path: named as what
 * they are (and a FIFO is not opened for I/O: that would block). */
static void test_names_special_files(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  assert_int_equal(mkfifo(f->probe, 0600), 0);
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 0, &t), -EINVAL);
  assert_string_equal(t.err, "probe file path exists and is a FIFO (named "
                             "pipe), not a regular file: not touching it");
  assert_int_equal(dp_target_open_file(f->dir, 2 * MiB, 1, &t), -EINVAL);
  assert_non_null(strstr(t.err, "FIFO"));
  char p[600];
  snprintf(p, sizeof(p), "%s/s.probe", f->dir);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a;
  memset(&a, 0, sizeof(a));
  a.sun_family = AF_UNIX;
  int m = snprintf(a.sun_path, sizeof(a.sun_path), "%s", p);
  assert_true(m > 0 && (size_t)m < sizeof(a.sun_path)); /* a socket's path */
  assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
  assert_int_equal(dp_target_open_file(p, 2 * MiB, 1, &t), -EINVAL);
  assert_non_null(strstr(t.err, "is a socket, not a regular file"));
  close(s);
  snprintf(p, sizeof(p), "%s/c.probe", f->dir);
  if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0) { /* /dev/null's */
    assert_int_equal(dp_target_open_file(p, 2 * MiB, 1, &t), -EINVAL);
    assert_non_null(strstr(t.err, "is a character device, not a regular"));
  }
}

static void test_empty_and_long_names(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  assert_int_equal(dp_target_open_file("", 2 * MiB, 1, &t), -EINVAL);
  assert_string_equal(t.err, "empty path");
  assert_int_equal(dp_target_open("", 2 * MiB, 0, NULL, &t), -EINVAL);
  assert_string_equal(t.err, "empty path");
  char name[400], p[800];
  memset(name, 'a', 300);
  snprintf(name + 300, sizeof(name) - 300, ".probe");
  snprintf(p, sizeof(p), "%s/%s", f->dir, name);
  assert_int_equal(dp_target_open_file(p, 2 * MiB, 1, &t), -ENAMETOOLONG);
  assert_string_equal(t.err, "probe file name is 306 bytes long, more than "
                             "the 255 a file name may have");
  assert_int_equal(entries(f->dir), 0); /* nothing made under another name */
  snprintf(name + 249, sizeof(name) - 249, ".probe"); /* exactly 255 */
  snprintf(p, sizeof(p), "%s/%s", f->dir, name);
  assert_int_equal(dp_target_open_file(p, 2 * MiB, 1, &t), 0);
  assert_string_equal(t.path, p);
  dp_target_close(&t);
}

static void test_refuses_ram_filesystems(void **state) {
  fx_t *f = *state;
  static const char *const fs[] = {"tmpfs", "ramfs"};
  for (int i = 0; i < 2; i++) {
    char mnt[600], want[700];
    snprintf(mnt, sizeof(mnt), "%s/%s", f->dir, fs[i]);
    assert_int_equal(mkdir(mnt, 0700), 0);
    if (mount("dp-test", mnt, fs[i], 0, "mode=0700") != 0)
      skip(); /* not root */
    dp_target_t t;
    int rc = dp_target_open_file(mnt, 2 * MiB, 1, &t);
    if (rc == 0)
      dp_target_close(&t);
    char err[256];
    snprintf(err, sizeof(err), "%s", t.err);
    int left = entries(mnt);
    umount(mnt);
    assert_int_equal(rc, -EMEDIUMTYPE);
    snprintf(want, sizeof(want),
             "%s is on %s: a probe file in RAM measures memory, not a disk",
             mnt, i == 0 ? "tmpfs (or devtmpfs)" : "ramfs");
    assert_string_equal(err, want);
    assert_int_equal(left, 0);
  }
}

/* Opens the probe file in f->dir read-only (laying it out), or skips the
 * test where the filesystem refuses O_DIRECT; `what` names the case. */
static void open_or_skip(fx_t *f, uint64_t size, const char *what,
                         dp_target_t *t) {
  int rc = dp_target_open_file(f->dir, size, 0, t);
  if (rc == -EINVAL && strstr(t->err, "O_DIRECT"))
    skip();
  if (rc != 0)
    fail_msg("%s: open: %s", what, t->err);
}

/* A probe file changed under a running prober is noticed by the cheap
 * per-round check: holes punched, truncated and re-extended, deleted,
 * replaced; an unchanged one passes. */
static void test_verify_notices_changes(void **state) {
  fx_t *f = *state;
  static const char *const cases[] = {"unchanged", "hole", "truncate", "delete",
                                      "replace"};
  static const char *const want[] = {NULL, "lost allocated blocks",
                                     "changed size", "deleted or replaced",
                                     "deleted or replaced"};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    dp_target_t t;
    open_or_skip(f, 4 * MiB, cases[c], &t);
    assert_int_equal(dp_target_verify(&t), 0);
    int fd = open(f->probe, O_RDWR);
    assert_true(fd >= 0);
    if (c == 1)
      assert_int_equal(
          fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, MiB, MiB),
          0);
    if (c == 2)
      assert_int_equal(ftruncate(fd, 2 * MiB), 0);
    close(fd);
    if (c == 3)
      assert_int_equal(unlink(f->probe), 0);
    if (c == 4) {
      char other[700];
      snprintf(other, sizeof(other), "%s.new", f->probe);
      fixture_write(f->dir, DP_PROBE_FILE_NAME ".new", "x");
      assert_int_equal(rename(other, f->probe), 0);
    }
    int rc = dp_target_verify(&t);
    if (want[c] == NULL) {
      assert_int_equal(rc, 0);
    } else {
      if (rc != -ESTALE || strstr(t.err, want[c]) == NULL)
        fail_msg("%s: expected -ESTALE and \"%s\", got %d \"%s\"", cases[c],
                 want[c], rc, t.err);
    }
    dp_target_close(&t);
    unlink(f->probe);
  }
}

/* Re-allocates the live probe file as an administrator's tool would:
 * "realloc" ftruncate(0) then posix_fallocate over the whole size (inode,
 * size and st_blocks kept, every extent unwritten, the header zeros);
 * "zero" a zeroed range (`fallocate -z`) over the data, header intact. */
static void reallocate(const char *probe, const char *how, uint64_t size) {
  int fd = open(probe, O_RDWR);
  assert_true(fd >= 0);
  if (strcmp(how, "realloc") == 0) {
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(posix_fallocate(fd, 0, (off_t)size), 0);
  } else {
    assert_int_equal(fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
                               MiB, (off_t)size - MiB),
                     0);
  }
  close(fd);
}

/* The file re-allocated under a running prober keeps its inode, size and
 * blocks; the per-round check still sees it (header zeros, unwritten
 * extents), says what changed, and removes it so the next open lays out a
 * new one, which then passes. */
static void test_verify_notices_reallocation(void **state) {
  fx_t *f = *state;
  static const char *const how[] = {"realloc", "zero"};
  static const char *const want[] = {"header reads as zeros",
                                     "unwritten extent at offset"};
  for (size_t c = 0; c < 2; c++) {
    dp_target_t t;
    open_or_skip(f, 4 * MiB, how[c], &t);
    if (t.no_extent_map)
      skip(); /* the extent map is what this test is about */
    struct stat before, after;
    assert_int_equal(stat(f->probe, &before), 0);
    reallocate(f->probe, how[c], 4 * MiB);
    assert_int_equal(stat(f->probe, &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(after.st_size, before.st_size);
    assert_true(after.st_blocks >=
                before.st_blocks); /* the cheap checks pass */
    int rc = dp_target_verify(&t);
    if (rc != -ESTALE || strstr(t.err, want[c]) == NULL ||
        strstr(t.err, "re-allocated") == NULL)
      fail_msg("%s: expected -ESTALE and \"%s\", got %d \"%s\"", how[c],
               want[c], rc, t.err);
    dp_target_close(&t);
    assert_int_equal(access(f->probe, F_OK), -1); /* ours: removed */
    assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 0, &t), 0);
    assert_int_equal(t.laid_out, 1);
    assert_int_equal(dp_target_verify(&t), 0);
    dp_target_close(&t);
    unlink(f->probe);
  }
}

/* Re-allocated while nothing ran (the header reads as zeros at the next
 * start): laid out again if the file is otherwise provably ours (our name,
 * mode 0600, one link, owned by us, exactly the size asked for); any of
 * those missing, still "not ours" and untouched (every path Path can name
 * has our name, so that one is not tried here). */
static void test_relays_zeroed_own_file(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  struct stat st;
  int rc = dp_target_open_file(f->dir, 4 * MiB, 1, &t);
  if (rc == -EINVAL && strstr(t.err, "O_DIRECT"))
    skip();
  assert_int_equal(rc, 0);
  dp_target_close(&t);
  reallocate(f->probe, "realloc", 4 * MiB);
  if (dp_target_open_file(f->dir, 4 * MiB, 1, &t) != 0)
    fail_msg("zeroed own file: %s", t.err);
  assert_int_equal(t.laid_out, 1);
  assert_int_equal(dp_target_verify(&t), 0);
  dp_target_close(&t);

  /* not the size asked for: not provably ours */
  reallocate(f->probe, "realloc", 4 * MiB);
  assert_int_equal(dp_target_open_file(f->dir, 8 * MiB, 1, &t), -EEXIST);
  assert_non_null(strstr(t.err, "not a diskprobe probe file"));
  /* not a mode we create */
  assert_int_equal(chmod(f->probe, 0640), 0);
  assert_int_equal(dp_target_open_file(f->dir, 4 * MiB, 1, &t), -EEXIST);
  assert_int_equal(chmod(f->probe, 0600), 0);
  /* a second name, someone else's */
  refused_not_ours(f, 4 * MiB);
  assert_int_equal(stat(f->probe, &st), 0);
  assert_int_equal(st.st_size, 4 * MiB);
  assert_true(st.st_blocks * 512 >= 4 * MiB); /* untouched */
}

/* The per-round pieces on their own: the header of a good file passes and
 * one cut short or zeroed does not; the extent map of a good file passes,
 * a hole or an unwritten range is named with its offset; a filesystem
 * without FIEMAP (tmpfs) answers -EOPNOTSUPP. */
static void test_probefile_header_and_extents(void **state) {
  fx_t *f = *state;
  dp_target_t t;
  char why[128] = "";
  int rc = dp_target_open_file(f->dir, 4 * MiB, 1, &t);
  if (rc == -EINVAL && strstr(t.err, "O_DIRECT"))
    skip();
  assert_int_equal(rc, 0);
  assert_int_equal(dp_probefile_header_verify(t.fd, 4 * MiB, t.data_offset, why,
                                              sizeof(why)),
                   0);
  assert_int_equal(dp_probefile_header_verify(t.fd, 8 * MiB, t.data_offset, why,
                                              sizeof(why)),
                   -ENODATA);
  assert_non_null(strstr(why, "no longer describes"));
  if (!t.no_extent_map) {
    assert_int_equal(dp_probefile_extents(t.fd, 4 * MiB, why, sizeof(why)), 0);
    int fd = open(f->probe, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(
        fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 2 * MiB, MiB),
        0);
    assert_int_equal(dp_probefile_extents(t.fd, 4 * MiB, why, sizeof(why)),
                     -ENODATA);
    assert_non_null(strstr(why, "unwritten extent at offset 2097152"));
    assert_int_equal(
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, MiB, MiB), 0);
    assert_int_equal(dp_probefile_extents(t.fd, 4 * MiB, why, sizeof(why)),
                     -ENODATA);
    assert_non_null(strstr(why, "hole at offset 1048576"));
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(ftruncate(fd, 4 * MiB), 0); /* sparse: no extent at all */
    assert_int_equal(dp_probefile_extents(t.fd, 4 * MiB, why, sizeof(why)),
                     -ENODATA);
    assert_non_null(strstr(why, "hole at offset 0"));
    assert_int_equal(dp_probefile_header_verify(t.fd, 4 * MiB, t.data_offset,
                                                why, sizeof(why)),
                     -ENODATA);
    assert_non_null(strstr(why, "zeros"));
    close(fd);
  }
  dp_target_close(&t);
  /* tmpfs has no extent map */
  char shm[] = "/dev/shm/dp-extents-XXXXXX";
  int fd = mkstemp(shm);
  if (fd < 0)
    return;
  unlink(shm);
  assert_int_equal(posix_fallocate(fd, 0, MiB), 0);
  assert_int_equal(dp_probefile_extents(fd, MiB, why, sizeof(why)),
                   -EOPNOTSUPP);
  close(fd);
}

/* A shutdown during the first layout stops it: -ECANCELED, and a file
 * that had no data written yet is not left behind (one with data is kept
 * to resume: test_layout_resumes); without the stop it lays out. */
static void test_layout_stops_on_shutdown(void **state) {
  fx_t *f = *state;
  atomic_int stop = 1;
  dp_target_t t;
  int rc = dp_target_open_file_stop(f->dir, 64 * MiB, 0, &stop, &t);
  if (rc == -EINVAL && strstr(t.err, "O_DIRECT"))
    skip();
  if (rc != -ECANCELED || strstr(t.err, "interrupted") == NULL)
    fail_msg("expected -ECANCELED and \"interrupted\", got %d \"%s\"", rc,
             t.err);
  assert_int_equal(access(f->probe, F_OK), -1);
  atomic_store(&stop, 0);
  assert_int_equal(dp_target_open_file_stop(f->dir, 2 * MiB, 0, &stop, &t), 0);
  assert_int_equal(t.laid_out, 1);
  dp_target_close(&t);
}

/* ---- the layout: paced, interrupted, resumed ----------------------------- */

/* A fake clock for the layout's pacing: sleeping advances it. The sleep
 * hook also watches the file grow and raises the stop flag at stop_at. */
static struct {
  uint64_t now, t0, stop_at, rate, max_sleep;
  const char *probe;
  atomic_int stop;
  unsigned sleeps, sleeps_after_stop;
  int over_rate;
  off_t size_at_stop;
} lay;

static uint64_t lay_now(void *arg) {
  (void)arg;
  return lay.now;
}

static void lay_sleep(uint64_t ns, void *arg) {
  (void)arg;
  struct stat st;
  if (atomic_load(&lay.stop))
    lay.sleeps_after_stop++;
  lay.sleeps++;
  lay.max_sleep = ns > lay.max_sleep ? ns : lay.max_sleep;
  /* what is on disk may run ahead of the rate by at most one chunk */
  if (stat(lay.probe, &st) == 0 &&
      (double)(st.st_size - 4096) >
          (double)lay.rate * (double)(lay.now - lay.t0) / 1e9 + 1.0 * MiB)
    lay.over_rate = 1;
  lay.now += ns;
  if (lay.stop_at && lay.now >= lay.stop_at && !atomic_load(&lay.stop)) {
    atomic_store(&lay.stop, 1);
    lay.size_at_stop = stat(lay.probe, &st) == 0 ? st.st_size : -1;
  }
}

static dp_layout_conf_t lay_conf(fx_t *f, uint64_t rate, uint64_t stop_after) {
  memset(&lay, 0, sizeof(lay));
  lay.now = lay.t0 = 1000 * 1000000000ull;
  lay.rate = rate;
  lay.probe = f->probe;
  lay.stop_at = stop_after ? lay.t0 + stop_after : 0;
  dp_layout_conf_t lc = {.stop = &lay.stop,
                         .rate_bytes_per_s = rate,
                         .now_ns = lay_now,
                         .sleep_ns = lay_sleep};
  return lc;
}

/* FNV-1a of bytes [from, to) of a file. */
static uint64_t hash_range(const char *p, uint64_t from, uint64_t to) {
  int fd = open(p, O_RDONLY);
  assert_true(fd >= 0);
  uint64_t x = 14695981039346656037ull;
  static unsigned char buf[65536];
  for (uint64_t off = from; off < to;) {
    size_t want = to - off < sizeof(buf) ? (size_t)(to - off) : sizeof(buf);
    ssize_t n = pread(fd, buf, want, (off_t)off);
    assert_true(n > 0);
    for (ssize_t i = 0; i < n; i++)
      x = (x ^ buf[i]) * 1099511628211ull;
    off += (uint64_t)n;
  }
  close(fd);
  return x;
}

/* Header field at byte `at` (see target.c's probe_header_t). */
static uint64_t header_u64(const char *p, off_t at) {
  uint64_t v = 0;
  int fd = open(p, O_RDONLY);
  assert_true(fd >= 0);
  assert_int_equal(pread(fd, &v, 8, at), 8);
  close(fd);
  return v;
}
#define LAID_AT 56     /* laid_bytes */
#define COMPLETE_AT 48 /* complete (u32) */

/* LayoutRate: on a fake clock, the bytes on disk never run more than one
 * chunk ahead of the rate, the layout takes as long as the rate says, and
 * no sleep is longer than DP_LAYOUT_SLEEP_NS (a stop is seen that soon). */
static void test_layout_paced(void **state) {
  fx_t *f = *state;
  const uint64_t rate = 4 * MiB, size = 8 * MiB;
  dp_layout_conf_t lc = lay_conf(f, rate, 0);
  dp_target_t t;
  int rc = dp_target_open_file_layout(f->dir, size, 1, &lc, &t);
  if (rc == -EINVAL && strstr(t.err, "O_DIRECT"))
    skip();
  assert_int_equal(rc, 0);
  assert_int_equal(t.laid_out, 1);
  dp_target_close(&t);
  assert_false(lay.over_rate);
  assert_true(lay.sleeps > 0);
  assert_true(lay.max_sleep <= DP_LAYOUT_SLEEP_NS);
  /* the last chunk (1 MiB less the header) is written without a wait */
  double want_s = (double)(size - 1 * MiB) / (double)rate;
  double took_s = (double)(lay.now - lay.t0) / 1e9;
  if (took_s < want_s - 1e-6 || took_s > want_s + 1e-6)
    fail_msg("%llu bytes at %llu B/s took %.6f s on the fake clock, expected "
             "%.6f s",
             (unsigned long long)size, (unsigned long long)rate, took_s,
             want_s);
  /* unbounded: no sleep at all */
  unlink(f->probe);
  lc = lay_conf(f, 0, 0);
  assert_int_equal(dp_target_open_file_layout(f->dir, size, 1, &lc, &t), 0);
  dp_target_close(&t);
  assert_int_equal(lay.sleeps, 0);
}

/* A stop during a paced layout ends it at once and keeps what was laid;
 * the next open (read-only here) resumes at the recorded point: the data
 * before it untouched, the file complete and fully allocated, and reused
 * as intact afterwards. A header that does not add up is laid again. */
static void test_layout_resumes(void **state) {
  fx_t *f = *state;
  const uint64_t size = 8 * MiB;
  dp_layout_conf_t lc = lay_conf(f, 4 * MiB, 1000000000ull); /* stop at 1 s */
  dp_target_t t;
  int rc = dp_target_open_file_layout(f->dir, size, 0, &lc, &t);
  if (rc == -EINVAL && strstr(t.err, "O_DIRECT"))
    skip();
  if (rc != -ECANCELED || strstr(t.err, "resumes") == NULL)
    fail_msg("expected -ECANCELED and \"resumes\", got %d \"%s\"", rc, t.err);
  assert_int_equal(lay.sleeps_after_stop, 0);
  struct stat st;
  assert_int_equal(stat(f->probe, &st), 0);
  assert_int_equal(st.st_size, lay.size_at_stop); /* nothing written after */
  assert_int_equal(st.st_mode & 07777, 0600);
  uint64_t laid = header_u64(f->probe, LAID_AT);
  /* 1 s at 4 MiB/s: 4 MiB and the chunk ahead of the rate at most */
  if (laid <= 4096 || laid > 5 * MiB + 4096 || laid % 4096 != 0 ||
      laid != t.resumed_bytes || laid > (uint64_t)st.st_size)
    fail_msg("recorded progress %llu (err says %llu, file %lld bytes)",
             (unsigned long long)laid, (unsigned long long)t.resumed_bytes,
             (long long)st.st_size);
  uint64_t before = hash_range(f->probe, 4096, laid);

  lc = lay_conf(f, 0, 0);
  rc = dp_target_open_file_layout(f->dir, size, 0, &lc, &t);
  if (rc != 0)
    fail_msg("resume: %d %s", rc, t.err);
  assert_int_equal(t.laid_out, 1);
  assert_int_equal(t.resumed_bytes, laid);
  assert_int_equal(t.writable, 0);
  assert_int_equal(fcntl(t.fd, F_GETFL) & O_ACCMODE, O_RDONLY);
  assert_int_equal(lseek(t.fd, 0, SEEK_HOLE), size);
  dp_target_close(&t);
  assert_true(hash_range(f->probe, 4096, laid) == before);
  assert_int_equal(header_u64(f->probe, COMPLETE_AT) & 0xffffffffu, 1);
  assert_int_equal(header_u64(f->probe, LAID_AT), size);
  assert_int_equal(dp_target_open_file(f->dir, size, 1, &t), 0);
  assert_int_equal(t.laid_out, 0); /* intact: reused */
  dp_target_close(&t);

  /* interrupted again, then the recorded progress tampered with (the sum
   * no longer matches): not trusted, laid out from the start */
  unlink(f->probe);
  lc = lay_conf(f, 4 * MiB, 1000000000ull);
  assert_int_equal(dp_target_open_file_layout(f->dir, size, 1, &lc, &t),
                   -ECANCELED);
  int fd = open(f->probe, O_RDWR);
  uint64_t more = header_u64(f->probe, LAID_AT) + 1 * MiB;
  assert_int_equal(pwrite(fd, &more, 8, LAID_AT), 8);
  close(fd);
  lc = lay_conf(f, 0, 0);
  assert_int_equal(dp_target_open_file_layout(f->dir, size, 1, &lc, &t), 0);
  assert_int_equal(t.laid_out, 1);
  assert_int_equal(t.resumed_bytes, 0);
  dp_target_close(&t);

  /* interrupted, then given group/other access: refused, never resumed */
  unlink(f->probe);
  lc = lay_conf(f, 4 * MiB, 1000000000ull);
  assert_int_equal(dp_target_open_file_layout(f->dir, size, 1, &lc, &t),
                   -ECANCELED);
  assert_int_equal(chmod(f->probe, 0644), 0);
  assert_int_equal(dp_target_open_file(f->dir, size, 1, &t), -EPERM);
}

/* dp_path_join: the join, the root without a doubled slash, and a path one
 * byte too long refused rather than cut. */
static void test_path_join(void **state) {
  (void)state;
  char out[8];
  assert_int_equal(dp_path_join(out, sizeof(out), "/a", "bc"), 0);
  assert_string_equal(out, "/a/bc");
  assert_int_equal(dp_path_join(out, sizeof(out), "/", "abc"), 0);
  assert_string_equal(out, "/abc");
  assert_int_equal(dp_path_join(out, sizeof(out), "/ab", "def"), 0);
  assert_string_equal(out, "/ab/def"); /* 7 bytes and the NUL: fits */
  assert_int_equal(dp_path_join(out, sizeof(out), "/ab", "defg"),
                   -ENAMETOOLONG);
}

int main(void) {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(test_layout_fully_allocated_random),
      T(test_verify_notices_changes),
      T(test_verify_notices_reallocation),
      T(test_relays_zeroed_own_file),
      T(test_probefile_header_and_extents),
      T(test_layout_stops_on_shutdown),
      T(test_layout_paced),
      T(test_layout_resumes),
      T(test_explicit_probe_path_and_new_dir),
      T(test_refuses_symlink),
      T(test_symlink_text_escaped),
      T(test_device_not_block),
      T(test_refuses_foreign_file),
      T(test_refuses_hardlinked_probe_file),
      T(test_refuses_unsafe_directory),
      T(test_relays_incomplete_or_holey_file),
      T(test_odirect_refused),
      T(test_no_space),
      T(test_missing_path_and_file_as_dir),
      T(test_refuses_redirected_parent),
      T(test_relative_path_is_resolved),
      T(test_refuses_file_held_by_another_process),
      T(test_read_only_unless_writable),
      T(test_relays_truncated_own_file),
      T(test_header_records_data_offset),
      T(test_large_sector_devices),
      T(test_names_special_files),
      T(test_empty_and_long_names),
      T(test_refuses_ram_filesystems),
      cmocka_unit_test(test_path_join),
  };
  return cmocka_run_group_tests_name("target", tests, NULL, NULL);
}
