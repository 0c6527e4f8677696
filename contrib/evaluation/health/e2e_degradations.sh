#!/bin/bash
# e2e_degradations.sh - the health verdict end to end with the real daemon,
# at the default ProbeInterval (60 s), DutyCycle and probe set: one collectd
# with one target per degradation, all at once, each on its own loop device
# (blkio / io.max throttles) or FUSE file (tests/shell/faultyfs.py), plus a
# healthy control target. A study, not a CI test.
#
#   e2e_degradations.sh [--quick] [--out FILE]
#
# Phases:
#   1. arming: ProbeInterval ARM_IVL (10 s, DutyCycle 10: the probes run
#      whole, the targets' rounds mostly apart as at 60 s) with StateDir,
#      until every target is armed; the stop saves the baselines.
#   2. the same StateDir at ProbeInterval IVL (60 s), the default DutyCycle:
#      checked to start armed (the first round's armed = 1, the log's
#      "baselines restored" and "ProbeInterval is 60 s now, 3 s when ...");
#      HEALTHY_ROUNDS rounds healthy, then every fault at once for
#      FAULT_ROUNDS rounds, then all lifted for RECOVER_ROUNDS rounds.
# The faults, from the target's own baselines as phase 2's first round
# reports them (probe_baseline: the medians the rules judge against; the
# sequential probe's bytes/s = its IOPS x 1 MiB) and QD1's p99 from phase 2's
# healthy rounds:
#   whole10/3/2  read IOPS capped at QD1's IOPS / F and read bytes/s at the
#                sequential probe's / F: every probe at least F x slower
#   qd32div10/3  read IOPS capped at QD32's IOPS / F (above QD1's rate when
#                the device allows: said in the table otherwise)
#   qd1half      read IOPS capped at QD1's IOPS / 2: QD1 loses half its
#                IOPS with its p50 flat (the throttle releases I/O in
#                slices), the deeper probes far more
#   seqdiv2      read bytes/s capped at the sequential probe's / 2, the cap
#                calibrated (lowered, by at most 2x, by bisection) so that
#                the sequential probe of `diskprobe watch` rounds in the
#                same cgroup measures half its baseline or less: the
#                throttle lets the last probe of a round through above its
#                cap
#   (the FUSE files answer every request FUSE_BASE, 1.5 ms, late throughout:
#   a latency floor well above the Python server's own jitter of
#   0.02-0.5 ms; the server is serial, so QD32 waits 32 floors: at 4 ms the
#   sequential probe is skipped every round and the target never arms)
#   p99x5        FUSE: 3 % of the requests, evenly spread, wait 5 x QD1's p99
#   intermittent FUSE: every request waits 9 x QD1's p50 during one
#                ProbeInterval-long window in three, windows centred on the
#                target's rounds
#   deadmount    FUSE daemon killed (SIGKILL); recovery: mounted again
#   timeout2.5   FUSE, Timeout 2: every request waits 2.5 s
#   iops1        FUSE: every request waits 1 s
#   control      a loop device left alone (its notifications are false alarms)
# Then collectd's log (logfile plugin: the notifications) and the CSV
# plugin's rounds are read into a table: fault start, the first WARNING or
# FAILURE (seconds and probe rounds after the fault), severity, rule, the
# worst severity, the OKAY after recovery. Written to FILE (default
# e2e_results.md beside this script; --quick: e2e_results.quick.md in the
# work directory) with the date, machine, command and load average.
# --quick: ProbeInterval 5 (phase 1 at 2 s, DutyCycle 50), the same
# scenarios, ~4 minutes; at 5 s the default DutyCycle shortens every probe
# to a few percent of its Duration, so the figures are a smoke test only.
# Full: ~33 minutes (15 fault rounds: the one-probe tail rule needs 12).
# Environment: IVL ARM_IVL HEALTHY_ROUNDS FAULT_ROUNDS RECOVER_ROUNDS
# override the schedule; ONLY="qd1half control" runs those scenarios alone;
# KEEP_TMP=1 keeps the work directory (logs, CSV).
# Needs root, loop devices, block I/O throttling, collectd, /dev/fuse and
# Debian's python3-fusepy (exit 77 otherwise).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "$here/../../.." && pwd)
top_builddir=${top_builddir:-$top_srcdir}
. "$top_srcdir/tests/shell/lib.sh"

