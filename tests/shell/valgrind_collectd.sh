#!/bin/bash
# valgrind_collectd.sh - the real collectd with the plugin, under valgrind:
# two targets (a probe file in a temp dir, with a read and a syncwrite
# probe; a loop device with a QD1 and a QD4 read probe, in a cgroup-v1 blkio
# group), ProbeInterval 2, Timeout 1, the device view of the loop disk and
# the health state file. Each run: a few rounds, a stall (the loop device
# throttled to 1 read IOPS: the FAILURE notification), a recovery (the
# throttle lifted: OKAY, probing resumes), then SIGTERM.
#   1. memcheck (--leak-check=full): no error and no definitely lost byte
#      with a diskprobe frame (our sources or diskprobe.so) in any of its
#      stacks. collectd itself and its other plugins may have their own:
#      they are counted and shown, not judged.
#   2. helgrind, the same run, with the false positives of
#      tests/shell/valgrind.supp suppressed (each says why): no report with
#      a diskprobe frame.
# VALGRIND_TOOLS="memcheck" runs only one of them.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd valgrind valgrind
need_cmd python3 python3
need root loop blkio collectd

SUPP="$top_srcdir/tests/shell/valgrind.supp"
# Our code: the basenames of the library's and the plugin's sources.
OURS=$(cd "$top_srcdir" && ls src/*.c plugin/*.c | xargs -n1 basename | tr '\n' ' ')

d=$(make_tmpdir)
loop=$(make_loop 64 "$d") || exit
cg=$(make_cgroup) || exit
ldev=${loop#/dev/}
collectd_dir "$d"
log="$d/collectd.log"

write_conf() {
  # lib.sh's head (Interval 2) without its rrdtool block: csv is cheaper
  # under valgrind and counts the rounds
  {
    collectd_conf_head "$d" 2 | sed '/^LoadPlugin rrdtool/,/^<\/Plugin>/d'
    cat <<CONF
LoadPlugin csv
<Plugin csv>
  DataDir "$d/csv"
</Plugin>
LoadPlugin diskprobe
<Plugin diskprobe>
  Splay false
  DutyCycle 100
  ArmRounds 2
  DeviceStats "$ldev"
  <Target "file">
    Path "$d/probe"
    FileSize 16M
    ProbeInterval 2
    Timeout 1
    <Probe "rr">
      Pattern randread
      BlockSize 4k
      QueueDepth 1
      Duration 0.1
    </Probe>
    <Probe "sw">
      Pattern syncwrite
      BlockSize 4k
      QueueDepth 1
      Duration 0.1
    </Probe>
  </Target>
  <Target "loop">
    Device "$loop"
    ProbeInterval 2
    Timeout 1
    <Probe "qd1">
      Pattern randread
      BlockSize 4k
      QueueDepth 1
      Duration 0.1
    </Probe>
    <Probe "qd4">
      Pattern randread
      BlockSize 4k
      QueueDepth 4
      Duration 0.1
    </Probe>
  </Target>
</Plugin>
CONF
  } >"$d/collectd.conf"
}

# rounds TARGET PROBE: values the csv plugin has of the probe's IOPS.
rounds() { cat "$d"/csv/*/diskprobe-"$1"/operations_per_second-"$2"-* 2>/dev/null | grep -c '^[0-9]'; }
more_rounds() { [ "$(rounds "$1" "$2")" -ge "$3" ]; }

# judge XML TOOL: counts valgrind's reports; those with a frame of ours in
# any stack are shown in full and counted as ours. Prints "ours total
# ours_definite_bytes suppressed" on its last line.
judge() {
  python3 - "$1" "$2" "$OURS" "$SUPP" <<'PY'
import sys, xml.etree.ElementTree as ET
path, tool, ours = sys.argv[1], sys.argv[2], set(sys.argv[3].split())
root = ET.parse(path).getroot()
def frames(err):
    for st in err.iter("stack"):
        for fr in st.iter("frame"):
            yield {k: (fr.findtext(k) or "") for k in ("obj", "fn", "file", "line")}
def is_ours(f):
    return f["obj"].endswith("/diskprobe.so") or f["file"] in ours
mine = total = definite = 0
kinds = {}
for err in root.iter("error"):
    kind = err.findtext("kind") or "?"
    if kind.startswith("Leak_") and kind != "Leak_DefinitelyLost":
        continue # possibly lost, still reachable: not errors here
    total += 1
    ours_here = any(is_ours(f) for f in frames(err))
    kinds.setdefault(kind, [0, 0])
    kinds[kind][0] += 1
    if not ours_here:
        continue
    kinds[kind][1] += 1
    mine += 1
    what = err.findtext("what") or err.findtext("xwhat/text") or kind
    if kind == "Leak_DefinitelyLost":
        definite += int(err.findtext("xwhat/leakedbytes") or 0)
    print(f"  {tool}: {what}")
    for st in err.iter("stack"):
        for fr in list(st.iter("frame"))[:12]:
            f = {k: (fr.findtext(k) or "") for k in ("obj", "fn", "file", "line")}
            loc = f"{f['file']}:{f['line']}" if f["file"] else f["obj"]
            print(f"      {f['fn'] or '???'} ({loc})")
        print("      --")
supp = 0
committed = set(l.strip() for l in open(sys.argv[4]) if l.startswith("   ") and "-" in l
                and not l.strip().startswith(("fun:", "obj:", "Helgrind:", "Memcheck:", "DRD:", "...")))
for p in root.iter("suppcounts"):
    for pair in p.iter("pair"):
        n, name = int(pair.findtext("count") or 0), pair.findtext("name") or ""
        supp += n
        if name in committed:
            print(f"  {tool}: valgrind.supp {name}: {n} suppressed")
for k, (n, m) in sorted(kinds.items()):
    print(f"  {tool}: {n} x {k} ({m} with a diskprobe frame)")
print(mine, total, definite, supp)
PY
}

