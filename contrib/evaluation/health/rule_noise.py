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
  recurring  rounds with the round's slowdown S >= 1.6 (S as health.h
             computes it, against whole-series medians) and the most of
             them in any 20 consecutive rounds (the recurring rule warns
             at 8 of 20)
  throttled  rounds where the first probe's bursty ratio (min of mean
             latency and IOPS against their medians) over its p50 ratio is
             >= 1.6 with its p50 ratio below 1.4, and the rounds where 5 of
             the last 6 are (the throttled rule warns there)
  false clear
             for a fault still on, how often its evidence reads as
             recovered: the deep probe's IOPS loss under QD32 /3 below
             2 / 1.3 (the capacity rule clears after 2 such rounds in a
             row), the sequential probe's under /2 below 1.75 / 1.3 (4 in
             a row), and S under a whole-disk 1.5x and 2x below 1.3 (the
             target's OKAY needs 3 in a row): per round and the longest
             run

and for each the per-round exceedance p of its level and the chance of the
rule's k-of-n on independent rounds, C(n,k) p^k (a false page per
target-year at a 60 s interval is 1.9e-6 a round); rounds of a busy disk
are not independent, which is why the maximum over real series is shown
too. Whole-series medians stand in for the learned baselines (the rules learn
only normal-looking rounds, so their baselines sit a little lower on a busy
series). Standard library only.
"""
import math
import os
import statistics
import sys

# replay_eval.py is the tests' oracle (tests/oracles/health); this study reads
# the recorded series through it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "oracles", "health"))
from replay_eval import load, rounds_of  # noqa: E402

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
        lifecycle_noise(name, rds)
    return 0


def ratios(r, p, med, f=1.0):
    """(u, b) of probe p in round r against the medians, the whole disk f
    times slower; NaN when not measured."""
    if not measured(r, p) or not r[p]["latency_s"].get("p50"):
        return float("nan"), float("nan")
    x = r[p]
    u = f * x["latency_s"]["p50"] / med[p]["p50"]
    b = min(f * x["latency_s"]["mean"] / med[p]["mean"], f * med[p]["iops"] / x["iops"])
    return u, b


def round_s(r, med, f=1.0):
    """The round's slowdown S as health.h computes it (burst_scale 1.5)."""
    ub = [ratios(r, p, med, f) for p in PROBES]
    u = [x[0] for x in ub if x[0] == x[0]]
    b = sorted((x[1] for x in ub if x[1] == x[1]), reverse=True)
    if not u:
        return float("nan")
    second = sorted(u, reverse=True)[1] if len(u) > 1 else u[0]
    uu = max(ub[0][0], second) if ub[0][0] == ub[0][0] else second
    return max(uu, (b[1] if len(b) > 1 else b[0]) / 1.5)


def longest(flags):
    best = run = 0
    for x in flags:
        run = run + 1 if x else 0
        best = max(best, run)
    return best


def lifecycle_noise(name, rds):
    """The figures of the rules that judge a fault's whole life."""
    med = {}
    for p in PROBES:
        rs = [r[p] for r in rds if measured(r, p) and r[p]["latency_s"].get("p50")]
        med[p] = {"p50": statistics.median(x["latency_s"]["p50"] for x in rs),
                  "mean": statistics.median(x["latency_s"]["mean"] for x in rs),
                  "iops": statistics.median(x["iops"] for x in rs)}
    s = [round_s(r, med) for r in rds]
    hi = [x >= 1.6 for x in s]
    most = max(sum(hi[i:i + 20]) for i in range(max(1, len(hi) - 19)))
    print(f"{name:<18} {'recurring S>=1.6, most/20':<26} {sum(hi):>7} {most:>8}  {odds([float(x) for x in hi], 1, 8, 20)}")
    thr = []
    for r in rds:
        u, b = ratios(r, PROBES[0], med)
        thr.append(b / u >= 1.6 and not u >= 1.4)
    p = sum(thr) / len(thr)
    five = sum(1 for i in range(5, len(thr)) if thr[i] and sum(thr[i - 5:i + 1]) >= 5)
    print(f"{name:<18} {'throttled QD1, 5 of 6':<26} {sum(thr):>7} {five:>8}  "
          f"{p:>8.4f} {math.comb(6, 5) * p ** 5:>10.2g}")
    for p, f, level, n in ((PROBES[1], 3.0, 2.0, 2), (PROBES[2], 2.0, 1.75, 4)):
        cl = [f * med[p]["iops"] / r[p]["iops"] < level / 1.3 for r in rds if measured(r, p)]
        pr = sum(cl) / len(cl)
        print(f"{name:<18} {'false clear ' + ('qd32' if 'qd32' in p else 'seq') + ' /%g' % f:<26} {sum(cl):>7} {longest(cl):>8}  "
              f"{pr:>8.4f} {pr ** n:>10.2g}  ({n} in a row clear it)")
    for f in (1.5, 2.0):
        cl = [round_s(r, med, f) < 1.3 for r in rds]
        pr = sum(cl) / len(cl)
        print(f"{name:<18} {'false clear disk %gx' % f:<26} {sum(cl):>7} {longest(cl):>8}  "
              f"{pr:>8.4f} {pr ** 3:>10.2g}  (3 in a row make the OKAY)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