quick=0 out=
cmdline="$0 $*"
while [ $# -gt 0 ]; do
  case $1 in
  --quick) quick=1 ;;
  --out) out=$2 && shift ;;
  *) echo "usage: $0 [--quick] [--out FILE]" >&2 && exit 2 ;;
  esac
  shift
done
if [ "$quick" = 1 ]; then
  : "${IVL:=5}" "${ARM_IVL:=2}" "${HEALTHY_ROUNDS:=2}" "${FAULT_ROUNDS:=12}" "${RECOVER_ROUNDS:=6}"
  READ_IVL=1
else
  : "${IVL:=60}" "${ARM_IVL:=10}" "${HEALTHY_ROUNDS:=2}" "${FAULT_ROUNDS:=15}" "${RECOVER_ROUNDS:=8}"
  READ_IVL=10 # collectd's default Interval
fi
ARM_ROUNDS=20 # the plugin's default ArmRounds

need root loop blkio collectd
PY=/usr/bin/python3 # Debian's, which has fusepy
[ -c /dev/fuse ] && $PY -c "import fusepy" 2>/dev/null || skip "no /dev/fuse or python3-fusepy"
FAULTYFS="$top_srcdir/tests/shell/faultyfs.py"

d=$(make_tmpdir)
[ -n "$out" ] || { [ "$quick" = 1 ] && out="$d/e2e_results.quick.md" || out="$here/e2e_results.md"; }
log="$d/collectd.log"
csv="$d/csv/$COLLECTD_HOST"
mkdir -p "$d/state" "$d/csv"
chmod 0700 "$d/state"
cg=$(make_cgroup) || exit
say() { echo "[$(date -u +%H:%M:%S)] $*"; }
# the host disk under the loop devices' backing files and the FUSE files:
# its iostat view is dispatched too (DeviceStats), to tell contention
src=$(findmnt -no SOURCE -T "$d" | sed 's/\[.*//')
hostdisk=$(lsblk -ndo PKNAME "$src" 2>/dev/null | head -1)
[ -n "$hostdisk" ] || hostdisk=$(lsblk -ndo NAME "$src" 2>/dev/null | head -1)

# ---- load average, sampled through the run ---------------------------------
(while :; do cut -d' ' -f1 /proc/loadavg >>"$d/loadavg"; sleep 30; done) &
register_pid $!

# ---- the targets ----------------------------------------------------------------
LOOPS="control whole10 whole3 whole2 qd32div10 qd32div3 seqdiv2 qd1half"
FUSES="p99x5 intermittent deadmount timeout2.5 iops1"
if [ -n "${ONLY:-}" ]; then
  only() { local t out=; for t in $1; do case " $ONLY " in *" $t "*) out="$out $t" ;; esac; done; echo $out; }
  LOOPS=$(only "$LOOPS") FUSES=$(only "$FUSES")
fi
has() { case " $LOOPS $FUSES " in *" $1 "*) return 0 ;; esac; return 1; }
FUSE_BASE=${FUSE_BASE:-0.0015} # seconds every FUSE request takes while healthy
declare -A DEV FPID
say "making loop devices and FUSE mounts in $d"
for t in $LOOPS; do
  DEV[$t]=$(make_loop 64 "$d" random) || exit
