#!/bin/bash
# fleet_prometheus.sh - `diskprobe fleet --prometheus URL` and `compare
# --prometheus URL` against a real Prometheus (Debian's), checked against
# the same commands over an RRD tree of the same values. One generator
# writes 4 hours of rounds at a 60 s step (noise from a fixed seed) both
# as rrdtool arguments in collectd's layout and as OpenMetrics with the
# labels collectd's write_prometheus and
# contrib/examples/prometheus-scrape.yml give them (instance, diskprobe,
# type, device, class); promtool backfills the OpenMetrics into a data
# directory and Prometheus serves it on a free port. Five SSD-A disks,
# h5's 4x slower in every figure, one of them on a host named q"4 (a
# quote: must be matched, not break the query); an HDD-B disk; h6, four
# disks of a device view with sde's await 3x its peers'. h2's probe series
# come from two shards (another `shard` label), a third of their samples
# from both, as in a re-shard; h10's were scraped without honor_labels
# (exported_instance). fleet over the API ranks h5 first (x4) and prints
# the same table as over the tree, the age column aside (the runs' clocks
# differ by a second); the fail-slow detector flags h6 sde and no other
# both ways, but not at the same minute: the RRD read gives a row for
# every step of the window, unknown rows before the data begins, and the
# detector's windows count from the first row, while the API gives only
# the samples (said in src/cli/README.md). JSON and HTML agree the same
# way. compare gives byte-identical JSON both ways for host/target, host,
# class:NAME and the quoted host. VictoriaMetrics (Debian's, the same
# OpenMetrics imported) gives the same table and class comparison. Errors,
# each one line naming the URL and the cause, exit 2: a refused port, HTTP
# 500, an answer that is not JSON, Prometheus's own error (a second
# Prometheus over a copy of the data with --query.max-samples too small),
# an answer over --prometheus-limit even for 60 s of the window (with and
# without a Content-Length), and no targets in the window. Under a 16k
# limit the real answers are read as parts of the window: the same table.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd rrdtool
need_cmd python3
need_cmd prometheus prometheus
need_cmd promtool prometheus
need_cmd curl curl
need_cmd victoria-metrics victoria-metrics
FAILED=0
d=$(make_tmpdir)
dp="$top_builddir/src/cli/diskprobe"

# ---- the same values as an RRD tree and as OpenMetrics ----
python3 - "$d" <<'PY' || die "the generator failed"
# the same values as rrdtool arguments (D/rrd.txt: PATH<TAB>DS-SPECS<TAB>
# UPDATES, the tree in D/rrd) and as OpenMetrics (D/om.txt), a round a
# minute for 4 hours ending a minute ago
import random, sys, time
out = sys.argv[1]
root = out + "/rrd"
rnd = random.Random(42)
step, rows = 60, 240
end = int(time.time()) // step * step - step
ts = [end - step * (rows - 1 - i) for i in range(rows)]
#      host    target disk   class    p50 s   qd32 IOPS  seq bytes/s
disks = [("h1", "fast", "sda", "SSD-A", 1e-4, 60000, 5e8),
         ("h2", "fast", "sda", "SSD-A", 1e-4, 60000, 5e8),
         ('q"4', "fast", "sda", "SSD-A", 1e-4, 60000, 5e8),
         ("h5", "fast", "sda", "SSD-A", 4e-4, 15000, 1.25e8),
         ("h10", "fast", "sda", "SSD-A", 1e-4, 60000, 5e8),
         ("h1", "bulk", "sdb", "HDD-B", 5e-3, 400, 1.5e8)]
def noisy(level):
    return [level * (1 + 0.1 * (rnd.random() * 2 - 1)) for _ in range(rows)]
rrd = open(out + "/rrd.txt", "w")
fam = {}  # metric -> [(labels, values)]
def series(path, ds, cols, host, pi, typ, extra=""):
    ups = " ".join("%d:%s" % (t, ":".join(repr(c[i]) for c in cols)) for i, t in enumerate(ts))
    print("%s\t%s\t%s" % (path, " ".join("DS:%s:GAUGE:%d:0:U" % (n, 2 * step) for n in ds), ups), file=rrd)
    q = lambda s: s.replace("\\", "\\\\").replace('"', '\\"')
    lab = 'instance="%s",job="diskprobe-fleet",diskprobe="%s",type="%s"%s' % (q(host), q(pi), q(typ), extra)
    if host == "h10":  # scraped without honor_labels
        lab = lab.replace('instance="h10"', 'instance="collector:9103",exported_instance="h10"')
    plugin_type = path.rsplit("/", 1)[1].split("-", 1)[0]
    for n, c in zip(ds, cols):
        name = "collectd_diskprobe_" + plugin_type + ("" if n == "value" else "_" + n)
        if host == "h2":  # scraped by shard 0, then by shard 1 (a third of it by both)
            fam.setdefault(name, []).append((lab + ',shard="0"', ts[:160], c[:160]))
            fam.setdefault(name, []).append((lab + ',shard="1"', ts[80:], c[80:]))
        else:
            fam.setdefault(name, []).append((lab, ts, c))
