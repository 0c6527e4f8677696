#!/bin/bash
# collectd_pipelines.sh - the shipped example configs, run for real.
#
# Each contrib/examples/*.conf (a drop-in after a head like the package's
# diskprobe.conf and one target) is rewritten only where it must be (plugin
# dir, paths under a temp dir, a loop device for /dev/sdb, a free port
# for write_prometheus) and then:
#   - every example passes `collectd -T` (config, init, one read);
#   - write_prometheus: /metrics lists diskprobe's metrics under the names
#     the README and the dashboards use, and no name the metric table
#     (`diskprobe metrics --prometheus`) does not derive;
#   - threshold: a p99 threshold set below any real latency produces a
#     FAILURE notification for probe_latency.
# The fleet drop-ins (fleet-*.conf: encrypted network, host names) are
# run by fleet_secure.sh.
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd
need_cmd curl
d=$(make_tmpdir)
collectd_dir "$d"
dev=$(make_loop 64 "$d") || exit
ex="$top_srcdir/contrib/examples"
port=$((20000 + RANDOM % 20000))

# A drop-in example (no Hostname line: prometheus.conf, logfile.conf) runs
# after what the package's diskprobe.conf and a targets drop-in give it:
# global options, both TypesDB lines, the plugin, one target.
dropin_head() {
  cat <<'CONF'
Hostname "db1"
FQDNLookup false
PluginDir "/usr/lib/collectd"
TypesDB "/usr/share/collectd/types.db"
TypesDB "/usr/share/collectd/diskprobe.types.db"
Interval 10
LoadPlugin diskprobe
<Plugin diskprobe>
  <Target "data">
    Path "/var/lib/diskprobe"
    ProbeInterval 60
  </Target>
  DeviceStats "sd*" "nvme*n1"
</Plugin>
CONF
}

rewrite() { # rewrite EXAMPLE NAME: writes $d/NAME/collectd.conf
  local w="$d/$2"
  mkdir -p "$w/var" "$w/rrd"
  { grep -q '^Hostname ' "$ex/$1" || dropin_head; cat "$ex/$1"; } | sed -e "s|PluginDir \"/usr/lib/collectd\"|PluginDir \"$d/plugins\"|" \
    -e "s|TypesDB \"/usr/share/collectd/diskprobe.types.db\"|TypesDB \"$top_srcdir/plugin/diskprobe.types.db\"|" \
    -e "s|/var/lib/collectd/rrd|$w/rrd|; s|/var/lib/|$w/var/|; s|/var/log/collectd.log|$w/collectd.log|" \
    -e "s|Device \"/dev/sdb\"|Device \"$dev\"|; /^ *FileSize /d" \
    -e "s|^\( *\)Path \"\(.*\)\"\$|&\n\1FileSize \"16M\"|" \
    -e "s|ProbeInterval [0-9]*|ProbeInterval 2|; s|Interval 10|Interval 1|" \
    -e "s|Port \"9103\"|Port \"$((port + 1))\"|" \
    -e "s|^LoadPlugin syslog|LoadPlugin logfile|; s|^<Plugin syslog>|<Plugin logfile>\n  File \"$w/collectd.log\"|" \
    -e "s|^  NotifyLevel OKAY||" \
    -e "/^  \(Splay\|DutyCycle\|StateDir\) /d" \
    -e "s|<Plugin diskprobe>|<Plugin diskprobe>\n  Splay false\n  DutyCycle 100\n  StateDir \"$w/var\"|" \
    >"$w/collectd.conf"
  grep -q "LoadPlugin logfile" "$w/collectd.conf" || collectd_logfile "$w/collectd.log" >>"$w/collectd.conf"
  mkdir -p "$w/var/postgresql" "$w/var/collectd"
}

