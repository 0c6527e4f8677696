#!/usr/bin/env python3
"""bench.py - the measuring half of contrib/evaluation/bench/run.sh (which makes the
loop devices, the cgroup and the probe file, and removes them). Python 3
standard library only; matplotlib if installed, for the plot.

Sections (each only when run.sh passed its arguments):
  io        diskprobe vs fio (and ioping for QD1) on three targets, A B A B
  collectd  the real collectd with 8 targets vs without: RSS, CPU, the read
            callback's instructions (callgrind)
  alloc     heap allocations of `diskprobe run` for 10x more I/Os (memcheck)
            and malloc calls inside dp_engine_run (callgrind)

Output: results.txt (the tables, also on stdout), raw.json (every run),
qd1-latency.png, collectd/ and valgrind/ logs, all under --out.
"""
import argparse
import glob
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ARGS = None
PIDS = set()
LOG = []  # lines of results.txt


def out(line=""):
    print(line, flush=True)
    LOG.append(line)


T0 = time.monotonic()


def note(msg):
    print("bench: [%3.0fs] %s" % (time.monotonic() - T0, msg),
          file=sys.stderr, flush=True)


# ---- processes -------------------------------------------------------------


def _save_pids():
    # run.sh's trap kills what is listed here: only live children of ours.
    with open(ARGS.pids, "w") as f:
        f.write("".join("%d\n" % p for p in PIDS))


def spawn(cmd, cgroup=None, stdout=None, stderr=None):
    if cgroup:
        cmd = ["bash", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"',
               cgroup] + list(cmd)
    p = subprocess.Popen(cmd, stdout=stdout, stderr=stderr,
                         stdin=subprocess.DEVNULL)
    PIDS.add(p.pid)
    _save_pids()
    return p


def reap(p):
    """wait4 the child: (status, cpu seconds user+system of it and of the
    children it waited for, e.g. fio's job processes)."""
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    PIDS.discard(p.pid)
    _save_pids()
    return p.returncode, ru.ru_utime + ru.ru_stime


# blk-throttle hands out its budget in slices (100 ms): I/O in the tail of
# the previous tool's slice would give the next tool a burst of leftover
# budget. Every run in the throttled cgroup starts after this much idle time,
# so each tool starts in a fresh slice.
THROTTLE_SETTLE_S = 0.3


def run_measured(cmd, cgroup=None):
    """Runs cmd to completion: (rc, stdout, stderr, cpu_s, wall_s)."""
    if cgroup:
        time.sleep(THROTTLE_SETTLE_S)
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = spawn(cmd, cgroup, fo, fe)
        rc, cpu = reap(p)
        wall = time.monotonic() - t0
        fo.seek(0)
        fe.seek(0)
        return (rc, fo.read().decode(errors="replace"),
                fe.read().decode(errors="replace"), cpu, wall)


def stop(p, sig=signal.SIGTERM, timeout=30):
    try:
        p.send_signal(sig)
    except ProcessLookupError:
        pass
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            PIDS.discard(p.pid)
            _save_pids()
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.1)
    p.kill()
    return reap(p)[0]


# ---- the three tools ---------------------------------------------------------

FIO_PCTS = [1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99]


class RunError(Exception):
    pass


def dp_run(t, job, ops=None):
    cmd = [ARGS.diskprobe, "run", "--pattern", job["pattern"],
           "--block-size", job["bs"], "--queue-depth", str(job["qd"]),
           "--format", "json"]
    if ops:
        cmd += ["--ops", str(ops)]
    else:
        cmd += ["--duration", "%gs" % ARGS.duration]
    cmd += t["dp_args"] + [t["dp_path"]]
    rc, so, se, cpu, wall = run_measured(cmd, t.get("cgroup"))
    try:
        d = json.loads(so)
    except ValueError:
        raise RunError("diskprobe rc %d: %s" % (rc, se.strip()[:300]))
    lat = d["latency_s"]
    qd = job["qd"]
    # ops counts the measured window only; the probe also ran qd warm-up
    # I/Os and drained up to qd more: the process's CPU paid for those too.
    ios = d["ops"] + 2 * qd
    return {
        "iops": d["iops"], "mean_s": lat["mean"], "p99_s": lat["p99"],
        "pcts_s": {"min": lat["min"], "50": lat["p50"], "90": lat["p90"],
                   "99": lat["p99"], "99.9": lat["p99.9"], "max": lat["max"]},
        "ios": ios, "n": d["ops"], "cpu_s": cpu, "wall_s": wall,
        "self_cpu_per_io_s": (d["cpu_s"]["user"] + d["cpu_s"]["system"]) /
        d["ops"] if d["ops"] else None,
        "errors": d.get("errors"), "rc": rc}


def fio_run(t, job, number_ios=None, lat_log=None):
    cmd = ["fio", "--name=bench", "--filename=" + t["fio_path"],
           "--rw=" + job["fio_rw"], "--bs=" + job["bs"],
           "--iodepth=%d" % job["qd"], "--ioengine=libaio", "--direct=1",
           "--norandommap", "--randrepeat=0", "--invalidate=0",
           "--allow_file_create=0", "--output-format=json",
           "--lat_percentiles=1", "--clat_percentiles=0",
           "--percentile_list=" + ":".join("%g" % p for p in FIO_PCTS)]
    cmd += job.get("fio_extra", []) + t["fio_args"]
    if number_ios:
        cmd += ["--number_ios=%d" % number_ios]
    else:
        cmd += ["--time_based", "--runtime=%gs" % ARGS.duration]
    if lat_log:
        cmd += ["--write_lat_log=" + lat_log, "--log_avg_msec=0"]
    rc, so, se, cpu, wall = run_measured(cmd, t.get("cgroup"))
    try:
        d = json.loads(so[so.index("{"):])
    except ValueError:
        raise RunError("fio rc %d: %s" % (rc, se.strip()[:300]))
    j = d["jobs"][0]
    ddir = "write" if job["writes"] else "read"
    r = j[ddir]
    lat = r["lat_ns"]
    pct = {("%g" % float(k)): v / 1e9
           for k, v in lat.get("percentile", {}).items()}
    pct["min"] = lat["min"] / 1e9
    pct["max"] = lat["max"] / 1e9
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    runtime_s = j["job_runtime"] / 1000.0
    return {
        "iops": r["iops"], "mean_s": lat["mean"] / 1e9,
        "p99_s": pct.get("99"), "pcts_s": pct, "ios": ios, "n": r["total_ios"],
        "cpu_s": cpu,
        "wall_s": wall,
        "self_cpu_per_io_s": (j["usr_cpu"] + j["sys_cpu"]) / 100.0 *
        runtime_s / ios if ios else None,
        "errors": j.get("error"), "rc": rc}


