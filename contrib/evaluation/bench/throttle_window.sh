#!/bin/bash
# throttle_window.sh - the default probes against a rate-capped volume,
# side by side with fio at the same lengths: how close each reads the cap
# after idle, right after the previous probe of a round, and right after
# other I/O. A benchmark: it prints figures and ratios, never fails on one.
#
#   bash contrib/evaluation/bench/throttle_window.sh        # ~3 minutes, root
#   ROUNDS=10 IOPS=500 BPS_MIB=100 bash contrib/evaluation/bench/throttle_window.sh
#
# The volume: a loop device on a RAM file (tmpfs, direct I/O), so that
# everything it does not do at device speed is the throttle's; the cap:
# cgroup v1 blkio.throttle.read_{iops,bps}_device, or v2 io.max riops/rbps
# where v1 has no blkio. The probes: the plugin's default set at its
# default lengths (randread-qd1 8k QD1 0.5 s, randread-qd32 8k QD32
# 0.25 s, seqread 1M QD4 0.25 s); the random probes are held by the IOPS
# cap, seqread by the bytes cap. fio: libaio, direct, the same pattern,
# size, depth and runtime; its figure is its own (bytes or I/Os over its
# runtime).
#
# Conditions (ROUNDS each):
#   idle   each probe alone (`diskprobe run`, `fio`) after 1.5 s of nothing
#   round  the three in a row as the plugin runs them (`diskprobe watch`
#          at a 4 s interval, DutyCycle 50 so that no probe is shortened;
#          fio: the three jobs one after the other, stonewall)
#   other  each probe right after 13 MB of other reads in the same cgroup
#          (dd, 64 KiB direct)
# Everything it starts it stops; the loop device, the tmpfs and the cgroup
# go at the end.
set -u
ROUNDS=${ROUNDS:-5}
IOPS=${IOPS:-250}
BPS_MIB=${BPS_MIB:-50}
top=$(cd "$(dirname "$0")/../../.." && pwd)
DP=${DISKPROBE:-$top/src/cli/diskprobe}
[ "$(id -u)" = 0 ] || { echo "needs root (loop device, cgroup)" >&2; exit 2; }
command -v fio >/dev/null || { echo "needs fio (Debian: fio)" >&2; exit 2; }
[ -x "$DP" ] || { echo "no $DP: build first (bash contrib/build/setup.sh)" >&2; exit 2; }

work=$(mktemp -d /var/tmp/throttle-window.XXXXXX)
dev= cg=
cleanup() {
  [ -n "$cg" ] && rmdir "$cg" 2>/dev/null
  [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null
  umount "$work/ram" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/ram" && mount -t tmpfs -o size=600m tmpfs "$work/ram" || exit 1
truncate -s 512M "$work/ram/volume.img"
dev=$(losetup -f --show --direct-io=on "$work/ram/volume.img") || exit 1
dd if=/dev/urandom of="$dev" bs=1M count=512 oflag=direct status=none
num=$(printf '%d:%d' "0x$(stat -c %t "$dev")" "0x$(stat -c %T "$dev")")
bps=$((BPS_MIB * 1048576))
if [ -f /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]; then
  cg=/sys/fs/cgroup/blkio/throttle-window-$$ && mkdir "$cg" || exit 1
  echo "$num $IOPS" >"$cg/blkio.throttle.read_iops_device"
  echo "$num $bps" >"$cg/blkio.throttle.read_bps_device"
  mode="cgroup v1 blkio"
else
  grep -qw io /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
    echo +io >/sys/fs/cgroup/cgroup.subtree_control || exit 1
  cg=/sys/fs/cgroup/throttle-window-$$ && mkdir "$cg" || exit 1
  echo "$num riops=$IOPS rbps=$bps" >"$cg/io.max"
  mode="cgroup v2 io.max"
fi
inside() { bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }

probes="qd1 qd32 seq"
dp_args() {
  case $1 in
  qd1) echo "--queue-depth 1 --duration 0.5s" ;;
  qd32) echo "--queue-depth 32 --duration 0.25s" ;;
  seq) echo "--pattern seqread --block-size 1M --queue-depth 4 --duration 0.25s" ;;
  esac
}
fio_args() {
  case $1 in
  qd1) echo "--rw=randread --bs=8k --iodepth=1 --runtime=500ms" ;;
  qd32) echo "--rw=randread --bs=8k --iodepth=32 --runtime=250ms" ;;
  seq) echo "--rw=read --bs=1M --iodepth=4 --runtime=250ms" ;;
  esac
}
before() { # before CONDITION
  case $1 in
  idle) sleep 1.5 ;;
  other) inside dd if="$dev" of=/dev/null bs=64k count=200 iflag=direct status=none ;;
  esac
}
fio_one() { # fio_one PROBE: one fio run's JSON
  # shellcheck disable=SC2046 # word lists
  inside fio --name="$1" --filename="$dev" --ioengine=libaio --direct=1 \
    --time_based $(fio_args "$1") --output-format=json
}

