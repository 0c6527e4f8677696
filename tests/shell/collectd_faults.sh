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
need root collectd

d=$(make_tmpdir)
mkdir -p "$d/foreign" "$d/ww" "$d/small" "$d/ro"
echo "precious" >"$d/victim"
ln -s "$d/victim" "$d/sym.probe"
echo "not yours" >"$d/foreign/diskprobe.probe"
chmod 0600 "$d/foreign/diskprobe.probe"
chmod 0777 "$d/ww"
echo "regular" >"$d/plainfile"
mount -t tmpfs -o size=8m,mode=0700 dp-small "$d/small" && register_mount "$d/small" || fail "cannot mount tmpfs"
mount -t tmpfs -o ro,mode=0700 dp-ro "$d/ro" && register_mount "$d/ro" || fail "cannot mount read-only tmpfs"
sums() { sha256sum "$d/victim" "$d/foreign/diskprobe.probe" "$d/plainfile"; }
sums >"$d/sums.before"

target() { printf '  <Target "%s">\n    %s "%s"\n    FileSize "16M"\n    ProbeInterval 1\n    <Probe "r">\n      Duration 0.1\n    </Probe>\n  </Target>\n' "$@"; }
# c_complain's first back-off is collectd's interval: 10 s
collectd_conf "$d" 10 <<CONF
  Splay false
  DutyCycle 100
$(target good Path "$d/good")
$(target missing Path "/nonexistent-$$/a/b")
$(target symlink Path "$d/sym.probe")
$(target foreign Path "$d/foreign")
$(target notblock Device "$d/plainfile")
$(target full Path "$d/small/dp")
$(target readonly Path "$d/ro/dp")
$(target worldwritable Path "$d/ww")
CONF

collectd_check "$d" || fail "collectd -T refused a config whose problems only show at run time"
: >"$d/collectd.log"
rm -rf "$d/rrd"/*
collectd_run "$d" 9 || fail "collectd exited with status $?"

expect() { # expect TARGET TEXT
  local n
  n=$(grep -c "diskprobe plugin: target \"$1\" .*$2" "$d/collectd.log")
  if [ "$n" = 1 ]; then
    pass "$1: $(log_first -F "$d/collectd.log" "diskprobe plugin: target \"$1\"")"
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
n=$(rrd_points "$f" 60)
[ "$n" -ge 5 ] && pass "the healthy target kept probing ($n rounds in the RRD)" || fail "healthy target: only $n rounds"
grep -q "Exiting normally" "$d/collectd.log" && pass "collectd ran until stopped" || fail "collectd did not exit normally"

sums | diff - "$d/sums.before" >/dev/null && pass "symlink target, foreign file and plain file untouched" || fail "a file that is not ours changed"
[ ! -e "$d/ww/diskprobe.probe" ] && [ ! -e "$d/small/dp/diskprobe.probe" ] && pass "nothing left in refused places" ||
  fail "a probe file was left behind in a refused place"
finish collectd_faults 'cat "$d/collectd.log"'
