/* blockdev.c - block devices from sysfs; see blockdev.h. */
#define _GNU_SOURCE
#include "blockdev.h"
#include "units.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define RESOLVE_DEPTH_MAX 8

static const char *root_of(const char *sysroot) {
  return sysroot ? sysroot : DP_SYSROOT_DEFAULT;
}

/* A path "a/b/c" from its parts; -ENAMETOOLONG when it does not fit. */
static int join(char *out, size_t len, const char *a, const char *b,
                const char *c) {
  int n = snprintf(out, len, "%s/%s/%s", a, b, c);
  return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The first line of a file, trailing whitespace removed. A line longer
 * than len - 1 bytes: -EOVERFLOW. */
static int read_line(const char *path, char *buf, size_t len) {
  if (len == 0)
    return -EINVAL;
  buf[0] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  /* sysfs attributes are at most a page; read one byte more than fits so
   * that a line that does not fit is seen */
  char tmp[4097];
  ssize_t n;
  do
    n = read(fd, tmp, sizeof(tmp) - 1);
  while (n < 0 && errno == EINTR);
  int e = errno;
  close(fd);
  if (n < 0)
    return -e;
  tmp[n] = '\0';
  char *nl = memchr(tmp, '\n', (size_t)n);
  size_t end = nl ? (size_t)(nl - tmp) : (size_t)n;
  while (end > 0 && isspace((unsigned char)tmp[end - 1]))
    end--;
  if (end >= len)
    return -EOVERFLOW;
  memcpy(buf, tmp, end);
  buf[end] = '\0';
  return 0;
}

static int read_u64(const char *path, uint64_t *out) {
  char buf[32];
  int rc = read_line(path, buf, sizeof(buf));
  if (rc == -EOVERFLOW)
    return -ERANGE; /* more than 20 digits, or not a number at all */
  return rc < 0 ? rc : dp_parse_uint(buf, out);
}

int dp_blockdev_attr(const char *sysroot, const char *name, const char *attr,
                     char *buf, size_t len) {
  char p[PATH_MAX];
  if (len > 0)
    buf[0] = '\0';
  int n =
      snprintf(p, sizeof(p), "%s/block/%s/%s", root_of(sysroot), name, attr);
  if (n < 0 || (size_t)n >= sizeof(p))
    return -ENAMETOOLONG;
  return read_line(p, buf, len);
}

int dp_blockdev_attr_u64(const char *sysroot, const char *name,
                         const char *attr, uint64_t *out) {
  char buf[32];
  int rc = dp_blockdev_attr(sysroot, name, attr, buf, sizeof(buf));
  if (rc == -EOVERFLOW)
    return -ERANGE;
  return rc < 0 ? rc : dp_parse_uint(buf, out);
}

int dp_blockdev_sectors(const char *sysroot, const char *name,
                        uint64_t *sectors) {
  char p[PATH_MAX];
  int n =
      snprintf(p, sizeof(p), "%s/class/block/%s/size", root_of(sysroot), name);
  if (n < 0 || (size_t)n >= sizeof(p))
    return -ENAMETOOLONG;
  return read_u64(p, sectors);
}

/* ---- resolution ---------------------------------------------------------
 */

/* DIR/NAME as an integer; -1 when absent or not a number. */
static long long dir_attr(const char *dir, const char *name) {
  char p[PATH_MAX];
  uint64_t v;
  if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p) ||
      read_u64(p, &v) < 0 || v > LLONG_MAX)
    return -1;
  return (long long)v;
}

/* "MAJ:MIN" exactly. */
static int parse_devnum(const char *s, unsigned *maj, unsigned *min) {
  const char *colon = strchr(s, ':');
  char a[16];
  uint64_t x, y;
  if (colon == NULL || (size_t)(colon - s) >= sizeof(a))
    return -EINVAL;
  memcpy(a, s, (size_t)(colon - s));
  a[colon - s] = '\0';
  if (dp_parse_uint(a, &x) < 0 || strchr(a, ' ') != NULL ||
      dp_parse_uint(colon + 1, &y) < 0 || x > UINT_MAX || y > UINT_MAX)
    return -EINVAL;
  *maj = (unsigned)x;
  *min = (unsigned)y;
  return 0;
}

