#!/bin/bash
# contrib/evaluation/fleet/sharded_scale.sh - the scale-out path of
# contrib/examples/scale-out/ (2 shard Prometheus -> VictoriaMetrics <-
# vmalert) under a simulated fleet. A benchmark: it prints figures, it never
# fails on a number (not in make check).
#
#   bash contrib/evaluation/fleet/sharded_scale.sh      # ~20 minutes, root
#   HOSTS="1000 5000" bash contrib/evaluation/fleet/sharded_scale.sh
#
# 1. A real host's page: collectd with the built plugin probing two loop
#    devices (two targets, the default probe set, ProbeInterval 10 s) and
#    the shipped prometheus.conf; its write_prometheus page after 20 s is
#    the template of every simulated host.
# 2. For each host count in HOSTS (1000 5000 10000): tests/shell/
#    fleet_hosts.py serves that many hosts (WORKERS processes sharing one
#    port, host i on 127.1.0.0 + i), each the template with its own
#    instance and each probe's figures from a recorded round of
#    tests/fixtures/health/busy-loop-device.jsonl.gz, a new round every
#    ROUND (10) s, every value stamped with it (so every series gets a new
#    sample every scrape: the most a host sends). Two shard Prometheus
#    (prometheus-shard.yml as its header's sed makes shard 0 and 1, the
#    target list and ports filled in; the shipped alerts.yml and
#    fleet_disk_rules.yml; scrape 10 s, rules every 1 m as shipped)
#    remote-write into one VictoriaMetrics (victoria-metrics.default's
#    ARGS) with vmalert (vmalert.default's ARGS, the shipped fleet_rules.yml)
#    and an Alertmanager. After WARMUP (90) s, sharded_scale.py samples
#    MEASURE (60) s: CPU (cores) and RSS of each layer, the shards' head
#    series, samples appended and remote-written per second, targets up,
#    scrape and rule group times; VictoriaMetrics' rows inserted per second
#    and active series. Everything is fresh at each step.
# 3. The rules at the global store: RULE_DISKS (100,000) disks' per-disk
#    series (diskprobe:disk:median1h of the three figures, the evidence
#    age and slow_verdict, what the shards record; 4 disks per host, 25
#    classes, every 997th disk 4x worse, figures from recorded rounds)
#    backfilled for the last 10 minutes and the minutes the evaluation
#    lasts (stamped ahead, so that they do not go stale) into a fresh
#    VictoriaMetrics (/api/v1/import/prometheus); vmalert evaluates the
#    shipped fleet_rules.yml every 15 s for RULE_SECONDS (180): its own
#    iteration times per group, the CPU of vmalert and VictoriaMetrics
#    (which runs the queries).
# 4. From a slowdown to the fleet alert: LATENCY_HOSTS (1,000; 0: not
#    measured) hosts as in 2, the rule
#    windows shortened (fleet_disk_rules.yml [1h] -> [2m], fleet_rules.yml
#    for: 1h -> 0s; the shards evaluate every 15 s, vmalert every 15 s),
#    one host slowed 4x; seconds until DiskProbeSlowForModel fires at
#    vmalert and until the Alertmanager has it. With the shipped windows
#    add the time the hourly median needs to cross (half an hour) and the
#    for: (1 h).
# No step starts that would end after LIMIT (1500) s. Everything it starts
# it stops (lib.sh's cleanup). Needs root (loop devices), collectd,
# prometheus, victoria-metrics, prometheus-alertmanager, python3-yaml.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "$here/../../.." && pwd)
# shellcheck source=../../../tests/shell/lib.sh
. "$top_srcdir/tests/shell/lib.sh"
: "${HOSTS:=1000 5000 10000}" "${WARMUP:=90}" "${MEASURE:=60}" "${WORKERS:=2}" "${ROUND:=10}"
: "${RULE_DISKS:=100000}" "${RULE_SECONDS:=180}" "${LIMIT:=1500}" "${LATENCY_HOSTS:=1000}"
need root collectd loop
need_cmd prometheus prometheus
need_cmd victoria-metrics victoria-metrics
need_cmd prometheus-alertmanager prometheus-alertmanager
ulimit -n "$(ulimit -Hn)"
start=$SECONDS
say() { echo "sharded_scale: $*" >&2; }
d=$(make_tmpdir)
out="$d/out"
mkdir -p "$out"
so="$top_srcdir/contrib/examples/scale-out"
rec="$top_srcdir/tests/fixtures/health/busy-loop-device.jsonl.gz"
sc="$here/sharded_scale.py"

