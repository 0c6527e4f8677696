#!/bin/bash
# alert_pipeline_e2e.sh - the page, end to end, with real parts only:
# collectd with the built plugin -> write_prometheus -> Prometheus with the
# shipped dashboards/alerts.yml -> Alertmanager with the shipped
# contrib/examples/alertmanager.yml (only the receivers pointed at a webhook
# receiver on loopback: the pager's URL, and the ticket queue's mail made a
# webhook) -> the receiver. Three targets, three faults at once:
#
#   cap   a loop device whose deep-queue IOPS are throttled to a sixteenth
#         (a blkio read_iops limit): a capacity loss;
#   dead  a Path on a FUSE filesystem (faultyfs.py) whose daemon is stopped
#         (SIGSTOP): every request hangs, as on a dead NFS server or a hung
#         disk, and the target cannot probe. SIGCONT is its recovery (a
#         daemon killed and mounted again would be a new filesystem, which
#         the plugin rightly does not probe);
#   busy  a loop device saturated by fio: slow because busy.
#
# It prints each case's payload at the receiver, the seconds from the fault
# to the page (ticket for busy) and from the recovery to "resolved", and
# checks that cap and dead paged while busy went to the working-day
# receiver and never to the pager. Time bounds are generous (a shared,
# noisy machine): they catch a pipeline that does not deliver, not a slow
# one. Where a case does not resolve, the plugin's own verdict decides: a
# target the plugin judged OK again a minute ago or earlier must have been
# resolved at the receiver (a pipeline that does not deliver "resolved"
# fails); one the plugin judged degraded again after the recovery (a loop
# device's microsecond latencies on a busy shared machine) is said and not
# counted. ProbeInterval 2 s, ArmRounds 10, scrape and rule evaluation every
# second; Alertmanager waits 5 s (group_wait) and 10 s (group_interval)
# in place of the example's 30 s and 1 m (alertmanager_example.sh checks
# the file as shipped, those timings too). About 1.5 minutes.
#
# Needs root, loop devices, blkio throttling, /dev/fuse and python3-fusepy,
# collectd, fio, curl, prometheus, prometheus-alertmanager. Exit 0 pass, 1
# fail, 77 skip.
set -u
. "$(dirname "$0")/lib.sh"
need root loop blkio collectd
need_cmd fio fio
need_cmd curl curl
need_cmd prometheus prometheus
need_cmd prometheus-alertmanager prometheus-alertmanager
need_cmd amtool prometheus-alertmanager
[ -c /dev/fuse ] || skip "no /dev/fuse"
/usr/bin/python3 -c "import fusepy" 2>/dev/null || skip "python3-fusepy not installed"
IVL=2

dir=$(make_tmpdir)
dev_cap=$(make_loop 256 "$dir") || exit
dev_busy=$(make_loop 256 "$dir") || exit
cg=$(make_cgroup) || exit
faultyfs_mount "$dir"
fuse_pid=$FUSE_PID
at_exit 'kill -CONT "$fuse_pid" 2>/dev/null' # a stopped daemon would not end

# ---- the receivers, Alertmanager, Prometheus, collectd --------------------
webhook_start "$dir/hook"
python3 - "$top_srcdir/contrib/examples/alertmanager.yml" "$HOOK_URL" >"$dir/alertmanager.yml" <<'PY' ||
import json, sys, yaml
conf = yaml.safe_load(open(sys.argv[1]))
for r in conf["receivers"]:
    # the pager's URL, and the ticket queue (mail) as a webhook: what each
    # receiver is given is what it would send on
    r.pop("email_configs", None)
    r["webhook_configs"] = [{"url": f"{sys.argv[2]}/{r['name']}", "send_resolved": True}]
# shorter grouping delays than the example's; its routes and inhibitions stay
conf["route"].update(group_wait="5s", group_interval="10s")
print(json.dumps(conf, indent=2))
PY
  die "cannot adapt contrib/examples/alertmanager.yml"
amtool check-config "$dir/alertmanager.yml" >/dev/null 2>&1 || die "amtool refuses the adapted example: $(amtool check-config "$dir/alertmanager.yml" 2>&1)"
alertmanager_start "$dir/alertmanager.yml" "$dir/alertmanager"
WP_PORT=$(free_port)
PROM_PORT=$(free_port)
prometheus_start "$dir/prom" "$PROM_PORT" "$WP_PORT" "$AM_ADDR"

