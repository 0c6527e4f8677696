#!/bin/bash
# tests/shell/dashboards.sh - checks everything under dashboards/:
#
#  * promtool check rules dashboards/alerts.yml, dashboards/fleet_disk_rules.yml
#    and dashboards/fleet_rules.yml
#  * promtool test rules dashboards/alerts_test.yml,
#    dashboards/fleet_rules_test.yml and fleet_rules_sharded_test.yml (every
#    alert tested both ways: at least one case where it fires and one where
#    it does not)
#  * both dashboards parse as JSON and carry the Grafana dashboard model
#    fields an import needs (uid, title, schemaVersion, panels,
#    templating.list), unique panel ids; schemaVersion is SCHEMA_VERSION
#    below with refresh a string and no timepicker.time_options (so newer
#    Grafanas' migrations change nothing); one data-source mechanism: no
#    __inputs, a "datasource" variable of type datasource, and every panel,
#    panel query and query variable on ${datasource}
#  * every table panel has a noValue text, so a table empty by design says
#    the healthy state instead of Grafana's "No data"
#  * the device view: the device variable shows the disk (regex with text
#    and value groups over the dev- instance), every query of a device panel
#    adds a disk label (label_replace of dev-DISK) and no legend shows the
#    raw dev- instance; a fail-slow panel draws slowdown{type="peers"} with
#    a threshold at the detector's flag level (flag_ratio in src/failslow.h)
#  * every alert has summary, description, runbook_url and dashboard_url:
#    runbook_url is the external label diskprobe_runbook_base (default: the
#    installed dashboards/README.md) and the alert's own section there,
#    dashboard_url a dashboard of this directory under the external label
#    grafana_url (default http://localhost:3000)
#  * every PromQL expression of the dashboards (panel targets, variable
#    queries, annotation queries) and of the Grafana alert provisioning,
#    with template variables replaced by sample values, passes promtool's
#    parser (written as recording rules into a temporary file)
#  * every metric name used in dashboards, alert rules, their tests and the
#    Grafana provisioning is in the catalogue below (or recorded by
#    alerts.yml, fleet_disk_rules.yml or fleet_rules.yml), with a type label value
#    the catalogue allows; every collectd_diskprobe_* name and type="..." value
#    of the README's "Metric catalogue" section is in the catalogue below
#    (`diskprobe metrics --prometheus`: the metric table)
#  * the Grafana provisioning YAML parses and points at existing dashboards
#    and panels; the dashboard provider's path is where the Debian package
#    installs the dashboards (contrib/packaging/debian/diskprobe.install); one folder:
#    every alert rule group is in the provider's folder, and the folder UID
#    that the rules file and dashboards/README.md's folder-creation call
#    name is the provider's folderUid
#
# Needs python3; installs Debian's prometheus package for promtool when it
# is missing (without starting the server). Exit 0 pass, 1 fail, 77 skip.
# Run from anywhere; uses $top_srcdir if set (make check sets it).

set -u

. "$(dirname "$0")/lib.sh"
dash=$top_srcdir/dashboards

# The metric catalogue: metric name, then the type label values it is
# exported with; "<probe>" stands for any probe name (PROBES below), "<any>"
# for any value (a device name). Printed from the metric table
# (src/metrics.c), which README's catalogue is generated from too
# (tests/shell/metrics_table.sh).
CATALOGUE=$("$DISKPROBE" metrics --prometheus) || die "diskprobe metrics --prometheus failed"
# Probe names (type label of per-probe metrics) the dashboards and rules may
# name literally.
PROBES='randread-qd1 randread-qd32 seqread seqwrite randwrite syncwrite'
# Series that are not diskprobe's but may be used: Prometheus' own ALERTS and
# up (a test's unrelated series), the threshold overrides an operator
# records (see alerts.yml), and collectd's smart plugin's series that the
# alert texts join on the device label (contrib/examples/smart.conf).
EXTRA_METRICS='ALERTS up diskprobe:probe_latency_p99_threshold_override:seconds
  collectd_smart_nvme_media_errors collectd_smart_nvme_num_err_log_entries collectd_smart_nvme_critical_warning
  collectd_smart_nvme_percent_used collectd_smart_nvme_temperature collectd_smart_smart_badsectors
  collectd_smart_smart_temperature'
