#!/bin/bash
# write_safety.sh - the plugin writes nowhere but its own probe file.
#
# Every read probe kind runs against a block-device target (a loop device
# full of random data) and every write kind against a probe file in an ext4
# filesystem on a second loop device, through the real collectd. Afterwards:
#   - the first device's SHA-256 is unchanged;
#   - in the filesystem, every other file is unchanged and nothing new
#     appeared, while the probe file did change (the writes happened);
#   - each probe dispatched IOPS.
# Then, with the command: syncwrite really asks the device for durability —
# the loop device's flush counter (/proc/diskstats) grows by about one per
# sync write, and not for plain random writes.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd

d=$(make_tmpdir)
raw=$(make_loop 64 "$d") || exit
fsdev=$(make_loop 128 "$d") || exit
dd if=/dev/urandom of="$raw" bs=1M count=64 oflag=direct status=none || fail "cannot fill $raw"
sum_raw_before=$(sha256sum <"$raw" | cut -d' ' -f1)

mnt="$d/mnt"
make_fs "$fsdev" "$mnt"
mkdir -p "$mnt/data/sub" "$mnt/dp"
for i in 1 2 3; do head -c $((i * 100000)) /dev/urandom >"$mnt/data/file$i"; done
echo "canary" >"$mnt/data/sub/canary.txt"
cp "$mnt/data/file1" "$mnt/dp/neighbour"   # a file beside the probe file
manifest() { (cd "$mnt" && find . -path ./lost+found -prune -o -type f ! -name diskprobe.probe -print0 | sort -z | xargs -0 sha256sum); }
manifest >"$d/before.txt"
# Lay out the probe file first (same format as the plugin's) to know its sum.
"$DISKPROBE" run --duration 0.2s --file-size 32m "$mnt/dp" >/dev/null || fail "layout failed"
sum_probe_before=$(sha256sum <"$mnt/dp/diskprobe.probe" | cut -d' ' -f1)
sync

probe() { printf '    <Probe "%s">\n      Pattern %s\n      BlockSize "%s"\n      QueueDepth %s\n      Duration 0.3\n    </Probe>\n' "$@"; }
collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
  <Target "raw">
    Device "$raw"
    ProbeInterval 2
$(probe randread randread 4k 4)
$(probe seqread seqread 256k 2)
  </Target>
  <Target "fs">
    Path "$mnt/dp"
    FileSize "32M"
    ProbeInterval 3
$(probe randread randread 4k 4)
$(probe seqread seqread 256k 2)
$(probe randwrite randwrite 4k 4)
$(probe seqwrite seqwrite 256k 2)
$(probe syncwrite syncwrite 4k 1)
  </Target>
CONF
collectd_run "$d" 10 || fail "collectd exited with status $?"
sync

sum_raw_after=$(sha256sum <"$raw" | cut -d' ' -f1)
[ "$sum_raw_before" = "$sum_raw_after" ] && pass "block-device target unchanged (sha256 ${sum_raw_after:0:16}...)" ||
  fail "block-device target CHANGED"
manifest >"$d/after.txt"
if diff -u "$d/before.txt" "$d/after.txt" >"$d/diff.txt"; then
  pass "every other file in the filesystem unchanged, nothing new ($(wc -l <"$d/after.txt") files)"
else
  fail "files outside the probe file changed:"; cat "$d/diff.txt"
fi
extra=$(cd "$mnt" && find . -path ./lost+found -prune -o -print | sort | grep -vxF -e . -e ./lost+found -e ./dp -e ./dp/diskprobe.probe -e ./dp/neighbour -e ./data -e ./data/sub -e ./data/file1 -e ./data/file2 -e ./data/file3 -e ./data/sub/canary.txt)
[ -z "$extra" ] && pass "no new paths" || fail "new paths: $extra"
sum_probe_after=$(sha256sum <"$mnt/dp/diskprobe.probe" | cut -d' ' -f1)
[ "$sum_probe_before" != "$sum_probe_after" ] && pass "the probe file was written (its sum changed)" ||
  fail "the probe file did not change: did the write probes write?"
for p in randread seqread; do
  f="$d/rrd/diskprobe-test/diskprobe-raw/operations_per_second-$p.rrd"
  [ -f "$f" ] && pass "raw/$p dispatched $(rrd_last "$f") IOPS" || fail "raw/$p: no RRD"
done
for p in randread seqread randwrite seqwrite syncwrite; do
  f="$d/rrd/diskprobe-test/diskprobe-fs/operations_per_second-$p.rrd"
  [ -f "$f" ] && pass "fs/$p dispatched $(rrd_last "$f") IOPS" || fail "fs/$p: no RRD"
done
grep -E "diskprobe plugin.*(failed|refus|cannot)" "$d/collectd.log" && fail "errors in the log"

# syncwrite asks for durability: flushes reach the device.
name=${fsdev##*/}
flushes() { diskstat "$name" 19; } # flush requests completed (kernel >= 5.5)
[ "$(flushes)" = -1 ] && skip "kernel reports no flush counters in /proc/diskstats"
for pat in randwrite syncwrite; do
  f0=$(flushes)
  "$DISKPROBE" run --pattern $pat --block-size 4k --ops 200 --duration 30s --format json --file-size 32m "$mnt/dp" >"$d/$pat.json" || fail "$pat run failed"
  f1=$(flushes)
  ops=$(json_get "$d/$pat.json" 'd["ops"] + d["queue_depth"]')
  echo "$pat: $ops writes, $((f1 - f0)) flushes reached $name"
  eval "fl_$pat=$((f1 - f0)) ops_$pat=$ops"
done
ratio_cmp "$fl_syncwrite" "$ops_syncwrite" '>=' 0.9 &&
  pass "syncwrite: $fl_syncwrite flushes for $ops_syncwrite writes" || fail "syncwrite: only $fl_syncwrite flushes for $ops_syncwrite writes"
ratio_cmp "$fl_randwrite" "$ops_randwrite" '<' 0.1 &&
  pass "randwrite: $fl_randwrite flushes (no durability asked)" || fail "randwrite caused $fl_randwrite flushes"

finish write_safety
