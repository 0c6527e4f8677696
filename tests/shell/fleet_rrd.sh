#!/bin/bash
# fleet_rrd.sh - `diskprobe fleet` and `diskprobe compare` on a small
# synthetic central RRD tree made with rrdtool as collectd's rrdtool plugin
# lays it out (3 hosts; class SSD-A: one disk per host, h3's 4x slower in
# every figure; class HDD-B: one disk on h1): fleet ranks h3's disk first
# with its ratios near 4, the lone HDD at 1 with class size 1, in text,
# JSON and a self-contained HTML page; compare says "different" for h3
# against h1 with the true ratio inside its interval and "within noise"
# for h1 against h2 and for a side against itself; and compare on recorded
# rounds of a quiet disk (tests/fixtures/health/ssd-like.jsonl.gz) and a
# busy shared one (tests/fixtures/compare): each against itself has no row
# "different", against itself 3x slower the ratios lie in their intervals
# and the rows say "different" (the busy disk's: the robust ones); a loop
# device throttled to 500 IOPS against itself unthrottled
# (tests/fixtures/compare): compare's first line names the IOPS ratio at
# QD32, not the QD1 p50 ratio (1.0); fleet and compare print figures for
# people (15,036, µs/ms, MB/s; no exponent). Fail-slow:
# a host's four disks over 4 hours, one 3x slower, is flagged, no other. Bad usage,
# a missing tree and a bad recording exit 2 with one line.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd rrdtool
need_cmd python3
FAILED=0
d=$(make_tmpdir)
dp="$top_builddir/src/cli/diskprobe"
root="$d/rrd"

# The tree: 90 rows at a 10 s step ending now, with +-10 % noise (a fixed
# seed). gen.py writes rrdtool's create and update arguments, one file per
# line: PATH<TAB>DS-SPECS<TAB>UPDATES.
python3 - "$root" >"$d/gen.txt" <<'PY'
import random, sys, time
root = sys.argv[1]
rnd = random.Random(42)
now = int(time.time())
start = now - 900
#      host  target disk  class    p50 s   qd32 IOPS  seq bytes/s
disks = [("h1", "fast", "sda", "SSD-A", 1e-4, 60000, 5e8),
         ("h2", "fast", "sda", "SSD-A", 1e-4, 60000, 5e8),
         ("h3", "fast", "sda", "SSD-A", 4e-4, 15000, 1.25e8),
         ("h1", "bulk", "sdb", "HDD-B", 5e-3, 400, 1.5e8)]
def series(level):
    return [level * (1 + 0.1 * (rnd.random() * 2 - 1)) for _ in range(90)]
def out(path, ds, rows):
    ups = " ".join("%d:%s" % (start + 10 * (i + 1), ":".join("%.6g" % v for v in r))
                   for i, r in enumerate(rows))
    print("%s\t%s\t%s" % (path, " ".join("DS:%s:GAUGE:20:0:U" % n for n in ds), ups))
lat = ["min", "mean", "p50", "p90", "p99", "p999", "max"]
for host, tgt, disk, cls, p50, qd32, seq in disks:
    t = "%s/%s/diskprobe-%s" % (root, host, tgt)
    dev = "%s/%s/diskprobe-dev-%s" % (root, host, disk)
    p = series(p50)
    out(t + "/probe_latency-randread-qd1.rrd", lat,
        [[v * 0.5, v * 1.2, v, v * 1.5, v * 3, v * 5, v * 9] for v in p])
    out(t + "/operations_per_second-randread-qd1.rrd", ["value"],
        [[1 / (v * 1.2)] for v in p])
    q = series(qd32)
    out(t + "/operations_per_second-randread-qd32.rrd", ["value"], [[v] for v in q])
    out(t + "/probe_latency-randread-qd32.rrd", lat,
        [[32 / v * k for k in (0.3, 1, 0.9, 1.5, 3, 5, 9)] for v in q])
    out(t + "/bytes_per_second-seqread.rrd", ["value"], [[v] for v in series(seq)])
    out(t + "/target_device-%s.rrd" % disk, ["value"], [[1]] * 90)
    out(dev + "/disk_info-%s.rrd" % cls, ["value"], [[1e12]] * 90)
    out(dev + "/bytes_per_second-read.rrd", ["value"], [[v] for v in series(2e7)])
    out(dev + "/operations_per_second-read.rrd", ["value"], [[v] for v in series(200)])
    out(dev + "/latency-read_await.rrd", ["value"], [[v] for v in series(p50 * 2)])
