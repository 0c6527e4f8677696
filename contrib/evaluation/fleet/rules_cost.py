#!/usr/bin/env python3
"""rules_cost.py - the two halves of rules_cost.sh.

  rules_cost.py gen FILE DISKS CLASSES STEP_S BACK_S
      OpenMetrics for promtool tsdb create-blocks-from openmetrics: the
      series dashboards/fleet_disk_rules.yml reads, as the shipped scrape job
      stores them (the join labels device= and class= already set), for
      DISKS disks, four per host, in CLASSES classes (every 997th disk 4x
      slower than its class), one sample every STEP_S seconds from
      now - BACK_S to now. (Not beyond now: Prometheus refuses to append
      samples older than its newest block, and the rules' results would be
      lost.)
  rules_cost.py sample API SECONDS
      Polls API (http://host:port) every 5 s for SECONDS: each rule group's
      evaluationTime from /api/v1/rules (new evaluations only) and, at the
      end, the slowest rules and /metrics' process and TSDB figures. Prints
      one JSON object, with how many disks the rules recorded a slowdown
      for and how many DiskProbeSlowForModel alerts are pending or firing.
"""
import json
import math
import random
import sys
import time
import urllib.parse
import urllib.request


def gen(path, disks, classes, step, back):
    rnd = random.Random(1)
    now = int(time.time())
    t0, t1 = now - back, now + 1
    times = list(range(t0 - t0 % step, t1, step))
    hosts = (disks + 3) // 4
    rows = []  # (instance, device, class, p50 s, qd32 IOPS, seq B/s)
    for i in range(disks):
        c = i % classes
        unit = math.exp(rnd.gauss(0, 0.1))  # unit-to-unit spread
        slow = 4 if i % 997 == 0 else 1  # a few disks 4x worse
        rows.append(("h%05d" % (i // 4), "sd" + "abcd"[i % 4], "class-%02d" % c,
                     1e-4 * (1 + c) * unit * slow, 6e4 / (1 + c) / unit / slow,
                     5e8 / (1 + c) / unit / slow))
    n = 0
    with open(path, "w") as f:
        def family(name, series):
            nonlocal n
            f.write("# TYPE %s gauge\n" % name)
            for labels, value in series:
                for t in times:
                    v = value() if callable(value) else value
                    f.write("%s{%s} %.6g %d\n" % (name, labels, v, t))
                    n += 1
        noise = lambda x: (lambda: x * math.exp(rnd.gauss(0, 0.2)))
        family("collectd_diskprobe_target_device",
               (('instance="%s",diskprobe="%s",device="%s"' % (h, "t-" + d, d), 1)
                for h, d, _, _, _, _ in rows))
        family("collectd_diskprobe_disk_info",
               (('instance="%s",diskprobe="dev-%s",device="%s",class="%s",type="%s"' % (h, d, d, c, c), 1e12)
                for h, d, c, _, _, _ in rows))
        family("collectd_diskprobe_probe_latency_p50",
               (('instance="%s",diskprobe="%s",type="randread-qd1"' % (h, "t-" + d), noise(p))
                for h, d, _, p, _, _ in rows))
        family("collectd_diskprobe_operations_per_second",
               (('instance="%s",diskprobe="%s",type="randread-qd32"' % (h, "t-" + d), noise(q))
                for h, d, _, _, q, _ in rows))
        family("collectd_diskprobe_bytes_per_second",
               (('instance="%s",diskprobe="%s",type="seqread"' % (h, "t-" + d), noise(s))
                for h, d, _, _, _, s in rows))
        f.write("# EOF\n")
    print(json.dumps({"disks": disks, "hosts": hosts, "classes": classes, "step_s": step,
                      "samples": n, "from": times[0], "to": times[-1]}))


def get(api, path):
    with urllib.request.urlopen(api + path, timeout=60) as r:
        return r.read().decode()


def sample(api, seconds):
    evals, seen, end = {}, {}, time.time() + seconds
    rules = None
    while time.time() < end:
        try:
            rules = json.loads(get(api, "/api/v1/rules"))["data"]["groups"]
        except OSError:
            rules = None
        for g in rules or []:
            last = g.get("lastEvaluation")
            if last and not last.startswith("0001") and seen.get(g["name"]) != last:
                seen[g["name"]] = last
                evals.setdefault(g["name"], []).append(g["evaluationTime"])
        time.sleep(5)
    metrics = {}
    for line in get(api, "/metrics").splitlines():
        name = line.split(" ")[0]
        if name in ("process_resident_memory_bytes", "go_memstats_heap_inuse_bytes",
                    "prometheus_tsdb_head_series", "process_cpu_seconds_total"):
            metrics[name] = float(line.split(" ")[1])
    slowest = sorted(((r.get("evaluationTime", 0), r.get("name"), g["name"])
                      for g in rules or [] for r in g["rules"]), reverse=True)[:3]
    def count(q):
        r = json.loads(get(api, "/api/v1/query?" + urllib.parse.urlencode({"query": "count(%s)" % q})))
        return int(float(r["data"]["result"][0]["value"][1])) if r["data"]["result"] else 0
    print(json.dumps({"evaluations": evals, "metrics": metrics, "slowest_rules": slowest,
                      "recorded_disks": count("diskprobe:disk:class_slowdown:max"),
                      "alerts": count('ALERTS{alertname="DiskProbeSlowForModel"}')}))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], *map(int, sys.argv[3:7]))
    elif sys.argv[1] == "sample":
        sample(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("usage: rules_cost.py gen|sample ...")
