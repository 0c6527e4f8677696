#!/bin/bash
# fleet_sharded.sh - the scale-out path of contrib/examples/scale-out/ end
# to end, with two shards:
#
#   hosts -> 2 shard Prometheus (prometheus-shard.yml: hashmod on the
#   address, alerts.yml + fleet_disk_rules.yml) -> remote write -> one
#   VictoriaMetrics (victoria-metrics.default's ARGS) <- vmalert
#   (vmalert.default's ARGS: fleet_rules.yml, recorded series written
#   back) -> Alertmanager (also the shards')
#
# The hosts:
#   - one real collectd with the built plugin probing a loop device
#     (Class "real-loop"), its values on write_prometheus as the shipped
#     contrib/examples/prometheus.conf serves them (127.0.0.1, a free port);
#   - FAKES (8) hosts served by tests/shell/fleet_hosts.py, one address each
#     (127.1.0.N, one port): the real host's page, its instance replaced by
#     the fake host's name, class "rec-ssd", each probe's figures those of
#     one recorded round of tests/fixtures/health/busy-loop-device.jsonl.gz
#     (host N: round N * STRIDE, every round the same, so each disk's median
#     is known exactly; STRIDE the first from 37 on that keeps every fake
#     disk's figures within 2.5x of their median: a recorded stall would
#     make its disk slow for the class from the start). The port is picked
#     so that the class is split over both shards (3 to 5 hosts each; the
#     split is predicted here with Prometheus' hashmod, md5 of the address).
# Checked:
#   - the shard configs are made by the shipped file's own header sed (it
#     changes 2 lines for shard 1) and then only in what the test must
#     change (ports, targets, rule file copies, the intervals): their
#     labels and relabelling stay as the sed made them;
#   - every host lands in exactly one shard, the one hashmod predicts, and
#     the global store holds every host, each with its shard's label;
#   - the class-level series recorded by vmalert at the global store cover
#     the class spread over both shards: disks and hosts 8, the quartiles
#     of each figure those of the 8 disks' figures (computed here from the
#     recording; a shard alone would see only its 3-5 disks: printed);
#   - one fake disk slowed 4x (latency x4, IOPS and MB/s / 4, its health
#     level 2, what fleet_hosts.py serves once told): DiskProbeHealthFailure
#     (alerts.yml, for: 0m) fires at the shard that scrapes the host and not
#     at the other, DiskProbeSlowForModel fires at vmalert for that disk and
#     no other, and both reach the Alertmanager (seconds from the slowdown
#     printed).
# The rules are the shipped ones but for their windows, only where waiting
# is unavoidable (copies made with sed, checked to differ in those lines
# only): fleet_disk_rules.yml's [1h] -> [WINDOW], fleet_rules.yml's for: 1h
# -> FOR. The test shortens intervals (scrape and shard evaluation 1 s,
# vmalert 2 s) and VictoriaMetrics' -search.latencyOffset (1 s) and cache.
# Needs root (loop device), collectd, prometheus, victoria-metrics
# (victoria-metrics, vmalert), prometheus-alertmanager, curl, python3-yaml.
set -u
. "$(dirname "$0")/lib.sh"
need root collectd loop
need_cmd curl
need_cmd prometheus prometheus
need_cmd victoria-metrics victoria-metrics
need_cmd vmalert victoria-metrics
need_cmd prometheus-alertmanager prometheus-alertmanager
FAKES=8 WINDOW=10s FOR=3s
ex="$top_srcdir/contrib/examples"
so="$ex/scale-out"
d=$(make_tmpdir)
rec="$top_srcdir/tests/fixtures/health/busy-loop-device.jsonl.gz"
py="$d/helper.py"
export SHELL_DIR="$top_srcdir/tests/shell"
cat >"$py" <<'PY'
import hashlib, json, os, struct, sys, urllib.parse, urllib.request, yaml
sys.path.insert(0, os.environ["SHELL_DIR"])
from fleet_hosts import load_rounds as rounds  # what the fake hosts serve

def hashmod(addr, n):  # Prometheus' relabel hashmod: md5, its last 8 bytes
    return struct.unpack(">Q", hashlib.md5(addr.encode()).digest()[8:])[0] % n

def query(url, q):
    with urllib.request.urlopen(url + "/api/v1/query?" + urllib.parse.urlencode({"query": q}), timeout=10) as r:
        return json.load(r)["data"]["result"]

