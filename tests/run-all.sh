#!/bin/bash
# tests/run-all.sh - the whole test suite, from a fresh Debian 12 machine.
#
#   bash tests/run-all.sh
#
# 1. contrib/setup.sh: installs what is missing and builds;
# 2. make check: the cmocka suites and the shell tests (real loop devices,
#    blkio throttling, the real collectd daemon, promtool);
# 3. the cmocka suites again, built with AddressSanitizer and
#    UndefinedBehaviorSanitizer.
# Prints one closing line "N passed, N failed, N skipped" and exits non-zero
# if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

bash contrib/setup.sh || { echo "run-all: setup failed"; exit 1; }

summ() { # summ LOGFILE: reads automake's test-suite.log counts
  awk '/^# PASS:/{p=$3} /^# SKIP:/{s=$3} /^# FAIL:/{f+=$3} /^# ERROR:/{f+=$3} /^# XPASS:/{f+=$3}
       END{print p+0, f+0, s+0}' "$1"
}
show_failures() {
  local dir=$1
  grep -l -E "^(FAIL|ERROR)" "$dir"/tests/*/*.trs 2>/dev/null | while read -r trs; do
    echo "---- ${trs%.trs}.log"
    tail -n 40 "${trs%.trs}.log"
  done
}

status=0
echo "run-all: make check"
# Results as they come; the full output stays in make-check.out.
make -j1 check 2>&1 | tee make-check.out |
  { grep --line-buffered -E "^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):" || true; }
[ "${PIPESTATUS[0]}" = 0 ] || status=1
[ $status = 0 ] || show_failures "$top"
read -r p1 f1 s1 < <(summ test-suite.log)
# Skipped tests say why:
grep -h "^SKIP:" tests/*/*.log 2>/dev/null | sort -u | sed 's/^/  /'

echo "run-all: cmocka suites under ASan+UBSan"
# In-tree rebuild (a VPATH build is refused once the tree is configured),
# then back to the normal build so the tree is left as setup.sh made it.
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmocka=$(make -s print-cmocka-tests)
cp test-suite.log test-suite-main.log
make -s clean >/dev/null
if make -j"$(nproc)" check SAN_CFLAGS="$san" TESTS="$cmocka" >make-check-san.out 2>&1; then :; else status=1; fi
grep -E "^(PASS|FAIL|SKIP|ERROR):" make-check-san.out | sed 's/^/asan+ubsan /'
[ $status = 0 ] || show_failures "$top"
read -r p2 f2 s2 < <(summ test-suite.log)
mv test-suite.log test-suite-san.log
mv test-suite-main.log test-suite.log
make -s clean >/dev/null
make -s -j"$(nproc)" >/dev/null || status=1

echo
echo "$((p1 + p2)) passed, $((f1 + f2)) failed, $((s1 + s2)) skipped"
[ $status = 0 ] && [ $((f1 + f2)) = 0 ]
