#!/bin/bash
# contrib/evaluation/bench/run.sh - diskprobe side by side with fio and ioping, and the
# plugin's cost inside the real collectd. A benchmark: it prints ratios, it
# never fails on a number.
#
#   bash contrib/evaluation/bench/run.sh            # full run, about 8-10 minutes
#   QUICK=1 bash contrib/evaluation/bench/run.sh    # about 2-3 minutes, fewer pairs
#
# Needs root (loop devices, cgroup-v1 blkio), fio, ioping, python3; valgrind
# and collectd for the collectd/allocation sections (skipped if missing);
# python3-matplotlib for the plot (skipped if missing). Build first
# (bash tests/setup.sh, which also installs fio and ioping): it uses
# src/cli/diskprobe and plugin/.libs/diskprobe.so as built, and never builds or edits anything outside its results dir.
#
# Environment (defaults in brackets; QUICK=1 changes the starred ones):
#   PAIRS*          A/B pairs per job [5; quick 3]
#   DURATION*       seconds per run [2; quick 1]
#   SHM_MB*         size of the in-memory loop device [1024; quick 256]
#   FILE_SIZE*      probe file on the local disk [1g; quick 256m]
#   FILE_DIR        where the probe file goes [/var/tmp]
#   THROTTLE_IOPS   blkio read_iops_device of the throttled loop [500]
#   COLLECTD_SECONDS* collectd run length [60; quick 20]
#   SECTIONS        any of io,collectd,alloc [io,collectd,alloc]
#   TARGETS, JOBS   only these io targets / jobs, comma-separated [all]:
#                   memloop,file,throttled / randread-qd1,randread-qd32,
#                   seqread-qd4,randwrite-qd1,seqwrite-qd4,syncwrite-qd1
#   DISKPROBE       diskprobe binary [src/cli/diskprobe]
#   PLUGIN          plugin .so [plugin/.libs/diskprobe.so]
#   OUT             results dir [contrib/evaluation/bench/results/<UTC time>]
#
# Everything it makes (loop devices, one blkio cgroup, files under /dev/shm
# and FILE_DIR, collectd processes) is recorded here and removed by the EXIT
# trap; nothing it did not make is touched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cmdline="$(for v in QUICK PAIRS DURATION SHM_MB FILE_SIZE FILE_DIR THROTTLE_IOPS \
  COLLECTD_SECONDS SECTIONS TARGETS JOBS DISKPROBE PLUGIN OUT; do
  if [ -n "${!v:-}" ]; then printf '%s=%q ' "$v" "${!v}"; fi
done)bash contrib/evaluation/bench/run.sh"

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
  : "${PAIRS:=3}" "${DURATION:=1}" "${SHM_MB:=256}" "${FILE_SIZE:=256m}" "${COLLECTD_SECONDS:=20}"
  FIXED_REPS=1
else
  : "${PAIRS:=5}" "${DURATION:=2}" "${SHM_MB:=1024}" "${FILE_SIZE:=1g}" "${COLLECTD_SECONDS:=60}"
fi
: "${FILE_DIR:=/var/tmp}" "${THROTTLE_IOPS:=500}" "${SECTIONS:=io,collectd,alloc}"
: "${DISKPROBE:=$top/src/cli/diskprobe}" "${PLUGIN:=$top/plugin/.libs/diskprobe.so}"
: "${OUT:=$here/results/$(date -u +%Y%m%d-%H%M%S)}"
BLKIO=/sys/fs/cgroup/blkio