# Other exporters' series the fleet rules' join test may feed (collectd's
# smart plugin, node_exporter): the join of dashboards/README.md.
JOIN_METRICS='collectd_smart_smart_temperature node_disk_read_time_seconds_total node_disk_reads_completed_total'
# The dashboards' schemaVersion (Grafana 10.2 to 11.x write 39; later
# versions migrate it forward, which with the checks below changes nothing).
SCHEMA_VERSION=39

tmp=$(make_tmpdir)
policy_created=
at_exit '[ -n "$policy_created" ] && rm -f /usr/sbin/policy-rc.d'

[ -d "$dash" ] || skip "no dashboards directory at $dash"
need_cmd python3

# promtool comes with Debian's prometheus package. Install it if needed, but
# keep the package's postinst from starting the server: policy-rc.d makes
# invoke-rc.d refuse, and any prometheus process that still appears during
# the install is stopped by its pid.
install_promtool() {
	[ "$(id -u)" = 0 ] || return 1
	command -v apt-get >/dev/null || return 1
	local before after pid
	before=$(pgrep -x prometheus | sort)
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d &&
			chmod 0755 /usr/sbin/policy-rc.d && policy_created=1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends prometheus >"$tmp/apt.log" 2>&1 ||
		{ apt-get update >>"$tmp/apt.log" 2>&1 &&
			apt-get install -y --no-install-recommends prometheus >>"$tmp/apt.log" 2>&1; }
	local rc=$?
	if [ -n "$policy_created" ]; then
		rm -f /usr/sbin/policy-rc.d
		policy_created=
	fi
	after=$(pgrep -x prometheus | sort)
	for pid in $after; do
		if ! grep -qx "$pid" <<<"$before"; then
			echo "stopping prometheus (pid $pid) started by the package install"
			kill "$pid"
		fi
	done
	[ $rc = 0 ] || tail -n 5 "$tmp/apt.log"
	return $rc
}

if ! command -v promtool >/dev/null; then
	echo "promtool not found, installing Debian's prometheus package"
	install_promtool || skip "promtool is missing and apt-get install prometheus failed"
	command -v promtool >/dev/null || skip "promtool still missing after installing prometheus"
fi
python3 -c 'import yaml' 2>/dev/null || skip "python3 yaml module missing (Debian: python3-yaml)"
echo "using $(promtool --version 2>&1 | head -n 1)"

# ---- 1. alert and fleet rules: syntax and unit tests ----------------------
for rules in alerts fleet_disk_rules fleet_rules; do
	if promtool check rules "$dash/$rules.yml" >"$tmp/check.log" 2>&1; then
		pass "promtool check rules $rules.yml ($(grep -o '[0-9]* rules found' "$tmp/check.log"))"
	else
		cat "$tmp/check.log"
		fail "promtool check rules $rules.yml"
	fi
done
# fleet_rules_test.yml tests both fleet files (one Prometheus),
# fleet_rules_sharded_test.yml fleet_rules.yml at a sharded layer's store
for t in alerts_test fleet_rules_test fleet_rules_sharded_test; do
	if promtool test rules "$dash/$t.yml" >"$tmp/test.log" 2>&1; then
		pass "promtool test rules $t.yml"
	else
		cat "$tmp/test.log"
		fail "promtool test rules $t.yml"
	fi
done

# ---- 2. JSON, model fields, expressions, metric names ----------------------
# The python part prints PASS:/FAIL:/SKIP: lines and writes every
# expression it found, variables substituted, as recording rules into
# $tmp/exprs.yml for promtool.
export CATALOGUE PROBES EXTRA_METRICS JOIN_METRICS SCHEMA_VERSION
python3 - "$dash" "$tmp/exprs.yml" >"$tmp/py.log" 2>&1 <<'PYTHON'
import json
import os
import re
import sys

