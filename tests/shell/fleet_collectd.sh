#!/bin/bash
# fleet_collectd.sh - `diskprobe fleet` on a real collectd's RRD DataDir:
# the plugin probes a loop device (the default probe set) for a few rounds,
# collectd's rrdtool plugin writes the files, and fleet lists the target
# with its disk, finite positive figures and a fresh age, in text and JSON;
# `diskprobe compare` of the target against itself says "within noise".
set -u
. "$(dirname "$0")/lib.sh"
need root loop collectd
need_cmd python3
FAILED=0
d=$(make_tmpdir)
dev=$(make_loop 128 "$d" random) || exit
dp="$top_builddir/src/cli/diskprobe"
collectd_conf "$d" 2 <<CONF
  Splay false
  DutyCycle 100
  <Target "loopdisk">
    Device "$dev"
    ProbeInterval 2
  </Target>
CONF
collectd_check "$d" || { cat "$d/check.out"; die "collectd -T refused the config"; }
rm -rf "$d/rrd"/*
collectd_run "$d" 16 || fail "collectd exited with status $?"

"$dp" fleet --since 10min "$d/rrd" >"$d/fleet.txt" 2>&1 || fail "fleet exited $?: $(cat "$d/fleet.txt")"
cat "$d/fleet.txt"
grep -Eq "^1 +$COLLECTD_HOST +loopdisk +${dev##*/} " "$d/fleet.txt" &&
  pass "fleet text lists the target loopdisk on ${dev##*/}" || fail "fleet text: no row for loopdisk on ${dev##*/}"
"$dp" fleet --since 10min --format json "$d/rrd" >"$d/fleet.json" || fail "fleet --format json exited $?"
python3 - "$d/fleet.json" "${dev##*/}" <<'PY' && pass "fleet json: one target, figures finite and positive, age under a minute" || fail "fleet json: $(cat "$d/fleet.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["disks"]) == 1, d
r = d["disks"][0]
assert r["target"] == "loopdisk" and r["disk"] == sys.argv[2], r
for f in r["figures"].values():
    assert f["value"] is not None and f["value"] > 0, r
    assert abs(f["slowdown"] - 1) < 1e-9, r  # alone in its class
assert 0 <= r["age_s"] < 60, r
PY
"$dp" compare --rrd "$d/rrd" --since 10min --format json "$COLLECTD_HOST/loopdisk" "$COLLECTD_HOST" >"$d/cmp.json" ||
  fail "compare exited $?"
v=$(python3 -c "import json,sys; print(' '.join(sorted(set(r['verdict'] for r in json.load(open(sys.argv[1]))['rows']))))" "$d/cmp.json")
[ "$v" = "within noise" ] && pass "compare: the target against its host: within noise" || fail "compare: '$v'"

finish fleet_collectd 'tail -20 "$d/collectd.log"'
