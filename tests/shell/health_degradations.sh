#!/bin/bash
# Every way a disk degrades (whole disk, deep-queue IOPS, bandwidth, tail,
# intermittent), injected into recorded real rounds and replayed through
# the health rules: each must warn within its bound on the quiet series.
# The busy recordings' figures are printed beside them.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
fx="$top_srcdir/tests/fixtures/health"
python3 "$top_srcdir/contrib/evaluation/health/degradations.py" --check \
  --diskprobe "$DISKPROBE" \
  ssd-quiet="$fx/ssd-quiet.jsonl.gz" hdd-like="$fx/hdd-like.jsonl.gz" \
  busy-vda-file="$fx/busy-vda-file.jsonl.gz:busy" \
  busy-loop-device="$fx/busy-loop-device.jsonl.gz:busy" ||
  fail "an injected degradation was not warned in time (table above)"
pass "every injected degradation warned in time on the quiet series"
finish health_degradations