done
fuse_start() { # fuse_start NAME: faultyfs on $d/fuse-NAME/mnt, control file ctl
  local f="$d/fuse-$1"
  mkdir -p "$f/back" "$f/mnt"
  [ -f "$f/ctl" ] || echo "base $FUSE_BASE ok" >"$f/ctl"
  $PY "$FAULTYFS" "$f/back" "$f/mnt" "$f/ctl" >>"$f/fuse.log" 2>&1 &
  FPID[$1]=$!
  register_pid "${FPID[$1]}"
  wait_until 10 mountpoint -q "$f/mnt" || skip "cannot mount faultyfs: $(cat "$f/fuse.log")"
  register_mount "$f/mnt"
}
for t in $FUSES; do fuse_start "$t"; done
ctl() { echo "$2" >"$d/fuse-$1/ctl"; } # ctl NAME WORDS: faultyfs mode

# conf PROBE_INTERVAL [DUTYCYCLE]: collectd.conf with the logfile (the
# notifications) and csv (every round) plugins and every target.
conf() {
  local ivl=$1 duty=${2:-} t
  [ -f "$d/plugins/diskprobe.so" ] || collectd_dir "$d"
  {
    # lib.sh's head (the logfile is $log) without rrdtool: the CSV plugin
    # keeps every round whatever the ProbeInterval
    collectd_conf_head "$d" "$READ_IVL" | sed '/^LoadPlugin rrdtool/,/^<\/Plugin>/d'
    printf 'LoadPlugin csv\n<Plugin csv>\n  DataDir "%s"\n  StoreRates false\n</Plugin>\n' "$d/csv"
    echo 'LoadPlugin diskprobe'
    echo '<Plugin diskprobe>'
    echo "  StateDir \"$d/state\""
    [ -n "$duty" ] && echo "  DutyCycle $duty"
    [ -n "$hostdisk" ] && echo "  DeviceStats \"$hostdisk\""
    for t in $LOOPS; do
      printf '  <Target "%s">\n    Device "%s"\n    ProbeInterval %s\n  </Target>\n' "$t" "${DEV[$t]}" "$ivl"
    done
    for t in $FUSES; do
      printf '  <Target "%s">\n    Path "%s"\n    FileSize "32M"\n    ProbeInterval %s\n' "$t" "$d/fuse-$t/mnt/probe" "$ivl"
      [ "$t" = timeout2.5 ] && echo '    Timeout 2'
      echo '  </Target>'
    done
    echo '</Plugin>'
  } >"$d/collectd.conf"
}

# csvq EXPR TARGET FILE [SINCE]: over the rows of the target's CSV files
# FILE-* newer than SINCE (epoch), prints python EXPR of rows (a list of
# dicts, header names as keys, numbers as floats; "epoch" the time).
csvq() {
  $PY - "$csv/diskprobe-$2" "$3" "${4:-0}" "$1" <<'PY'
import csv, glob, statistics, sys
d, name, since, expr = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
rows = []
for f in sorted(glob.glob(f"{d}/{name}-[0-9]*")):
    with open(f) as fh:
        for r in csv.DictReader(fh):
            r = {k: float(v) for k, v in r.items()}
            if r["epoch"] > since:
                rows.append(r)
med = lambda k, n=10: statistics.median([r[k] for r in rows[-n:]]) if rows else float("nan")
print(eval(expr))
PY
}
armed_all() {
  local t
  for t in $LOOPS $FUSES; do
    [ "$(csvq 'rows[-1]["value"] if rows else 0' "$t" armed-armed "${1:-0}")" = 1.0 ] || return 1
  done
}

# ---- phase 1: arming at ProbeInterval ARM_IVL --------------------------------------
arm_duty=10
[ "$quick" = 1 ] && arm_duty=50
conf "$ARM_IVL" "$arm_duty"
collectd_check "$d" || die "collectd -T refused the arming config: $(tail -5 "$d/check.out")"
say "phase 1: arming at ProbeInterval $ARM_IVL s (ArmRounds $ARM_ROUNDS)"
collectd_start "$d" "$cg"
wait_until $(((ARM_ROUNDS + 20) * ARM_IVL + 30)) armed_all ||
  die "not every target armed within $(((ARM_ROUNDS + 20) * ARM_IVL + 30)) s: $(grep -i diskprobe "$log" | tail -5)"