import yaml

dash, exprs_out = sys.argv[1], sys.argv[2]
top = os.path.dirname(os.path.abspath(dash))

catalogue = {}
for line in os.environ["CATALOGUE"].strip().splitlines():
    name, *types = line.split()
    catalogue[name] = set(types)
probes = set(os.environ["PROBES"].split())
extra = set(os.environ["EXTRA_METRICS"].split())
join_metrics = frozenset(os.environ["JOIN_METRICS"].split())
# device, class: the join labels of the shipped scrape config (smart: the
# smart plugin's own); figure, quantile: the fleet rules' recorded series;
# backend: an operator's label on disk_info; shard: a shard's external
# label (dashboards/README.md, "Sharded"); cause: DiskProbeHealthFailure's
LABELS = {"instance", "diskprobe", "type", "job", "alertname", "alertstate",
          "severity", "scope", "kind", "device", "class", "smart", "figure",
          "quantile", "backend", "shard", "cause"}

# Sample values for the dashboards' template variables; custom variables
# use their current value.
SAMPLES = {"instance": "db1", "target": "data", "probe": "randread-qd1",
           "device": "vda", "class": "Samsung_SSD_860_EVO_1TB", "__interval": "2m", "__rate_interval": "4m",
           "__range": "6h", "__interval_ms": "120000", "__range_s": "21600"}


def report(good, what):
    print(("PASS: " if good else "FAIL: ") + what)


def strip_strings(expr):
    return re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)


KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring",
            "group_left", "group_right", "bool", "offset", "inf", "nan"}


def metric_names(expr):
    """Metric names a PromQL expression selects."""
    e = strip_strings(expr)
    e = re.sub(r"\{[^}]*\}", " ", e)           # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)          # ranges, subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)",
               " ", e)                         # label lists
    names = set()
    for m in re.finditer(r"(?<![\w:.$])([A-Za-z_:][\w:]*)(\s*\()?", e):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        names.add(word)
    return names


def selectors(expr):
    """(metric, [(label, op, value)]) for every selector with matchers."""
    out = []
    for m in re.finditer(r'([A-Za-z_:][\w:]*)?\s*\{((?:[^}"]|"(?:[^"\\]|\\.)*")*)\}', expr):
        matchers = re.findall(r'(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"', m.group(2))
        out.append((m.group(1) or "", matchers))
    return out


catalogue_problems = []


def check_expr(where, expr, allowed_extra=frozenset()):
    """Metric names and label matchers of one expression against the catalogue."""
    bad = catalogue_problems.append
    if "__name__" in expr:
        bad(f"{where}: selects by __name__, which the catalogue check cannot follow")
    for name in metric_names(expr):
        if name not in catalogue and name not in extra and name not in allowed_extra:
            bad(f"{where}: metric {name} is not in the catalogue")
    for metric, matchers in selectors(expr):
        for label, op, value in matchers:
            if label not in LABELS:
                bad(f"{where}: unknown label {label} in {metric}{{...}}")
            if label != "type" or metric not in catalogue or op not in ("=", "=~"):
                continue
            values = value.split("|") if op == "=~" else [value]
            if op == "=~" and any(re.search(r"[.*+?()\[\]{}^$\\]", v) for v in values):
                continue  # a real regex: cannot enumerate
            allowed = catalogue[metric]
            for v in values:
                if v in allowed or "<any>" in allowed or ("<probe>" in allowed and v in probes):
                    continue
                bad(f"{where}: {metric} has no type=\"{v}\" "
                    f"(catalogue: {' '.join(sorted(allowed))})")


# ---- the rule files' recorded series (dashboards may draw them) ----------
RULE_FILES = ("alerts.yml", "fleet_disk_rules.yml", "fleet_rules.yml")
rules = {}
for fname in RULE_FILES:
    with open(os.path.join(dash, fname)) as f:
        rules[fname] = yaml.safe_load(f)
