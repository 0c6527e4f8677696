#!/bin/bash
# tests/shell/alertmanager_example.sh - contrib/examples/alertmanager.yml:
#
#  * amtool check-config accepts it;
#  * amtool's route test sends critical to the pager, warning and info to
#    the ticket receiver (diskprobe's alert names and labels);
#  * the real Alertmanager (Debian's prometheus-alertmanager, on loopback)
#    with the file, given the alerts of a host whose target pgdata on sda
#    FAILS while sda is also saturated, whose target wal on sda is slow
#    because sda is busy, and whose targets backup (degraded) and scratch
#    (busy) are on sdb: pgdata's WARNING, wal's DiskProbeDiskBusy and sda's
#    saturation are inhibited by the FAILURE; backup's WARNING, scratch's
#    DiskProbeDiskBusy, sdb's saturation and the fleet-wide
#    DiskProbeMissing (no device, no target) are not;
#  * DiskProbeClassSlow (fleet_rules.yml) routes to the pager; in a third
#    Alertmanager, per-disk alerts with their class (and backend) all
#    notify while no class alert fires; with DiskProbeClassSlow for class
#    ssd-x and for backend array-7, that class's FAILURE by slowness,
#    WARNING, latency and SlowForModel alerts and array-7's WARNING are
#    inhibited; a hung disk of the class (FAILURE cause="hard",
#    DiskProbeStalled), another class's FAILURE and the fleet-wide
#    DiskProbeMissing are not (a critical alert without a target must not
#    inhibit warnings without one);
#  * the pager receiver (its webhook pointed at a receiver on loopback)
#    gets a FAILURE and, once it is resolved, "resolved" within the
#    example's group_interval (1m; Alertmanager's default of 5m made it
#    4-5 min); the warnings (a busy disk among them) never reach it; the
#    slow class pages once and its disk's FAILURE does not page, while
#    the FAILURE of a disk of another class does.
#
# Needs amtool and prometheus-alertmanager (Debian: prometheus-alertmanager),
# curl and python3. Exit 0 pass, 1 fail, 77 skip.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd amtool prometheus-alertmanager
need_cmd prometheus-alertmanager prometheus-alertmanager
need_cmd curl
need_cmd python3
conf=$top_srcdir/contrib/examples/alertmanager.yml
d=$(make_tmpdir)

amtool check-config "$conf" >"$d/check.out" 2>&1 && pass "amtool check-config: $(grep -c '^ - ' "$d/check.out") sections" ||
  fail "amtool check-config refused it: $(cat "$d/check.out")"

# route ALERTNAME SEVERITY RECEIVER
route() {
  local got
  got=$(amtool config routes test --config.file="$conf" alertname="$1" severity="$2" instance=h1 diskprobe=pgdata device=sda 2>/dev/null)
  [ "$got" = "$3" ] && pass "route: $1 ($2) goes to $3" || fail "route: $1 ($2) goes to '$got', expected $3"
}
route DiskProbeHealthFailure critical pager
route DiskProbeStalled critical pager
route DiskProbeHealthWarning warning ticket
route DiskProbeDiskBusy warning ticket
route DiskProbeDeviceSaturated warning ticket
route DiskProbeLatencyHigh info ticket
route DiskProbeClassSlow critical pager

# ---- the inhibitions, with the real Alertmanager ---------------------------
alertmanager_start "$conf" "$d/alertmanager"
url=$AM_URL

python3 - "$d/alerts.json" <<'PY'
import json, sys
def alert(name, severity, **labels):
    labels.update(alertname=name, severity=severity)
    return {"labels": labels, "annotations": {"summary": name}}
json.dump([
    alert("DiskProbeHealthFailure", "critical", instance="h1", diskprobe="pgdata", device="sda"),
    alert("DiskProbeHealthWarning", "warning", instance="h1", diskprobe="pgdata", device="sda"),
    alert("DiskProbeDeviceSaturated", "warning", instance="h1", diskprobe="dev-sda", device="sda"),
    alert("DiskProbeDiskBusy", "warning", instance="h1", diskprobe="wal", device="sda"),
    alert("DiskProbeDiskBusy", "warning", instance="h1", diskprobe="scratch", device="sdb"),
    alert("DiskProbeHealthWarning", "warning", instance="h1", diskprobe="backup", device="sdb"),
    alert("DiskProbeDeviceSaturated", "warning", instance="h1", diskprobe="dev-sdb", device="sdb"),
    alert("DiskProbeMissing", "warning", scope="fleet"),
], open(sys.argv[1], "w"))
PY
curl -fs -X POST -H 'Content-Type: application/json' --data @"$d/alerts.json" "$url/api/v2/alerts" ||
  die "posting the alerts to $url/api/v2/alerts failed"
