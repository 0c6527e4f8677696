#!/bin/bash
# collectd_pipelines.sh - the shipped example configs, run for real.
#
# Each contrib/examples/*.conf is rewritten only where it must be (plugin
# dir, paths under a temp dir, a loop device for /dev/sdb, loopback and a
# free port for the network) and then:
#   - every example passes `collectd -T` (config, init, one read);
#   - write_prometheus: /metrics lists diskprobe's metrics under the names
#     the README and the dashboards use;
#   - threshold: a p99 threshold set below any real latency produces a
#     FAILURE notification for probe_latency;
#   - network: a fleet member's values arrive at the central collectd on
#     127.0.0.1 and are stored there as RRD files under the member's name.
set -u
. "$(dirname "$0")/lib.sh"
need_root
need_loop
need_collectd
command -v curl >/dev/null || skip "curl not installed"
FAILED=0
d=$(make_tmpdir)
collectd_dir "$d"
dev=$(make_loop 64 "$d")
ex="$top_srcdir/contrib/examples"
port=$((20000 + RANDOM % 20000))

rewrite() { # rewrite EXAMPLE NAME: writes $d/NAME/collectd.conf
  local w="$d/$2"
  mkdir -p "$w/var" "$w/rrd"
  sed -e "s|PluginDir \"/usr/lib/collectd\"|PluginDir \"$d/plugins\"|" \
    -e "s|TypesDB \"/usr/share/collectd/diskprobe.types.db\"|TypesDB \"$top_srcdir/plugin/diskprobe.types.db\"|" \
    -e "s|/var/lib/collectd/rrd|$w/rrd|; s|/var/lib/|$w/var/|; s|/var/log/collectd.log|$w/collectd.log|" \
    -e "s|Device \"/dev/sdb\"|Device \"$dev\"|; s|FileSize \"[0-9]*[GM]\"|FileSize \"16M\"|" \
    -e "s|ProbeInterval [0-9]*|ProbeInterval 2|; s|Interval 10|Interval 1|" \
    -e "s|\"collector.example.net\" \"25826\"|\"127.0.0.1\" \"$port\"|; s|Listen \"0.0.0.0\" \"25826\"|Listen \"127.0.0.1\" \"$port\"|" \
    -e "s|Port \"9103\"|Port \"$((port + 1))\"|" \
    -e "s|^LoadPlugin syslog|LoadPlugin logfile|; s|^<Plugin syslog>|<Plugin logfile>\n  File \"$w/collectd.log\"|" \
    -e "s|^  NotifyLevel OKAY||" \
    -e "s|<Plugin diskprobe>|<Plugin diskprobe>\n  Splay false\n  DutyCycle 100|" \
    "$ex/$1" >"$w/collectd.conf"
  grep -q "LoadPlugin logfile" "$w/collectd.conf" ||
    printf 'LoadPlugin logfile\n<Plugin logfile>\n  File "%s/collectd.log"\n  LogLevel info\n</Plugin>\n' "$w" >>"$w/collectd.conf"
  mkdir -p "$w/var/postgresql" "$w/var/collectd"
}

for f in "$ex"/*.conf; do
  n=$(basename "$f" .conf)
  rewrite "$n.conf" "$n"
  if collectd -T -C "$d/$n/collectd.conf" >"$d/$n/t.out" 2>&1; then
    pass "example $n.conf: collectd -T accepts it"
  else
    fail "example $n.conf refused: $(cat "$d/$n/t.out") $(grep -i error "$d/$n/collectd.log")"
  fi
done

# write_prometheus: names as documented.
w="$d/prometheus"
# DeviceStats: also a device no target uses (the loop device).
sed -i "s|DeviceStats \"sd\*\" \"nvme\*n1\"|DeviceStats \"sd*\" \"nvme*n1\" \"${dev##*/}\"|" "$w/collectd.conf"
grep -q "DeviceStats.*${dev##*/}" "$w/collectd.conf" || fail "could not add the loop device to DeviceStats"
collectd -f -C "$w/collectd.conf" >"$w/out" 2>&1 &
pid=$!
_pids+=("$pid")
for ((i = 0; i < 30; i++)); do
  curl -s "http://127.0.0.1:$((port + 1))/metrics" >"$w/metrics" 2>/dev/null &&
    grep -q '^collectd_diskprobe_probe_latency_p99{' "$w/metrics" && break
  sleep 0.5