def quantile(q, xs):  # PromQL's quantile: linear between the closest ranks
    xs = sorted(xs)
    r = q * (len(xs) - 1)
    lo = int(r)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (r - lo)

FIGS = {"qd1_p50_seconds": lambda r: r["randread-qd1"]["latency_s"]["p50"],
        "qd32_iops": lambda r: r["randread-qd32"]["iops"],
        "seq_bytes_per_second": lambda r: r["seqread"]["bytes_per_second"]}
cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "split":  # split PORT N ADDR...: the shard of each address
    port, n = args[0], int(args[1])
    print(" ".join(str(hashmod("%s:%s" % (a, port), n)) for a in args[2:]))
elif cmd == "render":  # render SHIPPED K N OUT TARGETS RULES AM VM: a shard's config
    shipped, k, n, out, targets, rules, am, vm = args
    c = yaml.safe_load(open(shipped))
    c["global"].update(scrape_interval="1s", evaluation_interval="1s")
    c["rule_files"] = rules.split(",")
    c["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] = [am]
    c["remote_write"][0]["url"] = vm + "/api/v1/write"
    c["remote_write"][0]["queue_config"] = {"batch_send_deadline": "1s"}
    c["scrape_configs"][0]["static_configs"] = [{"targets": targets.split(",")}]
    c["scrape_configs"][0]["scrape_interval"] = "1s"
    yaml.safe_dump(c, open(out, "w"))
elif cmd == "same":  # same A B: the shard parts (labels, relabelling) agree
    a, b = (yaml.safe_load(open(f)) for f in args)
    keys = lambda c: (c["global"]["external_labels"], c["scrape_configs"][0]["relabel_configs"],
                      c["scrape_configs"][0]["metric_relabel_configs"], c["scrape_configs"][0]["honor_labels"])
    sys.exit(0 if keys(a) == keys(b) else 1)
elif cmd == "hosts":  # hosts URL [SELECTOR]: "instance shard" per disk_info host
    res = query(args[0], "count by (instance, shard) (collectd_diskprobe_disk_info%s)" % (args[1] if len(args) > 1 else ""))
    for r in sorted(res, key=lambda r: r["metric"].get("instance", "")):
        print(r["metric"].get("instance", "-"), r["metric"].get("shard", "-"))
elif cmd == "stride":  # stride RECORDING N: a stride whose N rounds are all within 2.5x of their median
    rs = rounds(args[0])
    for stride in range(37, 400):
        ok = True
        for get in FIGS.values():
            xs = [get(rs[(i * stride) % len(rs)]) for i in range(int(args[1]))]
            m = quantile(0.5, xs)
            ok = ok and all(0.4 < x / m < 2.5 for x in xs)
        if ok:
            print(stride)
            break
elif cmd == "expect":  # expect RECORDING N STRIDE: each figure's quartiles over hosts 0..N-1
    rs = rounds(args[0])
    for f, get in FIGS.items():
        xs = [get(rs[(i * int(args[2])) % len(rs)]) for i in range(int(args[1]))]
        for q in ("0.25", "0.5", "0.75"):
            print(f, q, repr(quantile(float(q), xs)))
elif cmd == "got":  # got URL CLASS: the recorded class quartiles at URL
    for r in query(args[0], 'diskprobe:class:quantile1h{class="%s"}' % args[1]):
        print(r["metric"]["figure"], r["metric"]["quantile"], r["value"][1])
elif cmd == "value":  # value URL QUERY: the first result's value, or nothing
    res = query(args[0], args[1])
    if res:
        print(res[0]["value"][1])
elif cmd == "alerts":  # alerts URL NAME: "instance device/diskprobe shard" per firing alert
    with urllib.request.urlopen(args[0] + "/api/v1/alerts", timeout=10) as r:
        for a in json.load(r)["data"]["alerts"] or []:
            l = a["labels"]
            if l.get("alertname") == args[1] and a["state"] == "firing":
                print(l.get("instance"), l.get("device", l.get("diskprobe")), l.get("shard", "-"))
elif cmd == "why":  # why PROMETHEUS VMALERT: unhealthy targets, rules with errors
    with urllib.request.urlopen(args[0] + "/api/v1/targets", timeout=10) as r:
        for t in json.load(r)["data"]["activeTargets"]:
            if t["health"] != "up":
                print("target", t["scrapeUrl"], t["health"], t["lastError"])
    with urllib.request.urlopen(args[1] + "/api/v1/rules", timeout=10) as r:
        for g in json.load(r)["data"]["groups"]:
            for rule in g["rules"]:
                if rule.get("lastError"):
                    print("rule", rule["name"], rule["lastError"][:300])
elif cmd == "am":  # am URL: "alertname instance shard" per alert in the Alertmanager
    with urllib.request.urlopen(args[0] + "/api/v2/alerts", timeout=10) as r:
        for a in json.load(r):
            l = a["labels"]
            print(l.get("alertname"), l.get("instance"), l.get("shard", "-"))
PY

# ---- the rules: the shipped files, windows shortened ----------------------------
for f in alerts.yml fleet_disk_rules.yml fleet_rules.yml; do
  [ -f "$top_srcdir/dashboards/$f" ] || die "dashboards/$f is missing"
done
sed -e "s/\[1h\]/[$WINDOW]/g" "$top_srcdir/dashboards/fleet_disk_rules.yml" >"$d/fleet_disk_rules.yml"
sed -e "s/^\( *for:\) 1h$/\1 $FOR/" "$top_srcdir/dashboards/fleet_rules.yml" >"$d/fleet_rules.yml"
n1=$(diff "$top_srcdir/dashboards/fleet_disk_rules.yml" "$d/fleet_disk_rules.yml" | grep -c '^>')
n2=$(diff "$top_srcdir/dashboards/fleet_rules.yml" "$d/fleet_rules.yml" | grep -c '^>')
n_win=$(grep -c "\[$WINDOW\]" "$d/fleet_disk_rules.yml")
n_for=$(grep -c "for: $FOR" "$d/fleet_rules.yml")
[ "$n1" = "$n_win" ] && [ "$n_win" -ge 3 ] && [ "$n2" = "$n_for" ] && [ "$n_for" -ge 1 ] &&
  pass "test rules: fleet_disk_rules.yml with [1h] -> [$WINDOW] ($n_win lines), fleet_rules.yml with for: 1h -> $FOR ($n_for), nothing else" ||
  die "test rules: $n1 and $n2 lines changed, expected $n_win and $n_for"

# ---- the real host ----------------------------------------------------------------
dev=$(make_loop 64 "$d") || exit
wp=$(free_port)
collectd_conf "$d/real" 1 <<CONF
  Splay false
  StateDir "$d/real"
  <Target "data">
    Device "$dev"
    ProbeInterval 2
    Class "real-loop"
  </Target>
CONF
sed "s/Port \"9103\"/Port \"$wp\"/" "$ex/prometheus.conf" >>"$d/real/collectd.conf"
collectd_start "$d/real"
real_ready() { curl -s "127.0.0.1:$wp/metrics" >"$d/page.txt" && grep -q 'collectd_diskprobe_bytes_per_second{.*seqread' "$d/page.txt"; }
wait_until 40 real_ready || die "the real host's write_prometheus has no seqread after 40 s: $(tail -3 "$d/real/collectd.log")"
sleep 1
curl -s "127.0.0.1:$wp/metrics" >"$d/page.txt"
pass "real host: $(grep -c '^collectd_diskprobe' "$d/page.txt") diskprobe series on its write_prometheus (127.0.0.1, the shipped prometheus.conf)"
real=$(sed -n 's/^collectd_diskprobe_disk_info{.*instance="\([^"]*\)".*/\1/p' "$d/page.txt" | head -1)

# ---- the fake hosts: a port that splits the class over both shards -------------
addrs=() fake_names=()
for i in $(seq 0 $((FAKES - 1))); do
  addrs+=("127.1.0.$i") fake_names+=("$(printf 'fake-%05d' "$i")")
done
fp=
for _ in $(seq 50); do
  p=$(free_port)
  split=$(python3 "$py" split "$p" 2 "${addrs[@]}")
  ones=$(tr ' ' '\n' <<<"$split" | grep -c 1)
  [ "$ones" -ge 3 ] && [ "$ones" -le 5 ] && { fp=$p; break; }
done
[ -n "$fp" ] || die "no free port split $FAKES hosts 3-5 per shard in 50 tries"
read -r -a fake_shard <<<"$split"
real_shard=$(python3 "$py" split "$wp" 2 127.0.0.1)
: >"$d/control"
# rounds of a busy disk: one that stalled would make its host slow for the
# class from the start; a stride through the recording that avoids them
stride=$(python3 "$py" stride "$rec" "$FAKES")
[ -n "$stride" ] || die "no stride through the recording keeps $FAKES rounds within 2.5x of their median"
python3 "$top_srcdir/tests/shell/fleet_hosts.py" --template "$d/page.txt" --recording "$rec" --hosts "$FAKES" \
  --port "$fp" --class rec-ssd --round 0 --stride "$stride" --control "$d/control" >"$d/fake.log" 2>&1 &
register_pid $!
wait_until 10 curl -sf "127.1.0.0:$fp/metrics" -o /dev/null || die "fleet_hosts.py does not answer: $(tail -3 "$d/fake.log")"
targets="127.0.0.1:$wp"
for a in "${addrs[@]}"; do targets+=",$a:$fp"; done
echo "hosts: $real (127.0.0.1:$wp, shard $real_shard by hashmod), ${fake_names[*]} (port $fp, shards ${fake_shard[*]})"

# ---- Alertmanager, VictoriaMetrics ---------------------------------------------------
printf 'route:\n  receiver: "null"\n  group_wait: 1s\nreceivers:\n  - name: "null"\n' >"$d/am.yml"
alertmanager_start "$d/am.yml" "$d/am"
vm_port=$(free_port)
vm="http://127.0.0.1:$vm_port"
# shellcheck disable=SC1090 # the shipped ARGS line
vm_args=$(. "$so/victoria-metrics.default" && echo "$ARGS")
grep -q -- '-httpListenAddr=:8428' <<<"$vm_args" || fail "victoria-metrics.default: no -httpListenAddr=:8428 (the shards' URL)"
# shellcheck disable=SC2086 # ARGS is a list of words, as the package's unit splits it
set -- $vm_args
victoria-metrics "${@/#-storageDataPath=*/-storageDataPath=$d/vm}" -httpListenAddr="127.0.0.1:$vm_port" \
  -search.latencyOffset=1s -search.disableCache -loggerLevel=ERROR >"$d/vm.log" 2>&1 &
register_pid $!
wait_until 20 curl -sf "$vm/health" -o /dev/null || die "VictoriaMetrics did not start: $(tail -3 "$d/vm.log")"
pass "VictoriaMetrics runs with victoria-metrics.default's ARGS (data path and address moved, latency offset 1 s)"

# ---- the two shards -------------------------------------------------------------------
# each from the shipped file by its header's own sed (N = 2, k = the shard)
hdr_sed=$(sed -n 's/^#   sed \(-e .*\) \\$/\1/p' "$so/prometheus-shard.yml")
[ -n "$hdr_sed" ] || die "prometheus-shard.yml: no sed line in the header"
for k in 0 1; do
  hdr=${hdr_sed//modulus: N /modulus: 2 }
  eval "sed ${hdr//\"k\"/\"$k\"} \"\$so/prometheus-shard.yml\"" >"$d/shard$k-sed.yml" || die "the header's sed fails"
  python3 "$py" render "$d/shard$k-sed.yml" "$k" 2 "$d/shard$k.yml" "$targets" \
    "$top_srcdir/dashboards/alerts.yml,$d/fleet_disk_rules.yml" "$AM_ADDR" "$vm" ||
    die "cannot render shard $k"
  python3 "$py" same "$d/shard$k-sed.yml" "$d/shard$k.yml" || fail "shard $k: rendering changed its labels or relabelling"
  promtool check config "$d/shard$k.yml" >"$d/check$k.out" 2>&1 || die "promtool refuses shard $k: $(tail -3 "$d/check$k.out")"
  port=$(free_port)
  eval "shard${k}=http://127.0.0.1:$port"
  prometheus --config.file="$d/shard$k.yml" --storage.tsdb.path="$d/shard$k" --log.level=warn \
    --web.listen-address="127.0.0.1:$port" --storage.remote.flush-deadline=1s >"$d/shard$k.log" 2>&1 &
  register_pid $!
done
[ "$(diff "$so/prometheus-shard.yml" "$d/shard1-sed.yml" | grep -c '^>')" = 2 ] &&
  pass "shard 1: the header's sed changes 2 lines (its number in external_labels and the keep regex)" ||
  fail "shard 1: the header's sed changed $(diff "$so/prometheus-shard.yml" "$d/shard1-sed.yml" | grep -c '^>') lines, expected 2"
shards=("$shard0" "$shard1")

# ---- vmalert ---------------------------------------------------------------------------
va_port=$(free_port)
va="http://127.0.0.1:$va_port"
# shellcheck disable=SC1090
va_args=$(. "$so/vmalert.default" && echo "$ARGS")
# shellcheck disable=SC2086
set -- $va_args
va_argv=()
for a; do
  case $a in
  -rule=*) [ "$a" = -rule=/usr/share/diskprobe/fleet_rules.yml ] || fail "vmalert.default: $a, not fleet_rules.yml"
    va_argv+=("-rule=$d/fleet_rules.yml") ;;
  -datasource.url=* | -remoteWrite.url=* | -remoteRead.url=*) va_argv+=("${a%%=*}=$vm") ;;
  -notifier.url=*) va_argv+=("-notifier.url=$AM_URL") ;;
  -evaluationInterval=*) va_argv+=(-evaluationInterval=2s) ;;
  -httpListenAddr=*) va_argv+=("-httpListenAddr=127.0.0.1:$va_port") ;;
  *) va_argv+=("$a") ;;
  esac
