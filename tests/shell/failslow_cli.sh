#!/bin/bash
# failslow_cli.sh - `diskprobe failslow`'s contract on small generated host
# directories in the Perseus CSV format: a drive 3x slower than its peers
# appears in the JSON (and nothing else is printed), a healthy host prints
# nothing, bad usage and an unreadable directory exit 2 with one line.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
FAILED=0
d=$(make_tmpdir)

# gen DIR SLOWDISK FACTOR: a generated host (gen_perseus.py)
gen() { python3 "$(dirname "$0")/gen_perseus.py" "$@"; }
gen "$d/host_7" disk4 3
gen "$d/host_8" none 1

"$DISKPROBE" failslow --format json "$d/host_7" "$d/host_8" >"$d/out" 2>"$d/err"
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

"$DISKPROBE" failslow --format json "$d/host_8" >"$d/out" 2>"$d/err"
rc=$?
[ $rc = 0 ] && [ ! -s "$d/out" ] && pass "json: a healthy host prints nothing" ||
  fail "healthy host: rc $rc, stdout: $(cat "$d/out")"

"$DISKPROBE" failslow "$d/host_7" >"$d/out" 2>"$d/err"
rc=$?
[ $rc = 0 ] && grep -q '^host_7 disk4: FLAGGED at ' "$d/out" && grep -q '^host_7: 12 drives' "$d/out" &&
  pass "text: $(head -1 "$d/out" | cut -c1-80)..." || fail "text: rc $rc: $(cat "$d/out")"

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
expect 2 "no HOSTDIR" "$DISKPROBE" failslow --format json
expect 2 "invalid --format 'xml'" "$DISKPROBE" failslow --format xml "$d/host_7"
expect 2 "unknown option" "$DISKPROBE" failslow --bogus "$d/host_7"
expect 2 "No such file or directory" "$DISKPROBE" failslow --format json "$d/host_7" "$d/nonexistent"
mkdir -p "$d/empty"
expect 2 "no day files" "$DISKPROBE" failslow --format json "$d/empty"
mkdir -p "$d/bad"
printf 'time,disk,tp,lat\n1,a,2,3\n' >"$d/bad/2022-07-18.csv"
expect 2 "no column 'ts'" "$DISKPROBE" failslow --format json "$d/bad"
# a timestamp beyond int64 seconds (found by fuzz_failslow_csv: UB in llround)
mkdir -p "$d/bigts"
printf 'ts,disk_id,throughput,latency\n1e30,a,2,3\n' >"$d/bigts/2022-07-18.csv"
expect 2 "bad ts '1e30'" "$DISKPROBE" failslow --format json "$d/bigts"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  mkdir -p "$d/locked" && cp "$d/host_8/2022-07-18.csv" "$d/locked/" && chmod 700 "$d/locked"
  chmod 755 "$d"
  expect 2 "Permission denied" setpriv --reuid=65534 --regid=65534 --clear-groups "$DISKPROBE" failslow --format json "$d/locked"
else
  chmod 000 "$d/empty"
  [ -r "$d/empty" ] || expect 2 "Permission denied" "$DISKPROBE" failslow --format json "$d/empty"
fi

finish failslow_cli
