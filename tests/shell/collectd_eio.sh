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
need_root
need_collectd
[ -c /dev/fuse ] || skip "no /dev/fuse"
/usr/bin/python3 -c "import fusepy" 2>/dev/null || skip "python3-fusepy not installed"
FAILED=0

d=$(make_tmpdir)
mkdir -p "$d/back" "$d/mnt"
echo ok >"$d/ctl"
/usr/bin/python3 "$(dirname "$0")/faultyfs.py" "$d/back" "$d/mnt" "$d/ctl" >"$d/fuse.log" 2>&1 &
_pids+=("$!")
for ((i = 0; i < 20; i++)); do mountpoint -q "$d/mnt" && break; sleep 0.25; done
mountpoint -q "$d/mnt" || skip "cannot mount the FUSE test filesystem: $(cat "$d/fuse.log")"
_mounts+=("$d/mnt")

collectd_dir "$d"
{
  collectd_conf_head "$d" 1
  cat <<CONF
LoadPlugin diskprobe
<Plugin diskprobe>
  Splay false
  DutyCycle 100
  <Target "flaky">
    Path "$d/mnt/dp"
    FileSize "8M"
    ProbeInterval 2
    <Probe "r">
      BlockSize "4k"
      Duration 0.2
    </Probe>
  </Target>
  <Target "healthy">
    Path "$d/healthy"
    FileSize "8M"
    ProbeInterval 2
    <Probe "r">
      BlockSize "4k"
      Duration 0.2
    </Probe>
  </Target>
</Plugin>
CONF
} >"$d/collectd.conf"
log="$d/collectd.log"
rrd="$d/rrd/diskprobe-test"
collectd -f -C "$d/collectd.conf" >"$d/out" 2>&1 &
pid=$!
_pids+=("$pid")
points() { rrdtool fetch "$rrd/diskprobe-$1/operations_per_second-r.rrd" AVERAGE -s -120s 2>/dev/null | grep -E '^[0-9]+: [0-9]' | grep -vc nan; }

for ((i = 0; i < 40; i++)); do [ "$(points flaky)" -ge 1 ] && break; sleep 0.5; done
[ "$(points flaky)" -ge 1 ] && pass "flaky target probed cleanly first" || fail "flaky target never probed"
h1=$(points healthy)

echo eio >"$d/ctl"
for ((i = 0; i < 20; i++)); do grep -q "severity = FAILURE.*plugin_instance = flaky" "$log" && break; sleep 0.5; done
if grep -q "severity = FAILURE.*plugin_instance = flaky.*I/O errors.*Input/output error" "$log"; then
  pass "FAILURE: $(grep -m1 'severity = FAILURE.*flaky' "$log" | sed 's/.*message = //')"
else
  fail "no FAILURE notification naming the I/O error: $(grep flaky "$log" | tail -3)"
fi
sleep 3
errs=$(rrd_last "$rrd/diskprobe-flaky/probe_errors-r.rrd" io)
python3 -c "import sys; sys.exit(0 if float('$errs') > 0 else 1)" &&
  pass "io error counter: $errs" || fail "io error counter is $errs"
h2=$(points healthy)
[ "$h2" -gt "$h1" ] && pass "healthy target kept dispatching ($h1 -> $h2 points)" || fail "healthy target stopped ($h1 -> $h2)"

echo ok >"$d/ctl"
n0=$(grep -c "severity = FAILURE.*plugin_instance = flaky" "$log")
sleep 5
n1=$(grep -c "severity = FAILURE.*plugin_instance = flaky" "$log")
iops=$(rrd_last "$rrd/diskprobe-flaky/operations_per_second-r.rrd")
[ "$n1" = "$n0" ] && python3 -c "import sys; sys.exit(0 if float('$iops') > 0 else 1)" &&
  pass "errors stopped and flaky probes again ($iops IOPS)" || fail "after EIO off: $((n1 - n0)) new FAILUREs, iops $iops"
# The device vanishes: the FUSE daemon dies (SIGKILL) under an open probe
# file, then its dead mount is removed.
kill -9 "${_pids[0]}"
for ((i = 0; i < 20; i++)); do grep -q 'target "flaky" (.*Transport endpoint is not connected' "$log" && break; sleep 0.5; done
sleep 4
n=$(grep -c 'target "flaky" (.*Transport endpoint is not connected' "$log")
# c_complain rate-limits: the first line at once, then after 1, 2, 4 ... intervals.
[ "$n" -ge 1 ] && [ "$n" -le 3 ] && pass "vanished ($n rate-limited lines): $(grep -m1 'target "flaky" (.*Transport endpoint' "$log" | cut -c23-)" ||
  fail "vanished device: expected 1-3 log lines naming the cause, got $n: $(grep flaky "$log" | tail -3)"
umount -l "$d/mnt"
for ((i = 0; i < 20; i++)); do grep -q 'target "flaky".*the path is now on device' "$log" && break; sleep 0.5; done
grep -q 'target "flaky".*the path is now on device.*Not probing there' "$log" &&
  pass "unmounted: $(grep -m1 'the path is now on' "$log" | cut -c23-)" || fail "no line about the unmounted filesystem"
[ ! -e "$d/mnt/dp" ] && pass "no probe file laid out in the bare mount point" || fail "a probe file was created under the unmounted mount point"
h3=$(points healthy)
sleep 3
[ "$(points healthy)" -gt "$h3" ] && pass "healthy target still dispatching after the other vanished" || fail "healthy target stopped"
kill -0 "$pid" && pass "collectd still running" || fail "collectd died"
kill -TERM "$pid"
wait "$pid"
[ "$FAILED" = 0 ] && echo "collectd_eio: all checks passed" || { tail -20 "$log"; exit 1; }