# "ALERTNAME DISKPROBE inhibited|active" per alert, once the inhibitor has
# seen the FAILURE (it reads the alerts asynchronously).
states() {
  curl -fs "$url/api/v2/alerts" | python3 -c '
import json, sys
for a in sorted(json.load(sys.stdin), key=lambda a: (a["labels"]["alertname"], a["labels"].get("diskprobe", ""))):
    print(a["labels"]["alertname"], a["labels"].get("diskprobe", "-"), "inhibited" if a["status"]["inhibitedBy"] else "active")'
}
wait_until 20 bash -c "$(declare -f states); url=$url; states | grep -q inhibited" || true
states >"$d/states"
sed 's/^/  /' "$d/states"
expect() { # expect ALERTNAME DISKPROBE STATE
  grep -qx "$1 $2 $3" "$d/states" && pass "$1 of $2: $3" || fail "$1 of $2: not $3 ($(grep "^$1 $2 " "$d/states" || echo missing))"
}
expect DiskProbeHealthFailure pgdata active
expect DiskProbeHealthWarning pgdata inhibited
expect DiskProbeDeviceSaturated dev-sda inhibited
expect DiskProbeDiskBusy wal inhibited
expect DiskProbeDiskBusy scratch active
expect DiskProbeHealthWarning backup active
expect DiskProbeDeviceSaturated dev-sdb active
expect DiskProbeMissing - active

# ---- a class slow as a whole: DiskProbeClassSlow -------------------------
# Class ssd-x's disks: h5's FAILURE by slowness, h7's WARNING and QD1
# latency, h8's SlowForModel, and h6 hung (a FAILURE with cause="hard" and
# DiskProbeStalled); class ssd-y: h9's WARNING (backend array-7), h10's
# FAILURE (backend array-8); the fleet-wide DiskProbeMissing. Without a
# class alert all notify; with DiskProbeClassSlow for ssd-x and for
# backend array-7, the slowness alerts of ssd-x and h9's (array-7) are
# inhibited, h6's hang, h10's FAILURE and DiskProbeMissing are not.
alertmanager_start "$conf" "$d/alertmanager-class"
url=$AM_URL
python3 - "$d/class-disks.json" "$d/class-alerts.json" <<'PY'
import json, sys
def alert(name, severity, **labels):
    labels.update(alertname=name, severity=severity)
    return {"labels": labels, "annotations": {"summary": name}}
json.dump([
    alert("DiskProbeHealthFailure", "critical", instance="h5", diskprobe="data", device="sda", **{"class": "ssd-x"}),
    alert("DiskProbeHealthFailure", "critical", instance="h6", diskprobe="wal", device="sda", cause="hard", **{"class": "ssd-x"}),
    alert("DiskProbeStalled", "critical", instance="h6", diskprobe="wal", device="sda", **{"class": "ssd-x"}),
    alert("DiskProbeHealthWarning", "warning", instance="h7", diskprobe="data", device="sdb", **{"class": "ssd-x"}),
    alert("DiskProbeLatencyHigh", "info", instance="h7", diskprobe="data", type="randread-qd1", **{"class": "ssd-x"}),
    alert("DiskProbeSlowForModel", "warning", instance="h8", device="sda", **{"class": "ssd-x"}),
    alert("DiskProbeHealthWarning", "warning", instance="h9", diskprobe="data", device="sda", backend="array-7", **{"class": "ssd-y"}),
    alert("DiskProbeHealthFailure", "critical", instance="h10", diskprobe="data", device="sda", backend="array-8", **{"class": "ssd-y"}),
    alert("DiskProbeMissing", "warning", scope="fleet"),
], open(sys.argv[1], "w"))
json.dump([
    alert("DiskProbeClassSlow", "critical", scope="class", **{"class": "ssd-x"}),
    alert("DiskProbeClassSlow", "critical", scope="backend", backend="array-7"),
], open(sys.argv[2], "w"))
PY
# "ALERTNAME INSTANCE|CLASS|BACKEND[/cause] inhibited|active" per alert
class_states() {
  curl -fs "$url/api/v2/alerts" | python3 -c '
import json, sys
for a in sorted(json.load(sys.stdin), key=lambda a: sorted(a["labels"].items())):
    l = a["labels"]
    who = l.get("instance") or l.get("class") or l.get("backend") or "-"
    print(l["alertname"], who + ("/" + l["cause"] if "cause" in l else ""), "inhibited" if a["status"]["inhibitedBy"] else "active")'
}
curl -fs -X POST -H 'Content-Type: application/json' --data @"$d/class-disks.json" "$url/api/v2/alerts" ||
  die "posting the alerts to $url/api/v2/alerts failed"
