#!/bin/bash
# qd1_fio.sh - QD1 latency of `diskprobe run` against fio on a RAM-backed
# loop device, in interleaved pairs, and what each pair ran beside (load,
# how idle each CPU was just before). A benchmark: it prints figures and
# ratios, it never fails on a number.
#
#   bash contrib/evaluation/bench/qd1_fio.sh
#   PAIRS=8 DURATION=2 bash contrib/evaluation/bench/qd1_fio.sh
#   DISKPROBE_B=/tmp/old/src/cli/diskprobe bash contrib/evaluation/bench/qd1_fio.sh
#
# Each pair runs diskprobe (and DISKPROBE_B, another build, when given) and
# fio, 8 KiB random reads at QD1 for DURATION seconds each, unpinned:
#   diskprobe run --pattern randread --block-size 8k --queue-depth 1
#   fio --ioengine=libaio --direct=1 --iodepth=1 --bs=8k --rw=randread
#       --time_based --norandommap --randrepeat=0 --invalidate=0
#       --lat_percentiles=1
# Compared like with like: diskprobe's latency runs from just before
# io_submit to the reap, as fio's `lat` (slat + clat: from fio's issue of
# the I/O to its completion), not fio's `clat` (from the end of io_submit),
# which is printed beside it. Before each pair it waits up to IDLE_WAIT
# seconds for a second in which every CPU is at least IDLE_PCT % idle (the
# machine may be shared) and records the load average and that second's
# idle share per CPU; a pair that never saw an idle second is marked busy.
#
# Environment [defaults]: PAIRS [8], DURATION seconds per run [2], SHM_MB
# loop device size [256], IDLE_WAIT [60], IDLE_PCT [90], DISKPROBE
# [src/cli/diskprobe], DISKPROBE_B [none], FIO [fio].
#
# Needs root (a loop device), fio, python3, losetup. The loop device and its
# file in /dev/shm are removed by the EXIT trap; nothing else is touched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
: "${PAIRS:=8}" "${DURATION:=2}" "${SHM_MB:=256}" "${IDLE_WAIT:=60}" "${IDLE_PCT:=90}"
: "${DISKPROBE:=$top/src/cli/diskprobe}" "${DISKPROBE_B:=}" "${FIO:=fio}"

