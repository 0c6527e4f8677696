#!/bin/bash
# src/rrd-graphs/diskprobe-rrd-graphs.sh - PNG graphs and an index.html from diskprobe's RRDs.
#
#   bash src/rrd-graphs/diskprobe-rrd-graphs.sh [--daemon ADDRESS] RRD_DATADIR OUT_DIR [START [END]]
#
# RRD_DATADIR is the rrdtool plugin's DataDir (HOST/diskprobe-TARGET/*.rrd,
# HOST/diskprobe-dev-DISK/*.rrd for the device view). START/END are rrdtool
# or GNU date times (default: -20min, now); every graph uses the same range.
# --daemon ADDRESS (or RRDCACHED_ADDRESS, rrdtool's own variable): the files
# are written through rrdcached (collectd's rrdcached plugin); they are
# flushed first, or the page would lag by the daemon's write delay.
#
# The page opens with what was not OK in the range (target, disk, level, the
# rules that said so, from when, for how long), each linked to its target;
# the targets follow worst first (worst level in the range, then the most
# recent non-OK), then the device views. The newest round is drawn and read
# although its RRD step is not closed yet: rrdtool stores a step only when a
# value after its end arrives, so a round's value sits in the file's header
# (last_ds, `rrdtool info`) until the next round; the graphs draw it over
# that open step (GAUGE data sources; counters need two values) and the
# summary reads it there.
#
# Per target: health (level, armed and each rule as a strip, the rows named
# beside the strip), slowdown against the baseline, latency percentiles of
# each probe, IOPS, throughput and achieved queue depth of all probes (log
# axes: QD1 and QD32 differ by 10x), effective interval and probe wall
# time, probe errors, stalled and saturated as a strip ("0 = ok" drawn
# green), the peer ratio. Per disk of the device view: IOPS, throughput,
# request size, await, queue length and in flight, utilisation (its own
# axis), probe share, fail-slow against the peers. Under each section a
# table names every RRD file of the directory and the graph it is drawn in,
# or why it is not drawn (the files are listed, not assumed:
# tests/shell/collectd_rrd.sh checks the table).
# Needs only rrdtool and GNU date.
set -euo pipefail
usage="usage: ${0##*/} [--daemon ADDRESS] RRD_DATADIR OUT_DIR [START [END]]"
case ${1:-} in
--daemon | -d)
  export RRDCACHED_ADDRESS=${2:?$usage}
  shift 2
  ;;
esac
src=${1:?$usage}
out=${2:?$usage}
to_epoch() { # rrdtool-style "-20min", "now", an epoch, or any GNU date time
  case $1 in
  now) date +%s ;;
  *[!0-9]*) date -d "$1" +%s ;;
  *) echo "$1" ;;
  esac
}
start=$(to_epoch "${3:--20min}")
end=$(to_epoch "${4:-now}")
[ "$start" -lt "$end" ] || { echo "diskprobe-rrd-graphs: START must be before END" >&2; exit 2; }
mkdir -p "$out"
if [ -n "${RRDCACHED_ADDRESS:-}" ]; then
  find "$src" -path '*/diskprobe-*/*.rrd' -print0 | xargs -0 -r rrdtool flushcached --daemon "$RRDCACHED_ADDRESS" ||
    { echo "diskprobe-rrd-graphs: rrdtool flushcached --daemon $RRDCACHED_ADDRESS failed" >&2; exit 1; }
fi
colors=(1f77b4 ff7f0e 2ca02c d62728 9467bd 8c564b e377c2 7f7f7f bcbd22 17becf)
common=(--start "$start" --end "$end" --width 560 --height 180 --imgformat PNG
  --color BACK#ffffff --color CANVAS#ffffff --color SHADEA#ffffff --color SHADEB#ffffff
  --font DEFAULT:8: --slope-mode)
OK=2ca02c WARN=ffbf00 FAIL=d62728 GREY=bbbbbb
fmt_time() { date -d "@$1" '+%Y-%m-%d %H:%M:%S %Z'; }
fmt_dur() { # fmt_dur SECONDS: "1 h 05 min", "12 min 30 s", "40 s"
  local s=$1
  if [ "$s" -ge 3600 ]; then printf '%d h %02d min' $((s / 3600)) $((s % 3600 / 60))
  elif [ "$s" -ge 60 ]; then printf '%d min %02d s' $((s / 60)) $((s % 60))
  else printf '%d s' "$s"; fi
}
# esc TEXT: TEXT safe in HTML text and in a quoted attribute, whatever it
# holds (a host name is anyone's choice). The replacements are quoted: in
# bash 5.2 (patsub_replacement) an unquoted & in one is the match itself.
esc() {
  local s=${1//&/"&amp;"}
  s=${s//</"&lt;"} s=${s//>/"&gt;"} s=${s//\"/"&quot;"}
  echo "${s//\'/"&#39;"}"
}
level_name() { case $1 in 0) echo OK ;; 1) echo WARNING ;; *) echo FAILURE ;; esac; }

