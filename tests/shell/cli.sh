#!/bin/bash
# cli.sh - the diskprobe command's contract: JSON keys, exit statuses and
# one-line reasons for usage errors, missing paths, permission denied (as an
# unprivileged user), foreign files, unknown devices.
set -u
. "$(dirname "$0")/lib.sh"
FAILED=0
d=$(make_tmpdir)

expect() { # expect STATUS TEXT CMD...: exit status and a stderr line
  local want=$1 text=$2 rc
  shift 2
  "$@" >"$d/out" 2>"$d/err"
  rc=$?
  if [ $rc = "$want" ] && grep -qiF -- "$text" "$d/err" && [ "$(wc -l <"$d/err")" -le 2 ]; then
    pass "exit $rc: $(head -1 "$d/err")"
  else
    fail "$*: expected exit $want and '$text', got $rc: $(cat "$d/err")"
  fi
}

"$DISKPROBE" --version | grep -qE '^diskprobe [0-9]+\.[0-9]+' && pass "--version" || fail "--version"
for sub in metrics options; do # the developers' commands: listed, with --help
  "$DISKPROBE" --help | grep -q "^ *diskprobe $sub " && "$DISKPROBE" $sub --help | grep -q "^usage: diskprobe $sub" &&
    pass "$sub: in --help, and its --help exits 0" || fail "$sub: not in --help, or its --help fails"
done
# Every command's --help (and -h): its purpose, usage, every option it takes
# with a description, and an example, on stdout with exit 0; the top-level
# --help names each command with its purpose.
for sub in run watch stat replay failslow fleet compare metrics options; do
  for h in --help -h; do
    "$DISKPROBE" $sub $h >"$d/help" 2>"$d/help.err"
    rc=$?
    ok=1
    [ $rc = 0 ] && [ ! -s "$d/help.err" ] || ok=0
    head -1 "$d/help" | grep -q "^diskprobe $sub: ." || ok=0
    grep -q "^usage: diskprobe $sub " "$d/help" && grep -q '^options:$' "$d/help" || ok=0
    grep -q '^  -h, --help ' "$d/help" && grep -Eq '^examples?:$' "$d/help" || ok=0
    grep -A1 -E '^examples?:$' "$d/help" | grep -q "^  diskprobe $sub " || ok=0
    # every long option getopt takes is listed with a description
    for o in $(grep -o -- '--[a-z][a-z0-9-]*' "$d/help" | sort -u); do
      grep -Eq -- "^  (-h, )?$o( |\$)" "$d/help" || { ok=0; echo "  $sub $h: $o not described" >&2; }
    done
    [ "$(awk 'length($0) > 80' "$d/help" | wc -l)" = 0 ] || ok=0
    [ $ok = 1 ] && pass "$sub $h: purpose, usage, options, example (exit 0)" || fail "$sub $h: $(head -3 "$d/help") rc=$rc $(cat "$d/help.err")"
  done
  purpose=$(head -1 "$d/help" | sed "s/^diskprobe $sub: //")
  "$DISKPROBE" --help | grep -qF "diskprobe $sub $(printf '%*s' $((8 - ${#sub})) '') $purpose" &&
    pass "--help: $sub with its purpose" || fail "--help: no line for $sub with '$purpose'"
done
"$DISKPROBE" stat --help | grep -q '^  --interval DURATION ' && "$DISKPROBE" fleet --help | grep -q '^  --since DURATION ' &&
  pass "stat and fleet --help describe their options" || fail "stat or fleet --help lacks an option line"
"$DISKPROBE" watch --help | grep -q '^  --duty-cycle 2 ' && pass "watch --help has the shared probe and target flags" ||
  fail "watch --help lacks --duty-cycle"
