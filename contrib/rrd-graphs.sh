#!/bin/bash
# contrib/rrd-graphs.sh - PNG graphs and an index.html from diskprobe's RRDs.
#
#   bash contrib/rrd-graphs.sh RRD_DATADIR OUT_DIR [START [END]]
#
# RRD_DATADIR is the rrdtool plugin's DataDir (HOST/diskprobe-TARGET/*.rrd).
# START/END are rrdtool times (default: -20min, now). For each host and
# target it draws: health and slowdown against the baseline, latency
# percentiles per probe (log scale), IOPS (log scale) and
# throughput of all probes, achieved queue depth, and the stall state; for
# each device (diskprobe-DEVICE with read/write metrics) await, queue
# length, and utilisation with the probes' share. Needs only rrdtool.
set -euo pipefail
src=${1:?usage: rrd-graphs.sh RRD_DATADIR OUT_DIR [START [END]]}
out=${2:?usage: rrd-graphs.sh RRD_DATADIR OUT_DIR [START [END]]}
start=${3:--20min}
end=${4:-now}
mkdir -p "$out"
colors=(1f77b4 ff7f0e 2ca02c d62728 9467bd 8c564b e377c2 7f7f7f bcbd22 17becf)
common=(--start "$start" --end "$end" --width 720 --height 220 --imgformat PNG
  --color BACK#ffffff --color CANVAS#ffffff --slope-mode)

html="$out/index.html"
cat >"$html" <<'HTML'
<!doctype html><html><head><meta charset="utf-8"><title>diskprobe graphs</title>
<style>body{font-family:sans-serif;margin:2em;max-width:800px}img{display:block;margin:1em 0}
h2{border-bottom:1px solid #ccc}p.note{color:#555}</style></head><body>
<h1>diskprobe</h1>
<p class="note">Latency graphs are per probe: the band is min..max, lines are p50, p90, p99.
A healthy local SSD reads 8 KiB at queue depth 1 in tens to hundreds of microseconds;
a p99 that climbs by an order of magnitude while IOPS falls is a degrading disk.
"stalled" is 1 while an I/O has been outstanding longer than the target's Timeout.
Each target starts with diskprobe's own verdict: health (0 ok, 1 warning, 2 failure) and the
round's slowdown against the target's baseline with the rules' thresholds.</p>
HTML

probe_names() { # probe_names DIR: probes that have a latency file
  local f
  for f in "$1"/probe_latency-*.rrd; do
    [ -e "$f" ] || continue
    f=${f##*/probe_latency-}
    echo "${f%.rrd}"
  done
}

# multi TITLE VLABEL FILE_PREFIX DS PNG DIR [extra rrdtool args]
multi() {
  local title=$1 vlabel=$2 prefix=$3 ds=$4 png=$5 dir=$6
  shift 6
  local args=() i=0 p
  for p in $(probe_names "$dir"); do
    [ -f "$dir/$prefix-$p.rrd" ] || continue
    args+=("DEF:v$i=$dir/$prefix-$p.rrd:$ds:AVERAGE"
      "LINE2:v$i#${colors[$((i % ${#colors[@]}))]}:$p"
      "GPRINT:v$i:LAST:last %6.2lf%s\\l")
    i=$((i + 1))
  done
  [ $i -gt 0 ] || return 0
  rrdtool graph "$out/$png" "${common[@]}" --title "$title" --vertical-label "$vlabel" "$@" "${args[@]}" >/dev/null
  echo "<img src=\"$png\" alt=\"$title\">" >>"$html"
}

for hostdir in "$src"/*/; do
  host=$(basename "$hostdir")
  for dir in "$hostdir"diskprobe-*/; do
    [ -d "$dir" ] || continue
    dir=${dir%/}
    inst=${dir##*/diskprobe-}
    tag="$host-$inst"
    if [ -n "$(probe_names "$dir")" ]; then
      echo "<h2>$host: target $inst</h2>" >>"$html"
      # The verdict first: health (0 ok, 1 warning, 2 failure) and the
      # round's slowdown against the baseline, with the rules' levels.
      if [ -f "$dir/target_health-level.rrd" ]; then
        rrdtool graph "$out/$tag-health.png" "${common[@]}" --height 90 --lower-limit 0 --upper-limit 2 --rigid \
          --y-grid 1:1 --title "$inst health (0 ok, 1 warning, 2 failure)" \
          "DEF:h=$dir/target_health-level.rrd:value:MAX" "CDEF:ok=h,0,EQ,1,UNKN,IF" "CDEF:w=h,1,EQ,h,UNKN,IF" "CDEF:f=h,2,EQ,h,UNKN,IF" \
          "TICK:ok#2ca02c:0.06: 0 = ok" "AREA:w#ffbf00:warning" "AREA:f#d62728:failure" "LINE2:h#555555:level" >/dev/null
        echo "<img src=\"$tag-health.png\" alt=\"health\">" >>"$html"
      fi
      if [ -f "$dir/slowdown-round.rrd" ]; then
        args=("DEF:s=$dir/slowdown-round.rrd:value:AVERAGE" "LINE3:s#000000:round" "GPRINT:s:LAST:last %5.2lfx\\l")
        i=0
        for p in $(probe_names "$dir"); do
          [ -f "$dir/slowdown-$p.rrd" ] && args+=("DEF:p$i=$dir/slowdown-$p.rrd:value:AVERAGE" "LINE1:p$i#${colors[$((i % ${#colors[@]}))]}:$p")
          i=$((i + 1))
        done
        rrdtool graph "$out/$tag-slowdown.png" "${common[@]}" --logarithmic --lower-limit 0.5 --upper-limit 20 --rigid \
          --title "$inst slowdown against its baseline (1 = usual; none until armed)" --vertical-label "x baseline" \
          "${args[@]}" "COMMENT:\\l" "HRULE:1.4#ffbf00:1.4x warn-slow (QD1, 7 of 10)" "HRULE:1.9#ff7f0e:1.9x warn (3 of 3)" \
          "HRULE:4#d62728:4x warn-fast (2 of 2)" >/dev/null
        echo "<img src=\"$tag-slowdown.png\" alt=\"slowdown\">" >>"$html"
      fi
      for p in $(probe_names "$dir"); do
        f="$dir/probe_latency-$p.rrd"
        png="$tag-latency-$p.png"
        rrdtool graph "$out/$png" "${common[@]}" --logarithmic --units=si \
          --title "$inst / $p latency" --vertical-label seconds \
          "DEF:min=$f:min:AVERAGE" "DEF:max=$f:max:AVERAGE" \
          "DEF:p50=$f:p50:AVERAGE" "DEF:p90=$f:p90:AVERAGE" "DEF:p99=$f:p99:AVERAGE" \
          "CDEF:band=max,min,-" "LINE:min#00000000" "AREA:band#cfe2f3::STACK" \
          "LINE2:p50#1f77b4:p50" "GPRINT:p50:LAST:%6.1lf%ss" \
          "LINE2:p90#ff7f0e:p90" "GPRINT:p90:LAST:%6.1lf%ss" \
          "LINE2:p99#d62728:p99" "GPRINT:p99:LAST:%6.1lf%ss\\l" >/dev/null
        echo "<img src=\"$png\" alt=\"$p latency\">" >>"$html"
      done
      multi "$inst IOPS" "I/O per second" operations_per_second value "$tag-iops.png" "$dir" --units=si --logarithmic
      multi "$inst throughput" "bytes per second" bytes_per_second value "$tag-throughput.png" "$dir" --base 1024
      multi "$inst achieved queue depth" "I/Os in flight" queue_length value "$tag-qd.png" "$dir"
      if [ -f "$dir/stalled-stalled.rrd" ]; then
        rrdtool graph "$out/$tag-stalled.png" "${common[@]}" --height 80 --lower-limit 0 --upper-limit 1 --rigid \
          --title "$inst stalled (0 = ok)" "DEF:s=$dir/stalled-stalled.rrd:value:MAX" "CDEF:ok=s,0,EQ,1,UNKN,IF" \
          "TICK:ok#2ca02c:0.1:0 = ok" "AREA:s#d62728:1 = stalled" >/dev/null
        echo "<img src=\"$tag-stalled.png\" alt=\"stalled\">" >>"$html"
      fi
    fi
    # Device view (the iostat/Perfmon metrics), if present.
    if [ -f "$dir/latency-read_await.rrd" ]; then
      echo "<h2>$host: device ${inst#dev-}</h2>" >>"$html"
      args=()
      for k in read_await write_await; do
        [ -f "$dir/latency-$k.rrd" ] && args+=("DEF:$k=$dir/latency-$k.rrd:value:AVERAGE" "LINE2:$k#$([ $k = read_await ] && echo 1f77b4 || echo d62728):$k")
      done
      rrdtool graph "$out/$tag-await.png" "${common[@]}" --title "$inst await (Avg. Disk sec/Read, sec/Write)" --vertical-label seconds "${args[@]}" >/dev/null
      echo "<img src=\"$tag-await.png\" alt=\"await\">" >>"$html"
      if [ -f "$dir/queue_length-average.rrd" ]; then
        rrdtool graph "$out/$tag-queue.png" "${common[@]}" --title "$inst average queue length (Avg. Disk Queue Length)" \
          --vertical-label "I/Os" "DEF:q=$dir/queue_length-average.rrd:value:AVERAGE" "LINE2:q#2ca02c:avg queue length" >/dev/null
        echo "<img src=\"$tag-queue.png\" alt=\"queue\">" >>"$html"
      fi
      if [ -f "$dir/percent-utilization.rrd" ]; then
        rrdtool graph "$out/$tag-util.png" "${common[@]}" --title "$inst utilisation (% Disk Time) and diskprobe's share" \
          --vertical-label percent --lower-limit 0 "DEF:u=$dir/percent-utilization.rrd:value:AVERAGE" "LINE2:u#9467bd:utilisation" \
          $([ -f "$dir/percent-probe_share.rrd" ] && echo "DEF:ps=$dir/percent-probe_share.rrd:value:AVERAGE LINE1:ps#8c564b:probe_share") >/dev/null
        echo "<img src=\"$tag-util.png\" alt=\"utilisation\">" >>"$html"
      fi
    fi
  done
done
echo "</body></html>" >>"$html"
echo "graphs: $(ls "$out"/*.png 2>/dev/null | wc -l) PNGs, open $html"
