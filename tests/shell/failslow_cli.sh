#!/bin/bash
# failslow_cli.sh - `diskprobe failslow`'s contract on small generated
# hosts (gen_perseus.py, converted into collectd csv trees of the device
# view by tests/oracles/failslow/perseus_to_csv.py): a drive 3x slower
# than its peers appears in the JSON (and nothing else is printed), a
# healthy host prints nothing; the same data as device-view JSON lines
# gives the same output; the output is byte for byte what the tool printed
# when it read the research layout itself (tests/fixtures/failslow, made by
# the tool of commit 12aa67e on the same generated data); JSON in any
# layout (jq's, reordered keys) reads the same; a flag in a window that
# closes inside a short gap is printed; bad usage, unreadable input,
# impossible values and lines over 1 MiB (/dev/zero) exit 2 with one line
# naming the file and line.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
FAILED=0
d=$(make_tmpdir)
conv="$top_srcdir/tests/oracles/failslow/perseus_to_csv.py"

# gen DIR SLOWDISK FACTOR [SEED]: a generated host in the research layout,
# converted into $d/csv/HOST
gen() {
  python3 "$(dirname "$0")/gen_perseus.py" "$@" &&
    python3 "$conv" "$d/csv" "$1"
}
gen "$d/p/host_7" disk4 3
gen "$d/p/host_8" none 1
gen "$d/p/host_9" disk2 1.5 9

"$DISKPROBE" failslow --format json --collectd-csv "$d/csv/host_7" --collectd-csv "$d/csv/host_8" >"$d/out" 2>"$d/err"
rc=$?
if [ $rc = 0 ] && [ "$(wc -l <"$d/out")" = 1 ] && [ ! -s "$d/err" ] &&
  python3 - "$d/out" <<'PY'; then
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert set(o) == {"host", "disk", "first_flag_ts", "slowdown"}, o
assert o["host"] == "host_7" and o["disk"] == "disk4", o
assert 1658149200 < o["first_flag_ts"] <= 1658149200 + 3 * 3600, o
assert 2.4 < o["slowdown"] < 3.6, o
PY
  pass "json: the slow drive, once: $(cat "$d/out")"
else
  fail "json: rc $rc, stdout: $(cat "$d/out"), stderr: $(cat "$d/err")"
fi

"$DISKPROBE" failslow --format json --collectd-csv "$d/csv/host_8" >"$d/out" 2>"$d/err"
rc=$?
[ $rc = 0 ] && [ ! -s "$d/out" ] && pass "json: a healthy host prints nothing" ||
  fail "healthy host: rc $rc, stdout: $(cat "$d/out")"

"$DISKPROBE" failslow --collectd-csv "$d/csv/host_7" >"$d/out" 2>"$d/err"
rc=$?
[ $rc = 0 ] && grep -q '^host_7 disk4: FLAGGED at ' "$d/out" && grep -q '^host_7: 12 drives' "$d/out" &&
  pass "text: $(head -1 "$d/out" | cut -c1-80)..." || fail "text: rc $rc: $(cat "$d/out")"

# the research layout, converted, gives what the tool printed when it read
# that layout itself: every window's figures of every drive, and the JSON
mkdir -p "$d/two" && cp -r "$d/csv/host_7" "$d/csv/host_9" "$d/two/"
fx="$top_srcdir/tests/fixtures/failslow"
"$DISKPROBE" failslow --trace --drives --collectd-csv "$d/two" >"$d/trace" 2>"$d/err" &&
  "$DISKPROBE" failslow --format json --collectd-csv "$d/two" >"$d/json" 2>>"$d/err"
rc=$?
if [ $rc = 0 ] && [ ! -s "$d/err" ] && diff "$fx/gen-trace.txt" "$d/trace" >"$d/diff" &&
  diff "$fx/gen-json.txt" "$d/json" >>"$d/diff"; then
  pass "converted research layout: output identical to the research-layout reader's ($(wc -l <"$d/trace") trace lines, $(wc -l <"$d/json") flags)"
else
  fail "converted research layout differs (rc $rc): $(head -5 "$d/diff") $(cat "$d/err")"
fi