d="$dir/collectd"
mkdir -p "$d"
collectd_conf "$d" 1 <<CONF
  DutyCycle 100
  Splay false
  ArmRounds 10
  # fio's load reaches 90-98 % on an idle machine, less on a busy CI host
  SaturationThreshold 75
  <Target "cap">
    Device "$dev_cap"
    ProbeInterval $IVL
    <Probe "randread-qd1">
      Duration 0.3
    </Probe>
    <Probe "randread-qd32">
      QueueDepth 32
      Duration 0.3
    </Probe>
  </Target>
  <Target "dead">
    Path "$dir/mnt/dp"
    FileSize "8M"
    ProbeInterval $IVL
    Timeout 2
    <Probe "randread-qd1">
      BlockSize "4k"
      Duration 0.2
    </Probe>
  </Target>
  <Target "busy">
    Device "$dev_busy"
    ProbeInterval $IVL
    <Probe "randread-qd1">
      BlockSize "4k"
      Duration 0.3
    </Probe>
  </Target>
CONF
write_prometheus_conf "$WP_PORT" >>"$d/collectd.conf"
collectd_start "$d" "$cg"
log="$d/collectd.log"

metric() { # metric NAME TARGET TYPE: the value write_prometheus exports now
  curl -s "http://127.0.0.1:$WP_PORT/metrics" |
    awk -v n="$1" -v g="diskprobe=\"$2\"" -v t="type=\"$3\"" '$1 ~ "^" n "\\{" && index($1, g) && index($1, t) { print $2; exit }'
}
armed() { [ "$(metric collectd_diskprobe_armed cap armed)" = 1 ] && [ "$(metric collectd_diskprobe_armed busy armed)" = 1 ]; }
wait_until 120 armed || die "cap and busy not armed within 120 s: $(tail -5 "$log")"
pass "cap and busy armed"
grep -q "firing" "$dir/hook.log" && fail "a notification before any fault: $(cat "$dir/hook.log")" ||
  pass "nothing reached the receivers while healthy"

# ---- the faults ------------------------------------------------------------
qd1=$(metric collectd_diskprobe_probe_baseline_iops cap randread-qd1)
qd32=$(metric collectd_diskprobe_probe_baseline_iops cap randread-qd32)
now32=$(metric collectd_diskprobe_operations_per_second cap randread-qd32)
# A sixteenth of the deep queue's IOPS (its learned baseline, or its last
# round if lower: a loop device's QD32 varies 2-3x between rounds): a
# probe at 1/8 of its IOPS or less is a FAILURE (capacity collapse). QD1
# is untouched where it reaches less than that; on a loop device, whose
# QD32 gains only 4-10x over QD1, it loses some too (said below).
limit=$(num_calc "($now32 < $qd32 ? $now32 : $qd32) / 16" %.0f)
echo "cap: baseline QD1 $qd1 IOPS, QD32 $qd32 IOPS (last round $now32); read_iops limit $limit" \
  "($(num_cmp "$qd1" '<' "$limit" >/dev/null && echo "QD1 below it" || echo "QD1 throttled by it too: $(num_calc "$qd1 / $limit" %.1f)x"))"
t_fault=$(date +%s)
throttle "$cg" "$dev_cap" read_iops "$limit"
kill -STOP "$fuse_pid"
# four jobs at depth 64: on a CPU-starved shared machine two at depth 32
# left the probe only 2-4x slower, a verdict that came and went
fio --name=load --filename="$dev_busy" --rw=randread --bs=4k --iodepth=64 --numjobs=4 \
  --ioengine=libaio --direct=1 --time_based --runtime=600 >"$dir/fio.out" 2>&1 &
fio_pid=$!
register_pid "$fio_pid"

# arrived RECEIVER STATUS ALERTNAME TARGET: the receiver's first such line's time
arrived() { awk -v r="$1" -v s="$2" -v a="$3" -v t="$4" '$2 == r && $3 == s && $4 == a && $5 == t { print $1; exit }' "$dir/hook.log"; }
has() { [ -n "$(arrived "$@")" ]; }
all_paged() { has pager firing DiskProbeHealthFailure cap && has pager firing DiskProbeHealthFailure dead &&
  has ticket firing DiskProbeDiskBusy busy; }
