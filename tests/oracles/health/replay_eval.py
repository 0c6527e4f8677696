#!/usr/bin/python3
"""replay_eval.py - how the health rules do on recorded healthy series.

    replay_eval.py [--diskprobe PATH] [--check] NAME=SERIES.jsonl[.gz][:busy] ...

Each SERIES is JSON lines of `diskprobe watch --format json` recorded on a
healthy disk (tests/fixtures/health/). For each one it runs the very rules
the plugin runs, through `diskprobe replay`, and prints:

  healthy      the series as recorded: warnings and failures (want 0)
  spikes       the same with single-round spikes of 5-20x injected into
               every probe of one round in 25 (what a busy neighbour
               causes), never two rounds in a row: warnings (want 0)
  step Fx      from a round R on, the first probe (randread-qd1) F times
               slower -- every latency statistic times F, IOPS over F --
               at 8 values of R spread over the armed part of the series:
               rounds from R to the first WARNING (median, max) and how
               many of the 8 warned at all

--check exits 1 unless healthy and spikes have 0 warnings and the steps
warn within 2 (10x), 3 (3x) and 10 (2x) rounds at every R.

A series marked ":busy" was recorded on a disk other tenants loaded for
minutes at a time (real multi-round slowdowns, not a healthy disk): its
warnings as recorded are printed, not held against the rules; --check
then requires that the spikes add no warning the recorded series does not
already have (none more than 2 rounds from one of them), and the steps
are placed only where the recorded series is quiet (no warning from 40
rounds before R to 40 after), at least 6 of the 8 positions.
Standard library only; deterministic (fixed random seed).
"""
import gzip
import json
import random
import statistics
import subprocess
import sys

STEPS = ((10.0, 2), (3.0, 3), (2.0, 10))
POSITIONS = 8
SPIKE_EVERY = 25


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return [json.loads(l) for l in f if l.strip()]


def rounds_of(recs):
    out, cur = [], None
    for r in recs:
        if cur is None or r["round"] != cur[0]["round"]:
            cur = []
            out.append(cur)
        cur.append(r)
    return out


def scale(rec, f):
    r = json.loads(json.dumps(rec))
    for k in ("p50", "mean", "p99", "max"):
        if r["latency_s"].get(k) is not None:
            r["latency_s"][k] *= f
    r["iops"] /= f
    return r


def replay(dp, rounds, media):
    text = "".join(json.dumps(x, separators=(",", ":")) + "\n" for rd in rounds for x in rd)
    p = subprocess.run([dp, "replay", "--format", "json", "--media", media, "-"],
                       input=text, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"replay_eval: diskprobe replay failed: {p.stderr.strip()}")
    return [json.loads(l) for l in p.stdout.splitlines()]


def warnings(events):
    return [e for e in events if not e.get("summary") and e["level"] != "ok" and e["prev"] == "ok"]


def parse_args(argv, usage):
    """[--diskprobe PATH] [--check] NAME=SERIES[:busy] ... -> (dp, check, series)"""
    dp, check, series = "src/cli/diskprobe", False, []
    args = iter(argv)
    for a in args:
        if a == "--diskprobe":
            dp = next(args)
        elif a == "--check":
            check = True
        elif "=" in a:
            name, path = a.split("=", 1)
            busy = path.endswith(":busy")
            series.append((name, path[:-5] if busy else path, busy))
        else:
            sys.exit(usage)
    if not series:
        sys.exit(usage)
    return dp, check, series


def main(argv):
    dp, check, series = parse_args(argv, __doc__)
    ok = True
    print(f"{'series':<10} {'case':<9} {'rounds':>7} {'warnings':>9} {'failures':>9}  rounds to first warning (median / max / warned of placed)")
    for name, path, busy in series:
        media = "hdd" if "hdd" in name else "ssd"
        rds = rounds_of(load(path))
        ev = replay(dp, rds, media)
        summ = [e for e in ev if e.get("summary")][0]
        w = warnings(ev)
        recorded = [e["round"] for e in w]
        print(f"{name:<10} {'healthy':<9} {summ['rounds']:>7} {len(w):>9} {summ['failures']:>9}"
              + ("  (busy: real slowdowns of the shared disk, listed)" if busy else ""))
        for e in w[:8]:
            print(f"{'':<21}round {e['round']}: {e['message']}")
        ok &= busy or len(w) == 0
        armed = summ["armed_at"]
        first_round = rds[0][0]["round"]

        rng = random.Random(7)
        spiked, i = [list(r) for r in rds], armed + 2
        nspikes = 0
        while i < len(spiked):
            f = rng.uniform(5, 20)
            spiked[i] = [scale(x, f) for x in spiked[i]]
            nspikes += 1
            i += rng.randint(SPIKE_EVERY - 10, SPIKE_EVERY + 10)
        ev = replay(dp, spiked, media)
        w = warnings(ev)
        fails = [e for e in ev if e.get("summary")][0]["failures"]
        new = [e for e in w if not any(abs(e["round"] - r) <= 2 for r in recorded)]
        print(f"{name:<10} {'spikes':<9} {len(spiked):>7} {len(w):>9} {fails:>9}  ({nspikes} single-round spikes of 5-20x; {len(new)} warnings the recorded series does not have)")
        for e in new[:5]:
            print(f"{'':<21}round {e['round']}: {e['message']}")
        ok &= len(new) == 0 if busy else len(w) == 0

        first_probe = rds[0][0]["probe"]
        span = len(rds) - armed - 40
        for f, within in STEPS:
            took, placed = [], 0
            for k in range(POSITIONS):
                start = armed + 10 + k * span // POSITIONS
                r0 = first_round + start
                if busy and any(r0 - 40 <= r <= r0 + 40 for r in recorded):
                    continue
                placed += 1
                cut = [list(r) for r in rds[: start + 40]]
                for j in range(start, len(cut)):
                    cut[j] = [scale(x, f) if x["probe"] == first_probe else x for x in cut[j]]
                w = [e for e in warnings(replay(dp, cut, media)) if e["round"] >= cut[start][0]["round"]]
                if w:
                    took.append(w[0]["round"] - cut[start][0]["round"] + 1)
            med = statistics.median(took) if took else float("nan")
            mx = max(took) if took else float("nan")
            print(f"{name:<10} {'step %gx' % f:<9} {'':>7} {'':>9} {'':>9}  {med:g} / {mx:g} / {len(took)} of {placed} placed   (want <= {within})")
            ok &= placed >= (6 if busy else POSITIONS) and len(took) == placed and mx <= within
    if check and not ok:
        print("replay_eval: FAIL: a healthy series warned, or a step was not caught in time")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
