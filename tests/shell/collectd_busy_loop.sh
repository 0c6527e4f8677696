#!/bin/bash
# collectd_busy_loop.sh - busy or failing, for a loop device: the real
# collectd probes a loop device whose backing file lives on the test
# directory's disk, while fio loads that disk (not the loop device) with
# direct random reads. A ceiling of 10 us makes the target WARNING by
# ceiling at its third round whatever the load; its notification must say
# that the disk under the loop device was busy with other I/O, naming it
# (the loop device's own utilisation stays low: before the device view
# followed a loop device to its backing disk, the words were missing), and
# the log must say once which disk is under it.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd
need_cmd fio
need_cmd findmnt util-linux
need_cmd lsblk util-linux

d=$(make_tmpdir)
src=$(findmnt -no SOURCE --target "$d")
[ -b "$src" ] || skip "the test directory's filesystem ($src) has no block device"
under=$(lsblk -no PKNAME "$src" 2>/dev/null | head -n 1)
[ -n "$under" ] || under=$(basename "$src")
dev=$(make_loop 64 "$d" random) # written: its reads reach the disk below
loop=${dev#/dev/}
echo "loop device $dev over a file on $src (disk $under)"

fio --name=load --filename="$d/load.img" --size=256M --rw=randread --bs=4k --iodepth=64 --numjobs=2 \
  --ioengine=libaio --direct=1 --time_based --runtime=120 >"$d/fio.out" 2>&1 &
fio_pid=$!
register_pid "$fio_pid"

collectd_conf "$d" 1 <<CONF
  Splay false
  # fio's load reaches 90-98 % on an idle machine, less on a busy CI host
  SaturationThreshold 75
  <Target "lo">
    Device "$dev"
    ProbeInterval 2
    LatencyCeiling 0.00001
    <Probe "randread-qd1">
      BlockSize "4k"
      Duration 0.2
    </Probe>
  </Target>
CONF
log="$d/collectd.log"
collectd_start "$d"

wait_log "$log" 20 "disk $loop is a loop device over a file on $under"
grep -q "disk $loop is a loop device over a file on $under: a slow verdict says when $under is busy" "$log" &&
  pass "log: $(log_first "$log" "disk $loop is a loop device")" ||
  fail "no log line naming the disk under $loop: $(grep -i loop "$log" | tail -3)"

wait_log "$log" 40 "severity = WARNING.*plugin_instance = lo.*busy with other I/O"
msg=$(notif_msg "$log" "severity = WARNING.*plugin_instance = lo")
util=$(awk -v n="$under" '$3 == n { print $14 }' /proc/diskstats)
if [[ $msg == *"the disk under its loop device, $under, was busy with other I/O (utilisation"* ]]; then
  pass "WARNING says the disk under it was busy: $msg"
else
  fail "WARNING without the busy words for $under (its io_ticks now $util ms): ${msg:-none: $(grep 'plugin_instance = lo' "$log" | tail -3)}"
fi
collectd_stop
finish collectd_busy_loop