PY
# make_tree LIST STEP SECONDS: the files of LIST, STEP seconds a row, the
# first row SECONDS ago
make_tree() {
  local start=$(($(date +%s) - $3)) path ds ups
  while IFS=$'\t' read -r path ds ups; do
    mkdir -p "$(dirname "$path")"
    # shellcheck disable=SC2086 # word splitting wanted: one argument each
    rrdtool create "$path" --step "$2" --start "$start" $ds RRA:AVERAGE:0.5:1:1200 &&
      rrdtool update "$path" $ups || die "rrdtool could not make $path"
  done <"$1"
}
make_tree "$d/gen.txt" 10 900
n=$(find "$root" -name '*.rrd' | wc -l)
[ "$n" = 40 ] && pass "synthetic tree: 40 RRD files" || die "synthetic tree: $n RRD files, want 40"

# ---- fleet ----
"$dp" fleet --since 1h "$root" >"$d/fleet.txt" 2>"$d/fleet.err" || fail "fleet exited $?: $(cat "$d/fleet.err")"
cat "$d/fleet.txt"
first=$(awk 'NR == 2 { print $2 "/" $3 " " $4 " " $5 " " $6 }' "$d/fleet.txt")
[ "$first" = "h3/fast sda SSD-A 3" ] && pass "fleet text: h3's disk first, class SSD-A of 3" ||
  fail "fleet text: first row '$first', want 'h3/fast sda SSD-A 3'"
# figures for people: IOPS grouped (15,036), latency in µs or ms, MB/s; no
# "%g" exponent (1.504e+04)
grep -Eq '^1 .* [0-9]{1,3}(\.[0-9]+)? (µs|ms) \(x[0-9.]+\) +[0-9]{1,3},[0-9]{3} \(x[0-9.]+\) +[0-9.]+ MB/s \(x' "$d/fleet.txt" &&
  ! grep -Eq '[0-9]e[-+][0-9]' "$d/fleet.txt" && pass "fleet text: figures for people (µs/ms, 15,036, MB/s), no exponent" ||
  fail "fleet text: figures not formatted for people"
"$dp" fleet --since 1h --format json "$root" >"$d/fleet.json" || fail "fleet --format json exited $?"
py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $1" "$d/fleet.json"; }
py 'assert [r["host"] for r in d["disks"]][0] == "h3", d' &&
  pass "fleet json: h3 ranked first" || fail "fleet json: h3 not first"
for f in qd1_p50_s qd32_iops seq_bytes_per_s; do
  s=$(py "print(d['disks'][0]['figures']['$f']['slowdown'])")
  num_between "$s" 3.4 4.6 && pass "fleet json: h3's $f slowdown $s (4x slower)" ||
    fail "fleet json: h3's $f slowdown $s, want about 4"
done
w=$(py "print(max(r['worst'] for r in d['disks'][1:]))")
num_cmp "$w" '<' 1.3 && pass "fleet json: every other disk within 1.3x of its class (worst $w)" ||
  fail "fleet json: another disk at ${w}x its class"
hdd=$(py "r=[r for r in d['disks'] if r['class']=='HDD-B'][0]; print(r['class_targets'], r['worst'], r['disk'], r['target'])")
[ "$hdd" = "1 1 sdb bulk" ] && pass "fleet json: the lone HDD-B disk is its own median (1, class of 1)" ||
  fail "fleet json: HDD-B row '$hdd'"
age=$(py "print(d['disks'][0]['age_s'])")
num_between "$age" 0 120 && pass "fleet json: age of the newest value ${age}s" || fail "fleet json: age $age"
nfs=$(py "print(len(d['failslow']), sum(r['flagged'] for r in d['failslow']))")
[ "$nfs" = "4 0" ] && pass "fleet json: fail-slow ran over 4 disks of the device view, none flagged (15 min)" ||
  fail "fleet json: fail-slow '$nfs', want '4 0'"
"$dp" fleet --since 1h --format html --out "$d/fleet.html" "$root" || fail "fleet --format html exited $?"
grep -q '<tr class="bad"><td>1</td><td>h3</td>' "$d/fleet.html" &&
  pass "fleet html: h3 first, marked bad" || fail "fleet html: no bad first row for h3"
grep -Eq '[0-9]e[-+][0-9]' "$d/fleet.html" && fail "fleet html: a figure with an exponent" ||
  pass "fleet html: no figure with an exponent"
grep -Eqi '(src|href)=|url\(' "$d/fleet.html" && fail "fleet html: refers to an external asset" ||
  pass "fleet html: self-contained"