done
for m in collectd_diskprobe_operations_per_second collectd_diskprobe_bytes_per_second \
  collectd_diskprobe_probe_latency_p50 collectd_diskprobe_probe_latency_p99 collectd_diskprobe_probe_latency_p999 \
  collectd_diskprobe_queue_length collectd_diskprobe_probe_errors_io_total collectd_diskprobe_probe_errors_timeout_total \
  collectd_diskprobe_duration_seconds collectd_diskprobe_stalled collectd_diskprobe_saturated \
  collectd_diskprobe_latency collectd_diskprobe_percent collectd_diskprobe_pending_operations \
  collectd_diskprobe_target_device; do
  grep -q "^$m{" "$w/metrics" && pass "prometheus: $m" || fail "prometheus: $m missing from /metrics"
done
grep -q '^collectd_diskprobe_probe_latency_p99{diskprobe="data",type="randread-qd1"' "$w/metrics" ||
  grep -q 'collectd_diskprobe_probe_latency_p99{.*diskprobe="data".*type="randread-qd1"' "$w/metrics" &&
  pass "prometheus labels: diskprobe=\"data\", type=\"randread-qd1\"" || fail "prometheus labels not as documented: $(grep p99 "$w/metrics" | head -2)"
grep -q "^collectd_diskprobe_percent{diskprobe=\"${dev##*/}\",type=\"utilization\"" "$w/metrics" &&
  pass "DeviceStats: ${dev##*/} (no target on it) has its device view" || fail "DeviceStats: no device view for ${dev##*/}"
kill -TERM "$pid"
wait "$pid"

# threshold: a p99 limit nothing can meet.
w="$d/thresholds"
sed -i 's|FailureMax 0.100|FailureMax 0.0000001|; s|Hits 2|Hits 1|' "$w/collectd.conf"
collectd -f -C "$w/collectd.conf" >"$w/out" 2>&1 &
pid=$!
_pids+=("$pid")
for ((i = 0; i < 30; i++)); do
  grep -q "Notification: severity = FAILURE.*type = probe_latency" "$w/collectd.log" 2>/dev/null && break
  sleep 0.5
done
kill -TERM "$pid"
wait "$pid"
grep -q "Notification: severity = FAILURE.*plugin = diskprobe.*type = probe_latency" "$w/collectd.log" &&
  pass "threshold: $(grep -m1 'severity = FAILURE.*probe_latency' "$w/collectd.log" | sed 's/.*message = //')" ||
  fail "threshold plugin sent no FAILURE for probe_latency"

# network: member -> central collectd on loopback.
srv="$d/fleet-server" cli="$d/fleet-client"
sed -i "/write_prometheus/,/^<\/Plugin>/d" "$srv/collectd.conf"
collectd -f -C "$srv/collectd.conf" >"$srv/out" 2>&1 &
spid=$!
_pids+=("$spid")
sleep 1
collectd -f -C "$cli/collectd.conf" >"$cli/out" 2>&1 &
cpid=$!
_pids+=("$cpid")
f="$srv/rrd/web17/diskprobe-root/probe_latency-randread-qd1.rrd"
for ((i = 0; i < 40; i++)); do [ -f "$f" ] && break; sleep 0.5; done
sleep 3
kill -TERM "$cpid" "$spid"
wait "$cpid" "$spid"
if [ -f "$f" ]; then
  p99=$(rrd_last "$f" p99)
  python3 -c "import math,sys; v=float('$p99'); sys.exit(0 if math.isfinite(v) and v > 0 else 1)" &&
    pass "network: web17's p99 ($p99 s) stored by the central collectd" || fail "network: p99 at the server is $p99"
else
  fail "network: nothing from web17 arrived at the server ($(ls -R "$srv/rrd" | head -5))"
fi

[ "$FAILED" = 0 ] && echo "collectd_pipelines: all checks passed" || exit 1
