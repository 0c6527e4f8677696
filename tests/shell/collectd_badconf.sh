#!/bin/bash
# collectd_badconf.sh - bad configurations are refused by the real daemon.
#
# Each case is a diskprobe block with one mistake; `collectd -T` must exit
# non-zero and the log must hold a line naming the option, the value and
# what is allowed. A good block is the control: it must pass.
set -u
. "$(dirname "$0")/lib.sh"
need collectd
d=$(make_tmpdir)

run_case() { # run_case NAME EXPECT_RC EXPECTED_LOG_TEXT BLOCK [TYPESDB_OVERRIDE]
  local name=$1 want=$2 text=$3 block=$4 rc
  : >"$d/collectd.log"
  collectd_conf "$d" 10 <<<"$block"
  [ -n "${5:-}" ] && sed -i "/diskprobe.types.db/d" "$d/collectd.conf"
  collectd_check "$d"
  rc=$?
  if [ "$want" = 0 ]; then
    [ $rc = 0 ] && pass "$name: accepted" || { fail "$name: refused (rc $rc): $(grep diskprobe "$d/collectd.log")"; }
    return
  fi
  if [ $rc = 0 ]; then
    fail "$name: collectd -T accepted it"
  elif grep -qF -- "$text" "$d/collectd.log"; then
    pass "$name: refused: $(log_first -F "$d/collectd.log" "$text")"
  else
    fail "$name: refused, but the log lacks '$text': $(grep diskprobe "$d/collectd.log")"
  fi
}

good='<Target "a">
  Path "'"$d"'/probe"
  FileSize "8M"
  ProbeInterval 30
  <Probe "r">
    Pattern randread
    BlockSize "8k"
    QueueDepth 4
    Duration 0.1
  </Probe>
</Target>'
run_case "good config" 0 "" "$good"
# numbers as collectd hands them over (doubles): a small one is not turned
# into "1e-05", which the strict duration parser would refuse
run_case "LatencyCeiling 0.00001 (a bare number)" 0 "" '<Target "a">
  Path "'"$d"'/probe"
  FileSize "8M"
  LatencyCeiling 0.00001
  ProbeInterval 30.5
</Target>'
probe() { printf '<Target "a">\n Path "%s/probe"\n FileSize "8M"\n <Probe "p">\n  %s\n </Probe>\n</Target>' "$d" "$1"; }

run_case "QueueDepth 0" 1 'Probe "p": Option "QueueDepth": value "0" is invalid: allowed integers 1 to 256' "$(probe 'QueueDepth 0')"
run_case "QueueDepth 300" 1 'value "300" is invalid: allowed integers 1 to 256' "$(probe 'QueueDepth 300')"
run_case "BlockSize 1000" 1 'Option "BlockSize": value "1000" is invalid: allowed 512 to 64M, a multiple of 512' "$(probe 'BlockSize "1000"')"
run_case "Pattern randrw" 1 'Option "Pattern": value "randrw" is invalid: allowed randread, seqread, randwrite, seqwrite, syncwrite' "$(probe 'Pattern "randrw"')"
run_case "Duration 0" 1 'Option "Duration": value "0" is invalid: allowed 0.01 to 60 seconds' "$(probe 'Duration 0')"
run_case "unknown probe key" 1 'unknown option "Depth" in Probe "p"' "$(probe 'Depth 4')"
run_case "unknown target key" 1 'Target "a": unknown option "Bogus" in Target' '<Target "a">
 Path "/x"
 Bogus 1
</Target>'
run_case "unknown plugin key" 1 'unknown option "Targett"' '<Targett "a">
 Path "/x"
</Targett>'
run_case "no Path" 1 'Target "a" has neither Path nor Device' '<Target "a">
 FileSize "8M"
</Target>'
run_case "Path and Device" 1 'the target already has a Path' '<Target "a">
 Path "/x"
 Device "/dev/loop0"
</Target>'
run_case "relative Path" 1 'Option "Path": value "var/x" is invalid: allowed an absolute path' '<Target "a">
 Path "var/x"
</Target>'
run_case "FileSize 1k" 1 'Option "FileSize": value "1k" is invalid: allowed 1M to 1T' '<Target "a">
 Path "/x"
 FileSize "1k"
</Target>'
run_case "ProbeInterval -5" 1 'Option "ProbeInterval": value "-5" is invalid: allowed 1 to 86400 seconds' '<Target "a">
 Path "/x"
 ProbeInterval -5
</Target>'
run_case "duplicate target" 1 'Target "a" is defined twice' '<Target "a">
 Path "/x"
</Target>
<Target "a">
 Path "/y"
</Target>'
run_case "duplicate probe" 1 'Probe "p" is defined twice in Target "a"' '<Target "a">
 Path "/x"
 <Probe "p">
 </Probe>
 <Probe "p">
 </Probe>
</Target>'
run_case "bad target name" 1 'Target name "a b" is invalid' '<Target "a b">
 Path "/x"
</Target>'
run_case "unnamed target" 1 '<Target> needs exactly one string argument' '<Target>
 Path "/x"
</Target>'
run_case "write probe on a Device" 1 'Probe "w" has Pattern randwrite, but the target is a Device: write probes only run inside a probe file' '<Target "raw">
 Device "/dev/loop0"
 <Probe "w">
  Pattern randwrite
 </Probe>