def ioping_run(t, job):
    # fio_path: the device, or the probe file itself (not its directory).
    cmd = ["ioping", "-D", "-B", "-q", "-i", "0", "-s", job["bs"],
           "-w", "%gs" % ARGS.duration] + t["ioping_args"] + [t["fio_path"]]
    rc, so, se, cpu, wall = run_measured(cmd, t.get("cgroup"))
    f = so.split()
    if rc != 0 or len(f) < 8:
        raise RunError("ioping rc %d: %s" % (rc, se.strip()[:300]))
    # -B: count, time, iops, bytes/s, min, avg, max, mdev (ns) ...
    return {"iops": float(f[2]), "mean_s": float(f[5]) / 1e9,
            "min_s": float(f[4]) / 1e9, "max_s": float(f[6]) / 1e9,
            "ios": int(f[0]), "cpu_s": cpu, "wall_s": wall, "rc": rc}


# ---- targets and jobs ----------------------------------------------------------

JOBS = [
    # name, diskprobe pattern, block size, queue depth, fio rw, writes
    ("randread-qd1", "randread", "8k", 1, "randread", False),
    ("randread-qd32", "randread", "8k", 32, "randread", False),
    ("seqread-qd4", "seqread", "1m", 4, "read", False),
    ("randwrite-qd1", "randwrite", "8k", 1, "randwrite", True),
    ("seqwrite-qd4", "seqwrite", "1m", 4, "write", True),
    # RWF_DSYNC per write; fio's equivalent is O_DSYNC on the file.
    ("syncwrite-qd1", "syncwrite", "8k", 1, "randwrite", True),
]


def supported_patterns():
    rc, so, se, _, _ = run_measured([ARGS.diskprobe, "run", "--help"])
    text = so + se
    return {p for p in ("randread", "seqread", "randwrite", "seqwrite",
                        "syncwrite") if p in text}


def make_jobs(names, patterns):
    jobs = []
    for name, pat, bs, qd, rw, writes in JOBS:
        if name not in names or pat not in patterns:
            continue
        j = {"name": name, "pattern": pat, "bs": bs, "qd": qd, "fio_rw": rw,
             "writes": writes, "ioping": name == "randread-qd1"}
        if pat == "syncwrite":
            j["fio_extra"] = ["--sync=dsync"]
        jobs.append(j)
    return jobs


def parse_size(s):
    m = re.fullmatch(r"(\d+)([kmgt]?)", s.strip().lower())
    if not m:
        raise SystemExit("bad size %r" % s)
    return int(m.group(1)) << (10 * " kmgt".index(m.group(2) or " "))


def make_targets(patterns):
    targets = []
    read_jobs = ["randread-qd1", "randread-qd32", "seqread-qd4"]
    targets.append({
        "name": "memloop", "kind": "dev",
        "label": "loop device over a file in /dev/shm (direct-io=on)",
        "dp_path": ARGS.shm_dev, "dp_args": [], "fio_path": ARGS.shm_dev,
        "fio_args": [], "ioping_args": [],
        "jobs": make_jobs(read_jobs, patterns)})
    # The probe file: 4 KiB header (DP_PROBE_HEADER_BYTES), data after it.
    size = parse_size(ARGS.file_size)
    header = 4096
    pfile = os.path.join(ARGS.probe_dir, "diskprobe.probe")
    targets.append({
        "name": "file", "kind": "file",
        "label": "probe file %s (%s) on %s" % (pfile, ARGS.file_size,
                                               device_of(pfile)),
        "dp_path": ARGS.probe_dir, "dp_args": ["--file-size", ARGS.file_size],
        "fio_path": pfile,
        "fio_args": ["--offset=%d" % header, "--size=%d" % (size - header)],
        "ioping_args": ["-o", str(header), "-S", str(size - header)],
        "jobs": make_jobs(read_jobs + ["randwrite-qd1", "seqwrite-qd4",
                                       "syncwrite-qd1"], patterns)})
    targets.append({
        "name": "throttled", "kind": "dev",
        "label": "loop device over /dev/shm, blkio read_iops_device %d" %
        ARGS.throttle_iops,
        "dp_path": ARGS.throttled_dev, "dp_args": [],
        "fio_path": ARGS.throttled_dev, "fio_args": [], "ioping_args": [],
        "cgroup": ARGS.cgroup, "true_iops": ARGS.throttle_iops,
        "jobs": make_jobs(["randread-qd1", "randread-qd32"], patterns)})
    return targets


def device_of(path):
    try:
        st = os.stat(path)
        mm = "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
        name = os.path.basename(os.path.realpath("/sys/dev/block/" + mm))
        model = ""
        disk = os.path.realpath("/sys/dev/block/" + mm)
        for cand in (disk, os.path.dirname(disk)):
            mf = os.path.join(cand, "device", "model")
            if os.path.exists(mf):
                model = open(mf).read().strip()
                break
        rot = ""
        for cand in (disk, os.path.dirname(disk)):
            rf = os.path.join(cand, "queue", "rotational")
            if os.path.exists(rf):
                rot = "rotational" if open(rf).read().strip() == "1" else \
                    "non-rotational"
                break
        return " ".join(x for x in (name, model, rot) if x)
    except OSError:
        return "unknown device"


# ---- the io section --------------------------------------------------------------


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fixed_cost(t, job, tool):
    """Start-up and tear-down CPU of a tool for this job: a run of (almost)
    one I/O. Subtracted from every timed run, so CPU per I/O is the
    marginal cost of the I/O loop for both tools alike."""
    cpus, ios = [], []
    for _ in range(ARGS.fixed_reps):
        r = dp_run(t, job, ops=1) if tool == "dp" else fio_run(
            t, job, number_ios=1)
        cpus.append(r["cpu_s"])
        ios.append(r["ios"])
    return {"cpu_s": med(cpus), "ios": med(ios)}


def cpu_per_io(r, fixed):
    n = r["ios"] - fixed["ios"]
    if n <= 0:
        return None
    return max(r["cpu_s"] - fixed["cpu_s"], 0.0) / n


