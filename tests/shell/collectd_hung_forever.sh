#!/bin/bash
# collectd_hung_forever.sh - a disk that never answers again does not hold
# collectd: the real daemon probes a FUSE file (faultyfs.py) beside a
# control target, the FUSE server is frozen (SIGSTOP: every request, the
# ones in flight too, waits for ever -- a dead path with no timeout, a hard
# NFS mount), the target stalls while the control keeps probing, and
# SIGTERM ends collectd at once and cleanly while the frozen disk still
# holds the prober's I/O. Then the server is thawed and the prober left
# behind exits. (The fault matrix has the other half: a device that still
# answers, slowly, with 32 reads in flight.)
set -u
. "$(dirname "$0")/lib.sh"
need collectd
[ -c /dev/fuse ] && /usr/bin/python3 -c "import fusepy" 2>/dev/null ||
  skip "no /dev/fuse or python3-fusepy"
d=$(make_tmpdir)
faultyfs_mount "$d/f"
at_exit "kill -CONT $FUSE_PID 2>/dev/null"
mkdir -p "$d/f/mnt/dp" "$d/control"
probe='    <Probe "r">\n      Pattern randread\n      BlockSize "4k"\n      QueueDepth 8\n      Duration 0.3\n    </Probe>\n'
collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
  <Target "frozen">
    Path "$d/f/mnt/dp"
    FileSize "8M"
    ProbeInterval 1
    Timeout 2
$(printf "$probe")
  </Target>
  <Target "control">
    Path "$d/control"
    FileSize "8M"
    ProbeInterval 1
    Timeout 2
$(printf "$probe")
  </Target>
CONF
collectd_start "$d"
log="$d/collectd.log"
rrd="$d/rrd/$COLLECTD_HOST"
pts() { rrd_points "$rrd/diskprobe-$1/operations_per_second-r.rrd" 900; }
pts_gt() { [ "$(pts "$1")" -gt "$2" ]; }
wait_until 30 pts_gt frozen 1 && wait_until 30 pts_gt control 1 ||
  die "the targets never dispatched: $(tail -5 "$log")"
pass "both targets probing ($(pts frozen) and $(pts control) points)"
frozen_prober=$(for p in $(pgrep -P "$COLLECTD_PID" -x diskprobe-probe); do
  grep -qF "$d/f/mnt/dp" <(ls -l "/proc/$p/fd" 2>/dev/null) && echo "$p"
done | head -1)
[ -n "$frozen_prober" ] && pass "the frozen target's prober: pid $frozen_prober, holding its probe file" ||
  fail "no prober process holds $d/f/mnt/dp/diskprobe.probe"

kill -STOP "$FUSE_PID"
stalled() { grep -F 'target "frozen"' "$log" | grep -qF ' stalled: '; }
wait_until 20 stalled && pass "frozen: $(grep -F 'target "frozen"' "$log" | grep -F ' stalled: ' | tail -1 | sed 's/^\[[^]]*\] //')" ||
  fail "no stall line for the frozen target"
before=$(pts control)
wait_until 10 pts_gt control "$((before + 2))" && pass "the control target kept probing ($before -> $(pts control) points)" ||
  fail "the control target stopped probing ($before -> $(pts control) points)"

t0=$(date +%s%N)
kill -TERM "$COLLECTD_PID"
collectd_wait "$COLLECTD_PID" 30
rc=$?
secs=$(num_calc "($(date +%s%N) - $t0) / 1e9" %.1f)
if [ "$rc" = 0 ] && is_running "$frozen_prober"; then
  pass "SIGTERM: collectd exited (status 0) in $secs s while the frozen disk still holds the prober's I/O"
else
  fail "SIGTERM: collectd status $rc after $secs s; frozen prober running: $(is_running "$frozen_prober" && echo yes || echo no)"
fi
grep -q "Exiting normally" "$log" && pass "collectd exited normally" || fail "collectd did not exit normally"
echo "  (shutdown line: $(grep -o 'diskprobe plugin: shut down in [0-9.]* s.*' "$log" | tail -1))"

kill -CONT "$FUSE_PID"
gone() { ! is_running "$frozen_prober"; }
wait_until 30 gone && pass "the prober left behind exited once the disk answered again" ||
  fail "the frozen target's prober $frozen_prober still runs after the thaw"
finish collectd_hung_forever "tail -20 $log"