done
vmalert "${va_argv[@]}" -remoteWrite.flushInterval=1s -loggerLevel=ERROR >"$d/vmalert.log" 2>&1 &
register_pid $!
wait_until 20 curl -sf "$va/api/v1/alerts" -o /dev/null || die "vmalert did not start: $(tail -5 "$d/vmalert.log")"
pass "vmalert runs with vmalert.default's ARGS (fleet_rules.yml; URLs to the store and the Alertmanager moved)"

# ---- every host in exactly one shard, all in the global store --------------------------
all_hosts=$(printf '%s\n' "$real" "${fake_names[@]}" | sort)
in_store() { [ "$(python3 "$py" hosts "$vm" | wc -l)" = $((FAKES + 1)) ]; }
wait_until 30 in_store || fail "the global store does not hold $((FAKES + 1)) hosts within 30 s: $(python3 "$py" hosts "$vm" | tr '\n' ' ')"
for k in 0 1; do python3 "$py" hosts "${shards[$k]}" | awk '{print $1}' >"$d/in$k"; done
both=$(comm -12 "$d/in0" "$d/in1")
union=$(sort -u "$d/in0" "$d/in1")
[ -z "$both" ] && [ "$union" = "$all_hosts" ] &&
  pass "every host in exactly one shard: shard 0 $(wc -l <"$d/in0"), shard 1 $(wc -l <"$d/in1")" ||
  fail "hosts in both shards: [$(tr '\n' ' ' <<<"$both")]; in neither: [$(comm -23 <(echo "$all_hosts") <(echo "$union") | tr '\n' ' ')]"
