#!/bin/bash
# health_replay.sh - the health rules over the recorded series in
# tests/fixtures/health (real rounds of this project's probes on this
# machine; see its README), through contrib/evaluation/health/replay_eval.py --check:
#   ssd-quiet, hdd-like: zero warnings as recorded and with single-round
#     5-20x spikes injected; a step on the QD1 probe warns within 2 rounds
#     (10x), 3 (3x) and 10 (2x) at each of 8 start points;
#   ssd-like (recorded while other tests loaded the same disk: real
#     multi-round slowdowns) is printed for the README's table, not judged.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
fx="$top_srcdir/tests/fixtures/health"
eval_py="$top_srcdir/contrib/evaluation/health/replay_eval.py"
args=()
for n in ssd-quiet hdd-like; do
  [ -f "$fx/$n.jsonl.gz" ] && args+=("$n=$fx/$n.jsonl.gz")
done
[ ${#args[@]} -gt 0 ] || skip "no recorded quiet series in $fx"
if python3 "$eval_py" --check --diskprobe "$DISKPROBE" "${args[@]}"; then
  pass "health rules on ${#args[@]} quiet recorded series: no false warning, every step caught in time"
else
  fail "replay_eval --check failed (table above)"
fi
if [ -f "$fx/ssd-like.jsonl.gz" ]; then
  echo "busy series (not judged):"
  python3 "$eval_py" --diskprobe "$DISKPROBE" "ssd-like=$fx/ssd-like.jsonl.gz:busy" || fail "replay_eval failed on the busy series"
fi
finish health_replay
