#!/bin/bash
# failslow_e2e.sh - fail-slow among peers end to end, with real parts: the
# real collectd with the built plugin watching a "host" of six loop devices
# of one kind (loop devices have no model in sysfs: one peer group of six,
# media class virtual), each a direct-I/O loop over a file on its own
# tests/shell/faultyfs.py mount, so that a delay is below the block layer
# and the device view's await sees it. fio loads all six alike (4 KiB
# random reads at QD1, the same --rate_iops each: equal throughput, only
# the latency differs). Interval 1 s and FailSlowWindow 3 s, so that the
# detector's horizons (12 windows before a score, 24 in it, 6 to clear)
# pass in minutes; the decision rules are the plugin's defaults.
#
#   1. one of the six slowed (faultyfs `delay`): a `failslow` WARNING
#      notification naming it, none for the other five; its slowdown-peers
#      score several times its peers', its failslow-peers 1 and theirs 0;
#   2. then all six slowed the same: no fail-slow among them. What this
#      test asserts: the earlier flag clears (an OKAY for that disk, its
#      score back near its peers') and no disk is flagged anew.
# The one Target (the plugin runs its read callback only with one) probes
# the loop slowed in phase 1 with 3 reads every 2 s (1.5 IOPS beside fio's
# 40: the loads stay alike), so that its health shows the fail-slow rule:
# a `health` WARNING "by failslow" naming the target while its disk is
# flagged, its failslow rule back to 0 once the flag clears in phase 2. Values are read by path under either plugin instance (dev-loopN,
# the device view's, or loopN).
# Skips (77) without root, loop devices, /dev/fuse, python3-fusepy, fio or
# collectd.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd
need_cmd fio fio
[ -c /dev/fuse ] || skip "no /dev/fuse"
/usr/bin/python3 -c "import fusepy" 2>/dev/null || skip "python3-fusepy not installed"
DELAY=0.005 # s per request on a slowed disk: ~10x a healthy one's await
RATE=40     # reads/s per disk, well below 1/DELAY

dir=$(make_tmpdir)
loops=() names=()
for i in 0 1 2 3 4 5; do
  mkdir -p "$dir/back$i" "$dir/mnt$i"
  echo ok >"$dir/ctl$i"
  truncate -s 64M "$dir/back$i/disk.img"
  /usr/bin/python3 "$(dirname "$0")/faultyfs.py" "$dir/back$i" "$dir/mnt$i" "$dir/ctl$i" >"$dir/fuse$i.log" 2>&1 &
  register_pid $!
  wait_until 5 mountpoint -q "$dir/mnt$i" || skip "cannot mount the FUSE test filesystem: $(cat "$dir/fuse$i.log")"
  register_mount "$dir/mnt$i"
  l=$(losetup -f --show --direct-io=on "$dir/mnt$i/disk.img") || skip "cannot attach a direct-I/O loop device over a FUSE file"
  echo "loop $l" >>"$_REG"
  loops+=("$l") names+=("${l##*/}")
done
# detach the loops before their FUSE servers are killed (cleanup kills first)
at_exit 'for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done'
slow=3 # the one slowed in phase 1; the Target is on it
S=${names[$slow]}
echo "disks: ${names[*]}; slowed: $S"

d="$dir/collectd"
mkdir -p "$d"
collectd_conf "$d" 1 <<CONF
  Splay false
  FailSlowWindow 3
  DeviceStats $(printf '"%s" ' "${names[@]}")
  <Target "t">
    Device "${loops[$slow]}"
    ProbeInterval 2
    <Probe "randread-qd1">
      Duration 0.05
      MaxOps 3
    </Probe>
  </Target>
CONF
log="$d/collectd.log"
rrd="$d/rrd/$COLLECTD_HOST"
# value DISK NAME: the last value of DISK's NAME.rrd, under either instance
value() {
  local f
  for f in "$rrd/diskprobe-dev-$1/$2.rrd" "$rrd/diskprobe-$1/$2.rrd"; do
    [ -f "$f" ] && { rrd_last "$f"; return; }
  done
  return 1
}
# notes SEVERITY DISK: how many failslow notifications of SEVERITY name DISK
notes() { grep -cE "severity = $1, .*plugin_instance = (dev-)?$2, type = failslow" "$log" 2>/dev/null; }

echo "delay $DELAY" >"$dir/ctl$slow"
fio_args=()
for l in "${loops[@]}"; do fio_args+=("--name=${l##*/}" "--filename=$l"); done
fio --ioengine=psync --direct=1 --rw=randread --bs=4k --rate_iops=$RATE \
  --time_based --runtime=600 "${fio_args[@]}" >"$dir/fio.out" 2>&1 &
fio_pid=$!
register_pid $fio_pid
sleep 2
is_running $fio_pid || die "fio did not start: $(tail -3 "$dir/fio.out")"