sleep 2
class_states >"$d/class-before"
sed 's/^/  no class alert: /' "$d/class-before"
n=$(grep -c ' active$' "$d/class-before")
[ "$n" = 9 ] && pass "no class alert: all 9 per-disk and fleet alerts notify" ||
  fail "no class alert: $n of 9 alerts active"
curl -fs -X POST -H 'Content-Type: application/json' --data @"$d/class-alerts.json" "$url/api/v2/alerts" ||
  die "posting the class alerts failed"
wait_until 20 bash -c "$(declare -f class_states); url=$url; class_states | grep -q inhibited" || true
class_states >"$d/class-after"
sed 's/^/  class alert: /' "$d/class-after"
cexpect() { # cexpect ALERTNAME WHO STATE
  grep -qx "$1 $2 $3" "$d/class-after" && pass "class alert firing: $1 of $2: $3" ||
    fail "class alert firing: $1 of $2: not $3 ($(grep "^$1 $2 " "$d/class-after" || echo missing))"
}
cexpect DiskProbeClassSlow ssd-x active
cexpect DiskProbeClassSlow array-7 active
cexpect DiskProbeHealthFailure h5 inhibited
cexpect DiskProbeHealthWarning h7 inhibited
cexpect DiskProbeLatencyHigh h7 inhibited
cexpect DiskProbeSlowForModel h8 inhibited
cexpect DiskProbeHealthWarning h9 inhibited
cexpect DiskProbeHealthFailure h6/hard active
cexpect DiskProbeStalled h6 active
cexpect DiskProbeHealthFailure h10 active
cexpect DiskProbeMissing - active

# ---- the pager: a failure and its resolution, nothing else ----------------
webhook_start "$d/hook"
sed "s|http://CHANGE-ME-pager-bridge.example.net/diskprobe|$HOOK_URL/pager|" "$conf" >"$d/pager.yml"
grep -q "$HOOK_URL/pager" "$d/pager.yml" || die "the pager webhook URL was not found in $conf"
alertmanager_start "$d/pager.yml" "$d/alertmanager-pager"
url=$AM_URL
# post LABELS_JSON [ENDS_AT]: one alert, as Prometheus sends it
post() {
  curl -fs -X POST -H 'Content-Type: application/json' \
    --data "[{\"labels\": $1${2:+, \"endsAt\": \"$2\"}}]" "$url/api/v2/alerts" || fail "posting $1 failed"
}
fail_l='{"alertname": "DiskProbeHealthFailure", "severity": "critical", "instance": "h1", "diskprobe": "pgdata", "device": "sda", "class": "ssd-y"}'
busy_l='{"alertname": "DiskProbeDeviceSaturated", "severity": "warning", "instance": "h2", "diskprobe": "dev-sdb", "device": "sdb"}'
# class ssd-x slow as a whole: its one page, and h5's FAILURE (ssd-x)
# held back, where h1's (ssd-y) pages
class_l='{"alertname": "DiskProbeClassSlow", "severity": "critical", "scope": "class", "class": "ssd-x"}'
slow_l='{"alertname": "DiskProbeHealthFailure", "severity": "critical", "instance": "h5", "diskprobe": "slowdata", "device": "sda", "class": "ssd-x"}'
post "$fail_l"
post "$busy_l"
post "$class_l"
post "$slow_l"
# group_wait 30s, then the page
wait_until 90 grep -q "pager firing DiskProbeHealthFailure" "$d/hook.log" &&
  pass "the FAILURE reached the pager" || fail "the FAILURE did not reach the pager in 90 s"
t0=$(date +%s)
post "$fail_l" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
if wait_until 150 grep -q "pager resolved DiskProbeHealthFailure" "$d/hook.log"; then
  t1=$(awk '$3 == "resolved" { print $1; exit }' "$d/hook.log")
  num_cmp $((t1 - t0)) '<' 120 && pass "resolved reached the pager $((t1 - t0)) s after the FAILURE ended (group_interval 1m)" ||
    fail "resolved took $((t1 - t0)) s"
else
  fail "no resolved at the pager within 150 s"
fi
grep -q "DiskProbeDeviceSaturated" "$d/hook.log" && fail "the busy disk's warning reached the pager" ||
  pass "the busy disk's warning did not page"
n=$(grep -c "pager firing DiskProbeClassSlow" "$d/hook.log")
[ "$n" = 1 ] && pass "the slow class paged once" || fail "the slow class paged $n times"
grep -q "pager firing DiskProbeHealthFailure slowdata" "$d/hook.log" &&
  fail "a FAILURE of the slow class reached the pager (inhibition by class failed)" ||
  pass "the slow class's disk FAILURE did not page (inhibited), another class's did"
sed 's/^/  webhook: /' "$d/hook.log"

finish alertmanager_example 'cat "$d/alertmanager.log" "$d/alertmanager-pager.log"'
