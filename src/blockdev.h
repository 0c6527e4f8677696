/*
 * blockdev.h - everything diskprobe knows about a block device, read from
 * one sysfs tree: which disk a device number is on, and what that disk is.
 * The one place that reads /sys (and, for filesystems without a block
 * device of their own, the mount table: dp_blockdev_resolve_mount_at).
 *
 * Sysroot: every function takes the sysfs root, DP_SYSROOT_DEFAULT on a
 * live system, a fixture tree written by a test otherwise; NULL means
 * DP_SYSROOT_DEFAULT. Nothing is cached: each call reads the files again.
 *
 * The files read, and why:
 *   dev/block/MAJ:MIN        (a symlink) the device of a number: its kernel
 *                            name and its directory
 *   DEVDIR/partition         present and > 0 on a partition; the disk is
 *                            the parent directory
 *   DEVDIR/dev               "MAJ:MIN" of a disk
 *   DEVDIR/slaves/           the devices a dm or md device is built on
 *   DEVDIR/queue/logical_block_size, queue/physical_block_size  bytes
 *   DEVDIR/queue/rotational  1 spinning, 0 not
 *   block/DISK/size          sectors of 512 bytes (whatever the block size)
 *   class/block/NAME/size    the same for any device, partitions included
 *   block/DISK/device/model, device/serial (else device/wwid),
 *   device/firmware_rev (NVMe; else device/rev, SCSI)   identity
 *   block/DISK/device/driver, and block/DISK itself     (symlinks) the
 *                            driver and bus behind a disk: virtual or not
 *   block/DISK/dm/name       present on a device-mapper device
 *
 * Parsing is strict: an attribute is the file's first line with trailing
 * whitespace removed; a line that does not fit the caller's buffer is
 * refused (-EOVERFLOW), not cut. Integers go through the project's one
 * number parser (units.h, dp_parse_uint): decimal digits only, no sign,
 * no leading blanks, nothing after them, within 64 bits (-ERANGE), else
 * -EINVAL. No fscanf.
 *
 * Errors: 0 or a negative errno (-ENOENT for a missing file, -ENODEV for
 * a device sysfs does not know). Output strings are the caller's buffers,
 * always NUL-terminated ("" on failure). Nothing here logs, and nothing
 * is left for the caller to free; every function is thread-safe.
 */
#ifndef DP_BLOCKDEV_H
#define DP_BLOCKDEV_H

#include "vocab.h"

#include <stddef.h>
#include <stdint.h>

/* The sysfs root of a live system: the only place this literal is written
 * in the library; callers that take a sysroot pass NULL or this. */
#define DP_SYSROOT_DEFAULT "/sys"

#define DP_BLOCKDEV_NAME_MAX 64 /* kernel names, "nvme0n1p1" */

/* SYSROOT/block/NAME/ATTR's first line into buf (see Parsing). NAME is a
 * whole disk's kernel name ("sda"); ATTR may have a path ("queue/
 * rotational"). 0, -ENOENT, -EOVERFLOW, -ENAMETOOLONG, -errno. */
int dp_blockdev_attr(const char *sysroot, const char *name, const char *attr,
                     char *buf, size_t len);

/* The same attribute as an integer. 0, -ENOENT, -EINVAL, -ERANGE, -errno;
 * *out untouched on failure. */
int dp_blockdev_attr_u64(const char *sysroot, const char *name,
                         const char *attr, uint64_t *out);

/* The size in 512-byte sectors of any block device, partitions and
 * stacked devices included (SYSROOT/class/block/NAME/size). 0, -ENOENT,
 * -EINVAL, -ERANGE. */
int dp_blockdev_sectors(const char *sysroot, const char *name,
                        uint64_t *sectors);

/* The device behind a device number, and the whole disk below it. */
typedef struct {
  unsigned major, minor;           /* what holds the data; 0:0 when unknown */
  char name[DP_BLOCKDEV_NAME_MAX]; /* kernel name, "vda1"; "" when unknown */
  unsigned disk_major, disk_minor;
  char disk[DP_BLOCKDEV_NAME_MAX]; /* the whole disk, "vda" (== name for a
                                      whole disk) */
  int partition;                   /* 1 if name is a partition of disk */
  int stacked; /* 1 if name is built on other devices (dm, md) */
  uint32_t logical_block_size; /* bytes, the disk's; 0 when unknown */
  int rotational;              /* 1, 0, or -1 when unknown */
} dp_blockdev_t;

/* A dp_blockdev_t that knows nothing but the number: name and disk "",
 * disk number 0:0, rotational -1. */
void dp_blockdev_unknown(dp_blockdev_t *out, unsigned major, unsigned minor);