collectd_stop >/dev/null
grep -q "health state not saved" "$log" && die "phase 1's stop did not save the state: $(grep 'not saved' "$log")"

# ---- phase 2: the same StateDir at ProbeInterval IVL, default DutyCycle -----------
conf "$IVL"
collectd_check "$d" || die "collectd -T refused the config: $(tail -5 "$d/check.out")"
t_start=$(date +%s)
echo "---- phase 2 ----" >>"$log"
say "phase 2: ProbeInterval $IVL s, default DutyCycle"
collectd_start "$d" "$cg"
first_rounds() { # every target has a round (a CSV row) since phase 2 began
  local t
  for t in $LOOPS $FUSES; do
    [ "$(csvq 'len(rows)' "$t" armed-armed "$t_start")" -ge 1 ] || return 1
  done
}
wait_until $((2 * IVL + 30)) first_rounds || fail "not every target dispatched a round within $((2 * IVL + 30)) s of phase 2's start"
armed2=$(for t in $LOOPS $FUSES; do
  printf '%s=%s ' "$t" "$(csvq 'int(rows[0]["value"]) if rows else "none"' "$t" armed-armed "$t_start")"
done)
p2log() { sed -n '/^---- phase 2 ----$/,$p' "$log"; }
restored=$(p2log | grep -c "health baselines restored from $d/state")
ivlchg=$(p2log | grep -c "ProbeInterval is $IVL s now, $ARM_IVL s when the state file was saved")
say "phase 2's first rounds: armed $armed2; 'baselines restored' $restored, interval-change lines $ivlchg"
armed_all "$t_start" || fail "phase 2 did not start armed: $armed2"

sleep $((HEALTHY_ROUNDS * IVL))
declare -A QD1 QD32 SEQ P50 P99
for t in $LOOPS $FUSES; do
  QD1[$t]=$(csvq 'rows[0]["iops"]' "$t" probe_baseline-randread-qd1 "$t_start")
  QD32[$t]=$(csvq 'rows[0]["iops"]' "$t" probe_baseline-randread-qd32 "$t_start")
  SEQ[$t]=$(csvq 'rows[0]["iops"] * 1048576' "$t" probe_baseline-seqread "$t_start")
  P50[$t]=$(csvq 'rows[0]["p50"]' "$t" probe_baseline-randread-qd1 "$t_start")
  P99[$t]=$(csvq 'med("p99")' "$t" probe_latency-randread-qd1 "$t_start")
  say "  $t: baseline QD1 ${QD1[$t]} IOPS (p50 ${P50[$t]} s; p99 now ${P99[$t]} s), QD32 ${QD32[$t]} IOPS, seqread ${SEQ[$t]} B/s"
done

# ---- the faults, all at once ----------------------------------------------------------
int_of() { num_calc "$1" %.0f; }
declare -A FAULT NOTE
t_fault=$(date +%s)
for f in 10 3 2; do
  t=whole$f
  has $t || continue
  throttle "$cg" "${DEV[$t]}" read_iops "$(int_of "${QD1[$t]} / $f")"
  throttle "$cg" "${DEV[$t]}" read_bps "$(int_of "${SEQ[$t]} / $f")"
  FAULT[$t]="read IOPS <= $(int_of "${QD1[$t]} / $f") (QD1 $(int_of "${QD1[$t]}") / $f), read MB/s <= $(num_calc "${SEQ[$t]} / $f / 1e6" %.1f)"
done
for f in 10 3; do
  t=qd32div$f
  has $t || continue
  cap=$(int_of "${QD32[$t]} / $f")
  throttle "$cg" "${DEV[$t]}" read_iops "$cap"
  FAULT[$t]="read IOPS <= $cap (QD32 $(int_of "${QD32[$t]}") / $f; QD1 $(int_of "${QD1[$t]}"))"
  num_cmp "$cap" '>' "${QD1[$t]}" >/dev/null || NOTE[$t]="cap below QD1's rate: QD1 slowed too"
