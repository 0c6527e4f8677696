#!/bin/bash
# collectd_probefile_changes.sh - a probe file changed under the running
# daemon is never probed as it is: holes punched into it (reads of holes
# return zeros without touching the disk: fake IOPS), truncated, or deleted.
# Each time the next round says so in one log line, lays the file out
# again (fully allocated: no hole before its end) and probes go on.
set -u
. "$(dirname "$0")/lib.sh"
need collectd
need_cmd fallocate util-linux
d=$(make_tmpdir)
collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
  <Target "pf">
    Path "$d/probe"
    FileSize "16M"
    ProbeInterval 1
    <Probe "r">
      Duration 0.1
    </Probe>
  </Target>
CONF
collectd_start "$d"
log="$d/collectd.log"
f="$d/probe/diskprobe.probe"
laid() { grep -c 'laid out probe file' "$log"; }
first_hole() { python3 -c 'import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); print(os.lseek(fd,0,os.SEEK_HOLE))' "$f"; }
wait_log "$log" 30 'laid out probe file' || die "no first layout"
size=$(stat -c %s "$f")

change() { # change NAME EXPECTED_LOG_TEXT N0 N1: after the change, one line and a re-layout
  local name=$1 text=$2 n0=$3 l0=$4
  if wait_until 20 sh -c "[ \$(grep -cE 'target \"pf\".*($text)' '$log') -gt $l0 ]"; then
    pass "$name: $(grep -E "target \"pf\".*($text)" "$log" | tail -1 | sed 's/^\[[^]]*\] diskprobe plugin: //')"
  else
    fail "$name: no new line with '$text'"
  fi
  wait_until 20 sh -c "[ \$(grep -c 'laid out probe file' '$log') -gt $n0 ]" &&
    pass "$name: laid out again" || fail "$name: not laid out again"
  h=$(first_hole)
  num_cmp "$h" '==' "$size" && pass "$name: fully allocated again (first hole at the end, $h)" ||
    fail "$name: a hole at $h of $size"
}

lines() { grep -cE "target \"pf\".*($1)" "$log"; }
n0=$(laid) l0=$(lines "lost allocated blocks")
fallocate -p -o 1048576 -l 4194304 "$f"
change "holes punched" "lost allocated blocks" "$n0" "$l0"
n0=$(laid) l0=$(lines "lost allocated blocks|changed size")
truncate -s 0 "$f" && truncate -s "$size" "$f"
change "truncated and re-extended" "lost allocated blocks|changed size" "$n0" "$l0"
n0=$(laid) l0=$(lines "deleted or replaced")
rm -f "$f"
change "deleted" "deleted or replaced" "$n0" "$l0"
sleep 3
grep -q 'Exiting' "$log" && fail "collectd exited" || pass "collectd still running"
# probes go on after the last re-layout: points in the last 8 s
n=$(rrd_points "$d/rrd/$COLLECTD_HOST/diskprobe-pf/operations_per_second-r.rrd" 8)
num_cmp "$n" '>=' 2 && pass "probes went on ($n points in the last 8 s)" || fail "only $n points in the last 8 s"
collectd_stop >/dev/null
# While the target reopens, its verdict is re-sent every read (probing)
# and the round after it must not go out older than that: collectd's cache
# and the RRD files refuse a value not newer than the last.
late=$(grep -cE 'diskprobe-pf/.*(illegal attempt to update|minimum one second step)|Value too old: name = [^;]*-pf/' "$log")
[ "$late" = 0 ] && pass "no value refused as too old (rrdtool, collectd's cache)" ||
  fail "$late values refused as too old, e.g. $(grep -m1 -E 'diskprobe-pf/.*illegal attempt to update|Value too old: name = [^;]*-pf/' "$log" | cut -c1-200)"
finish collectd_probefile_changes "tail -20 $log"
