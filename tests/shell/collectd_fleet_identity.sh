#!/bin/bash
# collectd_fleet_identity.sh - the disk identity series and the fleet
# reference's join, end to end.
#
# The real collectd runs the plugin on a loop device with `Class` set,
# with write_prometheus on a free loopback port and rrdtool. Checked:
#  (a) the plugin logs the disk's identity once (an INFO line), with the
#      class and where it came from;
#  (b) a scrape (curl) of write_prometheus has
#      collectd_diskprobe_disk_info{diskprobe="dev-loopN",type="<Class>"}
#      with the loop device's capacity in bytes as the value;
#  (c) the RRD tree holds diskprobe-dev-loopN/disk_info-<Class>.rrd (the
#      name a central server's tree has);
#  (d) with Prometheus installed: a real Prometheus scraping it with the
#      shipped scrape job (its metric_relabel_configs) and the shipped
#      fleet_rules.yml has device= and class= on disk_info, device= on
#      target_device, and the recorded reference joins the probe series to
#      the class: the target's disk and class, a class of one disk, and the
#      disk at its own class median (slowdown 1).
# Skips without root, loop devices, collectd or curl; (d) skips without
# prometheus.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd
need_cmd curl
CLASS=lab-ssd_1
WP_PORT=$((21000 + RANDOM % 9000))
PROM_PORT=$((WP_PORT + 1))

d=$(make_tmpdir)
dev=$(make_loop 64 "$d") || exit
disk=${dev##*/}
collectd_conf "$d" 1 <<CONF
  DutyCycle 100
  Splay false
  StateDir "$d"
  <Target "data">
    Device "$dev"
    Class "$CLASS"
    ProbeInterval 2
  </Target>
CONF
write_prometheus_conf "$WP_PORT" >>"$d/collectd.conf"
log="$d/collectd.log"
have_prom=
command -v prometheus >/dev/null && have_prom=1
[ -n "$have_prom" ] && prometheus_start "$d/prom" "$PROM_PORT" "$WP_PORT"
collectd_start "$d"

# (a) the identity line
wait_log "$log" 30 "disk $disk: class" || die "no identity line for $disk in $log: $(tail -5 "$log")"
line=$(log_first "$log" "disk $disk: class")
if [[ $line == "diskprobe plugin: disk $disk: class \"$CLASS\" (its targets' Class): media virtual, 67108864 bytes"* ]]; then
  pass "identity logged: ${line#*diskprobe plugin: }"
else
  fail "identity line: expected diskprobe plugin: disk $disk: class \"$CLASS\" (its targets' Class): media virtual, 67108864 bytes, got: $line"
fi
n=$(grep -c "disk $disk: class" "$log")
[ "$n" = 1 ] && pass "said once" || fail "identity said $n times, expected once"

# (b) the series write_prometheus exports
scrape() { curl -s "http://127.0.0.1:$WP_PORT/metrics" >"$d/metrics.txt" && grep -q "^collectd_diskprobe_disk_info{diskprobe=\"dev-$disk\"" "$d/metrics.txt"; }
wait_until 30 scrape || die "no collectd_diskprobe_disk_info on write_prometheus's page: $(head -c 400 "$d/metrics.txt")"
# the target's disk's line (the disk under its loop device's backing file
# is in the device view too, with its own line)
got=$(grep '^collectd_diskprobe_disk_info{' "$d/metrics.txt" | grep -F "diskprobe=\"dev-$disk\"")
want_labels=("diskprobe=\"dev-$disk\"" "type=\"$CLASS\"" "instance=\"$COLLECTD_HOST\"")
ok=1
for l in "${want_labels[@]}"; do [[ $got == *"$l"* ]] || ok=; done
value=$(awk '{ print $2 }' <<<"$got")
if [ -n "$ok" ] && [ "$(wc -l <<<"$got")" = 1 ] && num_cmp "$value" == 67108864; then
  pass "write_prometheus: $got"
else
  fail "expected one collectd_diskprobe_disk_info{${want_labels[*]}} 67108864, got: $got"
fi

# (c) the RRD file a central tree would hold
rrd="$d/rrd/$COLLECTD_HOST/diskprobe-dev-$disk/disk_info-$CLASS.rrd"
if wait_until 20 rrd_last "$rrd" >/dev/null && num_cmp "$(rrd_last "$rrd")" == 67108864; then
  pass "RRD: ${rrd#"$d/rrd/"} holds $(rrd_last "$rrd")"
else
  fail "no $rrd with 67108864 (have: $(ls "$d/rrd/$COLLECTD_HOST" 2>&1 | tr '\n' ' '))"
fi

# (d) through a real Prometheus with the shipped relabelling and rules
if [ -z "$have_prom" ]; then
  collectd_stop
  skip "prometheus not installed (Debian: prometheus): the relabelling and fleet rules were not run live"
fi
api="http://127.0.0.1:$PROM_PORT/api/v1"
query() { curl -s --get "$api/query" --data-urlencode "query=$1"; }
value_of() { query "$1" | sed -n 's/.*"value":\[[^,]*,"\([^"]*\)".*/\1/p'; }
has() { query "$1" | grep -q '"result":\[{'; }
# the reference needs the three default probes' values, joined
wait_until 60 has "diskprobe:disk:class_slowdown:max{device=\"$disk\"}" ||
  die "no recorded class slowdown for $disk within 60 s: $(query '{__name__=~"diskprobe:.*"}' | head -c 600)"
check() { # check WHAT PROMQL WANT: the instant value of PROMQL is WANT
  local v
  v=$(value_of "$2")
  if [ -n "$v" ] && num_cmp "$v" == "$3"; then pass "$1: $2 = $v"; else fail "$1: $2 = '$v', expected $3"; fi
}
check "relabel: device and class on disk_info" "collectd_diskprobe_disk_info{device=\"$disk\",class=\"$CLASS\",diskprobe=\"dev-$disk\"}" 67108864
check "relabel: device on target_device" "collectd_diskprobe_target_device{device=\"$disk\",diskprobe=\"data\"}" 1
check "relabel: device on the device view" "count(collectd_diskprobe_operations_per_second{diskprobe=\"dev-$disk\",device=\"$disk\",type=\"read\"})" 1
check "the target's disk and class" "diskprobe:target_disk:info{diskprobe=\"data\",device=\"$disk\",class=\"$CLASS\"}" 1
check "a class of one disk" "diskprobe:class:disks{class=\"$CLASS\"}" 1
check "three figures" "count(diskprobe:disk:median1h{device=\"$disk\",class=\"$CLASS\"})" 3
check "the disk is its class's median" "diskprobe:disk:class_slowdown:max{device=\"$disk\",class=\"$CLASS\"}" 1
collectd_stop
finish collectd_fleet_identity
