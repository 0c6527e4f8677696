#!/bin/bash
# fault_matrix.sh - the real collectd through every fault of the README's
# table (tests/README.md, "What happens when a target breaks"), each on a
# target of its own in one daemon, beside a healthy
# "control" target. For each fault: the exact log line (the messages of
# src/target.c, src/events.c, src/scheduler.c, plugin/diskprobe.c), collectd
# still running, the control target still dispatching (its RRD points grow
# after the fault) and nothing written outside the probe files (sha256 of
# the other files and the listing of the directories involved, before and
# after). Faults at start: missing path, no permission (an immutable
# directory: root cannot write it), a path under a file, read-only ext4, no
# space (pre-check, and during the layout: writes throttled, the filesystem
# filled meanwhile), tmpfs, a hung device (1 IOPS). Faults while running:
# the probe file replaced by a symlink or a foreign file, truncated, holes
# punched, a range zeroed (fallocate -z: unwritten extents, inode, size and
# blocks kept), deleted; its directory swapped for a symlink; remount read-only
# (read probes only: must not be busy); a loop Device detached (losetup -d)
# and a device-mapper Device removed (dmsetup remove --force); EIO (FUSE);
# ENOSPC on a write probe's overwrites (FUSE: a full copy-on-write
# filesystem, a WARNING, not a FAILURE);
# a second process on a probe file (collectd -T, diskprobe run); then
# SIGTERM with the device still hung. Out-of-range config: collectd -T.
# Ends with a table: fault | expected line | seen | collectd alive |
# control dispatching | outside untouched.
set -u
. "$(dirname "$0")/lib.sh"
need root loop throttle collectd
need_cmd fallocate util-linux
need_cmd chattr e2fsprogs
need_cmd mkfs.ext4 e2fsprogs

d=$(make_tmpdir)
log="$d/collectd.log"
rrd="$d/rrd/$COLLECTD_HOST"
mkdir -p "$d/fp"
at_exit "chattr -i '$d/imm' 2>/dev/null"