def io_section(raw):
    patterns = supported_patterns()
    note("diskprobe patterns: " + " ".join(sorted(patterns)))
    targets = make_targets(patterns)
    if ARGS.targets:
        targets = [t for t in targets if t["name"] in ARGS.targets.split(",")]
    results = []
    for t in targets:
        for job in t["jobs"]:
            if ARGS.jobs and job["name"] not in ARGS.jobs.split(","):
                continue
            note("%s %s: fixed costs, then %d pairs of %gs" %
                 (t["name"], job["name"], ARGS.pairs, ARGS.duration))
            res = {"target": t["name"], "job": job["name"], "pairs": []}
            try:
                fx = {"dp": fixed_cost(t, job, "dp"),
                      "fio": fixed_cost(t, job, "fio")}
                res["fixed"] = fx
                for i in range(ARGS.pairs):
                    pair = {"dp": dp_run(t, job), "fio": fio_run(t, job)}
                    if job["ioping"]:
                        pair["ioping"] = ioping_run(t, job)
                    for k in ("dp", "fio"):
                        pair[k]["cpu_per_io_s"] = cpu_per_io(pair[k], fx[k])
                    res["pairs"].append(pair)
                if (job["name"] == "randread-qd1" and t["name"] != "throttled"
                        and not ARGS.quick):
                    # One more fio run logging every I/O's latency, for the
                    # plot only (logging costs fio CPU: not a timed pair).
                    prefix = os.path.join(ARGS.out, "fio-lat-" + t["name"])
                    fio_run(t, job, lat_log=prefix)
                    res["lat_log"] = prefix + "_lat.1.log"
                    for f in glob.glob(prefix + "_[cs]lat.1.log"):
                        os.unlink(f)
            except RunError as e:
                res["error"] = str(e)
                note("%s %s: %s" % (t["name"], job["name"], e))
            summarize(res, t)
            results.append(res)
    raw["targets"] = [{k: v for k, v in t.items() if k != "jobs"}
                      for t in targets]
    raw["io"] = results
    print_io_tables(results, targets)
    plot(results)
    return results


def summarize(res, t):
    s = {}
    P = res["pairs"]
    rr = lambda key, a="dp", b="fio": [ratio(p[a].get(key), p[b].get(key))
                                       for p in P if a in p and b in p]
    s["iops"] = rr("iops")
    s["mean"] = rr("mean_s")
    s["p99"] = rr("p99_s")
    s["cpu"] = rr("cpu_per_io_s")
    s["cpu_self"] = rr("self_cpu_per_io_s")
    s["ioping_mean"] = rr("mean_s", "dp", "ioping")
    if t.get("true_iops"):
        s["dp_true"] = [p["dp"]["iops"] / t["true_iops"] for p in P]
        s["fio_true"] = [p["fio"]["iops"] / t["true_iops"] for p in P]
    res["ratios"] = s
    res["median"] = {k: med(v) for k, v in s.items()}
    res["abs"] = {
        tool: {k: med([p[tool].get(k) for p in P if tool in p])
               for k in ("iops", "mean_s", "p99_s", "cpu_per_io_s",
                         "self_cpu_per_io_s")}
        for tool in ("dp", "fio", "ioping")}
    res["pcts"] = {
        tool: {q: med([p[tool]["pcts_s"].get(q) for p in P])
               for q in (P[0][tool]["pcts_s"] if P else {})}
        for tool in ("dp", "fio")}


def fmt(x, spec="%.3f"):
    return "-" if x is None else spec % x


def rng(xs):
    xs = [x for x in xs if x is not None]
    return "%.2f-%.2f" % (min(xs), max(xs)) if xs else "-"


def print_io_tables(results, targets):
    out()
    out("Ratios diskprobe/fio: median over %d A/B pairs (diskprobe, fio%s, "
        "diskprobe, fio, ...)." % (ARGS.pairs, ", ioping on QD1"))
    out("1.000 = same as fio. IOPS higher is better; latency and CPU/IO "
        "lower is better.")
    out()
    hdr = ("%-9s %-14s %6s %10s %6s %6s %7s %8s %7s %7s %7s" %
           ("target", "job", "IOPS", "(range)", "mean", "p99", "CPU/IO",
            "CPU/IO*", "ioping", "dp/true", "fio/true"))
    out(hdr)
    out("-" * len(hdr))
    for r in results:
        if "error" in r and not r["pairs"]:
            out("%-9s %-14s error: %s" % (r["target"], r["job"], r["error"]))
            continue
        m = r["median"]
        out("%-9s %-14s %6s %10s %6s %6s %7s %8s %7s %7s %7s" % (
            r["target"], r["job"], fmt(m["iops"]), rng(r["ratios"]["iops"]),
            fmt(m["mean"]), fmt(m["p99"]), fmt(m["cpu"]), fmt(m["cpu_self"]),
            fmt(m["ioping_mean"]), fmt(m.get("dp_true")),
            fmt(m.get("fio_true"))))
    out()
    out("Columns: IOPS, mean, p99 = diskprobe/fio of IOPS, mean latency, p99 "
        "latency (fio: lat_ns,")
    out("submit to completion, as diskprobe). CPU/IO = (user+system CPU of "
        "the whole process, from")
    out("wait4(), minus the tool's start-up cost measured by a 1-I/O run) / "
        "I/Os issued. CPU/IO* = the")
    out("tools' self-reported I/O-loop CPU (diskprobe cpu_s; fio "
        "usr_cpu+sys_cpu x runtime) / I/Os.")
    out("ioping = diskprobe/ioping -D mean latency (QD1). dp/true, fio/true "
        "= measured IOPS / the")
    out("blkio throttle (throttled target only).")
    out()
    out("Medians of the absolute values (latency in us, CPU in us per I/O):")
    hdr = ("%-9s %-14s | %9s %8s %8s %6s | %9s %8s %8s %6s | %7s" %
           ("target", "job", "dp IOPS", "mean", "p99", "CPU", "fio IOPS",
            "mean", "p99", "CPU", "ioping"))
    out(hdr)
    out("-" * len(hdr))
    us = lambda x: fmt(x * 1e6 if x is not None else None, "%.1f")
    for r in results:
        if not r["pairs"]:
            continue
        a = r["abs"]
        out("%-9s %-14s | %9s %8s %8s %6s | %9s %8s %8s %6s | %7s" % (
            r["target"], r["job"], fmt(a["dp"]["iops"], "%.0f"),
            us(a["dp"]["mean_s"]), us(a["dp"]["p99_s"]),
            us(a["dp"]["cpu_per_io_s"]), fmt(a["fio"]["iops"], "%.0f"),
            us(a["fio"]["mean_s"]), us(a["fio"]["p99_s"]),
            us(a["fio"]["cpu_per_io_s"]), us(a["ioping"]["mean_s"])))
    out()
    for t in targets:
        out("  %-9s %s" % (t["name"], t["label"]))


