/*
 * test_peers.c - a host's disks in peer groups (src/peers.c) over a
 * fixture sysfs and generated device-view intervals: whole disks of one
 * class and model form a group (a partition and a disk of another model
 * do not join it), a group of two is not judged, and the disk three times
 * slower than its peers at the same load is reported as changed (flagged)
 * while the others are not; every judged disk's verdict is handed out at
 * every interval; a 3 s window (FailSlowWindow) at 1 s flags within a
 * minute.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "peers.h"

static char root[] = "/tmp/dp-test-peers.XXXXXX";

/* ROOT/block/DISK/REL of the fixture sysfs. */
static void attr(const char *disk, const char *rel, const char *text) {
  char p[256];
  snprintf(p, sizeof(p), "block/%s/%s", disk, rel);
  fixture_write(root, p, text);
}

/* One interval of disk `name`: 200 reads of 64 KiB a second at `lat_ms`. */
static dp_diskstats_metrics_t interval(const char *name, double lat_ms) {
  dp_diskstats_metrics_t m;
  memset(&m, 0, sizeof(m));
  snprintf(m.name, sizeof(m.name), "%s", name);
  m.interval_s = 15;
  m.d_reads = 3000;
  m.d_read_ms = (uint64_t)(3000 * lat_ms);
  m.read_bytes_per_s = 200 * 65536.0;
  return m;
}

static struct {
  unsigned flagged[8], changed, each;
  double last[8]; /* each disk's last score seen by on_each */
  int flag_now[8];
} seen;

static void on_each(const dp_peers_disk_t *d, void *arg) {
  (void)arg;
  seen.each++;
  if (d->device[2] >= 'a' && d->device[2] <= 'h') {
    seen.last[d->device[2] - 'a'] = d->v.slowdown;
    seen.flag_now[d->device[2] - 'a'] = d->v.flagged;
  }
}

static void on_changed(const dp_peers_disk_t *d, void *arg) {
  (void)arg;
  seen.changed++;
  if (d->v.flagged && d->device[2] >= 'a' && d->device[2] <= 'h')
    seen.flagged[d->device[2] - 'a']++;
}

static void test_groups_and_flag(void **state) {
  (void)state;
  assert_non_null(mkdtemp(root));
  const char *disks[] = {"sda", "sdb", "sdc", "sdd", "sde", "sdf"};
  for (int i = 0; i < 6; i++) {
    attr(disks[i], "size", "1000000\n");
    attr(disks[i], "queue/rotational", "1\n");
    attr(disks[i], "device/model", i < 4 ? "HDD-A\n" : "HDD-B\n");
  }
  attr("sdd", "device/serial", "S123\n");
  dp_diskstats_metrics_t m[7];
  for (int i = 0; i < 6; i++)
    m[i] = interval(disks[i], 5);
  m[6] = interval("sda1", 5); /* a partition: no /sys/block/sda1 */
  dp_peers_t *p;
  assert_int_equal(dp_peers_new(&p, m, 7, root, 15, 300), 0);
  /* sda..sdd are a group; sde and sdf (another model) only two */
  assert_int_equal(dp_peers_ndevices(p), 4);
  memset(&seen, 0, sizeof(seen));
  for (int t = 0; t < 12 * 60 * 4; t++) { /* 12 hours of 15 s intervals */
    for (int i = 0; i < 6; i++)
      m[i] = interval(disks[i], (i == 3 ? 15 : 5) * (1 + 0.05 * (t % 3)));
    dp_peers_feed(p, m, 6, 1e9 + 15.0 * t, on_each, on_changed, NULL);
  }
  assert_int_equal(seen.flagged[3], 1); /* sdd, once */
  for (int i = 0; i < 3; i++)
    if (seen.flagged[i])
      fail_msg("%s flagged: it is as fast as its peers", disks[i]);
  /* each: every interval, every judged disk, the verdict then in force */
  assert_int_equal(seen.each, 4 * 12 * 60 * 4);
  assert_true(seen.flag_now[3] && seen.last[3] > 2.5 && seen.last[3] < 3.5);
  for (int i = 0; i < 3; i++)
    assert_true(!seen.flag_now[i] && seen.last[i] > 0.8 && seen.last[i] < 1.2);
  dp_peers_free(p);

  /* FailSlowWindow 3 s at 1 s intervals: flagged within a minute, at a
   * window's end (12 windows of 3 intervals before a score) */
  dp_peers_t *bad;
  assert_int_equal(dp_peers_new(&bad, m, 7, root, 1, 0), -EINVAL);
  assert_int_equal(dp_peers_new(&p, m, 7, root, 1, 3), 0);
  memset(&seen, 0, sizeof(seen));
  int first = -1;
  for (int t = 0; t < 120; t++) {
    for (int i = 0; i < 6; i++)
      m[i] = interval(disks[i], (i == 3 ? 15 : 5) * (1 + 0.05 * (t % 3)));
    dp_peers_feed(p, m, 6, 1e9 + t, on_each, on_changed, NULL);
    if (first < 0 && seen.flagged[3])
      first = t;
  }
  assert_true(first >= 12 * 3 - 1 && first < 60 && (first + 1) % 3 == 0);
  assert_int_equal(seen.flagged[3], 1);
  assert_int_equal(seen.changed, 1);
  dp_peers_free(p);
  fixture_remove(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_groups_and_flag),
  };
  return cmocka_run_group_tests_name("peers", tests, NULL, NULL);
}