done
if has qd1half; then
  cap=$(int_of "${QD1[qd1half]} / 2")
  throttle "$cg" "${DEV[qd1half]}" read_iops "$cap"
  FAULT[qd1half]="read IOPS <= $cap (QD1 $(int_of "${QD1[qd1half]}") / 2; QD32 $(int_of "${QD32[qd1half]}"))"
fi
if has p99x5; then
  s=$(num_calc "5 * ${P99[p99x5]}" %.6f)
  ctl p99x5 "base $FUSE_BASE frac 0.03 $s"
  FAULT[p99x5]="3 % of requests +$(num_calc "$s * 1000" %.2f) ms (5 x QD1 p99)"
fi
w0=$t_fault
if has intermittent; then
  # windows of IVL centred on the target's rounds (a round runs about 1 s
  # before its row is dispatched, at most a read Interval later)
  last=$(csvq 'rows[-1]["epoch"]' intermittent armed-armed "$t_start")
  w0=$(num_calc "$last - 1 - $READ_IVL / 2 - $IVL / 2" %.0f)
  while [ "$w0" -lt "$t_fault" ]; do w0=$((w0 + IVL)); done
  s=$(num_calc "9 * ${P50[intermittent]}" %.6f)
  ctl intermittent "base $FUSE_BASE every $IVL 3 $s $w0"
  FAULT[intermittent]="requests +$(num_calc "$s * 1000" %.2f) ms (9 x QD1 p50) in 1 window of $IVL s in 3"
fi
if has deadmount; then
  kill -KILL "${FPID[deadmount]}"
  wait "${FPID[deadmount]}" 2>/dev/null
  FAULT[deadmount]="faultyfs killed (SIGKILL)"
fi
has timeout2.5 && ctl timeout2.5 "delay 2.5"
FAULT[timeout2.5]="every request +2.5 s, Timeout 2"
has iops1 && ctl iops1 "delay 1"
FAULT[iops1]="every request +1 s"
# seqdiv2: a read-bytes/s throttle is an average over its slice, which
# starts with the round's first probe: the sequential probe, last in the
# round, spends the credit the slower random probes left and ran at ~1.5x
# its cap (measured with `diskprobe watch` on a loop device; 1.0-1.1x for a
# lone seqread probe). So the cap is calibrated on rounds of the default
# probe set in the same cgroup until their sequential probe measures half
# its baseline -- what a disk with half the bandwidth gives it.
seq_rate() { # seq_rate DEV: the median seqread bytes/s of 3 rounds in $cg
  in_cgroup "$cg" "$top_builddir/src/cli/diskprobe" watch --count 3 --interval 2 \
    --duty-cycle 100 --format json "$1" 2>/dev/null |
    $PY -c 'import json, statistics, sys
v = [j["bytes_per_second"] for j in map(json.loads, sys.stdin) if j.get("probe") == "seqread"]
print(statistics.median(v) if v else "nan")'
}
t=seqdiv2
t_seq=$(date +%s) # its own start: after the other faults
has $t || SEQ[$t]=0
half=$(num_calc "${SEQ[$t]} / 2" %.0f)
# bisection between half / 2 and half (the measured rate is noisy, and not
# proportional to the cap): the highest cap known to hold the probe to
# half or less is kept
lo=$(num_calc "$half / 2" %.0f) hi=$half cap=$half
for k in 1 2 3 4; do
  has $t || break
  throttle "$cg" "${DEV[$t]}" read_bps "$cap"
  m=$(seq_rate "${DEV[$t]}")
  is_num "$m" || break
  say "  seqdiv2: cap $cap B/s, the rounds' seqread probe measured $m B/s (half the baseline: $half)"
  if num_cmp "$m" '>' "$half" >/dev/null; then hi=$cap; else lo=$cap; fi
  cap=$(num_calc "($lo + $hi) / 2" %.0f)
