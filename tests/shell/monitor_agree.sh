#!/bin/bash
# monitor_agree.sh - the plugin, `diskprobe watch` and `diskprobe replay`
# judge through one pipeline (src/monitor.c), so they give the same
# verdict on the same rounds. watch probes a loop device (QD1 8 KiB reads)
# until its baseline is armed, then the device is throttled with blkio to a
# tenth of its IOPS and the verdict turns WARNING; `replay --every-round`
# of watch's own JSON output must then give, round for round, the same
# level, rule, detail and slowdown (within 1e-3, relative: replay reads
# the figures as watch printed them) as watch printed. (The plugin is the
# same monitor behind a collectd sink: tests/shell/health_e2e.sh sees its
# WARNING end to end, tests/unit/test_monitor.c its values.)
set -u
. "$(dirname "$0")/lib.sh"
need root loop blkio
ROUNDS=34

dir=$(make_tmpdir)
dev=$(make_loop 128 "$dir") || exit
cg=$(make_cgroup) || exit

out=$dir/watch.json
spawn_in_cgroup "$cg" "$DISKPROBE" watch --count $ROUNDS --interval 1s \
  --duty-cycle 100 --pattern randread --queue-depth 1 --duration 0.2s \
  --format json "$dev" >"$out" 2>"$dir/watch.err"
wpid=$SPAWNED
# armed after 20 rounds (ArmRounds' default): then slow the disk down
wait_until 120 grep -q '"round":23,"verdict"' "$out" ||
  die "watch did not reach round 23 in 120 s: $(tail -3 "$dir/watch.err")"
iops=$(python3 -c 'import json,sys,statistics
v=[json.loads(l)["iops"] for l in open(sys.argv[1]) if "\"probe\"" in l]
print(int(statistics.median(v)))' "$out")
throttle "$cg" "$dev" read_iops $((iops / 10 > 1 ? iops / 10 : 1))
wait "$wpid" || fail "watch exited non-zero: $(tail -3 "$dir/watch.err")"
_unregister_pid "$wpid"
unthrottle "$cg" "$dev" read_iops

"$DISKPROBE" replay --every-round --format json "$out" >"$dir/replay.json" 2>"$dir/replay.err" ||
  die "replay failed: $(cat "$dir/replay.err")"

python3 - "$out" "$dir/replay.json" <<'PY' >"$dir/compare.txt"
import json, sys
# replay reads the figures watch printed (latencies to the nanosecond,
# IOPS to 0.001), so a slowdown agrees to about 1e-4, not to the bit:
# the same when within 1e-3 of each other (relative), not when rounded
# alike (1.11501 and 1.115 round apart)
def key(level, rule, detail, s):
    return (level, rule, detail, s)
def same(a, b):
    if a is None or b is None or a[:3] != b[:3]:
        return a == b
    if a[3] is None or b[3] is None:
        return a[3] == b[3]
    return abs(a[3] - b[3]) <= 1e-3 * max(abs(a[3]), abs(b[3]))
w, r = {}, {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    if "verdict" in d:
        v = d["verdict"]
        w[d["round"]] = key(v["level"], v["rule"], v["detail"], v.get("slowdown"))
for l in open(sys.argv[2]):
    d = json.loads(l)
    if "summary" not in d:
        r[d["round"]] = key(d["level"], d["rule"], d["detail"], d.get("slowdown"))
nsame = sum(1 for k in w if same(r.get(k), w[k]))
levels = sorted({v[0] for v in w.values()})
print(len(w), len(r), nsame, ",".join(levels))
for k in sorted(w):
    if not same(r.get(k), w[k]):
        print("round", k, "watch", w[k], "replay", r.get(k))
PY
read -r nw nr same levels <"$dir/compare.txt"
echo "watch judged $nw rounds, replay $nr; the same verdict in $same; levels seen: $levels"
[ "$nw" = $ROUNDS ] && pass "watch printed a verdict for each of its $ROUNDS rounds" ||
  fail "watch printed $nw verdicts for $ROUNDS rounds"
[ "$nr" = "$nw" ] && [ "$same" = "$nw" ] &&
  pass "replay of watch's rounds gives the same level, rule, detail and slowdown in all $same rounds" ||
  fail "watch and replay differ: $(tail -n +2 "$dir/compare.txt" | head -5)"
[[ $levels == *warning* || $levels == *failure* ]] &&
  pass "the throttle to a tenth of $iops IOPS turned the verdict ($levels)" ||
  fail "no WARNING after the throttle to a tenth of $iops IOPS: levels $levels"
grep -q 'WARNING' "$dir/watch.err" && pass "watch's stderr carries the notice: $(grep -m1 WARNING "$dir/watch.err" | cut -c1-160)" ||
  fail "no WARNING notice on watch's stderr"
finish monitor_agree