for f in "$ex"/*.conf; do
  n=$(basename "$f" .conf)
  # Drop-in snippets, checked by notify_examples.sh (notify_email needs
  # libesmtp6), fleet_secure.sh and smart_example.sh (smart.so needs
  # libatasmart4).
  case $n in health-notify-* | fleet-* | smart) continue ;; esac
  rewrite "$n.conf" "$n"
  if collectd_check "$d/$n"; then
    pass "example $n.conf: collectd -T accepts it"
  else
    fail "example $n.conf refused: $(cat "$d/$n/check.out") $(grep -i error "$d/$n/collectd.log")"
  fi
done

# write_prometheus: names as documented.
w="$d/prometheus"
# DeviceStats: also a device no target uses (the loop device).
sed -i "s|DeviceStats \"sd\*\" \"nvme\*n1\"|DeviceStats \"sd*\" \"nvme*n1\" \"${dev##*/}\"|" "$w/collectd.conf"
grep -q "DeviceStats.*${dev##*/}" "$w/collectd.conf" || fail "could not add the loop device to DeviceStats"
# A target named like the disk, with a probe named like a device-view value:
# the namespaces (target names may not begin with dev-) must keep the two
# series apart.
sed -i "s|^  DeviceStats|  <Target \"${dev##*/}\">\n    Device \"$dev\"\n    ProbeInterval 2\n    <Probe \"read\">\n      Pattern randread\n      QueueDepth 4\n      Duration 0.2\n    </Probe>\n  </Target>\n  DeviceStats|" "$w/collectd.conf"
grep -q "Probe \"read\"" "$w/collectd.conf" || fail "could not add the colliding target"
collectd_start "$w"
scraped() {
  curl -s "http://127.0.0.1:$((port + 1))/metrics" >"$w/metrics" 2>/dev/null &&
    grep -q '^collectd_diskprobe_probe_latency_p99{diskprobe="data"' "$w/metrics"
}
wait_until 15 scraped
for m in collectd_diskprobe_operations_per_second collectd_diskprobe_bytes_per_second \
  collectd_diskprobe_probe_latency_p50 collectd_diskprobe_probe_latency_p99 collectd_diskprobe_probe_latency_p999 \
  collectd_diskprobe_queue_length collectd_diskprobe_probe_errors_io_total collectd_diskprobe_probe_errors_timeout_total \
  collectd_diskprobe_duration_seconds collectd_diskprobe_stalled collectd_diskprobe_saturated \
  collectd_diskprobe_latency collectd_diskprobe_percent collectd_diskprobe_pending_operations \
  collectd_diskprobe_target_device; do
  grep -q "^$m{" "$w/metrics" && pass "prometheus: $m" || fail "prometheus: $m missing from /metrics"
done
# write_prometheus' names are those the metric table derives (src/metrics.c)
"$DISKPROBE" metrics --prometheus | cut -d' ' -f1 >"$w/table-names"
unnamed=$(grep -o '^collectd_diskprobe_[A-Za-z0-9_]*' "$w/metrics" | sort -u | grep -vxFf "$w/table-names")
[ -s "$w/table-names" ] && [ -z "$unnamed" ] &&
  pass "prometheus: every collectd_diskprobe_* name is one the metric table gives" ||
  fail "prometheus: names not in \`diskprobe metrics --prometheus\`: ${unnamed:-(it printed none)}"
grep -q '^collectd_diskprobe_probe_latency_p99{diskprobe="data",type="randread-qd1"' "$w/metrics" ||
  grep -q 'collectd_diskprobe_probe_latency_p99{.*diskprobe="data".*type="randread-qd1"' "$w/metrics" &&
  pass "prometheus labels: diskprobe=\"data\", type=\"randread-qd1\"" || fail "prometheus labels not as documented: $(grep '^collectd.*p99' "$w/metrics" | head -2)"
grep -q "^collectd_diskprobe_percent{diskprobe=\"dev-${dev##*/}\",type=\"utilization\"" "$w/metrics" &&
  pass "DeviceStats: ${dev##*/} has its device view as dev-${dev##*/}" || fail "DeviceStats: no device view for ${dev##*/}"
# Target "loopN" probe "read" and the device view's read IOPS of loopN: two series.
iops_of() { sed -n "s/^collectd_diskprobe_operations_per_second{diskprobe=\"$1\",type=\"read\"[^}]*} \([^ ]*\).*/\1/p" "$w/metrics"; }
both_series() { scraped && [ -n "$(iops_of "${dev##*/}")" ] && [ -n "$(iops_of "dev-${dev##*/}")" ]; }
wait_until 10 both_series
t_iops=$(iops_of "${dev##*/}") d_iops=$(iops_of "dev-${dev##*/}")
[ -n "$t_iops" ] && [ -n "$d_iops" ] &&
  pass "namespaces: target ${dev##*/}/read ($t_iops IOPS) and device dev-${dev##*/}/read ($d_iops) are two series" ||
  fail "namespaces: target '${dev##*/}' read='$t_iops', device 'dev-${dev##*/}' read='$d_iops'"
collectd_stop
# The health baselines go where the test said, not into the host's /var/lib/collectd.
[ -s "$w/var/diskprobe-health.state" ] && pass "health state written to the test's StateDir" ||
  fail "no health state in $w/var (written elsewhere?)"

# threshold: a p99 limit nothing can meet.
w="$d/thresholds"
sed -i 's|FailureMax 0.100|FailureMax 0.0000001|; s|Hits 2|Hits 1|' "$w/collectd.conf"
collectd_start "$w"
wait_log "$w/collectd.log" 15 "Notification: severity = FAILURE.*type = probe_latency"
collectd_stop
grep -q "Notification: severity = FAILURE.*plugin = diskprobe.*type = probe_latency" "$w/collectd.log" &&
  pass "threshold: $(notif_msg "$w/collectd.log" 'severity = FAILURE.*probe_latency')" ||
  fail "threshold plugin sent no FAILURE for probe_latency"

finish collectd_pipelines
