#!/bin/bash
# watch_throttle.sh - `diskprobe watch` and the collectd plugin are the same
# scheduler: on one loop device throttled with blkio to 250 read IOPS, both
# report about 250 IOPS per round, and each other's figure within 10 %;
# with the throttle at 1 IOPS and a 1 s Timeout, watch reports the stall
# (a JSON result with "stalled": true and the plugin's stall line on
# stderr). The plugin's own stall path is tests/shell/collectd_stall.sh.
set -u
. "$(dirname "$0")/lib.sh"
need root loop blkio collectd
IOPS=250

dir=$(make_tmpdir)
dev=$(make_loop 128 "$dir") || exit
cg=$(make_cgroup) || exit
throttle "$cg" "$dev" read_iops $IOPS

# median IOPS of the JSON lines in FILE (one per round)
median_iops() {
  python3 -c 'import json,sys,statistics
v=[json.loads(l)["iops"] for l in open(sys.argv[1]) if "\"probe\"" in l]
print(statistics.median(v) if v else "none")' "$1"
}

in_cgroup "$cg" "$DISKPROBE" watch --count 3 --interval 2s --duty-cycle 100 \
  --duration 1s --format json "$dev" >"$dir/watch.json" 2>"$dir/watch.err" ||
  fail "watch failed: $(cat "$dir/watch.err")"
n=$(grep -c '"iops"' "$dir/watch.json")
[ "$n" = 3 ] && pass "watch --count 3: 3 results" || fail "watch printed $n results, expected 3"
w=$(median_iops "$dir/watch.json")

# The plugin on the same device, same probe, values read back exactly
# (csv) rather than RRD-consolidated.
d="$dir/collectd"
mkdir -p "$d"
collectd_conf "$d" 2 <<CONF
  DutyCycle 100
  Splay false
  <Target "thr">
    Device "$dev"
    ProbeInterval 2
    <Probe "r">
      Duration 1
    </Probe>
  </Target>
CONF
printf 'LoadPlugin csv\n<Plugin csv>\n  DataDir "%s/csv"\n</Plugin>\n' "$d" >>"$d/collectd.conf"
collectd_start "$d" "$cg"
wait_until 60 sh -c "cat $d/csv/*/diskprobe-thr/operations_per_second-r-* 2>/dev/null | grep -c '^[0-9]' | grep -qx '[3-9]'" ||
  fail "the plugin dispatched fewer than 3 rounds in 60 s: $(tail -3 "$d/collectd.log")"
collectd_stop >/dev/null
p=$(cat "$d"/csv/*/diskprobe-thr/operations_per_second-r-* 2>/dev/null |
  awk -F, '/^[0-9]/ { print $2 }' | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "none") }')

printf 'throttle %d IOPS: watch %s IOPS, plugin %s IOPS (medians of their rounds)\n' $IOPS "$w" "$p"
within "$w" $IOPS 10 && pass "watch measures the throttle ($w IOPS)" || fail "watch: $w IOPS, expected $IOPS +-10%"
within "$p" $IOPS 10 && pass "the plugin measures the throttle ($p IOPS)" || fail "plugin: $p IOPS, expected $IOPS +-10%"
within "$w" "$p" 10 && pass "watch and the plugin agree: ratio $(num_calc "$w / $p" %.3f)" ||
  fail "watch $w vs plugin $p IOPS: more than 10% apart"

# A hung disk: 1 IOPS, Timeout 1 s.
throttle "$cg" "$dev" read_iops 1
in_cgroup "$cg" "$DISKPROBE" watch --count 1 --interval 2s --duty-cycle 100 \
  --duration 1s --timeout 1s --queue-depth 4 --format json "$dev" >"$dir/stall.json" 2>"$dir/stall.err"
rc=$?
unthrottle "$cg" "$dev" read_iops
grep -q '"stalled":true' "$dir/stall.json" && pass "watch reports the stall in its result (rc $rc)" ||
  fail "no stalled result: $(cat "$dir/stall.json" "$dir/stall.err")"
grep -qE "stalled: [0-9]+ I/O outstanding for more than 1(\.0)? s" "$dir/stall.err" &&
  pass "stall line: $(grep -m1 'stalled:' "$dir/stall.err")" ||
  fail "no stall line on stderr: $(cat "$dir/stall.err")"

finish watch_throttle