# the same samples as device-view JSON lines (both sides given, the
# write side idle) give the same output; probe lines mixed in are skipped
python3 - "$d/two" >"$d/dv.jsonl" <<'PY'
import glob, json, os, sys
for hostdir in sorted(glob.glob(sys.argv[1] + "/*")):
    host = os.path.basename(hostdir)
    for dd in sorted(glob.glob(hostdir + "/diskprobe-dev-*")):
        dev = os.path.basename(dd)[len("diskprobe-dev-"):]
        cols = {}
        for key, series in (("read_bytes_per_s", "bytes_per_second-read"),
                            ("write_bytes_per_s", "bytes_per_second-write"),
                            ("read_await_s", "latency-read_await")):
            for f in sorted(glob.glob("%s/%s-*" % (dd, series))):
                for line in open(f).read().splitlines()[1:]:
                    t, v = line.split(",")
                    cols.setdefault(int(t), {})[key] = float(v)
        print(json.dumps({"time": 0, "device": "sda", "probe": "randread"}))
        for t, v in sorted(cols.items()):
            o = {"time": t, "host": host, "device": dev, "reads_per_s": None,
                 "writes_per_s": 0, "write_await_s": None}
            o.update({k: (None if x != x else x) for k, x in v.items()})
            print(json.dumps(o))
PY
"$DISKPROBE" failslow --trace --drives --devview-json - <"$d/dv.jsonl" >"$d/trace2" 2>"$d/err"
rc=$?
[ $rc = 0 ] && [ ! -s "$d/err" ] && diff -q "$fx/gen-trace.txt" "$d/trace2" >/dev/null &&
  pass "--devview-json: the same output from JSON lines ($(wc -l <"$d/dv.jsonl") lines)" ||
  fail "--devview-json: rc $rc: $(diff "$fx/gen-trace.txt" "$d/trace2" | head -5) $(cat "$d/err")"

# a window that closes inside a short gap (filled with missing intervals)
# is reported like any other: host_7's samples at every window's last step
# are dropped on the first day, so its flag (1658152785, the 12th window)
# falls into a gap; it was dropped, and the summary said 0 flagged
python3 - "$d/dv.jsonl" >"$d/gap.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("host") != "host_7":
        continue
    k = (o["time"] - 1658149200) // 15
    if o["time"] < 1658235600 and k % 20 == 19:
        continue
    print(line, end="")
PY
"$DISKPROBE" failslow --format json --devview-json "$d/gap.jsonl" >"$d/out" 2>"$d/err" &&
  "$DISKPROBE" failslow --devview-json "$d/gap.jsonl" >"$d/gap.txt" 2>>"$d/err"
rc=$?
if [ $rc = 0 ] && [ ! -s "$d/err" ] && [ "$(wc -l <"$d/out")" = 1 ] &&
  grep -q '"disk": "disk4", "first_flag_ts": 1658152785,' "$d/out" &&
  grep -q '^host_7 disk4: FLAGGED at ' "$d/gap.txt" && grep -q '^host_7: 12 drives, .* 1 flagged$' "$d/gap.txt"; then
  pass "a flag in a window closed inside a short gap is printed: $(cat "$d/out")"
else
  fail "flag inside a gap: rc $rc: $(cat "$d/out" "$d/err"; tail -1 "$d/gap.txt")"
fi

# the same lines as `diskprobe watch --format json` prints its device view
# ("device_view" and the catalogue's names) with watch's verdict lines
# mixed in: read as they are, the same output
python3 - "$d/dv.jsonl" >"$d/watch.jsonl" <<'PY'
import json, sys
names = {"read_bytes_per_s": "bytes_per_second-read", "write_bytes_per_s": "bytes_per_second-write",
         "reads_per_s": "operations_per_second-read", "writes_per_s": "operations_per_second-write",
         "read_await_s": "latency-read_await", "write_await_s": "latency-write_await"}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "probe" in o:
        print(json.dumps({"time": 0, "target": "/x", "device": "sda", "round": 1,
                          "verdict": {"level": "ok", "slowdown": None}}))
        continue
    w = {"time": o["time"], "host": o["host"], "device_view": o["device"]}
    w.update({names[k]: v for k, v in o.items() if k in names})
    print(json.dumps(w))
PY
"$DISKPROBE" failslow --trace --drives --devview-json "$d/watch.jsonl" >"$d/trace3" 2>"$d/err"
rc=$?
[ $rc = 0 ] && [ ! -s "$d/err" ] && diff -q "$fx/gen-trace.txt" "$d/trace3" >/dev/null &&
  pass "--devview-json reads watch's device-view lines as they are: the same output" ||
  fail "--devview-json on watch's keys: rc $rc: $(diff "$fx/gen-trace.txt" "$d/trace3" | head -5) $(cat "$d/err")"

