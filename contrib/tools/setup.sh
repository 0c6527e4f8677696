#!/bin/bash
# contrib/tools/setup.sh - installs what is missing on Debian 12 and builds.
#
#   bash contrib/tools/setup.sh            packages + autoreconf + configure + make
#                                    (in-tree, gcc, --enable-werror)
#   SKIP_APT=1 bash contrib/tools/setup.sh build only
#
# Packages are installed only when missing (one `apt-get update` first).
# The collectd service is not started: diskprobe runs its own collectd
# instances in the foreground with generated configs.
set -euo pipefail
cd "$(dirname "$0")/../.."

PKGS=(
  # build
  gcc clang make autoconf automake libtool pkg-config clang-format
  libaio-dev collectd-dev libcmocka-dev
  librrd-dev # the command's RRD readers (fleet, compare)
  libjansson-dev # the command's JSON readers (replay, failslow)
  # run: collectd, its rrdtool and write_prometheus plugins' libraries
  collectd-core rrdtool libmicrohttpd12 libprotobuf-c1
  # tests and benchmarks
  fio ioping sysstat prometheus e2fsprogs util-linux python3 python3-fusepy
  python3-yaml # dashboards.sh and the Prometheus tests read the shipped YAML
  procps
  curl fdisk
  tcpdump # fleet_secure.sh: what the network plugin puts on the wire
  btrfs-progs # btrfs_overlay.sh: a Path on btrfs resolved to its disk
  prometheus-alertmanager # alertmanager_example.sh: amtool and the daemon
  libatasmart4 # smart_example.sh: collectd's smart plugin (only suggested by collectd-core)
  chromium # collectd_rrd.sh: the graph page's first screen in a headless browser (screenshot, DOM)
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ "${SKIP_APT:-0}" != 1 ] && [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  [ "$(id -u)" = 0 ] || { echo "setup: run as root to install packages" >&2; exit 1; }
  # Keep package scripts from starting collectd, prometheus or alertmanager services.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # A prometheus or alertmanager that runs already (the host's own) is left
  # alone: only one that the install started is stopped, by its pid (the
  # kernel keeps 15 characters of a process name: prometheus-aler).
  before=$(pgrep -x 'prometheus|prometheus-aler' | sort || true)
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ "$made_policy" = 1 ] && rm -f "$policy"
  # A service that was started anyway is stopped: we run our own.
  for pid in $(pgrep -x 'prometheus|prometheus-aler' | sort || true); do
    grep -qx "$pid" <<<"$before" || kill "$pid" 2>/dev/null || true
  done
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
