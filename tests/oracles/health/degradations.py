#!/usr/bin/python3
"""degradations.py - every way a disk degrades, replayed through the rules.

    degradations.py [--diskprobe PATH] [--check] NAME=SERIES.jsonl[.gz][:busy] ...

Each SERIES is JSON lines of `diskprobe watch --format json` (the default
probe set: randread-qd1, randread-qd32, seqread). For each kind of
degradation below it injects the change from round R on, at 8 positions R
spread over the armed part of the series, replays 40 rounds of it through
the very rules the plugin runs (`diskprobe replay`), and prints: how many
of the placed onsets warned, the rounds from R to the first notification
(median / max), which rule said so first, and how many reached FAILURE.

  disk Fx          every probe F times slower (latency x F, IOPS / F)
  qd32 /F          randread-qd32 only (lost parallelism: an IOPS cap, a
                   degraded RAID, a queue stuck at depth 1)
  seq /2           seqread only (half the bandwidth: a link at half speed)
  p99 x5           every probe's p99 five times further out, p50 and mean
                   unchanged (retries on weak sectors, GC pauses; the
                   max with it)
  qd1 p99 x5       the same on randread-qd1 alone (one probe's tail); not
                   placed on a series whose QD1 rounds have 100 I/Os or
                   fewer (their p99 is the slowest I/O: the rule does not
                   judge such a tail), said in the table; the rule counts
                   12 judged rounds, so where a quarter of the rounds are
                   that small (hdd-like's loaded stretch) it takes up to 18
  every 3rd 10x    every probe 10x slower on every third round (a fault
                   that comes and goes)

A series marked ":busy" was recorded on a disk other tenants loaded for
minutes at a time: onsets are placed only where the recorded series is
quiet (no notification from 40 rounds before R to 40 after).
--check exits 1 unless every placed onset of every case warned within its
bound (the CASES table) on every series not marked busy (a busy series'
figures are printed, not held against the rules). Standard library only;
deterministic.
"""
import statistics
import sys

from replay_eval import load, parse_args, rounds_of, replay, scale, warnings

POSITIONS = 8
AFTER = 40


def probe_only(name, f):
    return lambda rd, j: [scale(x, f) if x["probe"] == name else x for x in rd]


def every_probe(f):
    return lambda rd, j: [scale(x, f) for x in rd]


def tail(f, only=None):
    def inj(rd, j):
        out = []
        for x in rd:
            y = scale(x, 1.0)
            lat = y["latency_s"]
            if lat.get("p99") is not None and only in (None, y["probe"]):
                lat["p99"] *= f
                if lat.get("max") is not None:
                    lat["max"] *= f
            out.append(y)
        return out
    return inj


def few_ios(rds, probe):
    """Most of the probe's rounds have their p99 at their max: 100 I/Os or
    fewer a round (the one-probe tail rule does not judge them)."""
    lat = [x["latency_s"] for rd in rds for x in rd if x["probe"] == probe
           and x["latency_s"].get("p99") and x["latency_s"].get("max")]
    return bool(lat) and sum(l["p99"] >= l["max"] for l in lat) > len(lat) / 2


def intermittent(f, every):
    return lambda rd, j: [scale(x, f) for x in rd] if j % every == 0 else rd


# name, injection, rounds within which every onset must warn
CASES = (
    ("disk 10x", every_probe(10.0), 2),
    ("disk 3x", every_probe(3.0), 3),
    ("disk 2x", every_probe(2.0), 10),
    ("qd32 /10", probe_only("randread-qd32", 10.0), 5),
    ("qd32 /3", probe_only("randread-qd32", 3.0), 5),
    ("seq /2", probe_only("seqread", 2.0), 15),
    ("p99 x5", tail(5.0), 15),
    ("qd1 p99 x5", tail(5.0, "randread-qd1"), 20),
    ("every 3rd 10x", intermittent(10.0, 3), 10),
)


def main(argv):
    dp, check, series = parse_args(argv, __doc__)
    ok = True
    print(f"{'series':<18} {'degradation':<14} {'warned':>8} {'rounds to warn':>15} {'failure':>8}  first rule(s)   (want <= rounds)")
    for name, path, busy in series:
        media = "hdd" if "hdd" in name else "ssd"
        rds = rounds_of(load(path))
        ev = replay(dp, rds, media)
        armed = [e for e in ev if e.get("summary")][0]["armed_at"]
        recorded = [e["round"] for e in warnings(ev)]
        first_round = rds[0][0]["round"]
        span = len(rds) - armed - AFTER - 10
        for case, inject, want in CASES:
            if case == "qd1 p99 x5" and few_ios(rds, "randread-qd1"):
                print(f"{name:<18} {case:<14} not placed: QD1 rounds of 100 I/Os or fewer (p99 = max)")
                continue
            took, rules, fails, placed = [], {}, 0, 0
            for k in range(POSITIONS):
                start = armed + 10 + k * span // POSITIONS
                r0 = first_round + start
                if busy and any(r0 - AFTER <= r <= r0 + AFTER for r in recorded):
                    continue
                placed += 1
                cut = [list(r) for r in rds[: start + AFTER]]
                for j in range(start, len(cut)):
                    cut[j] = inject(cut[j], j - start)
                after = [e for e in replay(dp, cut, media) if not e.get("summary")
                         and e["round"] >= cut[start][0]["round"]]
                w = [e for e in after if e["level"] != "ok" and e["prev"] == "ok"]
                if w:
                    took.append(w[0]["round"] - cut[start][0]["round"] + 1)
                    rules[w[0]["detail"]] = rules.get(w[0]["detail"], 0) + 1
                fails += any(e["level"] == "failure" for e in after)
            med = statistics.median(took) if took else float("nan")
            mx = max(took) if took else float("nan")
            rl = ", ".join(f"{r} {n}" for r, n in sorted(rules.items(), key=lambda x: -x[1]))
            print(f"{name:<18} {case:<14} {len(took):>3} of {placed:<2} {med:>7g} / {mx:<5g} {fails:>5}/{placed:<2}  {rl}   (want <= {want})")
            ok &= busy or (placed > 0 and len(took) == placed and mx <= want)
    if check and not ok:
        print("degradations: FAIL: an onset was not warned in time")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