html="$out/index.html"
hosts=$(for h in "$src"/*/; do [ -d "$h" ] && basename "$h"; done | tr '\n' ' ')
cat >"$html" <<HTML
<!doctype html><html><head><meta charset="utf-8"><title>diskprobe: $(esc "${hosts% }")</title>
<style>body{font-family:sans-serif;margin:1.5em;max-width:1400px}
h2{border-bottom:1px solid #ccc;margin-top:2em}
.graphs{display:flex;flex-wrap:wrap;gap:1em}
figure{margin:0;width:660px}figure img{display:block}
figcaption{color:#444;font-size:90%;margin:.3em 0 0 .5em}
p.note{color:#444}table.files{border-collapse:collapse;font-size:85%;margin-top:1em}
table.files td,table.files th{border:1px solid #ddd;padding:2px 6px;text-align:left}
td.nd{color:#777}
table.summary{border-collapse:collapse;margin:.5em 0}table.summary td,table.summary th{border:1px solid #ccc;padding:3px 8px;text-align:left}
tr.l2 td.lv,span.l2{background:#d62728;color:#fff}tr.l1 td.lv,span.l1{background:#ffbf00}span.l0{background:#2ca02c;color:#fff}
span.l0,span.l1,span.l2{padding:0 .3em}p.newest{margin:.2em 0 .8em}
p.learning{background:#eef3fb;border-left:4px solid #6baed6;padding:.3em .6em}
figure.strip{width:auto}.rows{position:relative;padding-left:6.5em}
.rows span{position:absolute;left:0;width:6em;text-align:right;transform:translateY(-50%);font-size:80%;line-height:1}</style></head><body>
<h1>diskprobe on $(esc "${hosts% }")</h1>
<p><b>Time range:</b> $(fmt_time "$start") to $(fmt_time "$end") ($(((end - start) / 60)) min).
Generated $(date '+%Y-%m-%d %H:%M:%S %Z') from <code>$(esc "$src")</code>.</p>
<p class="note">Each target starts with diskprobe's own verdict (health: 0 ok, 1 warning, 2 failure, the
rule that says so, armed or still learning) and the slowdown against the target's baseline; the probe figures
behind it follow. A healthy local SSD reads 8 KiB at queue depth 1 in tens to hundreds of microseconds; a p99
that climbs by an order of magnitude while IOPS falls is a degrading disk. The device view is what
<code>iostat -x</code> and Perfmon show for the disk under the target.</p>
HTML

# ---- bookkeeping: which RRD file each graph draws ------------------------
declare -A drawn nodata
args=()
# ser VNAME FILE DS CF [DRAW...]: appends DEF:VNAME=FILE:DS:CF and the DRAW
# elements to args when FILE exists and has a finite value in the range;
# otherwise remembers FILE as empty and returns 1.
ser() {
  local v=$1 f=$2 ds=$3 cf=$4
  shift 4
  [ -f "$f" ] || return 1
  if ! finite "$f"; then
    nodata[$f]=1
    return 1
  fi
  args+=("DEF:$v=$f:$ds:$cf" "$@")
}
finite() { # finite FILE: any finite value in the range, any data source
  # (awk reads to the end: an early exit would fail the pipe under pipefail)
  rrdtool fetch "$1" AVERAGE --start "$start" --end "$end" 2>/dev/null |
    awk 'NR > 2 && !found { for (i = 2; i <= NF; i++) if ($i !~ /nan/) found = 1 } END { exit !found }'
}
# ---- the newest round: the RRD step not closed yet -------------------------
declare -A i_step i_lu i_type i_last
# rrd_info FILE: caches the file's step, last update, and each data
# source's type and last raw value (`rrdtool info`).
rrd_info() {
  local f=$1 k v ds
  [ -z "${i_step[$f]:-}" ] || return 0
  i_step[$f]=0 i_lu[$f]=0
  while read -r k v; do
    case $k in
    step) i_step[$f]=$v ;;
    last_update) i_lu[$f]=$v ;;
    *.type | *.last_ds)
      ds=${k#ds[}
      ds=${ds%%]*}
      v=${v//\"/}
      case $k in *.type) i_type[$f|$ds]=$v ;; *) i_last[$f|$ds]=$v ;; esac
      ;;
    esac
  done < <(rrdtool info "$f" 2>/dev/null | sed -n 's/^\(step\|last_update\|ds\[[^]]*\]\.\(type\|last_ds\)\) = /\1 /p')
}
# newest FILE DS: "CLOSED LAST_UPDATE VALUE" when FILE's last update of the
# GAUGE DS lies in a step rrdtool has not closed (stored) yet: the step
# (CLOSED, CLOSED + step] holds VALUE from the newest round. Else returns 1.
newest() {
  local f=$1 ds=$2 st lu v
  rrd_info "$f"
  st=${i_step[$f]} lu=${i_lu[$f]} v=${i_last[$f|$ds]:-U}
  [ "${i_type[$f|$ds]:-}" = GAUGE ] && [ "$st" -gt 0 ] && [ $((lu % st)) != 0 ] || return 1
  [[ $v =~ ^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$ ]] || return 1
  echo "$((lu - lu % st)) $lu $v"
}

# graph PNG TITLE CAPTION [rrdtool args]: draws args (reset afterwards)
# with the extra options, records the files it DEFs. Each GAUGE series is
# drawn over its open step too (newest): DEF:v becomes DEF:v_c and a CDEF v
# that is the newest round's value in the row that covers (CLOSED,
# LAST_UPDATE] where the stored series has none. With ROWS set ("ROW:NAME
# ..." of a strip chart) each row's name is put beside the strip at the
# row's height, from the geometry `rrdtool graphv` reports.
graph() {
  local png=$1 title=$2 caption=$3 a f v ds cf rest nw c lu nv info top h vmin vmax r n
  local -a g=()
  shift 3
  if [ ${#args[@]} = 0 ]; then return 0; fi
  for a in "${args[@]}"; do
    case $a in
    DEF:*)
      v=${a#DEF:} rest=${a#DEF:*=}
      v=${v%%=*} cf=${rest##*:} rest=${rest%:*}
      ds=${rest##*:} f=${rest%:*}
      case " ${drawn[$f]:-}" in *" $png "*) ;; *) drawn[$f]="${drawn[$f]:-}$png " ;; esac
      rrd_info "$f"
      if nw=$(newest "$f" "$ds"); then
        read -r c lu nv <<<"$nw"
        g+=("DEF:${v}_c=$f:$ds:$cf" "CDEF:$v=${v}_c,UN,TIME,$c,GT,*,TIME,STEPWIDTH,-,$lu,LT,*,$nv,${v}_c,IF")
        continue
      fi
      ;;
    esac
    g+=("$a")
  done
  info=$(rrdtool graphv "$out/$png" "${common[@]}" --title "$title" "$@" "${g[@]}")
  args=()
  if [ -z "${ROWS:-}" ]; then
    echo "<figure><img src=\"$(esc "$png")\" alt=\"$(esc "$title")\"><figcaption>$(esc "$caption")</figcaption></figure>" >>"$html"
    return 0
  fi
  read -r top h vmin vmax < <(awk -F' = ' '{ g[$1] = $2 } END { print g["graph_top"], g["graph_height"], g["value_min"], g["value_max"] }' <<<"$info")
  echo "<figure class=\"strip\"><div class=\"rows\"><img src=\"$(esc "$png")\" alt=\"$(esc "$title")\">" >>"$html"
  for r in $ROWS; do
    n=${r#*:}
    r=${r%%:*}
    # the middle of the row's bar, which spans ROW to ROW + 0.8
    echo "<span class=\"row\" data-row=\"$(esc "$n")\" style=\"top:$(awk -v t="$top" -v h="$h" -v lo="$vmin" -v hi="$vmax" -v r="$r" \
      'BEGIN { printf "%.0f", t + h * (hi - r - 0.4) / (hi - lo) }')px\">$(esc "$n")</span>" >>"$html"
  done
  echo "</div><figcaption>$(esc "$caption")</figcaption></figure>" >>"$html"
}
# why FILE: why a file without a graph is not drawn.
why() {
  local b=${1##*/}
  b=${b%.rrd}
  case $b in
  target_device-*) echo "info series (always 1): the target is on disk ${b#target_device-}, drawn in its device view" ;;
  disk_info-*) echo "info series: the disk's class is ${b#disk_info-}, its value the capacity in bytes (the fleet groups disks by class)" ;;
  peer_ratio-*) [ -n "${nodata[$1]:-}" ] && echo "no finite value in the range: the peer ratio needs three or more targets of the same media class and model on this host" ;;
  slowdown-peers) [ -n "${nodata[$1]:-}" ] && echo "no finite value in the range: the fail-slow score needs three or more like disks and enough windows" ;;
  failslow-peers) echo "drawn with slowdown-peers, which has no finite value in the range (three or more like disks and enough windows needed)" ;;
  slowdown-*) [ -n "${nodata[$1]:-}" ] && echo "no finite value in the range: NaN until the target is armed (ArmRounds rounds of baseline)" ;;
  *discard* | *flush*) [ -n "${nodata[$1]:-}" ] && echo "no finite value in the range: no discards/flushes (await is NaN without I/O), or a kernel without those fields" ;;
  *) [ -n "${nodata[$1]:-}" ] && echo "no finite value in the range" ;;
  esac
  return 0
}
# files_table DIR: every RRD file of DIR, the graphs it is in or why not.
files_table() {
  local dir=$1 f rel pngs reason p links
  local all=("$dir"/*.rrd)
  echo "<details><summary>The ${#all[@]} RRD files of $(esc "${dir#"$src"/}") and the graph each is drawn in</summary>" >>"$html"
  echo "<table class=\"files\"><tr><th>RRD file</th><th>drawn in</th></tr>" >>"$html"
  for f in "$dir"/*.rrd; do
    [ -e "$f" ] || continue
    rel=${f#"$src"/}
    pngs=${drawn[$f]:-}
    if [ -n "$pngs" ]; then
      links=
      for p in $pngs; do links+="<a href=\"$(esc "$p")\">$(esc "$p")</a> "; done
      echo "<tr data-rrd=\"$(esc "$rel")\" data-drawn=\"$(esc "${pngs% }")\"><td>$(esc "$rel")</td><td>${links% }</td></tr>" >>"$html"
    else
      reason=$(why "$f")
      echo "<tr data-rrd=\"$(esc "$rel")\" data-drawn=\"\" data-reason=\"$(esc "$reason")\"><td>$(esc "$rel")</td><td class=\"nd\">not drawn: $(esc "${reason:-NO REASON KNOWN}")</td></tr>" >>"$html"
    fi
  done
  echo "</table></details>" >>"$html"
}

probe_names() { # probe_names DIR: probes that have a latency file
  local f
  for f in "$1"/probe_latency-*.rrd; do
    [ -e "$f" ] || continue
    f=${f##*/probe_latency-}
    echo "${f%.rrd}"
  done
}
col() { echo "${colors[$(($1 % ${#colors[@]}))]}"; }
# lines PREFIX DS FORMAT NAME...: for each $dir/PREFIX-NAME.rrd with data a
# line (width 2; with WIDE set the first widest, so equal values stay
# visible) and its last value; LABEL_SUFFIX is appended to each NAME.
lines() {
  local prefix=$1 ds=$2 fmt=$3 i=0 w=2 k
  shift 3
  for k in "$@"; do
    [ -z "${WIDE:-}" ] || w=$(($# - i + 1))
    ser "l$i" "$dir/$prefix-$k.rrd" "$ds" AVERAGE "LINE$w:l$i#$(col $i):${k#avg_}${LABEL_SUFFIX:-}" \
      "GPRINT:l$i:LAST:last $fmt\\l" || true
    i=$((i + 1))
  done
}

# strip ROW FILE LEGEND: one row of a state strip (rows 1 high, bars 0.8)
# of a 0/1/2 level: green 0, amber 1, red 2, nothing when unknown; the
# colours' legend only with LEGEND set. A step that two rounds share holds
# their time-weighted mean (1.4 for 0 then 2): rounded up, it shows the
# worse of the two instead of nothing.
strip() {
  local row=$1 f=$2 lg=$3 lv c l
  [ -f "$f" ] || return 0
  args+=("DEF:s$row=$f:value:MAX" "CDEF:k$row=s$row,CEIL" "CDEF:b$row=s$row,UN,$row,$row,IF")
  for lv in 0 1 2; do
    case $lv in 0) c=$OK l="0 = ok" ;; 1) c=$WARN l="1 = warning" ;; 2) c=$FAIL l="2 = failure" ;; esac
    [ -n "$lg" ] || l=
    args+=("CDEF:a$row$lv=k$row,$lv,EQ,0.8,UNKN,IF" "LINE:b$row#00000000" "AREA:a$row$lv#$c:$l:STACK")
  done
}
# flag ROW FILE COLOUR LEGEND [LEGEND0]: one row of a state strip of a 0/1
# flag: green 0 (with LEGEND0), COLOUR 1 with LEGEND.
flag() {
  local row=$1 f=$2 c=$3 l=$4 l0=${5:-}
  [ -f "$f" ] || return 0
  args+=("DEF:f$row=$f:value:MAX" "CDEF:c$row=f$row,UN,$row,$row,IF"
    "CDEF:z$row=f$row,0,EQ,0.8,UNKN,IF" "CDEF:o$row=f$row,1,EQ,0.8,UNKN,IF"
    "LINE:c$row#00000000" "AREA:z$row#$OK:$l0:STACK" "LINE:c$row#00000000" "AREA:o$row#$c:$l:STACK")
}

