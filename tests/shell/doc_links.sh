#!/bin/bash
# doc_links.sh - no link in the documentation leads nowhere: every relative
# markdown link (and every #anchor, within a file or into another) of
# README.md and of the .md files under src/, tests/, dashboards/ and
# contrib/ resolves in the source tree (tests/tools/md_links.py: the file or
# directory exists, the anchor is a heading as GitHub makes its anchor).
# tests/shell/deb_package.sh checks the same of the installed documentation.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
cd "$top_srcdir" || die "no $top_srcdir"
mapfile -t docs < <({ echo README.md; find src tests dashboards contrib -name '*.md' -type f; } | sort)
[ "${#docs[@]}" -gt 5 ] || die "found only ${#docs[@]} markdown files under $top_srcdir"
if out=$(python3 tests/tools/md_links.py "${docs[@]}" 2>&1); then
  pass "${out##*$'\n'}"
else
  printf '%s\n' "$out"
  fail "broken links in the documentation (above)"
fi
finish doc_links.sh
