#!/bin/bash
# deb_package.sh - the Debian package, built, installed and purged for real:
#
#  * contrib/packaging/build_deb.sh builds the .deb (dpkg-buildpackage, debhelper);
#    lintian runs on it and its tags are printed: an error or warning that
#    contrib/packaging/debian/README does not explain fails the test;
#  * `apt-get install ./diskprobe_*.deb`: the plugin, types.db, command,
#    dashboards, alert rules, Grafana provisioning and the drop-in are where
#    the README says; the drop-in is a conffile; Depends pins collectd-core
#    to the installed collectd's release, which satisfies it;
#  * Debian's collectd with only the packaged drop-in enabled (a temporary
#    collectd.conf that includes it, plus a second temporary drop-in with a
#    Target in a temp dir, rrdtool into a temp DataDir): RRD files appear;
#  * `apt-get purge diskprobe` leaves none of the package's paths behind
#    (every path of `dpkg -L` taken before the purge, the conffile), and
#    removes no directory that existed before the install.
#
# The machine is restored: the package is purged at exit even when a check
# fails. A diskprobe package installed before the test is not touched (skip).
# Needs root, apt-get, collectd-core, rrdtool; installs debhelper and lintian
# when missing (contrib/packaging/build_deb.sh), skips if it cannot. Exit 0 pass,
# 1 fail, 77 skip.
set -u
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (apt-get install, purge)"
need_cmd apt-get
need_cmd dpkg-deb
need_cmd collectd collectd-core
need_cmd rrdtool rrdtool
[ -x "$top_srcdir/contrib/packaging/build_deb.sh" ] || [ -f "$top_srcdir/contrib/packaging/build_deb.sh" ] ||
  skip "no contrib/packaging/build_deb.sh in $top_srcdir"
st=$(dpkg-query -W -f='${db:Status-Status}' diskprobe 2>/dev/null || true)
case $st in
'' | not-installed) ;;
*) skip "a diskprobe package is already on this machine (status $st): not replacing it" ;;
esac

tmp=$(make_tmpdir)
out=$tmp/out

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

installed=
purge_pkg() {
  [ -n "$installed" ] || return 0
  # a collectd still running from this test goes first
  [ -n "${COLLECTD_PID:-}" ] && kill "$COLLECTD_PID" 2>/dev/null && wait "$COLLECTD_PID" 2>/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get purge -y diskprobe >>"$tmp/apt.log" 2>&1
  installed=
}
at_exit purge_pkg

export DEBIAN_FRONTEND=noninteractive
installed=1 # from here on, cleanup purges (even a half-done install)
if apt-get install -y "$deb" >"$tmp/apt.log" 2>&1; then
  pass "apt-get install $(basename "$deb")"
else
  tail -n 15 "$tmp/apt.log"
  die "apt-get install $deb failed"
fi

drop_in=/etc/collectd/collectd.conf.d/diskprobe.conf
expected="/usr/lib/collectd/diskprobe.so
/usr/share/collectd/diskprobe.types.db
/usr/bin/diskprobe
$drop_in
/usr/share/diskprobe/alerts.yml
/usr/share/diskprobe/alerts_test.yml
/usr/share/diskprobe/dashboards/diskprobe-overview.json
/usr/share/diskprobe/dashboards/diskprobe-fleet.json
/usr/share/diskprobe/grafana-provisioning/dashboards/diskprobe.yml
/usr/share/diskprobe/grafana-provisioning/datasources/diskprobe-prometheus.yml
/usr/share/diskprobe/grafana-provisioning/alerting/diskprobe-contact-point.yml
/usr/share/diskprobe/grafana-provisioning/alerting/diskprobe-rules.yml
/usr/share/man/man1/diskprobe.1.gz
/usr/share/doc/diskprobe/examples/fleet-client.conf
/usr/share/doc/diskprobe/examples/fleet-server.conf
/usr/share/doc/diskprobe/examples/fleet-auth
/usr/share/doc/diskprobe/examples/prometheus-scrape.yml
/usr/share/doc/diskprobe/copyright"
dpkg -L diskprobe >"$tmp/dpkg-L"
missing=0
while read -r f; do
  [ -f "$f" ] && grep -qx -- "$f" "$tmp/dpkg-L" || { fail "$f not installed by the package"; missing=1; }
