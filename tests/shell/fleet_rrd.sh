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
# a missing tree and a bad recording exit 2 with one line. A hostile copy
# of the tree: host names with control characters shown escaped in text
# (kept in JSON, escaped in HTML); truncated and garbage RRD files skipped
# with a note on stderr and in the reports, the rest reported (exit 0), a
# compare side or a tree with nothing readable exit 2; FIFOs and a device
# node skipped unopened (each command under `timeout 20`: a FIFO used to
# block them forever); failslow's csv reader refuses a FIFO at once and
# prints a host name escaped; replay a target name escaped.
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

# ---- a hostile tree: what anyone who can name a host or drop a file in
# the central tree can put there ----
# Names: a copy of the tree with a host named with a newline, terminal
# escapes, BEL and DEL, and one named with HTML's special characters.
hn="$d/names"
cp -a "$root" "$hn"
evil=$'ev\nil\e[31m\e]0;title\a\x7f'
cp -a "$root/h1" "$hn/$evil"
html='h"<b>&'"'"
cp -a "$root/h2" "$hn/$html"
timeout 20 "$dp" fleet --since 1h "$hn" >"$d/hn.txt" 2>"$d/hn.err"
rc=$?
cat -v "$d/hn.txt" "$d/hn.err"
grep -Fq 'ev\nil\x1b[31m\x1b]0;title\a\x7f' "$d/hn.txt" &&
  pass "fleet text: a host name's newline, escapes, BEL and DEL shown escaped" || fail "fleet text: the host name not escaped"
[ $rc = 0 ] && ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$d/hn.txt" "$d/hn.err" &&
  pass "fleet: no control character printed raw" || fail "fleet: exit $rc, or a control character printed raw"
[ "$(grep -c '^[0-9]\+ ' "$d/hn.txt")" = 7 ] && pass "fleet text: 7 rows, one line each" ||
  fail "fleet text: $(grep -c '^[0-9]\+ ' "$d/hn.txt") rows starting a line, want 7"
timeout 20 "$dp" fleet --since 1h --format json "$hn" >"$d/hn.json" &&
  python3 -c 'import json, sys; assert sys.argv[2] in [r["host"] for r in json.load(open(sys.argv[1]))["disks"]]' "$d/hn.json" "$evil" &&
  pass "fleet json: the host name as it is (JSON escapes it)" || fail "fleet json: the host name not kept"
timeout 20 "$dp" fleet --since 1h --format html --out "$d/hn.html" "$hn" &&
  grep -Fq '<td>h&quot;&lt;b&gt;&amp;&#39;</td>' "$d/hn.html" && ! grep -Fq '<b>&' "$d/hn.html" &&
  pass "fleet html: a host name's quotes, <, > and & escaped" || fail "fleet html: the host name not escaped"

# Corrupt files: that tree with h1/bulk's seqread file cut short, h3's QD32
# latency file not an RRD at all and a target (h5/dead) whose every file
# is garbage.
hx="$d/hostile"
cp -a "$hn" "$hx"
cut="$hx/h1/diskprobe-bulk/bytes_per_second-seqread.rrd"
head -c 2000 "$root/h1/diskprobe-bulk/bytes_per_second-seqread.rrd" >"$cut"
echo "not an RRD file" >"$hx/h3/diskprobe-fast/probe_latency-randread-qd32.rrd"
mkdir -p "$hx/h5/diskprobe-dead"
for f in probe_latency-randread-qd1 operations_per_second-randread-qd1 operations_per_second-randread-qd32 \
  probe_latency-randread-qd32 bytes_per_second-seqread; do
  head -c 300 /dev/urandom >"$hx/h5/diskprobe-dead/$f.rrd"
done
timeout 20 "$dp" fleet --since 1h "$hx" >"$d/hx.txt" 2>"$d/hx.err"
rc=$?
cat -v "$d/hx.txt" "$d/hx.err"
[ $rc = 0 ] && pass "fleet on a tree with corrupt files: exit 0" || fail "fleet on a tree with corrupt files: exit $rc"
grep -Eq "^diskprobe fleet: $cut: skipped: .+" "$d/hx.err" &&
  grep -Eq "^diskprobe fleet: $hx/h5/diskprobe-dead/probe_latency-randread-qd1.rrd: skipped: .+" "$d/hx.err" &&
  pass "fleet: the truncated and the garbage files named on stderr with librrd's error" ||
  fail "fleet: no line naming the corrupt files"
