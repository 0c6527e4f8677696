#!/bin/bash
# tests/tools/screenshot.sh - a PNG of a local HTML page in headless Chromium,
# to look at the RRD graph page (src/rrd-graphs/diskprobe-rrd-graphs.sh) as a browser shows it.
#
#   bash tests/tools/screenshot.sh PAGE PNG [WIDTHxHEIGHT]   (default 1400x3000)
#
# Used by tests/shell/collectd_rrd.sh (the first screen, kept as a test
# artefact) and by hand. Needs Debian's chromium
# (apt-get install chromium). Runs without network, sync or a profile of
# its own that outlives the call.
set -euo pipefail
page=${1:?usage: screenshot.sh PAGE PNG [WIDTHxHEIGHT]}
png=${2:?usage: screenshot.sh PAGE PNG [WIDTHxHEIGHT]}
size=${3:-1400x3000}
command -v chromium >/dev/null || { echo "screenshot.sh: chromium is missing (apt-get install chromium)" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --screenshot="$(realpath -m "$png")" --window-size="${size/x/,}" \
  "file://$(realpath "$page")" 2>"$profile/chromium.log" ||
  { cat "$profile/chromium.log" >&2; exit 1; }
echo "screenshot: $png"
