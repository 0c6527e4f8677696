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
             median of 15 rounds, its 99th percentile and maximum (the
             whole-disk tail rule warns at 3.5); and each probe's own
             (p99/p50) / its median, the 12th largest of its last 15
             judged rounds (the one-probe tail rule warns at 3.5), judged
             being a round of 200 I/Os or more ("ops"; without it, a p99
             below the max: a p99 that is the max is the round's slowest
             I/O, 100 I/Os or fewer); with the share of rounds judged
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


def kth_largest(v, n, k):
    """The k-th largest of each window of n consecutive values."""
    return [sorted(v[i - n + 1: i + 1], reverse=True)[k - 1] for i in range(n - 1, len(v))]


def enough_ios(x):
    """A round the one-probe tail rule judges (health.h, DP_HEALTH_TAIL_MIN_OPS)."""
    if x.get("ops") is not None:
        return x["ops"] >= 200
    lat = x["latency_s"]
    return lat.get("max") is None or lat["p99"] < lat["max"]


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
        # the whole-disk rule's figure: the smallest over the probes
        tail = []
        for r in rds:
            t = sorted(r[p]["latency_s"]["p99"] / r[p]["latency_s"]["p50"] / shape[p]
                       for p in PROBES if measured(r, p))
            tail.append(t[0] if len(t) == len(PROBES) else nan)
        m = rolling_median(tail, 15)
        print(f"{name:<18} {'tail (15)':<26} {q(m, .99):>7.2f} {max(m):>8.2f}  {odds(tail, 3.5, 8, 15)}")
        # the one-probe rule's: each probe's 12th largest of 15 judged rounds
        for p in PROBES:
            judged = [r[p]["latency_s"]["p99"] / r[p]["latency_s"]["p50"] / shape[p]
                      for r in rds if measured(r, p) and enough_ios(r[p])]
            if len(judged) < 15:
                print(f"{name:<18} {'tail ' + p + ' (12/15)':<26} not judged: {len(judged)} of {len(rds)} rounds of 200 I/Os")
                continue
            m = kth_largest(judged, 15, 12)
            print(f"{name:<18} {'tail ' + p + ' (12/15)':<26} {q(m, .99):>7.2f} {max(m):>8.2f}  "
                  f"{odds(judged, 3.5, 12, 15)}  ({100 * len(judged) / len(rds):.0f} % judged)")
        spike = [all(not measured(r, p) or c(r, p) >= 4 for p in PROBES) for r in rds]
        most = max(sum(spike[i:i + 10]) for i in range(max(1, len(spike) - 9)))
        print(f"{name:<18} {'rounds all >= 4x, most/10':<26} {sum(spike):>7} {most:>8}  {odds([float(x) for x in spike], 1, 3, 10)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
