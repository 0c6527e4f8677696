#!/usr/bin/python3
"""fleet_hosts.py - many diskprobe hosts' /metrics pages from one process
group: each host on an address of its own (127.1.X.Y:PORT, host i at
127.1.0.0 + i), all served on one port by WORKERS processes sharing it
(SO_REUSEPORT), so that a Prometheus `hashmod` on the address spreads them
as it spreads real hosts.

Each page is a real host's write_prometheus page (TEMPLATE, captured from
collectd with the plugin) with its instance label replaced by the host's
name (PREFIX + number) and the values of each probe's latency, IOPS and
throughput taken from a recorded round of `diskprobe watch --format json`
(RECORDING; its complete rounds): host i serves round (i * STRIDE + n) in its
n-th round (ROUND seconds; 0: round i * STRIDE only, a disk whose every
round was that one; a static host's values are stamped every second), every value stamped with the round's start, as write_prometheus
stamps each value with its time. disk_info's class (its type label) becomes
CLASS.

CONTROL (a file, read every second): lines "slow HOST" make that host's
disk FACTOR times worse from then on (latency times FACTOR, IOPS and
throughput divided by it) and its targets' health level 2, what the plugin
reports for a disk that slowed; each host's first slow round is logged to
CONTROL.log as "HOST UNIXTIME".

    fleet_hosts.py --template PAGE --recording R.jsonl.gz --hosts N \\
        --port P [--workers W] [--prefix fake-] [--class C] [--round 10] [--stride 37] \\
        [--control FILE] [--factor 4]
"""
import argparse
import asyncio
import ctypes
import gzip
import json
import os
import re
import resource
import signal
import socket
import sys
import time

# write_prometheus metric (without collectd_diskprobe_) -> a round's field
FIELDS = {
    "probe_latency_p50": lambda r: r["latency_s"]["p50"],
    "probe_latency_p90": lambda r: r["latency_s"]["p90"],
    "probe_latency_p99": lambda r: r["latency_s"]["p99"],
    "probe_latency_mean": lambda r: r["latency_s"]["mean"],
    "probe_latency_max": lambda r: r["latency_s"]["max"],
    "operations_per_second": lambda r: r["iops"],
    "bytes_per_second": lambda r: r["bytes_per_second"],
}
WORSE_IS_HIGHER = {k for k in FIELDS if k.startswith("probe_latency")}
LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (\d+))?$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def complete(rnd):
    """A round whose every probe has its figures (a probe a stall skipped
    has none)."""
    for rec in rnd.values():
        lat = rec.get("latency_s") or {}
        if rec.get("iops") is None or rec.get("bytes_per_second") is None or \
                any(lat.get(k) is None for k in ("p50", "p90", "p99", "mean", "max")):
            return False
    return True


def load_rounds(path):
    """The recording's complete rounds, each {probe: record}."""
    rounds, cur = [], {}
    with gzip.open(path, "rt") as f:
        for line in f:
            rec = json.loads(line)
            if "probe" not in rec:
                continue
            if rec["probe"] in cur:
                rounds.append(cur)
                cur = {}
            cur[rec["probe"]] = rec
    if cur:
        rounds.append(cur)
    return [r for r in rounds if complete(r)]


def load_template(path, klass):
    """The page as (name, labels without instance, value, field) lines."""
    out = []
    for raw in open(path):
        raw = raw.rstrip("\n")
        if not raw or raw.startswith("#"):
            continue
        m = LINE.match(raw)
        if not m:
            continue
        name, labels, value = m.group(1), dict(LABEL.findall(m.group(2) or "")), m.group(3)
        labels.pop("instance", None)
        short = name[len("collectd_diskprobe_"):] if name.startswith("collectd_diskprobe_") else None
        field = None
        if short in FIELDS and "type" in labels:
            field = (short, labels["type"])
        elif short == "disk_info" and klass:
            labels["type"] = klass
        elif short == "target_health" and labels.get("type") == "level":
            field = ("health", None)
        rest = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
        out.append((name, rest, value, field))
    return out


