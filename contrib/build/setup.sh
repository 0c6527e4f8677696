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
# which runs this script after it.
# Packages are installed only when missing (one `apt-get update` first).
# The collectd service is not started: diskprobe runs its own collectd
# instances in the foreground with generated configs.
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

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ "${SKIP_APT:-0}" != 1 ] && [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  [ "$(id -u)" = 0 ] || { echo "setup: run as root to install packages" >&2; exit 1; }
  # Keep package scripts from starting the collectd service.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ "$made_policy" = 1 ] && rm -f "$policy"
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
