#!/bin/bash
# options_doc.sh - README's configuration reference is the option table:
# the text between <!-- options:begin --> and <!-- options:end --> must be
# exactly what `diskprobe options --markdown` prints (src/options.c).
set -u
. "$(dirname "$0")/lib.sh"
readme="$top_srcdir/README.md"
d=$(make_tmpdir)
"$DISKPROBE" options --markdown >"$d/want" || { echo "FAIL: diskprobe options --markdown failed"; exit 1; }
awk '/^<!-- options:end -->$/ {p=0} p {print} /^<!-- options:begin -->$/ {p=1}' "$readme" >"$d/have"
if [ "$(grep -c '^<!-- options:\(begin\|end\) -->$' "$readme")" != 2 ]; then
  echo "FAIL: $readme needs one <!-- options:begin --> and one <!-- options:end --> line"
  exit 1
fi
if diff -u --label "README.md (options section)" --label "diskprobe options --markdown" "$d/have" "$d/want"; then
  echo "ok: README's configuration reference matches the option table"
  exit 0
fi
echo "FAIL: README's configuration reference differs from the option table (diff above)."
echo "Regenerate it with:"
echo "  cd $top_srcdir && { sed '/^<!-- options:begin -->\$/q' README.md; $DISKPROBE options --markdown;"
echo "    sed -n '/^<!-- options:end -->\$/,\$p' README.md; } >README.md.new && mv README.md.new README.md"
exit 1