static int read_devnum(const char *dir, unsigned *maj, unsigned *min) {
  char p[PATH_MAX], buf[32];
  if (snprintf(p, sizeof(p), "%s/dev", dir) >= (int)sizeof(p))
    return -ENAMETOOLONG;
  int rc = read_line(p, buf, sizeof(buf));
  return rc < 0 ? rc : parse_devnum(buf, maj, min);
}

/* The first (by name) device a stacked device (device-mapper, MD) is built
 * on, from <dir>/slaves/: 0 and its number, or -ENOENT for a device that
 * is not stacked. */
static int first_slave(const char *dir, unsigned *maj, unsigned *min) {
  char p[PATH_MAX], best[256] = "";
  if (snprintf(p, sizeof(p), "%s/slaves", dir) >= (int)sizeof(p))
    return -ENAMETOOLONG;
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
  if (join(slave, sizeof(slave), dir, "slaves", best) < 0)
    return -ENAMETOOLONG;
  return read_devnum(slave, maj, min);
}

void dp_blockdev_unknown(dp_blockdev_t *out, unsigned major, unsigned minor) {
  memset(out, 0, sizeof(*out));
  out->rotational = -1;
  out->major = major;
  out->minor = minor;
}

/* The last component of a path. */
static void base_of(const char *path, char *out, size_t len) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof(tmp), "%s", path);
  snprintf(out, len, "%s", basename(tmp));
}

static int resolve_depth(const char *sysroot, unsigned major, unsigned minor,
                         dp_blockdev_t *out, int depth) {
  dp_blockdev_unknown(out, 0, 0);
  char link[PATH_MAX], real[PATH_MAX];
  if (snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sysroot, major,
               minor) >= (int)sizeof(link))
    return -ENAMETOOLONG;
  if (realpath(link, real) == NULL)
    return errno == ENOENT ? -ENODEV : -errno;
  out->major = major;
  out->minor = minor;
  base_of(real, out->name, sizeof(out->name));

  char diskdir[PATH_MAX], tmp[PATH_MAX];
  snprintf(tmp, sizeof(tmp), "%s", real);
  out->partition = dir_attr(real, "partition") > 0;
  snprintf(diskdir, sizeof(diskdir), "%s",
           out->partition ? dirname(tmp) : real);
  base_of(diskdir, out->disk, sizeof(out->disk));
  if (read_devnum(diskdir, &out->disk_major, &out->disk_minor) < 0) {
    out->disk_major = major;
    out->disk_minor = minor;
  }
  /* A device-mapper/LVM/MD device: the physical disk is below it. */
  unsigned smaj, smin;
  dp_blockdev_t below;
  if (depth < RESOLVE_DEPTH_MAX && first_slave(diskdir, &smaj, &smin) == 0 &&
      resolve_depth(sysroot, smaj, smin, &below, depth + 1) == 0) {
    snprintf(out->disk, sizeof(out->disk), "%s", below.disk);
    out->disk_major = below.disk_major;
    out->disk_minor = below.disk_minor;
    out->stacked = 1;
  }
  long long lbs = dir_attr(diskdir, "queue/logical_block_size");
  out->logical_block_size = lbs > 0 && lbs <= UINT32_MAX ? (uint32_t)lbs : 0;
  long long rot = dir_attr(diskdir, "queue/rotational");
  out->rotational = rot < 0 ? -1 : rot > 0;
  return 0;
}

int dp_blockdev_resolve_at(const char *sysroot, unsigned major, unsigned minor,
                           dp_blockdev_t *out) {
  int rc = resolve_depth(root_of(sysroot), major, minor, out, 0);
  if (rc < 0)
    dp_blockdev_unknown(out, major, minor);
  return rc;
}

