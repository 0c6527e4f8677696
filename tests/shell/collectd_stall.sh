#!/bin/bash
# collectd_stall.sh - a hung disk, for real: the real collectd probes two
# loop devices; one is throttled with cgroup-v1 blkio to 1 read IOPS with a
# 2 s Timeout and a queue-depth-8 probe, so its I/Os wait up to 8 s.
#   - within one probe interval: the FAILURE notification naming host,
#     target and device, and stalled = 1 in the RRD;
#   - the other, healthy target keeps dispatching throughout;
#   - the throttle lifted: the OKAY notification, stalled = 0, probing resumes;
#   - the probe workers block the signals collectd handles;
#   - throttled again and collectd stopped while the disk hangs: the
#     plugin's shutdown returns within Timeout + 5 s (its own log line), and
#     the process exits once the kernel has finished the in-flight I/O.
set -u
. "$(dirname "$0")/lib.sh"
need root loop blkio collectd

d=$(make_tmpdir)
slow=$(make_loop 64 "$d") || exit
good=$(make_loop 64 "$d") || exit
cg=$(make_cgroup) || exit
collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
  <Target "slow">
    Device "$slow"
    ProbeInterval 3
    Timeout 2
    <Probe "randread-qd8">
      Pattern randread
      BlockSize "4k"
      QueueDepth 8
      Duration 0.5
    </Probe>
  </Target>
  <Target "healthy">
    Device "$good"
    ProbeInterval 3
    Timeout 2
    <Probe "randread-qd1">
      Pattern randread
      BlockSize "4k"
      QueueDepth 1
      Duration 0.3
    </Probe>
  </Target>
CONF
log="$d/collectd.log"
rrd="$d/rrd/diskprobe-test"

throttle "$cg" "$slow" read_iops 1
collectd_start "$d" "$cg"
pid=$COLLECTD_PID

healthy_updates() { # how many distinct timestamps the healthy RRD holds
  rrd_points "$rrd/diskprobe-healthy/operations_per_second-randread-qd1.rrd" 120
}

# One probe interval (3 s) plus the 2 s Timeout, with slack for the start.
if wait_log "$log" 12 "Notification: severity = FAILURE.*plugin_instance = slow.*I/O stalled"; then
  line=$(grep -m1 "severity = FAILURE.*I/O stalled" "$log")
  pass "FAILURE notification: ${line#*message = }"
  echo "$line" | grep -q "host diskprobe-test, target slow, device loop" ||
    fail "the notification does not name host, target and device: $line"
else
  fail "no FAILURE notification for the stalled target"; tail -20 "$log"
fi
sleep 2
s=$(rrd_last "$rrd/diskprobe-slow/stalled-stalled.rrd")
[ "${s%.*}" = 1 ] && pass "stalled metric = 1 while hung" || fail "stalled metric is $s while hung"
h1=$(healthy_updates)

sleep 6 # the healthy target keeps going while the other disk hangs
h2=$(healthy_updates)
[ "$h2" -gt "$h1" ] && pass "healthy target dispatched while the other hung ($h1 -> $h2 points)" ||
  fail "healthy target stopped dispatching ($h1 -> $h2)"

unthrottle "$cg" "$slow" read_iops
if wait_log "$log" 10 "Notification: severity = OKAY.*plugin_instance = slow"; then
  pass "OKAY notification: $(notif_msg "$log" 'severity = OKAY')"
else
  fail "no OKAY notification after the throttle was lifted"
fi
sleep 5
s=$(rrd_last "$rrd/diskprobe-slow/stalled-stalled.rrd")
[ "${s%.*}" = 0 ] && pass "stalled metric back to 0" || fail "stalled metric is $s after recovery"
grep -q "device loop[0-9]* recovered" "$log" && pass "recovery logged" || fail "no recovery line"
iops=$(rrd_last "$rrd/diskprobe-slow/operations_per_second-randread-qd8.rrd")
num_cmp "$iops" '>' 100 &&
  pass "probing resumed on the recovered disk ($iops IOPS)" || fail "no probe after recovery (iops $iops)"

# The probe workers block the signals collectd handles (SIGHUP 1, SIGINT 2,
# SIGUSR1 10, SIGTERM 15), so collectd's handlers run on its own threads and
# never on a worker waiting in io_getevents.
blocks() { (((16#$1 >> ($2 - 1)) & 1)); } # blocks SIGBLK-HEX SIGNUM
nw=0 unblocked=0
for task in /proc/"$pid"/task/*; do
  case $(cat "$task/comm" 2>/dev/null) in diskprobe*) ;; *) continue ;; esac
  nw=$((nw + 1))
  blk=$(awk '/^SigBlk:/{print $2}' "$task/status")
  for sig in 1 2 10 15; do
    blocks "$blk" $sig && continue
    unblocked=$((unblocked + 1))
    fail "worker $(cat "$task/comm") (task ${task##*/}) does not block signal $sig (SigBlk $blk)"
  done
done
if [ "$nw" -lt 2 ]; then
  fail "$nw diskprobe worker threads found in collectd (2 expected)"
elif [ "$unblocked" = 0 ]; then
  pass "the $nw probe workers block SIGHUP, SIGINT, SIGUSR1 and SIGTERM"
fi
mb=$(awk '/^SigBlk:/{print $2}' /proc/"$pid"/status)
blocks "$mb" 15 && fail "collectd's main thread blocks SIGTERM (SigBlk $mb): the mask leaked to the caller"

# Shutdown while the disk hangs.
throttle "$cg" "$slow" read_iops 1
wait_log "$log" 10 "I/O stalled.*\$" >/dev/null
stalls() { [ "$(grep -c "severity = FAILURE.*I/O stalled" "$log")" -ge 2 ]; }
wait_until 10 stalls || fail "second stall not detected"
kill -TERM "$pid"
wait_log "$log" 30 "diskprobe plugin: shut down in" || fail "the plugin's shutdown did not return"
secs=$(grep -o "shut down in [0-9.]* s" "$log" | awk '{print $4}')
num_cmp "$secs" '<=' $((2 + 5 + 1)) &&
  pass "plugin shutdown returned in $secs s with the disk hung (Timeout 2 s + 5 s allowed)" ||
  fail "plugin shutdown took $secs s"
unthrottle "$cg" "$slow" read_iops # let the kernel finish the I/O so the process can exit
collectd_wait "$pid"
rc=$?
[ $rc = 0 ] && pass "collectd exited normally" || fail "collectd exited with status $rc"

finish collectd_stall 'tail -30 "$log"'
