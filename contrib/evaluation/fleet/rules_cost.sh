#!/bin/bash
# contrib/evaluation/fleet/rules_cost.sh - what the fleet rules
# (dashboards/fleet_disk_rules.yml and fleet_rules.yml, one Prometheus)
# cost per 10,000 disks, measured. A benchmark: it prints figures and
# never fails on a number (not in make check).
#
#   bash contrib/evaluation/fleet/rules_cost.sh          # about 10 minutes
#   DISKS=2000 bash contrib/evaluation/fleet/rules_cost.sh
#
# 1. rules_cost.py gen writes OpenMetrics for DISKS (10,000) disks, four
#    per host, in CLASSES (25) classes: the five series the rules read
#    (target_device, disk_info, QD1 p50, QD32 IOPS, seqread bytes/s) with
#    the shipped scrape job's join labels, one sample every STEP (60) s --
#    what Prometheus stores at the default ProbeInterval: write_prometheus
#    stamps each value with its time, and a scrape that finds the same
#    stamp again stores nothing -- for the last BACK (3900) s up to now, so
#    the rules' hour is full; every 997th disk is 4x slower than its class.
# 2. promtool tsdb create-blocks-from openmetrics makes TSDB blocks of it.
# 3. Two Prometheus runs on copies of those blocks, EVAL (15 s) evaluation
#    interval, SECONDS_RUN (150) s each: with both rule files as shipped
#    (first: its instant selectors need samples of the last 5 min), then
#    the control without rule files. rules_cost.py sample reads each group's
#    evaluationTime (/api/v1/rules) at every new evaluation and, at the
#    end, the resident memory, Go heap in use, head series and CPU seconds
#    (/metrics), and counts the disks with a recorded slowdown (all of
#    them, or the rules saw less than the fleet) and the
#    DiskProbeSlowForModel alerts (pending: for: 1h has not passed; one per
#    4x disk). The report: the group's evaluation time (median and worst),
#    the recorded series it added, and the memory with the rules minus the
#    control's.
#
# Needs prometheus and promtool (Debian: prometheus), python3, ~1 GB in
# TMPDIR. Everything it starts it stops by pid; everything it writes is in
# one temporary directory, removed at the end (KEEP=1 keeps it).
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
here="$top/contrib/evaluation/fleet"
DISKS=${DISKS:-10000} CLASSES=${CLASSES:-25} STEP=${STEP:-60}
BACK=${BACK:-3900} EVAL=${EVAL:-15s} SECONDS_RUN=${SECONDS_RUN:-150}
PORT=${PORT:-$((30000 + RANDOM % 20000))}
for c in prometheus promtool python3; do
  command -v $c >/dev/null || { echo "rules_cost: $c not installed" >&2; exit 2; }
done
w=$(mktemp -d "${TMPDIR:-/var/tmp}/rules-cost.XXXXXX")
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $w" || rm -rf "$w"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

t=$SECONDS
python3 "$here/rules_cost.py" gen "$w/series.om" "$DISKS" "$CLASSES" "$STEP" "$BACK" >"$w/gen.json" || exit 1
echo "generated: $(cat "$w/gen.json") in $((SECONDS - t)) s ($(du -h "$w/series.om" | cut -f1))"
t=$SECONDS
promtool tsdb create-blocks-from openmetrics -q "$w/series.om" "$w/blocks" >"$w/promtool.log" 2>&1 ||
  { echo "promtool failed: $(tail -3 "$w/promtool.log")" >&2; exit 1; }
rm -f "$w/series.om"
echo "promtool made $(ls "$w/blocks" | wc -l) blocks in $((SECONDS - t)) s ($(du -sh "$w/blocks" | cut -f1))"

# run NAME RULE_FILE...: a Prometheus on a copy of the blocks, sampled.
run() {
  local name=$1 p="$w/$1" f
  shift
  mkdir -p "$p"
  cp -r "$w/blocks" "$p/data"
  {
    printf 'global:\n  evaluation_interval: %s\nrule_files:\n' "$EVAL"
    for f in "$@"; do printf '  - %s\n' "$f"; done
    [ $# = 0 ] && printf '  []\n'
  } >"$p/prometheus.yml"
  prometheus --config.file="$p/prometheus.yml" --storage.tsdb.path="$p/data" \
    --storage.tsdb.retention.time=30d --web.listen-address="127.0.0.1:$PORT" >"$p/prometheus.log" 2>&1 &
  pid=$!
  for _ in $(seq 120); do
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/-/ready" && break
    sleep 1
  done
  python3 "$here/rules_cost.py" sample "http://127.0.0.1:$PORT" "$SECONDS_RUN" >"$w/$name.json"
  kill "$pid"
  wait "$pid" 2>/dev/null
  pid=
}
run rules "$top/dashboards/fleet_disk_rules.yml" "$top/dashboards/fleet_rules.yml"
run control

python3 - "$w/control.json" "$w/rules.json" "$w/gen.json" "$EVAL" <<'PY'
import json, statistics, sys
ctl, rul, gen = (json.load(open(f)) for f in sys.argv[1:4])
mb = lambda x: x / 2**20
print("fleet_disk_rules.yml + fleet_rules.yml on %d disks (%d hosts, %d classes), one sample per series every %d s, evaluation every %s:"
      % (gen["disks"], gen["hosts"], gen["classes"], gen["step_s"], sys.argv[4]))
for g, ts in sorted(rul["evaluations"].items()):
    print("  group %-28s %2d evaluations, evaluation time median %.3f s, worst %.3f s"
          % (g, len(ts), statistics.median(ts), max(ts)))
print("  disks with a recorded class slowdown: %d of %d; DiskProbeSlowForModel alerts (pending, for: 1h): %d, expected %d"
      % (rul["recorded_disks"], gen["disks"], rul["alerts"], len(range(0, gen["disks"], 997))))
print("  slowest rules at the last evaluation: " + "; ".join("%s %.3f s" % (r[1], r[0]) for r in rul["slowest_rules"]))
cm, rm = ctl["metrics"], rul["metrics"]
print("  head series: %d without the rules, %d with (+%d recorded)" % (
    cm["prometheus_tsdb_head_series"], rm["prometheus_tsdb_head_series"],
    rm["prometheus_tsdb_head_series"] - cm["prometheus_tsdb_head_series"]))
print("  resident memory: %.0f MiB without, %.0f MiB with (%+.0f MiB); Go heap in use %.0f -> %.0f MiB (%+.0f MiB)" % (
    mb(cm["process_resident_memory_bytes"]), mb(rm["process_resident_memory_bytes"]),
    mb(rm["process_resident_memory_bytes"] - cm["process_resident_memory_bytes"]),
    mb(cm["go_memstats_heap_inuse_bytes"]), mb(rm["go_memstats_heap_inuse_bytes"]),
    mb(rm["go_memstats_heap_inuse_bytes"] - cm["go_memstats_heap_inuse_bytes"])))
print("  CPU seconds over the run: %.1f without, %.1f with" % (
    cm["process_cpu_seconds_total"], rm["process_cpu_seconds_total"]))
PY