class Fleet:
    def __init__(self, a):
        self.a = a
        self.rounds = load_rounds(a.recording)
        self.lines = load_template(a.template, a.klass)
        self.slow = {}
        self.cache = {}
        self.control_mtime = None

    def host_of(self, addr):
        p = addr.split(".")
        if len(p) != 4 or p[0] != "127" or p[1] != "1":
            return None
        i = int(p[2]) * 256 + int(p[3])
        return i if i < self.a.hosts else None

    def read_control(self):
        c = self.a.control
        if not c:
            return
        try:
            m = os.stat(c).st_mtime
        except OSError:
            return
        if m == self.control_mtime:
            return
        self.control_mtime = m
        for line in open(c):
            w = line.split()
            if len(w) == 2 and w[0] == "slow" and w[1] not in self.slow:
                self.slow[w[1]] = None
        self.cache.clear()

    def page(self, i):
        a = self.a
        now = time.time()
        n = int(now // a.round) if a.round > 0 else 0
        host = "%s%05d" % (a.prefix, i)
        # a page per round, stamped with its start; a static host's every second
        key = (n, int(now)) if a.round <= 0 else (n,)
        hit = self.cache.get(i)
        if hit and hit[0] == key:
            return hit[1]
        slow = host in self.slow
        if slow and self.slow[host] is None:
            self.slow[host] = now
            with open(a.control + ".log", "a") as f:
                f.write("%s %.3f\n" % (host, now))
        rnd = self.rounds[(i * a.stride + n) % len(self.rounds)]
        ts = str(int(n * a.round * 1000 if a.round > 0 else int(now) * 1000))
        inst = 'instance="%s"' % host
        out = []
        for name, rest, value, field in self.lines:
            if field:
                if field[0] == "health":
                    value = "2" if slow else value
                else:
                    rec = rnd.get(field[1])
                    if rec is not None:
                        v = FIELDS[field[0]](rec)
                        if slow:
                            v = v * a.factor if field[0] in WORSE_IS_HIGHER else v / a.factor
                        value = repr(float(v))
            out.append("%s{%s%s%s} %s %s\n" % (name, inst, "," if rest else "", rest, value, ts))
        body = "".join(out).encode()
        self.cache[i] = (key, body)
        return body


async def handle(fleet, reader, writer):
    i = fleet.host_of(writer.get_extra_info("sockname")[0])
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            if not head:
                break
            if i is None:
                status, body = b"404 Not Found", b"no such host\n"
            else:
                status, body = b"200 OK", fleet.page(i)
            writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain; version=0.0.4\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def serve(fleet):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("0.0.0.0", fleet.a.port))
    sock.listen(4096)
    server = await asyncio.start_server(lambda r, w: handle(fleet, r, w), sock=sock)

    async def control():
        while True:
            fleet.read_control()
            await asyncio.sleep(1)
    asyncio.ensure_future(control())
    async with server:
        await server.serve_forever()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--template", required=True)
    p.add_argument("--recording", required=True)
    p.add_argument("--hosts", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--prefix", default="fake-")
    p.add_argument("--class", dest="klass", default="")
    p.add_argument("--round", type=float, default=10)
    p.add_argument("--stride", type=int, default=37)
    p.add_argument("--control", default="")
    p.add_argument("--factor", type=float, default=4)
    a = p.parse_args()
    if a.hosts > 65536:
        sys.exit("at most 65536 hosts")
    fleet = Fleet(a)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # a connection per host
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if not fleet.rounds or not fleet.lines:
        sys.exit("fleet_hosts: no rounds in %s or no series in %s" % (a.recording, a.template))
    children = []
    for _ in range(a.workers - 1):
        pid = os.fork()
        if pid == 0:  # a worker dies with the first process
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
            children = None
            break
        children.append(pid)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(serve(fleet))
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        for c in children or []:
            try:
                os.kill(c, 15)
            except OSError:
                pass


if __name__ == "__main__":
    main()
