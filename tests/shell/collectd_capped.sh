#!/bin/bash
# collectd_capped.sh - a rate-capped volume at a 10 s ProbeInterval with the
# default probes and DutyCycle: what a cloud fleet runs.
#
# A loop device is throttled to 250 read IOPS and 50 MiB/s (cgroup v1
# blkio or v2 io.max, as a cloud volume's caps) and probed by the real
# collectd with rrdtool, csv and write_prometheus. DutyCycle shortens the
# default probes to 0.05-0.1 s there, shorter than a throttle's slice:
# the first round shows the throttle's steps, and from the next round on
# the probes run a quarter of a second and read the caps.
#
# Checked over five rounds:
# - no probe is skipped two rounds running (the scheduler's log), and a
#   deep probe's wait in the throttle's queue is no "slow single read":
#   nothing is skipped at all here;
# - no 0 IOPS or 0 B/s for any probe in csv (the exact values), in the
#   RRD files (rrdtool fetch) or on /metrics: a probe not measured is
#   absent, never a 0;
# - every probe measured at least every other round;
# - after the first round, QD1 and QD32 read the IOPS cap and seqread the
#   bytes cap, the median of rounds 2-5 within 10 % and each within 25 %
#   (a QD1 probe needs the CPU for each read: on a loaded machine one
#   round read 0.86; the benchmark contrib/evaluation/bench/
#   throttle_window.sh measures how close, side by side with fio).
# Control: the first round's seqread, too short for a whole step, reads
# the cap with the throttle's credit (above 1.2x); if it did not, the
# check of the later rounds would say nothing.
set -u
. "$(dirname "$0")/lib.sh"
need root loop blkio collectd
need_cmd rrdtool rrdtool
need_cmd curl curl
IOPS=250
MIB=50

d=$(make_tmpdir)
dev=$(make_loop 256 "$d") || exit
cg=$(make_cgroup) || exit
throttle "$cg" "$dev" read_iops $IOPS
throttle "$cg" "$dev" read_bps $((MIB * 1048576))
port=$(free_port)

collectd_conf "$d" 10 <<CONF
  Splay false
  <Target "capped">
    Device "$dev"
    ProbeInterval 10
  </Target>
CONF
{
  printf 'LoadPlugin csv\n<Plugin csv>\n  DataDir "%s/csv"\n</Plugin>\n' "$d"
  write_prometheus_conf "$port"
} >>"$d/collectd.conf"
collectd_start "$d" "$cg"
csvdir() { echo "$d"/csv/*/diskprobe-capped; }
rounds() { grep -c '^[0-9]' "$(csvdir)"/operations_per_second-seqread-* 2>/dev/null || echo 0; }
wait_until 90 sh -c "[ \$(grep -c '^[0-9]' $d/csv/*/diskprobe-capped/operations_per_second-seqread-* 2>/dev/null || echo 0) -ge 5 ]" ||
  fail "fewer than 5 rounds in 90 s ($(rounds)): $(tail -3 "$d/collectd.log")"
metrics=$(curl -s --max-time 5 "http://127.0.0.1:$port/metrics")
collectd_stop >/dev/null

grep -E 'skipped' "$d/collectd.log" | head -3
n=$(grep -c 'skipped:' "$d/collectd.log")
[ "$n" = 0 ] && pass "no probe skipped on the capped volume" ||
  fail "$n probes skipped: $(grep -m1 'skipped:' "$d/collectd.log")"

# csv: one line per round per probe; values "nan" when not measured
for f in "$(csvdir)"/operations_per_second-*-* "$(csvdir)"/bytes_per_second-*-*; do
  [ -f "$f" ] || continue
  probe=$(basename "$f" | sed -E 's/^[a-z_]+-(.*)-[0-9]{4}-[0-9]{2}-[0-9]{2}$/\1/')
  vals=$(awk -F, '/^[0-9]/ { print $2 }' "$f" | tr '\n' ' ')
  echo "csv $(basename "$f"): $vals"
  if awk -F, '/^[0-9]/ && $2 + 0 == 0 && $2 !~ /nan/ { z = 1 } END { exit !z }' "$f"; then
    fail "$(basename "$f"): a 0 where a probe measured nothing: $vals"
  else
    pass "$(basename "$f"): no 0"
  fi
  awk -F, '/^[0-9]/ { if ($2 ~ /nan/) { if (prev) bad = 1; prev = 1 } else prev = 0 } END { exit bad }' "$f" &&
    pass "$probe: measured at least every other round" ||
    fail "$probe: unmeasured two rounds running: $vals"
done

# RRD: every value rrdtool gives back is a number above 0 or NaN
for f in "$d"/rrd/*/diskprobe-capped/operations_per_second-*.rrd "$d"/rrd/*/diskprobe-capped/bytes_per_second-*.rrd; do
  [ -f "$f" ] || continue
  z=$(rrdtool fetch "$f" AVERAGE -s -120 | awk -F': ' 'NF == 2 && $2 !~ /nan/ && $2 + 0 == 0' | wc -l)
  [ "$z" = 0 ] && pass "$(basename "$f"): no 0 in the RRD" ||
    fail "$(basename "$f"): $z zero rows: $(rrdtool fetch "$f" AVERAGE -s -120 | tail -5)"
done

# /metrics: no 0 for a probe's IOPS or bytes/s
zeros=$(echo "$metrics" | grep -E '^collectd_diskprobe_(operations|bytes)_per_second\{[^}]*diskprobe="capped"' | awk '$2 == 0')
seen=$(echo "$metrics" | grep -cE '^collectd_diskprobe_operations_per_second\{[^}]*diskprobe="capped"')
[ "$seen" -ge 3 ] && [ -z "$zeros" ] && pass "/metrics: $seen probe IOPS series, no 0" ||
  fail "/metrics: $seen probe IOPS series, zeros: $zeros"

# the figures: round 1 (too short for a whole step) and the later rounds
fig() { awk -F, -v k="$2" '/^[0-9]/ { n++; if ((k == 1 && n == 1) || (k > 1 && n > 1 && $2 !~ /nan/)) print $2 }' "$1"; }
first_seq=$(fig "$(csvdir)"/bytes_per_second-seqread-* 1)
num_cmp "$first_seq" '>' $((MIB * 1048576 * 12 / 10)) &&
  pass "control: round 1's 0.05 s seqread reads the credit too: $(num_calc "$first_seq / 1048576" %.1f) MiB/s" ||
  fail "control: round 1's seqread read $first_seq B/s, not above 1.2x the cap: the later rounds' check says nothing"
for p in randread-qd1 randread-qd32 seqread; do
  if [ $p = seqread ]; then
    f=$(echo "$(csvdir)"/bytes_per_second-seqread-*) cap=$((MIB * 1048576))
  else
    f=$(echo "$(csvdir)"/operations_per_second-$p-*) cap=$IOPS
  fi
  vals=$(fig "$f" 2 | tr '\n' ' ')
  med=$(echo "$vals" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "none") }')
  within "$med" "$cap" 10 && pass "$p after round 1: median $med within 10 % of $cap ($vals)" ||
    fail "$p after round 1: median $med, not within 10 % of $cap ($vals)"
  for v in $vals; do
    within "$v" "$cap" 25 || fail "$p after round 1: $v, not within 25 % of $cap (the credit reads 1.9x)"
  done
done

finish collectd_capped
