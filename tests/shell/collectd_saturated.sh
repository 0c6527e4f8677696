#!/bin/bash
# collectd_saturated.sh - the saturation policy, on a real busy disk.
#
# fio keeps a loop device busy (randread, QD 32) while the real collectd
# probes it. diskprobe probes anyway (results keep coming) and marks the
# target saturated = 1 while the disk is busier than SaturationThreshold
# (75 % here; 90 by default) with I/O that is
# mostly not its own; once fio stops, saturated returns to 0.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd
need_cmd fio
d=$(make_tmpdir)
dev=$(make_loop 256 "$d") || exit
collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
  # fio's load reaches 90-98 % on an idle machine, less on a busy CI host
  SaturationThreshold 75
  <Target "busy">
    Device "$dev"
    ProbeInterval 2
    <Probe "randread-qd1">
      BlockSize "4k"
      Duration 0.2
    </Probe>
  </Target>
CONF
rrd="$d/rrd/diskprobe-test"
collectd_start "$d"
sleep 3
fio --name=load --filename="$dev" --rw=randread --bs=4k --iodepth=32 --numjobs=2 \
  --ioengine=libaio --direct=1 --time_based --runtime=14 --group_reporting >"$d/fio.out" 2>&1 &
fpid=$!
register_pid "$fpid"
seen=0 util_max=0
for ((i = 0; i < 26; i++)); do
  sleep 0.5
  s=$(rrd_last "$rrd/diskprobe-busy/saturated-saturated.rrd" 2>/dev/null)
  [ "${s%%.*}" = 1 ] && seen=1
  u=$(rrd_last "$rrd/diskprobe-dev-${dev##*/}/percent-utilization.rrd" 2>/dev/null)
  util_max=$(num_max "$u" "$util_max")
done
wait "$fpid"
echo "device utilisation peaked at $util_max % under fio"
[ $seen = 1 ] && pass "saturated = 1 while fio kept the disk busy" || fail "saturated never became 1 (util peak $util_max %)"
n=$(rrd_points "$rrd/diskprobe-busy/operations_per_second-randread-qd1.rrd" 30)
[ "$n" -ge 3 ] && pass "probes kept running on the saturated disk ($n results)" || fail "only $n probe results during the load"
sleep 4
s=$(rrd_last "$rrd/diskprobe-busy/saturated-saturated.rrd")
[ "${s%%.*}" = 0 ] && pass "saturated back to 0 once the load stopped" || fail "saturated still $s after the load"
collectd_stop
finish collectd_saturated