# vg_run TOOL ARGS...: one run of the scenario under valgrind --tool=TOOL.
vg_run() {
  local tool=$1 xml="$d/$1.xml" t0 n rc
  shift
  : >"$log"
  rm -rf "$d/csv"
  write_conf
  t0=$SECONDS
  unthrottle "$cg" "$loop" read_iops 2>/dev/null
  # --child-silent-after-fork: the health state saver's short-lived child
  # (a fork that writes the state file) must not write into the same XML
  spawn_in_cgroup "$cg" valgrind --tool="$tool" --error-exitcode=99 --keep-debuginfo=yes \
    --child-silent-after-fork=yes --num-callers=30 --suppressions="$SUPP" --xml=yes --xml-file="$xml" \
    --log-file="$d/$tool.txt" "$@" collectd -f -C "$d/collectd.conf" >>"$d/collectd.out" 2>&1
  local pid=$SPAWNED
  # a few rounds of both targets (valgrind starts slowly)
  if wait_until 120 more_rounds loop qd4 3 && wait_until 30 more_rounds file sw 3; then
    pass "$tool: rounds of both targets ($(rounds loop qd4) of loop, $(rounds file sw) of file)"
  else
    fail "$tool: not enough rounds ($(rounds loop qd4) of loop, $(rounds file sw) of file)"
    tail -5 "$log"
  fi
  # the stall, then the recovery
  throttle "$cg" "$loop" read_iops 1
  if wait_log "$log" 60 "severity = FAILURE.*plugin_instance = loop.*I/O stalled"; then
    pass "$tool: stall notified: $(notif_msg "$log" 'severity = FAILURE.*I/O stalled')"
  else
    fail "$tool: no FAILURE notification while the loop device was throttled to 1 IOPS"
  fi
  unthrottle "$cg" "$loop" read_iops
  if wait_log "$log" 60 "severity = OKAY.*plugin_instance = loop"; then
    pass "$tool: recovery notified: $(notif_msg "$log" 'severity = OKAY.*plugin_instance = loop')"
  else
    fail "$tool: no OKAY notification after the throttle was lifted"
  fi
  n=$(rounds loop qd1)
  wait_until 30 more_rounds loop qd1 $((n + 2)) && pass "$tool: probing resumed after the recovery" ||
    fail "$tool: no probe after the recovery ($n -> $(rounds loop qd1))"
  kill -TERM "$pid"
  collectd_wait "$pid" 180
  rc=$?
  # 99: valgrind found errors (ours or collectd's: judged below)
  [ $rc = 0 ] || [ $rc = 99 ] && pass "$tool: collectd exited after SIGTERM (status $rc)" ||
    fail "$tool: collectd exited with status $rc"
  grep -q "diskprobe plugin: shut down in" "$log" || fail "$tool: the plugin did not log its shutdown"
  # FINISHED: valgrind saw the process exit (memcheck's leak check runs then)
  grep -q "<state>FINISHED</state>" "$xml" 2>/dev/null ||
    { fail "$tool: valgrind did not finish its report ($xml)"; return; }
  echo "$tool: the run took $((SECONDS - t0)) s"
  judge "$xml" "$tool" >"$d/$tool.judged" || { fail "$tool: cannot read $xml"; return; }
  sed '$d' "$d/$tool.judged"
  read -r VG_OURS VG_TOTAL VG_DEFINITE VG_SUPP < <(tail -1 "$d/$tool.judged")
  echo "$tool: $VG_TOTAL report(s) in all, $VG_OURS with a diskprobe frame;" \
    "$VG_SUPP suppressed by valgrind.supp or valgrind's defaults"
}

tools=${VALGRIND_TOOLS:-memcheck helgrind}
for tool in $tools; do
  case $tool in
  memcheck)
    vg_run memcheck --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite,possible
    [ "${VG_OURS:-x}" = 0 ] && [ "${VG_DEFINITE:-x}" = 0 ] &&
      pass "memcheck: 0 errors and 0 bytes definitely lost in diskprobe frames" ||
      fail "memcheck: ${VG_OURS:-?} error(s) in diskprobe frames, ${VG_DEFINITE:-?} bytes definitely lost"
    ;;
  helgrind | drd)
    vg_run "$tool"
    [ "${VG_OURS:-x}" = 0 ] && pass "$tool: 0 reports in diskprobe frames (after valgrind.supp)" ||
      fail "$tool: ${VG_OURS:-?} report(s) in diskprobe frames"
    ;;
  *) die "unknown tool $tool in VALGRIND_TOOLS" ;;
  esac
  VG_OURS=x VG_DEFINITE=x
done

finish valgrind_collectd 'tail -30 "$log"'
