#!/bin/bash
# rrd_graphs_page.sh - the RRD graph page (diskprobe-rrd-graphs) built from
# a real collectd's files:
#   - whatever a host or target is named (collectd's Hostname is anyone's
#     choice, and so is a host directory in a central RRD tree), the page
#     is inert: a Hostname holding markup, quotes and an ampersand ends up
#     as text everywhere (target names allow no such characters) (title, headings, image names, links, data
#     attributes), no element or attribute of its own -- parsed back with
#     Python's HTML parser, and rendered in headless Chromium where the
#     name's script would mark the page -- under this bash (5.2 treats an
#     unquoted & in a replacement as the match);
#   - a target that is not armed yet is shown as learning (the summary and
#     its newest round), and once armed it is not.
set -u
. "$(dirname "$0")/lib.sh"
need collectd
need_cmd rrdtool rrdtool
d=$(make_tmpdir)
page="$top_srcdir/src/rrd-graphs/diskprobe-rrd-graphs.sh"
# a name that closes an attribute and opens an event handler (which, if it
# ever ran, would mark the page's body), with markup and an ampersand
evil='x" onerror="document.body.setAttribute('"'"'data-pwned'"'"',1)" <b>&amp'
run() { # run ARMROUNDS SECONDS: collectd as host $evil, then the page
  rm -rf "$d/rrd" "$d/graphs"
  COLLECTD_HOST=$evil collectd_conf "$d" 1 <<CONF
  Splay false
  DutyCycle 100
  ArmRounds $1
  <Target "t1">
    Path "$d/probe"
    FileSize "16M"
    ProbeInterval 1
    <Probe "r">
      Duration 0.05
    </Probe>
  </Target>
CONF
  # collectd's config strings take \" and \\ escapes
  sed -i "s|^Hostname .*|Hostname \"$(sed 's/[\\"]/\\\\&/g; s/[|&]/\\&/g' <<<"$evil")\"|" "$d/collectd.conf"
  collectd_start "$d"
  sleep "$2"
  collectd_stop >/dev/null
  bash "$page" "$d/rrd" "$d/graphs" >"$d/graphs.out" 2>&1
}

run 100 6
hostdir=$(find "$d/rrd" -mindepth 1 -maxdepth 1 -type d | head -1)
[ "$(basename "$hostdir")" = "$evil" ] && pass "collectd wrote the RRD files under the host name as given: $(basename "$hostdir")" ||
  fail "host directory: $(ls "$d/rrd")"
[ -s "$d/graphs/index.html" ] || die "no page: $(tail -n 3 "$d/graphs.out")"
python3 - "$d/graphs/index.html" "$evil" <<'PY' && pass "the page is inert: no element or attribute from the host name, shown as text in text and attributes" || fail "the page is not inert"
import sys
from html.parser import HTMLParser
page, evil = sys.argv[1], sys.argv[2]
text = open(page, encoding="utf-8").read()
bad = []
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.data = []
        self.attrs = []
    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k.startswith("on"):
                bad.append(f"<{tag} {k}=...>")
            self.attrs.append(v or "")
        if tag == "img" and not any(k == "src" and (v or "").endswith(".png") for k, v in attrs):
            bad.append(f"an <img> that is not a graph: {attrs}")
    def handle_data(self, d):
        self.data.append(d)
p = P()
p.feed(text)
data = "".join(p.data)
if evil not in data:
    bad.append("the host name is not shown as text")
if not any(evil in a for a in p.attrs):
    bad.append("the host name is in no attribute (image names, links) as text")
if "<title>diskprobe: " + evil in text:
    bad.append("the title holds the raw name")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
# the same page in a real browser: the name's script would mark the body
if command -v chromium >/dev/null; then
  mkdir -p "$d/chromium"
  sed 's|</body>|<script>window.addEventListener("load", function () { document.body.setAttribute("data-loaded", "1"); });</script>&|' \
    "$d/graphs/index.html" >"$d/graphs/probe.html"
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$d/chromium" \
    --virtual-time-budget=2000 --dump-dom "file://$d/graphs/probe.html" >"$d/page.dom" 2>"$d/chromium.log"
  if ! grep -q 'data-loaded="1"' "$d/page.dom"; then
    echo "SKIP: browser check: chromium cannot run here: $(grep -v 'dbus\|^$' "$d/chromium.log" | tail -2)"
  elif grep -q '<body[^>]*data-pwned' "$d/page.dom"; then
    fail "browser: the host name's script ran in the page"
  else
    pass "browser: the page rendered in headless Chromium, the host name's script did not run"
  fi
else
  echo "SKIP: browser check: chromium not installed (apt-get install chromium)"
fi

grep -q 'class="learning">.*still learning its baseline' "$d/graphs/index.html" &&
  grep -q 'class="newest">.*still learning its baseline' "$d/graphs/index.html" &&
  pass "not armed (ArmRounds 100): the summary and the newest round say it is still learning" ||
  fail "not armed: no learning words on the page"

run 2 6
if grep -q 'class="learning"\|still learning its baseline' "$d/graphs/index.html"; then
  fail "armed (ArmRounds 2): the page still says learning"
elif grep -q 'class="newest">Newest round' "$d/graphs/index.html"; then
  pass "armed (ArmRounds 2): the newest round is a verdict, nothing says learning"
else
  fail "armed: no newest round on the page: $(tail -n 3 "$d/graphs.out")"
fi
finish rrd_graphs_page "tail -n 5 $d/collectd.log"
