#!/bin/bash
# cgroup_v2_real.sh - the throttled-device tests on the real cgroup v2 io
# controller (io.max), as on hosts with the unified hierarchy only (most
# current distributions), on this machine too.
#
# The io controller is bound to one hierarchy at a time. Where v2 already
# has it, the throttle tests (loop_throttle.sh: the engine against a
# 250-IOPS device; watch_throttle.sh: watch and the collectd plugin against
# it, and a stall) simply run again, through io.max. Where it sits in a
# cgroup-v1 blkio hierarchy that holds no cgroup but its root (nothing on
# the host uses it), the hierarchy is unmounted so that the kernel hands io
# to v2, the same tests run, and v1 blkio is mounted back when the kernel
# lets go of io (it may keep it while cgroups the tests removed are still
# dying, e.g. held by a loop device's per-cgroup worker for a minute; then
# the later tests throttle through v2 too, which they support, and the
# line below says how to remount). Skips, saying why, where v1 blkio is in
# use or there is no v2 hierarchy.
set -u
. "$(dirname "$0")/lib.sh"
need root loop

v2=
for r in "$CGROUP_ROOT" "$CGROUP_ROOT/unified"; do
  [ -f "$r/cgroup.controllers" ] && { v2=$r; break; }
done
[ -n "$v2" ] || skip "no cgroup v2 hierarchy at $CGROUP_ROOT or $CGROUP_ROOT/unified"

has_io() { grep -qw io "$v2/cgroup.controllers"; }
moved=
if ! has_io; then
  # blkio's line in /proc/cgroups: name hierarchy num_cgroups enabled
  read -r _ hier ncg _ < <(awk '$1 == "blkio"' /proc/cgroups)
  mountpoint -q "$BLKIO" || skip "io is in no v2 hierarchy and v1 blkio is not at $BLKIO"
  [ "${ncg:-0}" = 1 ] ||
    skip "v1 blkio (hierarchy $hier) holds $ncg cgroups: in use on this host, not taken from it"
  umount "$BLKIO" || skip "cannot unmount v1 blkio at $BLKIO"
  moved=1
  wait_until 15 has_io || {
    mount -t cgroup -o blkio cgroup "$BLKIO"
    die "v1 blkio unmounted but io did not appear in $v2/cgroup.controllers"
  }
  echo "io moved from cgroup v1 blkio to v2 at $v2 for this test"
fi

restore() {
  [ -n "$moved" ] || return 0
  grep -qw io "$v2/cgroup.subtree_control" && echo -io >"$v2/cgroup.subtree_control"
  remount() { mount -t cgroup -o blkio cgroup "$BLKIO" 2>/dev/null; }
  if wait_until 10 remount; then
    echo "v1 blkio mounted back at $BLKIO"
  else
    echo "io stays with cgroup v2: $(awk '/dying_subsys_io/ {print $2}' "$v2/cgroup.stat") cgroup(s) still dying;" \
      "later: mount -t cgroup -o blkio cgroup $BLKIO"
  fi
}

# The two throttle tests, unchanged, now on io.max: lib.sh picks v2 since
# no v1 blkio file exists.
cg_detect && [ "$CG_MODE" = v2 ] || { restore; die "lib.sh does not pick cgroup v2 here: $CG_WHY"; }
for t in loop_throttle watch_throttle; do
  out=$(bash "$(dirname "$0")/$t.sh" 2>&1)
  rc=$?
  ok=$(grep -c '^ok:' <<<"$out")
  if [ $rc = 0 ] && [ "$ok" -ge 2 ]; then
    pass "$t.sh on cgroup v2 io.max: $ok checks, e.g. $(grep -m1 -E '^ok: .*(within|measures the throttle)' <<<"$out" | cut -c5-)"
  else
    fail "$t.sh on cgroup v2 io.max: rc $rc"
    sed 's/^/    /' <<<"$out" | tail -15
  fi
done
restore
finish cgroup_v2_real
