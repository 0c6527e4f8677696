#!/bin/bash
# prober_faults.sh - a prober program that misbehaves, under the real
# collectd: two probe-file targets on one disk (one worker); every prober
# start but the second is a fake (tests/fakes/fake_prober, DP_FAKE_REAL_ON),
# so the first target gets the fake at each of its retries and the other
# the real prober.
# For each fake -- hang (never answers the handshake), flood (garbage on its
# stdout and stderr, no answer), stall (answers the handshake, then never
# the open), exit (says a line and exits at once), forge (a real prober
# whose results are forged: a million times the I/Os, a negative latency):
#   - one clear log line naming the target, the prober program and the cause;
#   - collectd stays up and the other target keeps probing;
#   - at most one fake alive at any time (each is killed and reaped before
#     the next start), none left a zombie, none after collectd's stop;
#   - the stop takes at most 10 s (printed) and blames no hung disk;
#   - collectd's output and log stay small (flood: under 1 MB);
#   - forge: no forged value reaches the RRD files.
set -u
. "$(dirname "$0")/lib.sh"
need root collectd
FAKE="$top_builddir/tests/fakes/fake_prober"
[ -x "$FAKE" ] || skip "tests/fakes/fake_prober not built"
need_cmd rrdtool rrdtool

declare -A cause=(
  [hang]='did not answer the handshake within [0-9]+ s'
  [flood]='did not answer the handshake within [0-9]+ s'
  [stall]='neither answered the open nor made progress for [0-9]+ s'
  [exit]='ended at once \([^)]*\): it said "fake-prober: cannot open shared object'
  [forge]='sent a result that cannot be true'
)

run_mode() {
  local mode=$1 d fake pid log out n max=0 good bad k a b
  d=$(make_tmpdir)
  fake="$d/fake-prober-$mode"
  cp "$FAKE" "$fake"
  collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
  <Target "a">
    Path "$d/a"
    FileSize "8M"
    ProbeInterval 2
    Timeout 2
    <Probe "rr">
      Pattern randread
      BlockSize "4k"
      QueueDepth 4
      Duration 0.2
    </Probe>
  </Target>
  <Target "b">
    Path "$d/b"
    FileSize "8M"
    ProbeInterval 2
    Timeout 2
    <Probe "rr">
      Pattern randread
      BlockSize "4k"
      QueueDepth 4
      Duration 0.2
    </Probe>
  </Target>
CONF
  log="$d/collectd.log" out="$d/collectd.out"
  mkdir -p "$d/a" "$d/b"
  DISKPROBE_PROBER="$fake" DP_FAKE_REAL_ON=2 \
    DP_FAKE_REAL="$top_builddir/src/cli/diskprobe-prober" collectd_start "$d"
  pid=$COLLECTD_PID
  echo "== $mode: collectd $pid, prober $fake"
  last() { # the time of the newest update of target $1's RRD file; 0: none
    local v
    v=$(rrdtool last "$d/rrd/$COLLECTD_HOST/diskprobe-$1/operations_per_second-rr.rrd" 2>/dev/null) &&
      [ "$v" -gt 0 ] 2>/dev/null && echo "$v" || echo 0
  }
  for k in $(seq 1 30); do # 15 s: the fakes come and go
    sleep 0.5
    n=$(pgrep -fc "$fake")
    [ "$n" -gt "$max" ] && max=$n
    [ "$k" = 14 ] && a=$(last a) b=$(last b)
  done
  if is_running "$pid"; then pass "$mode: collectd still running after 15 s"; else fail "$mode: collectd exited"; fi
  if grep -qE "target \"[ab]\" \(.*\): .*the prober $fake.*${cause[$mode]}" "$log"; then
    pass "$mode: logged: $(grep -m1 -oE "target \"[ab]\".*${cause[$mode]}.*" "$log" | cut -c1-300)"
  else
    fail "$mode: no log line naming the target, $fake and /${cause[$mode]}/"
  fi
  [ "$max" -le 1 ] && pass "$mode: at most $max fake prober alive at a time" ||
    fail "$mode: $max fake probers alive at once (a failed one was not killed)"
  z=$(ps --ppid "$pid" -o stat= | grep -c '^Z')
  [ "$z" = 0 ] && pass "$mode: no zombie child" || fail "$mode: $z zombie children of collectd"
  # one worker serves both: each failed attempt of the faulty target (a
  # 5 s handshake at most) comes between two rounds of the other, further
  # apart than the RRD's heartbeat: the files' last update says it
  a2=$(last a) b2=$(last b)
  if [ "$a2" -gt "$a" ] || [ "$b2" -gt "$b" ]; then
    pass "$mode: the other target kept probing (last updates of a: $a -> $a2, b: $b -> $b2 in the last 8 s)"
  else
    fail "$mode: no target probed in the last 8 s (last updates of a: $a -> $a2, b: $b -> $b2)"
  fi
  if [ "$mode" = forge ]; then
    big=$(for t in a b; do rrdtool fetch "$d/rrd/$COLLECTD_HOST/diskprobe-$t/operations_per_second-rr.rrd" MAX -s -60s 2>/dev/null; done |
      awk '/^[0-9]+: / && $2 != "nan" { v = $2 + 0; if (v > m) m = v } END { printf "%.0f", m }')
    num_cmp "$big" '<' 10000000 && pass "forge: largest IOPS in the RRD files $big: nothing forged got through" ||
      fail "forge: a forged IOPS of $big reached the RRD files"
  fi
  collectd_stop "$pid" 60
  num_cmp "$STOP_SECS" '<' 10 && pass "$mode: collectd stopped in $STOP_SECS s (bound 10 s)" ||
    fail "$mode: collectd took $STOP_SECS s to stop"
  if grep -q "did not stop in time" "$log"; then
    fail "$mode: the stop blamed a stuck worker: $(grep -m1 'did not stop in time' "$log")"
  else
    pass "$mode: no worker left behind at the stop"
  fi
  sleep 0.5
  n=$(pgrep -fc "$fake")
  [ "$n" = 0 ] && pass "$mode: no fake prober left after the stop" ||
    {
      fail "$mode: $n fake probers still running after the stop"
      for k in $(pgrep -f "$fake"); do kill -KILL "$k"; done
    }
  size=$(($(stat -c %s "$out") + $(stat -c %s "$log")))
  [ "$size" -lt 1000000 ] && pass "$mode: collectd's output and log hold $size bytes" ||
    fail "$mode: collectd's output and log grew to $size bytes"
}

for m in ${PROBER_FAULT_MODES:-hang flood stall exit forge}; do run_mode "$m"; done
finish prober_faults
