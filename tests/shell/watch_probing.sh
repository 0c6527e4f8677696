#!/bin/bash
# watch_probing.sh - one read sequence for every front-end: a target whose
# filesystem goes away mid-run (ext4 on a loop device, unmounted lazily
# under the running probe) is FAILURE by "probing" in collectd and in
# `diskprobe watch` alike, with the same words (the path, the device, the
# target's name and the host aside), and neither lays a probe file out on
# the filesystem underneath.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd
need_cmd mkfs.ext4 e2fsprogs
d=$(make_tmpdir)
# two filesystems, one per front-end, probed side by side
make_fs "$(make_loop 64 "$d")" "$d/a"
make_fs "$(make_loop 64 "$d")" "$d/b"
collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
  <Target "pf">
    Path "$d/a/data"
    FileSize "16M"
    ProbeInterval 2
    <Probe "r">
      Duration 0.1
    </Probe>
  </Target>
CONF
log="$d/collectd.log"
collectd_start "$d"
"$DISKPROBE" watch --interval 2s --duty-cycle 100 --file-size 16m \
  --duration 0.1 --count 30 "$d/b/data" >"$d/watch.out" 2>"$d/watch.err" &
wpid=$!
register_pid "$wpid"
wait_until 60 sh -c "[ \$(grep -c ' verdict ' '$d/watch.out') -ge 2 ] && grep -q 'laid out probe file' '$log'" ||
  die "no first rounds: $(tail -3 "$d/watch.err" "$log")"
sleep 3 # a round or two of collectd's too
umount -l "$d/a" && umount -l "$d/b" || die "cannot unmount the filesystems"

# The FAILURE notice: collectd's logfile plugin logs notifications as
# "Notification: severity = FAILURE, ..., message = TEXT"; watch prints
# "diskprobe watch: FAILURE: TEXT" on stderr.
failure_c() { grep -m1 'Notification: severity = FAILURE.*type_instance = probing' "$log" | sed 's/.*message = //'; }
failure_w() { grep -m1 '^diskprobe watch: FAILURE: .*FAILURE by probing' "$d/watch.err" | sed 's/^diskprobe watch: FAILURE: //'; }
wait_until 30 sh -c "grep -q 'Notification: severity = FAILURE.*type_instance = probing' '$log'" &&
  pass "collectd: FAILURE by probing: $(failure_c)" || fail "collectd: no FAILURE by probing"
wait_until 30 sh -c "grep -q '^diskprobe watch: FAILURE: .*FAILURE by probing' '$d/watch.err'" &&
  pass "watch: FAILURE by probing: $(failure_w)" || fail "watch: no FAILURE by probing"
# the same words once the path, the loop device, the target's name and the
# host are named alike
norm() {
  sed -E "s#$d/[ab]/data(/diskprobe.probe)?#PATH#g; s#loop[0-9]+#DEV#g; s#[0-9]+:[0-9]+#N:N#g;
          s#target [^ ]+ \(#target T (#g; s#host [^ ,;]+#host H#g"
}
# (collectd cuts a notification's message at 255 bytes: then the words
# up to the cut)
c=$(failure_c | norm) w=$(failure_w | norm)
[ "$(failure_c | wc -c)" -gt 255 ] && w=${w:0:${#c}}
[ -n "$c" ] && [ "$c" = "$w" ] && pass "the same words: $c" ||
  fail "different words: collectd '$c', watch '$w'"
# the FAILURE is kept, not repeated: one notice each, every read a verdict
sleep 5
n=$(grep -c 'Notification: severity = FAILURE.*type_instance = probing' "$log")
[ "$n" = 1 ] && pass "collectd: one FAILURE notice for the whole outage" || fail "collectd: $n FAILURE notices"
n=$(grep -c '^diskprobe watch: FAILURE: .*FAILURE by probing' "$d/watch.err")
[ "$n" = 1 ] && pass "watch: one FAILURE line for the whole outage" || fail "watch: $n FAILURE lines"
n=$(grep -c ' verdict .*FAILURE' "$d/watch.out")
num_cmp "$n" '>=' 2 && pass "watch: a FAILURE verdict every read while not probing ($n)" ||
  fail "watch: $n FAILURE verdict lines"
# nothing written to the filesystem underneath
left=$(find "$d/a" "$d/b" -mindepth 1 2>/dev/null | head -3)
[ -z "$left" ] && pass "no probe file laid out under the mount points" || fail "written underneath: $left"
kill -TERM "$wpid" 2>/dev/null
wait "$wpid"
rc=$?
_unregister_pid "$wpid"
[ "$rc" = 0 ] && pass "watch stopped on SIGTERM with status 0" || fail "watch exited with status $rc"
collectd_stop >/dev/null
finish watch_probing "tail -n 5 $log $d/watch.err"
