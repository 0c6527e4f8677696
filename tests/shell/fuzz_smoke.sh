#!/bin/bash
# fuzz_smoke.sh - a short, bounded run of every libFuzzer target
# (tests/fuzz/: the /proc/diskstats parser and tracker, the number, size
# and duration parsers, the configuration model, the health state file's
# reader and its save/load round trip, the fail-slow device-view readers and the
# detector behind it, replay's reader of watch's JSON lines) over its seed corpus
# (tests/fuzz/corpus/TARGET/) and what it finds in FUZZ_SECONDS (default
# 5) seconds. Fails on any crash, sanitizer report, leak or broken
# invariant; the input that did it is kept and named. Skips if clang's
# libFuzzer is unavailable.
#   FUZZ_SECONDS=300 bash tests/shell/fuzz_smoke.sh   # a longer run
set -u
. "$(dirname "$0")/lib.sh"

secs=${FUZZ_SECONDS:-5}
d=$(make_tmpdir)
bin="$d/bin"
bash "$top_srcdir/tests/fuzz/build.sh" "$bin" >"$d/build.out" 2>&1
rc=$?
[ $rc = 77 ] && skip "$(tail -1 "$d/build.out")"
[ $rc = 0 ] || { cat "$d/build.out"; die "building the fuzzers failed"; }

# scratch space for the targets (TMPDIR): a tmpfs keeps it cheap
scratch=$(mktemp -d /dev/shm/diskprobe-fuzz.XXXXXX 2>/dev/null || mktemp -d "$d/scratch.XXXXXX")
at_exit "rm -rf '$scratch'"
keep="$top_builddir/tests/fuzz-artifacts"
targets=(diskstats units conf health_state failslow_input replay_input)
fuzz_one() { # fuzz_one TARGET: its run; the exit status in $d/rc-TARGET
  local t=$1 seeds="$top_srcdir/tests/fuzz/corpus/$1" work="$d/corpus-$1"
  mkdir -p "$work" "$d/art-$t" # the seeds stay as they are; new inputs go in work
  TMPDIR=$scratch "$bin/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$d/art-$t/" \
    "$work" "$seeds" >"$d/fuzz-$t.log" 2>&1
  echo $? >"$d/rc-$t"
}
# one lane of targets per core (each fuzzer runs on one), reported in order
lanes=$(nproc)
[ "$lanes" -le ${#targets[@]} ] || lanes=${#targets[@]}
lane_pids=()
for ((l = 0; l < lanes; l++)); do
  (for ((i = l; i < ${#targets[@]}; i += lanes)); do fuzz_one "${targets[$i]}"; done) &
  lane_pids+=($!)
done
wait "${lane_pids[@]}"
for t in "${targets[@]}"; do
  seeds="$top_srcdir/tests/fuzz/corpus/$t"
  rc=$(cat "$d/rc-$t" 2>/dev/null || echo "unknown (not run)")
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$d/fuzz-$t.log" 2>/dev/null)
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$d/fuzz-$t.log" 2>/dev/null)
  nseeds=$(find "$seeds" -type f | wc -l)
  if [ "$rc" = 0 ] && [ -z "$(ls -A "$d/art-$t")" ]; then
    pass "fuzz_$t: ${runs:-?} runs in $secs s (${rate:-?}/s) from $nseeds seeds, no crash"
  else
    mkdir -p "$keep"
    cp "$d/art-$t"/* "$keep/" 2>/dev/null
    fail "fuzz_$t exited with status $rc after ${runs:-?} runs; inputs kept in $keep:" \
      "$(cd "$d/art-$t" 2>/dev/null && ls | tr '\n' ' ')"
    grep -E -m5 "ERROR|SUMMARY|runtime error|round trip" "$d/fuzz-$t.log" 2>/dev/null | sed 's/^/    /'
    echo "  reproduce: bash tests/fuzz/build.sh /tmp/fz && /tmp/fz/fuzz_$t INPUT"
  fi
done

finish fuzz_smoke