done
cap=$lo
has $t && throttle "$cg" "${DEV[$t]}" read_bps "$cap"
has $t && m=$(seq_rate "${DEV[$t]}")
has $t && FAULT[$t]="read MB/s <= $(num_calc "$cap / 1e6" %.1f), calibrated so that a seqread probe measures half its baseline $(num_calc "${SEQ[$t]} / 1e6" %.1f) (measured $(num_calc "$m / 1e6" %.1f))"
FAULT[control]="none"
say "faults on at $t_fault (intermittent's first slow window at $w0)"
sleep $((FAULT_ROUNDS * IVL))

# ---- recovery -------------------------------------------------------------------------
t_recover=$(date +%s)
for t in whole10 whole3 whole2 qd32div10 qd32div3 seqdiv2 qd1half; do
  has $t || continue
  unthrottle "$cg" "${DEV[$t]}" read_iops
  unthrottle "$cg" "${DEV[$t]}" read_bps
done
for t in p99x5 intermittent timeout2.5 iops1; do has $t && ctl "$t" "base $FUSE_BASE ok"; done
if has deadmount; then
  umount -l "$d/fuse-deadmount/mnt" 2>/dev/null
  fuse_start deadmount
fi
say "faults lifted at $t_recover (throttles left in $cg: $(cat "$cg"/blkio.throttle.read_*_device "$cg"/io.max 2>/dev/null | tr '\n' ' '))"
sleep $((RECOVER_ROUNDS * IVL))
t_end=$(date +%s)
collectd_stop >/dev/null

# ---- the table ------------------------------------------------------------------------
{
  for t in $LOOPS $FUSES; do
    st=$t_fault
    [ "$t" = intermittent ] && st=$w0
    [ "$t" = seqdiv2 ] && st=$t_seq
    printf '%s\t%s\t%s\t%s\n' "$t" "$st" "${FAULT[$t]}" "${NOTE[$t]:-}"
  done
} >"$d/scenarios.tsv"
loadavg=$(awk '{ s += $1; if (NR == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 } END { printf "%.2f (min %.2f, max %.2f, %d samples)", s / NR, lo, hi, NR }' "$d/loadavg")
disk=$(lsblk -ndo NAME,SIZE,ROTA "$(findmnt -no SOURCE -T "$d" | sed 's/\[.*//')" 2>/dev/null | awk '{ print $1 " (" $2 ", rotational " $3 ")"; exit }')
$PY - "$log" "$csv" "$d/scenarios.tsv" "$t_start" "$t_recover" "$t_end" "$IVL" "${hostdisk:-}" >"$d/table.md" <<'PY'
import csv, glob, re, sys, time
logf, csvd, scen, t_start, t_recover, t_end, ivl, hostdisk = sys.argv[1:9]
t_start, t_recover, t_end, ivl = float(t_start), float(t_recover), float(t_end), float(ivl)
ORDER = {"OKAY": 0, "WARNING": 1, "FAILURE": 2}
notes = []  # (time, target, severity, type, type_instance, message)
pat = re.compile(r"^\[([^\]]+)\] Notification: (.*)$")
for line in open(logf, errors="replace"):
    m = pat.match(line.rstrip("\n"))
    if not m:
        continue
    when = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
    body, _, msg = m.group(2).partition(", message = ")
    kv = dict(p.split(" = ", 1) for p in body.split(", ") if " = " in p)
    if kv.get("plugin") != "diskprobe" or when < t_start:
        continue
    notes.append((when, kv.get("plugin_instance", ""), kv.get("severity", ""),
                  kv.get("type", ""), kv.get("type_instance", ""), msg))
notes.sort(key=lambda n: n[0])
rule_of = lambda n: n[4] if n[3] == "health" else f"{n[3]} {n[4]}".strip()

