#!/bin/bash
# cgroup_helpers.sh - lib.sh's throttling helpers on fake cgroup trees, so
# the cgroup v2 (io.max) path is checked on hosts that have only v1 blkio,
# and the v1 path on hosts that have only v2. Each case runs the helpers in
# a child bash with CGROUP_ROOT pointing at a directory tree shaped like
# /sys/fs/cgroup, then reads back what they wrote:
#   - detection: v1 blkio, v2 at the root or at unified/ (hybrid hosts),
#     neither (skip 77 naming both reasons), v2 without the io controller;
#   - make_cgroup: v2 enables io in the parent's cgroup.subtree_control
#     only if it is not on yet; the child is made under the right parent;
#   - throttle/unthrottle: "MAJ:MIN riops=N" / "riops=max" (and wiops, rbps,
#     wbps) into io.max; "MAJ:MIN N" / "0" into blkio.throttle.*_device;
#   - in_cgroup / spawn_in_cgroup: the command's own pid in cgroup.procs;
#   - cleanup: pids moved back to the parent, the cgroup removed, io
#     disabled again only if this test enabled it.
# A fake tree cannot throttle: the real v2 path needs a host whose io
# controller is on the unified hierarchy (see loop_throttle.sh and others).
set -u
. "$(dirname "$0")/lib.sh"
LIB="$(cd "$(dirname "$0")" && pwd)/lib.sh"

t=$(mktemp -d /tmp/diskprobe-cgtest.XXXXXX)
echo "dir $t" >>"$_REG"
dev=/dev/null num=$(devnum /dev/null) # any device node: only its numbers are written

# fake_v2 DIR [CONTROLLERS] [SUBTREE]: a unified root.
fake_v2() {
  mkdir -p "$1"
  echo "${2-cpu io memory pids}" >"$1/cgroup.controllers"
  echo "${3-cpu memory}" >"$1/cgroup.subtree_control"
  : >"$1/cgroup.procs"
}
# helpers ROOT SCRIPT: runs SCRIPT (bash) with lib.sh sourced on ROOT;
# its output, then its exit status as "rc=N".
helpers() {
  CGROUP_ROOT=$1 bash -c '. "$0"; '"$2" "$LIB" 2>&1
  echo "rc=$?"
}
has() { grep -qxF -- "$2" "$1" 2>/dev/null; }
check() { # check WHAT CMD...
  local w=$1
  shift
  "$@" && pass "$w" || fail "$w"
}

