#!/usr/bin/env python3
"""dashboard_queries.py - every panel query of the Grafana dashboards
against a live Prometheus (used by dashboards_live.sh and
fleet_reference_e2e.sh).

    dashboard_queries.py DASHBOARD_DIR API_URL [FILE[:ROW_TITLE_PREFIX]...]

FILEs default to diskprobe-overview.json and diskprobe-fleet.json; with
:ROW_TITLE_PREFIX only the panels of the rows whose title starts with it.
The query variables are resolved as Grafana would (label_values through
the series API: each must offer a value; the first is taken), the time
variables get sample values, and each panel query is evaluated at once: it
must be valid and return series; only panels with a noValue text (what
their emptiness means) may come back empty, and are listed. Prints PASS:
and FAIL: lines (and indented details) for the calling test to count.
"""
import json, os, re, sys, urllib.parse, urllib.request

dash, api = sys.argv[1], sys.argv[2]
FILES = [a.partition(":")[::2] for a in sys.argv[3:]] or \
    [("diskprobe-overview.json", ""), ("diskprobe-fleet.json", "")]

def get(path, **params):
    q = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(f"{api}/{path}?{q}", timeout=10) as r:
        return json.load(r)

def walk(panels, row=""):
    """(panel, title of the row it is in): a row's own panels (collapsed)
    or, flat, the panels after it up to the next row."""
    for p in panels:
        if p.get("type") == "row":
            row = p.get("title", "")
        yield p, row
        yield from walk(p.get("panels", []), row)

TIME = {"__interval": "1m", "__rate_interval": "2m", "__range": "5m",
        "__interval_ms": "60000", "__range_s": "300"}

def substitute(expr, values):
    def sub(m):
        return values[m.group(1) or m.group(2)]
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(?!\d)(\w+)", sub, expr)

for fname, row_prefix in FILES:
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
    for p, row in walk(d.get("panels", [])):
        if not row.startswith(row_prefix):
            continue
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
    if n == 0:
        errors.append(f"no panel query{' in a row titled ' + repr(row_prefix) + '...' if row_prefix else ''}")
    print(("PASS" if not errors else "FAIL") + f": {fname}{' row ' + repr(row_prefix) if row_prefix else ''}: {n} panel queries evaluate" + "".join("\n  " + e for e in errors))
    print(("PASS" if not empty_bad else "FAIL") + f": {fname}: {n - len(empty_ok) - len(empty_bad)} of {n} return series"
          + (f"; {len(empty_ok)} empty by design:" if empty_ok else "") + "".join("\n    " + e for e in empty_ok)
          + ("\n  empty without a noValue text saying why:" if empty_bad else "") + "".join("\n    " + e for e in empty_bad))
