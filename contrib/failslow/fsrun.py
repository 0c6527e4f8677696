"""fsrun.py - what the fail-slow study scripts share: running `diskprobe
failslow` over one host directory, and the labelled drives of a
kratos-failslow style data directory. Standard library only."""
import csv
import os
import subprocess


def failslow(diskprobe, args, hostdir):
    """stdout of `diskprobe failslow ARGS HOSTDIR`; RuntimeError naming the
    host and the reason when it exits non-zero."""
    p = subprocess.run([diskprobe, "failslow"] + args + [hostdir],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
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
