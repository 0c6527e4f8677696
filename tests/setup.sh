#!/bin/bash
# tests/setup.sh - installs what the tests need on Debian 12 when missing,
# then the product's own set-up (contrib/build/setup.sh: its packages and
# the build: autoreconf, configure --enable-werror, make, in the source
# tree). tests/run-all.sh runs it; CI runs tests/run-all.sh.
#
#   bash tests/setup.sh            test packages + the product's + the build
#   SKIP_APT=1 bash tests/setup.sh build only
#
# Packages are installed only when missing (one `apt-get update` first),
# without starting their services: the tests run their own collectd,
# Prometheus and Alertmanager.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  # the unit suites, the clang build and the C style (tests/run-all.sh,
  # tests/shell/format.sh)
  clang clang-format libcmocka-dev
  # tests and benchmarks
  fio ioping sysstat prometheus e2fsprogs util-linux python3 python3-fusepy
  python3-yaml # dashboards.sh and the Prometheus tests read the shipped YAML
  procps
  curl fdisk
  tcpdump # fleet_secure.sh: what the network plugin puts on the wire
  btrfs-progs # btrfs_overlay.sh: a Path on btrfs resolved to its disk
  prometheus-alertmanager # alertmanager_example.sh: amtool and the daemon
  victoria-metrics # fleet_sharded.sh: the global store and vmalert of the scale-out example
  libatasmart4 # smart_example.sh: collectd's smart plugin (only suggested by collectd-core)
  chromium # collectd_rrd.sh: the graph page's first screen in a headless browser (tests/tools/screenshot.sh)
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ "${SKIP_APT:-0}" != 1 ] && [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  [ "$(id -u)" = 0 ] || { echo "setup: run as root to install packages" >&2; exit 1; }
  # Keep package scripts from starting collectd, prometheus, alertmanager or
  # victoria-metrics services.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # A prometheus, alertmanager or victoria-metrics that runs already (the
  # host's own) is left alone: only one that the install started is stopped,
  # by its pid (the kernel keeps 15 characters of a process name:
  # prometheus-aler, victoria-metric).
  daemons='prometheus|prometheus-aler|victoria-metric'
  before=$(pgrep -x "$daemons" | sort || true)
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ "$made_policy" = 1 ] && rm -f "$policy"
  # A service that was started anyway is stopped: we run our own.
  for pid in $(pgrep -x "$daemons" | sort || true); do
    grep -qx "$pid" <<<"$before" || kill "$pid" 2>/dev/null || true
  done
fi

# A tree configured before cmocka was installed (by the product set-up
# alone, e.g. for the demo) builds no unit suites: configure it again.
if [ -f config.status ] && grep -q '^S\["have_cmocka"\]="no"' config.status &&
  pkg-config --exists cmocka 2>/dev/null; then
  rm -f Makefile
fi
bash contrib/build/setup.sh