/* ---- what a disk is -------------------------------------------------------
 */

int dp_blockdev_is_whole_disk(const char *sysroot, const char *name) {
  uint64_t sectors;
  char buf[DP_BLOCKDEV_NAME_MAX];
  if (dp_blockdev_attr_u64(sysroot, name, "size", &sectors) < 0)
    return 0; /* a partition has no /sys/block/NAME */
  if (dp_blockdev_attr(sysroot, name, "dm/name", buf, sizeof(buf)) != -ENOENT)
    return 0; /* present (whatever it holds): device-mapper */
  return strncmp(name, "md", 2) != 0;
}

/* The target of SYSROOT/block/DISK[/SUB] (a symlink); 0 or -errno. */
static int link_of(const char *sysroot, const char *disk, const char *sub,
                   char *buf, size_t len) {
  char p[PATH_MAX];
  int n = snprintf(p, sizeof(p), "%s/block/%s%s%s", root_of(sysroot), disk,
                   sub ? "/" : "", sub ? sub : "");
  if (n < 0 || (size_t)n >= sizeof(p))
    return -ENAMETOOLONG;
  ssize_t got = readlink(p, buf, len - 1);
  if (got <= 0)
    return got < 0 ? -errno : -EINVAL;
  buf[got] = '\0';
  return 0;
}