def rounds(target, t0, t1):
    """probe rounds of target dispatched in (t0, t1]: rows of its first probe"""
    n = 0
    for f in glob.glob(f"{csvd}/diskprobe-{target}/operations_per_second-randread-qd1-[0-9]*"):
        for r in csv.DictReader(open(f)):
            n += t0 < float(r["epoch"]) <= t1
    return n

print("| scenario | fault | first notification after the fault: s (rounds) | severity | rule | worst during the fault | OKAY after recovery: s | notes |")
print("|---|---|---|---|---|---|---|---|")
details = []
for row in csv.reader(open(scen), delimiter="\t"):
    name, t0, fault, note = row[0], float(row[1]), row[2], row[3]
    mine = [n for n in notes if n[1] == name]
    early = [n for n in mine if n[0] < t0 and n[2] != "OKAY"]
    bad = [n for n in mine if t0 <= n[0] < t_recover and n[2] in ("WARNING", "FAILURE")]
    extra = [note] if note else []
    if early:
        extra.append(f"{len(early)} WARNING/FAILURE before the fault (first: {early[0][4]})")
    if bad:
        b = bad[0]
        first = f"{b[0] - t0:.0f} s ({rounds(name, t0, b[0])})"
        sev, rule = b[2], rule_of(b)
        worst = max(bad, key=lambda n: ORDER[n[2]])
        worst = f"{worst[2]} ({rule_of(worst)}, {worst[0] - t0:.0f} s)"
        details.append(f"- **{name}** ({b[2]}, {b[0] - t0:.0f} s): {b[5]}")
    else:
        first, sev, rule, worst = "none", "-", "-", "-"
    last_bad = max([n[0] for n in mine if n[2] in ("WARNING", "FAILURE")] or [0])
    ok = [n for n in mine if n[2] == "OKAY" and n[3] == "health" and n[0] >= t_recover]
    if ok:
        okay = f"{ok[0][0] - t_recover:.0f}"
    elif bad or last_bad:
        okay = f"none in {t_end - t_recover:.0f} s"
    else:
        okay = "(nothing to clear)"
    ok_during = [n for n in mine if n[2] == "OKAY" and n[3] == "health" and t0 <= n[0] < t_recover]
    if ok_during:
        extra.append(f"{len(ok_during)} health OKAY during the fault")
    again = [n for n in mine if n[3] == "health" and ok and n[0] > ok[0][0]]
    if again:
        extra.append(f"{len(again)} health notifications after that OKAY (first: {again[0][2]} {again[0][4]})")
    other = len([n for n in mine if n[3] != "health" and t0 <= n[0] < t_recover])
    if other:
        extra.append(f"{other} other notifications during the fault ({', '.join(sorted({n[3] for n in mine if n[3] != 'health'}))})")
    print(f"| {name} | {fault} | {first} | {sev} | {rule} | {worst} | {okay} | {'; '.join(extra)} |")
print()
print("The probes' figures during the fault (medians over its rounds): IOPS loss = the")
print("baseline's IOPS / the round's; tail = (p99/p50) / its median over the healthy phase-2")
print("rounds; the capacity rule's figure is a deeper probe's loss / max(1, the first's):")
print()
def series(target, name):
    rows = []
    for f in sorted(glob.glob(f"{csvd}/diskprobe-{target}/{name}-[0-9]*")):
        rows += [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(f))]
    return rows