recorded = set()
for fname in RULE_FILES:
    for g in rules[fname].get("groups", []):
        for r in g.get("rules") or []:
            if "record" in r:
                recorded.add(r["record"])


# ---- dashboards -----------------------------------------------------------
def walk_panels(panels):
    for p in panels:
        yield p
        yield from walk_panels(p.get("panels", []))


exprs = []          # (where, expr) for promtool
dash_uids = {}
fail_slow_panels = []
for fname in ("diskprobe-overview.json", "diskprobe-fleet.json"):
    path = os.path.join(dash, fname)
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        report(False, f"{fname}: valid JSON ({e})")
        continue
    report(True, f"{fname}: valid JSON")

    problems = []
    for key in ("uid", "title", "schemaVersion", "panels", "templating"):
        if key not in d:
            problems.append(f"missing {key}")
    if d.get("schemaVersion") != int(os.environ["SCHEMA_VERSION"]):
        problems.append(f"schemaVersion {d.get('schemaVersion')!r} (want {os.environ['SCHEMA_VERSION']})")
    if not isinstance(d.get("refresh"), str):
        problems.append(f"refresh {d.get('refresh')!r} is not a string")
    if "time_options" in d.get("timepicker", {}):
        problems.append("timepicker.time_options (removed from the schema)")
    if len(d.get("uid", "")) > 40 or not re.fullmatch(r"[\w-]+", d.get("uid", "")):
        problems.append(f"uid {d.get('uid')!r} not a short Grafana uid")
    if d.get("id") is not None:
        problems.append("id must be null in a shared dashboard")
    # One data-source mechanism, the variable: an __inputs entry would make
    # a UI import write the chosen data source into the panels and leave the
    # variable without effect.
    if "__inputs" in d:
        problems.append("__inputs present: the data source is chosen with the datasource variable only")
    if "DS_PROMETHEUS" in json.dumps(d):
        problems.append("DS_PROMETHEUS still referenced")
    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    dsv = variables.get("datasource", {})
    if dsv.get("type") != "datasource" or dsv.get("query") != "prometheus":
        problems.append("no datasource variable of type datasource over prometheus")
    for v in variables.values():
        if v.get("type") == "query" and v.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"variable {v.get('name')} does not query ${{datasource}}")
    panels = list(walk_panels(d.get("panels", [])))
    ids = [p.get("id") for p in panels]
    if len(ids) != len(set(ids)) or None in ids:
        problems.append(f"panel ids not unique: {ids}")
    for p in panels:
        gp = p.get("gridPos", {})
        if not all(k in gp for k in "hwxy") or gp["x"] + gp["w"] > 24:
            problems.append(f"panel {p.get('id')} bad gridPos {gp}")
        if p.get("type") in ("row", "text"):
            continue
        if p.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"panel {p.get('id')} datasource is not ${{datasource}}")
        if not p.get("targets"):
            problems.append(f"panel {p.get('id')} has no targets")
        for t in p.get("targets", []):
            if t.get("datasource", {}).get("uid") != "${datasource}":
                problems.append(f"panel {p.get('id')} target {t.get('refId')} datasource")
        if p.get("type") == "table" and not p.get("fieldConfig", {}).get("defaults", {}).get("noValue"):
            problems.append(f"table panel {p.get('id')} ({p.get('title')}) has no noValue text for the healthy, empty state")
        for t in p.get("targets", []):
            expr, legend = t.get("expr", ""), t.get("legendFormat", "")
            if 'diskprobe=~"$device"' in expr or 'type="peers"' in expr:
                if not re.search(r'label_replace\(.*, "disk", "\$1", "diskprobe", "dev-\(\.\+\)"\)', expr, re.S):
                    problems.append(f"panel {p.get('id')} target {t.get('refId')}: device-view query without the disk label")
                if "{{diskprobe}}" in legend:
                    problems.append(f"panel {p.get('id')} target {t.get('refId')}: legend shows the dev- instance")
            if ('collectd_diskprobe_slowdown{' in expr and 'type="peers"' in expr
                    and p.get("type") == "timeseries"):
                fail_slow_panels.append(p)
    for req in ("instance",):
        if req not in variables:
            problems.append(f"no {req} variable")
    if "device" in variables:
        rx = variables["device"].get("regex", "")
        if "(?<value>dev-" not in rx or "(?<text>" not in rx:
            problems.append(f"device variable regex {rx!r} does not show the disk of the dev- instance")
    report(not problems, f"{fname}: Grafana dashboard model" +
           ("".join("\n  " + x for x in problems) if problems else ""))
    dash_uids[d.get("uid")] = set(ids)

    # Collect expressions: panel targets, variable queries, annotations.
    found = []
    for p in panels:
        for t in p.get("targets", []):
            if "expr" in t:
                found.append((f"{fname} panel {p['id']} ({p.get('title', '')}) {t.get('refId')}", t["expr"]))
    for v in variables.values():
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", q or "", re.S)
            if not m or m.group(2) not in LABELS:
                report(False, f"{fname} variable {v['name']}: not label_values(selector, label): {q!r}")
                continue
            found.append((f"{fname} variable {v['name']}", m.group(1)))
    for a in d.get("annotations", {}).get("list", []):
        if a.get("expr"):
            found.append((f"{fname} annotation {a.get('name')}", a["expr"]))

    # Substitute variables.
    values = dict(SAMPLES)
    for v in variables.values():
        if v.get("type") in ("custom", "constant", "textbox"):
            values[v["name"]] = str(v.get("current", {}).get("value", "") or v.get("query", "").split(",")[0])
    unknown = []
    for where, expr in found:
        def sub(m):
            name = m.group(1) or m.group(2)
            if name not in values:
                raise KeyError(name)
            if name not in SAMPLES and name not in variables:
                raise KeyError(name)
            return values[name]
        try:
            # $1 etc. are label_replace's capture groups, not variables.
            concrete = re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(?!\d)(\w+)", sub, expr)
        except KeyError as e:
            unknown.append(f"{where}: unknown template variable ${e.args[0]}")
            continue
        exprs.append((where, concrete))
        check_expr(where, concrete, recorded)
    report(not unknown, f"{fname}: {len(found)} expressions, template variables all defined"
           + "".join("\n  " + x for x in unknown))

