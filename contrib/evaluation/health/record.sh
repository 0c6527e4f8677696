#!/bin/bash
# record.sh - records healthy series for the health study, side by side:
# a probe file on the root filesystem and a loop device (--direct-io=on)
# over a file on the same disk, each with `diskprobe watch --format json`
# (the default probe set), while a neighbour loads the disk now and then.
#
#   bash contrib/evaluation/health/record.sh OUTDIR [ROUNDS] [INTERVAL_S]
#
# Defaults: 360 rounds, 5 s apart (30 minutes). The neighbour, unless
# NEIGHBOUR=0, sleeps 60-240 s, then runs fio for 15-60 s (random 4-64 KiB
# reads and writes at depth 4-32 into its own 512 MiB file), again and
# again, from a fixed seed: what a shared disk's other tenants do. Its
# bursts are written to OUTDIR/neighbour.txt (start, end, job) so a study
# can tell a real busy stretch from a rule's false alarm.
#
# Writes OUTDIR/vda-file.jsonl.gz and OUTDIR/loop-device.jsonl.gz; needs
# root (losetup) and fio. Everything it creates under /var/tmp/dp-record is
# removed at the end.
set -euo pipefail
out=${1:?usage: record.sh OUTDIR [ROUNDS] [INTERVAL_S]}
rounds=${2:-360}
interval=${3:-5}
top=$(cd "$(dirname "$0")/../../.." && pwd)
dp=${DISKPROBE:-$top/src/cli/diskprobe}
work=/var/tmp/dp-record
mkdir -p "$out" "$work/file"
loop=""
npid=""
cleanup() {
  [ -n "$npid" ] && kill "$npid" 2>/dev/null
  pkill -f "fio --name=dp-neighbour" 2>/dev/null || true
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

dd if=/dev/urandom of="$work/loop.img" bs=1M count=512 status=none
loop=$(losetup --find --show --direct-io=on "$work/loop.img")

neighbour() {
  local seed=${SEED:-29} end=$(($(date +%s) + rounds * interval))
  RANDOM=$seed
  while [ "$(date +%s)" -lt "$end" ]; do
    sleep $((60 + RANDOM % 180))
    local secs=$((15 + RANDOM % 45)) qd=$((4 << (RANDOM % 4)))
    local bs=$((4 << (RANDOM % 5)))k
    echo "$(date +%s) start ${secs}s bs=$bs iodepth=$qd" >>"$out/neighbour.txt"
    fio --name=dp-neighbour --filename="$work/neighbour.dat" --size=512M \
      --rw=randrw --bs="$bs" --iodepth="$qd" --ioengine=libaio --direct=1 \
      --time_based --runtime="$secs" --output=/dev/null >/dev/null 2>&1 || true
    echo "$(date +%s) end" >>"$out/neighbour.txt"
  done
}
: >"$out/neighbour.txt"
if [ "${NEIGHBOUR:-1}" != 0 ]; then
  neighbour &
  npid=$!
fi

watch() { # watch TARGET NAME
  "$dp" watch --format json --interval "${interval}s" --duty-cycle 20 \
    --count "$rounds" "$1" 2>"$out/$2.stderr" | gzip >"$out/$2.jsonl.gz"
}
watch "$work/file" vda-file &
p1=$!
watch "$loop" loop-device &
p2=$!
wait "$p1" "$p2"
echo "record.sh: $rounds rounds each in $out"
