#!/bin/bash
# deb_package.sh - the Debian package, built, installed, used and purged as
# the README's "Installing" says, on this machine:
#
#  * contrib/packaging/build_deb.sh builds the .deb (dpkg-buildpackage, debhelper);
#    lintian runs on it and its tags are printed: an error or warning that
#    contrib/packaging/debian/README does not explain fails the test;
#  * `apt-get install ./diskprobe_*.deb collectd` (--no-install-recommends:
#    collectd's Recommends are the libraries of all its plugins, a JRE
#    among them; write_prometheus's two must be there already): the plugin,
#    types.db, both commands and their manual pages, dashboards, alert
#    rules, Grafana provisioning, every example (uncompressed, as in
#    contrib/examples/), the MIT copyright and the drop-in are where the
#    README says; README.md uncompressed, and every relative link and
#    #anchor of each installed markdown file resolves inside the installed
#    doc trees (tests/tools/md_links.py --within); the drop-in is a
#    conffile; Depends pins collectd-core to
#    the installed collectd's release, which satisfies it; Recommends names
#    collectd; no collectd service was started by the install;
#  * the README's steps with the shipped examples only: a target in
#    diskprobe_targets.conf (Path "/var/lib/diskprobe", the examples'
#    directory, with a 16 MiB file, a 2 s interval and a LatencyCeiling no
#    disk meets, the README's way to see the notification route),
#    prometheus.conf, health-notify-exec.conf + diskprobe_notify.sh,
#    logfile.conf; then Debian's own `collectd -f -C /etc/collectd/collectd.conf`:
#    RRD files under /var/lib/collectd/rrd/$(hostname -f)/diskprobe-pkg
#    (rrdtool info, lastupdate), the series on 127.0.0.1:9103/metrics, the
#    health WARNING (rule ceiling) through the exec plugin and the script to
#    its logger call (this machine has no syslog: a stand-in logger on the
#    script's DISKPROBE_NOTIFY_PATH records it), the plugin's lines in
#    /var/log/collectd.log, the health state in /var/lib/collectd, and
#    diskprobe-rrd-graphs drawing the RRD files;
#  * `apt-get purge diskprobe` leaves none of the package's paths behind
#    (every path of `dpkg -L` taken before the purge, the conffile), removes
#    no directory that existed before the install, removes /var/lib/diskprobe
#    and the health state, and leaves exactly what the README says remains
#    (every path named *diskprobe* under /etc, /usr, /var/lib, /var/log that
#    was not there before the install is on that list).
#
# The machine is restored: collectd is stopped, the package purged, the
# copied drop-ins, the script, the log and collectd's files of this run
# removed, and `collectd` purged if the test installed it (checked: /etc/collectd,
# /var/lib/collectd, /usr/local/lib/collectd, /var/log/collectd.log as
# before) -- also when a check fails. A diskprobe package, a running
# collectd or any of the files the README's steps write, found before the
# test, make it skip. Needs root, apt-get, collectd-core, rrdtool, curl; installs
# debhelper and lintian when missing (contrib/packaging/build_deb.sh), and
# collectd, skips if it cannot. Exit 0 pass, 1 fail, 77 skip.
set -u
. "$(dirname "$0")/lib.sh"
# the package's own prober program, not this build's (lib.sh exports it)
unset DISKPROBE_PROBER

[ "$(id -u)" = 0 ] || skip "needs root (apt-get install, purge)"
need_cmd apt-get
need_cmd dpkg-deb
need_cmd collectd collectd-core
need_cmd rrdtool rrdtool
need_cmd curl curl
[ -x "$top_srcdir/contrib/packaging/build_deb.sh" ] || [ -f "$top_srcdir/contrib/packaging/build_deb.sh" ] ||
  skip "no contrib/packaging/build_deb.sh in $top_srcdir"
st=$(dpkg-query -W -f='${db:Status-Status}' diskprobe 2>/dev/null || true)
case $st in
'' | not-installed) ;;
*) skip "a diskprobe package is already on this machine (status $st): not replacing it" ;;
esac

# What the README's steps write: none may be there before (not ours to touch).
confd=/etc/collectd/collectd.conf.d
ex=/usr/share/doc/diskprobe/examples
notify_sh=/usr/local/lib/collectd/diskprobe_notify.sh
state=/var/lib/collectd/diskprobe-health.state
for p in /var/lib/diskprobe "$state" "$notify_sh" /var/log/collectd.log /var/log/diskprobe "$confd/diskprobe_targets.conf" \
  "$confd/prometheus.conf" "$confd/health-notify-exec.conf" "$confd/logfile.conf"; do
  [ -e "$p" ] && skip "$p exists already: not overwriting it"