grep -q '^skipped: .*/h1/diskprobe-bulk/bytes_per_second-seqread.rrd: ' "$d/hx.txt" &&
  pass "fleet text: the report lists the skipped files" || fail "fleet text: the report does not list the skipped files"
for h in h1 h2 h3 h5; do
  grep -q "^[0-9]\+ \+$h " "$d/hx.txt" || fail "fleet on a tree with corrupt files: no row for $h"
done
[ "$(grep -c '^[0-9]\+ ' "$d/hx.txt")" = 8 ] && pass "fleet text: 8 rows" ||
  fail "fleet text: $(grep -c '^[0-9]\+ ' "$d/hx.txt") rows, want 8"
timeout 20 "$dp" fleet --since 1h --format json "$hx" >"$d/hx.json" 2>/dev/null
rc=$?
python3 - "$d/hx.json" "$cut" <<'PY' && [ $rc = 0 ] && pass "fleet json: exit 0, the skipped files with why" || fail "fleet json on a tree with corrupt files: exit $rc"
import json, sys
d = json.load(open(sys.argv[1]))
sk = {s["file"]: s["why"] for s in d["skipped"]}
assert sys.argv[2] in sk and sk[sys.argv[2]], sk
PY
timeout 20 "$dp" fleet --since 1h --format html --out "$d/hx.html" "$hx" 2>/dev/null
rc=$?
[ $rc = 0 ] && grep -Fq "$cut" "$d/hx.html" && grep -qi "skipped" "$d/hx.html" &&
  pass "fleet html: the skipped files listed" || fail "fleet html: exit $rc, no skipped files"
timeout 20 "$dp" compare --rrd "$hx" --since 1h h1/bulk h3/fast >/dev/null 2>"$d/hxc.err"
rc=$?
[ $rc = 0 ] && grep -q "$cut: skipped: " "$d/hxc.err" &&
  pass "compare --rrd: corrupt files skipped with a note (exit 0)" || fail "compare --rrd with corrupt files: exit $rc, $(cat "$d/hxc.err")"
timeout 20 "$dp" compare --rrd "$hx" --since 1h h1/fast h5/dead >/dev/null 2>"$d/hxc.err"
rc=$?
[ $rc = 2 ] && [ "$(tail -1 "$d/hxc.err")" = "diskprobe compare: h5/dead: no readable RRD file (5 skipped)" ] &&
  pass "compare --rrd: a side with no readable file, exit 2 naming it" ||
  fail "compare --rrd, a side of garbage: exit $rc, $(cat "$d/hxc.err")"
mkdir -p "$d/dead" && cp -a "$hx/h5" "$d/dead/"
timeout 20 "$dp" fleet "$d/dead" >/dev/null 2>"$d/hxd.err"
rc=$?
[ $rc = 2 ] && tail -1 "$d/hxd.err" | grep -q "^diskprobe fleet: $d/dead: no readable RRD file" &&
  pass "fleet on a tree with no readable file: exit 2" || fail "fleet, nothing readable: exit $rc, $(cat "$d/hxd.err")"

# FIFOs and device nodes: the same tree with a FIFO in place of h2's QD32
# IOPS file and as a target_device file (the scan reads those), and a
# character device (/dev/zero's numbers; root only) for h3's seqread file
hf="$d/fifo"
cp -a "$hx" "$hf"
fifo="$hf/h2/diskprobe-fast/operations_per_second-randread-qd32.rrd"
rm "$fifo" && mkfifo "$fifo" && mkfifo "$hf/h2/diskprobe-fast/target_device-sdq.rrd" || die "mkfifo"
if [ "$(id -u)" = 0 ]; then
  rm "$hf/h3/diskprobe-fast/bytes_per_second-seqread.rrd" &&
    mknod "$hf/h3/diskprobe-fast/bytes_per_second-seqread.rrd" c 1 5 || die "mknod"