# ---- bookkeeping -------------------------------------------------------------
# fingerprint PATH: a directory's listing (without probe files) and its
# files' sums; a file's or block device's sum; "absent".
fingerprint() {
  if [ -d "$1" ]; then
    (cd "$1" && find . -mindepth 1 ! -name diskprobe.probe ! -path './lost+found*' -printf '%p %y %m\n' | sort &&
      find . -type f ! -name diskprobe.probe ! -path './lost+found*' -print0 | sort -z | xargs -0r sha256sum)
  elif [ -b "$1" ]; then
    sha256sum <"$1"
  elif [ -e "$1" ] || [ -L "$1" ]; then
    [ -L "$1" ] && echo "symlink to $(readlink "$1")"
    sha256sum "$1" 2>&1
  else
    echo absent
  fi
}
# track FAULT PATH...: PATHs must be the same at the end of the test.
track() {
  local f=$1 p
  shift
  for p; do
    echo "$p" >>"$d/fp/$f.paths"
    fingerprint "$p" >>"$d/fp/$f.before"
  done
}
ORDER=()
declare -A EXP SEEN ALIVE CTRL OUTSIDE
ctl_points() { rrd_points "$rrd/diskprobe-control/operations_per_second-r.rrd" 900; }
pts() { rrd_points "$rrd/diskprobe-$1/operations_per_second-r.rrd" 900; }
# pts_gt TARGET N: TARGET has more than N points (for wait_until).
pts_gt() { [ "$(pts "$1")" -gt "$2" ]; }
# has FILE PREFIX TEXT: a line of FILE holds PREFIX and TEXT (fixed strings).
has() { grep -F -- "$2" "$1" 2>/dev/null | grep -qF -- "$3"; }
line_of() { grep -F -- "$2" "$1" | grep -F -m1 -- "$3" | sed 's/^\[[^]]*\] //'; }
# after_fault FAULT OK: records seen=OK, collectd alive, and whether the
# control target dispatched a new point after now.
after_fault() {
  local f=$1 ok=$2 c0
  ORDER+=("$f")
  SEEN[$f]=$ok
  c0=$(ctl_points)
  if wait_until 15 pts_gt control "$c0"; then
    CTRL[$f]=yes
  else
    CTRL[$f]=no
    fail "$f: the control target stopped dispatching ($c0 points)"
  fi
  if is_running "$COLLECTD_PID"; then ALIVE[$f]=yes; else
    ALIVE[$f]=no
    fail "$f: collectd is not running"
  fi
}
# expect_log FAULT TARGET TEXT [SECONDS]: the plugin's line for TARGET
# holding TEXT appears.
expect_log() { expect_in "$1" "$log" "diskprobe plugin: target \"$2\"" "$3" "${4:-20}"; }
# expect_notif FAULT TARGET TEXT: a FAILURE notification of TARGET with TEXT.
expect_notif() { expect_in "$1" "$log" "severity = FAILURE, host = $COLLECTD_HOST, plugin = diskprobe, plugin_instance = $2" "$3" 20; }
expect_in() { # expect_in FAULT FILE PREFIX TEXT SECONDS
  local f=$1 file=$2 pre=$3 text=$4 secs=$5
  EXP[$f]=$text
  if wait_until "$secs" has "$file" "$pre" "$text"; then
    pass "$f: $(line_of "$file" "$pre" "$text")"
    after_fault "$f" yes
  else
    fail "$f: no line with '$text' in $file; its lines: $(grep -F -- "$pre" "$file" | tail -3)"
    after_fault "$f" no
  fi
}
# expect_cmd FAULT DESCRIPTION CMD...: an outcome that is not a log line.
expect_cmd() {
  local f=$1 desc=$2
  shift 2
  EXP[$f]=$desc
  if "$@"; then pass "$f: $desc"; after_fault "$f" yes; else
    fail "$f: not so: $desc"
    after_fault "$f" no
  fi
}

# ---- the scene ---------------------------------------------------------------
probe_r='    <Probe "r">\n      Pattern randread\n      BlockSize "4k"\n      Duration 0.1\n    </Probe>\n'
probe_w='    <Probe "w">\n      Pattern randwrite\n      BlockSize "4k"\n      Duration 0.1\n    </Probe>\n'
target() { # target NAME Path|Device PATH [FILESIZE] [EXTRA: lines as probe_r's]
  printf '  <Target "%s">\n    %s "%s"\n    FileSize "%s"\n    ProbeInterval 1\n    Timeout 2\n' "$1" "$2" "$3" "${4:-16M}"
  printf "${5:-}"
  printf "$probe_r"
  printf '  </Target>\n'
}

# the control target, and the run-time faults' targets on /var/tmp
mkdir -p "$d/control" "$d/symswap" "$d/foreign" "$d/trunc" "$d/holes" "$d/zeroed" "$d/deleted" "$d/dirswap" "$d/elsewhere"
for t in control symswap foreign trunc holes zeroed deleted dirswap; do head -c 5000 /dev/urandom >"$d/$t/neighbour"; done
echo "precious" >"$d/victim"
echo "someone's data" >"$d/elsewhere/precious"
# start-time faults
echo "regular" >"$d/plainfile"
mkdir -p "$d/imm" && chattr +i "$d/imm" || fail "chattr +i $d/imm failed"
track "missing path" "/nonexistent-$$"
track "no permission" "$d/imm"
track "path under a file" "$d/plainfile"
# read-only ext4
rodev=$(make_loop 32 "$d") || exit
make_fs "$rodev" "$d/rofs"
mkdir "$d/rofs/dp" && echo canary >"$d/rofs/canary"
mount -o remount,ro "$d/rofs" || fail "cannot remount $d/rofs read-only"
track "read-only filesystem" "$d/rofs"
# no space: 8 MiB filesystem, 16 MiB probe file
nsdev=$(make_loop 8 "$d") || exit
make_fs "$nsdev" "$d/nospace"
mkdir "$d/nospace/dp" && echo canary >"$d/nospace/canary"
track "no space (checked before layout)" "$d/nospace"
# no space during the layout: a 32 MiB probe file written at 2 MB/s; the
# filesystem is filled once the layout has begun
nldev=$(make_loop 64 "$d") || exit
make_fs "$nldev" "$d/nslayout"
mkdir "$d/nslayout/dp" && echo canary >"$d/nslayout/canary"
# tmpfs
mkdir -p "$d/tmpfs" && mount -t tmpfs -o size=64m,mode=0700 dp-fm "$d/tmpfs" && register_mount "$d/tmpfs" ||
  fail "cannot mount tmpfs"
