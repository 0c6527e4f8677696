#!/bin/bash
# tests/fuzz/build.sh - builds the libFuzzer targets with clang
# (-fsanitize=fuzzer,address,undefined), compiling the library sources they
# need directly: no configure, no libtool.
#
#   bash tests/fuzz/build.sh [OUTDIR]   (default: ${TMPDIR:-/tmp}/diskprobe-fuzz)
#
# Prints the fuzzers it built. Exits 77 (with a reason on stderr) if clang
# or its libFuzzer runtime is missing (Debian: clang, libclang-rt-14-dev),
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

flags=(-g -O1 -std=gnu11 -fno-omit-frame-pointer
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
  -Wall -Wextra -iquote "$src")
# shellcheck disable=SC2206 # FUZZ_CFLAGS is a list of flags
flags+=(${FUZZ_CFLAGS:-})

# The library sources each target needs (vocab.c for the pattern names and
# messages of conf.c, options.c and health.c; blockdev.c for health's media
# classes).
core="vocab.c"
declare -A needs=(
  [fuzz_diskstats]="diskstats.c"
  [fuzz_units]="units.c"
  [fuzz_conf]="conf.c options.c units.c $core"
  [fuzz_health_state]="health.c health_state.c blockdev.c conf.c options.c units.c $core"
  [fuzz_failslow_input]="cli/cmd_failslow.c cli/failslow_input.c cli/common.c failslow.c conf.c options.c units.c $core"
)
for t in fuzz_diskstats fuzz_units fuzz_conf fuzz_health_state fuzz_failslow_input; do
  files=("$here/$t.c")
  for f in ${needs[$t]}; do files+=("$src/$f"); done
  "$cc" "${flags[@]}" "${files[@]}" -o "$out/$t" -laio -lm -lpthread ||
    { echo "building $t failed" >&2; exit 1; }
  echo "$out/$t"
done