die() { echo "qd1_fio: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (a loop device)"
for c in "$FIO" python3 losetup dd; do
  command -v "$c" >/dev/null || die "$c is not installed (bash tests/setup.sh)"
done
[ -x "$DISKPROBE" ] || die "$DISKPROBE is not built"
[ -z "$DISKPROBE_B" ] || [ -x "$DISKPROBE_B" ] || die "$DISKPROBE_B is not built"

shm_file='' loop_dev=''
cleanup() {
  set +e
  [ -n "$loop_dev" ] && losetup -d "$loop_dev"
  [ -n "$shm_file" ] && rm -f "$shm_file"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# as run.sh's memloop target: random data (never-written tmpfs pages would
# be cheaper to read), --direct-io=on (no second page cache in the loop)
shm_file=$(mktemp /dev/shm/diskprobe-qd1.XXXXXX)
dd if=/dev/urandom of="$shm_file" bs=1M count="$SHM_MB" status=none
loop_dev=$(losetup -f --show --direct-io=on "$shm_file") || die "cannot attach a loop device"

echo "qd1_fio: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, kernel $(uname -r)," \
  "cpuidle $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)," \
  "$($FIO --version), $("$DISKPROBE" --version 2>/dev/null | head -1)"
echo "target $loop_dev: loop (direct-io) over ${SHM_MB} MiB in /dev/shm; $PAIRS pairs of ${DURATION}s"

python3 - "$loop_dev" "$PAIRS" "$DURATION" "$IDLE_WAIT" "$IDLE_PCT" "$FIO" \
  "$DISKPROBE" "$DISKPROBE_B" <<'EOF'
import json, statistics, subprocess, sys, time

dev, pairs, dur, idle_wait, idle_pct, fio = sys.argv[1:7]
pairs, idle_wait, idle_pct = int(pairs), float(idle_wait), float(idle_pct)
tools = [("dp", sys.argv[7])] + ([("dp_b", sys.argv[8])] if sys.argv[8] else [])


def cpu_times():
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                v = [int(x) for x in line.split()[1:]]
                out[line.split()[0]] = (v[3] + v[4], sum(v))
    return out


def idle_share(seconds):
    a = cpu_times()
    time.sleep(seconds)
    b = cpu_times()
    return [100.0 * (b[k][0] - a[k][0]) / max(1, b[k][1] - a[k][1]) for k in sorted(a)]


def wait_idle():
    end = time.monotonic() + idle_wait
    while True:
        share = idle_share(1.0)
        if min(share) >= idle_pct:
            return share, True
        if time.monotonic() >= end:
            return share, False


def run_dp(path):
    out = subprocess.run([path, "run", "--pattern", "randread", "--block-size", "8k",
                          "--queue-depth", "1", "--duration", dur + "s", "--format", "json", dev],
                         capture_output=True, text=True)
    try:
        d = json.loads(out.stdout)
        lat = d["latency_s"]
        return {"p50": lat["p50"] * 1e6, "mean": lat["mean"] * 1e6, "iops": d["iops"],
                "cpu": (d["cpu_s"]["user"] + d["cpu_s"]["system"]) / max(d["wall_s"], 1e-9)}
    except (ValueError, KeyError):
        print("  %s failed: %s" % (path, (out.stderr or out.stdout).strip()[:200]))
        return None


def run_fio():
    out = subprocess.run([fio, "--name=qd1", "--filename=" + dev, "--ioengine=libaio", "--direct=1",
                          "--iodepth=1", "--bs=8k", "--rw=randread", "--time_based",
                          "--runtime=" + dur, "--norandommap", "--randrepeat=0", "--invalidate=0",
                          "--lat_percentiles=1", "--clat_percentiles=1", "--output-format=json"],
                         capture_output=True, text=True)
    try:
        j = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]
        r = j["read"]
        return {"p50": r["lat_ns"]["percentile"]["50.000000"] / 1e3, "mean": r["lat_ns"]["mean"] / 1e3,
                "clat50": r["clat_ns"]["percentile"]["50.000000"] / 1e3, "slat": r["slat_ns"]["mean"] / 1e3,
                "iops": r["iops"], "cpu": (j["usr_cpu"] + j["sys_cpu"]) / 100.0}
    except (ValueError, KeyError):
        print("  fio failed: %s" % (out.stderr or out.stdout).strip()[:200])
        return None


rows = []
print("pair  load1  idle% before     tool   p50 us  mean us  IOPS     CPU/s   fio clat p50, slat mean")
for i in range(pairs):
    share, idle = wait_idle()
    load = open("/proc/loadavg").read().split()[0]
    row = {"idle": idle, "share": share, "load": float(load)}
    for name, path in tools:
        row[name] = run_dp(path)
    row["fio"] = run_fio()
    rows.append(row)
    tag = " ".join("%.0f" % s for s in share) + ("" if idle else " busy")
    for name in [t[0] for t in tools] + ["fio"]:
        r = row[name]
        if r is None:
            continue
        extra = "  %.1f, %.1f" % (r["clat50"], r["slat"]) if name == "fio" else ""
        print("%4d  %5s  %-14s  %-5s %7.1f  %7.1f  %7.0f  %5.2f%s" %
              (i, load, tag, name, r["p50"], r["mean"], r["iops"], r["cpu"], extra))
        tag, load = "", ""


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else float("nan")


print("\nmedians over the pairs (ratios: median of each pair's tool/fio; fio's figure is lat, submit to completion)")
print("tool   p50 us  IOPS     CPU/s   p50/fio  IOPS/fio   pairs")
for name in [t[0] for t in tools] + ["fio"]:
    ok = [r for r in rows if r[name] and r["fio"]]
    p = med([r[name]["p50"] for r in ok])
    q = med([r[name]["iops"] for r in ok])
    c = med([r[name]["cpu"] for r in ok])
    rp = med([r[name]["p50"] / r["fio"]["p50"] for r in ok])
    rq = med([r[name]["iops"] / r["fio"]["iops"] for r in ok])
    print("%-5s %7.1f  %7.0f  %5.2f   %7.2f  %8.2f   %d (%d idle)" %
          (name, p, q, c, rp, rq, len(ok), sum(1 for r in ok if r["idle"])))
idle_rows = [r for r in rows if r["idle"] and r["dp"] and r["fio"]]
if idle_rows and len(idle_rows) < len(rows):
    print("idle pairs only: dp p50/fio %.2f, IOPS/fio %.2f (%d pairs)" % (
        med([r["dp"]["p50"] / r["fio"]["p50"] for r in idle_rows]),
        med([r["dp"]["iops"] / r["fio"]["iops"] for r in idle_rows]), len(idle_rows)))
print("CPU/s: the tool's CPU seconds per second of probing (diskprobe: its thread's user+system over"
      " wall_s; fio: usr_cpu+sys_cpu)")
EOF