def noisy(r, key="iops", spread=1.25):
    """' (noisy)' when the pairs' ratios spread more than `spread` (max/min):
    then the median of a few pairs cannot settle a 3 % question."""
    xs = [x for x in r["ratios"].get(key, []) if x]
    return " (noisy)" if xs and max(xs) / min(xs) > spread else ""


def goals(results, cd, alloc):
    out()
    out("Targets: accuracy and cost (ok / MISS):")
    rows = []

    def row(what, val, ok):
        rows.append((what, val, ok))

    R = [r for r in results if r["pairs"]]
    if R:
        untrottled = [r for r in R if r["target"] != "throttled"]
        # memloop QD32 has its own target (>= fio) below.
        iops = [r for r in untrottled if not (
            r["target"] == "memloop" and r["job"] == "randread-qd32")]
        off = [r for r in iops if abs(r["median"]["iops"] - 1) > 0.03]
        row("IOPS within 3%% of fio (%d jobs)" % len(iops),
            "all" if not off else "outside: " + ", ".join(
                "%s %s %.3f%s" % (r["target"], r["job"], r["median"]["iops"],
                                  noisy(r)) for r in off), not off)
        for r in R:
            if r["target"] == "memloop" and r["job"] == "randread-qd32":
                row("memloop QD32 IOPS >= fio",
                    fmt(r["median"]["iops"]) + noisy(r),
                    r["median"]["iops"] >= 1.0)
        cpus = [r for r in untrottled if r["median"]["cpu"] is not None]
        if cpus:
            w = max(cpus, key=lambda r: r["median"]["cpu"])
            row("CPU/IO <= fio, every job (worst)",
                "%.3f %s %s" % (w["median"]["cpu"], w["target"], w["job"]),
                w["median"]["cpu"] <= 1.0)
        for r in untrottled:
            if r["job"] == "randread-qd1":
                row("QD1 mean latency within 5%% of fio (%s)" % r["target"],
                    fmt(r["median"]["mean"]) + noisy(r, "mean"),
                    abs(r["median"]["mean"] - 1) <= 0.05)
        for r in R:
            if r["target"] == "throttled":
                row("throttled measured/true within 3%% (%s)" % r["job"],
                    "dp %.3f, fio %.3f" % (r["median"]["dp_true"],
                                           r["median"]["fio_true"]),
                    abs(r["median"]["dp_true"] - 1) <= 0.03)
    if cd and cd.get("added_rss_kib") is not None:
        row("collectd: RSS added by 8 targets < 4 MiB",
            "%.2f MiB (peak %+.2f)" % (
                cd["added_rss_kib"] / 1024,
                (cd["hwm_kib"]["targets"] - cd["hwm_kib"]["none"]) / 1024),
            cd["added_rss_kib"] < 4096)
    if cd and cd.get("added_rss_nowrite_kib") is not None:
        row("  the same, no write plugin (plugin alone)",
            "%.2f MiB" % (cd["added_rss_nowrite_kib"] / 1024),
            cd["added_rss_nowrite_kib"] < 4096)
    if alloc and alloc.get("per_io_allocs") is not None:
        row("no allocation per I/O in steady state",
            "%+d allocs for %dx the I/Os" % (alloc["per_io_allocs"],
                                           alloc["factor"]),
            alloc["per_io_allocs"] == 0 and alloc.get("engine_mallocs", 0) == 0)
    for what, val, ok in rows:
        out("  %-45s %-34s %s" % (what, val, "ok" if ok else "MISS"))
    out("  (noisy) = the pairs' ratios spread over more than 25 %: rerun, or "
        "raise PAIRS")


# ---- the plot ---------------------------------------------------------------


def read_lat_log(path, limit=400000):
    vals = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split(",")
                if len(parts) >= 2:
                    vals.append(int(parts[1]))
                    if len(vals) >= limit:
                        break
    except OSError:
        return []
    vals.sort()
    return vals


def curve(pcts, n):
    """(latency us, fraction of I/Os at or below) from a percentile dict:
    min at 0, max at 1 - 1/n (so the tail plot shows it at 1/n)."""
    pts = []
    for k, v in pcts.items():
        if v is None:
            continue
        if k == "min":
            q = 0.0
        elif k == "max":
            q = 1.0 - 1.0 / max(n, 2)
        else:
            q = float(k) / 100.0
        pts.append((v * 1e6, q))
    return sorted(pts, key=lambda p: p[1])


def plot(results):
    qd1 = [r for r in results if r["job"] == "randread-qd1" and r["pairs"]
           and r["target"] != "throttled"]
    if not qd1:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        note("matplotlib missing: no plot (apt-get install python3-matplotlib)")
        return
    fig, axes = plt.subplots(2, len(qd1), figsize=(6.5 * len(qd1), 8.5),
                             squeeze=False)
    for col, r in enumerate(qd1):
        vals = read_lat_log(r.get("lat_log", ""))
        n = len(vals)
        for row, ax in enumerate(axes[:, col]):
            tail = row == 1
            y = (lambda q: 1.0 - q) if tail else (lambda q: q)
            if n:
                step = max(1, n // 5000)
                idx = sorted(set(range(0, n, step)) |
                             set(range(max(0, n - 500), n)))
                ax.plot([vals[i] / 1e3 for i in idx],
                        [y(i / n) for i in idx], color="0.6", lw=1,
                        label="fio, every I/O of one extra logged run "
                        "(%d I/Os)" % n)
            for tool, colr, name in (("fio", "tab:blue", "fio"),
                                     ("dp", "tab:red", "diskprobe")):
                for i, p in enumerate(r["pairs"]):
                    c = curve(p[tool]["pcts_s"], p[tool].get("n", 1000))
                    ax.plot([x for x, _ in c], [y(q) for _, q in c], "-",
                            color=colr, lw=0.6, alpha=0.5,
                            label=None if i else "%s, each of %d runs" % (
                                name, len(r["pairs"])))
                mc = curve(r["pcts"][tool], med(
                    [p[tool].get("n", 1000) for p in r["pairs"]]))
                ax.plot([x for x, _ in mc], [y(q) for _, q in mc],
                        "x" if tool == "fio" else "o", color=colr, ms=8,
                        mfc="none", mew=1.5,
                        label="%s, median per percentile%s" % (
                            name, " (lat_percentiles)" if tool == "fio" else
                            " (min p50 p90 p99 p99.9 max)"))
            ax.set_xscale("log")
            ax.set_xlabel("latency, us (log)")
            if tail:
                ax.set_yscale("log")
                ax.set_ylabel("fraction of I/Os slower (1 - CDF, log)")
            else:
                ax.set_ylabel("fraction of I/Os at or below (CDF)")
                ax.set_title("%s, 8 KiB randread QD1" % r["target"])
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, loc="upper right" if tail else "lower right")
    fig.suptitle("diskprobe vs fio, 8 KiB random reads at QD1: latency "
                 "percentiles of the timed runs (%s)" % time.strftime(
                     "%Y-%m-%d", time.gmtime()))
    fig.tight_layout()
    path = os.path.join(ARGS.out, "qd1-latency.png")
    fig.savefig(path, dpi=110)
    out()
    out("Plot: %s" % path)
    out("  per target, CDF and 1-CDF on log x: the percentiles each tool "
        "reported in every timed run")
    out("  (fio: %s and min/max; diskprobe: min p50 p90 p99 p99.9 max), "
        "their medians as markers," % ",".join("%g" % p for p in FIO_PCTS))
    out("  and in grey every I/O of one extra fio run with --write_lat_log "
        "(not a timed run).")


