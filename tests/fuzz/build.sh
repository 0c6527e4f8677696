#!/bin/bash
# tests/fuzz/build.sh - builds the libFuzzer targets with clang
# (-fsanitize=fuzzer,address,undefined), compiling the library sources they
# need directly: no configure, no libtool.
#
#   bash tests/fuzz/build.sh [OUTDIR]   (default: ${TMPDIR:-/tmp}/diskprobe-fuzz)
#
# Prints the fuzzers it built. Exits 77 (with a reason on stderr) if clang
# or its libFuzzer runtime (Debian: clang, libclang-rt-14-dev) or jansson
# (libjansson-dev, for the command's JSON readers) is missing,
# 1 if a build fails. CC=clang-15 picks another clang; FUZZ_CFLAGS adds
# flags (e.g. -O2 for a longer run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../src" && pwd)
out=${1:-${TMPDIR:-/tmp}/diskprobe-fuzz}
cc=${CC:-clang}
case $cc in *clang*) ;; *) cc=clang ;; esac # gcc has no libFuzzer
mkdir -p "$out"
out=$(cd "$out" && pwd)

command -v "$cc" >/dev/null || { echo "$cc not installed (Debian: clang)" >&2; exit 77; }
# the runtime: a one-line fuzzer must link
probe=$(mktemp -d /tmp/diskprobe-fuzz-probe.XXXXXX)
trap 'rm -rf "$probe"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe/t.c"
"$cc" -fsanitize=fuzzer,address,undefined "$probe/t.c" -o "$probe/t" 2>"$probe/err" || {
  echo "$cc cannot link a libFuzzer target (Debian: libclang-rt-14-dev): $(head -1 "$probe/err")" >&2
  exit 77
}

# jansson: the command's JSON readers (failslow_input, replay_input)
if pkg-config --exists jansson 2>/dev/null; then
  jansson_cflags=$(pkg-config --cflags jansson)
  jansson_libs=$(pkg-config --libs jansson)
else
  jansson_cflags= jansson_libs=-ljansson
fi
[ -f /usr/include/jansson.h ] || pkg-config --exists jansson 2>/dev/null ||
  { echo "jansson not installed (Debian: libjansson-dev)" >&2; exit 77; }

flags=(-g -O1 -std=gnu11 -fno-omit-frame-pointer
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
  -Wall -Wextra -iquote "$src")
# shellcheck disable=SC2206 # FUZZ_CFLAGS is a list of flags
flags+=(${FUZZ_CFLAGS:-})

# The library sources each target needs (vocab.c for the pattern names and
# messages of conf.c, options.c and health.c; blockdev.c for health's media
# classes and options.c's Class names).
core="vocab.c"
declare -A needs=(
  [fuzz_diskstats]="diskstats.c"
  [fuzz_units]="units.c"
  [fuzz_conf]="conf.c options.c units.c blockdev.c reaper.c clock.c $core"
  [fuzz_health_state]="health.c health_state.c statefile.c reaper.c safepath.c blockdev.c clock.c conf.c options.c units.c $core"
  [fuzz_failslow_input]="cli/cmd_failslow.c cli/failslow_input.c cli/jsonl.c cli/json_out.c cli/common.c failslow.c conf.c options.c units.c blockdev.c safepath.c reaper.c clock.c $core"
  [fuzz_replay_input]="cli/replay_input.c cli/jsonl.c"
)
# The targets compile at once (a clang each; the cores share them), each
# one's compiler messages kept and shown in the targets' order.
targets=(fuzz_diskstats fuzz_units fuzz_conf fuzz_health_state fuzz_failslow_input fuzz_replay_input)
pids=()
for t in "${targets[@]}"; do
  files=("$here/$t.c")
  for f in ${needs[$t]}; do files+=("$src/$f"); done
  # shellcheck disable=SC2086 # the flags are lists
  "$cc" "${flags[@]}" $jansson_cflags "${files[@]}" -o "$out/$t" -laio -lm -lpthread $jansson_libs \
    2>"$probe/$t.err" &
  pids+=($!)
done
failed=
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    cat "$probe/$t.err" >&2
    echo "$out/$t"
  else
    cat "$probe/$t.err" >&2
    echo "building $t failed" >&2
    failed=1
  fi
done
[ -z "$failed" ] || exit 1