/*
 * Resolves major:minor to the kernel's device names. `disk` is the
 * physical disk: a partition's parent, and for a stacked device
 * (device-mapper/LVM, MD: its `slaves/`) the disk under its first slave
 * by name, followed down as far as it goes (8 levels) -- two logical
 * volumes on one disk resolve to that disk. (A device striped over
 * several disks is counted as on its first one.) A disk whose `dev` is
 * unreadable keeps major:minor as its number.
 * -ENODEV if the device is not a block device known to sysfs (e.g. btrfs
 * and overlayfs anonymous devices: see dp_blockdev_resolve_mount_at); *out
 * is then dp_blockdev_unknown's.
 */
int dp_blockdev_resolve_at(const char *sysroot, unsigned major, unsigned minor,
                           dp_blockdev_t *out);

/* Where the mount table of a live system is read from. */
#define DP_MOUNTINFO_DEFAULT "/proc/self/mountinfo"
#define DP_BLOCKDEV_MEMBERS_LEN 256 /* "sda2 sdb2 ...", see below */

/*
 * The disk under `path` when its filesystem has no block device of its own
 * (st_dev an anonymous 0:N, which dp_blockdev_resolve_at answers -ENODEV):
 * the mount that holds path in MOUNTINFO (NULL: DP_MOUNTINFO_DEFAULT; the
 * longest mount point that is path or a parent of it, the last such line),
 *   btrfs     the devices of its filesystem, SYSROOT/fs/btrfs/FSID/devices/,
 *             FSID the one that lists the mount's source device (by name,
 *             or by number where the source is a block device node here).
 *             More than one (a multi-device btrfs): the first by name is
 *             resolved -- the worker's disk, as for a striped dm device --
 *             and all of them are written, space-separated, into
 *             `members` (mlen bytes; NULL allowed); "" for one device;
 *   overlay   its upperdir's mount, resolved the same way (the probe file
 *             is written, so it lives in the upper layer; at most 4
 *             levels); an overlay without upperdir is read-only: -ENODEV;
 * then resolved as dp_blockdev_resolve_at does (partition, dm/md below).
 * `path` must be absolute with no symlink in it (realpath). 0; -ENODEV for
 * another filesystem or one whose devices sysfs does not list, or no
 * MOUNTINFO; -ELOOP; -errno reading MOUNTINFO. On failure *out is
 * dp_blockdev_unknown(0:0).
 */
int dp_blockdev_resolve_mount_at(const char *sysroot, const char *mountinfo,
                                 const char *path, dp_blockdev_t *out,
                                 char *members, size_t mlen);

/*
 * The disk under loop device LOOP ("loop3"): the file it serves,
 * SYSROOT/block/LOOP/loop/backing_file (" (deleted)" cut off), and the
 * mount in MOUNTINFO (NULL: DP_MOUNTINFO_DEFAULT) that holds it, resolved
 * as dp_blockdev_resolve_mount_at does. Reads sysfs and the mount table
 * only -- nothing of the backing file's filesystem, which may be the hung
 * one. 0; -ENOENT (not a loop device, or none attached); -ENODEV (a
 * filesystem with no disk sysfs knows: tmpfs, FUSE); -errno. On failure
 * *out is dp_blockdev_unknown(0:0).
 */
int dp_blockdev_loop_backing(const char *sysroot, const char *mountinfo,
                             const char *loop, dp_blockdev_t *out);

/*
 * 1 if NAME is a whole disk not stacked on others: SYSROOT/block/NAME/size
 * holds a number (a partition has no block/NAME), it is no device-mapper
 * device (no dm/name) and no MD array (name "md*"); else 0.
 */
int dp_blockdev_is_whole_disk(const char *sysroot, const char *name);

/*
 * A disk's media class: nvme* is NVMe; a virtio, xen or iSCSI driver, and
 * vd*, xvd*, loop, nbd and rbd devices are virtual; else queue/rotational
 * 1 HDD, another number SSD; unknown when none of these can be read.
 */
dp_media_t dp_blockdev_media(const char *sysroot, const char *disk);

#define DP_BLOCKDEV_MODEL_MAX 64
#define DP_BLOCKDEV_SERIAL_MAX 128 /* an NVMe wwid can be long */
#define DP_BLOCKDEV_FIRMWARE_MAX 32

/* What a disk is. Strings "" and numbers 0 (rotational -1) when sysfs has
 * no such attribute or it does not parse. */
typedef struct {
  dp_media_t media; /* dp_blockdev_media */
  /* the three strings escaped (vocab.h's dp_escape): they go into logs */
  char model[DP_BLOCKDEV_MODEL_MAX];       /* device/model */
  char serial[DP_BLOCKDEV_SERIAL_MAX];     /* device/serial, else device/wwid */
  char firmware[DP_BLOCKDEV_FIRMWARE_MAX]; /* device/firmware_rev, else
                                              device/rev */
  uint64_t size_bytes;                     /* size x 512 */
  uint32_t logical_block_bytes;            /* queue/logical_block_size */
  uint32_t physical_block_bytes;           /* queue/physical_block_size */
  int rotational; /* queue/rotational: 1, 0, -1 unknown */
} dp_blockdev_info_t;