def med(v):
    v = sorted(x for x in v if x == x)
    return v[len(v) // 2] if v else float("nan")
PROBES = ("randread-qd1", "randread-qd32", "seqread")
for row in csv.reader(open(scen), delimiter="\t"):
    name, t0 = row[0], float(row[1])
    if name not in ("control", "seqdiv2", "p99x5", "qd32div3"):
        continue
    words = []
    for p in PROBES:
        ops = series(name, f"operations_per_second-{p}")
        base = series(name, f"probe_baseline-{p}")
        lat = series(name, f"probe_latency-{p}")
        def at(rows, t, k):
            prev = [r for r in rows if r["epoch"] <= t + 0.5]
            return prev[-1][k] if prev else float("nan")
        loss = [at(base, r["epoch"], "iops") / r["value"] for r in ops
                if t0 <= r["epoch"] < t_recover and r["value"] > 0]
        shape = lambda a, b: [r["p99"] / r["p50"] for r in lat if a <= r["epoch"] < b and r["p50"] > 0]
        healthy = med(shape(t_start, t0))
        tail = med(shape(t0, t_recover)) / healthy if healthy == healthy else float("nan")
        before = [at(base, r["epoch"], "iops") / r["value"] for r in ops
                  if t_start <= r["epoch"] < t0 and r["value"] > 0]
        words.append(f"{p} IOPS loss {med(loss):.2f} (healthy phase 2: {med(before):.2f}), tail {tail:.2f}")
    print(f"- {name}: " + "; ".join(words))
util = series(f"dev-{hostdisk}", "percent-utilization") if hostdisk else []
if util:
    def u(a, b):
        v = [r["value"] for r in util if a <= r["epoch"] < b]
        return f"median {med(v):.0f} %, max {max(v):.0f} %" if v else "no reads"
    tf = min(float(r[1]) for r in csv.reader(open(scen), delimiter="\t"))
    print(f"- the host disk {hostdisk}'s utilisation (iostat %util): healthy phase 2 {u(t_start, tf)}; "
          f"during the faults {u(tf, t_recover)}; after {u(t_recover, t_end)}")
    for n in notes:
        if n[1] == "control" and n[2] in ("WARNING", "FAILURE"):
            print(f"- the 10 minutes before control's {n[2]} ({n[4]}): the host disk {u(n[0] - 600, n[0])}")
            break
print()
print("The first notification's message per scenario:")
print()
print("\n".join(details) if details else "- none")
PY
{
  echo "# The health verdict end to end: real collectd, default ProbeInterval and DutyCycle"
  echo
  echo "Produced by \`contrib/evaluation/health/e2e_degradations.sh\` (see its header for the method)."
  echo
  echo "- date: $(date -u -d "@$t_start" '+%Y-%m-%d %H:%M UTC') to $(date -u -d "@$t_end" '+%H:%M UTC')"
  echo "- machine: $(hostname), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), kernel $(uname -r), loop devices and FUSE files on ${disk:-?} (shared with other work); block I/O throttling: cgroup $(cg_detect && echo "$CG_MODE")"
  echo "- load average (1 min) during the run: $loadavg"
  echo "- command: \`$cmdline\`; plugin: $(git -C "$top_srcdir" describe --always --dirty 2>/dev/null)"
  echo "- schedule: arming at ProbeInterval $ARM_IVL s (DutyCycle $arm_duty) with StateDir; then ProbeInterval $IVL s, default DutyCycle and probe set (randread-qd1, randread-qd32, seqread), collectd Interval $READ_IVL s: $HEALTHY_ROUNDS rounds healthy, $FAULT_ROUNDS with the faults, $RECOVER_ROUNDS after"
  echo "- phase 2 started armed: $armed2(the state file: $restored 'baselines restored' line, $ivlchg 'ProbeInterval is $IVL s now, $ARM_IVL s when the state file was saved' lines)"
  echo "- rounds: the target's first-probe rounds dispatched after the fault up to the notification; severity and rule: that notification's (rule: the health rule, or the notification's type for others such as \`stalled\`); OKAY: the first health OKAY after the faults were lifted"
  echo "- FUSE files: every request $(num_calc "$FUSE_BASE * 1000") ms late while healthy (faultyfs's base word)"
  echo "- the tail rule's baseline is in the state file (its \"shape\" lines, since d55f595): the restart judges the tail at once"
  echo
  cat "$d/table.md"
} >"$out"
say "results in $out"
cat "$out"
[ -n "${KEEP_TMP:-}" ] && echo "work directory kept: $d"
finish e2e_degradations "tail -30 $log"
