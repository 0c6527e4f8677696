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
# by contrib/build/setup.sh with its own, without starting their services:
# the tests run their own collectd, Prometheus and Alertmanager.
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
  victoria-metrics # fleet_sharded.sh (the global store, vmalert), fleet_prometheus.sh (its HTTP API)
  libatasmart4 # smart_example.sh: collectd's smart plugin (only suggested by collectd-core)
  chromium # collectd_rrd.sh: the graph page's first screen in a headless browser (tests/tools/screenshot.sh)
)

# The product's set-up installs these with its own (when missing) and
# builds; it configures again a tree configured before cmocka was there.
EXTRA_PKGS="${PKGS[*]}" bash contrib/build/setup.sh