done
pid=$(cat /run/collectd.pid 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
  skip "collectd is running (pid $pid, /run/collectd.pid): not starting a second one on its files"

tmp=$(make_tmpdir)
chmod 0755 "$tmp" # the notification script runs as nobody and writes here
out=$tmp/out
# Paths named *diskprobe* before the install: after the purge, every new one
# must be on the README's list of what remains.
# (not the test harness's own directories, /var/tmp/diskprobe-test.*, as
# other plugins name them: collectd's df plugin on a test's mount point)
dp_paths() {
  find /etc /usr /var/lib /var/log -xdev -name '*diskprobe*' 2>/dev/null |
    grep -v 'diskprobe-test\.' | sort
}
dp_paths >"$tmp/dp-before"
# What the restore must bring back.
machine() { find /etc/collectd /var/lib/collectd /usr/local/lib/collectd /var/log/collectd.log 2>/dev/null | sort; }
machine >"$tmp/machine-before"

# ---- build -------------------------------------------------------------------
t0=$SECONDS
bash "$top_srcdir/contrib/packaging/build_deb.sh" "$out" >"$tmp/build.out" 2>&1
rc=$?
cat "$tmp/build.out"
case $rc in
0) ;;
3) skip "dpkg-buildpackage/debhelper missing and not installable: $(grep 'build-deb:' "$tmp/build.out" | tail -1)" ;;
*) die "contrib/packaging/build_deb.sh failed (status $rc)" ;;
esac
deb=$(tail -n 1 "$tmp/build.out")
[ -f "$deb" ] || die "build_deb.sh printed no .deb path (last line: $deb)"
pass "built $(basename "$deb") in $((SECONDS - t0)) s"

# ---- lintian ------------------------------------------------------------------
if command -v lintian >/dev/null; then
  # Tags that contrib/packaging/debian/README explains (lines "- `tag`: ...").
  explained=$(sed -n 's/^- `\([a-z0-9-]*\)`:.*/\1/p' "$top_srcdir/contrib/packaging/debian/README" 2>/dev/null)
  lintian --pedantic -I -E "$deb" >"$tmp/lintian.out" 2>&1
  grep -v 'running with root privileges' "$tmp/lintian.out" | sed 's/^/  lintian: /'
  tags=$(grep -E '^[EWIPX]: ' "$tmp/lintian.out" | wc -l)
  bad=0
  while read -r sev _pkg tag _rest; do
    case $sev in E: | W:) ;; *) continue ;; esac
    grep -qx -- "$tag" <<<"$explained" || { fail "lintian $sev $tag is not explained in contrib/packaging/debian/README"; bad=1; }
  done < <(grep -E '^[EW]: ' "$tmp/lintian.out")
  [ $bad = 0 ] && pass "lintian --pedantic: $tags tag(s), no unexplained error or warning"
else
  echo "lintian not installed: not run"
fi

# ---- install ------------------------------------------------------------------
# Which of the package's paths exist before the install: those must survive
# the purge, every other one must be gone after it.
dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\./, "", p); sub(/\/$/, "", p); if (p != "") print p }' >"$tmp/deb.paths"
while read -r p; do [ -e "$p" ] && echo "$p"; done <"$tmp/deb.paths" >"$tmp/preexisting"
# A file of the package already there (a `make install` into /usr?) would be
# overwritten by the install and deleted by the purge: not ours to touch.
while read -r p; do
  [ -d "$p" ] || skip "$p exists and belongs to no diskprobe package (make install?): not overwriting it"
done <"$tmp/preexisting"

