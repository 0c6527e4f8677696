#!/bin/bash
# collectd_partitions.sh - two targets on two partitions of one disk share
# one worker.
#
# A loop device is partitioned in two (sfdisk, attached with losetup -P),
# each partition gets an ext4 filesystem, and the real collectd probes one
# probe file on each. Probes on the same physical device must not run
# together (they would measure each other), so the plugin gives each whole
# disk one worker: its init line must say that the loop disk's worker probes
# 2 targets, and no second worker may be started for that disk (a worker per
# partition would mean the partitions were taken for disks). Both targets
# must still dispatch values (their RRD files get points). That the two
# probes never overlap in time is not checked here: it cannot be seen from
# outside the plugin.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd
need_cmd mkfs.ext4 e2fsprogs
command -v sfdisk >/dev/null || apt-get install -y -q fdisk >/dev/null 2>&1 ||
  skip "sfdisk not installed and apt-get install fdisk failed"

d=$(make_tmpdir)
dev=$(LOOP_FLAGS=-P make_loop 160 "$d") || exit
disk=${dev##*/}
printf 'label: dos\n,64M,L\n,,L\n' | sfdisk -q "$dev" >"$d/sfdisk.out" 2>&1 ||
  die "sfdisk $dev failed: $(cat "$d/sfdisk.out")"
partx -u "$dev" 2>/dev/null # in case the kernel did not re-read the table
wait_until 10 test -b "${dev}p2" || die "no partitions ${dev}p1, ${dev}p2 after sfdisk: $(ls "$dev"*)"
make_fs "${dev}p1" "$d/mnt1"
make_fs "${dev}p2" "$d/mnt2"

target() { printf '  <Target "%s">\n    Path "%s"\n    FileSize "16M"\n    ProbeInterval 2\n    <Probe "r">\n      Pattern randread\n      BlockSize "4k"\n      Duration 0.2\n    </Probe>\n  </Target>\n' "$@"; }
collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
$(target part1 "$d/mnt1/dp")
$(target part2 "$d/mnt2/dp")
CONF
collectd_check "$d" || { cat "$d/check.out"; die "collectd -T refused the config"; }
: >"$d/collectd.log"
rm -rf "$d/rrd"/*
log="$d/collectd.log"
rrd="$d/rrd/$COLLECTD_HOST"
points() { rrd_points "$rrd/diskprobe-$1/operations_per_second-r.rrd" 120; }
both_dispatched() { [ "$(points part1)" -ge 1 ] && [ "$(points part2)" -ge 1 ]; }

collectd_start "$d"
wait_log "$log" 30 "worker for disk" || fail "no worker line in the log"
wait_until 60 both_dispatched

# (a) one worker for the disk, probing both targets
n=$(grep -c "diskprobe plugin: worker for disk $disk " "$log")
if [ "$n" = 1 ] && grep -q "diskprobe plugin: worker for disk $disk probes 2 target(s)\." "$log"; then
  pass "one worker: $(log_first "$log" "worker for disk $disk ")"
else
  fail "expected one line 'worker for disk $disk probes 2 target(s).', found $n worker line(s) for $disk: $(grep 'worker for disk' "$log")"
fi
grep -q "worker for disk ${disk}p[0-9]" "$log" && fail "a worker was started for a partition: $(grep "worker for disk ${disk}p" "$log")"

# (b) both targets dispatch values
for t in part1 part2; do
  n=$(points $t)
  [ "$n" -ge 1 ] && pass "$t dispatched ($n points in its RRD)" || fail "$t: only $n points in its RRD"
done
grep -E "diskprobe plugin.*(ERROR|error|failed|cannot)" "$log" && fail "errors in the log"

collectd_stop || fail "collectd exited with status $?"
finish collectd_partitions 'tail -20 "$log"'