die() { echo "bench: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (loop devices, blkio cgroups)"
for c in fio ioping losetup python3 dd; do
  command -v "$c" >/dev/null || die "$c is not installed (bash tests/setup.sh)"
done
[ -x "$DISKPROBE" ] || die "$DISKPROBE is not built (bash contrib/build/setup.sh)"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# ---- resources: every one recorded, released by the trap -----------------
_loops=() _files=() _dirs=() _cgroups=()
PIDFILE=$(mktemp /tmp/diskprobe-bench-pids.XXXXXX) # pids bench.py started
cleanup() {
  local p pid
  set +e
  # processes bench.py started and may have left behind (interrupted run)
  while read -r pid; do
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
  done <"$PIDFILE"
  sleep 0.2
  for p in "${_cgroups[@]}"; do
    if [ -f "$p/cgroup.procs" ]; then
      while read -r pid; do echo "$pid" >"$BLKIO/cgroup.procs"; done <"$p/cgroup.procs" 2>/dev/null
      rmdir "$p" 2>/dev/null
    fi
  done
  for p in "${_loops[@]}"; do losetup -d "$p" 2>/dev/null; done
  for p in "${_files[@]}"; do rm -f "$p"; done
  for p in "${_dirs[@]}"; do rm -rf "$p"; done
  rm -f "$PIDFILE"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A loop device over a new file in /dev/shm filled with random data (reads of
# never-written tmpfs pages would be cheaper than real data). --direct-io=on
# so the loop driver does not double-cache in the page cache. Not called as
# $(...): the arrays the trap reads must be set in this shell, not a subshell.
make_shm_loop() { # make_shm_loop SIZE_MB -> sets LOOP_DEV=/dev/loopN
  local mb=$1 f
  f=$(mktemp /dev/shm/diskprobe-bench.XXXXXX)
  _files+=("$f")
  dd if=/dev/urandom of="$f" bs=1M count="$mb" status=none
  LOOP_DEV=$(losetup -f --show --direct-io=on "$f") || die "cannot attach a loop device"
  _loops+=("$LOOP_DEV")
}

sections=",$SECTIONS,"
args=(--out "$OUT" --pids "$PIDFILE" --diskprobe "$DISKPROBE" --pairs "$PAIRS"
  --duration "$DURATION" --command "$cmdline" --targets "${TARGETS:-}"
  --jobs "${JOBS:-}" --fixed-reps "${FIXED_REPS:-3}")
[ "$QUICK" = 1 ] && args+=(--quick)

if [[ $sections == *,io,* ]]; then
  echo "bench: setting up targets (in-memory loop ${SHM_MB} MiB, probe file $FILE_SIZE in $FILE_DIR, throttled loop at $THROTTLE_IOPS IOPS)" >&2
  make_shm_loop "$SHM_MB"
  shm_dev=$LOOP_DEV
  fdir=$(mktemp -d "$FILE_DIR/diskprobe-bench.XXXXXX")
  _dirs+=("$fdir")
  # diskprobe lays out (writes) its probe file once; fio then reads and
  # writes the very same file, restricted to the data region after the header.
  "$DISKPROBE" run --ops 1 --file-size "$FILE_SIZE" --layout-rate 0 --format json "$fdir" >/dev/null ||
    die "diskprobe could not lay out its probe file in $fdir"
  make_shm_loop 256
  thr_dev=$LOOP_DEV
  cg="$BLKIO/diskprobe-bench-$$-$RANDOM"
  [ -f "$BLKIO/blkio.throttle.read_iops_device" ] || die "cgroup-v1 blkio throttling unavailable"
  mkdir "$cg"
  _cgroups+=("$cg")
  devnum=$(printf '%d:%d' "0x$(stat -c %t "$thr_dev")" "0x$(stat -c %T "$thr_dev")")
  echo "$devnum $THROTTLE_IOPS" >"$cg/blkio.throttle.read_iops_device"
  args+=(--shm-dev "$shm_dev" --probe-dir "$fdir" --file-size "$FILE_SIZE"
    --throttled-dev "$thr_dev" --cgroup "$cg" --throttle-iops "$THROTTLE_IOPS")
fi
if [[ $sections == *,collectd,* ]]; then
  if command -v collectd >/dev/null && [ -f "$PLUGIN" ]; then
    cdir=$(mktemp -d "$FILE_DIR/diskprobe-bench-collectd.XXXXXX")
    _dirs+=("$cdir")
    args+=(--collectd-dir "$cdir" --plugin "$PLUGIN" --types-db "$top/plugin/diskprobe.types.db"
      --collectd-seconds "$COLLECTD_SECONDS")
  else
    echo "bench: collectd or $PLUGIN missing: skipping the collectd section" >&2
  fi
fi
if [[ $sections == *,alloc,* ]]; then
  if command -v valgrind >/dev/null; then
    if [ -z "${shm_dev:-}" ]; then
      make_shm_loop 64
      shm_dev=$LOOP_DEV
    fi
    args+=(--alloc-dev "$shm_dev")
  else
    echo "bench: valgrind missing: skipping the allocation section" >&2
  fi
fi

PY=python3
# Debian's python3 has python3-matplotlib; a pyenv shim earlier in PATH may not.
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
"$PY" "$here/bench.py" "${args[@]}"
# results/latest -> the newest run kept under results/
if [ "$(dirname "$OUT")" = "$here/results" ]; then
  ln -sfn "$(basename "$OUT")" "$here/results/latest"
fi