collectd_before=$(dpkg-query -W -f='${db:Status-Status}' collectd 2>/dev/null || true)
case $collectd_before in
'' | not-installed | installed) ;;
*) skip "the collectd package is in state $collectd_before: not changing it" ;;
esac
installed='' made_policy='' made_notify_dir=''
[ -d /usr/local/lib/collectd ] || made_notify_dir=1
purge_pkg() {
  # a collectd still running from this test goes first
  [ -n "${COLLECTD_PID:-}" ] && kill "$COLLECTD_PID" 2>/dev/null && wait "$COLLECTD_PID" 2>/dev/null
  COLLECTD_PID=
  [ -n "$installed" ] && DEBIAN_FRONTEND=noninteractive apt-get purge -y diskprobe >>"$tmp/apt.log" 2>&1
  installed=
}
restore() { # everything this test put on the machine goes, in this order
  purge_pkg
  rm -f "$confd/diskprobe_targets.conf" "$confd/prometheus.conf" "$confd/health-notify-exec.conf" \
    "$confd/logfile.conf" "$notify_sh" /var/log/collectd.log
  rm -rf /var/log/diskprobe # made by this test (it was not there before)
  [ -n "$made_notify_dir" ] && rmdir /usr/local/lib/collectd 2>/dev/null
  case $collectd_before in
  '' | not-installed)
    dpkg-query -W -f='${db:Status-Status}' collectd 2>/dev/null | grep -qx installed &&
      DEBIAN_FRONTEND=noninteractive apt-get purge -y collectd >>"$tmp/apt.log" 2>&1
    ;;
  esac
  # collectd's files of this run (RRD files of Debian's default plugins, the
  # diskprobe ones the purge leaves): whatever was not there before
  find /var/lib/collectd -mindepth 1 -depth 2>/dev/null | while read -r p; do
    grep -qxF -- "$p" "$tmp/machine-before" || rm -rf -- "$p"
  done
  [ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d
  made_policy=
  return 0
}
at_exit restore

export DEBIAN_FRONTEND=noninteractive
# Debian's collectd postinst starts the service: not here (policy-rc.d 101,
# as contrib/build/setup.sh does; an existing one is left as it is).
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && made_policy=1
fi
installed=1 # from here on, cleanup purges (even a half-done install)
inst() { apt-get install -y --no-install-recommends "$deb" collectd >>"$tmp/apt.log" 2>&1; }
if inst || { apt-get update >>"$tmp/apt.log" 2>&1 && inst; }; then
  pass "apt-get install $(basename "$deb") collectd (collectd was: ${collectd_before:-not installed})"
else
  tail -n 15 "$tmp/apt.log"
  dpkg-query -W -f='${db:Status-Status}' diskprobe 2>/dev/null | grep -q installed ||
    skip "apt-get install $deb collectd failed and left no diskprobe (no collectd package to be had?)"
  die "apt-get install $deb collectd failed"