# ---- the collectd section ------------------------------------------------------

CD_PROBES = [  # name, pattern, block size, qd, duration s
    ("randread-qd1", "randread", "8k", 1, 0.1),
    ("randread-qd32", "randread", "8k", 32, 0.05),
    ("seqread", "seqread", "1M", 4, 0.05),
]
CD_TARGETS = 8
CD_FILE = "64M"
CD_INTERVAL = 5  # ProbeInterval, s


# The rest of a typical collectd: a few read plugins whose values go through
# the same write path, so "added by diskprobe" is what diskprobe adds to a
# collectd that already runs, not the cost of the write threads' first use.
CD_BASE_PLUGINS = ("cpu", "memory", "load", "interface", "disk")


def cd_conf(d, mode, extra_plugin_opts, plugin_dir, write=True):
    conf = ["# generated by contrib/evaluation/bench/bench.py (%s)" % mode,
            'Hostname "bench-%s"' % mode, "FQDNLookup false",
            'BaseDir "%s"' % d, 'PIDFile "%s/collectd.pid"' % d,
            'PluginDir "%s"' % plugin_dir,
            'TypesDB "/usr/share/collectd/types.db"',
            'TypesDB "%s"' % ARGS.types_db, "Interval 1",
            "LoadPlugin logfile", "<Plugin logfile>", "  LogLevel info",
            '  File "%s/collectd.log"' % d, "  Timestamp true", "</Plugin>"]
    conf += ["LoadPlugin " + p for p in CD_BASE_PLUGINS]
    if write:
        conf += ["LoadPlugin rrdtool", "<Plugin rrdtool>",
                 '  DataDir "%s/rrd"' % d, "</Plugin>"]
    if mode != "none":
        conf += ["LoadPlugin diskprobe", "<Plugin diskprobe>"]
        conf += ["  " + o for o in extra_plugin_opts]
        if mode == "targets":
            for i in range(CD_TARGETS):
                conf += ['  <Target "t%d">' % i,
                         '    Path "%s"' % os.path.join(
                             ARGS.collectd_dir, "probes", "t%d" % i),
                         '    FileSize "%s"' % CD_FILE,
                         "    ProbeInterval %d" % CD_INTERVAL,
                         "    Timeout 10"]
                for name, pat, bs, qd, dur in CD_PROBES:
                    conf += ['    <Probe "%s">' % name,
                             '      Pattern "%s"' % pat,
                             '      BlockSize "%s"' % bs,
                             "      QueueDepth %d" % qd,
                             "      Duration %g" % dur, "    </Probe>"]
                conf.append("  </Target>")
        conf.append("</Plugin>")
    os.makedirs(os.path.join(d, "rrd"), exist_ok=True)
    path = os.path.join(d, "collectd.conf")
    with open(path, "w") as f:
        f.write("\n".join(conf) + "\n")
    return path


def proc_status(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])  # kB
    except OSError:
        return None


def proc_cpu(pid):
    """{thread comm: cpu seconds} and the process total (utime+stime)."""
    tick = os.sysconf("SC_CLK_TCK")
    threads = {}
    for tdir in glob.glob("/proc/%d/task/*" % pid):
        try:
            stat = open(tdir + "/stat").read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        f = stat[stat.rindex(")") + 2:].split()
        threads[tdir.rsplit("/", 1)[1] + ":" + comm] = \
            (int(f[11]) + int(f[12])) / tick
    try:
        stat = open("/proc/%d/stat" % pid).read()
        f = stat[stat.rindex(")") + 2:].split()
        total = (int(f[11]) + int(f[12])) / tick
    except OSError:
        total = None
    return total, threads