# the same objects pretty-printed over many lines (as `jq .` prints them),
# keys reversed: the same output
python3 - "$d/watch.jsonl" >"$d/pretty.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    print(json.dumps(dict(reversed(list(o.items()))), indent=2))
PY
"$DISKPROBE" failslow --trace --drives --devview-json "$d/pretty.json" >"$d/trace4" 2>"$d/err"
rc=$?
[ $rc = 0 ] && [ ! -s "$d/err" ] && diff -q "$fx/gen-trace.txt" "$d/trace4" >/dev/null &&
  pass "--devview-json reads objects over many lines, keys in any order: the same output ($(wc -l <"$d/pretty.json") lines)" ||
  fail "--devview-json pretty-printed: rc $rc: $(diff "$fx/gen-trace.txt" "$d/trace4" | head -5) $(cat "$d/err")"

# reads and writes together: the awaits weighted by the operations, the
# throughputs added (as src/peers.c takes them from diskstats); a
# partition (sdc1) is no peer
python3 - >"$d/rw.jsonl" <<'PY'
import json, math, random
rnd = random.Random(3)
for i in range(2400):
    for k, dev in enumerate(["sda", "sdb", "sdc", "sdc1", "sdd", "sde"]):
        r, w = 100 * math.exp(rnd.gauss(0, .1)), 50 * math.exp(rnd.gauss(0, .1))
        ra, wa = 0.004 * math.exp(rnd.gauss(0, .1)), 0.001 * math.exp(rnd.gauss(0, .1))
        if dev == "sdb":  # 3x slower on writes alone: 1.67x on average
            wa *= 7
        print(json.dumps({"time": 1700000000 + 15 * i, "host": "rw", "device": dev,
                          "read_bytes_per_s": r * 8192, "write_bytes_per_s": w * 8192,
                          "reads_per_s": r, "writes_per_s": w,
                          "read_await_s": ra, "write_await_s": wa}))
PY
"$DISKPROBE" failslow --drives --devview-json "$d/rw.jsonl" >"$d/out" 2>"$d/err"
rc=$?
if [ $rc = 0 ] && grep -q '^rw: 5 drives' "$d/out" && ! grep -q 'sdc1' "$d/out" &&
  awk '$2 == "sdb:" && $5 ~ /^1\.[5-8]/ {ok=1} END {exit !ok}' "$d/out"; then
  pass "--devview-json reads and writes: $(grep ' sdb:' "$d/out")"
else
  fail "--devview-json reads and writes: rc $rc: $(cat "$d/out" "$d/err")"
fi