predicted=$( {
  echo "$real $real_shard"
  for i in "${!fake_names[@]}"; do echo "${fake_names[$i]} ${fake_shard[$i]}"; done
} | sort)
stored=$(python3 "$py" hosts "$vm")
[ "$stored" = "$predicted" ] &&
  pass "the global store holds all $((FAKES + 1)) hosts, each once, with the shard hashmod puts it in" ||
  fail "global store (instance shard): $(tr '\n' ';' <<<"$stored") predicted: $(tr '\n' ';' <<<"$predicted")"
n0=$(grep -c fake "$d/in0") n1=$(grep -c fake "$d/in1")

# ---- the class quartiles at the global store -------------------------------------------
python3 "$py" expect "$rec" "$FAKES" "$stride" | sort >"$d/expect"
got_all() { python3 "$py" got "$vm" rec-ssd | sort >"$d/got" && [ "$(wc -l <"$d/got")" = 9 ]; }
wait_until 40 got_all || fail "vmalert recorded $(wc -l <"$d/got") of 9 class quartiles for rec-ssd within 40 s: $(tail -3 "$d/vmalert.log")"
sleep 3 # one more evaluation over every shard's medians
python3 "$py" got "$vm" rec-ssd | sort >"$d/got"
if join -j1 <(awk '{print $1"/"$2, $3}' "$d/expect") <(awk '{print $1"/"$2, $3}' "$d/got") >"$d/joined" &&
  [ "$(wc -l <"$d/joined")" = 9 ] && awk '{ r = $3 / $2; if (r < 0.999999 || r > 1.000001) exit 1 }' "$d/joined"; then
  pass "class rec-ssd over both shards ($n0 + $n1 hosts): the 9 quartiles at the global store are those of all $FAKES disks (e.g. qd32_iops median $(awk '$1 == "qd32_iops/0.5" {print $3}' "$d/joined"))"