static int has_prefix(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

dp_media_t dp_blockdev_media(const char *sysroot, const char *disk) {
  char buf[PATH_MAX];
  if (has_prefix(disk, "nvme"))
    return DP_MEDIA_NVME;
  /* the driver behind the disk: virtio_blk, xen-blkfront, an iSCSI
   * session (its device path holds "session") */
  if (link_of(sysroot, disk, "device/driver", buf, sizeof(buf)) == 0 &&
      (strstr(buf, "virtio") || strstr(buf, "xen") || strstr(buf, "vbd")))
    return DP_MEDIA_VIRTUAL;
  if (link_of(sysroot, disk, NULL, buf, sizeof(buf)) == 0 &&
      (strstr(buf, "/session") || strstr(buf, "virtio") ||
       strstr(buf, "/nbd") || strstr(buf, "/rbd")))
    return DP_MEDIA_VIRTUAL;
  if (has_prefix(disk, "vd") || has_prefix(disk, "xvd") ||
      has_prefix(disk, "loop") || /* a file on some other disk */
      has_prefix(disk, "nbd") || has_prefix(disk, "rbd"))
    return DP_MEDIA_VIRTUAL;
  uint64_t rot;
  if (dp_blockdev_attr_u64(sysroot, disk, "queue/rotational", &rot) == 0)
    return rot == 1 ? DP_MEDIA_HDD : DP_MEDIA_SSD;
  return DP_MEDIA_UNKNOWN;
}

/* The first of two attributes (b may be NULL) that reads, escaped
 * (dp_escape): a model, serial or firmware string goes into log lines
 * and messages, and sysfs text is the device's; "" when neither reads. */
static void text_attr(const char *sysroot, const char *disk, const char *a,
                      const char *b, char *buf, size_t len) {
  char raw[DP_BLOCKDEV_SERIAL_MAX]; /* the largest of the three */
  size_t n = len < sizeof(raw) ? len : sizeof(raw);
  if (dp_blockdev_attr(sysroot, disk, a, raw, n) < 0 &&
      (b == NULL || dp_blockdev_attr(sysroot, disk, b, raw, n) < 0))
    raw[0] = '\0';
  dp_escape(raw, buf, len);
}

static uint32_t attr_u32(const char *sysroot, const char *disk,
                         const char *attr) {
  uint64_t v;
  return dp_blockdev_attr_u64(sysroot, disk, attr, &v) == 0 && v <= UINT32_MAX
             ? (uint32_t)v
             : 0;
}

int dp_blockdev_info(const char *sysroot, const char *disk,
                     dp_blockdev_info_t *out) {
  memset(out, 0, sizeof(*out));
  out->rotational = -1;
  /* the name alone can say (nvme*, vd*, loop*): even without sysfs */
  out->media = dp_blockdev_media(sysroot, disk);
  char p[PATH_MAX];
  if (join(p, sizeof(p), root_of(sysroot), "block", disk) < 0 ||
      access(p, F_OK) != 0)
    return -ENODEV;
  text_attr(sysroot, disk, "device/model", NULL, out->model,
            sizeof(out->model));
  text_attr(sysroot, disk, "device/serial", "device/wwid", out->serial,
            sizeof(out->serial));
  text_attr(sysroot, disk, "device/firmware_rev", "device/rev", out->firmware,
            sizeof(out->firmware));
  uint64_t v;
  if (dp_blockdev_attr_u64(sysroot, disk, "size", &v) == 0 &&
      v <= UINT64_MAX / 512)
    out->size_bytes = v * 512;
  out->logical_block_bytes =
      attr_u32(sysroot, disk, "queue/logical_block_size");
  out->physical_block_bytes =
      attr_u32(sysroot, disk, "queue/physical_block_size");
  if (dp_blockdev_attr_u64(sysroot, disk, "queue/rotational", &v) == 0)
    out->rotational = v > 0;
  return 0;
}

/* ---- a path's filesystem without a block device of its own ---------------
 */

#define MOUNT_DEPTH_MAX 4 /* overlay upperdir on overlay ... */

/* Undoes mountinfo's octal escapes (\040 a space, \054 a comma ...) in
 * place. */
static void unescape(char *s) {
  char *o = s;
  for (const char *p = s; *p; p++) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' &&
        p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
      *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
      p += 3;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
}

/* The mount of a mountinfo file that holds `path`: the longest mount point
 * that is path or a parent of it (the last such line: a later mount on the
 * same point hides the earlier). */
typedef struct {
  char point[PATH_MAX];
  char fstype[32];
  char source[PATH_MAX];
  char upper[PATH_MAX];  /* overlay: its upperdir, "" if none */
  unsigned major, minor; /* st_dev of its root */
} mount_t;

/* 1 if mount point mp holds path. */
static int holds(const char *mp, const char *path) {
  size_t n = strlen(mp);
  if (strcmp(mp, "/") == 0)
    return path[0] == '/';
  return strncmp(path, mp, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The value of option `key` ("upperdir") in a comma-separated option list
 * (commas in values are escaped as \054), unescaped. */
static int mount_opt(const char *opts, const char *key, char *buf, size_t len) {
  size_t kl = strlen(key);
  for (const char *p = opts; *p;) {
    const char *end = strchr(p, ',');
    size_t l = end ? (size_t)(end - p) : strlen(p);
    if (l > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
      if (l - kl - 1 >= len)
        return -ENAMETOOLONG;
      memcpy(buf, p + kl + 1, l - kl - 1);
      buf[l - kl - 1] = '\0';
      unescape(buf);
      return 0;
    }
    p += l + (end != NULL);
  }
  return -ENOENT;
}

/* Splits one mountinfo line into m if its mount point holds path: 1, else
 * 0 (another mount, or a line that does not parse). */
static int mount_line(char *line, const char *path, mount_t *m) {
  char *tok[64], *save = NULL;
  size_t n = 0;
  for (char *p = strtok_r(line, " \n", &save); p && n < 64;
       p = strtok_r(NULL, " \n", &save))
    tok[n++] = p;
  size_t sep = 6; /* "-" after the optional fields */
  while (sep < n && strcmp(tok[sep], "-") != 0)
    sep++;
  if (n < 5 || sep + 2 >= n)
    return 0;
  unescape(tok[4]);
  if (!holds(tok[4], path) || parse_devnum(tok[2], &m->major, &m->minor) < 0)
    return 0;
  snprintf(m->point, sizeof(m->point), "%s", tok[4]);
  snprintf(m->fstype, sizeof(m->fstype), "%s", tok[sep + 1]);
  snprintf(m->source, sizeof(m->source), "%s", tok[sep + 2]);
  unescape(m->source);
  m->upper[0] = '\0';
  if (sep + 3 < n &&
      mount_opt(tok[sep + 3], "upperdir", m->upper, sizeof(m->upper)) < 0)
    m->upper[0] = '\0';
  return 1;
}

static int find_mount(const char *mountinfo, const char *path, mount_t *out) {
  FILE *f = fopen(mountinfo, "re");
  if (f == NULL)
    return -errno;
  char *line = NULL;
  size_t cap = 0;
  int found = 0;
  mount_t *m = malloc(sizeof(*m));
  if (m == NULL) {
    fclose(f);
    return -ENOMEM;
  }
  while (getline(&line, &cap, f) > 0)
    if (mount_line(line, path, m) &&
        (!found || strlen(m->point) >= strlen(out->point))) {
      *out = *m;
      found = 1;
    }
  free(m);
  free(line);
  fclose(f);
  return found ? 0 : -ENOENT;
}

/* SYSROOT/class/block/NAME/dev as a number. */
static int class_devnum(const char *sysroot, const char *name, unsigned *maj,
                        unsigned *min) {
  char dir[PATH_MAX];
  int n = snprintf(dir, sizeof(dir), "%s/class/block/%s", sysroot, name);
  if (n < 0 || (size_t)n >= sizeof(dir))
    return -ENAMETOOLONG;
  return read_devnum(dir, maj, min);
}

static int cmp_name(const void *a, const void *b) {
  return strcmp((const char *)a, (const char *)b);
}

/* The devices of the btrfs filesystem that `source` (the mount's source, a
 * device node) belongs to, from SYSROOT/fs/btrfs/FSID/devices/: sorted by
 * name into names[max][NAME_MAX]; how many, or -ENODEV. */
#define BTRFS_MEMBERS_MAX 16
static int btrfs_members(const char *sysroot, const char *source,
                         char (*names)[DP_BLOCKDEV_NAME_MAX]) {
  char base[DP_BLOCKDEV_NAME_MAX], p[PATH_MAX];
  base_of(source, base, sizeof(base));
  struct stat st;
  unsigned smaj = 0, smin = 0, maj, min;
  int by_number = stat(source, &st) == 0 && S_ISBLK(st.st_mode);
  if (by_number) {
    smaj = major(st.st_rdev);
    smin = minor(st.st_rdev);
  }
  if (snprintf(p, sizeof(p), "%s/fs/btrfs", sysroot) >= (int)sizeof(p))
    return -ENAMETOOLONG;
  DIR *fs = opendir(p);
  if (fs == NULL)
    return -ENODEV;
  int found = -ENODEV;
  struct dirent *fe;
  while (found < 0 && (fe = readdir(fs)) != NULL) {
    char devs[PATH_MAX];
    if (fe->d_name[0] == '.' || snprintf(devs, sizeof(devs), "%s/%s/devices", p,
                                         fe->d_name) >= (int)sizeof(devs))
      continue;
    DIR *d = opendir(devs);
    if (d == NULL)
      continue;
    int n = 0, ours = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < BTRFS_MEMBERS_MAX) {
      if (de->d_name[0] == '.' || strlen(de->d_name) >= DP_BLOCKDEV_NAME_MAX)
        continue;
      snprintf(names[n++], DP_BLOCKDEV_NAME_MAX, "%s", de->d_name);
      ours |=
          strcmp(de->d_name, base) == 0 ||
          (by_number && class_devnum(sysroot, de->d_name, &maj, &min) == 0 &&
           maj == smaj && min == smin);
    }
    closedir(d);
    if (ours && n > 0) {
      qsort(names, (size_t)n, sizeof(names[0]), cmp_name);
      found = n;
    }
  }
  closedir(fs);
  return found;
}

static int resolve_mount(const char *sysroot, const char *mountinfo,
                         const char *path, dp_blockdev_t *out, char *members,
                         size_t mlen, int depth) {
  mount_t *m = malloc(sizeof(*m));
  if (m == NULL)
    return -ENOMEM;
  int rc = find_mount(mountinfo, path, m);
  if (rc == 0 && strcmp(m->fstype, "overlay") == 0) {
    /* the probe file is written, so it lives in the upper layer */
    rc = depth >= MOUNT_DEPTH_MAX ? -ELOOP
         : m->upper[0] == '\0'
             ? -ENODEV /* a read-only overlay: nothing to write to */
             : resolve_mount(sysroot, mountinfo, m->upper, out, members, mlen,
                             depth + 1);
  } else if (rc == 0 && strcmp(m->fstype, "btrfs") == 0) {
    char names[BTRFS_MEMBERS_MAX][DP_BLOCKDEV_NAME_MAX];
    unsigned maj, min;
    int n = btrfs_members(sysroot, m->source, names);
    rc = n < 0 ? n : class_devnum(sysroot, names[0], &maj, &min);
    if (rc == 0)
      rc = resolve_depth(sysroot, maj, min, out, 0);
    /* the first by name is probed; the others are named */
    for (int i = 0; rc == 0 && i < n && members != NULL && n > 1; i++) {
      size_t used = strlen(members);
      snprintf(members + used, mlen - used, "%s%s", i ? " " : "", names[i]);
    }
  } else if (rc == 0) {
    /* another filesystem (an overlay's upper layer on ext4): its number */
    rc = resolve_depth(sysroot, m->major, m->minor, out, 0);
  }
  free(m);
  return rc == -ENOENT ? -ENODEV : rc;
}

int dp_blockdev_resolve_mount_at(const char *sysroot, const char *mountinfo,
                                 const char *path, dp_blockdev_t *out,
                                 char *members, size_t mlen) {
  if (members != NULL && mlen > 0)
    members[0] = '\0';
  int rc = resolve_mount(root_of(sysroot),
                         mountinfo ? mountinfo : DP_MOUNTINFO_DEFAULT, path,
                         out, members, mlen, 0);
  if (rc < 0) {
    dp_blockdev_unknown(out, 0, 0);
    if (members != NULL && mlen > 0)
      members[0] = '\0';
  }
  return rc;
}

int dp_blockdev_loop_backing(const char *sysroot, const char *mountinfo,
                             const char *loop, dp_blockdev_t *out) {
  char path[PATH_MAX];
  dp_blockdev_unknown(out, 0, 0);
  int rc =
      dp_blockdev_attr(sysroot, loop, "loop/backing_file", path, sizeof(path));
  if (rc < 0)
    return rc;
  size_t n = strlen(path);
  const char *del = " (deleted)";
  if (n > strlen(del) && strcmp(path + n - strlen(del), del) == 0)
    path[n - strlen(del)] = '\0';
  if (path[0] != '/')
    return -ENOENT;
  return dp_blockdev_resolve_mount_at(sysroot, mountinfo, path, out, NULL, 0);
}

/* ---- identity -------------------------------------------------------------
 */

/* The SCSI unit serial number page: byte 1 is 0x80, bytes 2-3 the length
 * of the ASCII serial that follows the 4-byte header (space-padded). */
static void vpd_serial(const char *sysroot, const char *disk, char *buf,
                       size_t len) {
  char p[PATH_MAX], raw[DP_BLOCKDEV_SERIAL_MAX + 4];
  buf[0] = '\0';
  if (snprintf(p, sizeof(p), "%s/block/%s/device/vpd_pg80", root_of(sysroot),
               disk) >= (int)sizeof(p))
    return;
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  ssize_t n = read(fd, raw, sizeof(raw) - 1);
  close(fd);
  if (n < 4 || (unsigned char)raw[1] != 0x80)
    return;
  size_t want = (size_t)((unsigned char)raw[2] << 8 | (unsigned char)raw[3]);
  size_t have = (size_t)n - 4 < want ? (size_t)n - 4 : want;
  char *s = raw + 4;
  s[have] = '\0';
  while (*s == ' ')
    s++;
  size_t end = strlen(s);
  while (end > 0 && isspace((unsigned char)s[end - 1]))
    end--;
  s[end] = '\0';
  dp_escape(s, buf, len);
}

/* The whole disk a member directory (a slave's real path) is on: itself,
 * or its parent when it is a partition. */
static void disk_of_dir(const char *dir, char *out, size_t len) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof(tmp), "%s", dir);
  base_of(dir_attr(dir, "partition") > 0 ? dirname(tmp) : dir, out, len);
}

