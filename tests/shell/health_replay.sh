#!/bin/bash
# health_replay.sh - the health rules over the recorded healthy series in
# tests/fixtures/health (real rounds of this project's probes, see its
# README): zero warnings as recorded and with single-round 5-20x spikes
# injected; a step on the QD1 probe warns within 2 rounds (10x), 3 (3x)
# and 10 (2x) at every one of 8 start points -- contrib/health/replay-eval.py
# --check, the table the README shows.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
fx="$top_srcdir/tests/fixtures/health"
set -- "$fx"/*.jsonl.gz
[ -f "$1" ] || skip "no recorded series in $fx"
args=()
for f; do args+=("$(basename "$f" .jsonl.gz)=$f"); done
if python3 "$top_srcdir/contrib/health/replay-eval.py" --check --diskprobe "$DISKPROBE" "${args[@]}"; then
  pass "health rules on ${#args[@]} recorded series: no false warning, every step caught in time"
else
  fail "replay-eval --check failed (table above)"
fi
finish health_replay
