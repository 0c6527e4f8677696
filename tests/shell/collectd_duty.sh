#!/bin/bash
# collectd_duty.sh - the duty-cycle budget, measured rather than assumed.
#
# A loop device that nothing else uses is probed by the real collectd with
# a round of ~0.5 s every 1 s (50 % of the disk's time asked for) under
# DutyCycle 5. The disk's own busy time — io_ticks, field 10 of its
# /proc/diskstats line — over the run must stay within 5 % of wall time,
# by shortening the probe, never by stretching the interval: the start
# says what the configuration costs and how short the probe runs, and the
# interval dispatched stays the ProbeInterval set (1 s). A control run
# with DutyCycle 100 must exceed 5 % by far, so the check can fail.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd

d=$(make_tmpdir)
dev=$(make_loop 64 "$d") || exit
name=${dev##*/}
ticks() { diskstat "$name" 13; } # io_ticks, ms

run() { # run DUTY SECONDS: the measured busy percent is in $busy
  local duty=$1 secs=$2 t0 t1 w0 w1
  collectd_conf "$d" 1 <<CONF
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
CONF
  rm -rf "$d/rrd" && mkdir "$d/rrd"
  : >"$d/collectd.log"
  t0=$(ticks)
  w0=$(date +%s%N)
  collectd_run "$d" "$secs" || fail "collectd exited with status $?"
  t1=$(ticks)
  w1=$(date +%s%N)
  busy=$(num_calc "100.0 * ($t1 - $t0) / (($w1 - $w0) / 1e6)" %.3f)
}

run 100 8
echo "DutyCycle 100: the disk was busy $busy % of the time"
num_cmp "$busy" '>' 15 &&
  pass "control: without a budget the probes keep the disk busy ($busy %)" ||
  fail "control run only $busy % busy: the measurement cannot tell"

run 5 20
echo "DutyCycle 5: the disk was busy $busy % of the time"
num_cmp "$busy" '<=' 5 &&
  pass "busy time $busy % stays within the 5 % budget" || fail "busy $busy % exceeds the 5 % budget"
grep -q 'its probes ask 0.5 s of disk .* every 1 s; DutyCycle 5 % allows 0.05 s a round, so each runs for 10 % of its Duration' "$d/collectd.log" &&
  pass "the cost said at start: $(grep -o 'its probes ask.*' "$d/collectd.log" | head -1)" ||
  fail "no start notice of the probes' budget: $(grep -i dutycycle "$d/collectd.log" | head -3)"
ivl=$(rrd_last "$d/rrd/diskprobe-test/diskprobe-t/duration-interval.rrd" seconds)
num_cmp "$ivl" '==' 1 &&
  pass "the interval stays the ProbeInterval set: $ivl s" || fail "interval $ivl s, expected 1 (ProbeInterval)"
n=$(rrd_points "$d/rrd/diskprobe-test/diskprobe-t/operations_per_second-randread-qd4.rrd" 20)
num_cmp "$n" '>=' 13 &&
  pass "a round every second: $n IOPS points in 20 s" || fail "only $n IOPS points in 20 s: rounds were delayed"

finish collectd_duty