static void add_member(dp_disk_identity_t *id, const char *disk) {
  size_t have = id->nmembers < DP_BLOCKDEV_MEMBERS_MAX
                    ? id->nmembers
                    : DP_BLOCKDEV_MEMBERS_MAX;
  for (size_t i = 0; i < have; i++)
    if (strcmp(id->members[i], disk) == 0)
      return;
  /* kept sorted by name: insert before the first greater one */
  size_t at = 0;
  while (at < have && strcmp(id->members[at], disk) < 0)
    at++;
  if (have == DP_BLOCKDEV_MEMBERS_MAX && at == have) {
    id->nmembers++;
    return;
  }
  size_t last = have < DP_BLOCKDEV_MEMBERS_MAX ? have : have - 1;
  memmove(id->members[at + 1], id->members[at],
          (last - at) * sizeof(id->members[0]));
  snprintf(id->members[at], sizeof(id->members[at]), "%s", disk);
  id->nmembers++;
}

/* The whole disks below stacked device directory DIR (its slaves/,
 * followed down through stacks of stacks). */
static void collect_members(const char *dir, dp_disk_identity_t *id,
                            int depth) {
  char p[PATH_MAX];
  if (depth >= RESOLVE_DEPTH_MAX ||
      snprintf(p, sizeof(p), "%s/slaves", dir) >= (int)sizeof(p))
    return;
  DIR *d = opendir(p);
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    char link[PATH_MAX], real[PATH_MAX], disk[DP_BLOCKDEV_NAME_MAX];
    if (de->d_name[0] == '.' ||
        join(link, sizeof(link), dir, "slaves", de->d_name) < 0 ||
        realpath(link, real) == NULL)
      continue;
    char below[PATH_MAX];
    DIR *s =
        snprintf(below, sizeof(below), "%s/slaves", real) < (int)sizeof(below)
            ? opendir(below)
            : NULL;
    int stacked = 0;
    if (s != NULL) {
      struct dirent *e;
      while (!stacked && (e = readdir(s)) != NULL)
        stacked = e->d_name[0] != '.';
      closedir(s);
    }
    if (stacked) {
      collect_members(real, id, depth + 1);
      continue;
    }
    disk_of_dir(real, disk, sizeof(disk));
    add_member(id, disk);
  }
  closedir(d);
}

