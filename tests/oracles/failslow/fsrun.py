"""fsrun.py - what the fail-slow study scripts share: their common
arguments and the refusal of the held-out cluster, running `diskprobe
failslow` over one host directory of the research layout (converted by
perseus_to_csv.py first: the tool reads the device view, not this layout),
the labelled drives of a kratos-failslow style data directory, and the
hours of samples before a flag. Standard library only."""
import argparse
import bisect
import csv
import os
import shutil
import subprocess
import sys
import tempfile

import perseus_to_csv


def parser(doc, clusters):
    """An ArgumentParser with what every study script takes: --diskprobe,
    --data, --clusters (default CLUSTERS), --jobs and the extra flags for
    diskprobe failslow (after --). The script adds its own."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--diskprobe", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--clusters", default=clusters,
                    help="cluster letters or names, comma-separated")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("extra", nargs="*", help="flags for diskprobe failslow")
    return ap


def tuning_clusters(arg, prog):
    """cluster_names(arg), or None after one line on stderr when it names
    the held-out cluster C (the scripts that study the rules refuse it)."""
    clusters = cluster_names(arg)
    if "cluster_C" in clusters:
        print("%s: cluster C is held out; study A and J" % prog,
              file=sys.stderr)
        return None
    return clusters


def failslow(diskprobe, args, hostdir):
    """stdout of `diskprobe failslow ARGS --collectd-csv CONVERTED`, the host
    directory converted by perseus_to_csv into a scratch directory (in
    /dev/shm where there is one); RuntimeError naming the host and the
    reason when the conversion is refused or the tool exits non-zero."""
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") else None
    tmp = tempfile.mkdtemp(prefix="fsrun-", dir=scratch)
    try:
        try:
            conv = perseus_to_csv.convert(hostdir, tmp)
        except perseus_to_csv.Bad as e:
            raise RuntimeError("%s: exit 2: perseus_to_csv: %s" %
                               (hostdir, e))
        p = subprocess.run([diskprobe, "failslow"] + args +
                           ["--collectd-csv", conv],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (hostdir, p.returncode,
                                                 p.stderr.strip()))
    return p.stdout


def labelled(data):
    """{(cluster, host, disk)} from DATA/slow_drive_info.csv; OSError or
    KeyError when it cannot be read."""
    out = set()
    with open(os.path.join(data, "slow_drive_info.csv"), newline="") as f:
        for row in csv.DictReader(f):
            out.add((row["cluster"], row["host_name"], row["disk_id"]))
    return out


def cluster_names(arg):
    """"A,J" or "cluster_A,cluster_J" -> ["cluster_A", "cluster_J"]."""
    return [c if c.startswith("cluster_") else "cluster_" + c
            for c in arg.split(",") if c]


def hosts(data, clusters):
    """[(cluster, host)] of the host directories of each cluster, sorted;
    OSError naming a cluster that is not a directory."""
    out = []
    for c in clusters:
        cdir = os.path.join(data, c)
        if not os.path.isdir(cdir):
            raise OSError("no %s" % cdir)
        out += [(c, h) for h in sorted(os.listdir(cdir))
                if os.path.isdir(os.path.join(cdir, h))]
    return out


def sample_times(hostdir):
    """The sorted distinct sample timestamps of a host's day files."""
    ts = set()
    for day in sorted(f for f in os.listdir(hostdir) if f.endswith(".csv")):
        with open(os.path.join(hostdir, day), newline="") as f:
            for row in csv.DictReader(f):
                try:
                    ts.add(int(float(row["ts"])))
                except (KeyError, ValueError):
                    continue
    return sorted(ts)


def sampled_seconds(times, until):
    """Seconds of samples from the first up to `until`: the time a live
    plugin would have watched (the public days hold 3 hours each)."""
    if len(times) < 2:
        return 0
    step = min(b - a for a, b in zip(times, times[1:]))
    return bisect.bisect_right(times, until) * step