else
  fail "class quartiles, figure/quantile expected got: $(tr '\n' ';' <"$d/joined")"
fi
disks=$(python3 "$py" value "$vm" 'diskprobe:class:disks{class="rec-ssd"}')
hosts=$(python3 "$py" value "$vm" 'diskprobe:class:hosts{class="rec-ssd"}')
[ "$disks" = "$FAKES" ] && [ "$hosts" = "$FAKES" ] && pass "diskprobe:class:disks and :hosts of rec-ssd at the global store: $FAKES" ||
  fail "diskprobe:class:disks $disks, hosts $hosts, expected $FAKES"
for k in 0 1; do
  echo "  shard $k alone: median qd32_iops of its rec-ssd disks $(python3 "$py" value "${shards[$k]}" 'quantile(0.5, diskprobe:disk:median1h{class="rec-ssd", figure="qd32_iops"})')"
done

# ---- a disk slows 4x ---------------------------------------------------------------------
slow=${fake_names[3]}
slow_shard=${fake_shard[3]}
echo "slow $slow" >"$d/control"
wait_until 10 test -s "$d/control.log" || fail "fleet_hosts.py did not slow $slow"
t_slow=$(awk '{print $2}' "$d/control.log" | sort -n | head -1)
host_alert() { python3 "$py" alerts "${shards[$slow_shard]}" DiskProbeHealthFailure | grep -q "^$slow "; }
wait_until 30 host_alert || fail "DiskProbeHealthFailure for $slow does not fire at shard $slow_shard within 30 s"
t_host=$(date +%s.%N)
other=$((1 - slow_shard))
[ -z "$(python3 "$py" alerts "${shards[$other]}" DiskProbeHealthFailure)" ] &&
  pass "DiskProbeHealthFailure (alerts.yml) for $slow fires at shard $slow_shard, which scrapes it, $(num_calc "$t_host - $t_slow" %.1f) s after the slowdown; not at shard $other" ||
  fail "shard $other fires DiskProbeHealthFailure: $(python3 "$py" alerts "${shards[$other]}" DiskProbeHealthFailure)"
