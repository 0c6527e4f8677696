#!/bin/bash
# failslow_cost.sh - what the fail-slow detector costs the plugin for one
# peer group of 90 disks (a 90-bay storage node): CPU per interval and
# memory. A benchmark, not a test: it prints figures, it never fails on a
# number.
#
#   contrib/evaluation/bench/failslow_cost.sh [NDEV] [DAYS] [INTERVAL_S]
#
# Defaults: 90 devices, 2 simulated days, collectd's default Interval of
# 10 s (windows of 30 intervals, the plugin's FailSlowWindow 300 s).
# Builds contrib/evaluation/bench/bench_failslow.c with gcc -O2 against src/failslow.c
# (and src/peers.c, src/health.c for the plugin's path) and runs it:
#   1. the detector alone: dp_failslow_feed for every device and
#      dp_failslow_step, every interval;
#   2. the plugin's path: dp_peers_feed with device-view records over a
#      fake sysfs of NDEV disks of one model (disks looked up by name,
#      every disk's verdict handed out every interval);
#   3. under callgrind (if valgrind is installed), the instructions per
#      interval of each path, counted only inside the functions the plugin
#      calls (--toggle-collect): setup and the generated samples do not
#      count.
# Memory: bytes asked of malloc at setup (per device), glibc's heap in use,
# and allocations while feeding (the detector makes none).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
ndev=${1:-90}
days=${2:-2}
ivl=${3:-10}
steps=$(awk -v d="$days" -v i="$ivl" 'BEGIN { printf "%d", d * 86400 / i }')
work=$(mktemp -d /tmp/bench-failslow.XXXXXX)
trap 'rm -rf "$work"' EXIT

gcc -O2 -g -std=gnu11 -Wall -Wextra -ffunction-sections -I"$top/src" \
  "$here/bench_failslow.c" "$top/src/failslow.c" "$top/src/peers.c" \
  "$top/src/health.c" "$top/src/blockdev.c" "$top/src/units.c" \
  "$top/src/vocab.c" -lm \
  -Wl,--gc-sections,--wrap=malloc,--wrap=calloc,--wrap=realloc \
  -o "$work/bench_failslow" # gc: health.c's unused parts need the engine

# a sysfs of ndev disks of one model (the names bench_failslow gives them)
awk -v n="$ndev" 'BEGIN { for (i = 0; i < n; i++) printf "sd%c%c\n", 97 + int(i / 26), 97 + i % 26 }' |
  while read -r d; do
    mkdir -p "$work/sys/block/$d/queue" "$work/sys/block/$d/device"
    echo 7814037168 >"$work/sys/block/$d/size"
    echo 1 >"$work/sys/block/$d/queue/rotational"
    echo "BENCH HDD 8TB" >"$work/sys/block/$d/device/model"
  done

echo "== the detector alone: $ndev devices, $days days of $ivl s intervals ($steps)"
"$work/bench_failslow" "$ndev" "$steps" "$ivl"
echo "== the plugin's path (peers.c over a fake sysfs)"
"$work/bench_failslow" --peers "$work/sys" "$ndev" "$steps" "$ivl"

if command -v valgrind >/dev/null; then
  echo "== callgrind: instructions per interval in the code under test only (--toggle-collect)"
  ir() { # ir FUNCTIONS ARGS...: instructions inside FUNCTIONS (comma list)
    local t=() f
    for f in ${1//,/ }; do t+=("--toggle-collect=$f"); done
    shift
    valgrind --tool=callgrind "${t[@]}" --callgrind-out-file="$work/cg.out" \
      "$work/bench_failslow" "$@" >/dev/null 2>"$work/cg.err"
    awk '/^summary:/ { print $2 }' "$work/cg.out"
  }
  cg_steps=$((steps < 8640 ? steps : 8640)) # a day at 10 s: 288 windows
  i=$(ir dp_failslow_feed,dp_failslow_step "$ndev" "$cg_steps" "$ivl")
  awk -v i="$i" -v s="$cg_steps" -v n="$ndev" 'BEGIN {
    printf "detector %.0f instructions per interval (%.0f per device) over %d intervals\n", i / s, i / s / n, s }'
  i=$(ir dp_peers_feed --peers "$work/sys" "$ndev" "$cg_steps" "$ivl")
  awk -v i="$i" -v s="$cg_steps" -v n="$ndev" 'BEGIN {
    printf "peers    %.0f instructions per interval (%.0f per device) over %d intervals\n", i / s, i / s / n, s }'
fi
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), gcc $(gcc -dumpversion)"