# ---- v2 at the root ----------------------------------------------------------
fake_v2 "$t/v2"
out=$(helpers "$t/v2" '
  cg_detect && echo "mode=$CG_MODE parent=$CG_PARENT"
  need_throttle && need_blkio && echo needs-ok
  cg=$(make_cgroup) || exit
  echo "cg=$cg"
  throttle "$cg" '"$dev"' read_iops 7
  cat "$cg/io.max" >"'"$t"'/riops"
  throttle "$cg" '"$dev"' write_iops 3; cat "$cg/io.max" >"'"$t"'/wiops"
  throttle "$cg" '"$dev"' read_bps 1048576; cat "$cg/io.max" >"'"$t"'/rbps"
  throttle "$cg" '"$dev"' write_bps 2097152; cat "$cg/io.max" >"'"$t"'/wbps"
  unthrottle "$cg" '"$dev"' read_iops; cat "$cg/io.max" >"'"$t"'/unriops"
  [ -e "$cg/blkio.throttle.read_iops_device" ] && echo "v1 file written"
  cat "'"$t"'/v2/cgroup.subtree_control" >"'"$t"'/subtree"
  in_cgroup "$cg" sh -c "echo \$\$" >"'"$t"'/in.pid"; cat "$cg/cgroup.procs" >"'"$t"'/in.procs"
  spawn_in_cgroup "$cg" sleep 60
  sleep 0.5
  echo "$SPAWNED" >"'"$t"'/spawned.pid"; cat "$cg/cgroup.procs" >"'"$t"'/spawned.procs"
')
echo "$out" | sed 's/^/  | /'
check "v2: detected at the root ($t/v2)" grep -qxF "mode=v2 parent=$t/v2" <<<"$out"
check "v2: need_throttle and the old need_blkio pass" grep -qx needs-ok <<<"$out"
cg=$(sed -n 's/^cg=//p' <<<"$out")
check "v2: make_cgroup made $cg under the unified root" test "${cg%/*}" = "$t/v2" -a -n "$cg"
check "v2: io enabled in the parent's subtree_control (+io)" has "$t/subtree" "+io"
check "v2: throttle read_iops 7 -> io.max '$num riops=7'" has "$t/riops" "$num riops=7"
check "v2: throttle write_iops 3 -> '$num wiops=3'" has "$t/wiops" "$num wiops=3"
check "v2: throttle read_bps -> '$num rbps=1048576'" has "$t/rbps" "$num rbps=1048576"
check "v2: throttle write_bps -> '$num wbps=2097152'" has "$t/wbps" "$num wbps=2097152"
check "v2: unthrottle read_iops -> '$num riops=max'" has "$t/unriops" "$num riops=max"
check "v2: no v1 blkio file written" eval '! grep -q "v1 file written" <<<"$out"'
check "v2: in_cgroup put the command's own pid ($(cat "$t/in.pid")) in cgroup.procs" has "$t/in.procs" "$(cat "$t/in.pid")"
spid=$(cat "$t/spawned.pid")
check "v2: spawn_in_cgroup put \$SPAWNED ($spid, the command itself) in cgroup.procs" has "$t/spawned.procs" "$spid"
check "v2: the spawned process was killed by cleanup" eval '! kill -0 "$spid" 2>/dev/null'
check "v2: cleanup moved the straggler pid back to the parent" has "$t/v2/cgroup.procs" "$spid"
check "v2: cleanup removed the cgroup" test ! -e "$cg"
check "v2: cleanup disabled io again (it enabled it)" has "$t/v2/cgroup.subtree_control" "-io"
check "v2: helpers exited 0" grep -qx rc=0 <<<"$out"

# ---- v2 with io already on; another test's cgroup present -----------------------
fake_v2 "$t/v2on" "cpu io memory" "cpu io"
out=$(helpers "$t/v2on" 'cg=$(make_cgroup) || exit; echo "cg=$cg"; cat "'"$t"'/v2on/cgroup.subtree_control"')
check "v2, io already enabled: subtree_control not rewritten" grep -qx "cpu io" <<<"$out"
check "v2, io already enabled: left enabled at cleanup" has "$t/v2on/cgroup.subtree_control" "cpu io"
fake_v2 "$t/v2other"
mkdir "$t/v2other/diskprobe-test-1-1"
out=$(helpers "$t/v2other" 'cg=$(make_cgroup) || exit; echo "cg=$cg"')
check "v2, another test's cgroup still there: io not disabled under it" has "$t/v2other/cgroup.subtree_control" "+io"

# ---- hybrid: v1 without blkio throttling, v2 at unified/ ----------------------
mkdir -p "$t/hyb/blkio"
fake_v2 "$t/hyb/unified"
out=$(helpers "$t/hyb" 'cg_detect && echo "mode=$CG_MODE parent=$CG_PARENT"; cg=$(make_cgroup) && throttle "$cg" '"$dev"' read_iops 1 && cat "$cg/io.max"')
check "hybrid: v2 found at unified/" grep -qxF "mode=v2 parent=$t/hyb/unified" <<<"$out"
check "hybrid: io.max written in the unified child" grep -qxF "$num riops=1" <<<"$out"

# ---- v1 blkio --------------------------------------------------------------------
mkdir -p "$t/v1/blkio"
: >"$t/v1/blkio/blkio.throttle.read_iops_device"
: >"$t/v1/blkio/cgroup.procs"
out=$(helpers "$t/v1" '
  cg_detect && echo "mode=$CG_MODE parent=$CG_PARENT"
  cg=$(make_cgroup) || exit; echo "cg=$cg"
  throttle "$cg" '"$dev"' read_iops 250; echo "r=$(cat "$cg/blkio.throttle.read_iops_device")"
  throttle "$cg" '"$dev"' write_bps 4096; echo "w=$(cat "$cg/blkio.throttle.write_bps_device")"
  unthrottle "$cg" '"$dev"' read_iops; echo "u=$(cat "$cg/blkio.throttle.read_iops_device")"
  [ -e "$cg/io.max" ] && echo "io.max written"
  spawn_in_cgroup "$cg" sleep 60; sleep 0.5; echo "spawned=$SPAWNED"
')
echo "$out" | sed 's/^/  | /'
cg=$(sed -n 's/^cg=//p' <<<"$out")
spid=$(sed -n 's/^spawned=//p' <<<"$out")
check "v1: detected (blkio)" grep -qxF "mode=v1 parent=$t/v1/blkio" <<<"$out"
check "v1: throttle read_iops -> blkio.throttle.read_iops_device '$num 250'" grep -qxF "r=$num 250" <<<"$out"
check "v1: throttle write_bps -> blkio.throttle.write_bps_device '$num 4096'" grep -qxF "w=$num 4096" <<<"$out"
check "v1: unthrottle -> '$num 0'" grep -qxF "u=$num 0" <<<"$out"
check "v1: no io.max written" eval '! grep -q "io.max written" <<<"$out"'
check "v1: cleanup moved the pid back to the blkio root and removed the cgroup" eval 'has "$t/v1/blkio/cgroup.procs" "$spid" && [ -n "$cg" ] && [ ! -e "$cg" ]'

# ---- neither ---------------------------------------------------------------------
mkdir -p "$t/none"
out=$(helpers "$t/none" 'need_throttle; echo not-skipped')
echo "$out" | sed 's/^/  | /'
check "neither: need_throttle skips (77)" grep -qx rc=77 <<<"$out"
check "neither: the skip names both hierarchies" grep -q "SKIP: no block I/O throttling: cgroup v1 blkio has no .*no cgroup v2 hierarchy" <<<"$out"
fake_v2 "$t/noio" "cpu memory pids"
out=$(helpers "$t/noio" 'need_blkio; echo not-skipped')
echo "$out" | sed 's/^/  | /'
check "v2 without io (bound to v1 elsewhere): the old need_blkio skips, saying so" \
  eval 'grep -qx rc=77 <<<"$out" && grep -q "has no io controller (cgroup.controllers: .cpu memory pids.)" <<<"$out"'
out=$(helpers "$t/noio" 'cg=$(make_cgroup) || exit; echo "made=$cg"')
check "v2 without io: make_cgroup skips too" grep -qx rc=77 <<<"$out"

# ---- this host -------------------------------------------------------------------
if cg_detect; then
  echo "this host: block I/O throttling through cgroup $CG_MODE at $CG_PARENT"
else
  echo "this host: $CG_WHY"
fi
finish cgroup_helpers
