#!/bin/bash
# loop_throttle.sh - the probe engine against a real, slowed device.
#
# A loop device is throttled with cgroup-v1 blkio to 250 read IOPS and
# `diskprobe run --queue-depth 1` must report IOPS within 10% of 250: the
# I/O reached the device (not the page cache, not unwritten extents, which
# would read far faster than the throttle). Done for a block-device target
# (read-only) and for a probe file on an ext4 filesystem on the loop device;
# at queue depth 8 the throttle still caps IOPS and the achieved depth is ~8.
# A control run without the throttle must be well above 250, so the check
# can fail. Skips (77) where loop devices or blkio throttling are missing.
set -u
. "$(dirname "$0")/lib.sh"
need root loop blkio
IOPS=250

dir=$(make_tmpdir)
dev=$(make_loop 256 "$dir") || exit
cg=$(make_cgroup) || exit
out="$dir/out.json"

probe() { # probe LABEL QD TARGET [extra args]
  local label=$1 qd=$2 target=$3
  shift 3
  if ! in_cgroup "$cg" "$DISKPROBE" run --queue-depth "$qd" --duration 4s \
    --format json "$@" "$target" >"$out" 2>"$dir/err"; then
    fail "$label: diskprobe failed: $(cat "$dir/err")"
    return 1
  fi
  iops=$(json_get "$out" 'd["iops"]')
  aqd=$(json_get "$out" 'd["achieved_queue_depth"]')
  p99=$(json_get "$out" 'd["latency_s"]["p99"]')
  printf '%-34s iops %8.1f  achieved qd %5.2f  p99 %.4f s\n' "$label" "$iops" "$aqd" "$p99"
}

# Control: no throttle yet, the device must be much faster than 250 IOPS.
probe "block device, unthrottled, qd1" 1 "$dev" || exit 1
num_cmp "$iops" '>' $((4 * IOPS)) &&
  pass "unthrottled loop device is faster than 4x the throttle ($iops IOPS)" ||
  skip "loop device too slow unthrottled ($iops IOPS) for the check to mean anything"

throttle "$cg" "$dev" read_iops $IOPS
probe "block device, $IOPS IOPS, qd1" 1 "$dev" &&
  { within "$iops" $IOPS 10 && pass "block device: $iops IOPS within 10% of $IOPS" ||
    fail "block device: expected $IOPS IOPS +-10%, got $iops"; }

probe "block device, $IOPS IOPS, qd8" 8 "$dev" &&
  { within "$iops" $IOPS 10 && within "$aqd" 8 10 &&
    pass "qd8: $iops IOPS, achieved depth $aqd" ||
    fail "qd8: expected $IOPS IOPS and depth ~8, got $iops IOPS, depth $aqd"; }

# A probe file on a filesystem on the throttled device.
unthrottle "$cg" "$dev" read_iops
mnt="$dir/mnt"
make_fs "$dev" "$mnt"
throttle "$cg" "$dev" read_iops $IOPS
probe "probe file, $IOPS IOPS, qd1" 1 "$mnt/probes" --file-size 64m &&
  { within "$iops" $IOPS 10 && pass "probe file: $iops IOPS within 10% of $IOPS" ||
    fail "probe file: expected $IOPS IOPS +-10%, got $iops"; }

# The block device target must be opened read-only: a write probe is refused.
if "$DISKPROBE" run --pattern randwrite --duration 1s "$dev" >/dev/null 2>"$dir/err"; then
  fail "a write probe on a block device was not refused"
else
  grep -q "refusing randwrite on a block device" "$dir/err" &&
    pass "write probe on a block device refused" ||
    fail "unexpected error for a write probe on a block device: $(cat "$dir/err")"
fi

finish loop_throttle