fi
[ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d && made_policy=
pid=$(cat /run/collectd.pid 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
  { fail "the install started collectd (pid $pid): stopping it"; kill "$pid"; }
[ -f /etc/collectd/collectd.conf ] && grep -q '^<Include "/etc/collectd/collectd.conf.d">' /etc/collectd/collectd.conf &&
  pass "collectd's /etc/collectd/collectd.conf is there and includes $confd" ||
  fail "no /etc/collectd/collectd.conf including $confd after installing collectd"

drop_in=/etc/collectd/collectd.conf.d/diskprobe.conf
examples="README.md prometheus.conf single-host-rrd.conf thresholds.conf health-notify-exec.conf
health-notify-email.conf diskprobe_notify.sh logfile.conf fleet-client.conf fleet-server.conf fleet-auth
prometheus-scrape.yml alertmanager.yml smart.conf scale-out/prometheus-shard.yml
scale-out/victoria-metrics.default scale-out/vmalert.default scale-out/vmalert.service"
expected="/usr/lib/collectd/diskprobe.so
/usr/share/collectd/diskprobe.types.db
/usr/bin/diskprobe
/usr/libexec/diskprobe/diskprobe-prober
$drop_in
/usr/share/diskprobe/alerts.yml
/usr/share/diskprobe/alerts_test.yml
/usr/share/diskprobe/fleet_disk_rules.yml
/usr/share/diskprobe/fleet_rules.yml
/usr/share/diskprobe/fleet_rules_test.yml
/usr/share/diskprobe/fleet_rules_sharded_test.yml
/usr/share/diskprobe/README.md
/usr/share/diskprobe/dashboards/diskprobe-overview.json
/usr/share/diskprobe/dashboards/diskprobe-fleet.json
/usr/share/diskprobe/grafana-provisioning/dashboards/diskprobe.yml
/usr/share/diskprobe/grafana-provisioning/datasources/diskprobe-prometheus.yml
/usr/share/diskprobe/grafana-provisioning/alerting/diskprobe-contact-point.yml
/usr/share/diskprobe/grafana-provisioning/alerting/diskprobe-rules.yml
/usr/share/man/man1/diskprobe.1.gz
/usr/bin/diskprobe-rrd-graphs
/usr/share/man/man1/diskprobe-rrd-graphs.1.gz
$(for f in $examples; do echo "$ex/$f"; done)
/usr/share/doc/diskprobe/README.md
/usr/share/doc/diskprobe/src/README.md
/usr/share/doc/diskprobe/tests/README.md
/usr/share/doc/diskprobe/contrib/evaluation/health/README.md
/usr/share/doc/diskprobe/copyright"
dpkg -L diskprobe >"$tmp/dpkg-L"
missing=0
while read -r f; do
  [ -f "$f" ] && grep -qx -- "$f" "$tmp/dpkg-L" || { fail "$f not installed by the package"; missing=1; }
done <<<"$expected"
[ $missing = 0 ] && pass "all $(wc -l <<<"$expected") listed files installed and owned by diskprobe"
cmp -s "$top_srcdir/plugin/diskprobe.types.db" /usr/share/collectd/diskprobe.types.db &&
  pass "diskprobe.types.db is the source's" || fail "installed diskprobe.types.db differs from plugin/diskprobe.types.db"
bad=0
for f in $examples; do
  cmp -s "$top_srcdir/contrib/examples/$f" "$ex/$f" || { fail "$ex/$f is not contrib/examples/$f (compressed?)"; bad=1; }
done
[ $bad = 0 ] && pass "all $(wc -w <<<"$examples") examples in $ex, uncompressed, as in contrib/examples/"
ls "$ex"/*.gz >/dev/null 2>&1 && fail "compressed files in $ex: $(ls "$ex"/*.gz)"
# The installed documentation: README.md uncompressed, as in the tree, and
# every relative link and #anchor of every installed markdown file resolves
# inside the package's doc trees (the READMEs it links to are installed
# under the same relative paths; contrib/examples and dashboards/README.md
# are links to where the examples and the dashboards' README are).
cmp -s "$top_srcdir/README.md" /usr/share/doc/diskprobe/README.md &&
  pass "/usr/share/doc/diskprobe/README.md is the source's README.md, uncompressed" ||
  fail "/usr/share/doc/diskprobe/README.md is not the source's README.md (compressed?)"
if command -v python3 >/dev/null; then
  mapfile -t mds < <(grep '\.md$' "$tmp/dpkg-L" | while read -r f; do [ -f "$f" ] && [ ! -L "$f" ] && echo "$f"; done)
  if out=$(python3 "$top_srcdir/tests/tools/md_links.py" --within /usr/share/doc/diskprobe --within /usr/share/diskprobe "${mds[@]}" 2>&1); then
    pass "installed docs: ${out##*$'\n'}"
  else
    printf '%s\n' "$out"
    fail "installed docs: links that lead nowhere (above)"
  fi
else
  echo "SKIP: the installed docs' links (no python3)"
fi
grep -qx 'License: Expat' /usr/share/doc/diskprobe/copyright && ! grep -qi unspecified /usr/share/doc/diskprobe/copyright &&
  grep -q 'Permission is hereby granted' /usr/share/doc/diskprobe/copyright &&
  pass "copyright: MIT (Expat) with its text" || fail "copyright does not state the MIT licence"
cmp -s "$top_srcdir/src/rrd-graphs/diskprobe-rrd-graphs.sh" /usr/bin/diskprobe-rrd-graphs && [ -x /usr/bin/diskprobe-rrd-graphs ] &&
  pass "/usr/bin/diskprobe-rrd-graphs is src/rrd-graphs/diskprobe-rrd-graphs.sh, executable" ||
  fail "/usr/bin/diskprobe-rrd-graphs is not src/rrd-graphs/diskprobe-rrd-graphs.sh"
if v=$(/usr/bin/diskprobe --version 2>&1) && [ "$v" = "diskprobe 0.1.0" ]; then
  pass "/usr/bin/diskprobe --version: $v"
else
  fail "/usr/bin/diskprobe --version: '$v'"
fi

dpkg-query -W -f='${Conffiles}\n' diskprobe | grep -q "^ $drop_in " &&
  pass "$drop_in is a conffile" || fail "$drop_in is not a conffile"
for l in 'TypesDB "/usr/share/collectd/types.db"' 'TypesDB "/usr/share/collectd/diskprobe.types.db"' \
  'LoadPlugin diskprobe' '#<Plugin diskprobe>'; do
  grep -qxF "$l" "$drop_in" || fail "$drop_in has no line '$l'"
done
grep -q '^<Plugin' "$drop_in" && fail "$drop_in configures a target (its example must be commented)"

# Depends: pinned to the installed collectd-core's release.
deps=$(dpkg-query -W -f='${Depends}' diskprobe)
echo "Depends: $deps"
core=$(dpkg-query -W -f='${Version}' collectd-core)
lo=$(grep -o 'collectd-core (>= [^)]*)' <<<"$deps" | sed 's/.*>= //; s/)//')
hi=$(grep -o 'collectd-core (<< [^)]*)' <<<"$deps" | sed 's/.*<< //; s/)//')
if [ -n "$lo" ] && [ -n "$hi" ] && dpkg --compare-versions "$core" ge "$lo" && dpkg --compare-versions "$core" lt "$hi"; then
  pass "Depends pins collectd-core to >= $lo, << $hi (installed: $core)"
else
  fail "Depends does not pin collectd-core around the installed $core: '$deps'"
fi
dpkg-query -W -f='${Recommends}' diskprobe | grep -qw collectd &&
  pass "Recommends: $(dpkg-query -W -f='${Recommends}' diskprobe)" || fail "diskprobe does not recommend collectd"
# ... and the pin is tight: the next collectd release is out of range.
next=$(awk -F. '{ print $1 "." ($2 + 1) ".0-1" }' <<<"${core#*:}")
[ -n "$hi" ] && dpkg --compare-versions "$next" ge "$hi" &&
  pass "collectd-core $next would not satisfy it" || fail "collectd-core $next would satisfy '$deps'"

# ---- the README's steps, then Debian's collectd ------------------------------
# A stand-in logger: this machine has no syslog. The script finds it on
# DISKPROBE_NOTIFY_PATH, which collectd's exec plugin passes on.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"%s/notified"\n' "$tmp" >"$tmp/bin/logger"
chmod 0755 "$tmp/bin/logger"
: >"$tmp/notified"
chmod 0666 "$tmp/notified"
cat >"$confd/diskprobe_targets.conf" <<CONF
<Plugin diskprobe>
  DutyCycle 100
  <Target "pkg">
    Path "/var/lib/diskprobe"
    FileSize "16M"
    ProbeInterval 2
    LatencyCeiling "10us"
  </Target>
</Plugin>
CONF
(cd "$confd" && cp "$ex/prometheus.conf" . && cp "$ex/logfile.conf" . &&
  install -D -m 0755 "$ex/diskprobe_notify.sh" "$notify_sh" &&
  install -d -o nobody -m 0750 /var/log/diskprobe && cp "$ex/health-notify-exec.conf" .) ||
  die "the README's copy steps failed"
# a syslog socket for the stand-in logger (this host may have no syslog
# daemon: then the script writes its --file copy alone)
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' "$tmp/log.sock" &&
  chmod 0666 "$tmp/log.sock" || die "cannot make a unix socket"
conf=/etc/collectd/collectd.conf
collectd -t -C "$conf" >"$tmp/check.out" 2>&1 && pass "collectd -t accepts $conf with the drop-ins" ||
  { cat "$tmp/check.out"; fail "collectd -t refused $conf with the drop-ins"; }
host=$(hostname -f)
rrd=/var/lib/collectd/rrd/$host/diskprobe-pkg
metrics_ok=1
ss -ltn 2>/dev/null | grep -q '[:.]9103 ' && { echo "SKIP: /metrics (port 9103 is taken on this machine)"; metrics_ok=; }
DISKPROBE_NOTIFY_PATH="$tmp/bin:/usr/bin:/bin" DISKPROBE_NOTIFY_SOCKET="$tmp/log.sock" \
  collectd -f -C "$conf" >"$tmp/collectd.out" 2>&1 &
COLLECTD_PID=$!
register_pid "$COLLECTD_PID"
scraped() { curl -s 127.0.0.1:9103/metrics 2>/dev/null | grep diskprobe >"$tmp/metrics" && grep -q 'diskprobe="pkg"' "$tmp/metrics"; }
notified() { grep -q 'type=health rule=ceiling' "$tmp/notified"; }
t0=$SECONDS
wait_until 60 test -f "$rrd/operations_per_second-randread-qd1.rrd"
wait_until 60 notified
[ -n "$metrics_ok" ] && wait_until 20 scraped
echo "collectd ran $((SECONDS - t0)) s"
n=$(ls "$rrd"/*.rrd 2>/dev/null | wc -l)
if [ "$n" -gt 0 ]; then
  pass "ls $rrd: $n RRD files"
else
  tail -n 20 /var/log/collectd.log "$tmp/collectd.out"
  fail "no RRD files in $rrd"
fi
rrdtool info "$rrd/operations_per_second-randread-qd1.rrd" 2>/dev/null | grep -q '^ds\[value\]' &&
  pass "rrdtool info: operations_per_second-randread-qd1.rrd has its data source" || fail "rrdtool info failed on $rrd"
iops=$(rrd_last "$rrd/operations_per_second-randread-qd1.rrd")
num_cmp "$iops" '>' 0 && pass "randread-qd1 IOPS $iops" || fail "randread-qd1 IOPS '$iops'"
pp=$(pgrep -P "$COLLECTD_PID" -x diskprobe-probe | head -1)
[ -n "$pp" ] && [ "$(readlink "/proc/$pp/exe")" = /usr/libexec/diskprobe/diskprobe-prober ] &&
  pass "the target's I/O runs in the package's prober (pid $pp, /usr/libexec/diskprobe/diskprobe-prober)" ||
  fail "no /usr/libexec/diskprobe/diskprobe-prober process under collectd"
if [ -n "$metrics_ok" ]; then
  grep -q '^collectd_diskprobe_probe_latency_p99{diskprobe="pkg",type="randread-qd1"' "$tmp/metrics" &&
    pass "curl 127.0.0.1:9103/metrics | grep diskprobe: $(wc -l <"$tmp/metrics") lines, p99 of pkg/randread-qd1 among them" ||
    fail "no diskprobe p99 of target pkg on /metrics: $(head -3 "$tmp/metrics")"
fi
msg=$(grep -m1 'type=health rule=ceiling' "$tmp/notified")
grep -q -- "^-t diskprobe -p daemon.warning -- diskprobe\[WARNING\] host=$host target=pkg type=health rule=ceiling: " <<<"$msg" &&
  pass "notification route: collectd -> exec -> diskprobe_notify.sh -> logger: $msg" ||
  fail "no health WARNING (rule ceiling) through diskprobe_notify.sh: '$(head -3 "$tmp/notified")'"
grep -q "Z diskprobe\[WARNING\] host=$host target=pkg type=health rule=ceiling: " /var/log/diskprobe/notifications.log 2>/dev/null &&
  pass "and its copy in /var/log/diskprobe/notifications.log (--file, as nobody)" ||
  fail "no WARNING in /var/log/diskprobe/notifications.log: $(head -c 300 /var/log/diskprobe/notifications.log 2>&1)"
grep -q 'Notification: severity = WARNING, host = .*plugin = diskprobe, plugin_instance = pkg, type = health, type_instance = ceiling' /var/log/collectd.log &&
  pass "logfile.conf: the notification is in /var/log/collectd.log" || fail "no health notification in /var/log/collectd.log"
if "/usr/bin/diskprobe-rrd-graphs" /var/lib/collectd/rrd "$tmp/graphs" >"$tmp/graphs.out" 2>&1 &&
  [ -s "$tmp/graphs/index.html" ] && ls "$tmp/graphs"/*.png >/dev/null 2>&1; then
  pass "diskprobe-rrd-graphs: $(tail -n 1 "$tmp/graphs.out")"
else
  fail "diskprobe-rrd-graphs failed: $(tail -n 3 "$tmp/graphs.out")"
fi
collectd_stop "$COLLECTD_PID" || fail "collectd exited with status $?"
COLLECTD_PID=
grep -q 'diskprobe plugin' /var/log/collectd.log && pass "the plugin's lines are in /var/log/collectd.log (logfile.conf)" ||
  fail "no diskprobe line in /var/log/collectd.log"
grep -E "\[error\] diskprobe plugin|diskprobe plugin.*(ERROR|error|failed)|configuration for the .diskprobe' plugin, but the plugin isn't loaded" /var/log/collectd.log &&
  fail "errors in the collectd log"
grep -q 'no Target configured' /var/log/collectd.log && fail "the Target drop-in was not applied"
[ -s /var/lib/diskprobe/diskprobe.probe ] && pass "probe file /var/lib/diskprobe/diskprobe.probe" ||
  fail "no probe file in /var/lib/diskprobe"
[ -s "$state" ] && pass "health state $state written at shutdown" || fail "no health state $state"

# ---- purge -------------------------------------------------------------------
grep -vx '/\.' "$tmp/dpkg-L" >"$tmp/paths" # dpkg -L starts with "/."
cat "$tmp/deb.paths" >>"$tmp/paths"
if apt-get purge -y diskprobe >>"$tmp/apt.log" 2>&1; then
  installed=
  pass "apt-get purge diskprobe"
else
  tail -n 15 "$tmp/apt.log"
  fail "apt-get purge diskprobe failed"
fi
st=$(dpkg-query -W -f='${db:Status-Status}' diskprobe 2>/dev/null || true)
case $st in '' | not-installed) pass "dpkg knows no diskprobe any more" ;; *) fail "diskprobe status after purge: $st" ;; esac
# What the README says remains after the purge (beside the RRD files).
remains="$confd/diskprobe_targets.conf
$confd/prometheus.conf
$confd/health-notify-exec.conf
$confd/logfile.conf
$notify_sh
/var/log/collectd.log
/var/log/diskprobe
/var/log/diskprobe/notifications.log"
left=0 kept=0
while read -r p; do
  [ -n "$p" ] || continue
  if grep -qxF -- "$p" "$tmp/preexisting"; then
    [ -e "$p" ] || { fail "$p existed before the install and is gone after the purge"; left=1; }
    kept=$((kept + 1))
  elif [ -d "$p" ] && [ ! -L "$p" ] && { dpkg-query -S "$p" >/dev/null 2>&1 || grep -q "^$p/" <<<"$remains"; }; then
    kept=$((kept + 1)) # another package's directory too, or it holds what the README says remains
  elif [ -e "$p" ] || [ -L "$p" ]; then
    fail "$p left behind by the purge"
    left=1
  fi
done < <(sort -u "$tmp/paths")
[ -e "$drop_in" ] && { fail "conffile $drop_in left behind"; left=1; }
[ $left = 0 ] && pass "purge left none of the package's $(sort -u "$tmp/paths" | wc -l) paths behind ($kept shared directories kept)"
[ -e /var/lib/diskprobe ] && fail "/var/lib/diskprobe left behind by the purge" || pass "purge removed /var/lib/diskprobe"
[ -e "$state" ] || [ -e "$state.tmp" ] && fail "$state left behind by the purge" || pass "purge removed $state"
# What the README says remains, and nothing else named *diskprobe*.
for p in $remains; do [ -e "$p" ] || fail "$p is gone after the purge (the README says it remains)"; done
ls -d /var/lib/collectd/rrd/*/diskprobe-* >"$tmp/rrd-left" 2>/dev/null
grep -qxF "$rrd" "$tmp/rrd-left" && [ -n "$(ls "$rrd")" ] &&
  pass "RRD files remain: $(tr '\n' ' ' <"$tmp/rrd-left")" || fail "the purge removed $rrd (the README says it remains)"
dp_paths | grep -vxFf "$tmp/dp-before" | grep -v '^/var/lib/collectd/rrd/[^/]*/diskprobe-[^/]*$' |
  grep -vxF -e "$confd/diskprobe_targets.conf" -e "$notify_sh" -e /var/log/diskprobe \
    -e /var/log/diskprobe/notifications.log >"$tmp/unlisted"
[ -s "$tmp/unlisted" ] && fail "left after the purge and not in the README's list: $(tr '\n' ' ' <"$tmp/unlisted")" ||
  pass "after the purge exactly the README's list remains: RRD directories, the copied drop-ins, $notify_sh, /var/log/collectd.log, /var/log/diskprobe"

# ---- the machine as it was ---------------------------------------------------
restore
machine >"$tmp/machine-after"
diff "$tmp/machine-before" "$tmp/machine-after" >"$tmp/machine.diff" &&
  pass "machine restored (/etc/collectd, /var/lib/collectd, /usr/local/lib/collectd, /var/log/collectd.log as before; collectd ${collectd_before:-not installed})" ||
  fail "machine not as before: $(head -5 "$tmp/machine.diff" | tr '\n' ' ')"

finish deb_package.sh "tail -n 20 $tmp/collectd.out"
