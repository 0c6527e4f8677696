#!/bin/bash
# collectd_hung_conf.sh - a StateDir, or a target's Path, on a filesystem
# that never answers (tests/shell/faultyfs.py with its server frozen by
# SIGSTOP: every request waits for ever, a hard NFS mount's dead server)
# does not hold collectd's configuration or start:
#   - `collectd -T` finishes (well within 30 s), saying in one line which
#     StateDir or target did not answer;
#   - a real collectd starts, probes the other target and says the same
#     line, then stops.
# The frozen server is thawed and the mount unmounted at the end (cleanup).
set -u
. "$(dirname "$0")/lib.sh"
need root collectd
[ -c /dev/fuse ] && /usr/bin/python3 -c "import fusepy" 2>/dev/null ||
  skip "no /dev/fuse or python3-fusepy"
d=$(make_tmpdir)
faultyfs_mount "$d/f"
# thawed first, then killed and unmounted by cleanup
at_exit "kill -CONT $FUSE_PID 2>/dev/null"
mkdir -p "$d/f/mnt/state" "$d/f/mnt/dp" "$d/good"
chmod 0700 "$d/f/mnt/state"
log="$d/collectd.log"
rrd="$d/rrd/$COLLECTD_HOST"

target() { # target NAME PATH
  printf '  <Target "%s">\n    Path "%s"\n    FileSize "8M"\n    ProbeInterval 1\n    Timeout 2\n' "$1" "$2"
  printf '    <Probe "r">\n      BlockSize "4k"\n      Duration 0.1\n    </Probe>\n  </Target>\n'
}

kill -STOP "$FUSE_PID"
sleep 2 # past the kernel's attribute and entry cache (fusepy: 1 s)

# check_case NAME LINE: collectd -T and a real collectd on DIR's config,
# each within its bound and saying LINE (a fixed string).
check_case() {
  local name=$1 line=$2 t0 secs rc
  : >"$log"
  t0=$(date +%s%N)
  timeout -s KILL 120 collectd -T -C "$d/collectd.conf" >"$d/check.out" 2>&1
  rc=$?
  secs=$(num_calc "($(date +%s%N) - $t0) / 1e9" %.1f)
  echo "  $name: collectd -T took $secs s (status $rc)"
  num_cmp "$secs" '<' 30 && pass "$name: collectd -T finished in $secs s" ||
    fail "$name: collectd -T took $secs s (status $rc)"
  grep -qF -- "$line" "$log" && pass "$name: collectd -T said: $(log_first -F "$log" "$line")" ||
    fail "$name: collectd -T did not say '$line': $(grep diskprobe "$log" | tail -5)"

  : >"$log"
  rm -rf "$rrd"
  collectd_start "$d"
  if wait_log "$log" 40 'Initialization complete'; then
    pass "$name: collectd finished its init"
  else
    fail "$name: collectd did not finish its init within 40 s"
  fi
  pts() { rrd_points "$rrd/diskprobe-good/operations_per_second-r.rrd" 900; }
  pts_gt() { [ "$(pts)" -gt "$1" ]; }
  wait_until 30 pts_gt 1 && pass "$name: the other target probes ($(pts) points)" ||
    fail "$name: the other target never dispatched: $(grep diskprobe "$log" | tail -5)"
  grep -qF -- "$line" "$log" && pass "$name: collectd said: $(log_first -F "$log" "$line")" ||
    fail "$name: collectd did not say '$line': $(grep diskprobe "$log" | tail -5)"
  [ "$(grep -cF -- "$line" "$log")" = 1 ] && pass "$name: said once" ||
    fail "$name: said $(grep -cF -- "$line" "$log") times"
  collectd_stop "$COLLECTD_PID" 60
  rc=$?
  [ "$rc" = 0 ] && num_cmp "$STOP_SECS" '<' 30 && pass "$name: collectd stopped in $STOP_SECS s" ||
    fail "$name: collectd stop: status $rc after $STOP_SECS s"
}

# ---- StateDir on the frozen filesystem -----------------------------------------
collectd_conf "$d" 1 <<CONF
  Splay false
  StateDir "$d/f/mnt/state"
$(target good "$d/good")
CONF
check_case "hung StateDir" "StateDir $d/f/mnt/state: $d/f/mnt/state did not answer within 2 s"

# ---- a target's Path on the frozen filesystem ----------------------------------
collectd_conf "$d" 1 <<CONF
  Splay false
  StateDir "$d/good"
$(target hung "$d/f/mnt/dp")
$(target good "$d/good")
CONF
check_case "hung Path" "target \"hung\" ($d/f/mnt/dp): did not answer within 2 s"

finish collectd_hung_conf 'tail -30 "$log"'
