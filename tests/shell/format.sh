#!/bin/bash
# format.sh - every C file of the project is clang-formatted (.clang-format:
# LLVM style, collectd's choice). Skips where clang-format is not installed.
set -u
cd "${top_srcdir:-$(dirname "$0")/../..}" || exit 1
command -v clang-format >/dev/null || { echo "SKIP: clang-format not installed"; exit 77; }
bad=0 n=0
for f in src/*.[ch] src/cli/*.[ch] plugin/*.c tests/unit/*.c contrib/*/*.c contrib/*/*/*.c; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || { echo "FAIL: $f is not clang-formatted (clang-format -i $f)"; bad=1; }
done
[ $bad = 0 ] && echo "format: $n files clang-formatted" || exit 1
