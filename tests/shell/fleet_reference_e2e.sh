#!/bin/bash
# fleet_reference_e2e.sh - the fleet reference end to end: a disk slow for
# its class from the day it was installed, which its own baseline learns as
# normal, singled out by the central server's data alone.
#
# The fleet, on loopback (fleet_secure.sh's pattern, lib.sh's fleet_*):
#   - five members (the alert's minimum class size, as shipped), each a real
#     collectd with the built plugin in a UTS and mount namespace of its own
#     (host name member-N, FQDN member-N.fleet.test), the shipped client
#     drop-in sending to one central collectd (the shipped server drop-in:
#     RRD files, and write_prometheus with its commented lines loaded), each
#     probing a loop device of its own with `Class "test-ssd"`;
#   - every member's loop device is capped by a blkio throttle (cgroup v1
#     blkio or v2 io.max, whichever the host has) from before its first
#     round: member-3's at SLOW_IOPS, the others' at 4 x SLOW_IOPS. Capping
#     the healthy ones too makes "a quarter of the others' IOPS" hold by
#     construction on a shared, noisy machine (their own speed is far above
#     the cap; loop_throttle.sh checks that the throttle binds). A blkio
#     throttle lets I/O through in 100 ms slices: QD32 IOPS, MB/s, QD1's
#     IOPS and mean latency fall to a quarter, QD1's p50 does not move (most
#     QD1 I/Os pass at once; health_e2e.sh says the same), so the checks of
#     a 4x ratio are on the figures the throttle moves, the p50 is printed.
#     That p50 is the sparse loop device's own, microseconds of CPU that
#     jump with the machine's load (in trials every member, throttled or
#     not, warned on it within two minutes). The health rules take the
#     first probe's p50 as the round's figure (health.h), so the deep
#     probes come first here and keep more I/Os in flight (32) than a
#     100 ms slice lets through (FAST_IOPS / 10 < 32): their p50 is the
#     throttle's wait, steady. The names are the default set's, which
#     the fleet rules select. That wait (0.13-0.53 s) is above the
#     ceiling of a virtual disk (20 ms), so LatencyCeiling is 5 s, as the
#     README says for a disk slower than its class's ceiling.
# Checked:
#   - member-3's own verdict stays OK (target_health level 0 in every
#     round, armed): its baseline learnt it as normal;
#   - a real Prometheus scraping the central with the shipped scrape job,
#     alerts.yml, fleet_disk_rules.yml and fleet_rules.yml:
#     DiskProbeSlowForModel fires for member-3's disk, and no other disk
#     ever fired (pending ones, which for: stops, are printed: early in the
#     run a window holds a round or two of QD1 p50s, the noisy figure
#     here). The rules' time windows are shortened for the test, nothing
#     else: the test copy of fleet_disk_rules.yml replaces the hourly
#     window [1h] by [WINDOW], that of fleet_rules.yml `for: 1h` by
#     `for: FOR` with sed (and the test checks that exactly those four
#     lines differ), so the shipped expressions -- median of the window,
#     median of the class, the 3x threshold, the minimum class of 5
#     -- are the ones evaluated, on live data. (Backfilling an hour with
#     promtool would test the rules on synthetic series, which
#     fleet_rules_test.yml already does; the point here is the real
#     plugin's series through the real network path.)
#   - the fleet dashboard's "How fast are your disks" row: every panel
#     query returns data (dashboard_queries.py, as dashboards_live.sh);
#   - `diskprobe fleet` on the central's RRD tree (after the central
#     stopped and flushed its cache): member-3's target first (text and
#     JSON), its QD32 IOPS and MB/s ratios ~4 (between RATIO_LO and
#     RATIO_HI, printed), every other disk's at most HEALTHY_MAX;
#   - `diskprobe compare` of two healthy members: no row the throttle sets
#     (QD1 mean and IOPS, QD32 p50 and IOPS, sequential average) "different",
#     the 8 KiB IOPS rows "within noise" (QD1's p50 is the CPU time above,
#     which may well differ between two members: printed); of member-3
#     against a healthy one:
#     each ratio inside its 95 % interval, and "different" on the rows the
#     throttle moves (QD1 mean and IOPS, QD32 IOPS, sequential average).
# Skips without root, loop devices, block I/O throttling, collectd, curl,
# rrdtool, unshare, prometheus or promtool.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd throttle
need_cmd curl
need_cmd rrdtool
need_cmd unshare util-linux
need_cmd prometheus prometheus
need_cmd promtool prometheus
CLASS=test-ssd
MEMBERS="member-1 member-2 member-3 member-4 member-5"
SLOW=member-3
SLOW_IOPS=60 FAST_IOPS=240
WINDOW=60s FOR=20s          # the test's [1h] and for: 1h
RATIO_LO=3 RATIO_HI=5.5     # the slow disk's QD32 IOPS and MB/s ratios in fleet (4 by the throttles)
HEALTHY_MAX=1.5             # a healthy disk's
dp="$top_builddir/src/cli/diskprobe"
d=$(make_tmpdir)
# three free ports: the network plugin (UDP), write_prometheus, Prometheus
while :; do
  port=$((20000 + RANDOM % 20000))
  ss -Hltun "( sport = :$port or sport = :$((port + 1)) or sport = :$((port + 2)) )" 2>/dev/null | grep -q . || break