expect() { # expect STATUS TEXT CMD...
  local want=$1 text=$2 rc
  shift 2
  "$@" >"$d/out" 2>"$d/err"
  rc=$?
  if [ $rc = "$want" ] && [ ! -s "$d/out" ] && grep -qiF -- "$text" "$d/err" && [ "$(wc -l <"$d/err")" = 1 ]; then
    pass "exit $rc: $(cat "$d/err")"
  else
    fail "$*: expected exit $want and '$text', got $rc: $(cat "$d/err") / $(cat "$d/out")"
  fi
}
expect 2 "no input" "$DISKPROBE" failslow --format json
expect 2 "invalid --format 'xml'" "$DISKPROBE" failslow --format xml --collectd-csv "$d/csv"
expect 2 "unknown option" "$DISKPROBE" failslow --bogus --collectd-csv "$d/csv"
expect 2 "perseus_to_csv.py" "$DISKPROBE" failslow --format json "$d/p/host_7"
expect 2 "No such file or directory" "$DISKPROBE" failslow --format json --collectd-csv "$d/csv" --collectd-csv "$d/nonexistent"
expect 2 "No such file or directory" "$DISKPROBE" failslow --devview-json "$d/nonexistent.jsonl"
mkdir -p "$d/empty"
expect 2 "no host directory" "$DISKPROBE" failslow --format json --collectd-csv "$d/empty"
mkdir -p "$d/bad/h/diskprobe-dev-sda"
printf 'epoch,value\nabc,3\n' >"$d/bad/h/diskprobe-dev-sda/latency-read_await-2022-07-18"
expect 2 "line 2: want epoch,value" "$DISKPROBE" failslow --format json --collectd-csv "$d/bad"
# a timestamp beyond int64 seconds (UB in llround)
printf 'epoch,value\n1e30,3\n' >"$d/bad/h/diskprobe-dev-sda/latency-read_await-2022-07-18"
expect 2 "'1e30'" "$DISKPROBE" failslow --format json --collectd-csv "$d/bad"
printf '{"time": 1e30, "device": "sda", "read_await_s": 1}\n' >"$d/bad.jsonl"
expect 2 "line 1: not a device-view object" "$DISKPROBE" failslow --devview-json "$d/bad.jsonl"
# impossible values, with the file and line; a line over 1 MiB and an
# endless one (/dev/zero) fail fast, read no further than the limit
good='{"time": 1700000000, "device": "sda", "read_bytes_per_s": 1e6, "read_await_s": 0.001}'
printf '%s\n{"time": 1700000015, "device": "sda", "read_bytes_per_s": -1, "read_await_s": 0.001}\n' "$good" >"$d/neg.jsonl"
expect 2 'neg.jsonl: line 2: not a device-view object: "read_bytes_per_s": want a number from 0 to 1000000000000000 or null, not -1' "$DISKPROBE" failslow --devview-json "$d/neg.jsonl"
printf '%s\n{"time": 1700000015, "device_view": "sda", "bytes_per_second-read": 1e6, "latency-read_await": "nan"}\n' "$good" >"$d/nan.jsonl"
expect 2 'nan.jsonl: line 2: not a device-view object: "latency-read_await": want a number from 0 to 86400 or null, not "nan"' "$DISKPROBE" failslow --devview-json "$d/nan.jsonl"
printf '%s\n{"time": 1700000015, "device": "sda", "read_bytes_per_s": 1e400, "read_await_s": 0.001}\n' "$good" >"$d/huge.jsonl"
expect 2 'huge.jsonl: line 2: not a JSON object: real number overflow' "$DISKPROBE" failslow --devview-json "$d/huge.jsonl"
printf '%s\n{"time": 1700000015, "device": "sda", "read_bytes_per_s": 1e6, "read_await_s": 90000}\n' "$good" >"$d/slow.jsonl"
expect 2 'slow.jsonl: line 2: not a device-view object: "read_await_s": want a number from 0 to 86400' "$DISKPROBE" failslow --devview-json "$d/slow.jsonl"
{ echo "$good"; echo "$good"; head -c $((2 << 20)) /dev/zero | tr '\0' ' '; echo; } >"$d/long.jsonl"
expect 2 'long.jsonl: line 3: longer than 1048576 bytes' timeout 20 "$DISKPROBE" failslow --devview-json "$d/long.jsonl"
expect 2 '/dev/zero: line 1: longer than 1048576 bytes' timeout 20 "$DISKPROBE" failslow --devview-json /dev/zero
printf 'epoch,value\n1700000000,-0.5\n' >"$d/bad/h/diskprobe-dev-sda/latency-read_await-2022-07-18"
expect 2 "line 2: want a value from 0 to 86400 (or nan), not '-0.5'" "$DISKPROBE" failslow --format json --collectd-csv "$d/bad"
{ printf 'epoch,value\n'; head -c $((2 << 20)) /dev/zero | tr '\0' '1'; echo; } >"$d/bad/h/diskprobe-dev-sda/latency-read_await-2022-07-18"
expect 2 "latency-read_await-2022-07-18: line 2: longer than 1048576 bytes" "$DISKPROBE" failslow --format json --collectd-csv "$d/bad"
printf '{"time": 1, "device": "sda", "probe": "x"}\n' >"$d/none.jsonl"
expect 2 "no device-view samples" "$DISKPROBE" failslow --devview-json "$d/none.jsonl"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  mkdir -p "$d/locked" && cp -r "$d/csv/host_8" "$d/locked/" && chmod 700 "$d/locked"
  chmod 755 "$d"
  expect 2 "Permission denied" setpriv --reuid=65534 --regid=65534 --clear-groups "$DISKPROBE" failslow --format json --collectd-csv "$d/locked"
else
  chmod 000 "$d/empty"
  [ -r "$d/empty" ] || expect 2 "Permission denied" "$DISKPROBE" failslow --format json --collectd-csv "$d/empty"
fi

finish failslow_cli
