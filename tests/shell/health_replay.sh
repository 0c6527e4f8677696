#!/bin/bash
# health_replay.sh - the health rules over the recorded series in
# tests/fixtures/health (real rounds of this project's probes on this
# machine; see its README), through tests/oracles/health/replay_eval.py --check:
#   ssd-quiet, hdd-like: zero warnings as recorded and with single-round
#     5-20x spikes injected; a step on the QD1 probe warns within 2 rounds
#     (10x), 3 (3x) and 10 (2x) at each of 8 start points;
#   ssd-like (recorded while other tests loaded the same disk: real
#     multi-round slowdowns) is printed for the README's table, not judged.
# First, replay's reader: the same rounds pretty-printed over many lines
# (as `jq .` prints them) or with keys reordered and spaced (Python's
# json.dumps) give the same output as watch's compact lines; impossible
# values (-1, "nan", 1e400), a line over 1 MiB and /dev/zero are refused
# with the file and line, fast.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
fx="$top_srcdir/tests/fixtures/health"
d=$(make_tmpdir)

zcat "$fx/ssd-like.jsonl.gz" | head -n 1200 >"$d/compact.jsonl"
python3 - "$d/compact.jsonl" "$d/pretty.json" "$d/reordered.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2], "w") as f:  # jq's layout: two-space indent, one key a line
    for o in rows:
        f.write(json.dumps(o, indent=2) + "\n")
with open(sys.argv[3], "w") as f:  # every object's keys reversed, ", " and ": "
    def rev(o):
        return {k: rev(v) for k, v in reversed(list(o.items()))} if isinstance(o, dict) else o
    for o in rows:
        f.write(json.dumps(rev(o)) + "\n")
PY
"$DISKPROBE" replay --every-round --format json "$d/compact.jsonl" >"$d/compact.out" 2>"$d/err" ||
  fail "replay of compact lines: $(cat "$d/err")"
for v in pretty.json reordered.jsonl; do
  if "$DISKPROBE" replay --every-round --format json "$d/$v" >"$d/$v.out" 2>"$d/err" &&
    [ -s "$d/compact.out" ] && cmp -s "$d/compact.out" "$d/$v.out"; then
    pass "replay of $v: the same $(wc -l <"$d/$v.out") lines as of the compact input"
  else
    fail "replay of $v differs from the compact input: $(cat "$d/err"; diff "$d/compact.out" "$d/$v.out" | head -3)"
  fi
done
if command -v jq >/dev/null; then
  jq . "$d/compact.jsonl" >"$d/jq.json" && "$DISKPROBE" replay --every-round --format json "$d/jq.json" >"$d/jq.out" 2>"$d/err" &&
    cmp -s "$d/compact.out" "$d/jq.out" && pass "replay of \`jq .\`'s output: the same" ||
    fail "replay of jq's output: $(cat "$d/err")"
fi

refused() { # refused TEXT FILE: exit 2, one stderr line with TEXT, no output
  local text=$1 rc
  shift
  timeout 20 "$DISKPROBE" replay "$@" >"$d/out" 2>"$d/err"
  rc=$?
  if [ $rc = 2 ] && [ ! -s "$d/out" ] && grep -qF -- "$text" "$d/err" && [ "$(wc -l <"$d/err")" = 1 ]; then
    pass "refused: $(cat "$d/err")"
  else
    fail "replay $*: expected exit 2 and '$text', got $rc: $(head -c 300 "$d/err")"
  fi
}
# line 5: the second round's first probe line, one figure spoiled
spoil() { # spoil NAME SED: the compact input's first 10 lines, line 5 edited
  head -n 10 "$d/compact.jsonl" | sed "5$2" >"$d/$1"
}
spoil iops.jsonl 's/"iops":[0-9.e+-]*/"iops":-1/'
refused "iops.jsonl: line 5: \"iops\": want a number from 0 to 10000000000 or null, not -1" "$d/iops.jsonl"
spoil p50.jsonl 's/"p50":[0-9.e+-]*/"p50":"nan"/'
refused "p50.jsonl: line 5: \"latency_s.p50\": want a number from 0 to 86400 or null, not \"nan\"" "$d/p50.jsonl"
spoil mean.jsonl 's/"mean":[0-9.e+-]*/"mean":90000/'
refused "mean.jsonl: line 5: \"latency_s.mean\": want a number from 0 to 86400" "$d/mean.jsonl"
spoil huge.jsonl 's/"iops":[0-9.e+-]*/"iops":1e400/'
refused "huge.jsonl: line 5: not a JSON object: real number overflow" "$d/huge.jsonl"
spoil stalled.jsonl 's/"stalled":false/"stalled":"no"/'
refused "stalled.jsonl: line 5: \"stalled\": want true or false" "$d/stalled.jsonl"
{ head -n 4 "$d/compact.jsonl"; head -c $((2 << 20)) /dev/zero | tr '\0' ' '; echo; } >"$d/long.jsonl"
refused "long.jsonl: line 5: longer than 1048576 bytes" "$d/long.jsonl"
refused "/dev/zero: line 1: longer than 1048576 bytes" /dev/zero
eval_py="$top_srcdir/tests/oracles/health/replay_eval.py"
# The recorded series replay at once (one replay_eval.py each, all CPU: the
# machine's cores share them); their tables are printed in order, the quiet
# ones under one header.
quiet=() pids=()
for n in ssd-quiet hdd-like; do
  [ -f "$fx/$n.jsonl.gz" ] || continue
  python3 "$eval_py" --check --diskprobe "$DISKPROBE" "$n=$fx/$n.jsonl.gz" >"$d/eval-$n" 2>&1 &
  quiet+=("$n") pids+=($!)
done
[ ${#quiet[@]} -gt 0 ] || skip "no recorded quiet series in $fx"
busy=
if [ -f "$fx/ssd-like.jsonl.gz" ]; then
  python3 "$eval_py" --diskprobe "$DISKPROBE" "ssd-like=$fx/ssd-like.jsonl.gz:busy" >"$d/eval-busy" 2>&1 &
  busy=$!
fi
bad=0
for i in "${!quiet[@]}"; do
  wait "${pids[$i]}" || bad=1
  if [ "$i" = 0 ]; then cat "$d/eval-${quiet[$i]}"; else tail -n +2 "$d/eval-${quiet[$i]}"; fi
done
if [ $bad = 0 ]; then
  pass "health rules on ${#quiet[@]} quiet recorded series: no false warning, every step caught in time"
else
  fail "replay_eval --check failed (table above)"
fi
if [ -n "$busy" ]; then
  echo "busy series (not judged):"
  wait "$busy" || fail "replay_eval failed on the busy series"
  cat "$d/eval-busy"
fi
finish health_replay