out="$work/results"
: >"$out"
echo "throttle_window: $mode, $IOPS read IOPS and $BPS_MIB MiB/s on $dev (RAM), $ROUNDS rounds each, $(date -u '+%F %T') UTC"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= ROUNDS; r++)); do
  for c in idle other; do
    for p in $probes; do
      before "$c"
      # shellcheck disable=SC2046
      inside "$DP" run $(dp_args "$p") --format json "$dev" |
        sed "s/^/diskprobe $c $p /" >>"$out"
      before "$c"
      fio_one "$p" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["jobs"][0]["read"]))' |
        sed "s/^/fio $c $p /" >>"$out"
    done
  done
done
# a round: the plugin's scheduler, three probes back to back
inside "$DP" watch --interval 4s --duty-cycle 50 --count "$ROUNDS" --format json "$dev" 2>/dev/null |
  python3 -c '
import json, sys
names = {"randread-qd1": "qd1", "randread-qd32": "qd32", "seqread": "seq"}
for line in sys.stdin:
    d = json.loads(line)
    if d.get("probe") in names:
        print("diskprobe round", names[d["probe"]], line.strip())' >>"$out"
for ((r = 1; r <= ROUNDS; r++)); do
  sleep 2
  for p in $probes; do
    fio_one "$p" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["jobs"][0]["read"]))' |
      sed "s/^/fio round $p /" >>"$out"
  done
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out" "$IOPS" "$BPS_MIB" <<'PY'
import json, statistics, sys
path, iops, bps_mib = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
cap = {"qd1": iops, "qd32": iops, "seq": bps_mib}
rows = {}
for line in open(path):
    tool, cond, probe, js = line.split(" ", 3)
    d = json.loads(js)
    if tool == "fio":
        v = d["iops"] if probe != "seq" else d["bw_bytes"] / 1048576
        burst = None
    else:
        v = d["iops"] if probe != "seq" else d["bytes_per_second"] / 1048576
        burst = d.get("burst_ops")
    rows.setdefault((probe, cond, tool), []).append((v / cap[probe], burst))
print()
print("ratio to the cap (1.000 = the cap); median, then the range over the rounds")
print("%-6s %-6s %-28s %-28s %s" % ("probe", "cond", "diskprobe", "fio", "diskprobe burst (I/Os)"))
worst, close, total = 0.0, 0, 0
for probe in ("qd1", "qd32", "seq"):
    for cond in ("idle", "round", "other"):
        cells = []
        for tool in ("diskprobe", "fio"):
            v = [x for x, _ in rows.get((probe, cond, tool), [])]
            if not v:
                cells.append("-")
                continue
            cells.append("%.3f (%.3f-%.3f)" % (statistics.median(v), min(v), max(v)))
            if tool == "diskprobe":
                worst = max(worst, max(abs(x - 1) for x in v))
                close += sum(abs(x - 1) <= 0.03 for x in v)
                total += len(v)
        b = [y for _, y in rows.get((probe, cond, "diskprobe"), []) if y is not None]
        print("%-6s %-6s %-28s %-28s %s" % (probe, cond, cells[0], cells[1],
              " ".join("%.0f" % y for y in b)))
print()
print("diskprobe: %d of %d rounds within 3 %% of the cap; the worst %.1f %% from it"
      % (close, total, 100 * worst))
PY