/* Fills *out for whole disk DISK ("sda", "nvme0n1"). 0, or -ENODEV when
 * SYSROOT/block/DISK does not exist (*out then has only the media class
 * the name gives, e.g. nvme*, vd*, loop*); missing or unparsable
 * attributes are not errors. */
int dp_blockdev_info(const char *sysroot, const char *disk,
                     dp_blockdev_info_t *out);

/* ---- identity: what a disk is, for the fleet ---------------------------
 *
 * Besides the files above, identity reads:
 *   class/block/NAME         (a symlink) any device, partitions included:
 *                            a partition's identity is its parent disk's
 *   block/DISK/wwid, else block/DISK/device/wwid    the WWN (NVMe namespaces
 *                            have the first, SCSI disks the second)
 *   block/DISK/device/vpd_pg80   the SCSI unit serial number page (binary:
 *                            a 4-byte header, then the serial in ASCII),
 *                            when device/serial is absent
 *   block/DISK/slaves/       a dm or md device's members, followed down to
 *                            whole disks (8 levels)
 */

#define DP_BLOCKDEV_MEMBERS_MAX 8

/* What a disk is: the fields the fleet groups and names disks by. Strings
 * are escaped (dp_escape) and "" when sysfs has no such attribute;
 * numbers 0 when unknown. */
typedef struct dp_disk_identity {
  char disk[DP_BLOCKDEV_NAME_MAX];         /* whose identity: the whole disk (a
                                              partition's parent), or the stack */
  dp_media_t media;                        /* dp_blockdev_media; a stack: its
                                              members' if they agree, else unknown */
  char model[DP_BLOCKDEV_MODEL_MAX];       /* device/model; a stack: its
                                              members' if they agree */
  char firmware[DP_BLOCKDEV_FIRMWARE_MAX]; /* device/firmware_rev, else
                                              device/rev; "" for a stack */
  char serial[DP_BLOCKDEV_SERIAL_MAX];     /* device/serial, else vpd_pg80 */
  char wwn[DP_BLOCKDEV_SERIAL_MAX];        /* wwid, else device/wwid */
  uint64_t capacity_bytes;                 /* size x 512 (the stack's own) */
  uint32_t logical_block_bytes;            /* queue/logical_block_size */
  uint32_t physical_block_bytes;           /* queue/physical_block_size */
  /* a dm/md stack: the whole disks it is built on, by name, each once
   * (at most DP_BLOCKDEV_MEMBERS_MAX; more are counted in nmembers only) */
  size_t nmembers;
  char members[DP_BLOCKDEV_MEMBERS_MAX][DP_BLOCKDEV_NAME_MAX];
} dp_disk_identity_t;

/*
 * Fills *out for NAME: a whole disk ("sda", "nvme0n1", "vda"), a partition
 * (its parent disk's identity, out->disk names the parent) or a dm/md
 * device (its members named, see dp_disk_identity_t). 0, or -ENODEV when
 * sysfs knows no such device (*out then has only disk = NAME and the
 * media class the name gives); -ENAMETOOLONG. Missing or unparsable
 * attributes are not errors.
 */
int dp_blockdev_identity(const char *sysroot, const char *name,
                         dp_disk_identity_t *out);

/* An identity in words for a log line or a terminal, e.g. "media hdd,
 * model \"WDC WD10EZEX-08W\", firmware 1A01, serial WD-WCC6Y1, wwn t10.ATA
 * ..., 1000204886016 bytes, blocks 512/4096 bytes" (fields sysfs lacks are
 * left out; a stack ends with ", members sdb sdc"). Always terminated; a
 * line that does not fit is cut. Returns buf. */
char *dp_blockdev_identity_describe(const dp_disk_identity_t *id, char *buf,
                                    size_t len);

/* The longest class name, and its buffer. */
#define DP_DISK_CLASS_MAX 64

/*
 * A disk's class, the name the fleet groups it by (the identity contract):
 * class_option (a target's Class) when set and not "", else the model;
 * characters outside [A-Za-z0-9._-] become '_', cut at 63 characters;
 * "unknown" when nothing is left. out holds DP_DISK_CLASS_MAX bytes (a
 * shorter len cuts further; always terminated). Returns out.
 */
char *dp_blockdev_class(const char *class_option, const char *model, char *out,
                        size_t len);

/* 0 if s is already a class name as dp_blockdev_class writes it (1 to 63
 * characters of [A-Za-z0-9._-]), else -EINVAL: for the Class option. */
int dp_blockdev_class_check(const char *s);

#endif /* DP_BLOCKDEV_H */
