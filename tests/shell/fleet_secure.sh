#!/bin/bash
# fleet_secure.sh - the fleet drop-ins (contrib/examples/fleet-client.conf,
# fleet-server.conf, fleet-auth, prometheus-scrape.yml) on loopback, as a
# fleet would run them:
#   - four members, each collectd in a UTS and mount namespace of its own
#     with its own host name (client-a, -b, -c) and an /etc/hosts giving it
#     a FQDN (client-a.fleet.test); the client drop-in is included as it
#     ships, but for the server address (127.0.0.1 and a free port) and, on
#     client-c, a wrong password, on client-d SecurityLevel None (clear
#     text, the control); no Hostname line anywhere, FQDNLookup true
#     as in Debian's collectd.conf: collectd must name each member by its FQDN;
#   - each member probes its own probe file with diskprobe;
#   - one central collectd with the server drop-in (Listen on 127.0.0.1,
#     the free port, SecurityLevel Encrypt, the example AuthFile as it
#     ships) writes RRD files for client-a and client-b (rrdtool: finite
#     points) and serves both on write_prometheus with instance=<FQDN>
#     (the drop-in's four commented write_prometheus lines loaded, as the
#     file offers a small fleet);
#   - client-c's packets are rejected (the server's log says so) and none of
#     its values appear: no RRD directory, no series; nor client-d's;
#   - a member whose host name does not resolve (FQDNLookup true) does not
#     start: collectd exits 1 with its 'Looking up' line (what the
#     client drop-in's comment says);
#   - on the wire (tcpdump on lo): every datagram but client-d's is one
#     encrypted part (type 0x0210) with no host name, type or probe name in
#     clear, the user name is (collectd sends it so the server can find the
#     password); client-d's clear datagrams show its name (the control);
#   - prometheus-scrape.yml passes promtool and has honor_labels: true; a
#     real Prometheus scraping with it stores instance=<member's FQDN>, and
#     (the control) the same job without honor_labels stores
#     instance=<the server's address>, exported_instance=<FQDN>.
set -u
. "$(dirname "$0")/lib.sh"
need root collectd
need_cmd curl
need_cmd rrdtool
need_cmd unshare util-linux
need_cmd tcpdump tcpdump
d=$(make_tmpdir)
ex="$FLEET_EX"
port=$((20000 + RANDOM % 20000)) prom=0
prom=$((port + 1))
secret=$(fleet_secret)
[ -n "$secret" ] || die "fleet-auth has no diskprobe-fleet line"
grep -q "Password \"$secret\"" "$ex/fleet-client.conf" ||
  die "fleet-client.conf's Password is not fleet-auth's password for diskprobe-fleet"

# The central collectd (lib.sh, fleet_*). Its own host name is this host's;
# its drop-in is the example with the listen address, AuthFile, DataDir and
# port moved.
srv="$d/server"
fleet_server_dropin "$srv" "$port" "$prom"
fleet_main_conf "$srv" </dev/null
collectd_check "$srv" || die "collectd -T refused the server: $(cat "$srv/check.out")"
pass "server: collectd -T accepts the server drop-in (Listen ... SecurityLevel Encrypt, AuthFile)"

# The members: the drop-in as it ships but for the server (and client-c's
# password, client-d's SecurityLevel); each probes a probe file of its own
# under a host name of its own.
member() { # member NAME PASSWORD SECURITYLEVEL LINES_CHANGED
  local n=$1 w="$d/$1"
  fleet_client_dropin "$w" "$port" "$2" "$3" "$4"
  fleet_main_conf "$w" <<CONF
<Plugin diskprobe>
  Splay false
  DutyCycle 100
  <Target "data">
    Path "$w/probe"
    FileSize "8M"
    ProbeInterval 2
    <Probe "randread-qd1">
      Pattern randread
      BlockSize "4k"
      QueueDepth 1
      Duration 0.1
    </Probe>
  </Target>
</Plugin>
CONF
  fleet_as_host "$w" "$n"
}
member client-a "$secret" Encrypt 1
member client-b "$secret" Encrypt 1
member client-c "not-the-fleet-secret" Encrypt 2
member client-d "$secret" None 2
unshare --uts --mount "$d/client-a/as-host" hostname >"$d/uts.out" 2>&1 ||
  skip "cannot run collectd in a UTS and mount namespace: $(cat "$d/uts.out")"
