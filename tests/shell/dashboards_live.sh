#!/bin/bash
# dashboards_live.sh - every query of the Grafana dashboards against a real
# Prometheus holding real diskprobe series: collectd with the built plugin
# (two targets on two loop devices, the device view of those and of a third
# loop device, so that fail-slow has a peer group of three), write_prometheus,
# and Prometheus scraping it every second with the shipped scrape settings
# (honor_labels).
#
# dashboards.sh checks the dashboards' structure and parses their queries;
# this one asks whether they find anything. The dashboards' query variables
# are resolved as Grafana would (label_values through the series API: each
# must offer at least one value; the first is taken), the time variables
# get sample values, and every panel query is evaluated at once: it must be
# valid and return series. Only panels that say what their emptiness means
# (a noValue text: "No target is stalled"...) may come back empty, and are
# listed. Skips without root, loop devices, collectd, curl or prometheus.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd
need_cmd curl
need_cmd prometheus prometheus
WP_PORT=$((21000 + RANDOM % 9000))
PROM_PORT=$((WP_PORT + 1))
IVL=1

dir=$(make_tmpdir)
dev1=$(make_loop 64 "$dir") || exit
dev2=$(make_loop 64 "$dir") || exit
dev3=$(make_loop 64 "$dir") || exit
d="$dir/collectd"
mkdir -p "$d"
collectd_conf "$d" $IVL <<CONF
  DutyCycle 100
  Splay false
  ArmRounds 3
  FailSlowWindow 3
  StateDir "$d"
  DeviceStats "${dev3##*/}"
  <Target "data">
    Device "$dev1"
    ProbeInterval 2
  </Target>
  <Target "logs">
    Device "$dev2"
    ProbeInterval 2
  </Target>
CONF
write_prometheus_conf "$WP_PORT" >>"$d/collectd.conf"
prometheus_start "$dir/prom" "$PROM_PORT" "$WP_PORT"
collectd_start "$d"

api="http://127.0.0.1:$PROM_PORT/api/v1"
has() { # has PROMQL: the instant query returns a series
  curl -s --get "$api/query" --data-urlencode "query=$1" | grep -q '"result":\[{'
}
# armed targets (health and slowdown series), and the device view of all three
ready() {
  has 'collectd_diskprobe_armed{type="armed"} == 1' &&
    has "collectd_diskprobe_failslow{diskprobe=\"dev-${dev3##*/}\"}" &&
    [ "$(curl -s --get "$api/query" --data-urlencode 'query=count(collectd_diskprobe_armed == 1)' |
      sed -n 's/.*"value":\[[^,]*,"\([0-9]*\)".*/\1/p')" = 2 ]
}
wait_until 90 ready || die "Prometheus did not get armed targets and the device view within 90 s: $(tail -5 "$d/collectd.log")"
sleep 5 # a few scrapes of everything
pass "Prometheus holds diskprobe's series ($(curl -s --get "$api/query" --data-urlencode 'query=count({__name__=~"collectd_diskprobe_.*"})' | sed -n 's/.*"value":\[[^,]*,"\([0-9]*\)".*/\1/p') series)"

dashboard_queries "$api" "$dir/py.log"
collectd_stop
finish dashboards_live