echo canary >"$d/tmpfs/canary"
track "tmpfs" "$d/tmpfs"
# remount read-only while running: read probes only
rmdev=$(make_loop 64 "$d") || exit
make_fs "$rmdev" "$d/remount"
mkdir "$d/remount/dp" && echo canary >"$d/remount/canary"
# devices: hung (1 IOPS), detached (losetup -d), removed (device-mapper)
hung=$(make_loop 32 "$d" random) || exit
det=$(make_loop 32 "$d" random) || exit
dmlo=$(make_loop 32 "$d" random) || exit
dmname="dp-fm-$$" dm= have_dm=0
if dmsetup create "$dmname" --table "0 $((32 * 2048)) linear $dmlo 0" 2>"$d/dm.err"; then
  at_exit "dmsetup remove --force '$dmname' 2>/dev/null"
  udevadm settle 2>/dev/null
  dm="/dev/mapper/$dmname"
  [ -b "$dm" ] && have_dm=1 || fail "dmsetup created $dmname but there is no $dm"
else
  echo "no device-mapper here (the dm case is skipped): $(head -1 "$d/dm.err")"
fi
track "device hung (1 IOPS), then SIGTERM" "$hung"
track "device detached (losetup -d)" "$(losetup -nO BACK-FILE "$det" | awk '{print $1}')"
[ $have_dm = 1 ] && track "device removed (dmsetup remove --force)" "$dmlo"
# EIO, and ENOSPC on overwrites (a full copy-on-write filesystem): FUSE,
# one mount each (faultyfs.py's control word is per mount)
fuse_mount() { # fuse_mount NAME: $d/back-NAME on $d/mnt-NAME, control $d/ctl-NAME
  mkdir -p "$d/back-$1" "$d/mnt-$1"
  echo ok >"$d/ctl-$1"
  echo canary >"$d/back-$1/canary"
  /usr/bin/python3 "$(dirname "$0")/faultyfs.py" "$d/back-$1" "$d/mnt-$1" "$d/ctl-$1" >"$d/fuse-$1.log" 2>&1 &
  register_pid $!
  wait_until 5 mountpoint -q "$d/mnt-$1" && register_mount "$d/mnt-$1"
}
have_fuse=0
if [ -c /dev/fuse ] && /usr/bin/python3 -c "import fusepy" 2>/dev/null &&
  fuse_mount eio && fuse_mount cow; then
  have_fuse=1
fi

cg=$(make_cgroup) || exit
throttle "$cg" "$hung" read_iops 1
throttle "$cg" "$nldev" write_bps $((2 * 1024 * 1024))