done
wp=$((port + 1)) pq=$((port + 2))
secret=$(fleet_secret)
[ -n "$secret" ] || die "fleet-auth has no diskprobe-fleet line"

# ---- the rules, with the test's windows ----
disk_rules="$d/fleet_disk_rules.yml" rules="$d/fleet_rules.yml"
sed -e "s/\[1h\]/[$WINDOW]/g" "$top_srcdir/dashboards/fleet_disk_rules.yml" >"$disk_rules"
sed -e "s/^\( *for:\) 1h$/\1 $FOR/" "$top_srcdir/dashboards/fleet_rules.yml" >"$rules"
changed=$(diff "$top_srcdir/dashboards/fleet_disk_rules.yml" "$disk_rules" | grep '^>')
changed_class=$(diff "$top_srcdir/dashboards/fleet_rules.yml" "$rules" | grep '^>')
n_win=$(grep -c "\[$WINDOW\]" <<<"$changed")
n_for=$(grep -c "for: $FOR" <<<"$changed_class")
if [ "$(grep -c . <<<"$changed")" = 3 ] && [ "$n_win" = 3 ] &&
  [ "$(grep -c . <<<"$changed_class")" = 1 ] && [ "$n_for" = 1 ]; then
  pass "test rules: the shipped fleet_disk_rules.yml with [1h] -> [$WINDOW] (3 lines), fleet_rules.yml with for: 1h -> $FOR (1 line), nothing else"
else
  die "test rules: expected 3 window lines and 1 for: line to change, got: $changed $changed_class"
fi
promtool check rules "$disk_rules" "$rules" >"$d/promtool.out" 2>&1 || die "promtool check rules on the test copies: $(cat "$d/promtool.out")"
grep -q 'diskprobe:class:disks >= 5' "$rules" || die "the test copy lost the minimum class size 5"

# ---- the central ----
srv="$d/server"
fleet_server_dropin "$srv" "$port" "$wp"
fleet_main_conf "$srv" </dev/null
collectd_check "$srv" || die "collectd -T refused the server: $(cat "$srv/check.out")"

# ---- the members: a loop device each, throttled from the first round ----
cg_fast=$(make_cgroup) || exit
cg_slow=$(make_cgroup) || exit
declare -A dev cpid
for n in $MEMBERS; do
  w="$d/$n"
  dev[$n]=$(make_loop 64 "$d") || exit
  if [ "$n" = "$SLOW" ]; then
    throttle "$cg_slow" "${dev[$n]}" read_iops $SLOW_IOPS
  else
    throttle "$cg_fast" "${dev[$n]}" read_iops $FAST_IOPS
  fi
  fleet_client_dropin "$w" "$port" "$secret" Encrypt 1
  fleet_main_conf "$w" <<CONF