lat = ["min", "mean", "p50", "p90", "p99", "p999", "max"]
def latcols(p, ks):
    return [[v * k for v in p] for k in ks]
def devview(host, disk, await_s):
    dev = "%s/%s/diskprobe-dev-%s" % (root, host, disk)
    for typ, level in (("bytes_per_second-read", None), ("bytes_per_second-write", 1e6),
                       ("operations_per_second-read", 200), ("operations_per_second-write", 20),
                       ("latency-read_await", await_s), ("latency-write_await", await_s)):
        v = [2e7 * (1 + 0.5 * ((i // 20) % 2)) * (1 + 0.05 * rnd.random()) for i in range(rows)] \
            if level is None else noisy(level)
        series(dev + "/" + typ + ".rrd", ["value"], [v], host, "dev-" + disk, typ.split("-", 1)[1],
               ',device="%s"' % disk)
for host, tgt, disk, cls, p50, qd32, seq in disks:
    t = "%s/%s/diskprobe-%s" % (root, host, tgt)
    dev = "%s/%s/diskprobe-dev-%s" % (root, host, disk)
    p = noisy(p50)
    series(t + "/probe_latency-randread-qd1.rrd", lat, latcols(p, (0.5, 1.2, 1, 1.5, 3, 5, 9)), host, tgt, "randread-qd1")
    series(t + "/operations_per_second-randread-qd1.rrd", ["value"], [[1 / (v * 1.2) for v in p]], host, tgt, "randread-qd1")
    q = noisy(qd32)
    series(t + "/operations_per_second-randread-qd32.rrd", ["value"], [q], host, tgt, "randread-qd32")
    series(t + "/probe_latency-randread-qd32.rrd", lat, latcols([32 / v for v in q], (0.3, 1, 0.9, 1.5, 3, 5, 9)), host, tgt, "randread-qd32")
    series(t + "/bytes_per_second-seqread.rrd", ["value"], [noisy(seq)], host, tgt, "seqread")
    series(t + "/target_device-%s.rrd" % disk, ["value"], [[1.0] * rows], host, tgt, disk, ',device="%s"' % disk)
    series(dev + "/disk_info-%s.rrd" % cls, ["value"], [[1e12] * rows], host, "dev-" + disk, cls,
           ',device="%s",class="%s"' % (disk, cls))
    devview(host, disk, p50 * 2)
# h6: four disks of one host, sde's await 3x its peers' (fail-slow)
for disk in ["sdc", "sdd", "sde", "sdf"]:
    devview("h6", disk, 3e-3 if disk == "sde" else 1e-3)
t = "%s/h6/diskprobe-data" % root
series(t + "/target_device-sdc.rrd", ["value"], [[1.0] * rows], "h6", "data", "sdc", ',device="sdc"')
series(t + "/operations_per_second-randread-qd32.rrd", ["value"], [noisy(50000)], "h6", "data", "randread-qd32")
with open(out + "/om.txt", "w") as f:
    for name, ss in fam.items():
        print("# TYPE %s gauge" % name, file=f)
        for lab, times, vals in ss:
            for t, v in zip(times, vals):
                print("%s{%s} %r %d" % (name, lab, v, t), file=f)
    print("# EOF", file=f)
PY
while IFS=$'\t' read -r path ds ups; do
  mkdir -p "$(dirname "$path")"
  # shellcheck disable=SC2086 # word splitting wanted: one argument each
  rrdtool create "$path" --step 60 --start $((${ups%%:*} - 60)) $ds RRA:AVERAGE:0.5:1:1200 &&
    rrdtool update "$path" $ups || die "rrdtool could not make $path"
done <"$d/rrd.txt"
promtool tsdb create-blocks-from openmetrics "$d/om.txt" "$d/prom/data" >"$d/promtool.log" 2>&1 ||
  die "promtool could not backfill: $(tail -3 "$d/promtool.log")"
cp -r "$d/prom" "$d/prom2"
printf 'global:\n  scrape_interval: 1m\n' >"$d/prom/prometheus.yml"
cp "$d/prom/prometheus.yml" "$d/prom2/prometheus.yml"
port=$(free_port)
prometheus_start "$d/prom" "$port"
U="http://127.0.0.1:$port"
wait_until 30 curl -fs "$U/-/ready" -o /dev/null || { cat "$d/prom/prometheus.log"; die "Prometheus not ready on $U"; }
pass "backfilled $(grep -c . "$d/om.txt") OpenMetrics lines into a real Prometheus, $(wc -l <"$d/rrd.txt") RRD files"

# ---- fleet: the same table ----
noage() { awk '{ if ($1 ~ /^[0-9]+$/) $NF = ""; print }' "$1" | grep -v '^fail-slow: .* flagged at '; }
"$dp" fleet --since 5h "$d/rrd" >"$d/f_rrd.txt" 2>"$d/f.err" || fail "fleet DIR exited $?: $(cat "$d/f.err")"
"$dp" fleet --since 5h --prometheus "$U" >"$d/f_prom.txt" 2>"$d/f.err" || fail "fleet --prometheus exited $?: $(cat "$d/f.err")"
cat "$d/f_prom.txt"
first=$(awk 'NR == 2 { print $2 "/" $3 " " $5 " " $6 " " $NF - 0 }' "$d/f_prom.txt")
[ "$(awk 'NR == 2 { print $2 "/" $3 " " $5 " " $6 }' "$d/f_prom.txt")" = "h5/fast SSD-A 5" ] &&
  pass "fleet --prometheus: h5's 4x slower disk ranked first of its class of 5" ||
  fail "fleet --prometheus: first row '$first', want h5/fast of SSD-A (5)"
w=$(awk 'NR == 2 { print $(NF - 1) }' "$d/f_prom.txt")
num_between "$w" 3.6 4.4 && pass "fleet --prometheus: h5's worst slowdown $w (4x)" || fail "fleet --prometheus: h5's worst $w"
if diff <(noage "$d/f_rrd.txt") <(noage "$d/f_prom.txt") >"$d/f.diff"; then
  pass "fleet: the same table over Prometheus as over the RRD tree ($(grep -c '^[0-9]' "$d/f_prom.txt") rows)"
else
  fail "fleet: the tables differ: $(cat "$d/f.diff")"
fi
# answers over a small limit: each window asked for again in halves (a
# figure's 4 h is about 75 kB of JSON), the same table
"$dp" fleet --since 5h --prometheus "$U" --prometheus-limit 16k >"$d/f_split.txt" 2>"$d/f.err" ||
  fail "fleet --prometheus-limit 16k exited $?: $(cat "$d/f.err")"
diff <(noage "$d/f_rrd.txt") <(noage "$d/f_split.txt") >"$d/f.diff" &&
  pass "fleet: answers over a 16k limit read in parts of the window, the same table" ||
  fail "fleet --prometheus-limit 16k: $(cat "$d/f.diff")"
for f in f_rrd f_prom; do
  grep '^fail-slow: ' "$d/$f.txt" | sed 's/ flagged at .*/ flagged/' >"$d/$f.fs"
done
[ "$(cat "$d/f_prom.fs")" = "fail-slow: h6 sde flagged
fail-slow: 10 disks of the device view checked, 1 flagged" ] && cmp -s "$d/f_rrd.fs" "$d/f_prom.fs" &&
  pass "fleet: fail-slow flags h6 sde and no other of 10 disks, over either" ||
  fail "fleet: fail-slow: RRD '$(cat "$d/f_rrd.fs")', Prometheus '$(cat "$d/f_prom.fs")'"
"$dp" fleet --since 5h --format json "$d/rrd" >"$d/f_rrd.json" || fail "fleet --format json DIR exited $?"
"$dp" fleet --since 5h --format json --prometheus "$U" >"$d/f_prom.json" || fail "fleet --format json --prometheus exited $?"
python3 - "$d/f_rrd.json" "$d/f_prom.json" <<'PY' && pass "fleet json: the same disks, figures, ranks and fail-slow verdicts both ways" || fail "fleet json differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert b["disks"][0]["host"] == "h5", b["disks"][0]
for x, y in zip(a["disks"], b["disks"]):
    assert abs(x.pop("age_s") - y.pop("age_s")) <= 5, (x, y)
    for r in (x, y):
        if r["failslow"]:
            del r["failslow"]["first_flag_ts"], r["failslow"]["max_score"]
    assert x == y, (x, y)
assert len(a["disks"]) == len(b["disks"]) == 7
fs = lambda d: [(r["host"], r["disk"], r["flagged"]) for r in d["failslow"]]
assert fs(a) == fs(b) and sum(r[2] for r in fs(b)) == 1, (fs(a), fs(b))
PY
"$dp" fleet --since 5h --format html --out "$d/f_prom.html" --prometheus "$U" || fail "fleet --format html --prometheus exited $?"
"$dp" fleet --since 5h --format html --out "$d/f_rrd.html" "$d/rrd" || fail "fleet --format html DIR exited $?"
html() { grep '^<tr class=' "$1" | sed -E 's,<td>[0-9.]+(s|min|h)</td><td>(no|FLAGGED|-)</td></tr>$,<td>AGE</td><td>\2</td></tr>,'; }
grep -q '<tr class="bad"><td>1</td><td>h5</td>' "$d/f_prom.html" && diff <(html "$d/f_rrd.html") <(html "$d/f_prom.html") >/dev/null &&
  pass "fleet html: h5 first, marked bad, the same rows both ways" || fail "fleet html: $(html "$d/f_prom.html" | head -3)"

# ---- compare: the same separations ----
for pair in "h1/fast h5/fast" "class:SSD-A h5" 'q"4/fast h1/fast' "h1 h2" "h2/fast h10/fast"; do
  read -r a b <<<"$pair"
  "$dp" compare --rrd "$d/rrd" --since 5h --format json "$a" "$b" >"$d/c_rrd.json" 2>"$d/c.err" || fail "compare --rrd $pair exited $?: $(cat "$d/c.err")"
  "$dp" compare --prometheus "$U" --since 5h --format json "$a" "$b" >"$d/c_prom.json" 2>"$d/c.err" || fail "compare --prometheus $pair exited $?: $(cat "$d/c.err")"
  cmp -s "$d/c_rrd.json" "$d/c_prom.json" && pass "compare $pair: the same JSON over Prometheus as over the tree" ||
    fail "compare $pair: $(diff "$d/c_rrd.json" "$d/c_prom.json" | head -10)"
done
"$dp" compare --prometheus "$U" --since 5h h1/fast h5/fast >"$d/c.txt" || fail "compare --prometheus text exited $?"
grep -Eq '^IOPS at QD32: 4\.[0-9]+x lower on B' "$d/c.txt" && pass "compare --prometheus: $(head -1 "$d/c.txt")" ||
  fail "compare --prometheus text: $(head -3 "$d/c.txt")"
v=$(python3 -c "import json,sys; print(' '.join(sorted(set(r['verdict'] for r in json.load(open(sys.argv[1]))['rows']))))" "$d/c_prom.json")
[ "$v" = "within noise" ] && pass "compare --prometheus h2/fast h10/fast: within noise" || fail "compare h2/fast h10/fast: verdicts '$v'"

# ---- the same over VictoriaMetrics (its own /api/v1/query) ----
vport=$(free_port)
V="http://127.0.0.1:$vport"
victoria-metrics -storageDataPath="$d/vm" -httpListenAddr="127.0.0.1:$vport" -retentionPeriod=100y \
  -loggerLevel=ERROR >"$d/vm.log" 2>&1 &
register_pid $!
wait_until 30 curl -fs "$V/health" -o /dev/null || { cat "$d/vm.log"; die "VictoriaMetrics not ready on $V"; }
grep -v '^#' "$d/om.txt" | curl -fs --data-binary @- "$V/api/v1/import/prometheus" &&
  curl -fs "$V/internal/force_flush" -o /dev/null || die "VictoriaMetrics did not take the import"
"$dp" fleet --since 5h --prometheus "$V" >"$d/f_vm.txt" 2>"$d/f.err" || fail "fleet --prometheus VictoriaMetrics exited $?: $(cat "$d/f.err")"
diff <(noage "$d/f_rrd.txt") <(noage "$d/f_vm.txt") >"$d/f.diff" &&
  pass "fleet: the same table over VictoriaMetrics as over the RRD tree" || fail "fleet over VictoriaMetrics: $(cat "$d/f.diff")"
"$dp" compare --prometheus "$V" --since 5h --format json class:SSD-A h5 >"$d/c_vm.json" &&
  "$dp" compare --rrd "$d/rrd" --since 5h --format json class:SSD-A h5 | cmp -s - "$d/c_vm.json" &&
  pass "compare class:SSD-A h5: the same JSON over VictoriaMetrics" || fail "compare over VictoriaMetrics differs"

# ---- errors: one line naming the URL and the cause, exit 2 ----
# err NAME WANT CMD...: CMD exits 2 with one line on stderr that names the
# URL and matches WANT (an extended regex)
err() {
  local name=$1 want=$2 rc
  shift 2
  timeout 60 "$@" >/dev/null 2>"$d/e.err"
  rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l <"$d/e.err")" = 1 ] && grep -q "^diskprobe [a-z]*: http://127.0.0.1:[0-9]*[^ ]*: " "$d/e.err" &&
    grep -Eq "$want" "$d/e.err"; then
    pass "$name: exit 2, $(cat "$d/e.err")"
  else
    fail "$name: exit $rc, want 2 and one line matching '$want': $(cat "$d/e.err")"
  fi
}
dead=$(free_port)
err "refused port" "http://127.0.0.1:$dead: .*(refused|onnect)" "$dp" fleet --prometheus "http://127.0.0.1:$dead"
err "compare, refused port" "http://127.0.0.1:$dead: .*(refused|onnect)" "$dp" compare --prometheus "http://127.0.0.1:$dead" h1 h2
# a server that answers each path its own way
python3 - "$d/srv" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_GET(self):
        mode = self.path.split("/")[1]
        code, body, length = 200, b"<html>hello</html>\n", True
        if mode == "500":
            code, body = 500, b"internal trouble\n"
        elif mode == "big":  # 2 MiB with a Content-Length
            body = b"[" + b"1," * (1 << 20) + b"1]"
        elif mode == "bigchunks":  # 2 MiB without: read until closed
            body, length = b"[" + b"1," * (1 << 20) + b"1]", False
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
class S(http.server.HTTPServer):
    def handle_error(self, *args):  # the client hung up on a big answer
        pass
s = S(("127.0.0.1", 0), H)
open(sys.argv[1] + ".port", "w").write(str(s.server_port))
s.serve_forever()
PY
register_pid $!
wait_until 10 test -s "$d/srv.port" || die "the test server did not start"
S="http://127.0.0.1:$(cat "$d/srv.port")"
err "HTTP 500" "$S/500: HTTP status 500: \"internal trouble" "$dp" fleet --prometheus "$S/500"
err "not JSON" "$S/html: answer is not JSON .*<html>hello" "$dp" compare --prometheus "$S/html" h1 h2
err "over the limit, Content-Length" "answer larger than 1M even for 60 s of one figure: refused" \
  "$dp" fleet --prometheus "$S/big" --prometheus-limit 1M
err "over the limit, read until closed" "answer larger than 1M even for 60 s of one figure: refused" \
  "$dp" fleet --prometheus "$S/bigchunks" --prometheus-limit 1M
# Prometheus's own error: one that may load only 100 samples at once
port2=$(free_port)
prometheus --config.file="$d/prom2/prometheus.yml" --storage.tsdb.path="$d/prom2/data" \
  --web.listen-address="127.0.0.1:$port2" --query.max-samples=100 >"$d/prom2/prometheus.log" 2>&1 &
register_pid $!
U2="http://127.0.0.1:$port2"
wait_until 30 curl -fs "$U2/-/ready" -o /dev/null || { cat "$d/prom2/prometheus.log"; die "the second Prometheus not ready"; }
err "Prometheus's error" "$U2/: HTTP status 422: Prometheus error: execution: query processing would load too many samples" \
  "$dp" fleet --prometheus "$U2/"
# no series in the window: the last second (the newest is a minute old)
err "no targets in the window" "$U: no diskprobe targets in the window" "$dp" fleet --prometheus "$U" --since 1s
"$dp" compare --prometheus "$U" h1 'h"9' >/dev/null 2>"$d/e.err"
[ $? = 2 ] && [ "$(cat "$d/e.err")" = "diskprobe compare: h\"9: no such HOST, HOST/TARGET or class:NAME at $U in the window" ] &&
  pass "compare: a side with no series: $(cat "$d/e.err")" || fail "compare: no such side: $(cat "$d/e.err")"
"$dp" fleet --prometheus "$U" --prometheus-limit 1k >/dev/null 2>"$d/e.err"
[ $? = 2 ] && grep -q "prometheus-limit '1k'" "$d/e.err" && pass "--prometheus-limit 1k refused (4k at least)" || fail "--prometheus-limit 1k: $(cat "$d/e.err")"
"$dp" compare --prometheus "$U" --rrd "$d/rrd" h1 h2 >/dev/null 2>"$d/e.err"
[ $? = 2 ] && grep -q "not both" "$d/e.err" && pass "compare --rrd and --prometheus together refused" || fail "compare --rrd --prometheus: $(cat "$d/e.err")"
"$dp" fleet --prometheus "$U" "$d/rrd" >/dev/null 2>&1
[ $? = 2 ] && pass "fleet --prometheus with a DIR too: usage, exit 2" || fail "fleet --prometheus URL DIR accepted"
finish fleet_prometheus