expect 2 "usage: diskprobe fleet" "$DISKPROBE" fleet
expect 2 "unknown option '--bogus'" "$DISKPROBE" stat --bogus vda
# Flags are the plugin's options: the same setters, ranges and messages.
expect 2 'Option "QueueDepth": value "0" is invalid: allowed integers 1 to 256' "$DISKPROBE" run --queue-depth 0 "$d"
expect 2 'value "257" is invalid: allowed integers 1 to 256' "$DISKPROBE" run --queue-depth 257 "$d"
expect 2 'Option "BlockSize": value "1000" is invalid' "$DISKPROBE" run --block-size 1000 "$d"
expect 2 'Option "Pattern": value "randrw" is invalid' "$DISKPROBE" run --pattern randrw "$d"
expect 2 'Option "Duration": value "soon" is invalid' "$DISKPROBE" run --duration soon "$d"
expect 2 'Option "Duration": value "120s" is invalid: allowed 0.01 to 60 seconds' "$DISKPROBE" run --duration 120s "$d"
# The one strict number parser: no sign, no empty value, no spaces, no junk.
expect 2 'Option "MaxOps": value "-1" is invalid' "$DISKPROBE" run --ops -1 "$d"
expect 2 'Option "MaxOps": value "" is invalid' "$DISKPROBE" run --ops '' "$d"
expect 2 'Option "MaxOps": value "10x" is invalid' "$DISKPROBE" run --ops 10x "$d"
expect 2 'Option "MaxOps": value " 10" is invalid' "$DISKPROBE" run --ops ' 10' "$d"
expect 2 'Option "MaxOps": value "99999999999999999999" is invalid' "$DISKPROBE" run --ops 99999999999999999999 "$d"
expect 2 'Option "Timeout": value "0" is invalid: allowed 0.01 to 3600 seconds' "$DISKPROBE" run --timeout 0 "$d"
expect 2 'Option "FileSize": value "1500k" is invalid' "$DISKPROBE" run --file-size 1500k "$d"
# the I/O buffer bound of the plugin and watch (conf.c's dp_probe_conf_check)
expect 2 'QueueDepth 256 x BlockSize 67108864 needs 16384 MiB of I/O buffers; allowed at most 256 MiB' "$DISKPROBE" run --queue-depth 256 --block-size 64M "$d"
expect 2 "unknown option '--bogus'" "$DISKPROBE" run --bogus "$d"
expect 2 "missing value for '--ops'" "$DISKPROBE" run --ops
expect 2 "invalid --format 'xml'" "$DISKPROBE" run --format xml "$d"
expect 2 "invalid --count '-1'" "$DISKPROBE" stat --count -1 vda
expect 2 "run needs exactly one TARGET" "$DISKPROBE" run
expect 2 "unknown command 'probe'" "$DISKPROBE" probe "$d"
expect 1 "cannot create directory" "$DISKPROBE" run "$d/no/such/dir"
echo "someone else's" >"$d/other.probe"
expect 1 "not a diskprobe probe file" "$DISKPROBE" run "$d/other.probe"
expect 1 "" "$DISKPROBE" stat --count 1 no-such-device-xyz

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
  mkdir -m 0700 "$d/private"
  expect 1 "permission denied" setpriv --reuid=nobody --regid=nogroup --clear-groups "$DISKPROBE" run --file-size 1m "$d/private"
fi

"$DISKPROBE" run --help | grep -q -- '--queue-depth N .*\[QueueDepth: 1–256; default 1\]' &&
  pass "run --help is the option table" || fail "run --help lacks the table's QueueDepth line"

# The JSON a probe prints has every documented key.
"$DISKPROBE" run --duration 0.3s --file-size 16m --format json "$d/p" >"$d/j.json" || fail "probe failed"
python3 - "$d/j.json" <<'PY' && pass "JSON has every documented key" || fail "JSON keys missing"
import json, math, sys
d = json.load(open(sys.argv[1]))
need = ["pattern", "block_size", "queue_depth", "ops", "bytes", "elapsed_s", "iops",
        "bytes_per_second", "latency_s", "achieved_queue_depth", "errors", "cpu_s"]
lat = ["min", "mean", "p50", "p90", "p99", "p99.9", "max"]
ok = all(k in d for k in need) and all(k in d["latency_s"] for k in lat)
ok = ok and all(k in d["errors"] for k in ("io", "short", "timeout"))
ok = ok and all(k in d["cpu_s"] for k in ("user", "system"))
ok = ok and d["ops"] > 0 and d["latency_s"]["min"] <= d["latency_s"]["p50"] <= d["latency_s"]["p99"] <= d["latency_s"]["max"]
ok = ok and abs(d["bytes"] - d["ops"] * d["block_size"]) == 0
sys.exit(0 if ok else 1)
PY
"$DISKPROBE" run --duration 0.2s --file-size 16m "$d/p" | grep -q "^latency " && pass "text format" || fail "text format"
expect 2 'Option "LayoutRate": value "5k" is invalid' "$DISKPROBE" run --layout-rate 5k "$d/p"

