#!/usr/bin/python3
"""sharded_scale.py - the sampler, the backfill and the report of
sharded_scale.sh (see there).

    sharded_scale.py sample --pids NAME=PID,... --prom NAME=URL,... --vm URL
        --vmalert URL --seconds S --hosts H --out FILE.json
    sharded_scale.py backfill --vm URL --disks N --recording R.jsonl.gz
        --minutes M --ahead A --slow-every K --shards S
    sharded_scale.py evaluate --vmalert URL --vm URL --seconds S --out FILE.json
    sharded_scale.py report FILE.json...
"""
import argparse
import json
import os
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tests/shell"))
from fleet_hosts import load_rounds  # noqa: E402  the fake hosts' own reading

TICK = os.sysconf("SC_CLK_TCK")


def get(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def query(url, q):
    try:
        res = json.loads(get(url + "/api/v1/query?" + urllib.parse.urlencode({"query": q})))["data"]["result"]
        return float(res[0]["value"][1]) if res else None
    except Exception:
        return None


def metrics(url):
    """A /metrics page as {name{labels}: value} (the first value of each)."""
    out = {}
    try:
        for line in get(url + "/metrics").splitlines():
            if line and not line.startswith("#"):
                k, _, v = line.rpartition(" ")
                try:
                    out.setdefault(k, float(v))
                except ValueError:
                    pass
    except Exception:
        pass
    return out


def msum(m, prefix):
    return sum(v for k, v in m.items() if k == prefix or k.startswith(prefix + "{"))


def proc(pid):
    """CPU seconds (process and its reaped children not counted) and RSS bytes."""
    try:
        st = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        rss = int(open("/proc/%d/statm" % pid).read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        return (int(st[11]) + int(st[12])) / TICK, rss
    except OSError:
        return None, None


def tree(pid):
    """pid and its descendants (the fake hosts' workers)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir("/proc/%d/task" % p):
                todo += [int(c) for c in open("/proc/%d/task/%s/children" % (p, t)).read().split()]
        except OSError:
            pass
    return out


def snapshot(a, pids, proms):
    s = {"t": time.time(), "cpu": {}, "rss": {}}
    for name, pid in pids.items():
        cpu = rss = 0.0
        for p in tree(pid):
            c, r = proc(p)
            cpu += c or 0
            rss += r or 0
        s["cpu"][name], s["rss"][name] = cpu, rss
    for name, url in proms.items():
        m = metrics(url)
        s[name] = {"samples": msum(m, "prometheus_tsdb_head_samples_appended_total"),
                   "series": msum(m, "prometheus_tsdb_head_series"),
                   "rw_samples": msum(m, "prometheus_remote_storage_samples_total")
                   + msum(m, "prometheus_remote_storage_succeeded_samples_total"),
                   "rw_pending": msum(m, "prometheus_remote_storage_samples_pending"),
                   "up": query(url, 'count(up{job="diskprobe"} == 1)'),
                   "targets": query(url, 'count(up{job="diskprobe"})'),
                   "scrape_s": query(url, 'avg(scrape_duration_seconds{job="diskprobe"})'),
                   "rules_s": {k.split('rule_group="', 1)[1].split('"')[0].rsplit(";", 1)[-1]: v
                               for k, v in m.items()
                               if k.startswith("prometheus_rule_group_last_duration_seconds{")}}
    m = metrics(a.vm)
    s["vm"] = {"rows": msum(m, 'vm_rows_inserted_total'),
               "active": msum(m, 'vm_cache_entries{type="storage/hour_metric_ids"}'),
               "hosts": query(a.vm, "count(count by (instance) (collectd_diskprobe_disk_info))")}
    if a.vmalert:
        m = metrics(a.vmalert)
        s["vmalert"] = {k: v for k, v in m.items() if k.startswith("vmalert_iteration_duration_seconds_")}
    return s


def cmd_sample(a):
    pids = dict(kv.split("=", 1) for kv in a.pids.split(","))
    pids = {k: int(v) for k, v in pids.items()}
    proms = dict(kv.split("=", 1) for kv in a.prom.split(","))
    first = snapshot(a, pids, proms)
    time.sleep(a.seconds)
    last = snapshot(a, pids, proms)
    dt = last["t"] - first["t"]
    r = {"hosts": a.hosts, "seconds": dt, "series_per_host": a.series_per_host, "layers": {}}
    for name in pids:
        r["layers"][name] = {"cores": (last["cpu"][name] - first["cpu"][name]) / dt,
                             "rss": last["rss"][name]}
    for name in proms:
        f, l = first[name], last[name]
        r["layers"][name].update(samples_s=(l["samples"] - f["samples"]) / dt, series=l["series"],
                                 remote_s=(l["rw_samples"] - f["rw_samples"]) / dt, pending=l["rw_pending"],
                                 up=l["up"], targets=l["targets"], scrape_s=l["scrape_s"], rules_s=l["rules_s"])
    r["layers"]["vm"].update(samples_s=(last["vm"]["rows"] - first["vm"]["rows"]) / dt,
                             series=last["vm"]["active"], hosts=last["vm"]["hosts"])
    json.dump(r, open(a.out, "w"))
    print(json.dumps(r))


def cmd_backfill(a):
    """N disks' per-disk series, as the shards record them, for the last
    MINUTES minutes and the next AHEAD (so that they do not go stale while
    vmalert evaluates them), one sample a minute, into VictoriaMetrics
    (/api/v1/import/prometheus): each disk's figures the median of 60
    recorded rounds (what median1h holds), the next 60 a minute later, 25 classes, every SLOW_EVERY-th disk 4 times worse (and
    its own verdict WARNING)."""
    rounds = load_rounds(a.recording)
    now = int(time.time())
    t0 = now - a.minutes * 60
    figs = (("qd1_p50_seconds", lambda r: r["randread-qd1"]["latency_s"]["p50"], 4.0),
            ("qd32_iops", lambda r: r["randread-qd32"]["iops"], 0.25),
            ("seq_bytes_per_second", lambda r: r["seqread"]["bytes_per_second"], 0.25))
    sent = 0
    batch = []

    def flush():
        nonlocal batch, sent
        if batch:
            req = urllib.request.Request(a.vm + "/api/v1/import/prometheus", data="".join(batch).encode())
            urllib.request.urlopen(req, timeout=120).read()
            sent += len(batch)
            batch = []
    # what median1h holds: the median of 60 consecutive rounds, per start
    medians = {}
    for name, get_v, worse in figs:
        vals = [get_v(r) for r in rounds]
        medians[name] = [sorted(vals[(k + j) % len(vals)] for j in range(60))[30] for k in range(len(vals))]
    for i in range(a.disks):
        host, dev, klass = "host-%05d" % (i // 4), "sd%s" % "abcd"[i % 4], "class-%02d" % (i % 25)
        shard = i // 4 % a.shards
        slow = a.slow_every and i % a.slow_every == a.slow_every - 1
        lab = 'instance="%s",device="%s",class="%s",shard="%d"' % (host, dev, klass, shard)
        for m in range(a.minutes + a.ahead + 1):
            ts = (t0 + m * 60) * 1000
            for name, get_v, worse in figs:
                v = medians[name][(i * 37 + m) % len(rounds)] * (worse if slow else 1)
                batch.append('diskprobe:disk:median1h{%s,figure="%s"} %r %d\n' % (lab, name, v, ts))
            batch.append('diskprobe:disk:evidence_age_seconds{%s} 30 %d\n' % (lab, ts))
            batch.append('diskprobe:disk:slow_verdict{%s} %d %d\n' % (lab, 1 if slow else 0, ts))
        if len(batch) > 200000:
            flush()
    flush()
    print(json.dumps({"disks": a.disks, "samples": sent, "slow": a.disks // a.slow_every if a.slow_every else 0}))


def cmd_evaluate(a):
    """vmalert's iteration time per group (its own summary, sum/count) over
    SECONDS, and what it found."""
    c0 = {n: proc(p)[0] or 0 for n, p in (("vmalert", a.pid), ("vm", a.vm_pid)) if p}
    time.sleep(a.seconds)
    c1 = {n: proc(p)[0] or 0 for n, p in (("vmalert", a.pid), ("vm", a.vm_pid)) if p}
    m = metrics(a.vmalert)
    groups = {}
    for k, v in m.items():
        if k.startswith("vmalert_iteration_duration_seconds_"):
            g = k.split('group="', 1)[1].split('"')[0]
            groups.setdefault(g, {})[k.split("{")[0].rsplit("_", 1)[-1]] = v
    alerts = json.loads(get(a.vmalert + "/api/v1/alerts"))["data"]["alerts"] or []
    errors = ["%s: %s" % (r["name"], r["lastError"][-300:])
              for g in json.loads(get(a.vmalert + "/api/v1/rules"))["data"]["groups"]
              for r in g["rules"] if r.get("lastError")]
    r = {"groups": groups, "errors": errors,
         "pending_or_firing": sum(1 for x in alerts if x["labels"].get("alertname") == "DiskProbeSlowForModel"),
         "slowdowns": query(a.vm, "count(diskprobe:disk:class_slowdown:max)"),
         "seconds": a.seconds, "cores": {n: (c1[n] - c0[n]) / a.seconds for n in c0},
         "rss": {n: proc(p)[1] for n, p in (("vmalert", a.pid), ("vm", a.vm_pid)) if p}}
    json.dump(r, open(a.out, "w"))
    print(json.dumps(r))


def mib(b):
    return "%.0f" % (b / 1048576) if b else "-"


def cmd_report(a):
    steps = [json.load(open(f)) for f in a.files if "step-" in os.path.basename(f)]
    steps.sort(key=lambda r: r["hosts"])
    print("| hosts | layer | cores | cores per 1,000 of its hosts | RSS MiB | series | bytes per series | samples/s in | remote-written/s (pending) | scraped up | scrape s | rule groups s (last) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in steps:
        h = r["hosts"]
        for name in sorted(r["layers"]):
            l = r["layers"][name]
            series = l.get("series")
            per = "%.0f" % (l["rss"] / series) if series else "-"
            rules = "; ".join("%s %.3f" % (g, v) for g, v in sorted(l.get("rules_s", {}).items()))
            up = "%d/%d" % (l["up"] or 0, l["targets"] or 0) if "targets" in l else (
                "%d hosts" % l["hosts"] if l.get("hosts") else "-")
            own = l.get("targets") or h  # a shard's own hosts
            rw = "{:,.0f} ({:,.0f})".format(l["remote_s"], l["pending"]) if "remote_s" in l else "-"
            print("| %s | %s | %.2f | %.3f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                "{:,}".format(h), name, l["cores"], l["cores"] * 1000 / own, mib(l["rss"]),
                "{:,.0f}".format(series) if series else "-", per,
                "{:,.0f}".format(l["samples_s"]) if "samples_s" in l else "-", rw, up,
                "%.3f" % l["scrape_s"] if l.get("scrape_s") else "-", rules or "-"))
    for f in a.files:
        b = os.path.basename(f)
        if b.startswith("rules"):
            r = json.load(open(f))
            for g, v in sorted(r["groups"].items()):
                if v.get("count"):
                    print("vmalert at the global store, %s: %s evaluations, mean %.3f s" % (
                        g, "%.0f" % v["count"], v["sum"] / v["count"]))
            print("over %s s: DiskProbeSlowForModel pending or firing: %s; disks with a recorded slowdown: %s; %s" % (
                r["seconds"], r["pending_or_firing"], r["slowdowns"],
                "; ".join("%s %.2f cores, RSS %s MiB" % (n, r["cores"][n], mib(r["rss"].get(n))) for n in sorted(r["cores"]))))
            for e in r.get("errors", []):
                print("  rule error: " + e)
        if b.startswith("latency"):
            print(open(f).read().strip())


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--pids", required=True)
    s.add_argument("--prom", required=True)
    s.add_argument("--vm", required=True)
    s.add_argument("--vmalert", default="")
    s.add_argument("--seconds", type=float, required=True)
    s.add_argument("--hosts", type=int, required=True)
    s.add_argument("--series-per-host", type=int, default=0)
    s.add_argument("--out", required=True)
    b = sub.add_parser("backfill")
    b.add_argument("--vm", required=True)
    b.add_argument("--disks", type=int, required=True)
    b.add_argument("--recording", required=True)
    b.add_argument("--minutes", type=int, default=10)
    b.add_argument("--ahead", type=int, default=5)
    b.add_argument("--slow-every", type=int, default=997)
    b.add_argument("--shards", type=int, default=2)
    e = sub.add_parser("evaluate")
    e.add_argument("--vmalert", required=True)
    e.add_argument("--vm", required=True)
    e.add_argument("--seconds", type=float, required=True)
    e.add_argument("--pid", type=int, default=0)
    e.add_argument("--vm-pid", type=int, default=0)
    e.add_argument("--out", required=True)
    r = sub.add_parser("report")
    r.add_argument("files", nargs="+")
    a = p.parse_args()
    {"sample": cmd_sample, "backfill": cmd_backfill, "evaluate": cmd_evaluate, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
