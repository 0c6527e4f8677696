#!/usr/bin/env python3
"""fleet_scale.py - the sampler and the report of fleet_scale.sh.

  fleet_scale.py sample --pid PID --sock SOCK --rrd DIR --metrics URL
                        --values N --duration S --steady-from S
                        --fresh-within S --out FILE [--tg-pid PID]
      Every --every seconds (10) for --duration seconds after it starts,
      samples the central collectd (pid PID): RRD files under DIR (host*
      directories only: the generated hosts), files still being created
      (*.async), the write queue's length and dropped count (unixsock
      GETVAL of collectd's internal stats), its CPU seconds, RSS and threads
      (with those of each --also-pid, e.g. rrdcached), the
      series of the generated hosts on /metrics and how long the page took,
      the kernel's UDP receive-buffer drops. At the end, how many RRD files
      were written within --fresh-within seconds. Writes one JSON object.

  fleet_scale.py report FILE...
      The table of the steps (one JSON file each) and the knee: the largest
      host count each configuration kept up with, per core.

Python 3 standard library only.
"""
import argparse
import json
import math
import os
import socket
import sys
import time
import urllib.request

# A step keeps up when, at its end: every RRD file exists, the write queue
# holds less than one interval's values and answered, nothing was dropped in
# the steady window, /metrics (if write_prometheus is loaded) answered with
# every series, and every file was written within the freshness window
# (written in steady state).
KEEP_UP = {"files": 0.999, "series": 0.99, "fresh": 0.99}


def count_files(root):
    """(RRD files, files being created) under root/host*/*/."""
    done = creating = 0
    try:
        hosts = [e.path for e in os.scandir(root) if e.name.startswith("host") and e.is_dir()]
    except OSError:
        return 0, 0
    for h in hosts:
        try:
            plugins = [e.path for e in os.scandir(h) if e.is_dir()]
        except OSError:
            continue
        for p in plugins:
            try:
                for e in os.scandir(p):
                    if e.name.endswith(".rrd"):
                        done += 1
                    elif e.name.endswith(".async"):
                        creating += 1
            except OSError:
                continue
    return done, creating


def count_fresh(root, since):
    """RRD files under root/host*/ last modified at or after since."""
    fresh = 0
    for dirpath, _, names in os.walk(root):
        if os.path.relpath(dirpath, root).split(os.sep)[0].startswith("host"):
            for n in names:
                if n.endswith(".rrd"):
                    try:
                        if os.stat(os.path.join(dirpath, n)).st_mtime >= since:
                            fresh += 1
                    except OSError:
                        pass
    return fresh


def getval(sock_path, ident, timeout):
    """The first value of identifier ident via collectd's unixsock, or None
    if the socket does not answer within timeout seconds."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(sock_path)
            s.sendall(('GETVAL "%s"\n' % ident).encode())
            buf = b""
            while buf.count(b"\n") < 2:
                chunk = s.recv(4096)
                if not chunk:
                    break
                buf += chunk
            lines = buf.decode(errors="replace").splitlines()
            if lines and lines[0].split(" ", 1)[0].isdigit() and int(lines[0].split(" ", 1)[0]) > 0:
                v = float(lines[1].split("=", 1)[1])
                return None if math.isnan(v) else v  # a derive's first reading
    except (OSError, ValueError, IndexError):
        pass
    return None


def proc_cpu_rss(pid):
    """(CPU seconds, RSS in MiB) of pid, or (None, None) once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        pages = os.sysconf("SC_PAGE_SIZE")
        return (int(fields[11]) + int(fields[12])) / ticks, int(fields[21]) * pages / 2**20
    except (OSError, IndexError, ValueError):
        return None, None


