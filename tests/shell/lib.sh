# tests/lib.sh - shared helpers for the shell tests: skipping, loop devices
# and cgroup-v1 blkio throttling. Source it; every resource it makes is
# released by cleanup (installed as an EXIT trap by the first make_* call).
#
# Exit codes follow automake: 0 pass, 1 fail, 77 skip.

: "${top_builddir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
DISKPROBE="$top_builddir/src/cli/diskprobe"
BLKIO=/sys/fs/cgroup/blkio

# Resources are recorded in a registry file, not in shell arrays: the
# make_* helpers run in command substitutions (subshells), whose variables
# the test's own shell never sees.
_REG=$(mktemp /tmp/diskprobe-test-reg.XXXXXX)
_pids=() _mounts=()
cleanup() {
  local p kind
  for p in "${_pids[@]}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  for p in "${_pids[@]}"; do [ -n "$p" ] && wait "$p" 2>/dev/null; done
  for p in "${_mounts[@]}"; do umount -l "$p" 2>/dev/null; done
  while read -r kind p; do [ "$kind" = loop ] && losetup -d "$p" 2>/dev/null; done <"$_REG"
  while read -r kind p; do
    [ "$kind" = cgroup ] && [ -f "$p/cgroup.procs" ] || continue
    # move any straggler back to the root group before removing
    while read -r pid; do echo "$pid" >"$BLKIO/cgroup.procs"; done <"$p/cgroup.procs" 2>/dev/null
    rmdir "$p" 2>/dev/null
  done <"$_REG"
  if [ -z "${KEEP_TMP:-}" ]; then
    while read -r kind p; do [ "$kind" = dir ] && rm -rf "$p"; done <"$_REG"
  fi
  rm -f "$_REG"
  return 0
}
trap cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; FAILED=1; }
pass() { echo "ok: $*"; }

need_root() { [ "$(id -u)" = 0 ] || skip "needs root (loop devices, cgroups)"; }
need_loop() {
  command -v losetup >/dev/null || skip "losetup not installed"
  [ -e /dev/loop-control ] || modprobe loop 2>/dev/null
  [ -e /dev/loop-control ] || skip "no loop device support (/dev/loop-control missing)"
}
need_blkio() {
  [ -f "$BLKIO/blkio.throttle.read_iops_device" ] ||
    skip "cgroup-v1 blkio throttling unavailable ($BLKIO/blkio.throttle.read_iops_device missing)"
}

# make_tmpdir: a fresh directory on a filesystem with O_DIRECT (/var/tmp).
make_tmpdir() {
  local d
  d=$(mktemp -d /var/tmp/diskprobe-test.XXXXXX) || exit 1
  echo "dir $d" >>"$_REG"
  [ -n "${KEEP_TMP:-}" ] && echo "keeping $d" >&2
  echo "$d"
}

# make_loop SIZE_MB [DIR]: a loop device over a new backing file; prints it.
make_loop() {
  local size=$1 dir=${2:-} f dev
  [ -n "$dir" ] || dir=$(make_tmpdir)
  f="$dir/backing.$RANDOM.img"
  truncate -s "${size}M" "$f" || exit 1
  dev=$(losetup -f --show --direct-io=on "$f" 2>/dev/null || losetup -f --show "$f") ||
    skip "cannot attach a loop device"
  echo "loop $dev" >>"$_REG"
  echo "$dev"
}

# make_cgroup: a new blkio cgroup; prints its directory.
make_cgroup() {
  local cg="$BLKIO/diskprobe-test-$$-$RANDOM"
  mkdir "$cg" || skip "cannot create a blkio cgroup"
  echo "cgroup $cg" >>"$_REG"
  echo "$cg"
}

devnum() { printf '%d:%d' "0x$(stat -c %t "$1")" "0x$(stat -c %T "$1")"; }

# throttle CGROUP DEV KIND VALUE: KIND is read_iops, write_iops, read_bps...
throttle() { echo "$(devnum "$2") $4" >"$1/blkio.throttle.$3_device"; }
unthrottle() { echo "$(devnum "$2") 0" >"$1/blkio.throttle.$3_device"; }

# in_cgroup CGROUP CMD...: runs CMD inside CGROUP.
in_cgroup() {
  local cg=$1
  shift
  bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# spawn_in_cgroup CGROUP CMD...: starts CMD in the background inside
# CGROUP; its pid (CMD itself, not a wrapper shell) is in $SPAWNED.
spawn_in_cgroup() {
  local cg=$1
  shift
  (echo "$BASHPID" >"$cg/cgroup.procs" && exec "$@") &
  SPAWNED=$!
  _pids+=("$SPAWNED")
}

# json_get FILE EXPR: evaluates a python expression over the JSON object d.
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# within VALUE TARGET PCT: true if |VALUE-TARGET| <= PCT% of TARGET.
within() { python3 -c 'import sys; v,t,p=map(float,sys.argv[1:]); sys.exit(0 if abs(v-t)<=t*p/100 else 1)' "$1" "$2" "$3"; }

# ---- collectd --------------------------------------------------------------
need_collectd() {
  command -v collectd >/dev/null || skip "collectd (collectd-core) not installed"
  [ -f "$top_builddir/plugin/.libs/diskprobe.so" ] || skip "plugin not built"
}

# collectd_dir DIR: a private PluginDir holding copies of the plugins we use
# (collectd's PluginDir refuses symlinks) next to the built diskprobe.so.
collectd_dir() {
  local d=$1 p
  mkdir -p "$d/plugins" "$d/rrd"
  for p in logfile rrdtool write_prometheus threshold unixsock network csv; do
    [ -f "/usr/lib/collectd/$p.so" ] && cp "/usr/lib/collectd/$p.so" "$d/plugins/"
  done
  cp "$top_builddir/plugin/.libs/diskprobe.so" "$d/plugins/"
}

# collectd_conf_head DIR INTERVAL: global options, logfile and rrdtool.
collectd_conf_head() {
  local d=$1 ivl=$2
  cat <<CONF
Hostname "diskprobe-test"
FQDNLookup false
BaseDir "$d"
PIDFile "$d/collectd.pid"
PluginDir "$d/plugins"
TypesDB "/usr/share/collectd/types.db"
TypesDB "$top_srcdir/plugin/diskprobe.types.db"
Interval $ivl
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$d/collectd.log"
  Timestamp true
</Plugin>
LoadPlugin rrdtool
<Plugin rrdtool>
  DataDir "$d/rrd"
</Plugin>
CONF
}

# collectd_run DIR SECONDS: runs collectd in the foreground for SECONDS,
# then stops it with SIGTERM; returns collectd's exit status.
collectd_run() {
  local d=$1 secs=$2 pid rc
  collectd -f -C "$d/collectd.conf" >>"$d/collectd.out" 2>&1 &
  pid=$!
  _pids+=("$pid")
  sleep "$secs"
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  _pids=("${_pids[@]/$pid/}")
  return $rc
}

# rrd_last FILE DS: the last value of data source DS ("value" if omitted).
rrd_last() {
  rrdtool lastupdate "$1" | python3 -c '
import sys
lines = [l for l in sys.stdin.read().splitlines() if l.strip()]
names = lines[0].split()
vals = lines[-1].split(":", 1)[1].split()
print(vals[names.index(sys.argv[1])])' "${2:-value}"
}