collectd_start "$d"
wait_log "$log" 20 "fail-slow: [0-9]+ disk\(s\) in peer groups" || die "the plugin formed no peer group"
grep -qF "fail-slow: 6 disk(s) in peer groups" "$log" && pass "one peer group of the six loop devices" ||
  fail "peer groups: $(log_first "$log" 'fail-slow: ')"

# 1. one slow disk
t0=$SECONDS
wait_log "$log" 120 "severity = WARNING, .*plugin_instance = (dev-)?$S, type = failslow" &&
  pass "failslow WARNING for $S after $((SECONDS - t0)) s: $(notif_msg "$log" "severity = WARNING.*type = failslow")" ||
  fail "no failslow WARNING for $S within 120 s"
sleep 10 # a few more windows for the others to be (wrongly) flagged in
bad=0
for n in "${names[@]}"; do
  [ "$n" = "$S" ] && continue
  c=$(notes '[A-Z]+' "$n")
  [ "$c" = 0 ] || { bad=1 && fail "$n (healthy) got $c failslow notification(s): $(notif_msg "$log" "plugin_instance = (dev-)?$n, type = failslow")"; }
done
[ $bad = 0 ] && pass "no failslow notification for the five healthy disks"
grep -m1 -qE "severity = WARNING.*type = failslow.*device $S \(virtual\), 5 peers" "$log" &&
  pass "the notification names the disk, its class and its 5 peers" ||
  fail "the WARNING does not name '$S (virtual), 5 peers'"
s_slow=$(value "$S" slowdown-peers)
num_cmp "$s_slow" '>=' 1.9 && pass "$S: slowdown-peers $s_slow" || fail "$S: slowdown-peers $s_slow after its flag"
f=$(value "$S" failslow-peers)
num_cmp "$f" '==' 1 && pass "$S: failslow-peers 1" || fail "$S: failslow-peers '$f' while flagged"
bad=0
for n in "${names[@]}"; do
  [ "$n" = "$S" ] && continue
  s=$(value "$n" slowdown-peers)
  f=$(value "$n" failslow-peers)
  if ratio_cmp "$s_slow" "$s" '>' 3 && num_cmp "$f" '==' 0; then
    echo "  $n: slowdown-peers $s, failslow-peers $f"
  else
    bad=1 && fail "$n: slowdown-peers '$s' (slow disk $s_slow), failslow-peers '$f'"
  fi
done
[ $bad = 0 ] && pass "$S's score more than 3x each peer's; the peers not flagged"
# the target on that disk: WARNING by its failslow rule at its next round
wait_log "$log" 10 "severity = WARNING, .*plugin_instance = t, type = health, type_instance = failslow" &&
  pass "target t on $S: $(notif_msg "$log" "type = health, type_instance = failslow")" ||
  fail "no health WARNING by failslow for target t"

# 2. all six slowed alike
for i in 0 1 2 3 4 5; do echo "delay $DELAY" >"$dir/ctl$i"; done
t0=$SECONDS
wait_log "$log" 150 "severity = OKAY, .*plugin_instance = (dev-)?$S, type = failslow" &&
  pass "all six slow: $S cleared (OKAY) after $((SECONDS - t0)) s: $(notif_msg "$log" "severity = OKAY.*type = failslow")" ||
  fail "all six slow: no OKAY for $S within 150 s"
# The target's failslow rule follows the flag off. Its level is then its
# own history's to say: the disk stays slower than the rounds it learned
# before (a degradation is never learned), so another rule may hold it.
failslow_off() { f=$(value t target_health-failslow) && num_cmp "$f" '==' 0; }
wait_until 10 failslow_off &&
  pass "target t: its failslow rule back to 0 once its disk is no longer flagged (level now $(value t target_health-level), by its own baseline)" ||
  fail "target t: failslow rule still '$(value t target_health-failslow)' after the flag cleared"
sleep 10
s_slow=$(value "$S" slowdown-peers)
num_cmp "$s_slow" '<' 1.4 && pass "$S: slowdown-peers $s_slow with all six slow" || fail "$S: slowdown-peers $s_slow with all six slow"
c=$(grep -cE "severity = WARNING, .*type = failslow" "$log")
[ "$c" = 1 ] && pass "all six slow: no disk flagged anew (one WARNING in the whole run, $S's)" ||
  fail "$c failslow WARNING(s) in the run: $(grep -E 'severity = WARNING, .*type = failslow' "$log" | sed 's/.*plugin_instance = //' | cut -c1-40 | tr '\n' ';')"
bad=0
for n in "${names[@]}"; do
  f=$(value "$n" failslow-peers)
  num_cmp "$f" '==' 0 || { bad=1 && fail "$n: failslow-peers '$f' with all six slow"; }
done
[ $bad = 0 ] && pass "failslow-peers 0 for all six"

collectd_stop >/dev/null
finish failslow_e2e "grep -E 'failslow|fail-slow' $log | tail -20"
