#!/bin/bash
# collectd_eio.sh - real I/O errors through the real collectd.
#
# The probe file of target "flaky" lives on tests/shell/faultyfs.py, a FUSE
# filesystem that can make every read and write fail with EIO on demand;
# target "healthy" is an ordinary probe file. Once flaky has probed
# cleanly, EIO is switched on:
#   - a FAILURE notification names host, target, device state and the
#     error ("Input/output error"), and the io error counter grows;
#   - the healthy target keeps dispatching;
#   - collectd keeps running; with EIO off again, flaky probes cleanly;
#   - the filesystem then vanishes (its daemon killed): one log line names
#     the target and the cause, and the healthy target carries on.
set -u
. "$(dirname "$0")/lib.sh"
need root collectd
[ -c /dev/fuse ] || skip "no /dev/fuse"
/usr/bin/python3 -c "import fusepy" 2>/dev/null || skip "python3-fusepy not installed"

d=$(make_tmpdir)
mkdir -p "$d/back" "$d/mnt"
echo ok >"$d/ctl"
/usr/bin/python3 "$(dirname "$0")/faultyfs.py" "$d/back" "$d/mnt" "$d/ctl" >"$d/fuse.log" 2>&1 &
fuse_pid=$!
register_pid "$fuse_pid"
wait_until 5 mountpoint -q "$d/mnt" || skip "cannot mount the FUSE test filesystem: $(cat "$d/fuse.log")"
register_mount "$d/mnt"

target() { printf '  <Target "%s">\n    Path "%s"\n    FileSize "8M"\n    ProbeInterval 2\n    <Probe "r">\n      BlockSize "4k"\n      Duration 0.2\n    </Probe>\n  </Target>\n' "$@"; }
collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
$(target flaky "$d/mnt/dp")
$(target healthy "$d/healthy")
CONF
log="$d/collectd.log"
rrd="$d/rrd/diskprobe-test"
collectd_start "$d"
pid=$COLLECTD_PID
points() { rrd_points "$rrd/diskprobe-$1/operations_per_second-r.rrd" 120; }
has_points() { [ "$(points "$1")" -ge 1 ]; }

wait_until 20 has_points flaky && pass "flaky target probed cleanly first" || fail "flaky target never probed"
h1=$(points healthy)

echo eio >"$d/ctl"
wait_log "$log" 10 "severity = FAILURE.*plugin_instance = flaky"
if grep -q "severity = FAILURE.*plugin_instance = flaky.*I/O errors.*Input/output error" "$log"; then
  pass "FAILURE: $(notif_msg "$log" 'severity = FAILURE.*flaky')"
else
  fail "no FAILURE notification naming the I/O error: $(grep flaky "$log" | tail -3)"
fi
sleep 3
errs=$(rrd_last "$rrd/diskprobe-flaky/probe_errors-r.rrd" io)
num_cmp "$errs" '>' 0 &&
  pass "io error counter: $errs" || fail "io error counter is $errs"
h2=$(points healthy)
[ "$h2" -gt "$h1" ] && pass "healthy target kept dispatching ($h1 -> $h2 points)" || fail "healthy target stopped ($h1 -> $h2)"

echo ok >"$d/ctl"
n0=$(grep -c "severity = FAILURE.*plugin_instance = flaky" "$log")
sleep 5
n1=$(grep -c "severity = FAILURE.*plugin_instance = flaky" "$log")
iops=$(rrd_last "$rrd/diskprobe-flaky/operations_per_second-r.rrd")
[ "$n1" = "$n0" ] && num_cmp "$iops" '>' 0 &&
  pass "errors stopped and flaky probes again ($iops IOPS)" || fail "after EIO off: $((n1 - n0)) new FAILUREs, iops $iops"
# The device vanishes: the FUSE daemon dies (SIGKILL) under an open probe
# file, then its dead mount is removed.
kill -9 "$fuse_pid"
wait_log "$log" 10 'target "flaky" \(.*Transport endpoint is not connected'
sleep 4
n=$(grep -c 'target "flaky" (.*Transport endpoint is not connected' "$log")
# c_complain rate-limits: the first line at once, then after 1, 2, 4 ... intervals.
[ "$n" -ge 1 ] && [ "$n" -le 3 ] && pass "vanished ($n rate-limited lines): $(log_first "$log" 'target "flaky" \(.*Transport endpoint')" ||
  fail "vanished device: expected 1-3 log lines naming the cause, got $n: $(grep flaky "$log" | tail -3)"
umount -l "$d/mnt"
wait_log "$log" 10 'target "flaky".*the path is now on '
grep -q 'target "flaky".*the path is now on .*Not probing there' "$log" &&
  pass "unmounted: $(log_first "$log" 'the path is now on')" || fail "no line about the unmounted filesystem"
[ ! -e "$d/mnt/dp" ] && pass "no probe file laid out in the bare mount point" || fail "a probe file was created under the unmounted mount point"
h3=$(points healthy)
sleep 3
[ "$(points healthy)" -gt "$h3" ] && pass "healthy target still dispatching after the other vanished" || fail "healthy target stopped"
is_running "$pid" && pass "collectd still running" || fail "collectd died"
collectd_stop "$pid"
finish collectd_eio 'tail -20 "$log"'
