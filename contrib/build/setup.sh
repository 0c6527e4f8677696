#!/bin/bash
# contrib/build/setup.sh - installs what the product needs to build and run
# on Debian 12 when missing, and builds it in the source tree.
#
#   bash contrib/build/setup.sh            packages + autoreconf + configure + make
#                                          (in-tree, gcc, --enable-werror)
#   SKIP_APT=1 bash contrib/build/setup.sh build only
#
# Only the product's packages: the build toolchain, the libraries the
# plugin and the command link, and what the demo runs (collectd with its
# rrdtool and write_prometheus plugins). The test toolchain (clang,
# clang-format, cmocka, fio, prometheus, chromium, ...) is tests/setup.sh's,
# which runs this script with it in EXTRA_PKGS.
# Packages are installed only when missing (one `apt-get update` first),
# with EXTRA_PKGS (words) besides: tests/setup.sh passes the test
# toolchain's. No service is started: diskprobe runs its own collectd
# instances in the foreground with generated configs (and the tests their
# own Prometheus, Alertmanager and VictoriaMetrics: one the install starts
# anyway is stopped, one that ran before is left alone).
set -euo pipefail
cd "$(dirname "$0")/../.."

PKGS=(
  # build
  gcc make autoconf automake libtool pkg-config
  libaio-dev collectd-dev
  librrd-dev # the command's RRD readers (fleet, compare)
  libjansson-dev # the command's JSON readers (replay, failslow)
  libcurl4-openssl-dev # the command's Prometheus reader (fleet, compare)
  # run: collectd, its rrdtool and write_prometheus plugins' libraries;
  # rrdtool also draws the graph page (src/rrd-graphs)
  collectd-core rrdtool libmicrohttpd12 libprotobuf-c1
)

# shellcheck disable=SC2206 # EXTRA_PKGS is a list of words
PKGS+=(${EXTRA_PKGS:-})
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ "${SKIP_APT:-0}" != 1 ] && [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  [ "$(id -u)" = 0 ] || { echo "setup: run as root to install packages" >&2; exit 1; }
  # Keep package scripts from starting collectd, prometheus, alertmanager
  # or victoria-metrics services.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # A prometheus, alertmanager or victoria-metrics that runs already (the
  # host's own) is left alone: only one that the install started is
  # stopped, by its pid (the kernel keeps 15 characters of a process name:
  # prometheus-aler, victoria-metric).
  daemons='prometheus|prometheus-aler|victoria-metric'
  before=$(pgrep -x "$daemons" | sort || true)
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ "$made_policy" = 1 ] && rm -f "$policy"
  for pid in $(pgrep -x "$daemons" | sort || true); do
    grep -qx "$pid" <<<"$before" || kill "$pid" 2>/dev/null || true
  done
fi

# A tree configured before cmocka was installed (by this set-up alone, e.g.
# for the demo) builds no unit suites: configure it again once it is there.
if [ -f config.status ] && grep -q '^S\["have_cmocka"\]="no"' config.status &&
  pkg-config --exists cmocka 2>/dev/null; then
  rm -f Makefile
fi

if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
  mkdir -p m4 # libtool's macros go there; git keeps no empty directory
  autoreconf -fi >/dev/null
fi
# Warnings are errors here (and in CI); a tree configured without
# --enable-werror is configured again.
configured=$( [ -x config.status ] && ./config.status --config || true)
if [ ! -f Makefile ] || [ configure -nt Makefile ] || [[ $configured != *--enable-werror* ]]; then
  ./configure -q --enable-werror
fi
make -s -j"$(nproc)" >/dev/null
echo "setup: built src/cli/diskprobe and plugin/.libs/diskprobe.so"
