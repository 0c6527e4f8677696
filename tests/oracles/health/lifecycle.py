#!/usr/bin/python3
"""lifecycle.py - a fault's whole life through the rules: onset, hold, recovery.

    lifecycle.py [--diskprobe PATH] [--check] [--onsets N] [--cases A,B]
                 NAME=SERIES.jsonl[.gz][:busy] ...

Each SERIES is JSON lines of `diskprobe watch --format json` (the default
probe set: randread-qd1, randread-qd32, seqread) recorded on a healthy
disk. For each case below it injects the fault from round R on for FAULT
(30) rounds, then lets the recorded disk run healthy for AFTER (30) rounds,
at N (16) onsets R spread over the armed part of the series, replays the
rounds through the very rules the plugin runs (`diskprobe replay`), and
prints per case:

  warned     onsets whose first notification came within the case's bound
             (rounds from R; median / max of the rounds it took)
  ok-in      OKAY transitions while the fault was still on (want 0), and
             onsets that had any
  ok-end     onsets whose verdict was OK at the fault's last round (want 0)
  clear      onsets whose OKAY came within CLEAR_WITHIN (5) rounds of the
             recovery (median / max of the rounds it took; "-": none in
             the AFTER rounds)
  again      notifications after that OKAY within the AFTER rounds (want 0)
  bad-ok     OKAY transitions on a round whose own slowdown was >= 1.3
             (want 0)

and, for the series as recorded, every notification with its round and
slowdown. Onsets are placed where the recorded replay is quiet (OK from
20 rounds before R to the end of the recovery window):
a real stall of a shared disk in the recovery window would hold the
verdict for good reason. A busy series (":busy") was recorded on a disk
other tenants loaded: its figures are printed, not held against the
rules.

--check exits 1 unless, on every series not marked busy: the series as
recorded sent nothing; no OKAY came on a round at >= 1.3x and no
notification after the OKAY that followed a recovery; and for every case
but "disk 1.5x", every placed onset warned within its bound, no OKAY came
while the fault was on, every onset's OKAY came within the AFTER rounds
and their median within CLEAR_WITHIN. A whole disk 1.5x slower lies
within the recorded disk's own drift (its QD1 p50 sits 10-15 % below its
median for minutes): the onsets that land there read as the baseline, so
that case's onsets and OKAYs are printed, not held against the rules. --onsets and --cases (names below, comma-separated) narrow
the run. Standard library only; deterministic.

Cases (the fault; the bound on rounds to the first notification):
  disk 10x / 3x / 2x / 1.5x   every probe that many times slower
  qd32 /10, qd32 /3           the deep-queue probe's IOPS (latency up as much)
  seq /2                      the sequential probe's bandwidth halved
  p99 x5, qd1 p99 x5          a fattened tail, on every probe / QD1 alone
  every 3rd 10x               every probe 10x on every third round
  alt 3x, alt 2x              every probe 3x (2x) on every other round
  creep 3%                    every probe 3 % slower each round (2.4x at 30)
  qd32 /3 then disk 3x        capacity lost, then the whole disk 3x from
                              the 10th fault round (still slow: no OKAY)
  qd1 iops /2 flat p50        QD1's IOPS halved and mean doubled with p50
                              flat (a token-bucket throttle letting bursts
                              through; p99 and max x5)
"""
import statistics
import sys

from degradations import tail
from replay_eval import load, parse_args, replay, rounds_of, scale

FAULT = 30
AFTER = 30
CLEAR_WITHIN = 5
MARGIN = 20


def scale_only(rec, f, probe):
    return scale(rec, f) if probe in (None, rec["probe"]) else rec


def disk(f):
    return lambda rd, j: [scale(x, f) for x in rd]


def probe(name, f):
    return lambda rd, j: [scale_only(x, f, name) for x in rd]


def every(f, k):
    return lambda rd, j: [scale(x, f) for x in rd] if j % k == 0 else rd


