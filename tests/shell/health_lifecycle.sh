#!/bin/bash
# A fault's whole life through the health rules: every kind of
# degradation injected into recorded real rounds for 30 rounds, then the
# recorded disk healthy again. Each must warn within its bound, send no
# OKAY while it is on and none on a round still 1.3x slow or more, and
# send its OKAY soon after the recovery with nothing after it
# (tests/oracles/health/lifecycle.py --check, 8 onsets per case on
# the two quiet tuning series, which replay at once).
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
fx="$top_srcdir/tests/fixtures/health"
d=$(make_tmpdir)
series=(ssd-quiet="$fx/ssd-quiet.jsonl.gz" hdd-like="$fx/hdd-like.jsonl.gz")
pids=()
for i in "${!series[@]}"; do
  python3 "$top_srcdir/tests/oracles/health/lifecycle.py" --check \
    --onsets 8 --diskprobe "$DISKPROBE" "${series[$i]}" >"$d/table$i" 2>&1 &
  pids+=($!)
done
bad=0
for i in "${!series[@]}"; do
  wait "${pids[$i]}" || bad=1
  cat "$d/table$i"
done
[ $bad = 0 ] || fail "a fault was missed, cleared while on, or not cleared after its recovery (tables above)"
[ $bad = 0 ] && pass "every fault warned in time, held while on, and cleared after its recovery"
finish health_lifecycle