[ "$(cat "$d/uts.out")" = client-a ] || die "the UTS namespace has host name '$(cat "$d/uts.out")'"
[ "$(hostname)" != client-a ] || die "the test's own host name changed"

# The wire, from before the first packet to after the last.
tcpdump -i lo -n -U -Z root -w "$d/wire.pcap" "udp and dst port $port" 2>"$d/tcpdump.err" &
tpid=$!
register_pid "$tpid"
wait_log "$d/tcpdump.err" 10 "listening on" || die "tcpdump did not start: $(cat "$d/tcpdump.err")"

collectd_start "$srv"
spid=$COLLECTD_PID
wait_until 15 curl -sf -o /dev/null "http://127.0.0.1:$prom/metrics" || die "the server's write_prometheus does not answer"
# Prometheus scraping the server twice: with the shipped job as it is
# (honor_labels: true) and, as the control, the same job without it.
pq=
if command -v prometheus >/dev/null; then
  pq=$((port + 2))
  mkdir -p "$d/prom"
  # the shipped diskprobe-fleet job as it is (its other jobs, node_exporter's,
  # left out: nothing to scrape here) and its copy without honor_labels
  python3 - "$ex/prometheus-scrape.yml" "127.0.0.1:$prom" >"$d/prom/prometheus.yml" <<'PY' ||
import json, sys, yaml
jobs = yaml.safe_load(open(sys.argv[1]))["scrape_configs"]
job = next(j for j in jobs if j["job_name"] == "diskprobe-fleet")
job.update(scrape_interval="1s", static_configs=[{"targets": [sys.argv[2]]}])
control = dict(job, job_name="without-honor-labels", honor_labels=False)
print(json.dumps({"global": {"scrape_interval": "1s"}, "scrape_configs": [job, control]}, indent=2))
PY
    die "cannot write the Prometheus config from prometheus-scrape.yml"
  prometheus_start "$d/prom" "$pq"
fi
declare -A cpid
members="client-a client-b client-c client-d"
for n in $members; do
  COLLECTD_WRAP="unshare --uts --mount $d/$n/as-host" collectd_start "$d/$n"
  cpid[$n]=$COLLECTD_PID
done

rrd_of() { echo "$srv/rrd/$1.fleet.test/diskprobe-data/probe_latency-randread-qd1.rrd"; }
# The server keeps RRD updates in memory (CacheTimeout) and writes them when
# it stops, and it creates a file in the background, dropping the values
# that come before the file exists: wait until /metrics serves both members'
# p99 stamped 6 s (three probe rounds) after it first served both, then
# read the files after the stop.
p99_of() { echo "collectd_diskprobe_probe_latency_p99{diskprobe=\"data\",type=\"randread-qd1\",instance=\"$1.fleet.test\"}"; }
# served_since MS: both p99 series are on /metrics, stamped MS or later.
served_since() {
  local n ts
  curl -s "http://127.0.0.1:$prom/metrics" >"$srv/metrics.now" || return 1
  for n in client-a client-b; do
    ts=$(grep -F "$(p99_of "$n")" "$srv/metrics.now" | awk '{ print $NF }')
    [ -n "$ts" ] && [ "$ts" -ge "$1" ] || return 1
  done
}
wait_until 60 served_since 0
wait_until 60 served_since $(($(date +%s%3N) + 6000))
rejected_re='network plugin: Checksum mismatch. Username: diskprobe-fleet'
wait_log "$srv/collectd.log" 20 "$rejected_re"
# instance/exported_instance/job of every p99 series Prometheus stored
prom_labels() {
  curl -s "http://127.0.0.1:$pq/api/v1/query" --data-urlencode \
    'query=count by (job, instance, exported_instance) (collectd_diskprobe_probe_latency_p99{diskprobe="data"})' |
    python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    m = r["metric"]
    print(m.get("job"), m.get("instance"), m.get("exported_instance", "-"))' 2>/dev/null | sort >"$d/prom/labels"
  [ "$(grep -c . "$d/prom/labels")" -ge 4 ]
}
[ -n "$pq" ] && { wait_until 30 prom_labels || echo "  Prometheus has: $(cat "$d/prom/labels")"; }
curl -s "http://127.0.0.1:$prom/metrics" >"$srv/metrics"
for n in $members; do collectd_stop "${cpid[$n]}"; done
collectd_stop "$spid"
kill -INT "$tpid" 2>/dev/null
wait "$tpid" 2>/dev/null
_unregister_pid "$tpid"