fi
timeout 20 "$dp" fleet --since 1h "$hf" >"$d/hf.txt" 2>"$d/hf.err"
rc=$?
[ $rc = 0 ] && pass "fleet on a tree with FIFOs and a device node: exit 0" ||
  fail "fleet on a tree with FIFOs: exit $rc (124: timed out)"
grep -Fq "$fifo: skipped: not a regular file (a FIFO)" "$d/hf.err" &&
  grep -Fq "$hf/h2/diskprobe-fast/target_device-sdq.rrd: skipped: not a regular file (a FIFO)" "$d/hf.err" &&
  pass "fleet: the FIFOs named on stderr as skipped, not a regular file" || fail "fleet: no line naming the FIFOs"
if [ "$(id -u)" = 0 ]; then
  grep -Fq "$hf/h3/diskprobe-fast/bytes_per_second-seqread.rrd: skipped: not a regular file (a character device)" "$d/hf.err" &&
    pass "fleet: the device node skipped unopened" || fail "fleet: no line naming the device node"
fi
grep -Eq '^[0-9]+ +h2 +fast .*[0-9] (µs|ms) \(x' "$d/hf.txt" && [ "$(grep -c '^[0-9]\+ ' "$d/hf.txt")" = 8 ] &&
  pass "fleet: every target reported, h2 with its readable figures beside its FIFO" ||
  fail "fleet: h2 not reported with figures, or rows missing"
timeout 20 "$dp" compare --rrd "$hf" --since 1h h1/fast h2/fast >"$d/hfc.txt" 2>"$d/hfc.err"
rc=$?
[ $rc = 0 ] && grep -Fq "$fifo: skipped: not a regular file (a FIFO)" "$d/hfc.err" &&
  pass "compare --rrd: a side with a FIFO read without it (exit 0, the FIFO named)" ||
  fail "compare --rrd with a FIFO: exit $rc, $(cat "$d/hfc.err")"

# failslow over a collectd csv tree with a FIFO for a series file: refused
# at once, naming it
mkdir -p "$d/fcsv/h/diskprobe-dev-sda"
mkfifo "$d/fcsv/h/diskprobe-dev-sda/bytes_per_second-read-2024-01-01"
timeout 20 "$dp" failslow --collectd-csv "$d/fcsv" >/dev/null 2>"$d/fcsv.err"
rc=$?
[ $rc = 2 ] && grep -Fq "$d/fcsv/h/diskprobe-dev-sda/bytes_per_second-read-2024-01-01: not a regular file (a FIFO)" "$d/fcsv.err" &&
  pass "failslow --collectd-csv: a FIFO series file refused at once, named" || fail "failslow with a FIFO: exit $rc, $(cat "$d/fcsv.err")"
# failslow prints a host name from the tree escaped in text
mkdir -p "$d/ecsv/$evil/diskprobe-dev-sda"
printf 'epoch,value\n1700000000,100\n' >"$d/ecsv/$evil/diskprobe-dev-sda/bytes_per_second-read-2023-11-14"
timeout 20 "$dp" failslow --collectd-csv "$d/ecsv" >"$d/ecsv.txt" 2>&1
grep -Fq 'ev\nil\x1b[31m' "$d/ecsv.txt" && ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$d/ecsv.txt" &&
  pass "failslow text: a host name's control characters escaped" || fail "failslow text: $(cat -v "$d/ecsv.txt")"

# replay prints a target's name from the recording escaped in text
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if "target" in o:
        o["target"] = "t\n\x1b[2Jx"
    print(json.dumps(o))' "$d/quiet.jsonl" >"$d/evil-target.jsonl"
"$dp" replay "$d/evil-target.jsonl" >"$d/replay.txt" 2>&1
grep -Fq 'target t\n\x1b[2Jx: 300 rounds' "$d/replay.txt" && ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$d/replay.txt" &&
  pass "replay text: a target's control characters escaped" || fail "replay text: $(tail -2 "$d/replay.txt" | cat -v)"

finish fleet_rrd
