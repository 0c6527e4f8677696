#!/usr/bin/env python3
"""perseus_to_csv.py - the public fail-slow research data (Perseus layout,
kratos-failslow) as the device view's series in collectd's csv layout, the
input of `diskprobe failslow --collectd-csv`. Standard library only.

  python3 perseus_to_csv.py OUTDIR HOSTDIR...

HOSTDIR holds one host's day files YYYY-MM-DD.csv (taken in name order): a
header naming the columns ts (Unix seconds), disk_id, throughput (bytes/s)
and latency (average per I/O, microseconds), then rows, fields optionally in
double quotes, an empty or non-numeric value a missing sample. For each
drive DISK it writes OUTDIR/HOST/diskprobe-dev-DISK/ (HOST the name of
HOSTDIR) and in it, per day file, the series collectd's csv plugin would
hold for the plugin's device view, lines "epoch,value" after the header
"epoch,value":

  bytes_per_second-read-DAY    the throughput (the data does not split
                               reads from writes: all of it as reads)
  bytes_per_second-write-DAY   0
  latency-read_await-DAY       the latency in seconds ("nan" if missing)

and no write await (no writes: diskprobe failslow then takes the read
await as the latency, without the operation counts the data lacks). Every
row is kept, a missing value as "nan", so the tool sees the same times;
timestamps are rounded to whole seconds. The values are written exactly
(repr), so the tool is fed the same numbers its earlier reader of this
layout computed.

Exit 0, or 2 after one line on stderr (a directory without day files, a
missing column, a short row, a bad ts or an empty disk_id).
"""
import csv
import math
import os
import re
import sys

DAY = re.compile(r"^\d{4}-\d\d-\d\d\.csv$")
HEADER = "epoch,value\n"


class Bad(Exception):
    """Input this converter refuses; str() says where and why."""


def num_or_nan(s):
    """The value of a field, NaN when empty or not a number."""
    try:
        return float(s) if s.rstrip() == s and s else math.nan
    except ValueError:
        return math.nan


def read_day(path):
    """[(ts, disk, throughput, latency_s)] of one day file."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise Bad("%s: empty file" % path)
    header = rows[0]
    want = ("ts", "disk_id", "throughput", "latency")
    col = {}
    for c in want:
        if c not in header:
            raise Bad("%s: line 1: no column '%s' (want a header "
                      "ts,disk_id,throughput,latency)" % (path, c))
        col[c] = header.index(c)
    out = []
    for lineno, row in enumerate(rows[1:], 2):
        if not row or row == [""]:
            continue
        if len(row) < len(header):
            raise Bad("%s: line %d: %d fields, want %d" %
                      (path, lineno, len(row), len(header)))
        ts = num_or_nan(row[col["ts"]])
        disk = row[col["disk_id"]]
        if not 0 <= ts <= 1e11 or not disk or "/" in disk:
            raise Bad("%s: line %d: bad ts '%s' (want Unix seconds, 0 to "
                      "1e11) or disk_id '%s'" %
                      (path, lineno, row[col["ts"]], disk))
        out.append((int(math.floor(ts + 0.5)), disk,
                    num_or_nan(row[col["throughput"]]),
                    num_or_nan(row[col["latency"]]) * 1e-6))
    return out


def day_files(hostdir):
    """The day files of a host directory, in name order."""
    names = sorted(n for n in os.listdir(hostdir) if DAY.match(n))
    if not names:
        raise Bad("%s: no day files (YYYY-MM-DD.csv)" % hostdir)
    return names


def write_host(days, outdir):
    """Writes [(day name, rows)] as the series of outdir/diskprobe-dev-*."""
    for day, rows in days:
        per_disk = {}
        for ts, disk, tp, lat in rows:
            per_disk.setdefault(disk, []).append((ts, tp, lat))
        date = day[:-len(".csv")]
        for disk, samples in per_disk.items():
            d = os.path.join(outdir, "diskprobe-dev-" + disk)
            os.makedirs(d, exist_ok=True)
            for name, text in (
                    ("bytes_per_second-read",
                     "".join("%d,%r\n" % (t, x) for t, x, _ in samples)),
                    ("bytes_per_second-write",
                     "".join("%d,0\n" % t for t, _, _ in samples)),
                    ("latency-read_await",
                     "".join("%d,%r\n" % (t, y) for t, _, y in samples))):
                with open(os.path.join(d, "%s-%s" % (name, date)), "a") as f:
                    if f.tell() == 0:
                        f.write(HEADER)
                    f.write(text)


def read_host(hostdir):
    """[(day name, rows)] of a host directory; Bad when refused."""
    return [(n, read_day(os.path.join(hostdir, n)))
            for n in day_files(hostdir)]


def convert(hostdir, outroot):
    """Converts one host directory into outroot/HOST; its path."""
    host = os.path.basename(os.path.normpath(hostdir))
    out = os.path.join(outroot, host)
    write_host(read_host(hostdir), out)
    return out


def main(argv):
    if len(argv) < 3:
        print("usage: perseus_to_csv.py OUTDIR HOSTDIR...", file=sys.stderr)
        return 2
    try:
        for h in argv[2:]:
            convert(h, argv[1])
    except (Bad, OSError) as e:
        print("perseus_to_csv: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