# Each member ran clean (a failed FQDN lookup would be an error line).
for n in $members; do
  grep -qi "error" "$d/$n/collectd.log" && fail "$n: errors in its log: $(grep -i -m2 error "$d/$n/collectd.log")"
  grep -q "diskprobe plugin: worker for disk" "$d/$n/collectd.log" || fail "$n: diskprobe started no worker"
done

# The server's network plugin complains of nothing but client-c, and every
# type received is known (the diskprobe TypesDB is loaded there).
others=$(grep -E 'network plugin: .*([Ee]rror|failed|mismatch|[Uu]nknown)|Dataset not found' "$srv/collectd.log" |
  grep -vE "$rejected_re|Decrypting AES256 part failed with status -1")
[ -z "$others" ] && pass "server: no network or type error in its log but client-c's rejections" ||
  fail "server: in its log: $(head -2 <<<"$others")"

# client-a and client-b: RRD files with finite points, series on /metrics.
for n in client-a client-b; do
  f=$(rrd_of "$n")
  pts=$(rrd_points "$f" 120)
  p99=$(rrd_last "$f" p99)
  num_cmp "$pts" '>=' 3 && num_cmp "$p99" '>' 0 &&
    pass "$n: stored as $n.fleet.test by the server ($pts finite points in the last 2 min, last p99 $p99 s)" ||
    fail "$n: RRD $f: $pts points, p99 $p99 ($(ls "$srv/rrd" 2>&1 | tr '\n' ' '))"
  grep -q "^$(p99_of "$n")" "$srv/metrics" &&
    pass "$n: write_prometheus serves its p99 with instance=\"$n.fleet.test\"" ||
    fail "$n: no p99 with instance=\"$n.fleet.test\" on /metrics: $(grep -m2 '^collectd_diskprobe_probe_latency_p99' "$srv/metrics")"
done

# client-c: rejected, and nothing of it anywhere.
n_rej=$(grep -cE "$rejected_re" "$srv/collectd.log")
num_cmp "$n_rej" '>' 0 &&
  pass "client-c (wrong password): the server rejected $n_rej packets: '$(log_first "$srv/collectd.log" "$rejected_re")'" ||
  fail "client-c: no rejection in the server's log"
# client-d (clear text) is dropped by SecurityLevel Encrypt as well.
n_ign=$(grep -c 'network plugin: Unencrypted packet or part has been ignored' "$srv/collectd.log")
num_cmp "$n_ign" '>' 0 && pass "client-d (SecurityLevel None): the server ignored $n_ign clear packets (its log says so)" ||
  fail "client-d: no 'Unencrypted packet ... ignored' in the server's log"
for n in client-c client-d; do
  ls -d "$srv/rrd/$n"* >/dev/null 2>&1 && fail "$n: the server has an RRD directory for it: $(ls -d "$srv/rrd/$n"*)" ||
    pass "$n: no RRD directory at the server ($(ls "$srv/rrd" | tr '\n' ' '))"
  grep -q "$n" "$srv/metrics" && fail "$n: series on /metrics: $(grep -m2 "$n" "$srv/metrics")" ||
    pass "$n: no series on /metrics ($(grep -c '^collectd_' "$srv/metrics") collectd series served)"
done

