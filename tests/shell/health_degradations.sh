#!/bin/bash
# Every way a disk degrades (whole disk, deep-queue IOPS, bandwidth, tail,
# intermittent), injected into recorded real rounds and replayed through
# the health rules: each must warn within its bound on the quiet series.
# The busy recordings' figures are printed beside them. The four series
# replay at once (one degradations.py each, all CPU: the machine's cores
# share them), their tables printed in order, under one header.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
fx="$top_srcdir/tests/fixtures/health"
d=$(make_tmpdir)
series=(ssd-quiet="$fx/ssd-quiet.jsonl.gz" hdd-like="$fx/hdd-like.jsonl.gz"
  busy-vda-file="$fx/busy-vda-file.jsonl.gz:busy"
  busy-loop-device="$fx/busy-loop-device.jsonl.gz:busy")
pids=()
for i in "${!series[@]}"; do
  python3 "$top_srcdir/tests/oracles/health/degradations.py" --check \
    --diskprobe "$DISKPROBE" "${series[$i]}" >"$d/table$i" 2>&1 &
  pids+=($!)
done
bad=0
for i in "${!series[@]}"; do
  wait "${pids[$i]}" || bad=1
  if [ "$i" = 0 ]; then cat "$d/table$i"; else tail -n +2 "$d/table$i"; fi
done
[ $bad = 0 ] || fail "an injected degradation was not warned in time (table above)"
[ $bad = 0 ] && pass "every injected degradation warned in time on the quiet series"
finish health_degradations
