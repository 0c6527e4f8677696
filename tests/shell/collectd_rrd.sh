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
#
# First, without collectd, the page on RRD files written here: three
# targets of which "sick" had a WARNING and then, in the newest round, a
# FAILURE that sits in an RRD step rrdtool has not closed yet; "alpha" had
# an older WARNING; "calm" none. The page must open with a summary naming
# sick's FAILURE (stall, still at the newest round) and WARNING (baseline)
# and alpha's WARNING, list the targets worst first (sick, alpha, calm, not
# name order), name the newest round, label the health strip's rows on
# the strip, and read the newest round through rrdcached (--daemon) when
# the files are written through it. In a headless Chromium (when it runs)
# the summary's first row, sick, is on the first screen; a screenshot of it
# is kept in tests/artefacts.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd rrdtool

# ---- the graph page on synthetic RRD files --------------------------------
s=$(make_tmpdir)
step=10 n=100
base=$(($(date +%s) / step * step - n * step))
# mkrrd FILE DS... : an RRD like the rrdtool plugin's (GAUGE, heartbeat 2 steps)
mkrrd() {
  local f=$1 ds
  shift
  mkdir -p "${f%/*}"
  local a=(--start "$((base - step))" --step "$step")
  for ds; do a+=("DS:$ds:GAUGE:$((2 * step)):U:U"); done
  rrdtool create "$f" "${a[@]}" RRA:AVERAGE:0.1:1:1200 RRA:MIN:0.1:1:1200 RRA:MAX:0.1:1:1200
}
# feed FILE FIRST LAST AWK: updates FILE with one round per step from round
# FIRST to LAST (3 s after the step's start, as collectd's are not aligned),
# the value(s) printed by AWK for round k.
feed() {
  # shellcheck disable=SC2046
  rrdtool update "$1" $(awk -v a="$2" -v b="$3" -v base="$base" -v st=$step \
    "BEGIN { for (k = a; k <= b; k++) { printf \"%d:\", base + k * st + 3; $4; printf \"\\n\" } }")
}
# target NAME AWK_LEVEL AWK_BASELINE AWK_STALL: one target's files, rounds 0..n-1
# (the newest round, n, is fed by the caller)
target() {
  local t="$s/rrd/h1/diskprobe-$1"
  for f in target_health-level target_health-baseline target_health-stall armed-armed slowdown-round \
    operations_per_second-randread-qd1 target_device-sdz; do mkrrd "$t/$f.rrd" value; done
  mkrrd "$t/probe_latency-randread-qd1.rrd" min mean p50 p90 p99 p999 max
  feed "$t/target_health-level.rrd" 0 $((n - 1)) "$2"
  feed "$t/target_health-baseline.rrd" 0 $((n - 1)) "$3"
  feed "$t/target_health-stall.rrd" 0 $((n - 1)) "$4"
  feed "$t/armed-armed.rrd" 0 $n 'printf 1'
  feed "$t/slowdown-round.rrd" 0 $n 'printf 1.1'
  feed "$t/target_device-sdz.rrd" 0 $n 'printf 1'
  feed "$t/operations_per_second-randread-qd1.rrd" 0 $n 'printf 4000'
  feed "$t/probe_latency-randread-qd1.rrd" 0 $n 'printf "0.0001:0.0002:0.0002:0.0003:0.0004:0.0005:0.0006"'
}
warn_between='printf (k >= %d && k < %d) ? 1 : 0'
# shellcheck disable=SC2059
{
  target calm 'printf 0' 'printf 0' 'printf 0'
  target alpha "$(printf "$warn_between" 20 35)" "$(printf "$warn_between" 20 35)" 'printf 0'
  target sick "$(printf "$warn_between" 60 70)" "$(printf "$warn_between" 60 70)" 'printf 0'
}
for t in calm alpha; do
  for r in level baseline stall; do feed "$s/rrd/h1/diskprobe-$t/target_health-$r.rrd" $n $n 'printf 0'; done
done
sick="$s/rrd/h1/diskprobe-sick"
# sick's newest round: a FAILURE by the stall rule, through rrdcached
# when it is installed (the files then lack it until flushed).
cached=()
if command -v rrdcached >/dev/null; then
  mkdir -p "$s/journal"
  rrdcached -g -l "unix:$s/rrdcached.sock" -w 3600 -z 0 -j "$s/journal" -p "$s/rrdcached.pid" -F >"$s/rrdcached.log" 2>&1 &
  register_pid $!
  wait_until 10 test -S "$s/rrdcached.sock" && cached=(--daemon "unix:$s/rrdcached.sock")