# run lays out a new probe file at LayoutRate, as the plugin does: 32 MiB
# at 8 MiB/s cannot take less than ~3.5 s (a lower bound: a busy machine
# only makes it longer), and the file is complete.
mkdir -p "$d/paced"
t0=$(date +%s.%N)
"$DISKPROBE" run --duration 0.1s --file-size 32m --layout-rate 8m "$d/paced" >/dev/null 2>"$d/paced.err"
rc=$?
t1=$(date +%s.%N)
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
size=$(stat -c %s "$d/paced/diskprobe.probe" 2>/dev/null || echo 0)
if [ $rc = 0 ] && awk -v t="$took" 'BEGIN { exit !(t >= 3.4) }' && [ "$size" -ge $((32 << 20)) ]; then
  pass "run --layout-rate 8m: a 32 MiB layout took $took s (>= 3.4 s), file $size B"
else
  fail "run --layout-rate 8m: rc $rc, took $took s, size $size: $(cat "$d/paced.err")"
fi
"$DISKPROBE" stat --interval 0.2s --count 1 --format json "$(awk '$3 !~ /^(ram|loop)/ {print $3; exit}' /proc/diskstats)" | python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); sys.exit(0 if "util_percent" in d and "read_await_s" in d else 1)' &&
  pass "stat --format json" || fail "stat --format json"
# stat says what the disk is: in JSON the identity keys, with its capacity
# from sysfs; in text a line before the table
sdisk=$(awk '$3 !~ /^(ram|loop)/ {print $3; exit}' /proc/diskstats)
sbytes=$(($(cat "/sys/class/block/$sdisk/size" 2>/dev/null || echo 0) * 512))
"$DISKPROBE" stat --interval 0.2s --count 1 --format json "$sdisk" | python3 -c '
import json, sys
d = json.loads(sys.stdin.readline())
keys = ("class", "media", "model", "firmware", "serial", "wwn", "logical_block_bytes", "physical_block_bytes")
sys.exit(0 if all(k in d for k in keys) and d["class"] and d["capacity_bytes"] == int(sys.argv[1]) else 1)' "$sbytes" &&
  pass "stat --format json: the identity of $sdisk ($sbytes bytes)" || fail "stat --format json: no identity keys or capacity $sbytes for $sdisk"
"$DISKPROBE" stat --interval 0.2s --count 1 "$sdisk" | head -1 | grep -q "^$sdisk: class \".*\".*: media .*, $sbytes bytes" &&
  pass "stat: the identity line of $sdisk" || fail "stat: no identity line '$sdisk: class ...: media ..., $sbytes bytes'"

# watch: the plugin's scheduler, a line per probe per round.
expect 2 "unknown option '--bogus'" "$DISKPROBE" watch --bogus "$d/w"
expect 2 'Option "MaxOps": value "-1" is invalid' "$DISKPROBE" watch --ops -1 "$d/w"
expect 2 'Option "ProbeInterval": value "0" is invalid: allowed 1 to 86400 seconds' "$DISKPROBE" watch --interval 0 "$d/w"
expect 2 'Option "DutyCycle": value "200" is invalid' "$DISKPROBE" watch --duty-cycle 200 "$d/w"
expect 2 "invalid --count '0'" "$DISKPROBE" watch --count 0 "$d/w"
expect 2 "invalid --count '1x'" "$DISKPROBE" watch --count 1x "$d/w"
expect 2 "no TARGET given" "$DISKPROBE" watch --count 1
expect 2 "its probes take 1.00 s but ProbeInterval is 1.00 s" "$DISKPROBE" watch --interval 1s "$d/w"
expect 1 "no target could be opened" "$DISKPROBE" watch --count 2 "$d/no/such/dir"

