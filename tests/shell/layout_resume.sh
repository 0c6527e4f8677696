#!/bin/bash
# layout_resume.sh - the probe file's layout in the real collectd: paced by
# LayoutRate, stopped by a shutdown and resumed at the next start.
#   - LayoutRate 8M and a 256 MiB file: collectd stopped while the layout
#     runs shuts down without a worker left behind ("did not stop in time")
#     and keeps the partial file (mode 0600, shorter than FileSize);
#   - started again (LayoutRate 0): "resuming an interrupted layout at N
#     bytes" with N > 0, then the file is FileSize long, without holes, and
#     probed (an RRD appears);
#   - the figures (bytes written before the stop, the rate they imply, how
#     long the shutdown took) are printed, not judged: the machine is shared.
set -u
. "$(dirname "$0")/lib.sh"
need collectd
FAILED=0

d=$(make_tmpdir)
probe="$d/probe/diskprobe.probe"
log="$d/collectd.log"
conf() { # conf RATE
  collectd_conf "$d" 1 <<CONF
  Splay false
  <Target "lay">
    Path "$d/probe"
    FileSize 256M
    LayoutRate $1
    ProbeInterval 2
    <Probe "r">
      BlockSize "4k"
      Duration 0.2
    </Probe>
  </Target>
CONF
}

conf 8M
collectd_start "$d"
wait_until 20 test -s "$probe" || die "no probe file being laid out: $(tail -5 "$log")"
sleep 3
size1=$(stat -c %s "$probe")
collectd_stop "$COLLECTD_PID" 60
grep -F "shut down in" "$log" | tail -1 | sed 's/^/  /'
if grep -qF "did not stop in time" "$log"; then
  fail "a worker was left behind at shutdown: $(grep -F 'did not stop in time' "$log")"
else
  pass "shutdown during the layout left no worker behind"
fi
grep -qF "laid out probe file" "$log" && fail "the layout finished before the stop (rate not applied?)"
[ -f "$probe" ] || die "the partial probe file was removed"
size2=$(stat -c %s "$probe")
mode=$(stat -c %a "$probe")
echo "  partial file: $size1 bytes 3 s into the layout, $size2 at the stop (mode $mode)"
echo "  implied rate: $(num_calc "$size1 / 3 / 1048576" %.1f) MiB/s (LayoutRate 8 MiB/s)"
num_cmp "$size2" '<' $((256 << 20)) && pass "partial file kept, shorter than FileSize" ||
  fail "partial file is $size2 bytes"
[ "$mode" = 600 ] && pass "partial file mode 0600" || fail "partial file mode $mode"

conf 0
collectd_start "$d"
if wait_log "$log" 60 "resuming an interrupted layout at"; then
  line=$(grep -m1 "resuming an interrupted layout at" "$log")
  at=$(echo "$line" | sed -n 's/.*resuming an interrupted layout at \([0-9]*\) bytes.*/\1/p')
  pass "resumed: ${line#*plugin: }"
  num_cmp "${at:-0}" '>' 0 && num_cmp "${at:-0}" '<=' "$size2" &&
    pass "resumed at $at bytes, within what the stop left ($size2)" ||
    fail "resumed at '${at}', the stop left $size2 bytes"
else
  fail "no resumed layout: $(grep -F 'laid out probe file' "$log" | tail -1)"
fi
rrd="$d/rrd/$COLLECTD_HOST/diskprobe-lay/operations_per_second-r.rrd"
wait_until 30 test -f "$rrd" && pass "probing after the resumed layout" || fail "no RRD for the probe"
collectd_stop "$COLLECTD_PID" 60 >/dev/null
size3=$(stat -c %s "$probe")
hole=$(python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); print(os.lseek(fd, 0, os.SEEK_HOLE))' "$probe")
[ "$size3" = $((256 << 20)) ] && [ "$hole" = "$size3" ] &&
  pass "probe file complete: $size3 bytes, first hole at the end" ||
  fail "probe file $size3 bytes, first hole at $hole"
finish layout_resume 'tail -20 "$log"'