fi
for r in level:2 baseline:0 stall:2; do
  rrdtool update ${cached[@]+"${cached[@]}"} "$sick/target_health-${r%:*}.rrd" "$((base + n * step + 3)):${r#*:}"
done
if [ ${#cached[@]} -gt 0 ]; then
  rrd_last "$sick/target_health-level.rrd" | grep -qx 0 &&
    pass "rrdcached holds sick's newest round; the file does not have it yet" ||
    fail "rrdcached: the file already has the newest round ($(rrd_last "$sick/target_health-level.rrd"))"
else
  echo "rrdcached not installed: the newest round is written to the files directly"
fi
# The newest round is only in the open step: no stored step holds a 2.
max=$(rrdtool fetch "$sick/target_health-level.rrd" MAX --start $((base - step)) --end $((base + (n + 2) * step)) |
  awk 'NR > 2 && $2 !~ /nan/ && $2 + 0 > m { m = $2 + 0 } END { print m + 0 }')
num_cmp "$max" '<' 2 && pass "the FAILURE is in the open RRD step only (stored max $max)" ||
  fail "a stored step holds the FAILURE: the test would not show the open step is read"

page="$s/graphs/index.html"
bash "$top_srcdir/src/rrd-graphs/diskprobe-rrd-graphs.sh" ${cached[@]+"${cached[@]}"} "$s/rrd" "$s/graphs" $((base - 60)) now >"$s/graphs.out" 2>&1 ||
  fail "diskprobe-rrd-graphs.sh failed on the synthetic files: $(cat "$s/graphs.out")"
grep -o '<tr class="l[12]" data-target="[^"]*">.*</tr>' "$page" | sed 's/<\/tr>/&\n/g' | sed '/^$/d' >"$s/summary"
echo "summary of the page:"
sed 's/<[^>]*>/ | /g; s/\( | \)\+/ | /g' "$s/summary"
head -1 "$s/summary" | grep -q 'data-target="h1/sick".*>FAILURE<.*stall (failure).*still at the newest round' &&
  pass "summary: first sick's FAILURE by stall, still at the newest round" ||
  fail "summary: the first row is not sick's FAILURE by stall at the newest round"
grep -q 'data-target="h1/sick".*>WARNING<.*baseline (warning)' "$s/summary" &&
  pass "summary: sick's WARNING by baseline" || fail "summary: no row for sick's WARNING by baseline"
# alpha's 15 rounds (150 s, 3 s past step boundaries) touch 16 steps
grep -q 'data-target="h1/alpha".*>WARNING<.*baseline (warning).*<td>2 min 40 s (until ' "$s/summary" &&
  pass "summary: alpha's WARNING by baseline, 16 steps" || fail "summary: no row for alpha's 160 s WARNING by baseline"
grep -q 'data-target="h1/calm"' "$s/summary" && fail "summary: calm was OK all along but is listed"
[ "$(wc -l <"$s/summary")" = 3 ] && pass "summary: 3 episodes" || fail "summary: $(wc -l <"$s/summary") episodes, expected 3"
order=$(grep -o '<h2 id="[^"]*"' "$page" | sed 's/<h2 id="//; s/"//' | tr '\n' ' ')
[ "$order" = "not-ok h1-sick h1-alpha h1-calm " ] && pass "page order: summary, then sick, alpha, calm (worst first)" ||
  fail "page order: $order, expected the summary, then h1-sick h1-alpha h1-calm"
grep -q '<p class="newest">Newest round ([^)]*): <span class="l2">FAILURE</span> by stall (failure)</p>' "$page" &&
  pass "sick: the newest round (an open RRD step) is a FAILURE by stall" || fail "sick: the newest round is not shown as a FAILURE"
# the health strip's rows, named on the strip top to bottom
sed -n '/<img src="h1-sick-health.png"/,/<\/figure>/p' "$page" | grep -o 'data-row="[^"]*" style="top:[0-9]*px' |
  sed 's/data-row="//; s/" style="top:/ /; s/px//' >"$s/rows"
rows=$(awk '{ printf "%s ", $1 }' "$s/rows")
[ "$rows" = "level armed baseline stall " ] && awk 'NR > 1 && $2 <= p { exit 1 } { p = $2 }' "$s/rows" &&
  pass "health strip: rows named on the strip, top to bottom: $rows" || fail "health strip: row labels '$rows' (or not top to bottom)"
[ -s "$s/graphs/h1-sick-health.png" ] || fail "no health graph of sick"
if ! grep -q '<img src="h1-sick-slowdown.png"' "$page"; then
  fail "no slowdown graph of sick on the page"
elif sed -n '/<img src="h1-sick-slowdown.png"/,/<\/figure>/p' "$page" | grep -q 'data-row='; then
  fail "the slowdown graph carries the health strip's row names"
else
  pass "the row names are on the health strip only (not on the slowdown graph below it)"
fi

# The page's first screen, as a browser shows it: a headless Chromium
# screenshot of a 1400x900 window, kept as a test artefact
# (tests/artefacts/collectd_rrd-first-screen.png), and its DOM: the
# summary names sick's FAILURE, and its first row lies within that first
# screen (a copy of the page with a script that records where the row is
# drawn).
first_screen() {
  local art="$top_builddir/tests/artefacts" probe="$s/graphs/first-screen.html" dom="$s/first-screen.dom" prof
  command -v chromium >/dev/null || { echo "SKIP: first screen: chromium not installed (apt-get install chromium)"; return; }
  prof=$(mktemp -d "$s/chromium.XXXXXX")
  sed 's|</body>|<script>window.addEventListener("load", function () { var r = document.querySelector("tr[data-target]"), b = r ? r.getBoundingClientRect() : null; document.body.setAttribute("data-first-row", b ? Math.round(b.bottom) + " " + window.innerHeight + " " + r.getAttribute("data-target") : "none"); });</script>&|' \
    "$page" >"$probe"
  if ! timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$prof" \
    --window-size=1400,900 --virtual-time-budget=2000 --dump-dom "file://$probe" >"$dom" 2>"$s/chromium.log" ||
    ! grep -q "data-first-row=" "$dom"; then
    echo "SKIP: first screen: chromium cannot run here: $(grep -v 'dbus\|^$' "$s/chromium.log" | tail -2)"
    return
  fi
  sed 's/<[^>]*>/ /g' "$dom" | tr -s ' \n' ' ' | grep -o 'Not OK.\{0,160\}' | head -1 | sed 's/^/  page text: /'
  grep -q 'data-target="h1/sick"[^>]*>.*FAILURE.*stall (failure).*still at the newest round' "$dom" &&
    pass "browser DOM: the summary names sick's FAILURE by stall, still at the newest round" ||
    fail "browser DOM: no summary row for sick's FAILURE by stall"
  read -r bottom height first <<<"$(sed -n 's/.*data-first-row="\([^"]*\)".*/\1/p' "$dom")"
  [ "$first" = h1/sick ] && num_cmp "${bottom:-1e9}" '<=' "${height:-0}" &&
    pass "browser: the summary's first row (sick) is drawn at $bottom px, within the first screen ($height px)" ||
    fail "browser: the first summary row is ${first:-missing} at ${bottom:-?} px of a ${height:-?} px screen"
  mkdir -p "$art"
  rm -f "$art/collectd_rrd-first-screen.png"
  bash "$top_srcdir/tests/tools/screenshot.sh" "$page" "$art/collectd_rrd-first-screen.png" 1400x900 >"$s/shot.out" 2>&1 &&
    [ "$(head -c 4 "$art/collectd_rrd-first-screen.png" | od -An -c | tr -d ' ')" = "211PNG" ] &&
    pass "screenshot of the first screen: $art/collectd_rrd-first-screen.png" ||
    fail "screenshot failed: $(tail -3 "$s/shot.out")"
  cp "$dom" "$art/collectd_rrd-first-screen.dom.html"
}
first_screen

# ---- the whole path with collectd ------------------------------------------
need collectd
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
bash "$top_srcdir/src/rrd-graphs/diskprobe-rrd-graphs.sh" "$d/rrd" "$d/graphs" >"$d/graphs.out" 2>&1 || fail "diskprobe-rrd-graphs.sh failed: $(cat "$d/graphs.out")"
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

finish collectd_rrd 'tail -20 "$d/collectd.log" 2>/dev/null'
