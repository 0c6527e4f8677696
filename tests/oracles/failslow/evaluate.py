#!/usr/bin/env python3
"""evaluate.py - diskprobe's fail-slow detector on the public Perseus subset.

Runs `diskprobe failslow --format json` over every host of every cluster in
a kratos-failslow style data directory (DATA/cluster_X/host_N/*.csv) and
scores it at the drive level against DATA/slow_drive_info.csv: precision and
recall per cluster and overall, and the time from each host's first sample
to each true drive's first flag (median, max), in wall time and in hours of
samples (the public days hold 3 hours each: what a live plugin would have
needed). Python standard library only.

  python3 tests/oracles/failslow/evaluate.py --diskprobe build/src/cli/diskprobe \\
      --data /tmp/kratos/data [--clusters A,J] [--held-out C] [--jobs 2] \\
      [-- extra diskprobe failslow flags]

--held-out names clusters reported apart (and left out of "tuned on").
Exit 0 after printing the table; 2 on bad usage or a failed run.
"""
import concurrent.futures
import json
import os
import statistics
import sys

import fsrun


def run_host(diskprobe, hostdir, extra):
    out = fsrun.failslow(diskprobe, ["--format", "json"] + extra, hostdir)
    flags = [json.loads(line) for line in out.splitlines() if line]
    return hostdir, flags, fsrun.sample_times(hostdir)


def fmt_h(seconds):
    return "-" if seconds is None else "%.1f h" % (seconds / 3600.0)


def main():
    ap = fsrun.parser(__doc__, "A,J,C")
    ap.add_argument("--held-out", default="C")
    ap.add_argument("--list", action="store_true",
                    help="print every false positive and missed drive")
    a = ap.parse_args()
    clusters = fsrun.cluster_names(a.clusters)
    held = set(fsrun.cluster_names(a.held_out))
    try:
        labels = fsrun.labelled(a.data)
        hosts = fsrun.hosts(a.data, clusters)
    except (OSError, KeyError) as e:
        print("evaluate: %s: %s" % (a.data, e), file=sys.stderr)
        return 2
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(run_host, a.diskprobe,
                          os.path.join(a.data, c, h), a.extra): (c, h)
                for c, h in hosts}
        for fu in concurrent.futures.as_completed(futs):
            try:
                _, flags, times = fu.result()
            except RuntimeError as e:
                print("evaluate: %s" % e, file=sys.stderr)
                return 2
            results[futs[fu]] = (flags, times)

    rows = []
    groups = [(c, [c]) for c in clusters]
    tuned = [c for c in clusters if c not in held]
    if tuned and len(tuned) < len(clusters):
        groups.append(("tuned on (" + "+".join(x[8:] for x in tuned) + ")",
                       tuned))
    groups.append(("overall", clusters))
    for name, members in groups:
        tp = fp = fn = 0
        delays, sampled, fps, fns = [], [], [], []
        ndrives = 0
        for (c, h), (flags, times) in results.items():
            if c not in members:
                continue
            flagged = {f["disk"]: f for f in flags}
            truth = {d for (lc, lh, d) in labels if lc == c and lh == h}
            for d, f in flagged.items():
                if d in truth:
                    tp += 1
                    delays.append(f["first_flag_ts"] - times[0])
                    sampled.append(fsrun.sampled_seconds(times,
                                                        f["first_flag_ts"]))
                else:
                    fp += 1
                    fps.append("%s/%s/%s %.2fx" % (c, h, d, f["slowdown"]))
            for d in truth - set(flagged):
                fn += 1
                fns.append("%s/%s/%s" % (c, h, d))
        ndrives = sum(1 for (c, h) in results if c in members)
        prec = tp / (tp + fp) if tp + fp else float("nan")
        rec = tp / (tp + fn) if tp + fn else float("nan")
        med = statistics.median(delays) if delays else None
        mx = max(delays) if delays else None
        smed = statistics.median(sampled) if sampled else None
        smx = max(sampled) if sampled else None
        label = name[8:] if name.startswith("cluster_") else name
        if name in held:
            label += " (held out)"
        rows.append((label, ndrives, tp + fn, tp, fp, fn, prec, rec,
                     fmt_h(med), fmt_h(mx), fmt_h(smed), fmt_h(smx), fps, fns))
    print("| cluster | hosts | slow drives | flagged true | false pos. | "
          "missed | precision | recall | first flag median | max | "
          "median, hours of samples | max |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %d | %d | %d | %d | %.2f | %.2f | %s | %s | %s "
              "| %s |" % r[:12])
    if a.list:
        for r in rows[:len(clusters)]:
            for x in r[12]:
                print("false positive: " + x)
            for x in r[13]:
                print("missed: " + x)
    return 0


if __name__ == "__main__":
    sys.exit(main())