done <<<"$expected"
[ $missing = 0 ] && pass "all $(wc -l <<<"$expected") listed files installed and owned by diskprobe"
cmp -s "$top_srcdir/plugin/diskprobe.types.db" /usr/share/collectd/diskprobe.types.db &&
  pass "diskprobe.types.db is the source's" || fail "installed diskprobe.types.db differs from plugin/diskprobe.types.db"
for f in fleet-client.conf fleet-server.conf fleet-auth prometheus-scrape.yml; do
  cmp -s "$top_srcdir/contrib/examples/$f" "/usr/share/doc/diskprobe/examples/$f" ||
    fail "/usr/share/doc/diskprobe/examples/$f is not contrib/examples/$f"
done
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
# ... and the pin is tight: the next collectd release is out of range.
next=$(awk -F. '{ print $1 "." ($2 + 1) ".0-1" }' <<<"${core#*:}")
[ -n "$hi" ] && dpkg --compare-versions "$next" ge "$hi" &&
  pass "collectd-core $next would not satisfy it" || fail "collectd-core $next would satisfy '$deps'"

# ---- collectd with only the packaged drop-in ----------------------------------
d=$tmp/collectd
mkdir -p "$d/rrd"
cat >"$d/targets.conf" <<CONF
<Plugin diskprobe>
  DutyCycle 100
  <Target "pkg">
    Path "$d/probe"
    FileSize "32M"
    ProbeInterval 5
    Timeout 5
  </Target>
</Plugin>
CONF
# No PluginDir, no TypesDB: the daemon's default plugin directory and the
# drop-in's TypesDB lines.
cat >"$d/collectd.conf" <<CONF
Hostname "$COLLECTD_HOST"
FQDNLookup false
BaseDir "$d"
PIDFile "$d/collectd.pid"
Interval 5
$(collectd_logfile "$d/collectd.log")
LoadPlugin rrdtool
<Plugin rrdtool>
  DataDir "$d/rrd"
</Plugin>
Include "$drop_in"
Include "$d/targets.conf"
CONF
collectd_check "$d" || { cat "$d/check.out" "$d/collectd.log"; fail "collectd -T refused the packaged drop-in"; }
rm -rf "$d/rrd"/* "$d/collectd.log"
collectd_start "$d"
sleep 15 # about three rounds (the first lays out the probe file)
wait_until 30 test -f "$d/rrd/$COLLECTD_HOST/diskprobe-pkg/operations_per_second-randread-qd1.rrd"
collectd_stop "$COLLECTD_PID" || fail "collectd exited with status $?"
COLLECTD_PID=
rrd=$d/rrd/$COLLECTD_HOST/diskprobe-pkg
n=$(ls "$rrd"/*.rrd 2>/dev/null | wc -l)
if [ "$n" -gt 0 ]; then
  pass "collectd with the packaged plugin wrote $n RRD files in $rrd"
else
  cat "$d/collectd.log"
  fail "no RRD files in $rrd"
fi
iops=$(rrd_last "$rrd/operations_per_second-randread-qd1.rrd")
num_cmp "$iops" '>' 0 && pass "randread-qd1 IOPS $iops" || fail "randread-qd1 IOPS '$iops'"
grep -E "diskprobe plugin.*(ERROR|error|failed)|configuration for the .diskprobe' plugin, but the plugin isn't loaded" "$d/collectd.log" &&
  fail "errors in the collectd log"
grep -q 'no Target configured' "$d/collectd.log" && fail "the Target drop-in was not applied"

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
left=0 kept=0
while read -r p; do
  [ -n "$p" ] || continue
  if grep -qxF -- "$p" "$tmp/preexisting"; then
    [ -e "$p" ] || { fail "$p existed before the install and is gone after the purge"; left=1; }
    kept=$((kept + 1))
  elif [ -e "$p" ] || [ -L "$p" ]; then
    fail "$p left behind by the purge"
    left=1
  fi
done < <(sort -u "$tmp/paths")
[ -e "$drop_in" ] && { fail "conffile $drop_in left behind"; left=1; }
[ $left = 0 ] && pass "purge left none of the package's $(sort -u "$tmp/paths" | wc -l) paths behind ($kept shared directories kept)"

finish deb_package.sh "tail -n 20 $d/collectd.log"
