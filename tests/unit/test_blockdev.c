/*
 * test_blockdev.c - block devices from a sysfs tree: strict attribute
 * parsing, resolution of a device number through partitions and dm/md
 * stacking to its disk, whole-disk tests, media classes and identity.
 * (Number parsing itself is test_units'.) Each test writes its own fixture tree
 * (tests/unit/helpers.h); one reads the live /sys and skips where the test
 * directory has no block device.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "blockdev.h"
#include "helpers.h"

static char root[] = "/tmp/dp-test-blockdev.XXXXXX";

static int setup(void **state) {
  (void)state;
  snprintf(root, sizeof(root), "/tmp/dp-test-blockdev.XXXXXX");
  return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  fixture_remove(root);
  return 0;
}

/* ---- strict parsing ------------------------------------------------------
 */

/* Garbage, overlong, empty and missing attribute files. */
static void test_attr_strict(void **state) {
  (void)state;
  char big[300], buf[64];
  memset(big, 'x', sizeof(big) - 2);
  big[sizeof(big) - 2] = '\n';
  big[sizeof(big) - 1] = '\0';
  fixture_write(root, "block/sdq/device/model", "Some Model   \t\nsecond\n");
  fixture_write(root, "block/sdq/device/serial", big);
  fixture_write(root, "block/sdq/device/vendor", "");
  fixture_write(root, "block/sdq/size", "1953525168 sectors\n");
  fixture_write(root, "block/sdq/queue/logical_block_size", "-512\n");
  fixture_write(root, "block/sdq/queue/physical_block_size",
                "123456789012345678901234567890\n");
  fixture_write(root, "block/sdq/queue/rotational", "1\n");

  assert_int_equal(
      dp_blockdev_attr(root, "sdq", "device/model", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "Some Model"); /* the first line, trimmed */
  assert_int_equal(
      dp_blockdev_attr(root, "sdq", "device/serial", buf, sizeof(buf)),
      -EOVERFLOW);
  assert_string_equal(buf, ""); /* refused, not cut */
  assert_int_equal(
      dp_blockdev_attr(root, "sdq", "device/vendor", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "");
  assert_int_equal(
      dp_blockdev_attr(root, "sdq", "device/wwid", buf, sizeof(buf)), -ENOENT);

  uint64_t v = 77;
  assert_int_equal(dp_blockdev_attr_u64(root, "sdq", "size", &v), -EINVAL);
  assert_int_equal(
      dp_blockdev_attr_u64(root, "sdq", "queue/logical_block_size", &v),
      -EINVAL);
  assert_int_equal(
      dp_blockdev_attr_u64(root, "sdq", "queue/physical_block_size", &v),
      -ERANGE);
  assert_int_equal(dp_blockdev_attr_u64(root, "sdq", "device/vendor", &v),
                   -EINVAL);
  assert_int_equal(dp_blockdev_attr_u64(root, "sdq", "nothing", &v), -ENOENT);
  assert_int_equal(v, 77);
  assert_int_equal(dp_blockdev_attr_u64(root, "sdq", "queue/rotational", &v),
                   0);
  assert_int_equal(v, 1);

  /* numbers: digits and trailing whitespace only */
  static const struct {
    const char *text;
    int rc;
  } nums[] = {{"4096\n", 0},     {"7 \t\n", 0},     {"0\n1\n", 0},
              {" 1\n", -EINVAL}, {"+1\n", -EINVAL}, {"0x10\n", -EINVAL},
              {"\n", -EINVAL},   {"1 2\n", -EINVAL}};
  for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
    fixture_write(root, "block/sdq/queue/nr_requests", nums[i].text);
    int rc = dp_blockdev_attr_u64(root, "sdq", "queue/nr_requests", &v);
    if (rc != nums[i].rc)
      fail_msg("\"%s\": expected %d, got %d", nums[i].text, nums[i].rc, rc);
  }

  /* what does not parse is unknown in the info, not an error */
  dp_blockdev_info_t in;
  assert_int_equal(dp_blockdev_info(root, "sdq", &in), 0);
  assert_string_equal(in.model, "Some Model");
  assert_string_equal(in.serial, "");
  assert_int_equal(in.size_bytes, 0);
  assert_int_equal(in.logical_block_bytes, 0);
  assert_int_equal(in.physical_block_bytes, 0);
  assert_int_equal(in.rotational, 1);
  assert_int_equal(in.media, DP_MEDIA_HDD);
  /* not a number: the class is unknown, as with no file at all */
  fixture_write(root, "block/sdr/queue/rotational", "yes\n");
  assert_int_equal(dp_blockdev_media(root, "sdr"), DP_MEDIA_UNKNOWN);
}

/* ---- a host's disks --------------------------------------------------------
 */

/* A SATA disk with two partitions, an NVMe namespace, a virtio disk, a
 * loop device, an md array over sdb1 and sdc1 and a dm device over sdb2
 * and sdc2, laid out as the kernel does (devices/... and the links). */
static void write_host(void) {
  static const char *const files[][2] = {
      /* sda: SATA HDD, partitions sda1, sda2 */
      {"devices/pci0/ata1/block/sda/dev", "8:0\n"},
      {"devices/pci0/ata1/block/sda/size", "1953525168\n"},
      {"devices/pci0/ata1/block/sda/queue/logical_block_size", "512\n"},
      {"devices/pci0/ata1/block/sda/queue/physical_block_size", "4096\n"},
      {"devices/pci0/ata1/block/sda/queue/rotational", "1\n"},
      {"devices/pci0/ata1/block/sda/device/model", "WDC WD10EZEX-08W\n"},
      {"devices/pci0/ata1/block/sda/device/rev", "1A01\n"},
      {"devices/pci0/ata1/block/sda/device/wwid",
       "t10.ATA     WDC WD10EZEX-08W                        WD-WCC6Y1\n"},
      {"devices/pci0/ata1/block/sda/sda1/dev", "8:1\n"},
      {"devices/pci0/ata1/block/sda/sda1/partition", "1\n"},
      {"devices/pci0/ata1/block/sda/sda1/size", "2048\n"},
      {"devices/pci0/ata1/block/sda/sda2/dev", "8:2\n"},
      {"devices/pci0/ata1/block/sda/sda2/partition", "2\n"},
      {"devices/pci0/ata1/block/sda/sda2/size", "1953521664\n"},
      /* nvme0n1: its controller holds model, serial, firmware */
      {"devices/pci0/nvme/nvme0/nvme0n1/dev", "259:0\n"},
      {"devices/pci0/nvme/nvme0/nvme0n1/size", "1000215216\n"},
      {"devices/pci0/nvme/nvme0/nvme0n1/queue/logical_block_size", "512\n"},
      {"devices/pci0/nvme/nvme0/nvme0n1/queue/physical_block_size", "512\n"},
      {"devices/pci0/nvme/nvme0/nvme0n1/queue/rotational", "0\n"},
      {"devices/pci0/nvme/nvme0/model", "Samsung SSD 970 EVO 500GB  \n"},
      {"devices/pci0/nvme/nvme0/serial", "S466NX0K123456A     \n"},
      {"devices/pci0/nvme/nvme0/firmware_rev", "2B2QEXE7\n"},
      /* vda: virtio, which says it spins */
      {"devices/pci0/virtio1/block/vda/dev", "252:0\n"},
      {"devices/pci0/virtio1/block/vda/size", "41943040\n"},
      {"devices/pci0/virtio1/block/vda/queue/rotational", "1\n"},
      {"bus/virtio/drivers/virtio_blk/x", ""},
      /* loop0: a file on some other disk */
      {"devices/virtual/block/loop0/dev", "7:0\n"},
      {"devices/virtual/block/loop0/size", "0\n"},
      {"devices/virtual/block/loop0/queue/rotational", "1\n"},
      /* sdb, sdc: members of md0 and dm-0 */
      {"devices/pci0/ata2/block/sdb/dev", "8:16\n"},
      {"devices/pci0/ata2/block/sdb/size", "1000\n"},
      {"devices/pci0/ata2/block/sdb/queue/rotational", "0\n"},
      {"devices/pci0/ata2/block/sdb/sdb1/dev", "8:17\n"},
      {"devices/pci0/ata2/block/sdb/sdb1/partition", "1\n"},
      {"devices/pci0/ata2/block/sdb/sdb2/dev", "8:18\n"},
      {"devices/pci0/ata2/block/sdb/sdb2/partition", "2\n"},
      {"devices/pci0/ata3/block/sdc/dev", "8:32\n"},
      {"devices/pci0/ata3/block/sdc/size", "1000\n"},
      {"devices/pci0/ata3/block/sdc/queue/rotational", "0\n"},
      {"devices/pci0/ata3/block/sdc/sdc1/dev", "8:33\n"},
      {"devices/pci0/ata3/block/sdc/sdc1/partition", "1\n"},
      {"devices/pci0/ata3/block/sdc/sdc2/dev", "8:34\n"},
      {"devices/pci0/ata3/block/sdc/sdc2/partition", "2\n"},
      {"devices/virtual/block/md0/dev", "9:0\n"},
      {"devices/virtual/block/md0/size", "900\n"},
      {"devices/virtual/block/md0/queue/rotational", "0\n"},
      {"devices/virtual/block/dm-0/dev", "253:0\n"},
      {"devices/virtual/block/dm-0/size", "800\n"},
      {"devices/virtual/block/dm-0/dm/name", "vg-data\n"},
      {"devices/virtual/block/dm-0/queue/rotational", "0\n"},
  };
  static const char *const links[][2] = {
      {"block/sda", "../devices/pci0/ata1/block/sda"},
      {"block/nvme0n1", "../devices/pci0/nvme/nvme0/nvme0n1"},
      {"block/vda", "../devices/pci0/virtio1/block/vda"},
      {"block/loop0", "../devices/virtual/block/loop0"},
      {"block/sdb", "../devices/pci0/ata2/block/sdb"},
      {"block/sdc", "../devices/pci0/ata3/block/sdc"},
      {"block/md0", "../devices/virtual/block/md0"},
      {"block/dm-0", "../devices/virtual/block/dm-0"},
      {"class/block/sda", "../../devices/pci0/ata1/block/sda"},
      {"class/block/sda1", "../../devices/pci0/ata1/block/sda/sda1"},
      {"class/block/loop0", "../../devices/virtual/block/loop0"},
      {"devices/pci0/nvme/nvme0/nvme0n1/device", ".."},
      {"devices/pci0/virtio1/block/vda/device", "../.."},
      {"devices/pci0/virtio1/driver", "../../bus/virtio/drivers/virtio_blk"},
      {"dev/block/8:0", "../../devices/pci0/ata1/block/sda"},
      {"dev/block/8:1", "../../devices/pci0/ata1/block/sda/sda1"},
      {"dev/block/8:2", "../../devices/pci0/ata1/block/sda/sda2"},
      {"dev/block/259:0", "../../devices/pci0/nvme/nvme0/nvme0n1"},
      {"dev/block/252:0", "../../devices/pci0/virtio1/block/vda"},
      {"dev/block/7:0", "../../devices/virtual/block/loop0"},
      {"dev/block/8:17", "../../devices/pci0/ata2/block/sdb/sdb1"},
      {"dev/block/8:18", "../../devices/pci0/ata2/block/sdb/sdb2"},
      {"dev/block/8:33", "../../devices/pci0/ata3/block/sdc/sdc1"},
      {"dev/block/8:34", "../../devices/pci0/ata3/block/sdc/sdc2"},
      {"dev/block/9:0", "../../devices/virtual/block/md0"},
      {"dev/block/253:0", "../../devices/virtual/block/dm-0"},
      {"devices/virtual/block/md0/slaves/sdc1",
       "../../../../pci0/ata3/block/sdc/sdc1"},
      {"devices/virtual/block/md0/slaves/sdb1",
       "../../../../pci0/ata2/block/sdb/sdb1"},
      {"devices/virtual/block/dm-0/slaves/sdc2",
       "../../../../pci0/ata3/block/sdc/sdc2"},
      {"devices/virtual/block/dm-0/slaves/sdb2",
       "../../../../pci0/ata2/block/sdb/sdb2"},
  };
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
    fixture_write(root, files[i][0], files[i][1]);
  for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
    fixture_symlink(root, links[i][0], links[i][1]);
}

static void test_info_per_kind(void **state) {
  (void)state;
  write_host();
  dp_blockdev_info_t in;
  assert_int_equal(dp_blockdev_info(root, "sda", &in), 0);
  assert_int_equal(in.media, DP_MEDIA_HDD);
  assert_string_equal(in.model, "WDC WD10EZEX-08W");
  assert_string_equal(in.serial, /* no serial: the wwid */
                      "t10.ATA     WDC WD10EZEX-08W                        "
                      "WD-WCC6Y1");
  assert_string_equal(in.firmware, "1A01"); /* device/rev */
  assert_int_equal(in.size_bytes, 1953525168ull * 512);
  assert_int_equal(in.logical_block_bytes, 512);
  assert_int_equal(in.physical_block_bytes, 4096);
  assert_int_equal(in.rotational, 1);

  assert_int_equal(dp_blockdev_info(root, "nvme0n1", &in), 0);
  assert_int_equal(in.media, DP_MEDIA_NVME);
  assert_string_equal(in.model, "Samsung SSD 970 EVO 500GB");
  assert_string_equal(in.serial, "S466NX0K123456A");
  assert_string_equal(in.firmware, "2B2QEXE7"); /* device/firmware_rev */
  assert_int_equal(in.size_bytes, 1000215216ull * 512);
  assert_int_equal(in.rotational, 0);

  assert_int_equal(dp_blockdev_info(root, "vda", &in), 0);
  assert_int_equal(in.media, DP_MEDIA_VIRTUAL); /* whatever it says */
  assert_int_equal(in.rotational, 1);
  assert_string_equal(in.model, "");
  assert_string_equal(in.firmware, "");
  assert_int_equal(in.logical_block_bytes, 0);

  assert_int_equal(dp_blockdev_info(root, "loop0", &in), 0);
  assert_int_equal(in.media, DP_MEDIA_VIRTUAL);
  assert_int_equal(in.size_bytes, 0);

  assert_int_equal(dp_blockdev_info(root, "sdz", &in), -ENODEV);
  assert_int_equal(in.media, DP_MEDIA_UNKNOWN);
  assert_int_equal(in.rotational, -1);
  assert_string_equal(in.model, "");
}

static void test_whole_disk(void **state) {
  (void)state;
  write_host();
  static const struct {
    const char *name;
    int whole;
  } cases[] = {{"sda", 1},   {"nvme0n1", 1}, {"vda", 1},
               {"loop0", 1}, {"sdb", 1},     {"sda1", 0},
               {"md0", 0},   {"dm-0", 0},    {"nope", 0}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    if (dp_blockdev_is_whole_disk(root, cases[i].name) != cases[i].whole)
      fail_msg("%s: expected whole disk %d", cases[i].name, cases[i].whole);
  /* a size that is not a number is no disk either */
  fixture_write(root, "block/sdx/size", "lots\n");
  assert_int_equal(dp_blockdev_is_whole_disk(root, "sdx"), 0);
}

static void test_sectors(void **state) {
  (void)state;
  write_host();
  uint64_t n = 1;
  assert_int_equal(dp_blockdev_sectors(root, "sda1", &n), 0);
  assert_int_equal(n, 2048);
  assert_int_equal(dp_blockdev_sectors(root, "loop0", &n), 0);
  assert_int_equal(n, 0);
  assert_int_equal(dp_blockdev_sectors(root, "sdz", &n), -ENOENT);
}

/* What major:minor resolves to; the rest of the result is left in *d. */
typedef struct {
  unsigned major, minor;
  const char *name, *disk;
  unsigned disk_major, disk_minor;
  int partition, stacked;
} want_t;

static void expect_resolved(const want_t *w, dp_blockdev_t *d) {
  int rc = dp_blockdev_resolve_at(root, w->major, w->minor, d);
  if (rc != 0)
    fail_msg("%u:%u: expected 0, got %d", w->major, w->minor, rc);
  if (strcmp(d->name, w->name) != 0 || strcmp(d->disk, w->disk) != 0 ||
      d->disk_major != w->disk_major || d->disk_minor != w->disk_minor ||
      d->partition != w->partition || d->stacked != w->stacked)
    fail_msg("%u:%u: expected %s on %s (%u:%u) partition %d stacked %d, got "
             "%s on %s (%u:%u) partition %d stacked %d",
             w->major, w->minor, w->name, w->disk, w->disk_major, w->disk_minor,
             w->partition, w->stacked, d->name, d->disk, d->disk_major,
             d->disk_minor, d->partition, d->stacked);
}

static void test_resolve_md_and_dm(void **state) {
  (void)state;
  write_host();
  dp_blockdev_t d;
  /* md0 over sdb1 and sdc1, dm-0 over sdb2 and sdc2: the disk is the
   * first member's by name */
  expect_resolved(&(want_t){9, 0, "md0", "sdb", 8, 16, 0, 1}, &d);
  expect_resolved(&(want_t){253, 0, "dm-0", "sdb", 8, 16, 0, 1}, &d);
  assert_int_equal(d.rotational, 0);
  expect_resolved(&(want_t){8, 18, "sdb2", "sdb", 8, 16, 1, 0}, &d);
  assert_int_equal(dp_blockdev_resolve_at(root, 259, 0, &d), 0);
  assert_string_equal(d.disk, "nvme0n1");
  assert_int_equal(d.logical_block_size, 512);
  /* a disk's dev that does not parse: its own number stands for it */
  fixture_write(root, "devices/pci0/virtio1/block/vda/dev", "252;0\n");
  assert_int_equal(dp_blockdev_resolve_at(root, 252, 0, &d), 0);
  assert_string_equal(d.disk, "vda");
  assert_int_equal(d.disk_major, 252);
  assert_int_equal(d.disk_minor, 0);
  /* unknown: the number, nothing else */
  assert_int_equal(dp_blockdev_resolve_at(root, 0, 45, &d), -ENODEV);
  assert_int_equal(d.major, 0);
  assert_int_equal(d.minor, 45);
  assert_string_equal(d.name, "");
  assert_int_equal(d.rotational, -1);
}

/* ---- moved from test_target: resolution ---------------------------------- */

static void test_resolve_fixture_sysfs(void **state) {
  (void)state;
  fixture_write(root, "devices/pci0/block/sda/dev", "8:0\n");
  fixture_write(root, "devices/pci0/block/sda/queue/logical_block_size",
                "4096\n");
  fixture_write(root, "devices/pci0/block/sda/queue/rotational", "1\n");
  fixture_write(root, "devices/pci0/block/sda/sda2/dev", "8:2\n");
  fixture_write(root, "devices/pci0/block/sda/sda2/partition", "2\n");
  fixture_symlink(root, "dev/block/8:2", "../../devices/pci0/block/sda/sda2");
  fixture_symlink(root, "dev/block/8:0", "../../devices/pci0/block/sda");

  dp_blockdev_t d;
  expect_resolved(&(want_t){8, 2, "sda2", "sda", 8, 0, 1, 0}, &d);
  assert_int_equal(d.logical_block_size, 4096);
  assert_int_equal(d.rotational, 1);
  expect_resolved(&(want_t){8, 0, "sda", "sda", 8, 0, 0, 0}, &d);

  assert_int_equal(dp_blockdev_resolve_at(root, 0, 45, &d), -ENODEV);
}

/* Two logical volumes (dm-0 on sda2, dm-1 on a crypt dm-2 on sda3) and a
 * partition all resolve to sda, so one worker probes them all. */
static void test_resolve_stacked_sysfs(void **state) {
  (void)state;
  fixture_write(root, "devices/pci0/block/sda/dev", "8:0\n");
  fixture_write(root, "devices/pci0/block/sda/sda2/dev", "8:2\n");
  fixture_write(root, "devices/pci0/block/sda/sda2/partition", "2\n");
  fixture_write(root, "devices/pci0/block/sda/sda3/dev", "8:3\n");
  fixture_write(root, "devices/pci0/block/sda/sda3/partition", "3\n");
  fixture_write(root, "devices/virtual/block/dm-0/dev", "253:0\n");
  fixture_write(root, "devices/virtual/block/dm-0/queue/rotational", "0\n");
  fixture_write(root, "devices/virtual/block/dm-0/slaves/x", NULL);
  fixture_write(root, "devices/virtual/block/dm-1/dev", "253:1\n");
  fixture_write(root, "devices/virtual/block/dm-1/slaves/x", NULL);
  fixture_write(root, "devices/virtual/block/dm-2/dev", "253:2\n");
  fixture_write(root, "devices/virtual/block/dm-2/slaves/x", NULL);
  fixture_write(root, "devices/virtual/block/dm-3/dev", "253:3\n");
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
  for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
    fixture_symlink(root, links[i][0], links[i][1]);
  dp_blockdev_t d;
  expect_resolved(&(want_t){253, 0, "dm-0", "sda", 8, 0, 0, 1}, &d);
  assert_int_equal(d.rotational, 0); /* the dm device's own queue */
  expect_resolved(&(want_t){253, 1, "dm-1", "sda", 8, 0, 0, 1}, &d);
  /* a dm device with no slaves (e.g. dm-zero) is its own disk */
  expect_resolved(&(want_t){253, 3, "dm-3", "dm-3", 253, 3, 0, 0}, &d);
  expect_resolved(&(want_t){8, 2, "sda2", "sda", 8, 0, 1, 0}, &d);
}

/* ---- btrfs and overlayfs: the mount table -------------------------------
 */

/* A host with a btrfs over sdb1 and sdc1 (mounted from /dev/sdc1, so the
 * first by name is not the source), a one-device btrfs on nvme0n1p2, an
 * ext4 on sda1 holding an overlay's upper layer, and a read-only overlay. */
static void write_mounts(char *mountinfo, size_t len) {
  static const char *const devs[][4] = {
      /* name, number, device directory, partition */
      {"sda", "8:0", "pci0/block/sda", "0"},
      {"sda1", "8:1", "pci0/block/sda/sda1", "1"},
      {"sdb", "8:16", "pci0/block/sdb", "0"},
      {"sdb1", "8:17", "pci0/block/sdb/sdb1", "1"},
      {"sdc", "8:32", "pci0/block/sdc", "0"},
      {"sdc1", "8:33", "pci0/block/sdc/sdc1", "1"},
      {"nvme0n1", "259:0", "pci1/nvme/nvme0/nvme0n1", "0"},
      {"nvme0n1p2", "259:2", "pci1/nvme/nvme0/nvme0n1/nvme0n1p2", "1"},
  };
  char rel[256], target[256], num[32];
  for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
    snprintf(rel, sizeof(rel), "devices/%s/dev", devs[i][2]);
    snprintf(num, sizeof(num), "%s\n", devs[i][1]);
    fixture_write(root, rel, num);
    if (devs[i][3][0] == '1') {
      snprintf(rel, sizeof(rel), "devices/%s/partition", devs[i][2]);
      fixture_write(root, rel, "1\n");
    }
    snprintf(target, sizeof(target), "../../devices/%s", devs[i][2]);
    snprintf(rel, sizeof(rel), "dev/block/%s", devs[i][1]);
    fixture_symlink(root, rel, target);
    snprintf(rel, sizeof(rel), "class/block/%s", devs[i][0]);
    fixture_symlink(root, rel, target);
  }
  fixture_write(root, "devices/pci0/block/sdb/queue/rotational", "1\n");
  /* /sys/fs/btrfs/FSID/devices/NAME are symlinks to the devices */
  fixture_symlink(root, "fs/btrfs/5e1f-multi/devices/sdc1",
                  "../../../../devices/pci0/block/sdc/sdc1");
  fixture_symlink(root, "fs/btrfs/5e1f-multi/devices/sdb1",
                  "../../../../devices/pci0/block/sdb/sdb1");
  fixture_symlink(root, "fs/btrfs/77aa-single/devices/nvme0n1p2",
                  "../../../../devices/pci1/nvme/nvme0/nvme0n1/nvme0n1p2");
  fixture_write(root, "fs/btrfs/features/x", "");
  snprintf(mountinfo, len, "%s/mountinfo", root);
  fixture_write(
      root, "mountinfo",
      "22 1 259:1 / / rw,relatime - ext4 /dev/nvme0n1p1 rw\n"
      "30 22 0:41 /@home /home rw,relatime - btrfs /dev/sdc1 "
      "rw,space_cache=v2,subvolid=256,subvol=/@home\n"
      "31 22 0:41 /@data /srv/my\\040data rw,relatime shared:5 - btrfs "
      "/dev/sdc1 rw,subvolid=257,subvol=/@data\n"
      "32 22 0:52 / /var/lib/c rw,relatime - btrfs /dev/nvme0n1p2 rw\n"
      "33 22 8:1 / /data rw,relatime - ext4 /dev/sda1 rw\n"
      "34 22 0:60 / /merged rw,relatime - overlay overlay "
      "rw,lowerdir=/data/low,upperdir=/data/up\\054per,workdir=/data/work\n"
      "35 22 0:61 / /ro rw,relatime - overlay overlay "
      "ro,lowerdir=/data/a:/data/b\n"
      "36 22 0:62 / /stack rw,relatime - overlay overlay "
      "rw,lowerdir=/data/low,upperdir=/home/u/up,workdir=/home/u/work\n"
      "37 22 0:63 / /loopy rw,relatime - overlay overlay "
      "rw,lowerdir=/x,upperdir=/loopy/up,workdir=/loopy/w\n");
}

/* A path on btrfs or overlayfs resolves to the disk below through the mount
 * table: two subvolumes of one btrfs to the same disk (one worker), a
 * multi-device btrfs to its first device by name with all of them named,
 * an overlay to its upper layer's disk (also when that is on btrfs). */
static void test_resolve_btrfs_and_overlay(void **state) {
  (void)state;
  char mi[300], members[DP_BLOCKDEV_MEMBERS_LEN];
  write_mounts(mi, sizeof(mi));
  dp_blockdev_t d;
  /* the anonymous number itself is not in sysfs */
  assert_int_equal(dp_blockdev_resolve_at(root, 0, 41, &d), -ENODEV);
  assert_int_equal(dp_blockdev_resolve_mount_at(root, mi, "/home/me/x", &d,
                                                members, sizeof(members)),
                   0);
  assert_string_equal(d.name, "sdb1"); /* the first by name, not the source */
  assert_string_equal(d.disk, "sdb");
  assert_int_equal(d.disk_major, 8);
  assert_int_equal(d.disk_minor, 16);
  assert_int_equal(d.rotational, 1);
  assert_string_equal(members, "sdb1 sdc1");
  /* another subvolume of the same filesystem, a mount point with a space */
  dp_blockdev_t d2;
  assert_int_equal(
      dp_blockdev_resolve_mount_at(root, mi, "/srv/my data/p", &d2, NULL, 0),
      0);
  assert_string_equal(d2.disk, d.disk);
  /* one device: no members */
  assert_int_equal(dp_blockdev_resolve_mount_at(root, mi, "/var/lib/c", &d,
                                                members, sizeof(members)),
                   0);
  assert_string_equal(d.name, "nvme0n1p2");
  assert_string_equal(d.disk, "nvme0n1");
  assert_string_equal(members, "");
  /* overlay: its upperdir (a comma in it, escaped) on the ext4 of sda1 */
  assert_int_equal(dp_blockdev_resolve_mount_at(root, mi, "/merged/probe", &d,
                                                members, sizeof(members)),
                   0);
  assert_string_equal(d.name, "sda1");
  assert_string_equal(d.disk, "sda");
  assert_int_equal(d.partition, 1);
  /* overlay whose upper layer is on the multi-device btrfs */
  assert_int_equal(dp_blockdev_resolve_mount_at(root, mi, "/stack", &d, members,
                                                sizeof(members)),
                   0);
  assert_string_equal(d.disk, "sdb");
  assert_string_equal(members, "sdb1 sdc1");
  /* a read-only overlay (no upperdir), an overlay on itself, a plain
   * filesystem whose number sysfs does not know, a missing mount table */
  assert_int_equal(dp_blockdev_resolve_mount_at(root, mi, "/ro/x", &d, members,
                                                sizeof(members)),
                   -ENODEV);
  assert_string_equal(d.name, "");
  assert_string_equal(members, "");
  assert_int_equal(
      dp_blockdev_resolve_mount_at(root, mi, "/loopy/x", &d, NULL, 0), -ELOOP);
  assert_int_equal(dp_blockdev_resolve_mount_at(root, mi, "/etc", &d, NULL, 0),
                   -ENODEV); /* 259:1: not in this sysfs */
  char missing[320];
  snprintf(missing, sizeof(missing), "%s/nothing", root);
  assert_int_equal(
      dp_blockdev_resolve_mount_at(root, missing, "/home", &d, NULL, 0),
      -ENODEV);
  /* a btrfs whose devices sysfs does not list */
  char rm[320];
  snprintf(rm, sizeof(rm), "%s/fs/btrfs", root);
  fixture_remove(rm);
  assert_int_equal(dp_blockdev_resolve_mount_at(root, mi, "/home", &d, NULL, 0),
                   -ENODEV);
}

/* A loop device's disk: the mount that holds its backing file (a space in
 * the mount point, a file deleted since), through the mount table only;
 * none for a file on a filesystem without a disk or a loop device with
 * nothing attached. */
static void test_loop_backing(void **state) {
  (void)state;
  char mi[300];
  write_mounts(mi, sizeof(mi));
  dp_blockdev_t d;
  fixture_write(root, "block/loop7/loop/backing_file", "/data/vm.img\n");
  assert_int_equal(dp_blockdev_loop_backing(root, mi, "loop7", &d), 0);
  assert_string_equal(d.name, "sda1");
  assert_string_equal(d.disk, "sda");
  fixture_write(root, "block/loop7/loop/backing_file",
                "/srv/my data/img (deleted)\n");
  assert_int_equal(dp_blockdev_loop_backing(root, mi, "loop7", &d), 0);
  assert_string_equal(d.disk, "sdb"); /* the btrfs, first device by name */
  fixture_write(root, "block/loop7/loop/backing_file", "/etc/img\n");
  assert_int_equal(dp_blockdev_loop_backing(root, mi, "loop7", &d), -ENODEV);
  assert_string_equal(d.disk, "");
  assert_int_equal(dp_blockdev_loop_backing(root, mi, "loop8", &d), -ENOENT);
}

static void test_resolve_live(void **state) {
  (void)state;
  struct stat st;
  assert_int_equal(stat(root, &st), 0);
  dp_blockdev_t d;
  int rc = dp_blockdev_resolve_at(DP_SYSROOT_DEFAULT, major(st.st_dev),
                                  minor(st.st_dev), &d);
  if (rc == -ENODEV)
    skip(); /* btrfs/overlay: no block device behind st_dev */
  assert_int_equal(rc, 0);
  assert_true(strlen(d.name) > 0 && strlen(d.disk) > 0);
  assert_true(d.logical_block_size >= 512);
  char p[300];
  snprintf(p, sizeof(p), DP_SYSROOT_DEFAULT "/block/%s", d.disk);
  assert_int_equal(access(p, F_OK), 0);
  /* NULL is the live root too */
  dp_blockdev_t n;
  assert_int_equal(
      dp_blockdev_resolve_at(NULL, major(st.st_dev), minor(st.st_dev), &n), 0);
  assert_string_equal(n.disk, d.disk);
}

/* ---- moved from test_health: media classes -------------------------------
 */

static void test_media_classes(void **state) {
  (void)state;
  char l[PATH_MAX];
  dp_blockdev_info_t in;
  fixture_write(root, "block/nvme0n1/queue/rotational", "0\n");
  fixture_write(root, "block/nvme0n1/device/model", "Fast NVMe 1TB  \n");
  fixture_write(root, "block/sda/queue/rotational", "1\n");
  fixture_write(root, "block/sdb/queue/rotational", "0\n");
  fixture_write(root, "block/vdz/queue/rotational", "1\n");
  fixture_write(root, "drivers/virtio_blk/x", "");
  fixture_write(root, "block/vdz/device/vendor", "0x1af4\n");
  snprintf(l, sizeof(l), "%s/block/vdz/device/driver", root);
  assert_int_equal(symlink("../../../drivers/virtio_blk", l), 0);
  assert_int_equal(dp_blockdev_info(root, "nvme0n1", &in), 0);
  assert_int_equal(in.media, DP_MEDIA_NVME);
  assert_string_equal(in.model, "Fast NVMe 1TB");
  assert_int_equal(dp_blockdev_media(root, "sda"), DP_MEDIA_HDD);
  assert_int_equal(dp_blockdev_media(root, "sdb"), DP_MEDIA_SSD);
  assert_int_equal(dp_blockdev_media(root, "vdz"), DP_MEDIA_VIRTUAL);
  assert_int_equal(dp_blockdev_media(root, "nope"), DP_MEDIA_UNKNOWN);
  assert_int_equal(dp_blockdev_info(root, "nope", &in), -ENODEV);
  assert_int_equal(in.media, DP_MEDIA_UNKNOWN);
  assert_string_equal(dp_media_name(DP_MEDIA_NVME), "nvme");
  assert_string_equal(dp_media_name(DP_MEDIA_COUNT), "?");
}

/* Text from the filesystem is escaped before it reaches a message. */
static void test_escape(void **state) {
  (void)state;
  char out[64];
  assert_string_equal(dp_escape("WDC WD10EZEX", out, sizeof(out)),
                      "WDC WD10EZEX");
  assert_string_equal(
      dp_escape("a\n[2026-12-01] b\\c\x1b\x7f\xc3", out, sizeof(out)),
      "a\\x0a[2026-12-01] b\\\\c\\x1b\\x7f\\xc3");
  /* a cut falls between escapes: "ab" fits, "\x0a" (4 bytes) does not */
  assert_string_equal(dp_escape("ab\ncd", out, 6), "ab");
  assert_string_equal(dp_escape("abcdef", out, 4), "abc");
  assert_string_equal(dp_escape("", out, sizeof(out)), "");
  out[0] = 'x';
  dp_escape("abc", out, 0); /* nothing written */
  assert_int_equal(out[0], 'x');
  /* a sysfs model, serial or firmware with control characters */
  dp_blockdev_info_t in;
  fixture_write(root, "block/sdx/size", "100\n");
  fixture_write(root, "block/sdx/device/model", "Evil\r\x1b[2J Disk\n");
  fixture_write(root, "block/sdx/device/serial", "S\tN\\1\n");
  assert_int_equal(dp_blockdev_info(root, "sdx", &in), 0);
  assert_string_equal(in.model, "Evil\\x0d\\x1b[2J Disk");
  assert_string_equal(in.serial, "S\\x09N\\\\1");
}

/* ---- identity --------------------------------------------------------- */

/* One disk's identity as expected; NULL strings are not compared. */
typedef struct {
  const char *name, *disk, *model, *firmware, *serial, *wwn;
  dp_media_t media;
  uint64_t capacity_bytes;
  uint32_t logical, physical;
  size_t nmembers;
} want_id_t;

static void expect_identity(const want_id_t *w, dp_disk_identity_t *id) {
  int rc = dp_blockdev_identity(root, w->name, id);
  if (rc != 0)
    fail_msg("%s: expected 0, got %d", w->name, rc);
  const char *got[] = {id->disk, id->model, id->firmware, id->serial, id->wwn};
  const char *want[] = {w->disk, w->model, w->firmware, w->serial, w->wwn};
  static const char *const what[] = {"disk", "model", "firmware", "serial",
                                     "wwn"};
  for (size_t i = 0; i < sizeof(got) / sizeof(got[0]); i++)
    if (want[i] != NULL && strcmp(got[i], want[i]) != 0)
      fail_msg("%s: expected %s \"%s\", got \"%s\"", w->name, what[i], want[i],
               got[i]);
  if (id->media != w->media || id->capacity_bytes != w->capacity_bytes ||
      id->logical_block_bytes != w->logical ||
      id->physical_block_bytes != w->physical || id->nmembers != w->nmembers)
    fail_msg("%s: expected media %s, %llu bytes, blocks %u/%u, %zu members; "
             "got %s, %llu, %u/%u, %zu",
             w->name, dp_media_name(w->media),
             (unsigned long long)w->capacity_bytes, w->logical, w->physical,
             w->nmembers, dp_media_name(id->media),
             (unsigned long long)id->capacity_bytes, id->logical_block_bytes,
             id->physical_block_bytes, id->nmembers);
}

/* SATA (serial from the VPD page, WWN from device/wwid), a partition (its
 * disk's identity), NVMe (the controller's model, serial, firmware_rev and
 * the namespace's wwid), virtio (no model at all). */
static void test_identity_per_kind(void **state) {
  (void)state;
  write_host();
  static const unsigned char pg80[] = {0x00, 0x80, 0x00, 0x0c, ' ', ' ',
                                       'W',  'D',  '-',  'W',  'C', 'C',
                                       '6',  'Y',  '1',  ' ',  'x', 'x'};
  fixture_write_bytes(root, "devices/pci0/ata1/block/sda/device/vpd_pg80", pg80,
                      sizeof(pg80));
  fixture_write(root, "devices/pci0/nvme/nvme0/nvme0n1/wwid",
                "eui.002538b581b2c3d4\n");
  dp_disk_identity_t id;
  const char *sda_wwn =
      "t10.ATA     WDC WD10EZEX-08W                        WD-WCC6Y1";
  expect_identity(&(want_id_t){"sda", "sda", "WDC WD10EZEX-08W", "1A01",
                               "WD-WCC6Y1", sda_wwn, DP_MEDIA_HDD,
                               1953525168ull * 512, 512, 4096, 0},
                  &id);
  char words[256];
  assert_string_equal(
      dp_blockdev_identity_describe(&id, words, sizeof(words)),
      "media hdd, model \"WDC WD10EZEX-08W\", firmware 1A01, serial "
      "WD-WCC6Y1, wwn t10.ATA     WDC WD10EZEX-08W                        "
      "WD-WCC6Y1, 1000204886016 bytes, blocks 512/4096 bytes");
  /* the header's length (12) ends the serial, not the file */
  expect_identity(&(want_id_t){"sda1", "sda", "WDC WD10EZEX-08W", "1A01",
                               "WD-WCC6Y1", sda_wwn, DP_MEDIA_HDD,
                               1953525168ull * 512, 512, 4096, 0},
                  &id);
  expect_identity(&(want_id_t){"nvme0n1", "nvme0n1",
                               "Samsung SSD 970 EVO 500GB", "2B2QEXE7",
                               "S466NX0K123456A", "eui.002538b581b2c3d4",
                               DP_MEDIA_NVME, 1000215216ull * 512, 512, 512, 0},
                  &id);
  expect_identity(&(want_id_t){"vda", "vda", "", "", "", "", DP_MEDIA_VIRTUAL,
                               41943040ull * 512, 0, 0, 0},
                  &id);
  char cls[DP_DISK_CLASS_MAX];
  assert_string_equal(dp_blockdev_class(NULL, id.model, cls, sizeof(cls)),
                      "unknown");
  assert_string_equal(
      dp_blockdev_class("cloud-gp3", id.model, cls, sizeof(cls)), "cloud-gp3");

  /* a VPD page that is not page 0x80 says nothing */
  fixture_write(root, "devices/pci0/ata1/block/sda/device/vpd_pg80", "junk");
  assert_int_equal(dp_blockdev_identity(root, "sda", &id), 0);
  assert_string_equal(id.serial, "");

  assert_int_equal(dp_blockdev_identity(root, "nvme9n1", &id), -ENODEV);
  assert_string_equal(id.disk, "nvme9n1");
  assert_int_equal(id.media, DP_MEDIA_NVME);
  assert_string_equal(id.model, "");
}

/* md0 over sdb1 + sdc1 and dm-0 over sdb2 + sdc2: each names its two
 * member disks; one model across the members is the stack's model, two
 * different ones are none. */
static void test_identity_stacks(void **state) {
  (void)state;
  write_host();
  fixture_write(root, "devices/pci0/ata2/block/sdb/device/model",
                "Samsung SSD 860\n");
  fixture_write(root, "devices/pci0/ata3/block/sdc/device/model",
                "Samsung SSD 860\n");
  dp_disk_identity_t id;
  expect_identity(&(want_id_t){"md0", "md0", "Samsung SSD 860", "", "", "",
                               DP_MEDIA_SSD, 900 * 512, 0, 0, 2},
                  &id);
  assert_string_equal(id.members[0], "sdb");
  assert_string_equal(id.members[1], "sdc");
  char cls[DP_DISK_CLASS_MAX], words[256];
  assert_string_equal(dp_blockdev_class("", id.model, cls, sizeof(cls)),
                      "Samsung_SSD_860");
  assert_string_equal(
      dp_blockdev_identity_describe(&id, words, sizeof(words)),
      "media ssd, model \"Samsung SSD 860\", 460800 bytes, members sdb sdc");
  dp_blockdev_identity_describe(&id, words, 12); /* cut, terminated */
  assert_string_equal(words, "media ssd, ");

  fixture_write(root, "devices/pci0/ata3/block/sdc/device/model",
                "Crucial MX500\n");
  expect_identity(&(want_id_t){"dm-0", "dm-0", "", "", "", "", DP_MEDIA_SSD,
                               800 * 512, 0, 0, 2},
                  &id);
  assert_string_equal(id.members[0], "sdb");
  assert_string_equal(id.members[1], "sdc");
  /* a member disk's own identity is its own */
  expect_identity(&(want_id_t){"sdc", "sdc", "Crucial MX500", "", "", "",
                               DP_MEDIA_SSD, 1000 * 512, 0, 0, 0},
                  &id);
}

/* The class name: the option over the model, sanitised, cut, "unknown". */
static void test_class_names(void **state) {
  (void)state;
  char cls[DP_DISK_CLASS_MAX], small[8], long_model[100];
  memset(long_model, 'M', sizeof(long_model) - 1);
  long_model[sizeof(long_model) - 1] = '\0';
  static const struct {
    const char *option, *model, *want;
  } cases[] = {
      {NULL, "Samsung SSD 970 EVO 500GB", "Samsung_SSD_970_EVO_500GB"},
      {"", "QEMU HARDDISK", "QEMU_HARDDISK"},
      {"gp3", "Amazon Elastic Block Store", "gp3"},
      {NULL, "a/b\\x0a\"c'", "a_b_x0a_c_"},
      {NULL, "", "unknown"},
      {NULL, NULL, "unknown"},
      {"ok.v1_2-3", "x", "ok.v1_2-3"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    dp_blockdev_class(cases[i].option, cases[i].model, cls, sizeof(cls));
    if (strcmp(cls, cases[i].want) != 0)
      fail_msg("class(%s, %s): expected \"%s\", got \"%s\"",
               cases[i].option ? cases[i].option : "NULL",
               cases[i].model ? cases[i].model : "NULL", cases[i].want, cls);
  }
  dp_blockdev_class(NULL, long_model, cls, sizeof(cls));
  assert_int_equal(strlen(cls), DP_DISK_CLASS_MAX - 1);
  dp_blockdev_class(NULL, long_model, small, sizeof(small));
  assert_string_equal(small, "MMMMMMM");

  assert_int_equal(dp_blockdev_class_check("gp3"), 0);
  assert_int_equal(dp_blockdev_class_check("Samsung_SSD.860-a"), 0);
  assert_int_equal(dp_blockdev_class_check(""), -EINVAL);
  assert_int_equal(dp_blockdev_class_check("two words"), -EINVAL);
  assert_int_equal(dp_blockdev_class_check("a/b"), -EINVAL);
  assert_int_equal(dp_blockdev_class_check(long_model), -EINVAL);
  long_model[DP_DISK_CLASS_MAX - 1] = '\0';
  assert_int_equal(dp_blockdev_class_check(long_model), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_attr_strict, setup, teardown),
      cmocka_unit_test_setup_teardown(test_info_per_kind, setup, teardown),
      cmocka_unit_test_setup_teardown(test_whole_disk, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sectors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resolve_md_and_dm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resolve_fixture_sysfs, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_resolve_stacked_sysfs, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_resolve_btrfs_and_overlay, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_loop_backing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resolve_live, setup, teardown),
      cmocka_unit_test_setup_teardown(test_media_classes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_escape, setup, teardown),
      cmocka_unit_test_setup_teardown(test_identity_per_kind, setup, teardown),
      cmocka_unit_test_setup_teardown(test_identity_stacks, setup, teardown),
      cmocka_unit_test(test_class_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