# The fail-slow panel: a threshold line at the detector's flag level.
m = re.search(r"`flag_ratio` \(([0-9.]+)\)", open(os.path.join(top, "src", "failslow.h")).read())
flag = float(m.group(1)) if m else None
steps = [s.get("value") for p in fail_slow_panels
         for s in p.get("fieldConfig", {}).get("defaults", {}).get("thresholds", {}).get("steps", [])]
dashed = all(p["fieldConfig"]["defaults"].get("custom", {}).get("thresholdsStyle", {}).get("mode") in ("dashed", "line", "line+area", "dashed+area")
             for p in fail_slow_panels)
report(flag is not None and bool(fail_slow_panels) and flag in steps and dashed,
       f"fail-slow panel: {len(fail_slow_panels)} with slowdown{{type=\"peers\"}}, threshold steps {steps} "
       f"drawn as lines, flag level {flag} (src/failslow.h)")

# ---- alert rules and their tests ------------------------------------------
alerts = {}
for fname in RULE_FILES:
    for g in rules[fname].get("groups", []):
        for r in g.get("rules") or []:
            where = f"{fname} {r.get('alert') or r.get('record')}"
            check_expr(where, r["expr"], recorded)
            if "alert" in r:
                alerts.setdefault(r["alert"], []).append(r)