def creep(step):
    return lambda rd, j: [scale(x, step ** (j + 1)) for x in rd]


def cap_then_disk(cap, f, after):
    def inj(rd, j):
        out = [scale_only(x, cap, "randread-qd32") for x in rd]
        return [scale(x, f) for x in out] if j >= after else out
    return inj


def bursty(name, f, tail_f):
    """IOPS / f and mean x f with p50 where it was (a token bucket)."""
    def inj(rd, j):
        out = []
        for x in rd:
            y = scale(x, 1.0)
            if y["probe"] == name:
                lat = y["latency_s"]
                y["iops"] /= f
                for k, g in (("mean", f), ("p99", tail_f), ("max", tail_f)):
                    if lat.get(k) is not None:
                        lat[k] *= g
            out.append(y)
        return out
    return inj


# name, injection (rounds, index in the fault), rounds within which to warn
CASES = (
    ("disk 10x", disk(10.0), 2),
    ("disk 3x", disk(3.0), 3),
    ("disk 2x", disk(2.0), 10),
    ("disk 1.5x", disk(1.5), 12),  # printed, not held (see --check)
    ("qd32 /10", probe("randread-qd32", 10.0), 5),
    ("qd32 /3", probe("randread-qd32", 3.0), 5),
    ("seq /2", probe("seqread", 2.0), 15),
    ("p99 x5", tail(5.0), 15),
    ("qd1 p99 x5", tail(5.0, "randread-qd1"), 20),
    ("every 3rd 10x", every(10.0, 3), 10),
    ("alt 3x", every(3.0, 2), 20),
    ("alt 2x", every(2.0, 2), 30),
    ("creep 3%", creep(1.03), 30),
    ("qd32 /3 then disk 3x", cap_then_disk(3.0, 3.0, 10), 5),
    ("qd1 iops /2 flat p50", bursty("randread-qd1", 2.0, 5.0), 10),
)


def transitions(ev):
    return [e for e in ev if not e.get("summary") and e["level"] != e["prev"]]


def one_onset(dp, rds, media, start, inject):
    """Replays the series to start + FAULT + AFTER with the fault in
    [start, start + FAULT): the figures of one onset."""
    cut = [list(r) for r in rds[: start + FAULT + AFTER]]
    for j in range(start, min(start + FAULT, len(cut))):
        cut[j] = inject(cut[j], j - start)
    r0 = cut[start][0]["round"]
    rec = r0 + FAULT  # the first healthy round again
    tr = [e for e in transitions(replay(dp, cut, media)) if e["round"] >= r0]
    warn = [e for e in tr if e["prev"] == "ok"]
    o = {"took": warn[0]["round"] - r0 + 1 if warn and warn[0]["round"] < rec else None}
    o["ok_in"] = sum(1 for e in tr if e["level"] == "ok" and e["round"] < rec)
    level = "ok"
    for e in tr:
        if e["round"] < rec:
            level = e["level"]
    o["ok_end"] = level == "ok"
    after = [e for e in tr if e["round"] >= rec]
    okay = [e for e in after if e["level"] == "ok"]
    if level == "ok":
        o["clear"] = 0 if not after else None
        first_ok = None
    else:
        o["clear"] = okay[0]["round"] - rec + 1 if okay else None
        first_ok = okay[0]["round"] if okay else None
    o["again"] = sum(1 for e in after if e["prev"] == "ok" and
                     (first_ok is None or e["round"] > first_ok))
    o["bad_ok"] = [e for e in tr if e["level"] == "ok" and
                   (e.get("slowdown") or 0) >= 1.3]
    return o


def bad_spans(tr):
    """The recorded replay's spans of rounds not at OK: [(first, last)]."""
    spans, start = [], None
    for e in tr:
        if e["prev"] == "ok" and start is None:
            start = e["round"]
        elif e["level"] == "ok" and start is not None:
            spans.append((start, e["round"] - 1))
            start = None
    if start is not None:
        spans.append((start, float("inf")))
    return spans


