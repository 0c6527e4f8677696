#!/usr/bin/env python3
"""inject.py - how small a slowdown the fail-slow detector finds, measured on
the tuning clusters only, by injecting slowdowns into real healthy drives.

For every host of the given clusters (A and J: the held-out cluster C is
refused) it picks --per-host unlabelled drives (deterministically: spread
over the host's sorted drive list, a different offset per host), and for
every factor F in --factors writes a copy of the host's day files with that
drive's latency multiplied by F in every sample (a drive F times slower than
it was, at the load it had, from the host's first sample on, as the labelled
drives are), runs `diskprobe failslow --format json` over the copy, and
counts

  - detected: the injected drive flagged; the time from the host's first
    sample to its first flag (median, max; wall time, 3 h of samples a day
    in the public subset, and hours of samples);
  - false positives: any OTHER unlabelled drive of the copy flagged (the
    injected drive must not make its peers look slow, nor fast ones slow).

With --peer-ratio the factor is divided by the drive's own offset first
(the median of its window slowdowns against its peers in the unmodified
data, from `diskprobe failslow --trace`), so that the injected drive ends
up F times its peers rather than F times itself: healthy drives sit at
0.93-1.05x their peers (5th to 99th percentile in A and J), and 1.2x on a
drive that was 0.93x makes a drive only 1.12x its peers.

With --closed-loop the drive's throughput is also divided by the factor:
a workload that keeps a fixed number of I/Os in flight on each drive
(Little's law: throughput = in flight / latency) moves less data through a
slower drive, so the model sees a slow drive that is also less busy, where
its peers' curve expects a lower latency. Without it the drive is slower
at the load it had (an open-loop workload, or one balanced by the host).

Factor 1 is the unmodified data: its false positives are the detector's
false alarms on the tuning clusters. Python standard library only.

  python3 tests/oracles/failslow/inject.py --diskprobe build/src/cli/diskprobe \\
      --data /tmp/kratos/data [--clusters A,J] [--factors 1,1.15,1.2,1.3] \\
      [--per-host 2] [--peer-ratio] [--closed-loop] [--jobs 2] [--list] \\
      [-- extra diskprobe failslow flags]

Exit 0 after printing the table; 2 on bad usage or a failed run.
"""
import concurrent.futures
import csv
import json
import os
import shutil
import statistics
import sys
import tempfile

import fsrun

def read_host(hostdir):
    """[(day file name, header, rows)], the drives, the sorted distinct
    sample times."""
    days, drives, times = [], set(), set()
    for name in sorted(f for f in os.listdir(hostdir) if f.endswith(".csv")):
        with open(os.path.join(hostdir, name), newline="") as f:
            r = csv.reader(f)
            header = next(r)
            rows = list(r)
        idx = {k: i for i, k in enumerate(header)}
        for row in rows:
            drives.add(row[idx["disk_id"]])
            try:
                times.add(int(float(row[idx["ts"]])))
            except ValueError:
                continue
        days.append((name, header, rows))
    return days, sorted(drives), sorted(times)