[ "$(grep -c '^<tr class=' "$d/fleet.html")" = 4 ] && pass "fleet html: 4 rows" || fail "fleet html: not 4 rows"

# ---- compare over the tree ----
cmp_json() { # cmp_json OUT A B [more flags]: compare --format json into OUT
  local out=$1
  shift
  "$dp" compare --rrd "$root" --since 1h --format json "$@" >"$out" 2>"$d/cmp.err" ||
    fail "compare $* exited $?: $(cat "$d/cmp.err")"
}
verdicts() { python3 -c "import json,sys; print(' '.join(sorted(set(r['verdict'] for r in json.load(open(sys.argv[1]))['rows']))))" "$1"; }
cmp_json "$d/c31.json" h1/fast h3/fast
python3 - "$d/c31.json" <<'PY' && pass "compare h1/fast h3/fast: every row different, ratio inside its interval" || fail "compare h1/fast h3/fast"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    lo, hi = r["ci95"]
    assert r["verdict"] == "different" and lo <= r["ratio"] <= hi, r
    want = 4 if r["unit"] == "s" else 0.25  # latency 4x, IOPS and MB/s /4
    assert abs(r["ratio"] / want - 1) < 0.15, r
PY
cmp_json "$d/c12.json" h1/fast h2
v=$(verdicts "$d/c12.json")
[ "$v" = "within noise" ] && pass "compare h1/fast h2 (equal disks): within noise" || fail "compare h1/fast h2: '$v'"
cmp_json "$d/ccls.json" class:SSD-A class:SSD-A
v=$(verdicts "$d/ccls.json")
[ "$v" = "within noise" ] && pass "compare class:SSD-A against itself: within noise" || fail "compare class:SSD-A itself: '$v'"
"$dp" compare --rrd "$root" --since 1h h1/fast h3/fast >"$d/c31.txt" || fail "compare text exited $?"
cat "$d/c31.txt"
sed -n '/^QD1 /,/^QD32 /p' "$d/c31.txt" | grep -Eq '^  latency p50 +[0-9.]+ µs +[0-9.]+ µs +[34]\.[0-9]+ .* different$' &&
  pass "compare text: the QD1 p50 row, in µs, says different" || fail "compare text: no different QD1 p50 row"
head -1 "$d/c31.txt" | grep -Eq '^[^:]+: [34]\.[0-9]+x (lower|higher) on B \(' &&
  pass "compare text: leads with a separation ($(head -1 "$d/c31.txt"))" || fail "compare text: first line '$(head -1 "$d/c31.txt")'"

# ---- compare over recorded rounds ----
# slow3 IN OUT: the recording with every probe 3x slower (latency x3, IOPS
# and bytes/s /3)
slow3() {
  python3 - "$1" >"$2" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "probe" in o:
        for k in ("iops", "bytes_per_second"):
            if o.get(k) is not None:
                o[k] /= 3
        o["latency_s"] = {k: None if v is None else v * 3 for k, v in o["latency_s"].items()}
    print(json.dumps(o))
PY
}
# rows FILE: "figure:verdict" of every row; inside FILE: 1 when every ratio
# with an interval lies in it
rows() { python3 -c "import json,sys; print(' '.join(r['figure'] + ':' + r['verdict'] for r in json.load(open(sys.argv[1]))['rows']))" "$1"; }
inside() { python3 -c "import json,sys; print(int(all(r['ci95'][0] <= r['ratio'] <= r['ci95'][1] for r in json.load(open(sys.argv[1]))['rows'] if r['ci95'][0] is not None)))" "$1"; }
# a quiet disk (the health fixtures: 300 rounds) and a busy shared one
# (tests/fixtures/compare: 310 rounds with stalls of seconds)
zcat "$top_srcdir/tests/fixtures/health/ssd-like.jsonl.gz" | head -900 >"$d/quiet.jsonl"
zcat "$top_srcdir/tests/fixtures/compare/busy-vda-file.jsonl.gz" >"$d/busy.jsonl"
for rec in quiet busy; do
  slow3 "$d/$rec.jsonl" "$d/$rec-slow.jsonl"
  "$dp" compare --format json "$d/$rec.jsonl" "$d/$rec.jsonl" >"$d/$rec-self.json" || fail "compare $rec itself exited $?"
  r=$(rows "$d/$rec-self.json")
  [[ $r != *different* ]] && pass "compare $rec recording vs itself: no row different ($r)" ||
    fail "compare $rec recording vs itself: $r"
  "$dp" compare --format json "$d/$rec.jsonl" "$d/$rec-slow.jsonl" >"$d/$rec-slow.json" || fail "compare $rec 3x exited $?"
  r=$(rows "$d/$rec-slow.json")
  echo "  $rec vs 3x slower: $r"
  [ "$(inside "$d/$rec-slow.json")" = 1 ] && pass "compare $rec vs 3x slower: every ratio inside its interval" ||
    fail "compare $rec vs 3x slower: a ratio outside its interval"
