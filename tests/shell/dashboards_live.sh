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

python3 - "$top_srcdir/dashboards" "$api" >"$dir/py.log" 2>&1 <<'PYTHON'
import json, os, re, sys, urllib.parse, urllib.request

dash, api = sys.argv[1], sys.argv[2]

def get(path, **params):
    q = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(f"{api}/{path}?{q}", timeout=10) as r:
        return json.load(r)

def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))

TIME = {"__interval": "1m", "__rate_interval": "2m", "__range": "5m",
        "__interval_ms": "60000", "__range_s": "300"}

def substitute(expr, values):
    def sub(m):
        return values[m.group(1) or m.group(2)]
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(?!\d)(\w+)", sub, expr)

for fname in ("diskprobe-overview.json", "diskprobe-fleet.json"):
    d = json.load(open(os.path.join(dash, fname)))
    values = dict(TIME)
    values["datasource"] = "prometheus"
    bad = []
    for v in d["templating"]["list"]:
        if v.get("type") in ("custom", "constant", "textbox"):
            values[v["name"]] = str(v.get("current", {}).get("value", "") or v.get("query", "").split(",")[0])
            continue
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", q or "")
        if not m:
            bad.append(f"variable {v['name']}: not label_values(): {q!r}")
            continue
        sel = substitute(m.group(1), values)
        r = get("series", **{"match[]": sel})
        found = sorted({s.get(m.group(2)) for s in r.get("data", []) if s.get(m.group(2))})
        rx = v.get("regex")
        if rx and found:
            # Grafana's /regex/: keep the values it matches (display only)
            pat = re.compile(rx.strip("/").replace("?<text>", "?P<text>").replace("?<value>", "?P<value>"))
            found = [f for f in found if pat.search(f)] or found
        if not found:
            bad.append(f"variable {v['name']}: label_values({sel}, {m.group(2)}) offers nothing")
            continue
        values[v["name"]] = found[0]
        print(f"  {fname}: ${v['name']} = {found[0]} (of {len(found)})")
    print(("PASS" if not bad else "FAIL") + f": {fname}: every query variable offers a value" + "".join("\n  " + b for b in bad))

    empty_ok, empty_bad, errors, n = [], [], [], 0
    for p in walk(d.get("panels", [])):
        for t in p.get("targets", []):
            if not t.get("expr"):
                continue
            n += 1
            where = f"panel {p.get('title')!r} {t.get('refId', '')}"
            try:
                expr = substitute(t["expr"], values)
            except KeyError as e:
                errors.append(f"{where}: unknown variable {e}")
                continue
            r = get("query", query=expr)
            if r.get("status") != "success":
                errors.append(f"{where}: {r.get('error')}")
            elif r["data"]["result"]:
                continue
            elif p.get("fieldConfig", {}).get("defaults", {}).get("noValue"):
                empty_ok.append(f"{where} (\"{p['fieldConfig']['defaults']['noValue']}\")")
            else:
                empty_bad.append(f"{where}: {expr}")
    print(("PASS" if not errors else "FAIL") + f": {fname}: {n} panel queries evaluate" + "".join("\n  " + e for e in errors))
    print(("PASS" if not empty_bad else "FAIL") + f": {fname}: {n - len(empty_ok) - len(empty_bad)} of {n} return series"
          + (f"; {len(empty_ok)} empty by design:" if empty_ok else "") + "".join("\n    " + e for e in empty_ok)
          + ("\n  empty without a noValue text saying why:" if empty_bad else "") + "".join("\n    " + e for e in empty_bad))
PYTHON
rc=$?
while IFS= read -r line; do
  case $line in
  PASS:*) pass "${line#PASS: }" ;;
  FAIL:*) fail "${line#FAIL: }" ;;
  *) echo "$line" ;;
  esac
done <"$dir/py.log"
[ $rc = 0 ] || fail "the query check failed (python exit $rc)"
collectd_stop
finish dashboards_live
