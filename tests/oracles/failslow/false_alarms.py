#!/usr/bin/env python3
"""false_alarms.py - the fail-slow rules' false-alarm arithmetic, from the
tuning clusters of the public Perseus subset (A and J; C is held out and
refused).

Runs `diskprobe failslow --trace` over every host and takes, for each drive
and each rule, the largest figure the rule compared with its threshold over
the whole record (the detector's own numbers, not a re-implementation):

  fast        the 2-hour score                         (>= flag_ratio)
  persistent  the least 3-hour block median of 12 h    (>= persist_ratio)
  day-long    the least 6-hour block median of 24 h    (>= day_ratio)

(the persistent rules only where the 2-hour score was >= long_ratio, as
the detector requires). The thresholds are the ones the detector ran with,
from the trace's conf line: its defaults, or the flags passed after --. Over the unlabelled drives that is the null: how
close healthy drives come to each threshold. It prints, per rule, the
healthy drives' largest figure and the margin to the threshold, the
labelled drives' smallest (the separation), and an extrapolation: the
upper tail of the healthy drives' figures, fitted as log S(x) = a + b x on
the top --tail of drives (S the fraction of drives whose largest figure is
at least x), read at the threshold and divided by the hours of samples in
which the rule's figure existed, gives a rate of false flags per drive per
hour of monitoring; times 8,760 per drive-year. An extrapolation beyond the
data: its order of magnitude is the result, not its digits.

  python3 tests/oracles/failslow/false_alarms.py --diskprobe DISKPROBE \\
      --data /tmp/kratos/data [--clusters A,J] [--tail 0.1] \\
      [--grid day-long:1.08:1.20] [-- extra diskprobe failslow flags]

--grid RULE:LO:HI also prints the extrapolated rate for thresholds LO..HI
in steps of 0.01 (the choice of a threshold, visible). Standard library
only. Exit 0 after printing; 2 on bad usage or a failed run.
"""
import concurrent.futures
import math
import os
import sys

import fsrun

# trace fields after "trace HOST DISK": TS WINDOW SCORE LONG Z PERSIST DAY ..
F_TS, F_SCORE, F_PERSIST, F_DAY = 0, 2, 5, 6
# each rule: its figure's field and the detector parameter it is compared
# with (read from the trace's "conf HOST key=value ..." line: the values
# the detector ran with, defaults or flags)
RULES = [("fast", F_SCORE, "flag_ratio"),
         ("persistent", F_PERSIST, "persist_ratio"),
         ("day-long", F_DAY, "day_ratio")]


def trace_host(diskprobe, hostdir, extra):
    out = fsrun.failslow(diskprobe, ["--trace"] + extra, hostdir)
    best, hours, last_ts, step, conf = {}, {}, {}, None, None
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == "conf":
            conf = {k: float(v) for k, v in
                    (kv.split("=", 1) for kv in f[2:])}
            continue
        if len(f) < 12 or f[0] != "trace":
            continue
        if conf is None:
            raise RuntimeError("%s: a trace line before the conf line"
                               % hostdir)
        disk = f[2]
        v = [float(x) for x in f[3:10]]
        ts = v[F_TS]
        if disk in last_ts and ts > last_ts[disk]:
            dt = ts - last_ts[disk]
            step = dt if step is None else min(step, dt)
        last_ts[disk] = ts
        b = best.setdefault(disk, [-math.inf] * len(RULES))
        n = hours.setdefault(disk, [0] * len(RULES))
        for k, (_, field, _) in enumerate(RULES):
            x = v[field]
            if math.isnan(x):
                continue
            n[k] += 1  # an hour in which the rule could fire
            if field != F_SCORE and not v[F_SCORE] >= conf["long_ratio"]:
                continue
            b[k] = max(b[k], x)
    if conf is None:
        raise RuntimeError("%s: no conf line in the trace" % hostdir)
    return best, hours, step or 300.0, conf


def fit_tail(values, frac):
    """a, b of log S(x) = a + b x over the top frac of values (b < 0)."""
    v = sorted(values, reverse=True)
    n = len(v)
    top = max(5, int(math.ceil(frac * n)))
    pts = [(v[i], math.log((i + 1) / n)) for i in range(min(top, n))]
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx <= 0:
        return None
    b = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx
    return my - b * mx, b