# ---- 1. a real host's page ----------------------------------------------------------
dev1=$(make_loop 256 "$d") || exit
dev2=$(make_loop 256 "$d") || exit
wp=$(free_port)
collectd_conf "$d/real" 10 <<CONF
  StateDir "$d/real"
  Splay false
  <Target "data">
    Device "$dev1"
  </Target>
  <Target "logs">
    Device "$dev2"
  </Target>
CONF
sed "s/Port \"9103\"/Port \"$wp\"/" "$top_srcdir/contrib/examples/prometheus.conf" >>"$d/real/collectd.conf"
collectd_start "$d/real"
page_ok() { curl -s "127.0.0.1:$wp/metrics" >"$d/page.txt" && [ "$(grep -c 'bytes_per_second{.*seqread' "$d/page.txt")" = 2 ]; }
wait_until 90 page_ok || { say "the real host has no seqread values after 90 s"; exit 1; }
sleep 12
curl -s "127.0.0.1:$wp/metrics" >"$d/page.txt"
collectd_stop >/dev/null
series=$(grep -c '^collectd_' "$d/page.txt")
say "template: a real host's page, $series series ($(grep -c '^collectd_diskprobe' "$d/page.txt") diskprobe's), $(wc -c <"$d/page.txt") bytes"

# ---- the parts ----------------------------------------------------------------------------
printf 'route:\n  receiver: "null"\nreceivers:\n  - name: "null"\n' >"$d/am.yml"
alertmanager_start "$d/am.yml" "$d/am"
hdr_sed=$(sed -n 's/^#   sed \(-e .*\) \\$/\1/p' "$so/prometheus-shard.yml")
# shellcheck disable=SC1090,SC2016
vm_args=$(. "$so/victoria-metrics.default" && echo "$ARGS")
# shellcheck disable=SC1090,SC2016
va_args=$(. "$so/vmalert.default" && echo "$ARGS")
pids=()
run() { # run NAME CMD...: started in the background, its pid registered and kept
  "${@:2}" >"$d/$1.log" 2>&1 &
  register_pid $!
  pids+=("$1=$!")
}
stop_all() {
  local p
  for p in "${pids[@]}"; do kill "${p#*=}" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "${p#*=}" 2>/dev/null; _unregister_pid "${p#*=}"; done
  pids=()
}
# vm DIR: VictoriaMetrics with the shipped ARGS, its data in DIR; sets VM.
vm_start() {
  local port a=()
  port=$(free_port)
  VM="http://127.0.0.1:$port"
  # shellcheck disable=SC2086
  for w in $vm_args; do case $w in -storageDataPath=*) a+=("-storageDataPath=$1") ;; -httpListenAddr=*) a+=("-httpListenAddr=127.0.0.1:$port") ;; *) a+=("$w") ;; esac; done
  run vm victoria-metrics "${a[@]}" -loggerLevel=ERROR
  wait_until 30 curl -sf "$VM/health" -o /dev/null || say "VictoriaMetrics did not start: $(tail -3 "$d/vm.log")"
}
# vmalert_start RULES INTERVAL: vmalert with the shipped ARGS; sets VA.
vmalert_start() {
  local port a=()
  port=$(free_port)
  VA="http://127.0.0.1:$port"
  # shellcheck disable=SC2086
  for w in $va_args; do
    case $w in
    -rule=*) a+=("-rule=$1") ;;
    -datasource.url=* | -remoteWrite.url=* | -remoteRead.url=*) a+=("${w%%=*}=$VM") ;;
    -notifier.url=*) a+=("-notifier.url=$AM_URL") ;;
    -evaluationInterval=*) a+=("-evaluationInterval=$2") ;;
    -httpListenAddr=*) a+=("-httpListenAddr=127.0.0.1:$port") ;;
    *) a+=("$w") ;;
    esac
  done
  run vmalert vmalert "${a[@]}" -loggerLevel=ERROR
  wait_until 30 curl -sf "$VA/api/v1/alerts" -o /dev/null || say "vmalert did not start: $(tail -3 "$d/vmalert.log")"
}
# shards HOSTS PORT DISK_RULES EVAL: the two shards, every host a target; sets SHARD0, SHARD1.
shards_start() {
  local k port hdr
  python3 -c 'import sys, yaml
n, port = int(sys.argv[1]), sys.argv[2]
yaml.safe_dump([{"targets": ["127.1.%d.%d:%s" % (i // 256, i % 256, port) for i in range(n)]}], open(sys.argv[3], "w"))' \
    "$1" "$2" "$d/targets.yml"
  for k in 0 1; do
    hdr=${hdr_sed//modulus: N /modulus: 2 }
    eval "sed ${hdr//\"k\"/\"$k\"} \"\$so/prometheus-shard.yml\"" >"$d/shard$k-sed.yml"
    port=$(free_port)
    python3 - "$d/shard$k-sed.yml" "$d/shard$k.yml" "$d/targets.yml" "$top_srcdir/dashboards/alerts.yml,$3" \
      "$AM_ADDR" "$VM" "$4" <<'PY'
import sys, yaml
src, dst, targets, rules, am, vm, ev = sys.argv[1:]
c = yaml.safe_load(open(src))
c["global"]["evaluation_interval"] = ev
c["rule_files"] = rules.split(",")
c["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] = [am]
c["remote_write"][0]["url"] = vm + "/api/v1/write"
job = c["scrape_configs"][0]
del job["static_configs"]
job["file_sd_configs"] = [{"files": [targets]}]
yaml.safe_dump(c, open(dst, "w"))
PY
    run "shard$k" prometheus --config.file="$d/shard$k.yml" --storage.tsdb.path="$d/shard$k.data" \
      --web.listen-address="127.0.0.1:$port" --log.level=warn --storage.remote.flush-deadline=5s
    eval "SHARD$k=http://127.0.0.1:$port"
  done
}
fake_start() { # fake_start HOSTS PORT [CONTROL]
  run fake python3 "$top_srcdir/tests/shell/fleet_hosts.py" --template "$d/page.txt" --recording "$rec" \
    --hosts "$1" --port "$2" --workers "$WORKERS" --round "$ROUND" ${3:+--control "$3"}
  wait_until 20 curl -sf "127.1.0.0:$2/metrics" -o /dev/null || say "fleet_hosts.py does not answer"
}
clean() { stop_all; rm -rf "$d"/shard*.data "$d"/vm.data; }

# ---- 2. the fleet, step by step ------------------------------------------------------------
for h in $HOSTS; do
  if [ $((SECONDS - start + WARMUP + MEASURE + 60)) -gt "$LIMIT" ]; then
    say "skipping $h hosts: it would end after LIMIT ($LIMIT s)"
    continue
  fi
  say "$h hosts: starting ($((SECONDS - start)) s in)"
  fp=$(free_port)
  vm_start "$d/vm.data"
  vmalert_start "$top_srcdir/dashboards/fleet_rules.yml" 1m
  fake_start "$h" "$fp"
  shards_start "$h" "$fp" "$top_srcdir/dashboards/fleet_disk_rules.yml" 1m
  sleep "$WARMUP"
  pidlist=$(IFS=,; echo "${pids[*]}")
  python3 "$sc" sample --pids "$pidlist" --prom "shard0=$SHARD0,shard1=$SHARD1" --vm "$VM" --vmalert "$VA" \
    --seconds "$MEASURE" --hosts "$h" --series-per-host "$series" --out "$out/step-$h.json" >/dev/null ||
    say "$h hosts: the sampler failed"
  say "$h hosts: done ($((SECONDS - start)) s in)"
  clean
done

# ---- 3. the class rules on RULE_DISKS backfilled disks -----------------------------------------
if [ $((SECONDS - start + RULE_SECONDS + 120)) -le "$LIMIT" ]; then
  vm_start "$d/vm.data"
  vm_pid=${pids[-1]#*=}
  say "backfilling $RULE_DISKS disks"
  python3 "$sc" backfill --vm "$VM" --disks "$RULE_DISKS" --recording "$rec" --minutes 10 \
    --ahead $((RULE_SECONDS / 60 + 2)) >"$out/backfill.json" ||
    say "the backfill failed"
  sleep 12 # -search.latencyOffset (10 s) and a flush
  vmalert_start "$top_srcdir/dashboards/fleet_rules.yml" 15s
  va_pid=${pids[-1]#*=}
  python3 "$sc" evaluate --vmalert "$VA" --vm "$VM" --seconds "$RULE_SECONDS" --pid "$va_pid" --vm-pid "$vm_pid" \
    --out "$out/rules-$RULE_DISKS.json" >/dev/null || say "the evaluation sampler failed"
  clean
else
  say "skipping the rules at the global store: it would end after LIMIT"
fi

# ---- 4. from a slowdown to the fleet alert -------------------------------------------------------
if [ "$LATENCY_HOSTS" -gt 0 ] && [ $((SECONDS - start + 240)) -le "$LIMIT" ]; then
  sed -e 's/\[1h\]/[2m]/g' "$top_srcdir/dashboards/fleet_disk_rules.yml" >"$d/fleet_disk_rules.yml"
  sed -e 's/^\( *for:\) 1h$/\1 0s/' "$top_srcdir/dashboards/fleet_rules.yml" >"$d/fleet_rules.yml"
  fp=$(free_port)
  : >"$d/control"
  vm_start "$d/vm.data"
  vmalert_start "$d/fleet_rules.yml" 15s
  fake_start "$LATENCY_HOSTS" "$fp" "$d/control"
  shards_start "$LATENCY_HOSTS" "$fp" "$d/fleet_disk_rules.yml" 15s
  sleep 150 # the 2-minute medians fill
  echo "slow fake-00007" >"$d/control"
  wait_until 10 test -s "$d/control.log"
  t0=$(awk '{print $2}' "$d/control.log" | sort -n | head -1)
  # DiskProbeSlowForModel for that host: at vmalert, in the Alertmanager
  fired() { curl -s "$VA/api/v1/alerts" | python3 -c "$has" "$1"; }
  in_am() { curl -s "$AM_URL/api/v2/alerts" | python3 -c "$has" "$1"; }
  has='import json, sys
d = json.load(sys.stdin)
d = (d["data"]["alerts"] or []) if isinstance(d, dict) else d
sys.exit(0 if any(a["labels"].get("alertname") == "DiskProbeSlowForModel" and
                  a["labels"].get("instance") == sys.argv[1] for a in d) else 1)'
  t_va='' t_am=''
  while [ $((SECONDS - start)) -lt "$LIMIT" ]; do
    [ -z "$t_va" ] && fired fake-00007 && t_va=$(date +%s.%N)
    [ -z "$t_am" ] && in_am fake-00007 && t_am=$(date +%s.%N)
    [ -n "$t_va" ] && [ -n "$t_am" ] && break
    sleep 1
  done
  after() { if [ -n "$1" ]; then num_calc "$1 - $t0" '%.0f s'; else echo "never (until LIMIT)"; fi; }
  {
    echo "slowdown to the fleet alert ($LATENCY_HOSTS hosts, medians over 2 m, for: 0s, shard and vmalert rules every 15 s):"
    echo "  DiskProbeSlowForModel for the slowed host firing at vmalert after $(after "$t_va"), in the Alertmanager after $(after "$t_am")"
  } >"$out/latency.txt"
  clean
else
  say "skipping the slowdown latency: it would end after LIMIT"
fi

echo
echo "sharded_scale: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $((SECONDS - start)) s;" \
  "prometheus $(dpkg-query -W -f='${Version}' prometheus 2>/dev/null), victoria-metrics $(dpkg-query -W -f='${Version}' victoria-metrics 2>/dev/null);" \
  "HOSTS=\"$HOSTS\" WARMUP=$WARMUP MEASURE=$MEASURE ROUND=$ROUND WORKERS=$WORKERS; $series series per host"
echo
compgen -G "$out/*" >/dev/null || { say "nothing measured"; exit 0; }
python3 "$sc" report "$out"/*
