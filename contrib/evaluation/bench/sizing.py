#!/usr/bin/env python3
"""sizing.py - the counting half of contrib/evaluation/bench/sizing.sh: two UDP
sockets standing in for the central collectd's port, counting what one host
sends per interval. Python 3 standard library only.

  plain      the client's clear-text stream (SecurityLevel None): bytes and
             packets, and each packet parsed (collectd's binary protocol,
             parts of type/length/value) into value lists and values, by
             plugin and by interval
  encrypted  the same values, SecurityLevel Encrypt: bytes and packets
             only, each packet relayed to the real central collectd (which
             decrypts it, writes the RRD files and serves /metrics)

Counts only packets received in [start, start + window) seconds after it
started, then writes a JSON summary to --out and exits.
"""
import argparse
import json
import os
import select
import socket
import struct
import time

# collectd network protocol part types (src/network.h)
HOST, TIME, PLUGIN, PLUGIN_INST, TYPE, TYPE_INST = 0, 1, 2, 3, 4, 5
VALUES, INTERVAL, TIME_HR, INTERVAL_HR = 6, 7, 8, 9


def parse(pkt, st):
    """Walks the parts of one clear-text packet; the identifier parts set
    the state that later VALUES parts use (the protocol only sends a part
    when it changes, so the state carries over packets as the receiver's)."""
    off = 0
    while off + 4 <= len(pkt):
        ptype, plen = struct.unpack_from("!HH", pkt, off)
        if plen < 4 or off + plen > len(pkt):
            st["bad_parts"] += 1
            return
        body = pkt[off + 4:off + plen]
        if ptype in (HOST, PLUGIN, PLUGIN_INST, TYPE, TYPE_INST):
            st["id"][ptype] = body.rstrip(b"\0").decode(errors="replace")
        elif ptype == INTERVAL_HR:
            st["interval"] = struct.unpack("!Q", body)[0] / 2**30
        elif ptype == INTERVAL:
            st["interval"] = float(struct.unpack("!Q", body)[0])
        elif ptype == VALUES:
            n = struct.unpack_from("!H", body)[0]
            ident = "/".join(st["id"].get(k, "") for k in (
                HOST, PLUGIN, PLUGIN_INST, TYPE, TYPE_INST))
            plugin = st["id"].get(PLUGIN, "")
            key = "%s@%gs" % (plugin, round(st["interval"], 1))
            c = st["by"].setdefault(key, {"value_lists": 0, "values": 0})
            c["value_lists"] += 1
            c["values"] += n
            st["idents"].setdefault(plugin, {})[ident] = n
        off += plen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ports-file", required=True)
    ap.add_argument("--relay-to", type=int, required=True)
    ap.add_argument("--start", type=float, required=True)
    ap.add_argument("--window", type=float, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    plain = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    enc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for s in (plain, enc):
        s.bind(("127.0.0.1", 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    fwd = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with open(a.ports_file + ".tmp", "w") as f:
        f.write("%d %d\n" % (plain.getsockname()[1], enc.getsockname()[1]))
    os.rename(a.ports_file + ".tmp", a.ports_file)
    t0 = time.monotonic()
    st = {"id": {}, "interval": 0.0, "by": {}, "idents": {}, "bad_parts": 0}
    cnt = {"plain": {"packets": 0, "bytes": 0, "max": 0},
           "encrypted": {"packets": 0, "bytes": 0, "max": 0}}
    end = t0 + a.start + a.window
    while True:
        now = time.monotonic()
        if now >= end:
            break
        r, _, _ = select.select([plain, enc], [], [], end - now)
        for s in r:
            pkt = s.recv(65536)
            now = time.monotonic()
            if s is enc:
                fwd.sendto(pkt, ("127.0.0.1", a.relay_to))
            counting = now - t0 >= a.start
            if s is plain:
                if not counting:  # the identifier state, not the counts
                    saved = st["by"], st["idents"]
                    st["by"], st["idents"] = {}, {}
                parse(pkt, st)
                if not counting:
                    st["by"], st["idents"] = saved
            if counting:
                c = cnt["plain" if s is plain else "encrypted"]
                c["packets"] += 1
                c["bytes"] += len(pkt)
                c["max"] = max(c["max"], len(pkt))
    res = {"window_s": a.window, "streams": cnt, "by": st["by"],
           "series": {p: len(v) for p, v in st["idents"].items()},
           "ds_per_series": {p: sum(v.values()) for p, v in
                             st["idents"].items()},
           "bad_parts": st["bad_parts"]}
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