# The wire: every datagram to the server but client-d's is one encrypted
# part; names are looked for in both kinds.
wire=$(python3 - "$d/wire.pcap" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
e = '<' if struct.unpack('<I', data[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else '>'
link = struct.unpack(e + 'I', data[20:24])[0]
words = [b'client-', b'fleet.test', b'probe_latency', b'randread', b'operations_per_second']
off, encr, clear, user, seen = 24, 0, 0, 0, {'encr': set(), 'clear': set()}
while off + 16 <= len(data):
    incl = struct.unpack(e + 'I', data[off + 8:off + 12])[0]
    pkt = data[off + 16:off + 16 + incl]
    off += 16 + incl
    ip = pkt[14:] if link == 1 else pkt[4:] if link == 0 else pkt
    payload = ip[(ip[0] & 15) * 4 + 8:]
    kind = 'encr' if payload[:2] == b'\x02\x10' else 'clear'
    if kind == 'encr':
        encr += 1
        user += b'diskprobe-fleet' in payload
    else:
        clear += 1
        if b'client-d.fleet.test' not in payload:
            seen['clear'].add('a clear datagram not from client-d')
    seen[kind].update(w.decode() for w in words if w in payload)
print(encr, clear, user, ','.join(sorted(seen['encr'])) or '-', ','.join(sorted(seen['clear'])) or '-')
PY
)
read -r nencr nclear nuser in_encr in_clear <<<"$wire"
echo "wire: $nencr encrypted and $nclear clear datagrams captured; in clear datagrams: $in_clear"
num_cmp "$nencr" '>' 0 && [ "$in_encr" = - ] &&
  pass "wire: $nencr encrypted datagrams (type 0x0210): no host name, type or probe name in them" ||
  fail "wire: $nencr encrypted datagrams, in clear in them: $in_encr"
[ "$nuser" = "$nencr" ] && pass "wire: the user name diskprobe-fleet is in clear in each (collectd sends it)" ||
  fail "wire: user name in $nuser of $nencr encrypted datagrams"
num_cmp "$nclear" '>' 0 && [ "$in_clear" = "client-,fleet.test,operations_per_second,probe_latency,randread" ] &&
  pass "wire: the control, client-d's $nclear clear datagrams, show its host name, types and probe names" ||
  fail "wire: clear datagrams: $nclear, holding: $in_clear"

# FQDNLookup true and a host name that does not resolve: collectd 5.12
# refuses to start (the client drop-in's comment says so).
w="$d/client-a"
printf '127.0.0.1 localhost\n' >"$w/hosts"
sed -i 's|hostname "client-a"|hostname "client-unresolvable"|' "$w/as-host"
COLLECTD_WRAP="unshare --uts --mount $w/as-host" collectd_start "$w"
collectd_wait "$COLLECTD_PID" 60 >/dev/null
rc=$?
line=$(log_first "$w/collectd.log" 'Looking up "client-unresolvable" failed')
[ "$rc" = 1 ] && [ -n "$line" ] && pass "unresolvable host name, FQDNLookup true: collectd exits 1: '${line:0:60}...'" ||
  fail "unresolvable host name: exit status $rc, log line '$line'"

# The Prometheus scrape config.
if [ -n "$pq" ]; then
  want="diskprobe-fleet client-a.fleet.test -
diskprobe-fleet client-b.fleet.test -
without-honor-labels 127.0.0.1:$prom client-a.fleet.test
without-honor-labels 127.0.0.1:$prom client-b.fleet.test"
  if [ "$(cat "$d/prom/labels")" = "$want" ]; then
    pass "Prometheus, shipped job (honor_labels: true): instance is the member's host name"
    pass "Prometheus, the control without honor_labels: instance=\"127.0.0.1:$prom\" for both, names in exported_instance"
  else
    fail "Prometheus labels (job instance exported_instance): $(tr '\n' ';' <"$d/prom/labels"), expected $(tr '\n' ';' <<<"$want")"
  fi
else
  echo "prometheus not installed: the labels Prometheus stores are not checked"
fi
if command -v promtool >/dev/null; then
  promtool check config "$ex/prometheus-scrape.yml" >"$d/promtool.out" 2>&1 &&
    pass "prometheus-scrape.yml: promtool check config accepts it" || fail "promtool: $(cat "$d/promtool.out")"
fi
grep -q '^ *honor_labels: true' "$ex/prometheus-scrape.yml" && pass "prometheus-scrape.yml: honor_labels: true" ||
  fail "prometheus-scrape.yml has no honor_labels: true"

finish fleet_secure "tail -n 5 $srv/collectd.log $d/client-a/collectd.log"