/* A stack's model and media: its members', when they all agree. */
static void members_agree(const char *sysroot, dp_disk_identity_t *id) {
  size_t n = id->nmembers < DP_BLOCKDEV_MEMBERS_MAX ? id->nmembers
                                                    : DP_BLOCKDEV_MEMBERS_MAX;
  for (size_t i = 0; i < n; i++) {
    dp_blockdev_info_t m;
    (void)dp_blockdev_info(sysroot, id->members[i], &m);
    if (i == 0) {
      snprintf(id->model, sizeof(id->model), "%s", m.model);
      id->media = m.media;
      continue;
    }
    if (strcmp(id->model, m.model) != 0)
      id->model[0] = '\0';
    if (id->media != m.media)
      id->media = DP_MEDIA_UNKNOWN;
  }
}

int dp_blockdev_identity(const char *sysroot, const char *name,
                         dp_disk_identity_t *out) {
  memset(out, 0, sizeof(*out));
  snprintf(out->disk, sizeof(out->disk), "%s", name);
  char link[PATH_MAX], real[PATH_MAX];
  /* a partition is known under class/block only; a whole disk under both */
  if (join(link, sizeof(link), root_of(sysroot), "class/block", name) < 0)
    return -ENAMETOOLONG;
  if (realpath(link, real) == NULL) {
    if (join(link, sizeof(link), root_of(sysroot), "block", name) < 0)
      return -ENAMETOOLONG;
    if (realpath(link, real) == NULL) {
      out->media = dp_blockdev_media(sysroot, name);
      return -ENODEV;
    }
  }
  disk_of_dir(real, out->disk, sizeof(out->disk));
  if (dir_attr(real, "partition") > 0) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", real);
    snprintf(real, sizeof(real), "%s", dirname(tmp));
  }
  dp_blockdev_info_t in;
  (void)dp_blockdev_info(sysroot, out->disk, &in);
  out->media = in.media;
  out->capacity_bytes = in.size_bytes;
  out->logical_block_bytes = in.logical_block_bytes;
  out->physical_block_bytes = in.physical_block_bytes;
  collect_members(real, out, 0);
  if (out->nmembers > 0) {
    members_agree(sysroot, out);
    return 0;
  }
  snprintf(out->model, sizeof(out->model), "%s", in.model);
  snprintf(out->firmware, sizeof(out->firmware), "%s", in.firmware);
  text_attr(sysroot, out->disk, "device/serial", NULL, out->serial,
            sizeof(out->serial));
  if (out->serial[0] == '\0')
    vpd_serial(sysroot, out->disk, out->serial, sizeof(out->serial));
  text_attr(sysroot, out->disk, "wwid", "device/wwid", out->wwn,
            sizeof(out->wwn));
  return 0;
}