done
r=$(rows "$d/quiet-slow.json")
[ "$(tr ' ' '\n' <<<"$r" | grep -vc ':different$')" = 0 ] &&
  pass "compare quiet recording vs 3x slower: every row different" || fail "compare quiet vs 3x slower: $r"
r=$(rows "$d/busy-slow.json")
for f in qd1_p50_s qd1_iops qd32_iops seq_avg_bytes_per_s; do
  [[ " $r " == *" $f:different "* ]] && pass "compare busy recording vs 3x slower: $f different" ||
    fail "compare busy vs 3x slower: $f not different ($r)"
done
n=$(json_get "$d/quiet-slow.json" 'd["rows"][0]["rounds_a"]')
[ "$n" = 300 ] && pass "compare recording: 300 rounds read" || fail "compare recording: $n rounds, want 300"
n=$(json_get "$d/busy-self.json" 'd["rows"][4]["rounds_a"]')
[ "$n" = 304 ] && pass "compare busy recording: 304 seqread rounds (6 stalled or that completed nothing left out)" ||
  fail "compare busy recording: $n seqread rounds"

# a volume throttled to 500 IOPS against itself unthrottled
# (tests/fixtures/compare): QD1 p50 the same, IOPS 23x (QD1) and 97x (QD32)
# lower; compare leads with the IOPS at QD32, not the p50 ratio
fx="$top_srcdir/tests/fixtures/compare"
zcat "$fx/loop-unthrottled.jsonl.gz" >"$d/unthrottled.jsonl"
zcat "$fx/loop-throttled-500iops.jsonl.gz" >"$d/throttled.jsonl"
"$dp" compare "$d/unthrottled.jsonl" "$d/throttled.jsonl" >"$d/thr.txt" || fail "compare throttled exited $?"
cat "$d/thr.txt"
head -1 "$d/thr.txt" | grep -Eq '^IOPS at QD32: (9[0-9]|1[01][0-9])\.[0-9]x lower on B \(4[0-9]{2} vs 4[0-9],[0-9]{3} on A\)$' &&
  pass "compare throttled: the first line names the IOPS ratio ($(head -1 "$d/thr.txt"))" ||
  fail "compare throttled: first line '$(head -1 "$d/thr.txt")'"
sed -n 2p "$d/thr.txt" | grep -q '^IOPS at QD1: 2[0-9]\.[0-9]x lower on B' &&
  pass "compare throttled: then the IOPS at QD1" || fail "compare throttled: second line '$(sed -n 2p "$d/thr.txt")'"
sed -n '/^QD1 /,/^QD32 /p' "$d/thr.txt" | grep -Eq '^  latency mean .* different$' &&
  sed -n '/^QD1 /,/^QD32 /p' "$d/thr.txt" | grep -Eq '^  latency p50 .* within noise$' &&
  pass "compare throttled: QD1 mean latency different, p50 within noise (both shown)" ||
  fail "compare throttled: QD1 latency rows"
"$dp" compare --format json "$d/unthrottled.jsonl" "$d/throttled.jsonl" >"$d/thr.json" || fail "compare throttled json exited $?"
python3 - "$d/thr.json" <<'PY' && pass "compare throttled json: separations lead with qd32_iops; rows keep their order, QD32 latency appended" ||
import json, sys
d = json.load(open(sys.argv[1]))
s = d["separations"]
assert s[0]["figure"] == "qd32_iops" and s[0]["b_is"] == "lower" and s[0]["verdict"] == "different" and 80 < s[0]["factor"] < 120, s[0]
figs = [r["figure"] for r in d["rows"]]
assert figs == ["qd1_p50_s", "qd1_mean_s", "qd1_iops", "qd32_iops", "seq_min_bytes_per_s", "seq_avg_bytes_per_s",
                "seq_max_bytes_per_s", "qd32_p50_s", "qd32_mean_s"], figs
p50 = d["rows"][0]
assert p50["verdict"] == "within noise" and 0.9 < p50["ratio"] < 1.1, p50
for r in d["rows"]:
    assert isinstance(r["a"], float) or isinstance(r["a"], int), r  # machine numbers