problems = []
for name, rs in alerts.items():
    for r in rs:
        ann = r.get("annotations", {})
        for key in ("summary", "description", "runbook_url", "dashboard_url"):
            if not ann.get(key):
                problems.append(f"{name}: no {key} annotation")
        # runbook_url: the configurable base, by default the installed
        # dashboards/README.md, and the alert's own section of it
        m = re.fullmatch(r"\{\{ or \$externalLabels\.diskprobe_runbook_base \"file:///usr/share/diskprobe/README\.md\" \}\}#(\S+)",
                         ann.get("runbook_url", ""))
        if not m or m.group(1) != name.lower():
            problems.append(f"{name}: runbook_url is not the runbook base (external label diskprobe_runbook_base) "
                            f"and #{name.lower()}")
        elif not re.search(r"^###\s+" + name + r"\s*$", open(os.path.join(dash, "README.md")).read(), re.M):
            problems.append(f"{name}: runbook_url points to #{m.group(1)}, which dashboards/README.md has no section for")
        m = re.match(r"\{\{ or \$externalLabels\.grafana_url \"http://localhost:3000\" \}\}/d/([\w-]+)/", ann.get("dashboard_url", ""))
        if not m or m.group(1) not in ("diskprobe-overview", "diskprobe-fleet"):
            problems.append(f"{name}: dashboard_url is not a dashboard under the external label grafana_url")
        if "severity" not in r.get("labels", {}):
            problems.append(f"{name}: no severity label")
        text = ann.get("summary", "") + ann.get("description", "")
        # absent*() has no instance to name: it fires when there is none;
        # an alert for a whole class or backend names that instead.
        scope = r.get("labels", {}).get("scope")
        if scope in ("class", "backend"):
            if "$labels." + scope not in text:
                problems.append(f"{name}: annotations do not name the {scope}")
        elif "$labels.instance" not in text and not r["expr"].lstrip().startswith("absent"):
            problems.append(f"{name}: annotations do not name the instance")
report(not problems, f"alerts.yml, fleet_disk_rules.yml, fleet_rules.yml: {len(alerts)} alerts carry summary, description, runbook_url, dashboard_url, severity"
       + "".join("\n  " + x for x in problems))
readme = os.path.join(dash, "README.md")
has_anchor = os.path.exists(readme) and re.search(r"^#+\s+Alerts\s*$", open(readme).read(), re.M)
report(bool(has_anchor), "dashboards/README.md has the Alerts section the runbooks point to")

fires, quiet = set(), set()
for fname, allowed in (("alerts_test.yml", recorded),
                       ("fleet_rules_test.yml", recorded | join_metrics),
                       ("fleet_rules_sharded_test.yml", recorded)):
    with open(os.path.join(dash, fname)) as f:
        tests = yaml.safe_load(f)
    for t in tests.get("tests", []):
        for s in t.get("input_series", []):
            check_expr(f"{fname} {t.get('name')}", s["series"], allowed)
        for a in t.get("alert_rule_test", []):
            (fires if a.get("exp_alerts") else quiet).add(a["alertname"])
missing = [a for a in alerts if a not in fires or a not in quiet]
report(not missing, "alerts_test.yml, fleet_rules_test.yml, fleet_rules_sharded_test.yml test every alert firing and not firing"
       + "".join(f"\n  {a}: firing case {'ok' if a in fires else 'MISSING'}, "
                 f"quiet case {'ok' if a in quiet else 'MISSING'}" for a in missing))

# ---- Grafana provisioning -------------------------------------------------
prov = os.path.join(dash, "grafana-provisioning")
problems = []
docs = {}
for root, _, files in os.walk(prov):
    for fn in sorted(files):
        if fn.endswith((".yml", ".yaml")):
            p = os.path.join(root, fn)
            rel = os.path.relpath(p, prov)
            try:
                with open(p) as f:
                    docs[rel] = yaml.safe_load(f)
            except yaml.YAMLError as e:
                problems.append(f"{rel}: {e}")
            else:
                if docs[rel].get("apiVersion") != 1:
                    problems.append(f"{rel}: apiVersion is not 1")
