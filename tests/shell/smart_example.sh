#!/bin/bash
# tests/shell/smart_example.sh - contrib/examples/smart.conf, the drop-in
# that loads collectd's smart plugin for the probed disks:
#
#  * collectd -T (parse, init, one read of every plugin, exit) with the
#    drop-in included as Debian's collectd.conf includes it: accepted, the
#    smart plugin loaded and read without an error line (the default Disk
#    expression leaves out the devices it cannot open);
#  * that expression, as collectd's ignorelist applies it to kernel names:
#    whole SCSI/SATA and NVMe disks are taken; loop, device-mapper, md,
#    zram, optical and virtio devices and partitions are not.
#
# Needs collectd with smart.so and its library (Debian: libatasmart4).
# Exit 0 pass, 1 fail, 77 skip.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd collectd collectd-core
[ -f /usr/lib/collectd/smart.so ] || skip "collectd has no smart plugin (/usr/lib/collectd/smart.so)"
ldd /usr/lib/collectd/smart.so | grep -q 'not found' && skip "smart.so misses a library (Debian: libatasmart4)"
conf=$top_srcdir/contrib/examples/smart.conf
d=$(make_tmpdir)
mkdir -p "$d/plugins"
cp /usr/lib/collectd/logfile.so /usr/lib/collectd/smart.so "$d/plugins/"
{
  printf 'Hostname "%s"\nFQDNLookup false\nBaseDir "%s"\nPIDFile "%s/collectd.pid"\nPluginDir "%s/plugins"\n' \
    "$COLLECTD_HOST" "$d" "$d" "$d"
  echo 'TypesDB "/usr/share/collectd/types.db"'
  collectd_logfile "$d/collectd.log"
  echo "Include \"$conf\""
} >"$d/collectd.conf"
collectd_check "$d" && pass "collectd -T accepts the drop-in" || fail "collectd -T refused it: $(cat "$d/check.out")"
grep -q 'plugin "smart" successfully loaded' "$d/collectd.log" && pass "the smart plugin is loaded" ||
  fail "the smart plugin was not loaded: $(cat "$d/collectd.log")"
grep -i 'smart plugin' "$d/collectd.log" && fail "the smart plugin logged the lines above"

# The Disk expression as the ignorelist uses it: /.../ is a POSIX ERE.
re=$(sed -n 's|^ *Disk "/\(.*\)/"$|\1|p' "$conf")
[ -n "$re" ] || die "no Disk \"/REGEX/\" line in $conf"
for n in sda sdz sdaa nvme0n1 nvme12n3; do
  grep -Eq "$re" <<<"$n" && pass "taken: $n" || fail "not taken: $n (expression $re)"
done
for n in sda1 nvme0n1p2 loop0 dm-0 md127 zram0 sr0 vda xvda nvme0; do
  grep -Eq "$re" <<<"$n" && fail "taken, but has no SMART of its own: $n (expression $re)" || pass "left out: $n"
done
finish smart_example 'cat "$d/collectd.log"'