static int class_char(char c) {
  return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

char *dp_blockdev_class(const char *class_option, const char *model, char *out,
                        size_t len) {
  const char *src =
      class_option && class_option[0] ? class_option : (model ? model : "");
  size_t cap = len < DP_DISK_CLASS_MAX ? len : DP_DISK_CLASS_MAX, n = 0;
  if (cap == 0)
    return out;
  for (; src[n] != '\0' && n + 1 < cap; n++)
    out[n] = class_char(src[n]) ? src[n] : '_';
  out[n] = '\0';
  if (n == 0)
    snprintf(out, cap, "unknown");
  return out;
}

int dp_blockdev_class_check(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= DP_DISK_CLASS_MAX)
    return -EINVAL;
  for (size_t i = 0; i < n; i++)
    if (!class_char(s[i]))
      return -EINVAL;
  return 0;
}

char *dp_blockdev_identity_describe(const dp_disk_identity_t *id, char *buf,
                                    size_t len) {
  if (len == 0)
    return buf;
  size_t off = 0;
#define ADD(...)                                                               \
  do {                                                                         \
    if (off < len) {                                                           \
      int n_ = snprintf(buf + off, len - off, __VA_ARGS__);                    \
      off += n_ > 0 ? (size_t)n_ : 0;                                          \
    }                                                                          \
  } while (0)
  buf[0] = '\0';
  ADD("media %s", dp_media_name(id->media));
  if (id->model[0])
    ADD(", model \"%s\"", id->model);
  if (id->firmware[0])
    ADD(", firmware %s", id->firmware);
  if (id->serial[0])
    ADD(", serial %s", id->serial);
  if (id->wwn[0])
    ADD(", wwn %s", id->wwn);
  ADD(", %llu bytes", (unsigned long long)id->capacity_bytes);
  if (id->logical_block_bytes || id->physical_block_bytes)
    ADD(", blocks %u/%u bytes", id->logical_block_bytes,
        id->physical_block_bytes);
  size_t shown = id->nmembers < DP_BLOCKDEV_MEMBERS_MAX
                     ? id->nmembers
                     : DP_BLOCKDEV_MEMBERS_MAX;
  for (size_t i = 0; i < shown; i++)
    ADD("%s%s", i ? " " : ", members ", id->members[i]);
  if (id->nmembers > shown)
    ADD(" and %zu more", id->nmembers - shown);
#undef ADD
  return buf;
}