class_alert() { [ -n "$(python3 "$py" alerts "$va" DiskProbeSlowForModel)" ]; }
wait_until 60 class_alert || fail "DiskProbeSlowForModel does not fire at vmalert within 60 s: $(python3 "$py" value "$vm" "diskprobe:disk:class_slowdown:max{instance=\"$slow\"}")"
t_fleet=$(date +%s.%N)
fired=$(python3 "$py" alerts "$va" DiskProbeSlowForModel)
[ "$(awk '{print $1}' <<<"$fired" | sort -u)" = "$slow" ] &&
  pass "DiskProbeSlowForModel (fleet_rules.yml at vmalert) fires for $slow and no other disk, $(num_calc "$t_fleet - $t_slow" %.1f) s after the slowdown (window $WINDOW, for: $FOR): $(tr '\n' ';' <<<"$fired")" ||
  fail "DiskProbeSlowForModel fired for: $(tr '\n' ';' <<<"$fired")"
in_am() { python3 "$py" am "$AM_URL" >"$d/am.out" && grep -q "^DiskProbeSlowForModel $slow " "$d/am.out" &&
  grep -q "^DiskProbeHealthFailure $slow $slow_shard\$" "$d/am.out"; }
wait_until 20 in_am && pass "the Alertmanager has both: $(sort -u "$d/am.out" | tr '\n' ';')" ||
  fail "the Alertmanager holds: $(sort -u "$d/am.out" | tr '\n' ';')"


collectd_stop >/dev/null
finish fleet_sharded "python3 $py why $shard0 $va; python3 $py why $shard1 $va; tail -n 5 $d/vm.log $d/vmalert.log $d/shard0.log $d/shard1.log $d/fake.log"