def write_copy(days, disk, factor, outdir, closed_loop=False):
    """The day files with disk's latency times factor (and, closed_loop,
    its throughput divided by it)."""
    for name, header, rows in days:
        idx = {k: i for i, k in enumerate(header)}
        di, li, ti = idx["disk_id"], idx["latency"], idx["throughput"]
        with open(os.path.join(outdir, name), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            for row in rows:
                if row[di] == disk and factor != 1.0:
                    try:
                        row = list(row)
                        row[li] = repr(float(row[li]) * factor)
                        if closed_loop:
                            row[ti] = repr(float(row[ti]) / factor)
                    except ValueError:
                        pass
                w.writerow(row)


def run(diskprobe, hostdir, extra):
    out = fsrun.failslow(diskprobe, ["--format", "json"] + extra, hostdir)
    return {o["disk"]: o for o in
            (json.loads(line) for line in out.splitlines() if line)}


def offsets(diskprobe, hostdir, extra):
    """Each drive's median window slowdown in the unmodified data."""
    w = {}
    for line in fsrun.failslow(diskprobe, ["--trace"] + extra,
                               hostdir).splitlines():
        f = line.split()
        if len(f) >= 5 and f[0] == "trace" and f[4] != "nan":
            w.setdefault(f[2], []).append(float(f[4]))
    return {d: statistics.median(v) for d, v in w.items() if v}


def study_host(a, cluster, host, factors, labels, scratch):
    hostdir = os.path.join(a.data, cluster, host)
    days, drives, times = read_host(hostdir)
    t0 = times[0]
    base = offsets(a.diskprobe, hostdir, a.extra) if a.peer_ratio else {}
    truth = {d for (c, h, d) in labels if c == cluster and h == host}
    healthy = [d for d in drives if d not in truth]
    if not healthy:
        return []
    off = sum(map(ord, host)) % len(healthy)
    n = min(a.per_host, len(healthy))
    picks = sorted({healthy[(off + k * len(healthy) // n) % len(healthy)]
                    for k in range(n)})
    out = []
    for f in factors:
        for d in (picks if f != 1.0 else [None]):
            tmp = tempfile.mkdtemp(prefix="inject-", dir=scratch)
            try:
                write_copy(days, d, f / base.get(d, 1.0), tmp, a.closed_loop)
                flags = run(a.diskprobe, tmp, a.extra)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            hit = flags.get(d) if d else None
            fps = sorted(x for x in flags if x != d and x not in truth)
            out.append((f, cluster, host, d,
                        None if hit is None else hit["first_flag_ts"] - t0,
                        fps, None if hit is None else
                        fsrun.sampled_seconds(times, hit["first_flag_ts"])))
    return out


def main():
    ap = fsrun.parser(__doc__, "A,J")
    ap.add_argument("--factors", default="1,1.15,1.2,1.3,1.5,2")
    ap.add_argument("--per-host", type=int, default=2)
    ap.add_argument("--peer-ratio", action="store_true",
                    help="make the drive F times its peers, not itself")
    ap.add_argument("--closed-loop", action="store_true",
                    help="also divide the drive's throughput by F")
    ap.add_argument("--list", action="store_true",
                    help="print every miss and false positive")
    a = ap.parse_args()
    clusters = fsrun.tuning_clusters(a.clusters, "inject")
    if clusters is None:
        return 2
    try:
        factors = sorted({float(x) for x in a.factors.split(",") if x})
        labels = fsrun.labelled(a.data)
        hosts = fsrun.hosts(a.data, clusters)
    except (ValueError, OSError, KeyError) as e:
        print("inject: %s" % e, file=sys.stderr)
        return 2
    if a.per_host < 1 or not factors or min(factors) < 1.0:
        print("inject: --per-host >= 1, factors >= 1", file=sys.stderr)
        return 2
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") else None
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(study_host, a, c, h, factors, labels, scratch)
                for c, h in hosts]
        for fu in futs:
            try:
                results += fu.result()
            except (RuntimeError, OSError, KeyError) as e:
                print("inject: %s" % e, file=sys.stderr)
                return 2

    print("| slowdown injected | drives | detected | rate | "
          "first flag median | max | hours of samples, median | "
          "false pos. (other drives) |")
    print("|---|---|---|---|---|---|---|---|")
    for f in factors:
        rs = [r for r in results if r[0] == f]
        fp = sum(len(r[5]) for r in rs)
        if f == 1.0:
            print("| none (the data as recorded) | - | - | - | - | - | - "
                  "| %d |" % fp)
            continue
        delays = [r[4] for r in rs if r[4] is not None]
        sampled = [r[6] for r in rs if r[6] is not None]
        med = statistics.median(delays) if delays else None
        mx = max(delays) if delays else None

        def h(s):
            return "-" if s is None else "%.1f h" % (s / 3600.0)

        print("| %.2fx | %d | %d | %.2f | %s | %s | %s | %d |" %
              (f, len(rs), len(delays), len(delays) / len(rs) if rs else 0,
               h(med), h(mx),
               h(statistics.median(sampled) if sampled else None), fp))
    if a.list:
        for f, c, host, d, delay, fps, _ in results:
            if d is not None and delay is None:
                print("missed: %.2fx %s/%s/%s" % (f, c, host, d))
            for x in fps:
                print("false positive: %.2fx %s/%s/%s (injected %s)" %
                      (f, c, host, x, d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
