#!/bin/bash
# collectd_duty.sh - the duty-cycle budget, measured rather than assumed.
#
# A loop device that nothing else uses is probed by the real collectd with
# a round of ~0.5 s every 1 s (50 % of the disk's time asked for) under
# DutyCycle 5. The disk's own busy time — io_ticks, field 10 of its
# /proc/diskstats line — over the run must stay within 5 % of wall time,
# and the stretched interval must be reported. A control run with
# DutyCycle 100 must exceed 5 % by far, so the check can fail.
set -u
. "$(dirname "$0")/lib.sh"
need_root
need_loop
need_collectd
FAILED=0

d=$(make_tmpdir)
dev=$(make_loop 64 "$d")
name=${dev##*/}
collectd_dir "$d"
ticks() { awk -v n="$name" '$3 == n { print $13 }' /proc/diskstats; }

run() { # run DUTY SECONDS -> prints the measured busy percent
  local duty=$1 secs=$2 t0 t1 w0 w1
  {
    collectd_conf_head "$d" 1
    cat <<CONF
LoadPlugin diskprobe
<Plugin diskprobe>
  DutyCycle $duty
  <Target "t">
    Device "$dev"
    ProbeInterval 1
    <Probe "randread-qd4">
      Pattern randread
      BlockSize "4k"
      QueueDepth 4
      Duration 0.5
    </Probe>
  </Target>
</Plugin>
CONF
  } >"$d/collectd.conf"
  rm -rf "$d/rrd" && mkdir "$d/rrd"
  : >"$d/collectd.log"
  t0=$(ticks)
  w0=$(date +%s%N)
  collectd_run "$d" "$secs" || fail "collectd exited with status $?"
  t1=$(ticks)
  w1=$(date +%s%N)
  python3 -c "print(round(100.0 * ($t1 - $t0) / (($w1 - $w0) / 1e6), 3))"
}

busy=$(run 100 8)
echo "DutyCycle 100: the disk was busy $busy % of the time"
python3 -c "import sys; sys.exit(0 if $busy > 15 else 1)" &&
  pass "control: without a budget the probes keep the disk busy ($busy %)" ||
  fail "control run only $busy % busy: the measurement cannot tell"

busy=$(run 5 40)
echo "DutyCycle 5: the disk was busy $busy % of the time"
python3 -c "import sys; sys.exit(0 if $busy <= 5 else 1)" &&
  pass "busy time $busy % stays within the 5 % budget" || fail "busy $busy % exceeds the 5 % budget"
grep -q 'DutyCycle 5% stretches ProbeInterval from 1 s to' "$d/collectd.log" &&
  pass "stretch logged: $(grep -o 'a round keeps.*' "$d/collectd.log" | head -1)" || fail "no stretch notice"
ivl=$(rrd_last "$d/rrd/diskprobe-test/diskprobe-t/duration-interval.rrd" seconds)
python3 -c "import sys; sys.exit(0 if $ivl >= 10 else 1)" &&
  pass "effective interval reported: $ivl s" || fail "effective interval $ivl s, expected >= 10"

[ "$FAILED" = 0 ] && echo "collectd_duty: all checks passed" || exit 1
