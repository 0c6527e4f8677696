#!/usr/bin/python3
"""rule_noise.py - the recorded noise each per-probe rule's level was chosen from.

    rule_noise.py NAME=SERIES.jsonl[.gz] ...

For each recorded series of `diskprobe watch --format json` (the default
probe set) it prints, against each probe's median over the whole series:

  capacity   r = med7 c / max(1, med7 c_first), c = median IOPS / IOPS,
             med7 the median of 7 rounds: its 99th percentile and maximum
             per deeper probe (the capacity rule warns at 2 for the deep
             random probe, 1.75 for the sequential one)
  tail       the smallest over the probes of (p99/p50) / its median: the
             median of 15 rounds, its 99th percentile and maximum (the tail
             rule warns at 3.5); and, for comparison, the same of the
             second smallest and of the first probe's alone (figures that
             would see a tail fattened on one probe only; their noise is why
             the rule keeps the smallest)
  spikes     rounds where every probe's p50 or IOPS is >= 4x off (what the
             intermittent rule counts) and the most of them in any 10
             consecutive rounds (it warns at 3)

and for each the per-round exceedance p of its level and the chance of the
rule's k-of-n on independent rounds, C(n,k) p^k (a false page per
target-year at a 60 s interval is 1.9e-6 a round); rounds of a busy disk
are not independent, which is why the maximum over real series is shown
too. Whole-series medians stand in for the learned baselines (the rules learn
only normal-looking rounds, so their baselines sit a little lower on a busy
series). Standard library only.
"""
import math
import statistics
import sys

from replay_eval import load, rounds_of

PROBES = ("randread-qd1", "randread-qd32", "seqread")


def rolling_median(v, n):
    out = []
    for i in range(n - 1, len(v)):
        w = [x for x in v[i - n + 1: i + 1] if x == x]
        if len(w) >= n // 2 + 1:
            out.append(statistics.median(w))
    return out


def q(v, f):
    v = sorted(v)
    return v[min(len(v) - 1, int(f * len(v)))] if v else float("nan")


def measured(r, p):
    return p in r and (r[p].get("iops") or 0) > 0


def odds(per_round, level, k, n):
    v = [x for x in per_round if x == x]
    p = sum(x >= level for x in v) / len(v) if v else float("nan")
    return f"{p:>8.4f} {math.comb(n, k) * p ** k:>10.2g}"


def main(argv):
    if not argv:
        sys.exit(__doc__)
    print(f"{'series':<18} {'statistic':<26} {'p99':>7} {'max':>8}  {'p/round':>8} {'C(n,k)p^k':>10}")
    for a in argv:
        name, path = a.split("=", 1)
        rds = [{x["probe"]: x for x in rd} for rd in rounds_of(load(path))]
        iops = {p: statistics.median([r[p]["iops"] for r in rds if measured(r, p)]) for p in PROBES}
        shape = {p: statistics.median([r[p]["latency_s"]["p99"] / r[p]["latency_s"]["p50"]
                                       for r in rds if measured(r, p)]) for p in PROBES}
        nan = float("nan")

        def c(r, p):
            return iops[p] / r[p]["iops"] if measured(r, p) else nan
        c0 = [c(r, PROBES[0]) for r in rds]
        m0 = rolling_median(c0, 7)
        for p, level in zip(PROBES[1:], (2.0, 1.75)):
            ck = [c(r, p) for r in rds]
            m = [a / max(1.0, b) for a, b in zip(rolling_median(ck, 7), m0)]
            rel = [a / max(1.0, b) for a, b in zip(ck, c0)]
            print(f"{name:<18} {'capacity ' + p + ' (7)':<26} {q(m, .99):>7.2f} {max(m):>8.2f}  {odds(rel, level, 4, 7)}")
        # the rule's figure (the smallest over the probes) and the two
        # alternatives that would see a tail fattened on one probe only:
        # the second smallest and the first probe's own
        figures = {"tail (15)": lambda t: t[0], "tail 2nd smallest (15)": lambda t: t[1]}
        for label, pick in figures.items():
            tail = []
            for r in rds:
                t = sorted(r[p]["latency_s"]["p99"] / r[p]["latency_s"]["p50"] / shape[p]
                           for p in PROBES if measured(r, p))
                tail.append(pick(t) if len(t) == len(PROBES) else nan)
            m = rolling_median(tail, 15)
            print(f"{name:<18} {label:<26} {q(m, .99):>7.2f} {max(m):>8.2f}  {odds(tail, 3.5, 8, 15)}")
        p0 = PROBES[0]
        tail = [r[p0]["latency_s"]["p99"] / r[p0]["latency_s"]["p50"] / shape[p0]
                if measured(r, p0) else nan for r in rds]
        m = rolling_median(tail, 15)
        print(f"{name:<18} {'tail ' + p0 + ' (15)':<26} {q(m, .99):>7.2f} {max(m):>8.2f}  {odds(tail, 3.5, 8, 15)}")
        spike = [all(not measured(r, p) or c(r, p) >= 4 for p in PROBES) for r in rds]
        most = max(sum(spike[i:i + 10]) for i in range(max(1, len(spike) - 9)))
        print(f"{name:<18} {'rounds all >= 4x, most/10':<26} {sum(spike):>7} {most:>8}  {odds([float(x) for x in spike], 1, 3, 10)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
