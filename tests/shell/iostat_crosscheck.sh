#!/bin/bash
# iostat_crosscheck.sh - `diskprobe stat` against sysstat's `iostat -x` on a
# live device.
#
# A loop device over a 256 MiB file of random data (attached with
# --direct-io=on where the kernel allows, so reads reach the disk) is driven
# by fio (randread, 8 KiB, libaio, direct=1, queue depth 4, 12 s). Two
# seconds in, `diskprobe stat --interval 5s --count 1 --format json` and
# `iostat -x -y -d 5 1 -o JSON` start together and measure the same five
# seconds. They must agree on r/s, rkB/s, r_await, aqu-sz and %util:
#
#   |diskprobe - iostat| <= max(5% of the larger, absolute floor)
#
#   floors: r/s 1, rkB/s 8, r_await 0.02 ms, aqu-sz 0.02, %util 1 point
#
# The floors cover iostat's two-decimal JSON (r_await 0.05 ms printed as
# 0.05 is +-10%) and its interval taken from /proc/uptime in centiseconds;
# the 5% covers the few milliseconds between the two programs' reads.
# Also checked: the device was really busy (r/s > 100, else the comparison
# means nothing), and on kernels >= 5.7 Little's law from diskprobe's own
# numbers: |avg_queue_length - iops * await_s| <= 3 ms / interval.
#
# Exit: 0 pass, 1 fail, 77 skip (not root, no loop devices, no iostat/fio
# and apt-get cannot install them, no python3). Only the loop device this
# script attaches is ever touched, and it is detached on any exit.
set -u
. "$(dirname "$0")/lib.sh"
WINDOW=5   # seconds measured by both tools
RUNTIME=12 # fio run time; the window starts 2 s in

need root loop
need_cmd python3
command -v fio >/dev/null || apt-get install -y -q fio >/dev/null 2>&1 ||
  skip "fio not installed and apt-get install fio failed"
command -v iostat >/dev/null || apt-get install -y -q sysstat >/dev/null 2>&1 ||
  skip "iostat not installed and apt-get install sysstat failed"
iostat -o JSON -d 1 1 >/dev/null 2>&1 || skip "this iostat has no JSON output (sysstat < 11.5)"
[ -x "$DISKPROBE" ] || die "$DISKPROBE is not built"

dir=$(make_tmpdir)
dev=$(make_loop 256 "$dir" random) || exit
name=${dev#/dev/}
echo "device $dev ($name), kernel $(uname -r), $(iostat -V 2>&1 | head -1)"

fio --name=crosscheck --filename="$dev" --rw=randread --bs=8k \
  --ioengine=libaio --direct=1 --iodepth=4 --runtime=$RUNTIME --time_based \
  --output="$dir/fio.out" >/dev/null 2>&1 &
fio_pid=$!
register_pid "$fio_pid"
sleep 2
kill -0 "$fio_pid" 2>/dev/null || die "fio exited early: $(cat "$dir/fio.out" 2>/dev/null)"

"$DISKPROBE" stat --interval ${WINDOW}s --count 1 --format json "$name" \
  >"$dir/dp.json" 2>"$dir/dp.err" &
dp_pid=$!
iostat -x -y -d $WINDOW 1 -o JSON "$name" >"$dir/iostat.json" 2>"$dir/iostat.err" &
io_pid=$!
wait "$dp_pid" || die "diskprobe stat failed: $(cat "$dir/dp.err")"
wait "$io_pid" || die "iostat failed: $(cat "$dir/iostat.err")"
wait "$fio_pid"

python3 - "$dir/dp.json" "$dir/iostat.json" "$name" "$(uname -r)" <<'PY'
import json, math, sys

dp_file, io_file, name, release = sys.argv[1:5]
lines = [l for l in open(dp_file) if l.strip()]
if len(lines) != 1:
    print("FAIL: expected one JSON line from diskprobe stat, got %d" % len(lines))
    sys.exit(1)
dp = json.loads(lines[0])
io = None
for host in json.load(open(io_file))["sysstat"]["hosts"]:
    for st in host["statistics"]:
        for d in st.get("disk", []):
            if d["disk_device"] == name:
                io = d
if io is None:
    print("FAIL: iostat reported nothing for %s" % name)
    sys.exit(1)
if dp["device"] != name:
    print("FAIL: diskprobe reported %s, not %s" % (dp["device"], name))
    sys.exit(1)

def num(v):
    return float("nan") if v is None else float(v)

# (label, diskprobe value in iostat's unit, iostat value, absolute floor)
rows = [
    ("r/s", num(dp["reads_per_s"]), io["r/s"], 1.0),
    ("rkB/s", num(dp["read_bytes_per_s"]) / 1024, io["rkB/s"], 8.0),
    ("r_await ms", num(dp["read_await_s"]) * 1000, io["r_await"], 0.02),
    ("aqu-sz", num(dp["avg_queue_length"]), io["aqu-sz"], 0.02),
    ("%util", num(dp["util_percent"]), io["util"], 1.0),
]
REL = 0.05
failed = False
print("%-11s %14s %14s %10s %10s  %s" % ("metric", "diskprobe", "iostat",
                                         "|diff|", "allowed", "verdict"))
for label, a, b, floor in rows:
    diff = abs(a - b)
    allowed = max(REL * max(abs(a), abs(b)), floor)
    ok = math.isfinite(a) and diff <= allowed
    failed |= not ok
    print("%-11s %14.3f %14.3f %10.3f %10.3f  %s" %
          (label, a, b, diff, allowed, "ok" if ok else "FAIL"))
print("tolerance: 5%% of the larger value or the absolute floor, "
      "interval %.6f s" % dp["interval_s"])

if not num(dp["reads_per_s"]) > 100:
    print("FAIL: the device was not busy (r/s %.1f): fio did not drive it"
          % num(dp["reads_per_s"]))
    failed = True

ver = tuple(int(x) for x in release.split("-")[0].split(".")[:2])
lhs = num(dp["avg_queue_length"])
rhs = num(dp["iops"]) * num(dp["await_s"])
bound = 0.003 / dp["interval_s"]
if ver >= (5, 7):
    ok = abs(lhs - rhs) <= bound + 1e-9
    failed |= not ok
    print("little's law: avg_queue_length %.6f, iops x await %.6f, "
          "|diff| %.6f <= %.6f: %s" % (lhs, rhs, abs(lhs - rhs), bound,
                                       "ok" if ok else "FAIL"))
else:
    print("little's law: kernel %s < 5.7, identity approximate: %.4f vs %.4f"
          % (release, lhs, rhs))
print("iostat_crosscheck: %s" % ("FAIL" if failed else "all checks passed"))
sys.exit(1 if failed else 0)
PY
