#!/bin/bash
# collectd_rrd.sh - the whole path with the real daemon: Debian's collectd
# loads the built plugin, which probes a probe file through libaio/O_DIRECT,
# and collectd's rrdtool plugin writes RRD files that are read back here
# with rrdtool. For every probe, IOPS and p99 must exist, be finite and
# positive, and p99 >= p50; the RRD step must equal the ProbeInterval (the
# values carry the interval they are produced at). The graph generator of
# the main job must turn the RRDs into PNGs and an index.html that names
# every RRD file of the target and of the device view: drawn in a PNG, or
# listed as not drawn with a reason. The device
# view of the disk under the probe file (reads/s, await, queue length,
# utilisation, in flight, probe share...) must be stored with finite values.
set -u
. "$(dirname "$0")/lib.sh"
need collectd
need_cmd rrdtool

d=$(make_tmpdir)
collectd_conf "$d" 1 <<CONF
  DutyCycle 100
  <Target "local">
    Path "$d/probe"
    FileSize "64M"
    ProbeInterval 4
    Timeout 5
  </Target>
CONF

collectd_check "$d" || { cat "$d/check.out" "$d/collectd.log"; die "collectd -T refused a good config"; }
rm -rf "$d/rrd"/*
collectd_run "$d" 16 || fail "collectd exited with status $?"

rrd="$d/rrd/diskprobe-test/diskprobe-local"
[ -d "$rrd" ] || { cat "$d/collectd.log"; die "no RRD directory $rrd"; }
check() { # check PROBE
  local p=$1 f iops p50 p99 step
  f="$rrd/operations_per_second-$p.rrd"
  [ -f "$f" ] || { fail "$p: $f missing"; return; }
  iops=$(rrd_last "$f")
  p50=$(rrd_last "$rrd/probe_latency-$p.rrd" p50)
  p99=$(rrd_last "$rrd/probe_latency-$p.rrd" p99)
  step=$(rrdtool info "$f" | awk '/^step/{print $3}')
  printf '%-14s iops %-12s p50 %-12s p99 %-12s step %s\n' "$p" "$iops" "$p50" "$p99" "$step"
  num_cmp "$iops" '>' 0 && num_cmp "$p50" '>' 0 && num_cmp "$p99" '>' 0 && num_cmp "$p99" '>=' "$p50" &&
    pass "$p: IOPS and latency finite, positive, p99 >= p50" || fail "$p: bad values iops=$iops p50=$p50 p99=$p99"
  [ "$step" = 4 ] && pass "$p: RRD step is the ProbeInterval (4 s)" || fail "$p: RRD step $step, expected 4"
}
for p in randread-qd1 randread-qd32 seqread; do check "$p"; done

# fetch: the archive holds real rows, not only a last value.
rows=$(rrd_points "$rrd/probe_latency-randread-qd1.rrd" 300)
[ "$rows" -ge 1 ] && pass "rrdtool fetch returns $rows finite rows" || fail "rrdtool fetch returned no finite rows"

stalled=$(rrd_last "$rrd/stalled-stalled.rrd")
num_cmp "$stalled" == 0 && pass "not stalled" || fail "stalled=$stalled on a healthy disk"
grep -q "diskprobe plugin: worker for disk" "$d/collectd.log" || fail "no worker start line in the log"
grep -E "diskprobe plugin.*(ERROR|error|failed)" "$d/collectd.log" && fail "errors in the log"

# The device view (/proc/diskstats) of the disk under the probe file.
devdir=$(ls -d "$d/rrd/diskprobe-test"/diskprobe-dev-* 2>/dev/null | head -1)
if [ -z "$devdir" ]; then
  echo "no device view: the probe directory is not on a block device (tmpfs, overlay?)"
else
  dev=${devdir##*/diskprobe-dev-}
  for m in operations_per_second-read bytes_per_second-read latency-read_await queue_length-average \
    percent-utilization pending_operations-in_flight percent-probe_share bytes-avg_read_size; do
    f="$devdir/$m.rrd"
    [ -f "$f" ] || { fail "device $dev: $m.rrd missing"; continue; }
    # the newest finite value of the last minute (an idle interval is NaN)
    v=$(rrd_newest "$f" 60)
    num_cmp "$v" '>=' 0 &&
      pass "device $dev: $m = $v" || fail "device $dev: $m has no finite value"
  done
fi

# The main job's graph page.
bash "$top_srcdir/contrib/tools/rrd_graphs.sh" "$d/rrd" "$d/graphs" >"$d/graphs.out" 2>&1 || fail "rrd_graphs.sh failed: $(cat "$d/graphs.out")"
n=$(ls "$d/graphs"/*.png 2>/dev/null | wc -l)
[ "$n" -ge 3 ] && grep -q "<img" "$d/graphs/index.html" && pass "graphs: $n PNGs and index.html" || fail "graphs: $n PNGs"
for f in "$d/graphs"/*.png; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "$f is not a PNG"
done
page="$d/graphs/index.html"
grep -q "diskprobe on diskprobe-test" "$page" && grep -q "<b>Time range:</b> 20[0-9-]* [0-9:]* .* to " "$page" &&
  pass "graphs: the page names the host and the time range" || fail "graphs: no host or time range on the page"
# Every RRD file of the target and of the device view is on the page: drawn
# in a PNG that exists, or listed as not drawn with a reason.
page_covers() { # page_covers DIR: checks each DIR/*.rrd against the page
  local dir=$1 f rel row pngs p n=0 nd=0 bad=0
  for f in "$dir"/*.rrd; do
    rel=${f#"$d/rrd/"}
    row=$(grep -F "<tr data-rrd=\"$rel\" " "$page")
    pngs=$(sed -n 's/.* data-drawn="\([^"]*\)".*/\1/p' <<<"$row")
    if [ -n "$pngs" ]; then
      for p in $pngs; do
        [ -s "$d/graphs/$p" ] || { fail "graphs: $rel drawn in $p, which does not exist"; bad=1; }
      done
      n=$((n + 1))
    elif grep -q ' data-reason="[^"]' <<<"$row"; then
      echo "  not drawn: $rel: $(sed -n 's/.* data-reason="\([^"]*\)".*/\1/p' <<<"$row")"
      nd=$((nd + 1))
    else
      fail "graphs: $rel is ${row:+on the page without a graph or a reason}${row:-not on the page}"
      bad=1
    fi
  done
  [ $bad = 0 ] && pass "graphs: all $((n + nd)) RRD files of ${dir##*/} on the page ($n drawn, $nd not drawn with a reason)"
}
page_covers "$rrd"
[ -z "$devdir" ] || page_covers "$devdir"
# The graphs the page must draw from this run's data.
for g in health iops throughput qd interval errors stalled latency-randread-qd1 latency-seqread; do
  [ -s "$d/graphs/diskprobe-test-local-$g.png" ] || fail "graphs: no $g graph of the target"
done
if [ -n "$devdir" ]; then
  for g in iops throughput reqsize await queue util probe-share; do
    [ -s "$d/graphs/diskprobe-test-dev-$dev-$g.png" ] || fail "graphs: no $g graph of device $dev"
  done
fi

finish collectd_rrd 'tail -20 "$d/collectd.log"'