def fmt(xs):
    if not xs:
        return "-"
    return f"{statistics.median(xs):g} / {max(xs):g}"


def run_series(dp, name, path, busy, onsets, cases, out):
    media = "hdd" if "hdd" in name else "ssd"
    rds = rounds_of(load(path))
    ev = replay(dp, rds, media)
    summ = [e for e in ev if e.get("summary")][0]
    recorded = [e for e in transitions(ev) if e["prev"] == "ok"]
    episodes = bad_spans(transitions(ev))
    ok = busy or not recorded
    out(f"{name}: {summ['rounds']} rounds as recorded, armed at {summ['armed_at']}: "
        f"{len(recorded)} notifications" + (" (busy: listed, not held against the rules)" if busy else ""))
    for e in recorded[:12]:
        out(f"    round {e['round']}: S {e.get('slowdown', float('nan')):.2f}: {e['message'][:150]}")
    armed = summ["armed_at"]
    first_round = rds[0][0]["round"]
    span = len(rds) - armed - 10 - FAULT - AFTER
    if span <= 0:
        out(f"{name}: too short for a fault of {FAULT} and {AFTER} rounds after")
        return False
    out(f"{'  case':<24} {'warned':>8} {'rounds':>9}  {'ok-in':>9}  {'ok-end':>6}  "
        f"{'clear<=5':>8} {'rounds':>9}  {'again':>5}  {'bad-ok':>6}  want")
    for case, inject, want in CASES:
        if cases and case not in cases:
            continue
        res = []
        for k in range(onsets):
            start = armed + 10 + k * span // onsets
            r0 = first_round + start
            if any(a <= r0 + FAULT + AFTER and b >= r0 - MARGIN for a, b in episodes):
                continue
            res.append(one_onset(dp, rds, media, start, inject))
        n = len(res)
        took = [o["took"] for o in res if o["took"] is not None]
        warned = sum(1 for t in took if t <= want)
        ok_in = sum(o["ok_in"] for o in res)
        ok_in_onsets = sum(1 for o in res if o["ok_in"])
        ok_end = sum(1 for o in res if o["ok_end"])
        clears = [o["clear"] for o in res if o["clear"] is not None]
        cleared = sum(1 for c in clears if c <= CLEAR_WITHIN)
        again = sum(o["again"] for o in res)
        bad_ok = sum(len(o["bad_ok"]) for o in res)
        out(f"  {case:<22} {warned:>3} of {n:<3} {fmt(took):>9}  {ok_in:>3} ({ok_in_onsets:>2})  "
            f"{ok_end:>6}  {cleared:>3} of {n:<3} {fmt(clears):>9}  {again:>5}  {bad_ok:>6}  "
            f"<= {want}")
        for o in res:
            for e in o["bad_ok"][:1]:
                out(f"      OKAY at S {e['slowdown']:.2f}: {e['message'][:120]}")
        held = case != "disk 1.5x"
        cleared_all = len(clears) == n and (not clears or statistics.median(clears) <= CLEAR_WITHIN)
        ok &= busy or (again == 0 and bad_ok == 0 and (not held or (
            n > 0 and warned == n and ok_in == 0 and ok_end == 0 and cleared_all)))
    return ok


def main(argv):
    onsets, cases, rest = 16, None, []
    args = iter(argv)
    for a in args:
        if a == "--onsets":
            onsets = int(next(args))
        elif a == "--cases":
            cases = set(next(args).split(","))
        else:
            rest.append(a)
    dp, check, series = parse_args(rest, __doc__)
    ok = True
    for name, path, busy in series:
        ok &= run_series(dp, name, path, busy, onsets, cases,
                         lambda s: print(s, flush=True))
    if check and not ok:
        print("lifecycle: FAIL: a fault was missed, cleared while on, or not cleared in time")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