def threads(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
    except (OSError, StopIteration, ValueError):
        return None


def udp_rcvbuf_errors():
    try:
        with open("/proc/net/snmp") as f:
            rows = [line.split() for line in f if line.startswith("Udp:")]
        return int(rows[1][rows[0].index("RcvbufErrors")])
    except (OSError, IndexError, ValueError):
        return None


def scrape(url, timeout):
    """(series of the generated hosts, seconds) of one /metrics page, or
    (None, None) if it did not answer within timeout."""
    t = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = r.read()
    except OSError:
        return None, None
    return body.count(b'instance="host'), time.monotonic() - t


def sample(a):
    t0 = time.monotonic()
    samples = []
    ql_id = "%s/collectd-write_queue/queue_length" % a.central
    drop_id = "%s/collectd-write_queue/derive-dropped" % a.central
    udp0 = udp_rcvbuf_errors()
    k = 0
    while True:
        due = t0 + k * a.every
        if due > t0 + a.duration:
            break
        if time.monotonic() < due:
            time.sleep(due - time.monotonic())
        t = time.monotonic() - t0
        cpu, rss = proc_cpu_rss(a.pid)
        for extra in a.also_pid or []:  # e.g. rrdcached: the central's too
            c, m = proc_cpu_rss(extra)
            if None not in (cpu, c):
                cpu, rss = cpu + c, rss + m
        tg_cpu, _ = proc_cpu_rss(a.tg_pid) if a.tg_pid else (None, None)
        nthreads = threads(a.pid)
        files, creating = count_files(a.rrd)
        ql = getval(a.sock, ql_id, a.timeout)
        dropped = getval(a.sock, drop_id, a.timeout) if ql is not None else None
        series, scrape_s = scrape(a.metrics, a.timeout) if a.metrics else (None, None)
        udp = udp_rcvbuf_errors()
        samples.append({"t": round(t, 1), "files": files, "creating": creating,
                        "queue": ql, "dropped": dropped, "cpu_s": cpu, "tg_cpu_s": tg_cpu,
                        "rss_mib": rss, "threads": nthreads, "series": series, "scrape_s": scrape_s,
                        "udp_rcvbuf_errors": (udp - udp0) if None not in (udp, udp0) else None})
        print("  t=%5.0fs files %7d (+%d creating) queue %s dropped %s series %s (%s s) cpu %s s threads %s"
              % (t, files, creating, _fmt(ql), _fmt(dropped), _fmt(series),
                 _fmt(scrape_s, "%.1f"), _fmt(cpu, "%.0f"), _fmt(nthreads)), file=sys.stderr, flush=True)
        k += 1
    fresh = count_fresh(a.rrd, time.time() - a.fresh_within)
    out = {"label": a.label, "config": a.config, "hosts": a.hosts, "values": a.values,
           "duration": a.duration, "steady_from": a.steady_from, "fresh_within": a.fresh_within,
           "interval": a.interval, "metrics": bool(a.metrics), "samples": samples, "fresh": fresh}
    with open(a.out, "w") as f:
        json.dump(out, f)


def _fmt(x, f="%.0f"):
    return "-" if x is None else f % x


def _cores(samples, t_from, t_to, key="cpu_s"):
    """Average cores used between the samples nearest t_from and t_to."""
    pts = [s for s in samples if s[key] is not None and t_from <= s["t"] <= t_to]
    if len(pts) < 2 or pts[-1]["t"] <= pts[0]["t"]:
        return None
    return (pts[-1][key] - pts[0][key]) / (pts[-1]["t"] - pts[0]["t"])


def summarize(r):
    s = r["samples"]
    n = r["values"]
    last = s[-1]
    steady = [x for x in s if x["t"] >= r["steady_from"]]
    all_at = next((x["t"] for x in s if x["files"] >= KEEP_UP["files"] * n), None)
    qs = [x["queue"] for x in s if x["queue"] is not None]
    # derive-dropped reads as a rate (value lists dropped per second)
    ds = [x["dropped"] for x in steady if x["dropped"] is not None]
    dropped_steady = max(ds) if ds else None
    no_answer = sum(1 for x in s if x["queue"] is None)
    scr = [x["scrape_s"] for x in s if x["scrape_s"] is not None]
    prom = r.get("metrics", True)  # write_prometheus loaded
    scrape_fail = sum(1 for x in s if x["scrape_s"] is None) if prom else 0
    row = {
        "config": r["config"], "hosts": r["hosts"], "values": n, "prom": prom,
        "files_60": next((x["files"] for x in s if x["t"] >= 60), None),
        "files_end": last["files"], "all_files_at": all_at,
        "queue_max": max(qs) if qs else None, "queue_end": last["queue"],
        "sock_no_answer": no_answer, "dropped_steady": dropped_steady,
        "dropped_end": last["dropped"],
        "series_end": last["series"], "scrape_max": max(scr) if scr else None,
        "scrape_fail": scrape_fail,
        "cold_cores": _cores(s, 0, r["steady_from"]),
        "steady_cores": _cores(s, r["steady_from"], r["duration"]),
        "tg_cores": _cores(s, 0, r["duration"], "tg_cpu_s"),
        "rss_end": last["rss_mib"], "fresh": r["fresh"],
        "threads_max": max((x.get("threads") or 0) for x in s),
        "refused": r.get("refused"),
        "udp_errors": last["udp_rcvbuf_errors"],
    }
    row["keeps_up"] = bool(
        all_at is not None
        and last["queue"] is not None and last["queue"] < n  # under one interval's values
        and (dropped_steady or 0) == 0
        and (not prom or (last["series"] is not None and last["series"] >= KEEP_UP["series"] * n))
        and r["fresh"] >= KEEP_UP["fresh"] * n)
    return row


def pct(x, n):
    return "-" if x is None else "%.0f %%" % (100.0 * x / n) if n else "-"


def report(files):
    rows = []
    for p in files:
        with open(p) as f:
            r = json.load(f)
        try:  # how often the task limit refused a thread (fleet_scale.sh)
            with open(p[:-len(".json")] + ".refused") as f:
                r["refused"] = int(f.read().strip())
        except (OSError, ValueError):
            pass
        rows.append(summarize(r))
    rows.sort(key=lambda r: (r["hosts"], r["config"]))
    cols = ["hosts", "config", "files 60 s", "all files at", "files end", "queue max/end",
            "dropped/s (steady max)", "series end", "scrape max s", "CPU cold/steady",
            "threads max (refused)", "RSS MiB",
            "fresh", "UDP drops", "keeps up"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        n = r["values"]
        q = "%s / %s" % (_fmt(r["queue_max"]), _fmt(r["queue_end"]))
        if r["sock_no_answer"]:
            q += " (%d no answer)" % r["sock_no_answer"]
        sc = _fmt(r["scrape_max"], "%.1f") + (" (%d failed)" % r["scrape_fail"] if r["scrape_fail"] else "")
        print("| " + " | ".join([
            "{:,}".format(r["hosts"]), r["config"], pct(r["files_60"], n),
            "-" if r["all_files_at"] is None else "%.0f s" % r["all_files_at"],
            "{:,} / {:,}".format(r["files_end"], n), q,
            "%s (%s)" % (_fmt(r["dropped_end"]), _fmt(r["dropped_steady"])),
            pct(r["series_end"], n) if r["prom"] else "no write_prometheus", sc,
            "%s / %s" % (_fmt(r["cold_cores"], "%.2f"), _fmt(r["steady_cores"], "%.2f")),
            "%s (%s)" % (_fmt(r["threads_max"]), _fmt(r["refused"])),
            _fmt(r["rss_end"]), pct(r["fresh"], n), _fmt(r["udp_errors"]),
            "yes" if r["keeps_up"] else "no"]) + " |")
    ncpu = os.cpu_count() or 1
    print()
    for cfg in sorted({r["config"] for r in rows}):
        mine = [r for r in rows if r["config"] == cfg]
        ok = None
        for r in mine:  # ascending hosts: the knee is before the first failure
            if not r["keeps_up"]:
                break
            ok = r
        bad = next((r for r in mine if not r["keeps_up"]), None)
        if ok is None:
            print("knee, %s: below %s hosts (the smallest step did not keep up)" % (cfg, "{:,}".format(mine[0]["hosts"])))
            continue
        line = "knee, %s: kept up with %s hosts on %d cores (%s hosts per core)" % (
            cfg, "{:,}".format(ok["hosts"]), ncpu, "{:,}".format(ok["hosts"] // ncpu))
        line += "; not with %s" % "{:,}".format(bad["hosts"]) if bad else "; no step failed (the knee is above)"
        if ok["steady_cores"]:
            line += "; steady state at %s hosts: %.2f cores (%s hosts per busy core)" % (
                "{:,}".format(ok["hosts"]), ok["steady_cores"],
                "{:,}".format(int(ok["hosts"] / ok["steady_cores"])) if ok["steady_cores"] > 0 else "-")
        print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--tg-pid", type=int)
    s.add_argument("--also-pid", type=int, action="append", help="a process whose CPU and RSS count as the central's")
    s.add_argument("--sock", required=True)
    s.add_argument("--central", default="central")
    s.add_argument("--rrd", required=True)
    s.add_argument("--metrics", required=True)
    s.add_argument("--values", type=int, required=True)
    s.add_argument("--hosts", type=int, required=True)
    s.add_argument("--config", required=True)
    s.add_argument("--label", default="")
    s.add_argument("--interval", type=float, default=10)
    s.add_argument("--duration", type=float, required=True)
    s.add_argument("--steady-from", type=float, required=True)
    s.add_argument("--fresh-within", type=float, required=True)
    s.add_argument("--every", type=float, default=10)
    s.add_argument("--timeout", type=float, default=8)
    s.add_argument("--out", required=True)
    r = sub.add_parser("report")
    r.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.cmd == "sample":
        sample(a)
    else:
        report(a.files)


if __name__ == "__main__":
    main()
