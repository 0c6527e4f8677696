#!/bin/bash
# notify_restart.sh - every WARNING gets its OKAY, once, on a host with no
# syslog daemon and across a restart of collectd: the README's own test.
# A target with LatencyCeiling far below its disk's latency is WARNING by
# ceiling; collectd stops; the ceiling is set back; collectd starts again.
# Both shipped routes that need no syslog daemon carry the notices:
# logfile.conf (collectd's logfile plugin: its log and every notification)
# and health-notify-exec.conf with diskprobe_notify.sh --file (as nobody). On
# each: one WARNING from the first run, one OKAY with the same rule from
# the second, nothing else; the second run says at start what the last
# notice was. Where the host has a syslog socket, collectd runs in a mount
# namespace with /dev/log hidden (no syslog daemon, as on a Debian 12 host
# without systemd or rsyslog).
set -u
. "$(dirname "$0")/lib.sh"
need root collectd
[ -f /usr/lib/collectd/exec.so ] && [ -f /usr/lib/collectd/logfile.so ] ||
  skip "collectd's exec or logfile plugin missing"
id nobody >/dev/null 2>&1 || skip "no user nobody (the exec plugin refuses root)"
ex="$top_srcdir/contrib/examples"
d=$(make_tmpdir)
chmod 0755 "$d"
cp "$ex/diskprobe_notify.sh" "$d/diskprobe_notify.sh" && chmod 0755 "$d/diskprobe_notify.sh"
: >"$d/exec.log" && chmod 0666 "$d/exec.log"
mkdir -p "$d/state"

if [ -S /dev/log ]; then
  need_cmd unshare util-linux
  printf '#!/bin/sh\nmount --bind /dev/null /dev/log || exit 1\nexec "$@"\n' >"$d/nolog.sh"
  chmod 0755 "$d/nolog.sh"
  export COLLECTD_WRAP="unshare --mount --propagation private $d/nolog.sh"
  echo "the host has /dev/log: collectd runs with it hidden"
fi

conf() { # conf CEILING_LINE: the whole collectd.conf
  collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
  StateDir "$d/state"
  <Target "data">
    Path "$d/probe"
    FileSize "16M"
    ProbeInterval 2
    $1
    <Probe "r">
      Duration 0.1
    </Probe>
  </Target>
CONF
  cp /usr/lib/collectd/exec.so "$d/plugins/"
  # the shipped logfile.conf in place of the head's logfile block
  sed -i '/^LoadPlugin logfile$/,/^<\/Plugin>$/d' "$d/collectd.conf"
  {
    sed "s|File \"[^\"]*\"|File \"$d/collectd.log\"|" "$ex/logfile.conf"
    sed "s|NotificationExec \"nobody\" \"[^\"]*\".*|NotificationExec \"nobody\" \"$d/diskprobe_notify.sh\" \"--file\" \"$d/exec.log\"|" \
      "$ex/health-notify-exec.conf"
  } >>"$d/collectd.conf"
}
# the health notices of target data in each route, as "SEVERITY RULE"
file_notices() { sed -n 's/.*Notification: severity = \([A-Z]*\), .*plugin_instance = data, type = health, type_instance = \([a-z-]*\), .*/\1 \2/p' "$d/collectd-1.log" "$d/collectd.log" 2>/dev/null; }
exec_notices() { sed -n 's/.* diskprobe\[\([A-Z]*\)\] host=[^ ]* target=data type=health rule=\([a-z-]*\): .*/\1 \2/p' "$d/exec.log"; }

conf 'LatencyCeiling 0.000001'
collectd_start "$d"
wait_until 60 sh -c "grep -qs 'severity = WARNING.*type = health' '$d/collectd.log' && grep -q 'diskprobe\[WARNING\].*type=health' '$d/exec.log'" ||
  fail "first run: no WARNING in both routes: $(tail -n 3 "$d/collectd.log")"
collectd_stop >/dev/null
[ -s "$d/state/diskprobe-health.state" ] && grep -q '^level data warning ' "$d/state/diskprobe-health.state" &&
  pass "the state file keeps the level last notified: $(grep '^level ' "$d/state/diskprobe-health.state")" ||
  fail "no level line in the state file: $(cat "$d/state/diskprobe-health.state" 2>&1 | head -c 300)"
first_file=$(file_notices) first_exec=$(exec_notices)
[ "$first_file" = "WARNING ceiling" ] && [ "$first_exec" = "WARNING ceiling" ] &&
  pass "first run: one WARNING by ceiling in the log file and in the script's file" ||
  fail "first run: log file '$first_file', script's file '$first_exec'"

mv "$d/collectd.log" "$d/collectd-1.log"
conf ''
collectd_start "$d"
wait_until 60 sh -c "grep -qs 'severity = OKAY.*type = health' '$d/collectd.log' && grep -q 'diskprobe\[OKAY\].*type=health' '$d/exec.log'" ||
  fail "after the restart: no OKAY in both routes: $(tail -n 3 "$d/collectd.log")"
sleep 5 # a few more rounds: nothing else may come
collectd_stop >/dev/null
grep -q 'target "data": its last notice was WARNING by ceiling; its OKAY follows when it recovers' "$d/collectd.log" &&
  pass "the restart says what the last notice was" || fail "no start line about the last notice"
all_file=$(file_notices | tr '\n' ',') all_exec=$(exec_notices | tr '\n' ',')
[ "$all_file" = "WARNING ceiling,OKAY ceiling," ] &&
  pass "log file (collectd's logfile plugin, no syslog): WARNING then its OKAY, once each, across the restart" ||
  fail "log file: $all_file"
[ "$all_exec" = "WARNING ceiling,OKAY ceiling," ] &&
  pass "diskprobe_notify.sh --file as nobody, no syslog socket: WARNING then its OKAY, once each" ||
  fail "script's file: $all_exec"
grep -q '^level ' "$d/state/diskprobe-health.state" &&
  fail "the state file still holds a level after the OKAY" || pass "after the OKAY the state file holds no level"
finish notify_restart "tail -n 5 $d/collectd.log"