hung_probe='    <Probe "r">\n      Pattern randread\n      BlockSize "4k"\n      QueueDepth 32\n      Duration 0.5\n    </Probe>\n'
collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
$(target control Path "$d/control")
$(target missing Path "/nonexistent-$$/a/b")
$(target noperm Path "$d/imm")
$(target underfile Path "$d/plainfile/dp")
$(target rofs Path "$d/rofs/dp")
$(target nospace Path "$d/nospace/dp")
$(target nslayout Path "$d/nslayout/dp" 32M)
$(target tmpfs Path "$d/tmpfs")
$(target remount Path "$d/remount/dp")
$(target symswap Path "$d/symswap")
$(target foreign Path "$d/foreign")
$(target trunc Path "$d/trunc")
$(target holes Path "$d/holes")
$(target zeroed Path "$d/zeroed")
$(target deleted Path "$d/deleted")
$(target dirswap Path "$d/dirswap")
$(target detach Device "$det")
$([ $have_dm = 1 ] && target dmgone Device "$dm")
$([ $have_fuse = 1 ] && target eio Path "$d/mnt-eio/dp" 8M)
$([ $have_fuse = 1 ] && target cowfull Path "$d/mnt-cow/dp" 8M "$probe_w")
  <Target "hung">
    Device "$hung"
    ProbeInterval 1
    Timeout 2
$(printf "$hung_probe")
  </Target>
CONF

collectd_start "$d" "$cg"
wait_until 30 pts_gt control 1 ||
  die "the control target never dispatched: $(tail -5 "$log")"
pass "control target dispatching ($(ctl_points) points)"

# ---- faults at start -----------------------------------------------------------
expect_log "missing path" missing "cannot create directory /nonexistent-$$/a/b: No such file or directory"
expect_log "no permission" noperm ": permission denied"
expect_log "path under a file" underfile "$d/plainfile is not a directory"
expect_log "read-only filesystem" rofs ": filesystem is read-only"
expect_log "no space (checked before layout)" nospace "no space for a 16777216-byte probe file ("
expect_log "tmpfs" tmpfs "$d/tmpfs is on tmpfs (or devtmpfs): a probe file in RAM measures memory, not a disk"
expect_log "device hung (1 IOPS), then SIGTERM" hung "stalled: "
grep -F 'target "hung"' "$log" | grep -qF "I/O outstanding for more than 2 s; no new probe on this disk until they complete." ||
  { fail "hung: the stall line does not say what the README says"; SEEN["device hung (1 IOPS), then SIGTERM"]=no; }

# no space during the layout: once the layout has begun, fill the filesystem
if wait_until 20 test -e "$d/nslayout/dp/diskprobe.probe"; then
  avail=$(df --output=avail -B1 "$d/nslayout" | tail -1)
  fallocate -l $((avail - 2 * 1024 * 1024)) "$d/nslayout/filler" || fail "cannot fill $d/nslayout"
  track "no space during layout" "$d/nslayout/canary" "$d/nslayout/filler" "$d/nslayout/dp"
  expect_log "no space during layout" nslayout "no space left while laying out the probe file (" 40
  wait_until 5 test ! -e "$d/nslayout/dp/diskprobe.probe" && pass "no space during layout: the half-written probe file was removed" ||
    { fail "no space during layout: a half-written probe file was left"; OUTSIDE["no space during layout"]=no; }
else
  fail "the nslayout probe file never appeared: $(grep -F '"nslayout"' "$log" | tail -2)"
fi

# ---- faults while running --------------------------------------------------------
laid() { has "$log" "target \"$1\": laid out probe file" ""; }
laid_twice() { [ "$(grep -cF "target \"$1\": laid out probe file" "$log")" -ge 2 ]; }
for t in symswap foreign trunc holes zeroed deleted dirswap remount; do
  wait_until 30 laid "$t" || fail "$t: never laid out: $(grep -F "\"$t\"" "$log" | tail -2)"