PY
  fail "compare throttled json: $(cat "$d/thr.json" | head -40)"

# ---- fail-slow over a host's device view ----
# h4: four disks of one host for 4 hours at a 60 s step, the same load, sde's
# await 3x its peers' from the start: the detector flags sde and only sde.
python3 - "$d/rrd2" >"$d/gen2.txt" <<'PY'
import random, sys, time
root = sys.argv[1]
rnd = random.Random(7)
now = int(time.time())
start = now - 4 * 3600
def out(path, rows):
    ups = " ".join("%d:%.6g" % (start + 60 * (i + 1), v) for i, v in enumerate(rows))
    print("%s\tDS:value:GAUGE:120:0:U\t%s" % (path, ups))
def noisy(level):
    return [level * (1 + 0.1 * (rnd.random() * 2 - 1)) for _ in range(240)]
load = [2e7 * (1 + 0.5 * ((i // 20) % 2)) for i in range(240)]
for disk in ["sdc", "sdd", "sde", "sdf"]:
    dev = "%s/h4/diskprobe-dev-%s" % (root, disk)
    out(dev + "/bytes_per_second-read.rrd", [x * (1 + 0.05 * rnd.random()) for x in load])
    out(dev + "/bytes_per_second-write.rrd", noisy(1e6))
    out(dev + "/operations_per_second-read.rrd", noisy(200))
    out(dev + "/operations_per_second-write.rrd", noisy(20))
    out(dev + "/latency-read_await.rrd", noisy(3e-3 if disk == "sde" else 1e-3))
    out(dev + "/latency-write_await.rrd", noisy(3e-3 if disk == "sde" else 1e-3))
t = "%s/h4/diskprobe-data" % root
out(t + "/target_device-sdc.rrd", [1] * 240)
out(t + "/operations_per_second-randread-qd32.rrd", noisy(50000))
PY
make_tree "$d/gen2.txt" 60 $((4 * 3600))
"$dp" fleet --since 5h --format json "$d/rrd2" >"$d/fs.json" || fail "fleet on rrd2 exited $?"
fs=$(python3 -c "import json,sys; print(' '.join('%s:%s' % (r['disk'], r['flagged']) for r in json.load(open(sys.argv[1]))['failslow']))" "$d/fs.json")
[ "$fs" = "sdc:False sdd:False sde:True sdf:False" ] &&
  pass "fleet: fail-slow over h4's 4 h of device view flags sde (3x its peers' await) and no other" ||
  fail "fleet: fail-slow on h4: '$fs'"
"$dp" fleet --since 5h "$d/rrd2" | grep -q '^fail-slow: h4 sde flagged at ' &&
  pass "fleet text: the flagged disk is named" || fail "fleet text: no fail-slow line for h4 sde"

# ---- refusals ----
"$dp" fleet "$d/nowhere" 2>"$d/e1"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$d/e1")" = 1 ] && grep -q "diskprobe fleet: $d/nowhere: " "$d/e1" &&
  pass "fleet on a missing tree: exit 2, one line" || fail "fleet on a missing tree: exit $rc, $(cat "$d/e1")"
"$dp" compare --rrd "$root" h1/fast nohost 2>"$d/e2" >/dev/null
rc=$?
[ $rc = 2 ] && grep -q "nohost: no such HOST" "$d/e2" && pass "compare: unknown side, exit 2" ||
  fail "compare unknown side: exit $rc, $(cat "$d/e2")"
"$dp" fleet --since 0 "$root" 2>/dev/null
[ $? = 2 ] && pass "fleet --since 0: exit 2" || fail "fleet --since 0 accepted"
echo '{"target":"x","probe":"seqread","round":1,"iops":-1,"latency_s":{"p50":0.001,"mean":0.001}}' >"$d/bad.jsonl"
"$dp" compare "$d/quiet.jsonl" "$d/bad.jsonl" 2>"$d/e3" >/dev/null
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$d/e3")" = 1 ] && grep -q "^diskprobe compare: $d/bad.jsonl: line 1: \"iops\"" "$d/e3" &&
  pass "compare: an impossible value in a recording, exit 2, one line naming file and line" ||
  fail "compare on a bad recording: exit $rc, $(cat "$d/e3")"
"$dp" compare onlyone 2>/dev/null
[ $? = 2 ] && pass "compare with one side: exit 2" || fail "compare with one side accepted"

finish fleet_rrd