<Plugin diskprobe>
  Splay false
  DutyCycle 100
  ArmRounds 10
  StateDir "$w"
  <Target "data">
    Device "${dev[$n]}"
    Class "$CLASS"
    ProbeInterval 5
    LatencyCeiling 5
    <Probe "randread-qd32">
      Pattern randread
      BlockSize "8k"
      QueueDepth 32
      Duration 0.8
    </Probe>
    <Probe "seqread">
      Pattern seqread
      BlockSize "32k"
      QueueDepth 32
      Duration 0.8
    </Probe>
    <Probe "randread-qd1">
      Pattern randread
      BlockSize "8k"
      QueueDepth 1
      Duration 0.8
    </Probe>
  </Target>
</Plugin>
CONF
  fleet_as_host "$w" "$n"
done
echo "members' disks: $(for n in $MEMBERS; do printf '%s=%s ' "$n" "${dev[$n]##*/}"; done)"
echo "throttles: $SLOW at $SLOW_IOPS read IOPS, the others at $FAST_IOPS ($CG_MODE)"
unshare --uts --mount "$d/member-1/as-host" hostname >"$d/uts.out" 2>&1 ||
  skip "cannot run collectd in a UTS and mount namespace: $(cat "$d/uts.out")"

collectd_start "$srv"
spid=$COLLECTD_PID
wait_until 15 curl -sf -o /dev/null "http://127.0.0.1:$wp/metrics" || die "the server's write_prometheus does not answer"
FLEET_DISK_RULES=$disk_rules FLEET_RULES=$rules prometheus_start "$d/prom" "$pq" "$wp"
wait_until 30 curl -sf -o /dev/null "http://127.0.0.1:$pq/-/ready" || die "Prometheus is not ready: $(tail -2 "$d/prom/prometheus.log")"
t0=$SECONDS
for n in $MEMBERS; do
  cg=$cg_fast
  [ "$n" = "$SLOW" ] && cg=$cg_slow
  COLLECTD_WRAP="unshare --uts --mount $d/$n/as-host" collectd_start "$d/$n" "$cg"
  cpid[$n]=$COLLECTD_PID
done

api="http://127.0.0.1:$pq/api/v1"
query() { curl -s --get "$api/query" --data-urlencode "query=$1"; }
value_of() { query "$1" | sed -n 's/.*"value":\[[^,]*,"\([^"]*\)".*/\1/p'; }
# labels PROMQL LABEL: the LABEL of each series the query returns, sorted
labels() {
  query "$1" | python3 -c 'import json,sys; print("\n".join(sorted(r["metric"].get(sys.argv[1], "") for r in json.load(sys.stdin)["data"]["result"])))' "$2" 2>/dev/null
}
all_armed() { [ "$(value_of "count(collectd_diskprobe_armed{type=\"armed\",diskprobe=\"data\"} == 1)")" = 5 ]; }
wait_until 120 all_armed ||
  die "not all five members armed within 120 s ($(value_of 'count(collectd_diskprobe_armed{type="armed"} == 1)')): $(tail -3 "$d/$SLOW/collectd.log")"
pass "all five members report to Prometheus through the central and are armed ($((SECONDS - t0)) s)"

# ---- Prometheus: the alert fires for member-3's disk, and for no other ----
fqdn=$SLOW.fleet.test
firing() { [ "$(labels 'ALERTS{alertname="DiskProbeSlowForModel",alertstate="firing"}' instance)" = "$fqdn" ]; }
wait_until 150 firing || fail "DiskProbeSlowForModel not firing for $fqdn alone within 150 s: firing for '$(labels 'ALERTS{alertname="DiskProbeSlowForModel",alertstate="firing"}' instance | tr '\n' ' ')'"
# let the windows fill with the members' rounds before judging the rest
while [ $((SECONDS - t0)) -lt 100 ]; do sleep 1; done
ever=$(labels "max by (instance, device) (max_over_time(ALERTS{alertname=\"DiskProbeSlowForModel\",alertstate=\"firing\"}[10m]))" instance | tr '\n' ' ')
pending=$(labels "max by (instance, device) (max_over_time(ALERTS{alertname=\"DiskProbeSlowForModel\",alertstate=\"pending\"}[10m]))" instance | tr '\n' ' ')
echo "  pending at some point (for: $FOR not yet passed): ${pending:-none}"
slow_dev=${dev[$SLOW]##*/}
got=$(query "ALERTS{alertname=\"DiskProbeSlowForModel\",alertstate=\"firing\"}")
if firing && [ "$ever" = "$fqdn " ] && grep -q "\"device\":\"$slow_dev\"" <<<"$got" && grep -q "\"class\":\"$CLASS\"" <<<"$got"; then
  pass "DiskProbeSlowForModel fires for $fqdn disk $slow_dev (class $CLASS); no other disk ever fired"
else
  fail "DiskProbeSlowForModel: firing at some point for: '$ever'; firing now: $got"
fi
for n in $MEMBERS; do
  printf '  %s: class slowdown %s (per figure: %s)\n' "$n" \
    "$(value_of "diskprobe:disk:class_slowdown:max{instance=\"$n.fleet.test\"}")" \
    "$(query "diskprobe:disk:class_slowdown{instance=\"$n.fleet.test\"}" | python3 -c 'import json,sys; print(" ".join("%s=%.2f" % (r["metric"]["figure"], float(r["value"][1])) for r in json.load(sys.stdin)["data"]["result"]))')"
done
v=$(value_of "diskprobe:class:disks{class=\"$CLASS\"}")
num_cmp "$v" == 5 && pass "the class $CLASS has 5 disks (the shipped minimum)" || fail "diskprobe:class:disks{class=\"$CLASS\"} = '$v'"

# ---- the slow member's own verdict: OK all along ----
sel="collectd_diskprobe_target_health{type=\"level\",diskprobe=\"data\",instance=\"$fqdn\"}"
worst=$(value_of "max_over_time(${sel}[10m])")
rounds=$(value_of "count_over_time(${sel}[10m])")
armed=$(value_of "collectd_diskprobe_armed{type=\"armed\",diskprobe=\"data\",instance=\"$fqdn\"}")
base=$(value_of "max_over_time(collectd_diskprobe_slowdown{type=\"round\",diskprobe=\"data\",instance=\"$fqdn\"}[10m])")
if num_cmp "$worst" == 0 && num_cmp "$rounds" '>' 0 && num_cmp "$armed" == 1; then
  pass "$SLOW's own verdict: OK in every sample ($rounds scraped, worst level $worst), armed, its round slowdown against its own baseline at most $base: it learnt its slowness as normal"
else
  fail "$SLOW's own verdict: worst level '$worst' over $rounds samples, armed '$armed' (log: $(grep -m2 -i 'warn\|fail' "$d/$SLOW/collectd.log"))"
fi

# ---- the fleet dashboard's row ----
dashboard_queries "$api" "$d/py.log" "diskprobe-fleet.json:How fast are your disks"

# ---- the central's RRD tree (written when the central stops) ----
for n in $MEMBERS; do collectd_stop "${cpid[$n]}" >/dev/null; done
collectd_stop "$spid"
"$dp" fleet --since 10min "$srv/rrd" >"$d/fleet.txt" 2>&1 || fail "fleet exited $?: $(cat "$d/fleet.txt")"
cat "$d/fleet.txt"
first=$(awk '$1 == 1 { print $2, $3, $4, $5 }' "$d/fleet.txt")
[ "$first" = "$fqdn data $slow_dev $CLASS" ] && pass "fleet (text): rank 1 is $fqdn's target data on $slow_dev, class $CLASS" ||
  fail "fleet (text): rank 1 is '$first', expected '$fqdn data $slow_dev $CLASS'"
"$dp" fleet --since 10min --format json "$srv/rrd" >"$d/fleet.json" 2>&1 || fail "fleet --format json exited $?"
echo "noise bounds: the slow disk's worst ratio between $RATIO_LO and $RATIO_HI (4 by the throttles), a healthy one's at most $HEALTHY_MAX"
python3 - "$d/fleet.json" "$fqdn" "$RATIO_LO" "$RATIO_HI" "$HEALTHY_MAX" <<'PY' >"$d/fleet.check" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
fqdn, lo, hi, hmax = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
disks = d["disks"]
assert len(disks) == 5, "%d disks listed" % len(disks)
top = disks[0]
assert top["rank"] == 1 and top["host"] == fqdn and top["class"] == "test-ssd" and top["class_targets"] == 5, top
THROTTLED = ("qd32_iops", "seq_bytes_per_s")  # QD1's p50 is not moved by the throttle
for r in disks:
    for k in THROTTLED:
        x = r["figures"][k]["slowdown"]
        assert (lo <= x <= hi) if r is top else (x <= hmax), (r["host"], k, x)
assert top["worst"] >= lo, top
print("%s worst x%.2f (%s); the others' worst x%.2f-x%.2f" % (
    fqdn, top["worst"], ", ".join("%s x%.2f" % (k, f["slowdown"]) for k, f in top["figures"].items()),
    min(r["worst"] for r in disks[1:]), max(r["worst"] for r in disks[1:])))
PY
[ $? = 0 ] && pass "fleet (json): $(cat "$d/fleet.check")" || fail "fleet (json): $(tail -1 "$d/fleet.check")"

# ---- compare ----
cmp_json() { # cmp_json OUT A B
  "$dp" compare --rrd "$srv/rrd" --since 10min --format json "$2" "$3" >"$1" 2>"$d/cmp.err" ||
    fail "compare $2 $3 exited $?: $(cat "$d/cmp.err")"
}
cmp_json "$d/healthy.json" member-1.fleet.test/data member-2.fleet.test/data
python3 - "$d/healthy.json" <<'PY' >"$d/healthy.check" 2>&1
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
# every figure but QD1's p50 (CPU time on a sparse loop device, not the
# throttle's: see the header)
set_by_throttle = [r for r in rows if r["figure"] != "qd1_p50_s"]
assert all(r["verdict"] != "different" for r in set_by_throttle), [(r["figure"], r["verdict"]) for r in rows]
iops = [r for r in rows if r["figure"].endswith("_iops")]
assert len(iops) == 2 and all(r["verdict"] == "within noise" for r in iops), iops
p50 = [r for r in rows if r["figure"] == "qd1_p50_s"]
print("; ".join("%s %.3f [%s]" % (r["figure"], r["ratio"], r["verdict"]) for r in iops + p50))
PY
[ $? = 0 ] && pass "compare member-1 member-2 (equal disks): within noise: $(cat "$d/healthy.check")" ||
  fail "compare member-1 member-2: $(tail -1 "$d/healthy.check")"
cmp_json "$d/slow.json" member-1.fleet.test/data "$fqdn/data"
python3 - "$d/slow.json" <<'PY' >"$d/slow.check" 2>&1
import json, sys
rows = {r["figure"]: r for r in json.load(open(sys.argv[1]))["rows"]}
for r in rows.values():
    lo, hi = r["ci95"]
    assert lo <= r["ratio"] <= hi, r
MOVED = ("qd1_mean_s", "qd1_iops", "qd32_iops", "seq_avg_bytes_per_s")
for k in MOVED:
    assert rows[k]["verdict"] == "different", rows[k]
print("; ".join("%s %.3f in %.3f-%.3f" % (k, rows[k]["ratio"], rows[k]["ci95"][0], rows[k]["ci95"][1]) for k in MOVED))
PY
[ $? = 0 ] && pass "compare member-1 $SLOW: different, each ratio inside its interval: $(cat "$d/slow.check")" ||
  fail "compare member-1 $SLOW: $(tail -1 "$d/slow.check")"
"$dp" compare --rrd "$srv/rrd" --since 10min member-1.fleet.test/data "$fqdn/data" | sed 's/^/  | /'

echo "run time $((SECONDS - t0)) s from the members' start"
finish fleet_reference_e2e "tail -n 5 $srv/collectd.log $d/$SLOW/collectd.log"