def main():
    ap = fsrun.parser(__doc__, "A,J")
    ap.add_argument("--tail", type=float, default=0.1)
    ap.add_argument("--grid", action="append", default=[])
    a = ap.parse_args()
    clusters = fsrun.tuning_clusters(a.clusters, "false_alarms")
    if clusters is None:
        return 2
    grids = []
    for g in a.grid:
        try:
            rule, lo, hi = g.split(":")
            grids.append(([r[0] for r in RULES].index(rule), float(lo),
                          float(hi)))
        except ValueError:
            print("false_alarms: --grid RULE:LO:HI, RULE one of %s" %
                  ", ".join(r[0] for r in RULES), file=sys.stderr)
            return 2
    try:
        labels = fsrun.labelled(a.data)
        hosts = fsrun.hosts(a.data, clusters)
    except (OSError, KeyError) as e:
        print("false_alarms: %s" % e, file=sys.stderr)
        return 2
    healthy = [[] for _ in RULES]
    slow = [[] for _ in RULES]
    hours = [0.0] * len(RULES)
    ndrives = 0
    thresholds = None
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(trace_host, a.diskprobe,
                          os.path.join(a.data, c, h), a.extra): (c, h)
                for c, h in hosts}
        for fu in concurrent.futures.as_completed(futs):
            c, h = futs[fu]
            try:
                best, nwin, step, conf = fu.result()
            except RuntimeError as e:
                print("false_alarms: %s" % e, file=sys.stderr)
                return 2
            t = {name: conf[key] for name, _, key in RULES}
            if thresholds is not None and t != thresholds:
                print("false_alarms: %s/%s ran with thresholds %s, other "
                      "hosts with %s (their intervals differ)" %
                      (c, h, t, thresholds), file=sys.stderr)
                return 2
            thresholds = t
            for disk, b in best.items():
                is_slow = (c, h, disk) in labels
                ndrives += 0 if is_slow else 1
                for k in range(len(RULES)):
                    (slow if is_slow else healthy)[k].append(b[k])
                    if not is_slow:
                        hours[k] += nwin[disk][k] * step / 3600.0
    if thresholds is None:
        print("false_alarms: no host under %s" % a.data, file=sys.stderr)
        return 2
    print("%d unlabelled drives, %d labelled, clusters %s" %
          (ndrives, len(slow[0]), ",".join(c[8:] for c in clusters)))
    print("| rule | threshold | healthy largest | margin | labelled "
          "smallest | hours of figures per drive | false flags per "
          "drive-year (extrapolated) | per 1,000 drives a year |")
    print("|---|---|---|---|---|---|---|---|")
    fits = []
    for k, (name, _, _) in enumerate(RULES):
        hv = [x for x in healthy[k] if x > -math.inf]
        sv = [x for x in slow[k] if x > -math.inf]
        thr = thresholds[name]
        per_drive_h = hours[k] / max(ndrives, 1)
        fit = fit_tail(hv, a.tail) if len(hv) >= 5 else None
        fits.append((fit, per_drive_h))

        def rate(r):
            if fit is None or per_drive_h <= 0:
                return float("nan")
            s = min(1.0, math.exp(fit[0] + fit[1] * r))
            return s / per_drive_h * 8760.0

        y = rate(thr)
        print("| %s | %.2f | %.3f | %.3fx | %s | %.1f | %.2g | %.2g |" %
              (name, thr, max(hv) if hv else float("nan"),
               thr / max(hv) if hv else float("nan"),
               "%.3f" % min(sv) if sv else "-", per_drive_h, y, 1000 * y))
    for k, lo, hi in grids:
        fit, per_drive_h = fits[k]
        print("%s: extrapolated false flags per drive-year by threshold:" %
              RULES[k][0])
        r = lo
        while r <= hi + 1e-9:
            s = min(1.0, math.exp(fit[0] + fit[1] * r)) if fit else math.nan
            print("  %.2f  %.2g" % (r, s / per_drive_h * 8760.0
                                    if per_drive_h > 0 else math.nan))
            r += 0.01
    return 0


if __name__ == "__main__":
    sys.exit(main())
