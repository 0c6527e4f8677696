#!/bin/bash
# collectd_faults.sh - bad targets at run time, with the real collectd.
#
# One healthy target and seven broken ones: a missing directory, a symlink
# where the probe file should be, someone else's file there, a Device that
# is a regular file, a filesystem too small for the probe file, a read-only
# filesystem, a world-writable directory. Over eight rounds each broken
# target gets exactly one clear log line naming it and the cause (rate
# limited with collectd's c_complain), collectd keeps running, the healthy
# target keeps dispatching, and nothing outside the probe files is touched.
set -u
. "$(dirname "$0")/lib.sh"
need_root
need_collectd
FAILED=0

d=$(make_tmpdir)
collectd_dir "$d"
mkdir -p "$d/foreign" "$d/ww" "$d/small" "$d/ro"
echo "precious" >"$d/victim"
ln -s "$d/victim" "$d/sym.probe"
echo "not yours" >"$d/foreign/diskprobe.probe"
chmod 0600 "$d/foreign/diskprobe.probe"
chmod 0777 "$d/ww"
echo "regular" >"$d/plainfile"
mount -t tmpfs -o size=8m,mode=0700 dp-small "$d/small" && _mounts+=("$d/small") || fail "cannot mount tmpfs"
mount -t tmpfs -o ro,mode=0700 dp-ro "$d/ro" && _mounts+=("$d/ro") || fail "cannot mount read-only tmpfs"
sums() { sha256sum "$d/victim" "$d/foreign/diskprobe.probe" "$d/plainfile"; }
sums >"$d/sums.before"

target() { printf '  <Target "%s">\n    %s "%s"\n    FileSize "16M"\n    ProbeInterval 1\n    <Probe "r">\n      Duration 0.1\n    </Probe>\n  </Target>\n' "$@"; }
{
  collectd_conf_head "$d" 10 # c_complain's first back-off is collectd's interval
  echo 'LoadPlugin diskprobe'
  echo '<Plugin diskprobe>'
  echo '  Splay false'
  echo '  DutyCycle 100'
  target good Path "$d/good"
  target missing Path "/nonexistent-$$/a/b"
  target symlink Path "$d/sym.probe"
  target foreign Path "$d/foreign"
  target notblock Device "$d/plainfile"
  target full Path "$d/small/dp"
  target readonly Path "$d/ro/dp"
  target worldwritable Path "$d/ww"
  echo '</Plugin>'
} >"$d/collectd.conf"

collectd -T -C "$d/collectd.conf" >/dev/null 2>&1 || fail "collectd -T refused a config whose problems only show at run time"
: >"$d/collectd.log"
rm -rf "$d/rrd"/*
collectd_run "$d" 9 || fail "collectd exited with status $?"

expect() { # expect TARGET TEXT
  local n
  n=$(grep -c "diskprobe plugin: target \"$1\" .*$2" "$d/collectd.log")
  if [ "$n" = 1 ]; then
    pass "$1: $(grep "diskprobe plugin: target \"$1\"" "$d/collectd.log" | head -1 | cut -c23-)"
  else
    fail "$1: expected one line with '$2', found $n: $(grep "target \"$1\"" "$d/collectd.log")"
  fi
}
expect missing "cannot create directory /nonexistent-$$/a/b: No such file or directory"
expect symlink "probe file path is a symlink: not following"
expect foreign "existing file is not a diskprobe probe file: not touching it"
expect notblock "not a block device"
expect full "no space for a 16777216-byte probe file"
expect readonly "Read-only file system"
expect worldwritable "world-writable without the sticky bit"

f="$d/rrd/diskprobe-test/diskprobe-good/operations_per_second-r.rrd"
n=$(rrdtool fetch "$f" AVERAGE -s -60s 2>/dev/null | grep -E '^[0-9]+: [0-9]' | grep -vc nan)
[ "$n" -ge 5 ] && pass "the healthy target kept probing ($n rounds in the RRD)" || fail "healthy target: only $n rounds"
grep -q "Exiting normally" "$d/collectd.log" && pass "collectd ran until stopped" || fail "collectd did not exit normally"

sums | diff - "$d/sums.before" >/dev/null && pass "symlink target, foreign file and plain file untouched" || fail "a file that is not ours changed"
[ ! -e "$d/ww/diskprobe.probe" ] && [ ! -e "$d/small/dp/diskprobe.probe" ] && pass "nothing left in refused places" ||
  fail "a probe file was left behind in a refused place"
[ "$FAILED" = 0 ] && echo "collectd_faults: all checks passed" || { cat "$d/collectd.log"; exit 1; }