ds_uids = {ds.get("uid") for d in docs.values() for ds in d.get("datasources", [])}
providers = [p for d in docs.values() for p in d.get("providers", [])]
if not providers or not all(p.get("options", {}).get("path") for p in providers):
    problems.append("no dashboard provider with options.path")
# The provider reads the dashboards where the Debian package puts them.
packaged = None
try:
    for line in open(os.path.join(top, "contrib", "packaging", "debian", "diskprobe.install")):
        src_glob, _, dest = line.strip().partition(" ")
        if src_glob == "dashboards/diskprobe-*.json":
            packaged = "/" + dest.strip().strip("/")
except OSError as e:
    problems.append(f"contrib/packaging/debian/diskprobe.install: {e}")
for p in providers:
    if p.get("options", {}).get("path") != packaged:
        problems.append(f"provider {p.get('name')}: path {p.get('options', {}).get('path')} is not the packaged {packaged}")
# One folder for dashboards and Grafana-managed rules: the rule groups name
# the provider's folder title (the alerting file format has no folder UID),
# and the UID the rules file and the README's folder-creation call give is
# the provider's folderUid.
folders = {(p.get("folder"), p.get("folderUid")) for p in providers}
if len(folders) != 1 or None in next(iter(folders)):
    problems.append(f"providers do not share one folder with a folderUid: {folders}")
else:
    title, fuid = next(iter(folders))
    for rel, d in docs.items():
        for g in d.get("groups", []):
            if g.get("folder") != title:
                problems.append(f"{rel} group {g.get('name')}: folder {g.get('folder')!r}, the dashboards are in {title!r}")
        if d.get("groups"):
            named = re.findall(r"folder UID: (\S+?)[,.]?\s", open(os.path.join(prov, rel)).read())
            if named != [fuid]:
                problems.append(f"{rel}: names folder UID {named}, the provider's is {fuid}")
    readme_text = open(os.path.join(dash, "README.md")).read()
    made = re.findall(r'/api/folders\b.*?"uid": *"([^"]+)", *"title": *"([^"]+)"', readme_text, re.S)
    if made != [(fuid, title)]:
        problems.append(f"dashboards/README.md creates folders {made}, want [({fuid!r}, {title!r})]")
contact_points = {c.get("name") for d in docs.values() for c in d.get("contactPoints", [])}
if not contact_points:
    problems.append("no contact point")
grafana_rules = [(rel, r) for rel, d in docs.items() for g in d.get("groups", []) for r in g.get("rules", [])]
titles = {r.get("title") for _, r in grafana_rules}
for want in ("DiskProbeStalled", "DiskProbeLatencyHigh"):
    if want not in titles:
        problems.append(f"no Grafana-managed rule {want}")
for rel, r in grafana_rules:
    where = f"{rel} {r.get('title')}"
    if r.get("title") not in alerts:
        problems.append(f"{where}: no Prometheus alert of that name")
    # Grafana's own runbook link key, to the installed README's section
    want_rb = "file:///usr/share/diskprobe/README.md#" + str(r.get("title")).lower()
    if r.get("annotations", {}).get("runbook_url") != want_rb:
        problems.append(f"{where}: runbook_url is not {want_rb}")
    if "runbook" in r.get("annotations", {}):
        problems.append(f"{where}: a 'runbook' annotation (Grafana links runbook_url)")
    refs = {q.get("refId") for q in r.get("data", [])}
    if r.get("condition") not in refs:
        problems.append(f"{where}: condition {r.get('condition')} is not a refId")
    if r.get("dashboardUid") and r.get("panelId") not in dash_uids.get(r["dashboardUid"], set()):
        problems.append(f"{where}: dashboard {r['dashboardUid']} has no panel {r.get('panelId')}")
    for q in r.get("data", []):
        if q.get("datasourceUid") == "__expr__":
            continue
        if q.get("datasourceUid") not in ds_uids:
            problems.append(f"{where}: datasourceUid {q.get('datasourceUid')} is not provisioned")
        expr = q.get("model", {}).get("expr")
        if not expr:
            problems.append(f"{where}: query {q.get('refId')} has no expr")
            continue
        exprs.append((where, expr))
        check_expr(where, expr)