done
wait_until 20 pts_gt detach 0 || fail "the detach target never dispatched"
[ $have_dm = 1 ] && { wait_until 20 pts_gt dmgone 0 || fail "the dmgone target never dispatched"; }
[ $have_fuse = 1 ] && { wait_until 20 pts_gt eio 0 || fail "eio target never probed"; }
[ $have_fuse = 1 ] && { wait_until 20 pts_gt cowfull 0 || fail "cowfull target never probed"; }
sleep 1
for t in symswap foreign trunc holes zeroed deleted; do track "probe file $t" "$d/$t"; done
track "probe file symswap" "$d/victim"
track "directory swapped for a symlink" "$d/elsewhere" "$d/dirswap/neighbour"
track "remount read-only while running" "$d/remount/canary"
track "two processes on one file" "$d/control/diskprobe.probe" "$d/control"
[ $have_fuse = 1 ] && track "EIO" "$d/back-eio/canary"
[ $have_fuse = 1 ] && track "ENOSPC on overwrite (full copy-on-write filesystem)" "$d/back-cow/canary"
ino_control=$(stat -c %i "$d/control/diskprobe.probe")

# the probe file replaced by a symlink, by a foreign file; truncated; holes; deleted
ln -sf "$d/victim" "$d/symswap/diskprobe.probe.new" && mv -T "$d/symswap/diskprobe.probe.new" "$d/symswap/diskprobe.probe"
echo "not yours" >"$d/foreign/new" && chmod 0600 "$d/foreign/new" && mv -T "$d/foreign/new" "$d/foreign/diskprobe.probe"
track "probe file replaced by a foreign file" "$d/foreign/diskprobe.probe"
: >"$d/trunc/diskprobe.probe"
fallocate -p -o 1048576 -l 4194304 "$d/holes/diskprobe.probe"
fallocate -z -o 1048576 -l 4194304 "$d/zeroed/diskprobe.probe"
rm -f "$d/deleted/diskprobe.probe"
mv "$d/dirswap" "$d/dirswap.real" && ln -s "$d/elsewhere" "$d/dirswap"
# remount read-only, detach, remove, EIO
if mount -o remount,ro "$d/remount" 2>"$d/remount.err"; then rm_ok=1; else rm_ok=0; fi
losetup -d "$det" 2>"$d/losetup.err"
det_name=${det#/dev/}
[ $have_dm = 1 ] && dmsetup remove --force "$dmname" 2>"$d/dmsetup.err"
[ $have_fuse = 1 ] && echo eio >"$d/ctl-eio"
[ $have_fuse = 1 ] && echo enospc >"$d/ctl-cow"
# a second process on the control target's probe file
mkdir -p "$d/second"
collectd_conf "$d/second" 1 <<CONF
  Splay false
$(target control Path "$d/control" 32M)
CONF
rm_before=$(pts remount)
remount_ok() { [ $rm_ok = 1 ] && wait_until 10 pts_gt remount "$rm_before" && ! grep -F 'target "remount" (' "$log" | grep -q .; }

expect_log "probe file replaced by a symlink" symswap "probe file path is a symlink: not following ($d/symswap/diskprobe.probe)"
has "$log" 'target "symswap"' "$d/symswap/diskprobe.probe was deleted or replaced under us: opening it again" ||
  fail "symswap: no 'deleted or replaced' line first"
expect_log "probe file replaced by a foreign file" foreign "existing file is not a diskprobe probe file: not touching it"
expect_log "probe file truncated" trunc "probe file $d/trunc/diskprobe.probe changed size under us (0 bytes, was 16777216): checking it again"
expect_log "probe file holes punched" holes "probe file $d/holes/diskprobe.probe lost allocated blocks under us ("
expect_log "probe file range zeroed (fallocate -z)" zeroed "probe file $d/zeroed/diskprobe.probe was re-allocated under us (unwritten extent at offset 1048576: reads would return zeros without touching the disk): laying it out again"
expect_log "probe file deleted" deleted "probe file $d/deleted/diskprobe.probe was deleted or replaced under us: opening it again"
for t in trunc holes zeroed deleted; do
  wait_until 20 laid_twice "$t" &&
    pass "$t: laid out again" || { fail "$t: not laid out again"; SEEN["probe file $t"]=no; }
done
expect_log "directory swapped for a symlink" dirswap "$d/dirswap is a symlink (to $d/elsewhere): not following; configure the real path"
expect_cmd "remount read-only while running" "mount -o remount,ro succeeds; the read-only target keeps probing, no line" \
  remount_ok
[ $rm_ok = 1 ] || echo "  remount: $(cat "$d/remount.err")"
# losetup -d on an open loop device only sets autoclear: the kernel detaches it at the last close
det_before=$(pts detach)
detach_ok() { [ "$(cat "/sys/block/$det_name/loop/autoclear" 2>/dev/null)" = 1 ] && wait_until 10 pts_gt detach "$det_before"; }
expect_cmd "device detached (losetup -d)" "losetup -d deferred by the kernel (autoclear) while collectd holds it; probes go on, no line" \
  detach_ok
if [ $have_dm = 1 ]; then
  expect_notif "device removed (dmsetup remove --force)" dmgone "saw "
  has "$log" 'plugin_instance = dmgone' "I/O errors and 0 short transfers (Input/output error)" ||
    fail "dmgone: the notification does not name the I/O error"
  expect_log "device removed, then reopened" dmgone "cannot open device read-only: No such file or directory"
else
  f="device removed (dmsetup remove --force)"
  ORDER+=("$f") EXP[$f]="(skipped: no device-mapper in this kernel)" SEEN[$f]=skipped ALIVE[$f]=n/a CTRL[$f]=n/a OUTSIDE[$f]=n/a
fi
if [ $have_fuse = 1 ]; then
  expect_notif "EIO" eio "I/O errors and 0 short transfers (Input/output error)"
  # a full copy-on-write filesystem is no failing disk: one WARNING line,
  # a health WARNING naming ENOSPC, no FAILURE
  f="ENOSPC on overwrite (full copy-on-write filesystem)"
  expect_log "$f" cowfull "writes refused with ENOSPC (no space left on device): the filesystem is full"
  wait_until 10 has "$log" "severity = WARNING, host = $COLLECTD_HOST, plugin = diskprobe, plugin_instance = cowfull, type = health" "WARNING by errors: no space left on device (ENOSPC)" &&
    pass "$f: $(line_of "$log" "plugin_instance = cowfull, type = health" "no space left")" ||
    { fail "$f: no health WARNING naming ENOSPC"; SEEN[$f]=no; }
  ! grep -F "plugin_instance = cowfull" "$log" | grep -q "severity = FAILURE" ||
    { fail "$f: a FAILURE notification: $(grep -F "plugin_instance = cowfull" "$log" | grep -m1 "severity = FAILURE")"; SEEN[$f]=no; }
else
  ORDER+=("EIO") EXP[EIO]="(skipped: no /dev/fuse or python3-fusepy)" SEEN[EIO]=skipped ALIVE[EIO]=n/a CTRL[EIO]=n/a
  f="ENOSPC on overwrite (full copy-on-write filesystem)"
  ORDER+=("$f") EXP[$f]="(skipped: no /dev/fuse or python3-fusepy)" SEEN[$f]=skipped ALIVE[$f]=n/a CTRL[$f]=n/a
fi

collectd_check "$d/second"
rc_T=$?
expect_in "two processes on one file" "$d/second/collectd.log" "diskprobe plugin: target \"control\"" \
  "probe file $d/control/diskprobe.probe is held by another process (another collectd, or \`collectd -T\`?): not touching it" 5
"$DISKPROBE" run --file-size 32M --duration 0.2s "$d/control" >"$d/run.out" 2>&1
rc_run=$?
if [ $rc_run != 0 ] && grep -qF "held by another process" "$d/run.out"; then
  pass "two processes: diskprobe run refused (status $rc_run): $(head -1 "$d/run.out")"
else
  fail "two processes: diskprobe run status $rc_run: $(cat "$d/run.out")"
  SEEN["two processes on one file"]=no
fi
echo "  (collectd -T on the held file exited with status $rc_T)"
[ "$(stat -c %i "$d/control/diskprobe.probe")" = "$ino_control" ] && pass "two processes: the control probe file is the same inode" ||
  { fail "two processes: the control probe file was replaced"; OUTSIDE["two processes on one file"]=no; }

# out-of-range config: collectd -T refuses
mkdir -p "$d/oor"
collectd_conf "$d/oor" 1 <<CONF
  <Target "oor">
    Path "$d/oor/dp"
    <Probe "r">
      QueueDepth 300
    </Probe>
  </Target>
CONF
track "out-of-range config" "$d/oor/dp"
if collectd_check "$d/oor"; then rc_oor=0; else rc_oor=$?; fi
ORDER+=("out-of-range config")
EXP["out-of-range config"]='Option "QueueDepth": value "300" is invalid: allowed (collectd -T exits non-zero)'
if [ $rc_oor != 0 ] && grep -qF 'Option "QueueDepth": value "300" is invalid: allowed' "$d/oor/collectd.log" "$d/oor/check.out"; then
  SEEN["out-of-range config"]=yes
  pass "out-of-range config: collectd -T exit $rc_oor: $(grep -hF 'QueueDepth' "$d/oor/collectd.log" "$d/oor/check.out" | head -1 | sed 's/^\[[^]]*\] //')"
else
  SEEN["out-of-range config"]=no
  fail "out-of-range config: collectd -T status $rc_oor: $(cat "$d/oor/check.out" "$d/oor/collectd.log" 2>/dev/null | tail -3)"
fi
ALIVE["out-of-range config"]=$(is_running "$COLLECTD_PID" && echo yes || echo no)
CTRL["out-of-range config"]=n/a

# ---- SIGTERM with the device still hung -----------------------------------------
# SIGTERM while the hung device has I/O outstanding: after a stall line
hung_now() { grep -F 'target "hung"' "$log" | tail -1 | grep -qF ' stalled: '; }
wait_until 20 hung_now && pass "hung target stalled again: $(grep -F 'target "hung"' "$log" | tail -1 | sed 's/^\[[^]]*\] //')" ||
  fail "the hung target is not stalled before SIGTERM"
# its prober processes (comm is cut to 15 characters), which hold the I/O
probers=$(pgrep -P "$COLLECTD_PID" -x diskprobe-probe | tr '\n' ' ')
[ -n "$probers" ] && pass "every target's I/O runs in a prober process: $(echo $probers | wc -w) of them" ||
  fail "no prober process under collectd"
t_term=$(date +%s%N)
kill -TERM "$COLLECTD_PID"
if wait_log "$log" 30 "diskprobe plugin: shut down in"; then
  secs=$(grep -o "shut down in [0-9.]* s" "$log" | awk '{print $4}')
  num_cmp "$secs" '<=' 8 && pass "SIGTERM with the device hung: the plugin shut down in $secs s (Timeout 2 s + 5 s + 1)" ||
    { fail "plugin shutdown took $secs s"; SEEN["device hung (1 IOPS), then SIGTERM"]=no; }
  EXP["device hung (1 IOPS), then SIGTERM"]="device loopN stalled: ... for more than 2 s; then 'shut down in' <= 8 s, collectd gone while the device is still hung"
else
  fail "the plugin's shutdown did not return"
  SEEN["device hung (1 IOPS), then SIGTERM"]=no
fi
# The device still answers one read a second and the hung probe had 32 in
# flight: collectd itself must be gone long before those are back (the
# kernel waits for a process's own AIO at exit: in the daemon that took
# the whole drain; now it is the prober's).
collectd_wait "$COLLECTD_PID" 25
rc=$?
exit_secs=$(num_calc "($(date +%s%N) - $t_term) / 1e9" %.1f)
left=0
for p in $probers; do is_running "$p" && left=$((left + 1)); done
if [ "$rc" = 0 ] && [ "$left" -gt 0 ]; then
  pass "collectd exited $exit_secs s after SIGTERM while the hung device still held I/O ($left prober(s) still waiting for it)"
else
  fail "collectd exit: status $rc after $exit_secs s, probers still waiting: $left"
  SEEN["device hung (1 IOPS), then SIGTERM"]=no
fi
grep -q "Exiting normally" "$log" && pass "collectd exited normally" || fail "collectd did not exit normally"
unthrottle "$cg" "$hung" read_iops # the kernel finishes the in-flight I/O
unthrottle "$cg" "$nldev" write_bps
gone() { for p in $probers; do is_running "$p" && return 1; done; return 0; }
wait_until 30 gone && pass "the probers left behind exited once the device answered" ||
  fail "probers still running after the device answered: $(for p in $probers; do is_running "$p" && echo "$p"; done)"
[ -e "/sys/block/$det_name/loop" ] && fail "the detached loop device is still attached after collectd closed it" ||
  pass "the detached loop device went away once collectd closed it"

# ---- nothing written outside the probe files --------------------------------------
rm -f "$d/dirswap" && mv "$d/dirswap.real" "$d/dirswap" # put back what the test swapped
mount -o remount,rw "$d/rofs" 2>/dev/null
for f in "$d"/fp/*.paths; do
  name=$(basename "$f" .paths)
  while read -r p; do fingerprint "$p"; done <"$f" >"$d/fp/$name.after"
  if cmp -s "$d/fp/$name.before" "$d/fp/$name.after"; then
    : "${OUTSIDE[$name]:=yes}"
  else
    OUTSIDE[$name]=no
    fail "$name: something outside the probe files changed:"
    diff "$d/fp/$name.before" "$d/fp/$name.after" | sed 's/^/    /' | head -10
  fi
done
OUTSIDE["probe file replaced by a symlink"]=${OUTSIDE["probe file symswap"]:-?}
OUTSIDE["probe file truncated"]=${OUTSIDE["probe file trunc"]:-?}
OUTSIDE["probe file holes punched"]=${OUTSIDE["probe file holes"]:-?}
OUTSIDE["probe file range zeroed (fallocate -z)"]=${OUTSIDE["probe file zeroed"]:-?}
OUTSIDE["probe file deleted"]=${OUTSIDE["probe file deleted"]:-?}
OUTSIDE["probe file replaced by a foreign file"]=$([ "${OUTSIDE["probe file replaced by a foreign file"]:-?}" = yes ] && [ "${OUTSIDE["probe file foreign"]:-?}" = yes ] && echo yes || echo no)
[ $have_dm = 1 ] && OUTSIDE["device removed, then reopened"]=${OUTSIDE["device removed (dmsetup remove --force)"]:-?}
[ $have_fuse = 1 ] || OUTSIDE[EIO]=n/a OUTSIDE["ENOSPC on overwrite (full copy-on-write filesystem)"]=n/a
[ ! -e "/nonexistent-$$" ] || fail "/nonexistent-$$ was created"

# ---- the table ----------------------------------------------------------------------
echo
printf '%s\n' "fault | expected line | seen | collectd alive | control dispatching | outside untouched"
printf '%s\n' "---|---|---|---|---|---"
for f in "${ORDER[@]}"; do
  printf '%s | %s | %s | %s | %s | %s\n' "$f" "${EXP[$f]//$d/\$d}" "${SEEN[$f]:-?}" "${ALIVE[$f]:-?}" "${CTRL[$f]:-?}" "${OUTSIDE[$f]:-?}"
  case "${SEEN[$f]:-?}${ALIVE[$f]:-?}${CTRL[$f]:-?}${OUTSIDE[$f]:-?}" in
  *no* | *'?'*) [ "${SEEN[$f]}" = skipped ] || FAILED=$((FAILED + (FAILED == 0))) ;;
  esac
done
echo
finish fault_matrix 'tail -40 "$log"'