</Target>'
run_case "probes longer than the interval" 1 'its probes take 3.00 s but ProbeInterval is 2.00 s' "$(printf '<Target "a">\n Path "/x"\n ProbeInterval 2\n <Probe "p">\n  Duration 3\n </Probe>\n</Target>')"
run_case "two values" 1 'Option "QueueDepth" needs exactly one value' "$(probe 'QueueDepth 1 2')"
run_case "two targets, one probe file" 1 'Targets "a" and "b" both use /x/diskprobe.probe' '<Target "a">
 Path "/x"
</Target>
<Target "b">
 Path "/x/diskprobe.probe"
</Target>'
run_case "QueueDepth x BlockSize too large" 1 'QueueDepth 256 x BlockSize 67108864 needs 16384 MiB of I/O buffers; allowed at most 256 MiB' "$(printf '<Target "a">\n Path "/x"\n FileSize "1T"\n <Probe "p">\n  QueueDepth 256\n  BlockSize "64M"\n </Probe>\n</Target>')"
# what a path is, at -T time: a Device that is no block device (opened,
# a FIFO blocked the worker's open() for ever), a StateDir that is no
# directory; a DeviceStats glob fnmatch would not read as one
run_case "Device at a character device" 1 'Option "Device": value "/dev/null" is invalid: it is a character device, not a block device' '<Target "raw">
 Device "/dev/null"
</Target>'
mkfifo "$d/fifo"
run_case "Device at a FIFO" 1 'Option "Device": value "'"$d"'/fifo" is invalid: it is a FIFO (named pipe), not a block device' '<Target "raw">
 Device "'"$d"'/fifo"
</Target>'
run_case "StateDir not a directory" 1 'Option "StateDir": value "/dev/null" is invalid: it is a character device, not a directory' 'StateDir "/dev/null"
'"$good"
run_case "DeviceStats invalid glob" 1 "Option \"DeviceStats\": value 1 is invalid (a '[' has no closing ']': not a valid glob)" 'DeviceStats "["
'"$good"
run_case "TypesDB missing" 1 'type "probe_latency" is not known: add TypesDB' "$good" no-typesdb

# ---- names that cannot be stored as given: refused, never cut ------------------
n63=$(printf 'a%.0s' {1..63})
long="${n63}bbbbbbb" # 70 characters: the first 63 are n63
run_case "63-character target name" 0 "" "${good/<Target \"a\">/<Target \"$n63\">}"
run_case "70-character target name" 1 "Target name \"$long\" is 70 characters long: allowed 1 to 63" "${good/<Target \"a\">/<Target \"$long\">}"
run_case "two long target names sharing 63 characters" 1 "Target name \"${n63}ccccccc\" is 70 characters long" '<Target "'"$n63"'">
 Path "'"$d"'/p1"
 FileSize "8M"
</Target>
<Target "'"${n63}ccccccc"'">
 Path "'"$d"'/p2"
 FileSize "8M"
</Target>'
run_case "70-character probe name" 1 "Target \"a\": Probe name \"$long\" is 70 characters long" "$(probe 'Duration 0.1' | sed "s/<Probe \"p\">/<Probe \"$long\">/")"

# ---- one probe file reached by two paths ------------------------------------------
mkdir -p "$d/x"
ln -sfn "$d/x" "$d/lnk"
run_case "Path x/../x beside x" 1 "Targets \"a\" and \"b\" both use $d/x/diskprobe.probe: $d/x/diskprobe.probe and $d/x/../x/diskprobe.probe are one path" '<Target "a">
 Path "'"$d"'/x"
 FileSize "8M"
</Target>
<Target "b">
 Path "'"$d"'/x/../x"
 FileSize "8M"
</Target>'
run_case "Path .//x/./ beside x" 1 "Targets \"a\" and \"b\" both use $d/x/diskprobe.probe" '<Target "a">
 Path "'"$d"'/x"
 FileSize "8M"
</Target>
<Target "b">
 Path "'"$d"'//x/./"
 FileSize "8M"
</Target>'
run_case "Path through a symlink beside x" 1 "Targets \"a\" and \"b\" both use $d/x/diskprobe.probe: $d/x/diskprobe.probe and $d/lnk/diskprobe.probe are one file" '<Target "a">
 Path "'"$d"'/x"
 FileSize "8M"
</Target>
<Target "b">
 Path "'"$d"'/lnk"
 FileSize "8M"
</Target>'

# ---- a key given twice in one block: refused with both values ---------------------
run_case "FileSize twice in a target" 1 'Target "a": Option "FileSize" is given twice: "8M" and "16M"; give it once.' '<Target "a">
 Path "'"$d"'/probe"
 FileSize "8M"
 ProbeInterval 30
 FileSize "16M"
</Target>'
run_case "Duration twice in a probe" 1 'Target "a", Probe "p": Option "Duration" is given twice: "0.1" and "0.2"; give it once.' "$(probe 'Duration 0.1
  duration 0.2')"
run_case "DutyCycle twice" 1 'Option "DutyCycle" is given twice: "2" and "5"; give it once.' 'DutyCycle 2
DutyCycle 5
'"$good"
run_case "DeviceStats twice and two Probe blocks (may repeat)" 0 "" 'DeviceStats "sd*"
DeviceStats "nvme*n1"
<Target "a">
 Path "'"$d"'/probe"
 FileSize "8M"
 ProbeInterval 30
 <Probe "r1">
  Duration 0.1
 </Probe>
 <Probe "r2">
  Duration 0.1
 </Probe>
</Target>'

finish collectd_badconf
