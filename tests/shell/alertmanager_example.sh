#!/bin/bash
# tests/shell/alertmanager_example.sh - contrib/examples/alertmanager.yml:
#
#  * amtool check-config accepts it;
#  * amtool's route test sends critical to the pager, warning and info to
#    the ticket receiver (diskprobe's alert names and labels);
#  * the real Alertmanager (Debian's prometheus-alertmanager, on loopback)
#    with the file, given the alerts of a host whose target pgdata on sda
#    FAILS while sda is also saturated, and whose target backup on sdb is
#    degraded: pgdata's WARNING and sda's saturation are inhibited by the
#    FAILURE, backup's WARNING, sdb's saturation and the fleet-wide
#    DiskProbeMissing (no device, no target) are not.
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
route DiskProbeDeviceSaturated warning ticket
route DiskProbeLatencyHigh info ticket

# ---- the inhibitions, with the real Alertmanager ---------------------------
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port"
prometheus-alertmanager --config.file="$conf" --storage.path="$d/data" --web.listen-address="127.0.0.1:$port" \
  --cluster.listen-address= --log.level=warn >"$d/alertmanager.log" 2>&1 &
register_pid $!
wait_until 30 curl -fs "$url/-/ready" -o /dev/null || { cat "$d/alertmanager.log"; die "Alertmanager not ready on $url"; }

python3 - "$d/alerts.json" <<'PY'
import json, sys
def alert(name, severity, **labels):
    labels.update(alertname=name, severity=severity)
    return {"labels": labels, "annotations": {"summary": name}}
json.dump([
    alert("DiskProbeHealthFailure", "critical", instance="h1", diskprobe="pgdata", device="sda"),
    alert("DiskProbeHealthWarning", "warning", instance="h1", diskprobe="pgdata", device="sda"),
    alert("DiskProbeDeviceSaturated", "warning", instance="h1", diskprobe="dev-sda", device="sda"),
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
expect DiskProbeHealthWarning backup active
expect DiskProbeDeviceSaturated dev-sdb active
expect DiskProbeMissing - active

finish alertmanager_example 'cat "$d/alertmanager.log"'