# ---- what was not OK: the summary and the order of the targets ------------
# levels FILE: "TIME LEVEL" for each step of the range that has a value (the
# step (TIME - step, TIME]; LEVEL rounded up, as in the strip), the newest
# round's open step included.
levels() {
  local f=$1 nw c=0 lu=0 v=
  rrd_info "$f"
  if nw=$(newest "$f" value); then read -r c lu v <<<"$nw"; fi
  rrdtool fetch "$f" MAX --start "$start" --end "$end" 2>/dev/null |
    awk -v c="$c" -v st="${i_step[$f]}" -v v="$v" -v s="$start" -v e="$end" '
      function up(x) { return x > 1 ? 2 : x > 0 ? 1 : 0 }
      NR > 2 && $2 !~ /nan/ { print $1 + 0, up($2) }
      END { if (v != "" && c + st > s + 0 && c < e + 0) print c + st, up(v) }'
}
# judge DIR: the target's episodes of not OK in the range, from its level
# and rule files: "E FROM TO LEVEL ONGOING RULE:LEVEL..." (ONGOING 1 when
# the newest round is in it), then "N TIME LEVEL RULE:LEVEL..." for the
# newest round, then "T WORST LAST_NOT_OK" (0 0 when all was OK).
judge() {
  local dir=$1 f r
  [ -f "$dir/target_health-level.rrd" ] || { echo "T 0 0"; return 0; }
  rrd_info "$dir/target_health-level.rrd"
  {
    levels "$dir/target_health-level.rrd" | sed 's/^/level /'
    for f in "$dir"/target_health-*.rrd; do
      r=${f##*/target_health-}
      r=${r%.rrd}
      [ "$r" = level ] || levels "$f" | sed "s/^/$r /"
    done
  } | awk -v st="${i_step[$dir/target_health-level.rrd]}" '
    $1 == "level" { t[++n] = $2; lv[n] = $3; next }
    { if ($3 > 0) { rl[$1, $2] = $3; names[$1] = 1 } }
    function rules(a, b,   k, i, w, o) {
      o = ""
      for (k in names) {
        w = 0
        for (i = a; i <= b; i++) if (rl[k, t[i]] > w) w = rl[k, t[i]]
        if (w) o = o " " k ":" w
      }
      return o
    }
    function flush() {
      if (!a) return
      print "E", t[a] - st, t[b], w, (b == n), rules(a, b)
      if (w > worst) worst = w
      last = t[b]; a = 0
    }
    END {
      worst = 0; last = 0; a = 0
      for (i = 1; i <= n; i++) {
        if (lv[i] > 0 && a && t[i] - t[b] <= 1.5 * st) { b = i; if (lv[i] > w) w = lv[i]; continue }
        flush()
        if (lv[i] > 0) { a = b = i; w = lv[i] }
      }
      flush()
      if (n) print "N", t[n], lv[n], rules(n, n)
      print "T", worst, last
    }'
}
rules_html() { # rules_html RULE:LEVEL...: "stall (failure), baseline (warning)", worst first
  local r o=
  while read -r r; do
    [ -n "$r" ] && o+=", ${r%:*} ($([ "${r#*:}" = 2 ] && echo failure || echo warning))"
  done < <(printf '%s\n' "$@" | sort -t: -k2,2nr -k1,1)
  echo "${o#, }"
}

# The targets of every host, worst first; then the device views.
targets=() devices=() order=()
for hostdir in "$src"/*/; do
  [ -d "$hostdir" ] || continue
  for dir in "$hostdir"diskprobe-*/; do
    [ -d "$dir" ] || continue
    dir=${dir%/}
    [ -n "$(probe_names "$dir")" ] && targets+=("$dir")
    if [ -f "$dir/operations_per_second-read.rrd" ] || [ -f "$dir/latency-read_await.rrd" ]; then devices+=("$dir"); fi
  done
done
declare -A verdict
for i in "${!targets[@]}"; do
  dir=${targets[$i]}
  verdict[$dir]=$(judge "$dir")
  read -r _ worst last <<<"$(grep '^T ' <<<"${verdict[$dir]}")"
  order+=("$worst $last $i")
done
sorted=()
if [ ${#order[@]} -gt 0 ]; then
  while read -r _ _ i; do sorted+=("${targets[$i]}"); done < <(printf '%s\n' "${order[@]}" | sort -k1,1nr -k2,2nr -k3,3n)
fi
disks_of() { # disks_of DIR: the disks the target is on (target_device-DISK.rrd)
  local f o=
  for f in "$1"/target_device-*.rrd; do [ -e "$f" ] && f=${f##*/target_device-} && o+="${f%.rrd} "; done
  echo "${o% }"
}
tag_of() { local d=${1%/*}; echo "${d##*/}-${1##*/diskprobe-}"; }
# learning DIR: true while the target's newest round was not armed (its
# baselines hold fewer than ArmRounds rounds: the relative rules do not
# judge it yet, so an OK there is not yet a verdict against its normal)
learning() {
  local f=$1/armed-armed.rrd
  [ -f "$f" ] || return 1
  rrd_info "$f"
  [ "${i_last[$f|value]:-U}" = 0 ]
}
learners=()
for dir in "${sorted[@]}"; do learning "$dir" && learners+=("$dir"); done
learning_html() { # the learning targets, as "inst on host, ..."
  local dir o=
  for dir in "${learners[@]}"; do
    o+=", $(esc "${dir##*/diskprobe-}") on $(esc "$(basename "${dir%/*}")")"
  done
  echo "${o#, }"
}

# The summary: every episode of not OK, worst target first, newest first.
{
  rows=
  for dir in "${sorted[@]}"; do
    host=${dir%/*} host=${host##*/} inst=${dir##*/diskprobe-}
    while read -r _ from to lv ongoing rl; do
      # shellcheck disable=SC2086
      rows+="<tr class=\"l$lv\" data-target=\"$(esc "$host/$inst")\"><td><a href=\"#$(esc "$(tag_of "$dir")")\">$(esc "$inst")</a> on $(esc "$host")</td><td>$(esc "$(disks_of "$dir")")</td><td class=\"lv\">$(level_name "$lv")</td><td>$(esc "$(rules_html $rl)")</td><td>$(fmt_time "$from")</td><td>$(fmt_dur $((to - from)))$([ "$ongoing" = 1 ] && echo ", still at the newest round" || echo " (until $(date -d "@$to" +%H:%M:%S))")</td></tr>"
    done < <(grep '^E ' <<<"${verdict[$dir]}" | sort -k3,3nr)
  done
  if [ -n "$rows" ]; then
    echo "<h2 id=\"not-ok\">Not OK in this range</h2>"
    echo "<table class=\"summary\"><tr><th>target</th><th>disk</th><th>level</th><th>rules</th><th>from</th><th>for</th></tr>"
    echo "$rows</table>"
    [ ${#learners[@]} -gt 0 ] &&
      echo "<p class=\"learning\">Still learning (not armed: fewer than ArmRounds rounds of baseline, so only the absolute rules -- ceiling, stall, errors -- judge them): $(learning_html).</p>"
  elif [ ${#learners[@]} -gt 0 ]; then
    echo "<h2 id=\"not-ok\">Not OK in this range</h2><p class=\"learning\">Nothing was WARNING or FAILURE, but not every target is judged yet: still learning its baseline (not armed: fewer than ArmRounds rounds, so only the absolute rules -- ceiling, stall, errors -- judge it): $(learning_html).</p>"
  elif compgen -G "$src/*/diskprobe-*/target_health-level.rrd" >/dev/null; then
    echo "<h2 id=\"not-ok\">Not OK in this range</h2><p class=\"ok\">Nothing: every target was OK in the whole range.</p>"
  else
    echo "<h2 id=\"not-ok\">Not OK in this range</h2><p class=\"ok\">No health verdicts in these files (target_health-level.rrd): a plugin without the health rules.</p>"
  fi
} >>"$html"

for dir in "${sorted[@]}"; do
  host=${dir%/*} host=${host##*/} inst=${dir##*/diskprobe-} tag=$(tag_of "$dir") disks=$(disks_of "$dir")
  echo "<h2 id=\"$(esc "$tag")\">$(esc "$host"): target $(esc "$inst")${disks:+ on disk $(esc "$disks")}</h2>" >>"$html"
  if read -r _ t lv rl < <(grep '^N ' <<<"${verdict[$dir]}"); then
    # the round's own time when the step holds it (the last update), else the step's end
    f="$dir/target_health-level.rrd"
    rrd_info "$f"
    [ "${i_lu[$f]}" -gt $((t - i_step[$f])) ] && [ "${i_lu[$f]}" -le "$t" ] && t=${i_lu[$f]}
    # shellcheck disable=SC2086
    lrn=
    learning "$dir" && lrn=", still learning its baseline (not armed: the relative rules judge it after ArmRounds rounds)"
    echo "<p class=\"newest\">Newest round ($(fmt_time "$t")): <span class=\"l$lv\">$(level_name "$lv")</span>${rl:+ by $(esc "$(rules_html $rl)")}$lrn</p>" >>"$html"
  fi
  echo "<div class=\"graphs\">" >>"$html"

  # Health as a strip chart: the level on top, armed, then each rule (the
  # known ones in their order, then any other), one row each.
  rules=()
  for r in baseline ceiling peers stall errors failslow; do
    [ -f "$dir/target_health-$r.rrd" ] && rules+=("$r")
  done
  for f in "$dir"/target_health-*.rrd; do
    [ -e "$f" ] || continue
    r=${f##*/target_health-}
    r=${r%.rrd}
    case " level ${rules[*]} " in *" $r "*) ;; *) rules+=("$r") ;; esac
  done
  args=() row=$((${#rules[@]} + 2)) top=$((${#rules[@]} + 2)) ROWS=
  if [ -f "$dir/target_health-level.rrd" ]; then
    strip $row "$dir/target_health-level.rrd" 1
    ROWS="$row:level"
  fi
  row=$((row - 1))
  if [ -f "$dir/armed-armed.rrd" ]; then
    args+=("DEF:arm=$dir/armed-armed.rrd:value:MAX" "CDEF:barm=arm,UN,$row,$row,IF"
      "CDEF:yes=arm,1,EQ,0.8,UNKN,IF" "CDEF:no=arm,0,EQ,0.8,UNKN,IF"
      "LINE:barm#00000000" "AREA:yes#6baed6:armed:STACK" "LINE:barm#00000000" "AREA:no#$GREY:learning:STACK")
    ROWS+=" $row:armed"
  fi
  for r in "${rules[@]}"; do
    row=$((row - 1))
    strip $row "$dir/target_health-$r.rrd" ""
    ROWS+=" $row:$r"
  done
  [ ${#args[@]} = 0 ] || args+=("COMMENT:\\l" "COMMENT:rows, top to bottom\\: $(sed 's/[0-9]*://g; s/ /, /g' <<<"${ROWS# }")\\l")
  ROWS=${ROWS# } graph "$tag-health.png" "$inst health: verdict, armed, each rule" \
    "The verdict after each round (top row), whether the baselines hold ArmRounds rounds (blue armed, grey still learning), and each rule's own level in the rows below, each row named on its left. Green 0 = ok, amber 1 = warning, red 2 = failure; blank = no value. The newest round is drawn although rrdtool has not closed its step yet." \
    --height $((20 * top)) --lower-limit 0.9 --upper-limit $((top + 1)) --rigid --y-grid none
  ROWS= # the strip's row names are its own, not the next graph's

  # Slowdown against the baseline: the round and each probe.
  ser s "$dir/slowdown-round.rrd" value AVERAGE "LINE3:s#000000:round" "GPRINT:s:LAST:last %5.2lfx\\l" || true
  i=0
  for p in $(probe_names "$dir"); do
    ser p$i "$dir/slowdown-$p.rrd" value AVERAGE "LINE1:p$i#$(col $i):$p" || true
    i=$((i + 1))
  done
  [ ${#args[@]} = 0 ] || args+=("COMMENT:\\l" "COMMENT:dashed\\:" "HRULE:1.4#bcbd22:1.4x warn-slow (QD1 p50, 7 of 10):dashes"
    "HRULE:1.9#ff7f0e:1.9x warn (3 of 3)\\l:dashes" "COMMENT:       " "HRULE:4#d62728:4x warn (2 of 2):dashes" "HRULE:8#7f0000:8x failure (3 of 3)\\l:dashes")
  graph "$tag-slowdown.png" "$inst slowdown against its baseline" \
    "How many times slower than its own healthy baseline the round (bold, what the baseline rule judges) and each probe were; 1 = as usual, no line until armed; clipped at 10x." \
    --lower-limit 0 --upper-limit 10 --rigid --y-grid 0.5:2 --vertical-label "x baseline"

  # Latency of each probe: band min..max, percentiles, baseline p50.
  i=0
  for p in $(probe_names "$dir"); do
    f="$dir/probe_latency-$p.rrd"
    ser min "$f" min AVERAGE "DEF:max=$f:max:AVERAGE" "DEF:mean=$f:mean:AVERAGE" \
      "DEF:p50=$f:p50:AVERAGE" "DEF:p90=$f:p90:AVERAGE" "DEF:p99=$f:p99:AVERAGE" "DEF:p999=$f:p999:AVERAGE" \
      "CDEF:band=max,min,-" "LINE:min#00000000" "AREA:band#dfeaf6:min..max:STACK" \
      "LINE2:p50#1f77b4:p50" "GPRINT:p50:LAST:%5.1lf%ss" \
      "LINE1:mean#17becf:mean" "GPRINT:mean:LAST:%5.1lf%ss" \
      "LINE2:p90#ff7f0e:p90" "GPRINT:p90:LAST:%5.1lf%ss\\l" \
      "LINE2:p99#d62728:p99" "GPRINT:p99:LAST:%5.1lf%ss" \
      "LINE1:p999#7f0000:p99.9" "GPRINT:p999:LAST:%5.1lf%ss\\l" || true
    ser bp50 "$dir/probe_baseline-$p.rrd" p50 AVERAGE "LINE1:bp50#000000:baseline p50\\l:dashes" || true
    graph "$tag-latency-$p.png" "$inst / $p latency" \
      "Latency distribution of the probe's counted I/Os each round (log axis): shaded min to max, p50, mean, p90, p99, p99.9; dashed: the healthy baseline p50 the health rules compare with." \
      --logarithmic --units=si --vertical-label seconds
    i=$((i + 1))
  done

  # IOPS, throughput, queue depth of all probes (log axes).
  i=0
  for p in $(probe_names "$dir"); do
    ser v$i "$dir/operations_per_second-$p.rrd" value AVERAGE "LINE2:v$i#$(col $i):$p" "GPRINT:v$i:LAST:last %6.1lf%s" || true
    if ser b$i "$dir/probe_baseline-$p.rrd" iops AVERAGE "LINE1:b$i#$(col $i):baseline\\l:dashes"; then :; else args+=("COMMENT:\\l"); fi
    i=$((i + 1))
  done
  graph "$tag-iops.png" "$inst IOPS by probe" \
    "Completed I/Os per second of each probe (log axis, so QD1 is readable beside QD32); dashed in the same colour: its healthy baseline IOPS." \
    --logarithmic --units=si --vertical-label "I/O per second"
  lines bytes_per_second value "%6.1lf%sB/s" $(probe_names "$dir")
  graph "$tag-throughput.png" "$inst throughput by probe" \
    "Bytes per second of each probe (log axis, base 1024): seqread tells the path's bandwidth, syncwrite the flush cost." \
    --logarithmic --base 1024 --units=si --vertical-label "bytes per second"
  WIDE=1 lines queue_length value "%5.1lf" $(probe_names "$dir")
  graph "$tag-qd.png" "$inst achieved queue depth by probe" \
    "IOPS x mean latency of each probe (log axis; probes with the same depth overlap, the first drawn widest): it should equal the configured QueueDepth; less means the probe, not the disk, was the limit." \
    --logarithmic --units=si --vertical-label "I/Os in flight"

  # Effective interval and probe wall time.
  ser ivl "$dir/duration-interval.rrd" seconds MAX "LINE3:ivl#000000:interval in force" "GPRINT:ivl:LAST:last %5.1lf%ss\\l" || true
  LABEL_SUFFIX=" wall time" lines duration seconds "%5.2lf%ss" $(probe_names "$dir")
  graph "$tag-interval.png" "$inst effective interval and probe wall time" \
    "The probe interval (ProbeInterval) and each probe's wall time, warm-up and drain included (log axis)." \
    --logarithmic --units=si --vertical-label seconds

  # Probe errors per minute (io + short + timeout) of each probe.
  i=0 tot=
  for p in $(probe_names "$dir"); do
    f="$dir/probe_errors-$p.rrd"
    if ser io$i "$f" io AVERAGE "DEF:sh$i=$f:short:AVERAGE" "DEF:to$i=$f:timeout:AVERAGE" \
      "CDEF:e$i=io$i,sh$i,+,to$i,+,60,*" "LINE2:e$i#$(col $i):$p" \
      "CDEF:eio$i=io$i,60,*" "CDEF:esh$i=sh$i,60,*" "CDEF:eto$i=to$i,60,*" \
      "GPRINT:eio$i:MAX:max per min\\: io %4.1lf" "GPRINT:esh$i:MAX:short %4.1lf" "GPRINT:eto$i:MAX:timeout %4.1lf\\l"; then
      tot+="e$i,"
      [ "$tot" = "e$i," ] || tot+="ADDNAN,"
    fi
    i=$((i + 1))
  done
  [ -z "$tot" ] || args+=("CDEF:tot=${tot%,}" "CDEF:zero=tot,0,EQ,0.04,UNKN,IF" "AREA:zero#$OK:0 = no errors in the interval\\l")
  graph "$tag-errors.png" "$inst probe errors per minute" \
    "I/O errors, short transfers and I/Os over Timeout per minute, each probe's sum as a line, the maximum of each kind in the legend; the green strip at the bottom marks intervals without any." \
    --height 120 --lower-limit 0 --upper-limit 1 --vertical-label "errors per minute"

  # Stalled and saturated as a strip, "0 = ok" drawn green.
  flag 2 "$dir/stalled-stalled.rrd" $FAIL "1 = stalled" "0 = ok"
  flag 1 "$dir/saturated-saturated.rrd" $WARN "1 = saturated by other I/O"
  [ ${#args[@]} = 0 ] || args+=("COMMENT:\\l" "COMMENT:upper row\\: stalled, lower row\\: saturated\\l")
  [ -f "$dir/duration-stalled.rrd" ] && args+=("DEF:sd=$dir/duration-stalled.rrd:seconds:MAX" "GPRINT:sd:MAX:longest stall in the range %5.1lf s\\l")
  graph "$tag-stalled.png" "$inst stalled and saturated (green = ok)" \
    "Upper row: 1 (red) while an I/O of the target is older than its Timeout; lower row: 1 (amber) while its disk was saturated by other I/O, i.e. latency is high because the disk is busy. Green is 0 = ok." \
    --height 70 --lower-limit 0.9 --upper-limit 3 --rigid --y-grid none

  # Peer ratio against the host's like targets.
  for f in "$dir"/peer_ratio-*.rrd; do
    [ -e "$f" ] || continue
    p=${f##*/peer_ratio-}
    p=${p%.rrd}
    ser pr "$f" value AVERAGE "LINE2:pr#9467bd:$p p50 / median of like targets" "GPRINT:pr:LAST:last %5.2lfx\\l" "HRULE:3#ff7f0e:3x = warning (3 rounds)" || continue
    graph "$tag-peer-ratio-$p.png" "$inst peer ratio ($p)" \
      "The first probe's p50 over the median of the host's other targets of the same media class and model; 3 for 3 rounds is a warning." \
      --lower-limit 0 --vertical-label ratio
  done
  echo "</div>" >>"$html"
  files_table "$dir"
done

# Device view (the iostat/Perfmon metrics).
for dir in "${devices[@]}"; do
  host=${dir%/*} host=${host##*/} inst=${dir##*/diskprobe-} tag=$(tag_of "$dir")
  disk=${inst#dev-}
  echo "<h2 id=\"$(esc "$tag")\">$(esc "$host"): device $(esc "$disk") <small>(diskprobe-$(esc "$inst"))</small></h2><div class=\"graphs\">" >>"$html"
  lines operations_per_second value "%6.1lf%s/s" read write discard flush
  graph "$tag-iops.png" "$disk IOPS (Disk Reads/sec, Writes/sec; r/s, w/s)" \
    "Completed requests per second of the whole device, everyone's I/O, diskprobe's included." \
    --lower-limit 0 --units=si --vertical-label "I/O per second"
  lines bytes_per_second value "%6.1lf%sB/s" read write
  graph "$tag-throughput.png" "$disk throughput (Disk Read/Write Bytes/sec)" \
    "Bytes per second read and written on the device." --lower-limit 0 --base 1024 --units=si --vertical-label "bytes per second"
  lines bytes value "%6.1lf%sB" avg_read_size avg_write_size
  graph "$tag-reqsize.png" "$disk average request size (rareq-sz, wareq-sz)" \
    "Bytes per read and per write request (log axis, base 1024); no line in an interval without such requests." --logarithmic --base 1024 --units=si --vertical-label bytes
  lines latency value "%6.1lf%ss" read_await write_await discard_await flush_await
  graph "$tag-await.png" "$disk await (Avg. Disk sec/Read, sec/Write)" \
    "Mean time a request spent queued and in service (log axis: a flush or discard spike leaves reads readable); await rising with utilisation flat means the device itself slowed." \
    --logarithmic --units=si --vertical-label seconds
  ser q "$dir/queue_length-average.rrd" value AVERAGE "LINE2:q#2ca02c:average queue length (aqu-sz)" "GPRINT:q:LAST:last %6.2lf\\l" || true
  ser fl "$dir/pending_operations-in_flight.rrd" value MAX "LINE1:fl#d62728:in flight at the read (Current Disk Queue Length)" "GPRINT:fl:LAST:last %4.0lf\\l" || true
  graph "$tag-queue.png" "$disk queue length and requests in flight" \
    "Average requests outstanding over the interval, and the requests in flight at the moment of the read." \
    --lower-limit 0 --units=si --vertical-label requests
  ser u "$dir/percent-utilization.rrd" value AVERAGE "AREA:u#c6b3e0" "LINE2:u#9467bd:utilisation (%util)" "GPRINT:u:LAST:last %5.1lf %%\\l" \
    "HRULE:90#ff7f0e:90 % = default SaturationThreshold:dashes" || true
  graph "$tag-util.png" "$disk utilisation (% Disk Time)" \
    "Share of the interval with at least one request in flight, on its own 0-100 % axis; 100 % with a growing queue is an overloaded device (not a full one: SSDs serve many requests at once)." \
    --lower-limit 0 --upper-limit 100 --rigid --vertical-label percent
  ser ps "$dir/percent-probe_share.rrd" value AVERAGE "AREA:ps#e6c9b8" "LINE2:ps#8c564b:diskprobe's share of the bytes" "GPRINT:ps:LAST:last %5.1lf %%\\l" || true
  graph "$tag-probe-share.png" "$disk probe share" \
    "diskprobe's completed bytes over all of the device's bytes: how much of what the device did was the probes." \
    --lower-limit 0 --upper-limit 100 --rigid --vertical-label percent
  if ser fs "$dir/slowdown-peers.rrd" value AVERAGE "LINE2:fs#000000:2-hour score against the peers" "GPRINT:fs:LAST:last %5.2lfx\\l" \
    "HRULE:1.9#d62728:1.9x = flagged (fast rule):dashes" "HRULE:1.4#ffbf00:1.4x = cleared below\\l:dashes"; then
    ser ff "$dir/failslow-peers.rrd" value MAX "CDEF:ffl=ff,1,EQ,0.12,UNKN,IF" "CDEF:ffo=ff,0,EQ,0.12,UNKN,IF" \
      "AREA:ffo#$OK:verdict\\: like its peers" "AREA:ffl#$FAIL:flagged fail-slow\\l" || true
  fi
  graph "$tag-failslow.png" "$disk fail-slow against its peers" \
    "The disk's latency over its peers' at the same load (median of the window slowdowns of the last 2 hours); 1.9 flags it (clipped at 4x); the strip at the bottom is the plugin's decision, red while flagged (both rules, with hysteresis)." \
    --lower-limit 0 --upper-limit 4 --rigid --y-grid 0.5:2 --vertical-label "x peers"
  echo "</div>" >>"$html"
  files_table "$dir"
done
echo "</body></html>" >>"$html"
echo "graphs: $(find "$out" -name '*.png' | wc -l) PNGs, open $html"