report(not problems, f"grafana-provisioning: {len(docs)} files parse; provider, contact point, "
       f"{len(grafana_rules)} rules consistent" + "".join("\n  " + x for x in problems))

# ---- the catalogue above against the README's ----------------------------
problems = []
try:
    text = open(os.path.join(top, "README.md")).read()
    sec = re.search(r"^## Metric catalogue\n(.*?)(?=^## )", text, re.M | re.S)
except OSError as e:
    sec, problems = None, [f"README.md: {e}"]
if sec:
    names = set(re.findall(r"\b(collectd_diskprobe_\w+)", sec.group(1)))
    for name in sorted(names):
        if name not in catalogue:
            problems.append(f"README lists {name}, the catalogue here does not")
    for name, value in re.findall(r'`(collectd_diskprobe_\w+)\{type="([^"]+)"\}`', sec.group(1)):
        if value.isupper() or name not in catalogue:
            continue  # a placeholder (PROBE, RULE, DISK), or reported above
        if value not in catalogue[name] and "<any>" not in catalogue[name]:
            problems.append(f"README: {name}{{type=\"{value}\"}}, the catalogue here has "
                            f"{' '.join(sorted(catalogue[name]))}")
    for m in re.finditer(r"`(\w+)-RULE` \(([^)]*)\)", sec.group(1)):
        for rule in re.split(r",\s*", m.group(2)):
            if rule not in catalogue.get("collectd_diskprobe_" + m.group(1), set()):
                problems.append(f"README: rule {rule} of {m.group(1)} is not a type in the catalogue here")
elif not problems:
    problems.append("README.md has no '## Metric catalogue' section")
report(not problems, f"README.md's metric catalogue ({len(names) if sec else 0} names) is in the catalogue here"
       + "".join("\n  " + x for x in problems))

report(not catalogue_problems, "every metric name and type label value is in the catalogue"
       + "".join("\n  " + x for x in catalogue_problems))

with open(exprs_out, "w") as f, open(exprs_out + ".idx", "w") as idx:
    f.write("# generated by tests/shell/dashboards.sh\ngroups:\n  - name: dashboard-expressions\n    rules:\n")
    for i, (where, expr) in enumerate(exprs):
        f.write(f"      - record: dashboards_expr_{i}\n        expr: {json.dumps(expr)}\n")
        idx.write(f"dashboards_expr_{i}: {where}: {json.dumps(expr)}\n")
print(f"INFO: {len(exprs)} expressions written for promtool")
PYTHON
py_rc=$?
while IFS= read -r line; do
	case $line in
	PASS:*) PASSED=$((PASSED + 1)) ;;
	FAIL:*) FAILED=$((FAILED + 1)) ;;
	esac
	echo "$line"
done <"$tmp/py.log"
if [ $py_rc != 0 ]; then
	fail "python checks crashed (exit $py_rc)"
fi

# ---- 3. dashboard and Grafana expressions through promtool's parser --------
if [ -s "$tmp/exprs.yml" ]; then
	n=$(grep -c '^      - record:' "$tmp/exprs.yml")
	if promtool check rules "$tmp/exprs.yml" >"$tmp/exprs.log" 2>&1; then
		pass "promtool parses all $n dashboard and Grafana alert expressions"
	else
		cat "$tmp/exprs.log"
		# promtool names the failing rule: say which expression it is.
		grep -o 'dashboards_expr_[0-9]*' "$tmp/exprs.log" | sort -u |
			while IFS= read -r r; do grep "^$r: " "$tmp/exprs.yml.idx"; done
		fail "promtool check rules on the dashboard expressions"
	fi
else
	fail "no dashboard expressions extracted"
fi

echo "$PASSED passed, $FAILED failed"
[ "$PASSED" -gt 0 ] || die "no check ran"
finish dashboards