wait_until 200 all_paged || true
grep 'type = health' "$log" | sed 's/.*plugin_instance = \([^,]*\).*message = /  plugin: \1: /'
# payload RECEIVER STATUS TARGET: the first payload of that receiver and
# status with an alert of TARGET, shortened to what the person reads
payload() {
  python3 - "$dir/hook.json" "$@" <<'PY'
import json, sys
path, receiver, status, target = sys.argv[1:]
for line in open(path):
    p = json.loads(line)["payload"]
    if p["receiver"] != receiver or p["status"] != status:
        continue
    for a in p["alerts"]:
        if a["labels"].get("diskprobe") == target:
            print(json.dumps({"receiver": p["receiver"], "status": p["status"], "groupLabels": p["groupLabels"],
                              "labels": a["labels"], "summary": a["annotations"].get("summary"),
                              "runbook_url": a["annotations"].get("runbook_url")}, indent=1))
            sys.exit(0)
sys.exit(1)
PY
}
# arrival STATUS RECEIVER ALERTNAME TARGET WHAT SINCE: the first such
# notification, seconds since SINCE (the fault or the recovery; at most
# 200 s), and for a firing one its payload. A missing "resolved" fails if
# the plugin's last verdict on TARGET is an OKAY a minute old or older.
arrival() {
  local t last
  t=$(arrived "$2" "$1" "$3" "$4")
  if [ -n "$t" ]; then
    pass "$5: $1 $3 reached the $2 $((t - $6)) s after the $([ "$1" = firing ] && echo fault || echo recovery)"
    num_cmp $((t - $6)) '<' 200 || fail "$5: took $((t - $6)) s"
    [ "$1" = resolved ] || payload "$2" "$1" "$4" | sed 's/^/    /'
    return
  fi
  last=$(grep "plugin_instance = $4, type = health" "$log" | tail -1)
  if [ "$1" = resolved ] && ! grep -q "severity = OKAY" <<<"$last"; then
    echo "NOT COUNTED: $5: no $1 $3 at the $2 within 200 s; the plugin judged it degraded again after the recovery:"
    sed 's/.*message = /  /' <<<"$last"
  elif [ "$1" = resolved ] && [ $(($(date +%s) - $(date -d "$(sed 's/^\[\([^]]*\)\].*/\1/' <<<"$last")" +%s))) -lt 60 ]; then
    echo "NOT COUNTED: $5: no $1 $3 at the $2 yet; the plugin's OKAY is less than a minute old"
  else
    fail "$5: no $1 $3 at the $2 within 200 s: $(grep " $4$" "$dir/hook.log")"
  fi
}
arrival firing pager DiskProbeHealthFailure cap "capacity loss (cap)" "$t_fault"
arrival firing pager DiskProbeHealthFailure dead "dead target (dead)" "$t_fault"
arrival firing ticket DiskProbeDiskBusy busy "busy disk (busy)" "$t_fault"
grep -E '^[0-9]+ pager .* busy$' "$dir/hook.log" && fail "the busy disk paged" ||
  pass "the busy disk did not page (working-day receiver only)"

# ---- the recovery ------------------------------------------------------------
t_rec=$(date +%s)
unthrottle "$cg" "$dev_cap" read_iops
kill "$fio_pid"
wait "$fio_pid" 2>/dev/null
kill -CONT "$fuse_pid"
all_resolved() { has pager resolved DiskProbeHealthFailure cap && has ticket resolved DiskProbeDiskBusy busy &&
  has pager resolved DiskProbeHealthFailure dead; }
wait_until 200 all_resolved || true
arrival resolved pager DiskProbeHealthFailure cap "capacity loss (cap)" "$t_rec"
arrival resolved pager DiskProbeHealthFailure dead "dead target (dead)" "$t_rec"
arrival resolved ticket DiskProbeDiskBusy busy "busy disk (busy)" "$t_rec"
grep -E '^[0-9]+ pager .* busy$' "$dir/hook.log" && fail "the busy disk paged" || true
sed 's/^/  webhook: /' "$dir/hook.log"

collectd_stop >/dev/null
finish alert_pipeline_e2e "tail -30 $log; cat $dir/alertmanager.log"
