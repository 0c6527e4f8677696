#!/bin/bash
# verify_cost.sh - what the per-round probe-file check (dp_target_verify:
# fstat, fstatat, one O_DIRECT read of the header, the FIEMAP extent walk)
# costs, run before and after every round of a probe-file target. A
# benchmark, not a test: it prints microseconds per check, it never fails on
# a number.
#
#   contrib/evaluation/bench/verify_cost.sh [DIR] [SIZE_MIB] [N]
#
# Defaults: a new directory under /var/tmp, the default FileSize (1024 MiB),
# 1000 checks. Builds bench_verify.c against the built library (run
# contrib/build/setup.sh first). The probe file is removed afterwards unless
# DIR was given.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
work=$(mktemp -d /tmp/bench-verify.XXXXXX)
dir=${1:-}
[ -n "$dir" ] || { dir=$(mktemp -d /var/tmp/bench-verify.XXXXXX) && rmdir_after=$dir; }
trap 'rm -rf "$work" ${rmdir_after:+"$rmdir_after"}' EXIT
gcc -O2 -g -std=gnu11 -Wall -Wextra -I"$top/src" "$here/bench_verify.c" \
  "$top/src/.libs/libdiskprobe.a" -lm -lpthread -o "$work/bench_verify"
"$work/bench_verify" "$dir" "${2:-1024}" "${3:-1000}"