fast="--interval 1s --duration 0.1s --duty-cycle 100 --file-size 16m"
# shellcheck disable=SC2086
"$DISKPROBE" watch --count 2 $fast "$d/w" >"$d/watch.txt" 2>"$d/watch.err"
rc=$?
lines=$(grep -c ' randread-qd1 ' "$d/watch.txt")
if [ $rc = 0 ] && [ "$lines" = 2 ] && head -1 "$d/watch.txt" | grep -q '^time .*iops.*p50_us.*p99_us.*stalled' &&
  grep -q '^--- diskprobe watch summary' "$d/watch.err" && grep -qE "^$d/w +randread-qd1 +2 " "$d/watch.err"; then
  pass "watch --count 2: 2 rounds of lines, a summary on stderr"
else
  fail "watch --count 2: rc $rc, $lines lines: $(cat "$d/watch.txt" "$d/watch.err")"
fi

# JSON: run's keys plus time and target; a path with '"' and '\' escaped;
# after each round's probe line its verdict (the plugin's).
odd="$d/we\"ird\\dir"
# shellcheck disable=SC2086
"$DISKPROBE" watch --count 2 $fast --format json "$odd" >"$d/watch.json" 2>"$d/watch.err" || fail "watch --format json: $(cat "$d/watch.err")"
python3 - "$d/watch.json" "$odd/diskprobe.probe" <<'PY' && pass "watch --format json: 2 probe lines, run's keys, time, escaped target, a verdict per round" || fail "watch JSON: $(cat "$d/watch.json")"
import json, sys, time
lines = open(sys.argv[1]).read().splitlines()
need = ["target", "device", "pattern", "block_size", "queue_depth", "ops", "bytes", "elapsed_s",
        "iops", "bytes_per_second", "latency_s", "achieved_queue_depth", "errors", "stalled",
        "cpu_s", "wall_s", "time", "probe", "round"]
every = [json.loads(l) for l in lines]
ds = [d for d in every if "probe" in d]
vs = [d for d in every if "verdict" in d]
ok = len(vs) == 2 and [v["round"] for v in vs] == [1, 2]
ok = ok and all(v["verdict"]["level"] == "ok" and v["verdict"]["armed"] is False
                and v["target"] == sys.argv[2] for v in vs)
ok = ok and len(ds) == 2 and all(all(k in d for k in need) for d in ds)
ok = ok and all(d["target"] == sys.argv[2] for d in ds) and [d["round"] for d in ds] == [1, 2]
ok = ok and all(abs(d["time"] - time.time()) < 60 and d["ops"] > 0 for d in ds)
sys.exit(0 if ok else 1)
PY

# No probe flag: the plugin's default probe set.
"$DISKPROBE" watch --count 1 --interval 2s --duty-cycle 100 --file-size 16m --format json "$d/w" 2>/dev/null |
  python3 -c 'import json,sys; p=[json.loads(l)["probe"] for l in sys.stdin if "\"probe\"" in l]; sys.exit(0 if p==["randread-qd1","randread-qd32","seqread"] else 1)' &&
  pass "watch without probe flags runs the default probe set" || fail "watch default probe set"
# --class: the device view's lines carry the disk's identity with that class
# shellcheck disable=SC2086
"$DISKPROBE" watch --count 3 $fast --class lab-1 --format json "$d/w" 2>/dev/null |
  python3 -c '
import json, sys
v = [d for d in map(json.loads, sys.stdin) if "device_view" in d]
sys.exit(0 if v and all(d.get("class") == "lab-1" and d.get("capacity_bytes", 0) > 0 and "media" in d for d in v) else 1)' &&
  pass "watch --class: device_view lines carry class lab-1, media and capacity" || fail "watch --class: no device_view line with class lab-1"
expect 2 'Option "Class": value "a b" is invalid' "$DISKPROBE" watch --class "a b" "$d/w"

# Ctrl-C stops at once with exit 0 and a summary.
"$DISKPROBE" watch --interval 60s --duration 0.1s --file-size 16m "$d/w" >"$d/int.txt" 2>"$d/int.err" &
pid=$!
for _ in $(seq 50); do grep -q randread "$d/int.txt" 2>/dev/null && break; sleep 0.1; done
kill -INT $pid
wait $pid
rc=$?
[ $rc = 0 ] && grep -q '^--- diskprobe watch summary' "$d/int.err" && pass "watch: SIGINT stops with exit 0 and a summary" ||
  fail "watch SIGINT: rc $rc: $(cat "$d/int.err")"

[ "$FAILED" = 0 ] && echo "cli: all checks passed" || exit 1