def collectd_section(raw):
    base = ARGS.collectd_dir
    plugin_dir = os.path.join(base, "plugins")
    os.makedirs(plugin_dir, exist_ok=True)
    # PluginDir refuses symlinks: copies.
    for p in ("logfile", "rrdtool") + CD_BASE_PLUGINS:
        shutil.copy("/usr/lib/collectd/%s.so" % p, plugin_dir)
    shutil.copy(ARGS.plugin, os.path.join(plugin_dir, "diskprobe.so"))
    cd = {"targets": CD_TARGETS, "file_size": CD_FILE,
          "probe_interval_s": CD_INTERVAL, "probes": CD_PROBES,
          "seconds": ARGS.collectd_seconds}

    # Does this plugin know DutyCycle? Then lift it to 100 %: the point is
    # to measure probing, not the budget stretching the interval.
    opts = []
    d = os.path.join(base, "probe-opts")
    os.makedirs(d, exist_ok=True)
    c = cd_conf(d, "empty", ["DutyCycle 100"], plugin_dir)
    if run_measured(["collectd", "-T", "-C", c])[0] == 0:
        opts = ["DutyCycle 100"]
    cd["plugin_options"] = opts

    # Lay the probe files out beforehand (as diskprobe run does; the plugin
    # reuses them), so the measured window has no layout I/O in it.
    os.makedirs(os.path.join(base, "probes"), exist_ok=True)
    for i in range(CD_TARGETS):
        rc, so, se, _, _ = run_measured(
            [ARGS.diskprobe, "run", "--ops", "1", "--file-size", CD_FILE,
             "--format", "json", os.path.join(base, "probes", "t%d" % i)])
        if rc != 0:
            note("collectd: cannot lay out probe file %d: %s" % (i, se))
            return None

    # Phase 1, the figures: the same collectd without diskprobe, with the
    # plugin but no target, and with 8 targets, side by side. Phase 2, shorter:
    # without a write plugin, what the plugin itself holds (no RRD writing),
    # with the callgrind instance alongside. QUICK runs both phases at once
    # (memory is unaffected; CPU then shares the disk with a second prober).
    ph1_modes = {"none": ("none", True), "empty": ("empty", True),
                 "targets": ("targets", True)}
    ph2_modes = {"none-nowrite": ("none", False),
                 "targets-nowrite": ("targets", False)}
    if ARGS.quick:
        os.makedirs(os.path.join(base, "targets"), exist_ok=True)
        cgp = start_callgrind(os.path.join(base, "targets"), plugin_dir, opts)
        both = run_instances(base, plugin_dir, opts,
                             dict(ph1_modes, **ph2_modes),
                             ARGS.collectd_seconds)
        if both is None:
            finish_callgrind(cgp)
            return None
        ph1, ph2 = ({k: ({m: v[m] for m in modes} if isinstance(v, dict)
                         and set(modes) <= set(v) else v)
                     for k, v in both.items()} for modes in (ph1_modes,
                                                             ph2_modes))
    else:
        ph1 = run_instances(base, plugin_dir, opts, ph1_modes,
                            ARGS.collectd_seconds)
        if ph1 is None:
            return None
        cgp = start_callgrind(os.path.join(base, "targets"), plugin_dir, opts)
        ph2 = run_instances(base, plugin_dir, opts, ph2_modes,
                            max(20, ARGS.collectd_seconds // 2))
    cd["callgrind"] = finish_callgrind(cgp)
    cd.update(ph1)
    if ph2:
        cd["nowrite"] = ph2
        cd["added_rss_nowrite_kib"] = (ph2["rss_kib"]["targets-nowrite"] -
                                       ph2["rss_kib"]["none-nowrite"])
    cd["added_rss_kib"] = cd["rss_kib"]["targets"] - cd["rss_kib"]["none"]
    tdir = os.path.join(base, "targets")
    rrds = glob.glob(os.path.join(tdir, "rrd", "*", "diskprobe-*", "*.rrd"))
    cd["rrd_files"] = len(rrds)
    log = open(os.path.join(tdir, "collectd.log")).read()
    cd["log_errors"] = [l for l in log.splitlines() if "[error]" in l
                        or "ERROR" in l][:5]
    # Probe seconds in the window (nominal: every target, every interval).
    cd["probe_s_nominal"] = (cd["window_s"] / CD_INTERVAL * CD_TARGETS *
                             sum(p[4] for p in CD_PROBES))

    raw["collectd"] = cd
    print_collectd(cd)
    return cd


def run_instances(base, plugin_dir, opts, modes, seconds):
    """Runs one collectd per mode side by side for `seconds`; after a warm-up
    samples VmRSS every second and CPU over the window."""
    procs, dirs = {}, {}
    for m, (dmode, write) in modes.items():
        dirs[m] = os.path.join(base, m)
        os.makedirs(dirs[m], exist_ok=True)
        c = cd_conf(dirs[m], dmode, opts, plugin_dir, write)
        procs[m] = spawn(["collectd", "-f", "-C", c],
                         stdout=open(os.path.join(dirs[m], "stdout"), "w"),
                         stderr=subprocess.STDOUT)
    warm = max(CD_INTERVAL * 2 + 2, seconds // 4)
    note("collectd: %s side by side for %ds, warm-up %ds" % (
        " / ".join(modes), seconds, warm))
    time.sleep(warm)
    for m in modes:
        if procs[m].poll() is not None:
            note("collectd (%s) exited early; see %s" % (m, dirs[m]))
            for p in procs.values():
                stop(p)
            return None
    t0 = time.monotonic()
    cpu0 = {m: proc_cpu(procs[m].pid) for m in modes}
    rss = {m: [] for m in modes}
    while time.monotonic() - t0 < seconds - warm:
        for m in modes:
            rss[m].append(proc_status(procs[m].pid, "VmRSS"))
        time.sleep(1)
    window = time.monotonic() - t0
    cpu1 = {m: proc_cpu(procs[m].pid) for m in modes}
    hwm = {m: proc_status(procs[m].pid, "VmHWM") for m in modes}
    for m in modes:
        stop(procs[m])
    for m in modes:
        for f in ("collectd.conf", "collectd.log"):
            dst = os.path.join(ARGS.out, "collectd", m)
            os.makedirs(dst, exist_ok=True)
            if os.path.exists(os.path.join(dirs[m], f)):
                shutil.copy(os.path.join(dirs[m], f), dst)
    res = {"rss_kib": {m: med(rss[m]) for m in modes},
           "rss_max_kib": {m: max(x for x in rss[m] if x) for m in modes},
           "hwm_kib": hwm, "window_s": window, "seconds": seconds}
    cpu = {}
    for m in modes:
        tot = cpu1[m][0] - cpu0[m][0]
        thr = {}
        for k, v in cpu1[m][1].items():
            name = k.split(":", 1)[1]
            thr[name] = thr.get(name, 0) + v - cpu0[m][1].get(k, 0)
        cpu[m] = {"total_s": tot, "threads": thr}
    res["cpu"] = cpu
    return res


def start_callgrind(d, plugin_dir, opts):
    """collectd under callgrind, collecting only inside diskprobe_read and
    dumping after each call: one file per call, its total = that call's
    instructions (inclusive: our loop plus collectd's dispatch). Runs while
    phase 2 runs (phase 2 reports memory only, which it does not disturb)."""
    if not shutil.which("valgrind"):
        return None
    vdir = os.path.join(ARGS.out, "valgrind")
    os.makedirs(vdir, exist_ok=True)
    for f in glob.glob(os.path.join(vdir, "callgrind.collectd.*")):
        os.unlink(f)
    cg = os.path.join(d, "callgrind")
    os.makedirs(cg, exist_ok=True)
    c = cd_conf(cg, "targets", opts, plugin_dir)
    note("collectd: one more under callgrind for the read callback")
    return spawn(["valgrind", "--tool=callgrind", "--toggle-collect=diskprobe_read",
               "--dump-after=diskprobe_read", "--collect-systime=no",
               "--compress-strings=no", "--compress-pos=no",
               "--callgrind-out-file=" + os.path.join(
                   vdir, "callgrind.collectd.%p"),
               "collectd", "-f", "-C", c],
              stdout=open(os.path.join(cg, "valgrind.out"), "w"),
              stderr=subprocess.STDOUT)


def finish_callgrind(p):
    if p is None:
        return None
    stop(p, timeout=60)
    vdir = os.path.join(ARGS.out, "valgrind")
    per_call = []
    for f in sorted(glob.glob(os.path.join(vdir, "callgrind.collectd.*"))):
        c = parse_callgrind(f)
        if c["total"] and "diskprobe_read" in c["trigger"]:
            per_call.append(c)
    if not per_call:
        return {"calls": 0}
    ir = [c["total"] for c in per_call]
    disp = [c["calls"].get("plugin_dispatch_values", (0, 0)) for c in per_call]
    nvals = sum(n for n, _ in disp)
    return {"calls": len(per_call), "ir_min": min(ir), "ir_median": med(ir),
            "ir_max": max(ir), "ir_mean": statistics.mean(ir),
            "values_per_call": nvals / len(per_call),
            "dispatch_share": sum(c for _, c in disp) / sum(ir),
            "ir_per_value": sum(ir) / nvals if nvals else None}


def parse_callgrind(path):
    """Totals of a callgrind file written with --compress-strings=no, and
    per callee name (count of calls, inclusive instructions of them)."""
    res = {"total": None, "trigger": "", "calls": {}}
    cfn, pending = None, None
    with open(path) as fh:
        for line in fh:
            if pending is not None:
                parts = line.split()
                if len(parts) >= 2:
                    n, c = res["calls"].get(cfn, (0, 0))
                    res["calls"][cfn] = (n + pending, c + int(parts[1]))
                pending, cfn = None, None
            elif line.startswith("cfn="):
                cfn = line[4:].strip()
            elif line.startswith("calls=") and cfn:
                pending = int(line[6:].split()[0])
            elif line.startswith("summary:") or line.startswith("totals:"):
                res["total"] = int(line.split()[1])
            elif line.startswith("desc: Trigger:"):
                res["trigger"] = line
    return res


def print_collectd(cd):
    out()
    out("collectd with the plugin: %d targets (probe files of %s in separate "
        "dirs on %s)," % (cd["targets"], cd["file_size"],
                          os.path.dirname(ARGS.collectd_dir)))
    out("ProbeInterval %ds, Interval 1, probes %s%s;" % (
        cd["probe_interval_s"], ", ".join(
            "%s %s QD%d %gs" % (n, b, q, s) for n, _, b, q, s in cd["probes"]),
        (", " + " ".join(cd["plugin_options"])) if cd["plugin_options"]
        else ""))
    out("every instance also loads %s and writes RRD files (rrdtool)." %
        ", ".join(CD_BASE_PLUGINS))
    out("%s side by side for %ds; sampled every second after warm-up for "
        "%.0fs." % ("Five instances (QUICK: both phases at once)" if ARGS.quick
                    else "Three instances", cd["seconds"], cd["window_s"]))
    out()
    out("%-34s %12s %12s %12s" % ("", "no diskprobe", "no targets",
                                  "8 targets"))
    r = cd["rss_kib"]
    out("%-34s %12.2f %12.2f %12.2f" % ("VmRSS, median (MiB)",
                                        r["none"] / 1024, r["empty"] / 1024,
                                        r["targets"] / 1024))
    h = cd["hwm_kib"]
    out("%-34s %12.2f %12.2f %12.2f" % ("VmHWM, peak (MiB)", h["none"] / 1024,
                                        h["empty"] / 1024,
                                        h["targets"] / 1024))
    c = cd["cpu"]
    w = cd["window_s"]
    out("%-34s %12.3f %12.3f %12.3f" % ("CPU, s per minute", *(
        c[m]["total_s"] * 60 / w for m in ("none", "empty", "targets"))))
    out()
    out("RSS added by diskprobe with %d targets: %.2f MiB (VmRSS median, 8 "
        "targets minus no diskprobe)" % (cd["targets"],
                                         cd["added_rss_kib"] / 1024))
    if cd.get("nowrite"):
        out("  without any write plugin (%ds run): %.2f MiB -- the plugin's "
            "own memory, no RRD writing" % (cd["nowrite"]["seconds"],
                                            cd["added_rss_nowrite_kib"] / 1024))
    dp = sum(v for k, v in c["targets"]["threads"].items()
             if k.startswith("diskprobe"))
    extra = c["targets"]["total_s"] - c["none"]["total_s"]
    out("CPU added by diskprobe: %.2f%% of one core (%.2f s per minute); its "
        "worker threads %.2f%%," % (100 * extra / w, 60 * extra / w,
                                    100 * dp / w))
    out("  the rest (read callback, dispatch, RRD writes of its values) "
        "%.2f%%" % (100 * (extra - dp) / w))
    if cd["probe_s_nominal"]:
        out("  = %.0f ms of worker CPU per second of probing (%.1f "
            "probe-seconds nominal in the window)" % (
                1000 * dp / cd["probe_s_nominal"], cd["probe_s_nominal"]))
    out("RRD files written for diskprobe: %d; error lines in its log: %d" %
        (cd["rrd_files"], len(cd["log_errors"])))
    for l in cd["log_errors"]:
        out("  " + l)
    g = cd.get("callgrind")
    if g and g.get("calls"):
        out("Read callback diskprobe_read (callgrind, inclusive of collectd's "
            "dispatch): %d calls," % g["calls"])
        out("  instructions per call: min %d, median %d, mean %d, max %d" % (
            g["ir_min"], g["ir_median"], g["ir_mean"], g["ir_max"]))
        out("  %.1f values dispatched per call, %.0f instructions per value; "
            "%.0f%% of it inside plugin_dispatch_values" % (
                g["values_per_call"], g["ir_per_value"] or 0,
                100 * g["dispatch_share"]))
    elif g is not None:
        out("Read callback: callgrind recorded no call (see %s/valgrind)" %
            ARGS.out)


# ---- the alloc section ------------------------------------------------------------


def alloc_section(raw):
    vdir = os.path.join(ARGS.out, "valgrind")
    os.makedirs(vdir, exist_ok=True)
    res = {"runs": []}
    small, factor = (1000 if ARGS.quick else 2000), 10
    note("alloc: memcheck heap totals for %d vs %d I/Os, callgrind in "
         "dp_engine_run" % (small, small * factor))
    allocs = {}
    for qd in (1, 32):
        for n in (small, small * factor):
            rc, so, se, _, _ = run_measured(
                ["valgrind", "--tool=memcheck", "--leak-check=no",
                 ARGS.diskprobe, "run", "--queue-depth", str(qd), "--ops",
                 str(n), "--duration", "60s", "--format", "json",
                 ARGS.alloc_dev])
            m = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees,"
                          r" ([\d,]+) bytes", se)
            a = int(m.group(1).replace(",", "")) if m else None
            b = int(m.group(3).replace(",", "")) if m else None
            try:
                ops = json.loads(so)["ops"]
            except ValueError:
                ops = None
            allocs[(qd, n)] = a
            res["runs"].append({"qd": qd, "ops": ops, "allocs": a,
                                "bytes": b})
    diffs = [allocs[(qd, small * factor)] - allocs[(qd, small)]
             for qd in (1, 32) if allocs[(qd, small)] is not None
             and allocs[(qd, small * factor)] is not None]
    res["per_io_allocs"] = max(diffs, key=abs) if diffs else None
    res["factor"] = factor

    # callgrind, collecting only inside dp_engine_run: calls to the
    # allocator from there, and user-space instructions per I/O.
    eng = []
    for qd in (1, 32):
        f = os.path.join(vdir, "callgrind.engine.qd%d" % qd)
        rc, so, se, _, _ = run_measured(
            ["valgrind", "--tool=callgrind", "--toggle-collect=dp_engine_run",
             "--compress-strings=no", "--compress-pos=no",
             "--callgrind-out-file=" + f, ARGS.diskprobe, "run",
             "--queue-depth", str(qd), "--ops", str(small * factor),
             "--duration", "60s", "--format", "json", ARGS.alloc_dev])
        try:
            ops = json.loads(so)["ops"] + 2 * qd
        except ValueError:
            continue
        c = parse_callgrind(f)
        total = c["total"]
        calls = {k: n for k, (n, _) in c["calls"].items()}
        mallocs = sum(v for k, v in calls.items() if re.fullmatch(
            r"(malloc|calloc|realloc|free|posix_memalign|aligned_alloc|"
            r"memalign|valloc|mmap|mmap64|munmap|brk|sbrk)", k))
        eng.append({"qd": qd, "ios": ops, "alloc_calls": mallocs,
                    "ir_per_io": total / ops if total else None,
                    "io_submit_calls": calls.get("io_submit"),
                    "io_getevents_calls": calls.get("io_getevents")})
    res["engine"] = eng
    res["engine_mallocs"] = sum(e["alloc_calls"] for e in eng)
    raw["alloc"] = res
    out()
    out("Allocations (valgrind memcheck, `diskprobe run --ops N` on the "
        "in-memory loop device):")
    for r in res["runs"]:
        out("  QD%-3d %6s I/Os counted: %s heap allocations, %s bytes" % (
            r["qd"], r["ops"], r["allocs"], r["bytes"]))
    if res["per_io_allocs"] is not None:
        out("  -> %+d allocations for %dx the I/Os: %s" % (
            res["per_io_allocs"], factor,
            "nothing allocated per I/O" if res["per_io_allocs"] == 0 else
            "ALLOCATES PER I/O"))
    for e in eng:
        out("  callgrind inside dp_engine_run, QD%d: %d allocator calls, "
            "%.0f user-space instructions per I/O, io_submit %s / "
            "io_getevents %s calls for %d I/Os" % (
                e["qd"], e["alloc_calls"], e["ir_per_io"] or 0,
                e["io_submit_calls"], e["io_getevents_calls"], e["ios"]))
    return res


# ---- main ---------------------------------------------------------------------


def header(raw, title="diskprobe benchmark vs fio and ioping (contrib/evaluation/bench)"):
    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True,
                                  shell=True).stdout.strip()
        except OSError:
            return ""
    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-").strip()
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "command": ARGS.command,
        "kernel": platform.release(),
        "cpu": "%s, %d cores" % (cpu, os.cpu_count()),
        "memory": sh("free -g | awk '/Mem:/{print $2\" GiB\"}'"),
        "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
        "diskprobe": sh("'%s' --version" % ARGS.diskprobe) + " (" + sh(
            "cd '%s' && git describe --always --dirty 2>/dev/null" %
            os.path.dirname(os.path.dirname(ARGS.diskprobe))) + ")",
        "fio": sh("fio --version"),
        "ioping": sh("ioping -v 2>&1 | head -1"),
        "collectd": sh("dpkg-query -W -f '${Package} ${Version}' "
                       "collectd-core 2>/dev/null"),
        "load": "%.2f %.2f %.2f (load average at the start)" % os.getloadavg(),
    }
    raw["meta"] = meta
    out(title)
    for k in ("date", "command", "kernel", "cpu", "memory", "os",
              "diskprobe", "fio", "ioping", "collectd", "load"):
        out("  %-10s %s" % (k, meta[k]))
    out("  %-10s %d pairs x %gs per job" % ("runs", ARGS.pairs,
                                             ARGS.duration))


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--pids", required=True)
    ap.add_argument("--diskprobe", required=True)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--duration", type=float, default=2)
    ap.add_argument("--command", default="")
    ap.add_argument("--shm-dev")
    ap.add_argument("--probe-dir")
    ap.add_argument("--file-size")
    ap.add_argument("--throttled-dev")
    ap.add_argument("--cgroup")
    ap.add_argument("--throttle-iops", type=int)
    ap.add_argument("--collectd-dir")
    ap.add_argument("--plugin")
    ap.add_argument("--types-db")
    ap.add_argument("--collectd-seconds", type=int, default=60)
    ap.add_argument("--alloc-dev")
    ap.add_argument("--jobs", default="")
    ap.add_argument("--fixed-reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--targets", default="")
    ARGS = ap.parse_args()
    os.makedirs(ARGS.out, exist_ok=True)
    raw = {}
    header(raw)
    t_start = time.monotonic()
    results, cd, alloc = [], None, None
    try:
        if ARGS.shm_dev and ARGS.probe_dir:
            results = io_section(raw)
        if ARGS.collectd_dir:
            cd = collectd_section(raw)
        if ARGS.alloc_dev:
            alloc = alloc_section(raw)
        goals(results, cd, alloc)
    finally:
        for pid in list(PIDS):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        out()
        out("Total time %.0f s, load average at the end %.2f %.2f %.2f. "
            "Results: %s" % ((time.monotonic() - t_start,) + os.getloadavg() +
                             (ARGS.out,)))
        with open(os.path.join(ARGS.out, "results.txt"), "w") as f:
            f.write("\n".join(LOG) + "\n")
        with open(os.path.join(ARGS.out, "raw.json"), "w") as f:
            json.dump(raw, f, indent=1, default=str)


if __name__ == "__main__":
    main()
