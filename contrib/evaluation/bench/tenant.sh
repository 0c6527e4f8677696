#!/bin/bash
# contrib/evaluation/bench/tenant.sh - what a co-located workload loses while diskprobe
# probes its disk, and what the plugin costs the host. A benchmark: it
# prints figures and ratios, it never fails on a number (not in make check).
#
#   bash contrib/evaluation/bench/tenant.sh            # full run, about 15 minutes
#   QUICK=1 bash contrib/evaluation/bench/tenant.sh    # about 3 minutes
#
# A "tenant" fio job (8 KiB random reads at QD1; randrw 70/30 8 KiB at QD16)
# on a file next to diskprobe's probe file (the same filesystem, the same
# disk), in alternating slices without and with the real collectd running
# diskprobe at its defaults, then at DutyCycle 10; then, without a tenant,
# the disk busy time, CPU and memory the plugin adds. See README.md.
#
# Environment (defaults in brackets; QUICK=1 changes the starred ones):
#   PAIRS*       A/B pairs per configuration and job [5; quick 2]
#   SLICE*       seconds per slice [20; quick 8]
#   IDLE_PAIRS*  pairs of host-cost windows per configuration [2; quick 1]
#   WINDOW*      seconds per host-cost window [7; quick 6]
#   FILE_DIR     where the probe file and the tenant's file go: the disk
#                measured [/var/tmp]
#   CONFIGS      default,duty10 [both]     JOBS  randread-qd1,randrw-qd16 [both]
#   DISKPROBE    diskprobe binary [src/cli/diskprobe]
#   PLUGIN       plugin .so [plugin/.libs/diskprobe.so]
#   OUT          results dir [contrib/evaluation/bench/results/tenant-<UTC time>]
#
# Needs root (the probe file is O_DIRECT; collectd reads /proc of its
# children), fio, collectd (collectd-core), python3. Everything it makes
# (two directories, collectd and fio processes) is removed by its EXIT trap.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cmdline="$(for v in QUICK PAIRS SLICE IDLE_PAIRS WINDOW FILE_DIR CONFIGS JOBS \
  DISKPROBE PLUGIN OUT; do
  if [ -n "${!v:-}" ]; then printf '%s=%q ' "$v" "${!v}"; fi
done)bash contrib/evaluation/bench/tenant.sh"

if [ "${QUICK:-0}" = 1 ]; then
  : "${PAIRS:=2}" "${SLICE:=8}" "${IDLE_PAIRS:=1}" "${WINDOW:=6}"
else
  : "${PAIRS:=5}" "${SLICE:=20}" "${IDLE_PAIRS:=2}" "${WINDOW:=7}"
fi
: "${FILE_DIR:=/var/tmp}" "${CONFIGS:=}" "${JOBS:=}"
: "${DISKPROBE:=$top/src/cli/diskprobe}" "${PLUGIN:=$top/plugin/.libs/diskprobe.so}"
: "${OUT:=$here/results/tenant-$(date -u +%Y%m%d-%H%M%S)}"

die() { echo "tenant: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
for c in fio collectd python3; do
  command -v "$c" >/dev/null || die "$c is not installed (bash tests/setup.sh)"
done
[ -x "$DISKPROBE" ] || die "$DISKPROBE is not built (bash contrib/build/setup.sh)"
[ -f "$PLUGIN" ] || die "$PLUGIN is not built (bash contrib/build/setup.sh)"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

_dirs=()
PIDFILE=$(mktemp /tmp/diskprobe-tenant-pids.XXXXXX) # pids tenant.py started
cleanup() {
  local pid
  set +e
  while read -r pid; do
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
  done <"$PIDFILE"
  sleep 0.5
  for p in "${_dirs[@]}"; do rm -rf "$p"; done
  rm -f "$PIDFILE"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

dir=$(mktemp -d "$FILE_DIR/diskprobe-tenant.XXXXXX")
_dirs+=("$dir")

# The whole disk under FILE_DIR (a partition's parent), as /proc/diskstats
# names it: its io_ticks are the busy time measured.
mm=$(mountpoint -d "$(stat -c %m "$dir")")
dev=$(basename "$(readlink -f "/sys/dev/block/$mm")")
[ -f "/sys/class/block/$dev/partition" ] &&
  dev=$(basename "$(dirname "$(readlink -f "/sys/class/block/$dev")")")
grep -qw "$dev" /proc/diskstats || die "cannot tell the disk under $FILE_DIR ($mm)"

# PluginDir refuses symlinks: copies.
mkdir -p "$dir/plugins"
for p in logfile network; do cp "/usr/lib/collectd/$p.so" "$dir/plugins/"; done
cp "$PLUGIN" "$dir/plugins/diskprobe.so"

echo "tenant: laying out the probe file (1 GiB, the default FileSize) and the tenant's file (1 GiB) in $dir on $dev" >&2
"$DISKPROBE" run --ops 1 --file-size 1g --layout-rate 0 --format json "$dir/probe" >/dev/null ||
  die "diskprobe could not lay out its probe file in $dir/probe"
fio --name=layout --filename="$dir/tenant.dat" --size=1g --rw=write --bs=1m \
  --iodepth=4 --ioengine=libaio --direct=1 --output=/dev/null ||
  die "fio could not write $dir/tenant.dat"

PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
"$PY" "$here/tenant.py" --out "$OUT" --pids "$PIDFILE" --diskprobe "$DISKPROBE" \
  --plugin-dir "$dir/plugins" --types-db "$top/plugin/diskprobe.types.db" \
  --dir "$dir" --probe-dir "$dir/probe" --tenant-file "$dir/tenant.dat" \
  --disk "$dev" --command "$cmdline" --configs "$CONFIGS" --jobs "$JOBS" \
  --pairs "$PAIRS" --slice "$SLICE" --idle-pairs "$IDLE_PAIRS" --window "$WINDOW"
