#!/bin/bash
# collectd_statedir.sh - the health state file through the real collectd.
#   - `collectd -T` (init, one read, shutdown) leaves no state file and no
#     temporary file in StateDir (the default, BaseDir);
#   - a StateDir its group may write is refused by `collectd -T`, naming
#     the directory and the cause;
#   - on a healthy StateDir the stop saves the state: a regular file of
#     ours, mode 0600, that the next start restores, no temporary left;
#   - on a StateDir whose writes take 8 s (tests/shell/faultyfs.py,
#     "delay 8": longer than the 6 s the stop may take) collectd exits
#     within the saver's 2 s bound plus the workers' stop, saying "health
#     state not saved: StateDir X did not answer within 2 s";
#   - on a StateDir whose reads take 15 s (longer than the 10 s the start
#     may take) collectd's init goes on after the read's 2 s bound.
set -u
. "$(dirname "$0")/lib.sh"
need root collectd

d=$(make_tmpdir)
target() { printf '  <Target "t">\n    Path "%s"\n    FileSize "8M"\n    ProbeInterval 1\n    <Probe "r">\n      BlockSize "4k"\n      Duration 0.1\n    </Probe>\n  </Target>\n' "$1"; }
state_files() { find "$1" -maxdepth 1 -name 'diskprobe-health.state*' -printf '%f '; }

# ---- collectd -T: no trace ---------------------------------------------------
collectd_conf "$d" 1 <<CONF
  Splay false
$(target "$d/probe")
CONF
collectd_check "$d" || fail "collectd -T refused a good config: $(tail -3 "$d/check.out")"
[ -z "$(state_files "$d")" ] && pass "collectd -T left no state file in BaseDir" ||
  fail "collectd -T left $(state_files "$d")in $d"

# ---- a StateDir others could redirect: refused at the config check ------------
mkdir -m 0770 "$d/shared"
chmod 0770 "$d/shared"
collectd_conf "$d" 1 <<CONF
  StateDir "$d/shared"
$(target "$d/probe")
CONF
if collectd_check "$d"; then
  fail "collectd -T accepted a group-writable StateDir"
elif grep -qh "StateDir $d/shared: directory $d/shared is group-writable without the sticky bit" "$d/check.out" "$d/collectd.log"; then
  pass "group-writable StateDir refused: $(grep -h -m1 'StateDir' "$d/check.out" "$d/collectd.log")"
else
  fail "group-writable StateDir refused without the cause: $(tail -3 "$d/check.out" "$d/collectd.log")"
fi

# ---- a healthy StateDir: saved at stop, restored at start ---------------------
mkdir -m 0700 "$d/state"
collectd_conf "$d" 1 <<CONF
  Splay false
  StateDir "$d/state"
$(target "$d/probe")
CONF
log="$d/collectd.log"
collectd_start "$d"
wait_log "$log" 20 'diskprobe.*shut down|Initialization complete'
sleep 3
collectd_stop "$COLLECTD_PID" 30
f="$d/state/diskprobe-health.state"
if [ -f "$f" ] && [ ! -L "$f" ] && [ "$(stat -c '%u %a' "$f")" = "0 600" ] && head -1 "$f" | grep -qx 'diskprobe-health 2' && tail -2 "$f" | head -1 | grep -qE '^sum [0-9a-f]{16}$'; then
  pass "saved at stop: $(stat -c '%n %U %a %s bytes' "$f")"
else
  fail "no state file of ours after the stop: $(ls -la "$d/state")"
fi
[ "$(state_files "$d/state")" = "diskprobe-health.state " ] && pass "no temporary file left" ||
  fail "left in StateDir: $(state_files "$d/state")"
grep -q 'health state not saved' "$log" && fail "a healthy StateDir said 'not saved'"
: >"$log"
collectd_start "$d"
wait_log "$log" 20 'health baselines restored from'
grep -q "health baselines restored from $f" "$log" && pass "restored at the next start" ||
  fail "not restored: $(grep diskprobe "$log" | tail -3)"
collectd_stop "$COLLECTD_PID" 30

# ---- a StateDir on a disk whose writes take 8 s, then reads 15 s --------------
if [ ! -c /dev/fuse ] || ! /usr/bin/python3 -c "import fusepy" 2>/dev/null; then
  skip "no /dev/fuse or python3-fusepy: the slow StateDir case is not run"
fi
mkdir -p "$d/back/state" "$d/mnt"
chmod 0700 "$d/back/state"
echo ok >"$d/ctl"
/usr/bin/python3 "$(dirname "$0")/faultyfs.py" "$d/back" "$d/mnt" "$d/ctl" >"$d/fuse.log" 2>&1 &
fuse_pid=$!
register_pid $fuse_pid
# at the end the server sleeps out a 15 s read: a SIGTERM would wait for it
at_exit 'kill -KILL "$fuse_pid" 2>/dev/null'
wait_until 5 mountpoint -q "$d/mnt" || skip "cannot mount the FUSE test filesystem: $(cat "$d/fuse.log")"
register_mount "$d/mnt"
collectd_conf "$d" 1 <<CONF
  Splay false
  StateDir "$d/mnt/state"
$(target "$d/probe")
CONF
: >"$log"
collectd_start "$d"
wait_log "$log" 20 'Initialization complete'
sleep 3
echo "delay 8" >"$d/ctl"
collectd_stop "$COLLECTD_PID" 60
num_cmp "$STOP_SECS" '<' 6 && pass "exit with a hung StateDir took $STOP_SECS s (bound 2 s + the workers' stop)" ||
  fail "exit with a hung StateDir took $STOP_SECS s"
line="health state not saved: StateDir $d/mnt/state did not answer within 2 s"
grep -qF "$line" "$log" && pass "said: $line" || fail "no 'not saved' line: $(grep diskprobe "$log" | tail -3)"
# A start with the StateDir's reads hung: the StateDir check, the cleaning
# and the read run in child processes with the same 2 s bound, so
# collectd's init goes on and says why. (First the FUSE server, which
# serves one request at a time, finishes the save left behind above.)
echo ok >"$d/ctl"
wait_until 30 timeout 1 stat "$d/mnt/state" >/dev/null ||
  fail "the FUSE server did not come back after the hung save"
# a state file of ours to read (the hung save above may never have
# renamed its own): the one the healthy StateDir kept
install -m 0600 "$d/state/diskprobe-health.state" "$d/back/state/diskprobe-health.state" ||
  fail "cannot place a state file in the FUSE StateDir"
: >"$log"
echo "delay 15" >"$d/ctl"
t0=$(date +%s.%N)
collectd_start "$d"
if wait_log "$log" 20 'Initialization complete'; then
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  num_cmp "$secs" '<' 10 && pass "start with a hung StateDir took $secs s (the read's bound is 2 s)" ||
    fail "start with a hung StateDir took $secs s"
else
  fail "collectd did not finish its init with a hung StateDir"
fi
line="ignoring the health state file $d/mnt/state/diskprobe-health.state: $d/mnt/state did not answer within 2 s; baselines start afresh."
grep -qF "$line" "$log" && pass "said: $line" || fail "no 'did not answer' line at start: $(grep diskprobe "$log" | tail -3)"
echo ok >"$d/ctl"
collectd_stop "$COLLECTD_PID" 60
finish collectd_statedir 'tail -20 "$log"'
