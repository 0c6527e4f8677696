#!/bin/bash
# bench_diskstats.sh - what one /proc/diskstats parse + derive pass costs
# with 1,000 devices. A benchmark, not a test: it reports, it never fails on
# a number.
#
#   contrib/evaluation/diskstats/bench_diskstats.sh [PASSES] [KEEP_DIR]
#
# Generates two 20-field snapshots of 1,000 devices (250 disks with three
# partitions each, counters of realistic width, the second snapshot one
# second later with some 32-bit millisecond fields wrapping), builds
# contrib/evaluation/diskstats/bench_diskstats.c against src/diskstats.c with gcc -O2, and prints
# the median cost of one pass (tracker fed a whole snapshot: parse every
# line, find the device, derive every metric), per pass and per device, the
# parse-only and derive-only parts as shares of it, and the CPU share of a
# core at 10 s and 1 s intervals. KEEP_DIR keeps the generated fixture.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
passes=${1:-2000}
keep=${2:-}
work=$(mktemp -d /tmp/bench_diskstats.XXXXXX)
trap 'rm -rf "$work"' EXIT

awk -v seed=42 -v out_a="$work/diskstats-a" -v out_b="$work/diskstats-b" '
function name(i,   s) {          # sda .. sdz, sdaa ..
  s = ""
  do { s = sprintf("%c", 97 + i % 26) s; i = int(i / 26) - 1 } while (i >= 0)
  return "sd" s
}
function big(lo, hi) { return lo + int(rand() * (hi - lo)) }
function line(maj, min, nm, v,   s, k) {
  s = sprintf("%4d %7d %s", maj, min, nm)
  for (k = 1; k <= 17; k++) s = s sprintf(" %.0f", v[k])
  return s
}
BEGIN {
  srand(seed)
  W = 4294967296                  # the ms fields wrap here
  split("4 8 11 15 17", msf, " ")
  for (k in msf) isms[msf[k]] = 1
  for (d = 0; d < 250; d++) {
    for (p = 0; p < 4; p++) {
      if (d * 4 + p >= 1000) break
      nm = p ? name(d) p : name(d)
      maj = 8 + int(d / 16); min = (d % 16) * 16 + p
      # snapshot a: counters months into uptime
      a[1] = big(1e6, 9e8); a[2] = big(0, 1e7); a[3] = a[1] * big(8, 256)
      a[4] = big(0, W); a[5] = big(1e6, 9e8); a[6] = big(0, 1e7)
      a[7] = a[5] * big(8, 256); a[8] = big(0, W); a[9] = big(0, 32)
      a[10] = big(0, W); a[11] = big(0, W); a[12] = big(0, 1e6)
      a[13] = big(0, 1e4); a[14] = a[12] * 2048; a[15] = big(0, W)
      a[16] = p ? 0 : big(0, 1e7); a[17] = p ? 0 : big(0, W)
      # snapshot b, one second later
      r = big(0, 20000); w = big(0, 20000)
      b[1] = a[1] + r; b[2] = a[2] + int(r / 10); b[3] = a[3] + r * 16
      b[4] = a[4] + r / 5; b[5] = a[5] + w; b[6] = a[6] + int(w / 10)
      b[7] = a[7] + w * 64; b[8] = a[8] + w / 3; b[9] = big(0, 32)
      b[10] = a[10] + big(0, 1000); b[11] = a[11] + r / 5 + w / 3
      b[12] = a[12] + big(0, 10); b[13] = a[13]; b[14] = a[14] + (b[12] - a[12]) * 2048
      b[15] = a[15] + big(0, 50); b[16] = a[16] + (p ? 0 : big(0, 100))
      b[17] = a[17] + (p ? 0 : big(0, 200))
      for (k = 1; k <= 17; k++) {
        b[k] = int(b[k])
        if (k in isms) b[k] = b[k] % W
      }
      print line(maj, min, nm, a) > out_a
      print line(maj, min, nm, b) > out_b
    }
  }
}'

n=$(wc -l <"$work/diskstats-b")
echo "fixture: $n devices, $(wc -c <"$work/diskstats-b") bytes per snapshot"
if [ -n "$keep" ]; then
  mkdir -p "$keep" && cp "$work/diskstats-a" "$work/diskstats-b" "$keep/"
  echo "fixture kept in $keep"
fi

gcc -O2 -std=gnu11 -Wall -Wextra -I"$top/src" \
  "$top/contrib/evaluation/diskstats/bench_diskstats.c" "$top/src/diskstats.c" -lm \
  -o "$work/bench_diskstats"
"$work/bench_diskstats" "$work/diskstats-a" "$work/diskstats-b" "$passes"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), gcc $(gcc -dumpversion)"
