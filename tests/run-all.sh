#!/bin/bash
# tests/run-all.sh - the whole test suite, from a fresh Debian 12 machine.
#
#   bash tests/run-all.sh
#
# 1. tests/setup.sh: installs the test toolchain when missing, then
#    contrib/build/setup.sh: the product's packages and the build (gcc,
#    --enable-werror, in the source tree);
# 2. make check: the cmocka suites and the shell tests (real loop devices,
#    blkio throttling, the real collectd daemon, promtool);
# 3. the cmocka suites again, built with AddressSanitizer and
#    UndefinedBehaviorSanitizer;
# 4. the whole build and the cmocka suites with clang, --enable-werror.
# 3 and 4 build out of tree in build-ci/, from a `make distdir` copy of the
# sources (automake refuses a VPATH build of a tree configured in place);
# that also checks the distribution lists every file the build needs.
# Prints one closing line "N passed, N failed, N skipped" and exits non-zero
# if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

bash tests/setup.sh || { echo "run-all: setup failed"; exit 1; }

summ() { # summ LOGFILE: reads automake's test-suite.log counts
  [ -f "$1" ] || { echo "0 1 0"; return; } # no log: the build failed
  awk '/^# PASS:/{p=$3} /^# SKIP:/{s=$3} /^# FAIL:/{f+=$3} /^# ERROR:/{f+=$3} /^# XPASS:/{f+=$3}
       END{print p+0, f+0, s+0}' "$1"
}
# show_failures DIR: each failed test's FAIL lines and the end of its log,
# kept for the close (printed just before the summary line, where a CI
# excerpt of the tail sees it). automake's .trs files say
# ":test-result: FAIL".
failures=$(mktemp)
trap 'rm -f "$failures"' EXIT
show_failures() {
  local dir=$1
  grep -l -E "^:test-result: (FAIL|ERROR|XPASS)" "$dir"/tests/*/*.trs 2>/dev/null | while read -r trs; do
    echo "---- ${trs%.trs}.log: its FAIL lines, each with what followed it"
    grep -A 12 "^FAIL: " "${trs%.trs}.log" | head -n 80
    echo "---- ${trs%.trs}.log: its last 25 lines"
    tail -n 25 "${trs%.trs}.log"
  done >>"$failures"
}

status=0
# The cmocka programs build on every core first; make check then only runs
# the tests, one at a time (a build error shows again in make-check.out).
# shellcheck disable=SC2046 # a list of programs
make -s -j"$(nproc)" $(make -s print-cmocka-tests) >/dev/null 2>&1 || true
echo "run-all: make check"
# Results as they come; the full output stays in make-check.out.
make -j1 check 2>&1 | tee make-check.out |
  { grep --line-buffered -E "^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):" || true; }
[ "${PIPESTATUS[0]}" = 0 ] || status=1
[ $status = 0 ] || show_failures "$top"
read -r p1 f1 s1 < <(summ test-suite.log)
# Skipped tests say why:
grep -h "^SKIP:" tests/*/*.log 2>/dev/null | sort -u | sed 's/^/  /'

cmocka=$(make -s print-cmocka-tests)
ci=$top/build-ci
rm -rf "$ci" && mkdir -p "$ci"
make -s distdir distdir="$ci/src" >"$ci/distdir.out" 2>&1 ||
  { echo "run-all: make distdir failed:"; cat "$ci/distdir.out"; status=1; }
cmocka_pass() { # cmocka_pass NAME CONFIGURE-ARGS...: builds in build-ci/NAME
  local name=$1 dir=$ci/$1
  shift
  mkdir -p "$dir"
  if (cd "$dir" && "$@" >configure.out 2>&1 &&
    make -j"$(nproc)" check TESTS="$cmocka" >make-check.out 2>&1); then :; else
    status=1
    echo "run-all: $name failed: build-ci/$name/configure.out, make-check.out:"
    tail -n 20 "$dir/make-check.out" 2>/dev/null || tail -n 20 "$dir/configure.out"
  fi
  grep -E "^(PASS|FAIL|SKIP|ERROR):" "$dir/make-check.out" 2>/dev/null | sed "s/^/$name /"
  [ $status = 0 ] || show_failures "$dir"
}

echo "run-all: cmocka suites under ASan+UBSan"
cmocka_pass asan+ubsan "$ci/src/configure" -q --enable-werror --enable-sanitizers
read -r p2 f2 s2 < <(summ "$ci/asan+ubsan/test-suite.log")

echo "run-all: clang build and cmocka suites"
cmocka_pass clang env CC=clang "$ci/src/configure" -q --enable-werror
read -r p3 f3 s3 < <(summ "$ci/clang/test-suite.log")

if [ -s "$failures" ]; then
  echo
  echo "run-all: the failed tests' logs:"
  cat "$failures"
fi
echo
echo "$((p1 + p2 + p3)) passed, $((f1 + f2 + f3)) failed, $((s1 + s2 + s3)) skipped"
[ $status = 0 ] && [ $((f1 + f2 + f3)) = 0 ]
